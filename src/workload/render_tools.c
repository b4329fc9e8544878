/*
 * The tools in the container (rm_workload.tools, a plan of rm/tools.h): the wrapper that
 * runs the pre scripts, the model under the tools' command prefix, the post scripts, and
 * gathers the outputs. Pure, like render.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload_internal.h"

/*
 * Constant text, run by bash in the model's folder. Values arrive only as positional
 * parameters:
 *   P, then P pre entries "LABEL KIND SRC N ARG1..ARGN" (KIND f: SRC a script file in the
 *   container, run where it is; KIND t: SRC shell text, run with bash -c; both in the
 *   model's folder), then the prefix W, then M and the model's M words, then Q post
 *   entries, then O outputs "DIR GLOB". (madengine copies a script into the model's folder
 *   first: here it would overwrite a model's file of the same name, as the model's files
 *   are already there.)
 * eval only ever sees "${N}" references and W, the tools' own command text (madengine's
 * encapsulate_script: shell text by definition); the model's words stay positional. A
 * failing pre script stops there (no model, no post scripts); post scripts run after the
 * model whatever its exit code. What fails goes to RM_TOOLS_STATUS; the exit code is the
 * first failure's. Globs expand without eval (IFS set to a newline, unquoted expansion); the
 * text holds no newline, so a dry run prints it on one line.
 */
static const char tools_wrapper[] =
    "S=" RM_TOOLS_STATUS "; O=" RM_TOOLS_OUTPUTS "; mkdir -p \"${S%/*}\"; rm -rf \"$S\" \"$O\"; "
    "rc=0; stop=; "
    /* run the entry at the head of the parameters ($1..$4 and N args) */
    "one() { printf 'run_models: %s\\n' \"$1\"; a=''; i=5; while [ $i -lt $((5 + $4)) ]; do "
    "a=\"$a \\\"\\${$i}\\\"\"; i=$((i + 1)); done; "
    "if [ \"$2\" = f ]; then eval \"bash \\\"\\$3\\\" $a\"; "
    "else eval \"bash -c \\\"\\$3\\\" \\\"run_models-tool\\\" $a\"; fi; }; "
    "k=0; p=$1; shift; while [ $k -lt $p ]; do "
    "if [ -z \"$stop\" ]; then one \"$@\"; r=$?; if [ $r -ne 0 ]; then stop=1; rc=$r; "
    "echo \"pre $k $r\" >> \"$S\"; fi; fi; shift $((4 + $4)); k=$((k + 1)); done; "
    "w=$1; m=$2; shift 2; "
    "if [ -z \"$stop\" ]; then a=''; i=1; while [ $i -le $m ]; do a=\"$a \\\"\\${$i}\\\"\"; "
    "i=$((i + 1)); done; (eval \"$w $a\"); rc=$?; echo \"model $rc\" >> \"$S\"; fi; "
    "shift $m; k=0; q=$1; shift; pf=; while [ $k -lt $q ]; do "
    "if [ -z \"$stop\" ] && [ -z \"$pf\" ]; then one \"$@\"; r=$?; if [ $r -ne 0 ]; then pf=1; "
    "[ $rc -ne 0 ] || rc=$r; echo \"post $k $r\" >> \"$S\"; fi; fi; "
    "shift $((4 + $4)); k=$((k + 1)); done; "
    "n=$1; shift; [ $n -gt 0 ] && echo \"" RM_TOOLS_GATHER_LINE "\"; mkdir -p \"$O\"; "
    "while [ $n -gt 0 ]; do d=$1; g=$2; shift 2; n=$((n - 1)); "
    /* the matches listed with a builtin (no process per file), then copied in bulk: one tar
     * pair per tool (names as ./x, so none is read as an option), else one cp per file */
    "L=\"$O/.$d.list\"; : > \"$L\"; "
    "o=$IFS; IFS=$(printf '\\n_'); IFS=${IFS%_}; for f in $g; do [ -e \"$f\" ] || [ -L \"$f\" "
    "] || continue; case $f in /*) printf '%s\\n' \"$f\";; *) printf './%s\\n' \"$f\";; esac; "
    "done >> \"$L\"; IFS=$o; "
    "if [ ! -s \"$L\" ]; then printf 'run_models: tool %s: nothing matches %s\\n' \"$d\" \"$g\"; "
    "elif mkdir -p \"$O/$d\" && command -v tar >/dev/null 2>&1 && tar -cf - -T \"$L\" "
    "2>/dev/null | (cd \"$O/$d\" && tar -xf - 2>/dev/null); then :; "
    "else while IFS= read -r f; do case $f in */*) t=\"$O/$d/${f%/*}\";; *) t=\"$O/$d\";; esac; "
    "mkdir -p \"$t\" && { cp -lR \"$f\" \"$t/\" 2>/dev/null || cp -R \"$f\" \"$t/\"; }; "
    "done < \"$L\"; fi; rm -f \"$L\"; done; echo gathered >> \"$S\"; exit $rc";

