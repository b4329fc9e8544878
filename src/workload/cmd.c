/*
 * What a model's container runs (part of the workload, rm/workload.h): the model dir, the
 * script and its interpreter, the effective args (TunableOp, name:key=value tags), and the
 * wrappers around the script, outermost first: clone of a url, custom data scripts,
 * keep-alive, the tools (render_tools.c). Pure.
 */
#include <stdlib.h>
#include <string.h>

#include "workload_internal.h"

char *rm_model_dir(const rm_model *m)
{
	if (m->url && *m->url) {
		const char *u = m->url;
		size_t len = strlen(u);
		while (len && u[len - 1] == '/')
			len--;
		size_t start = len;
		while (start && u[start - 1] != '/' && u[start - 1] != ':')
			start--;
		size_t n = len - start;
		if (n > 4 && !memcmp(u + start + n - 4, ".git", 4))
			n -= 4;
		if (n)
			return rm_xstrndup(u + start, n);
	}
	/* A folder name: '/' in "<dir>/<name>" is not allowed there. */
	return rm_xstrdup(m->short_name);
}

/* The script file name inside the model dir, and its interpreter (MAD's rule,
 * rm_script_kind_of). */
static void script_of(const rm_model *m, const char **interp, char **name)
{
	const char *s = m->scripts;
	size_t len = strlen(s);
	rm_script_kind kind = rm_script_kind_of(s);

	while (len > 1 && s[len - 1] == '/')
		len--;
	*interp = kind == RM_SCRIPT_PYTHON ? "python3" : "bash";
	if (kind == RM_SCRIPT_FOLDER) {
		*name = rm_xstrdup("run.sh");
		return;
	}
	size_t start = len;
	while (start && s[start - 1] != '/')
		start--;
	*name = rm_xstrndup(s + start, len - start);
}

/* Drops every "--tunableop X" / "--tunableop=X" word pair from args; the setting is added
 * back once, at the end. */
static char *strip_tunableop(const char *args)
{
	rm_buf b = RM_BUF_INIT((size_t)1 << 20);
	const size_t kl = strlen("--tunableop");
	const char *p = args;

	while (*p) {
		const char *q = strstr(p, "--tunableop");
		if (!q) {
			rm_buf_addstr(&b, p);
			break;
		}
		if ((q > args && q[-1] != ' ') || (q[kl] && q[kl] != ' ' && q[kl] != '=')) {
			rm_buf_add(&b, p, (size_t)(q - p) + kl); /* e.g. --tunableop_x */
			p = q + kl;
			continue;
		}
		rm_buf_add(&b, p, (size_t)(q - p));
		q += kl;
		if (*q == '=') {
			q++;
		} else {
			while (*q == ' ')
				q++;
		}
		while (*q && *q != ' ')
			q++;
		p = q;
	}
	/* collapse the blanks left behind */
	char *s = rm_buf_detach(&b), *w = s;
	for (char *r = s; *r; r++)
		if (!(*r == ' ' && (w == s || w[-1] == ' ')))
			*w++ = *r;
	while (w > s && w[-1] == ' ')
		w--;
	*w = '\0';
	return s;
}

/* The args, with the script's "--tunableop X" when with_tunableop and TunableOp is set. */
static char *args_text(const rm_workload *w, int with_tunableop)
{
	const char *base = w->model_args ? w->model_args : w->model->args;
	const char *extra = w->extra_args ? w->extra_args : "";
	const char *tunableop = rm_choice_name(rm_tunableop_words, (int)w->tunableop);
	char *stripped, *r;

	if (!tunableop)
		return rm_xasprintf("%s%s", base ? base : "", extra);
	stripped = strip_tunableop(base ? base : "");
	if (with_tunableop)
		r = rm_xasprintf("%s%s--tunableop %s%s", stripped, *stripped ? " " : "", tunableop,
				 extra);
	else
		r = rm_xasprintf("%s%s", stripped, extra);
	free(stripped);
	return r;
}

char *rm_workload_args(const rm_workload *w)
{
	return args_text(w, 0);
}