/* The folder a tool's outputs go to: its name with anything but [A-Za-z0-9._-] as '_', and
 * no leading '.' (no "..", no hidden folder). */
char *rm_workload_tool_dir(const char *tool)
{
	char *s = rm_xstrdup(tool && *tool ? tool : "_");

	for (char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '-'))
			*p = '_';
	if (s[0] == '.')
		s[0] = '_';
	return s;
}

char *rm_workload_tool_script_label(const rm_tool_plan *p, int post, size_t k)
{
	const rm_tool_script *s = post ? &p->post[k] : &p->pre[k];
	const char *ph = post ? "post" : "pre";
	const char *sep = s->args && *s->args ? " " : "";
	const char *args = s->args ? s->args : "";

	if (!s->path)
		return rm_xasprintf("tool '%s': %s script (built in)", s->tool ? s->tool : "", ph);
	if (s->tool)
		return rm_xasprintf("tool '%s': %s script '%s%s%s'", s->tool, ph, s->path, sep,
				    args);
	return rm_xasprintf("the context's %s_scripts: '%s%s%s'", ph, s->path, sep, args);
}

static int push_entries(const rm_tool_plan *p, int post, char ***v, size_t *n, rm_error *err)
{
	size_t count = post ? p->n_post : p->n_pre;
	char num[32];

	snprintf(num, sizeof(num), "%zu", count);
	*v = rm_strv_push(*v, n, num);
	for (size_t k = 0; k < count; k++) {
		const rm_tool_script *s = post ? &p->post[k] : &p->pre[k];
		char *label = rm_workload_tool_script_label(p, post, k), *src;
		char **words = NULL;
		size_t nw = 0;

		if (rm_split_words(s->args ? s->args : "", &words, &nw, err) < 0) {
			rm_error_wrap(err, "%s: 'args'", label);
			free(label);
			return -1;
		}
		src = s->path ? rm_xasprintf("%s/%s", RM_WORKSPACE, s->path) : rm_xstrdup(s->text);
		snprintf(num, sizeof(num), "%zu", nw);
		*v = rm_strv_push(*v, n, label);
		*v = rm_strv_push(*v, n, s->path ? "f" : "t");
		*v = rm_strv_push(*v, n, src);
		*v = rm_strv_push(*v, n, num);
		for (size_t j = 0; j < nw; j++)
			*v = rm_strv_push(*v, n, words[j]);
		rm_strv_free(words);
		free(src);
		free(label);
	}
	return 0;
}

int rm_workload__tools_cmd(const rm_workload *w, char ***v, size_t *n, char *const *model,
			   size_t n_model, rm_error *err)
{
	const rm_tool_plan *p = &w->tools;
	char num[32];

	*v = rm_strv_push(*v, n, "bash");
	*v = rm_strv_push(*v, n, "-c");
	*v = rm_strv_push(*v, n, tools_wrapper);
	*v = rm_strv_push(*v, n, "run_models-tools");
	if (push_entries(p, 0, v, n, err) < 0)
		return -1;
	*v = rm_strv_push(*v, n, p->wrap ? p->wrap : "");
	snprintf(num, sizeof(num), "%zu", n_model);
	*v = rm_strv_push(*v, n, num);
	for (size_t i = 0; i < n_model; i++)
		*v = rm_strv_push(*v, n, model[i]);
	if (push_entries(p, 1, v, n, err) < 0)
		return -1;
	snprintf(num, sizeof(num), "%zu", p->n_outputs);
	*v = rm_strv_push(*v, n, num);
	for (size_t i = 0; i < p->n_outputs; i++) {
		char *d = rm_workload_tool_dir(p->outputs[i].tool);
		*v = rm_strv_push(*v, n, d);
		*v = rm_strv_push(*v, n, p->outputs[i].glob);
		free(d);
	}
	return 0;
}