char *rm_workload_command_text(const rm_workload *w)
{
	const char *interp;
	char *script = NULL, *args = args_text(w, 1), *t;

	script_of(w->model, &interp, &script);
	t = rm_xasprintf("%s%s%s %s%s%s", w->tools.wrap ? w->tools.wrap : "",
			 w->tools.wrap ? " " : "", interp, script, *args ? " " : "", args);
	free(script);
	free(args);
	return t;
}

/*
 * When the model has a url, the repository is cloned inside the container first, with its
 * submodules (MAD and madengine run `git submodule update --init --recursive`); the
 * scripts were copied to a staging folder and go on top of the clone, as MAD does. The shell
 * text is constant: url, folders and args reach it only as positional parameters.
 */
static const char clone_wrapper[] =
    "set -e; git clone --quiet --recurse-submodules -- \"$1\" \"$2\"; cp -R \"$3\"/. \"$2\"/; "
    "cd \"$2\"; shift 3; exec \"$@\"";

int rm_workload_cmd(const rm_workload *w, char ***argv, rm_error *err)
{
	const rm_model *m = w->model;
	const char *interp;
	char *script = NULL, *args = NULL, *dir = NULL;
	char **words = NULL, **v = NULL;
	size_t n = 0, nw = 0;
	int ret = -1;

	script_of(m, &interp, &script);
	args = args_text(w, 1);
	if (rm_split_words(args, &words, &nw, err) < 0) {
		rm_error_wrap(err, "model '%s': field 'args'", m->name);
		goto out;
	}
	v = rm_xcalloc(1, sizeof(*v));
	if (m->url && *m->url) {
		dir = rm_model_dir(m);
		char *d = rm_xasprintf("%s/%s", RM_WORKSPACE, dir);
		char *stage = rm_xasprintf("%s/.run_models/%s", RM_WORKSPACE, dir);
		v = rm_strv_push(v, &n, "bash");
		v = rm_strv_push(v, &n, "-c");
		v = rm_strv_push(v, &n, clone_wrapper);
		v = rm_strv_push(v, &n, "run_models");
		v = rm_strv_push(v, &n, m->url);
		v = rm_strv_push(v, &n, d);
		v = rm_strv_push(v, &n, stage);
		free(d);
		free(stage);
	}
	if (rm_workload__data_cmd(w, &v, &n, err) < 0)
		goto out;
	if (w->set.keep_alive && !(m->url && *m->url)) {
		/* Constant text; the script and its args arrive as positional parameters. */
		char *keep = rm_xasprintf("\"$@\"; rc=$?; echo \"%s%s:$rc\" >&2; "
					  "while :; do sleep 3600; done",
					  RM_EXIT_MARKER, w->run_id);
		v = rm_strv_push(v, &n, "sh");
		v = rm_strv_push(v, &n, "-c");
		v = rm_strv_push(v, &n, keep);
		v = rm_strv_push(v, &n, "run_models");
		free(keep);
	}
	if (!rm_tool_plan_empty(&w->tools)) {
		/* The tools wrap the script alone: inside keep-alive, so their post scripts run
		 * before the exit marker. */
		char **mv = rm_xcalloc(1, sizeof(*mv));
		size_t nm = 0;
		mv = rm_strv_push(mv, &nm, interp);
		mv = rm_strv_push(mv, &nm, script);
		for (size_t i = 0; i < nw; i++)
			mv = rm_strv_push(mv, &nm, words[i]);
		if (rm_workload__tools_cmd(w, &v, &n, mv, nm, err) < 0) {
			rm_strv_free(mv);
			goto out;
		}
		rm_strv_free(mv);
	} else {
		v = rm_strv_push(v, &n, interp);
		v = rm_strv_push(v, &n, script);
		for (size_t i = 0; i < nw; i++)
			v = rm_strv_push(v, &n, words[i]);
	}
	*argv = v;
	v = NULL;
	ret = 0;
out:
	rm_strv_free(v);
	rm_strv_free(words);
	free(script);
	free(args);
	free(dir);
	return ret;
}
