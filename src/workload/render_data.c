/*
 * The model's data in the create body (rm_workload.data, a plan of rm/data.h): the bind
 * mounts of its sources, and the command that runs the custom sources' scripts before the
 * model. Pure, like render.c: no engine, no files.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "workload_internal.h"

size_t rm_workload_data_scripts(const rm_workload *w)
{
	size_t n = 0;

	for (size_t i = 0; i < w->data.n; i++)
		n += w->data.sources[i].script != NULL;
	return n;
}

int rm_workload__data_binds(const rm_workload *w, json_t *hc, rm_error *err)
{
	json_t *binds = json_object_get(hc, "Binds");

	for (size_t i = 0; i < w->data.n; i++) {
		const rm_data_source *s = &w->data.sources[i];
		char *b;

		if (!s->host_path)
			continue;
		/* "host:container[:ro]": a ':' in the host path would split it elsewhere. */
		if (strchr(s->host_path, ':') || strchr(s->host_path, ','))
			return rm_error_set(
			    err, RM_ERR_INPUT,
			    "data '%s': host path '%s' holds ':' or ',', which a bind "
			    "mount cannot carry; move the data to a path without them",
			    s->dataname, s->host_path);
		/* data.json is the folder's: it must not reach the host's root or system
		 * folders unasked */
		const char *why = rm_workload__sensitive_bind(s->host_path, s->read_only);
		if (why && !w->set.allow_sensitive_mounts)
			return rm_error_set(err, RM_ERR_INPUT,
					    "data '%s': provider '%s': path '%s' is %s; point it "
					    "at the data itself, or give --allow-sensitive-mounts "
					    "if you trust this folder",
					    s->dataname, s->provider, s->host_path, why);
		if (!binds) {
			binds = json_array();
			json_object_set_new(hc, "Binds", binds);
		}
		b = rm_xasprintf("%s:%s%s", s->host_path, s->home, s->read_only ? ":ro" : "");
		json_array_append_new(binds, json_string(b));
		free(b);
	}
	return 0;
}

/*
 * Runs each custom source's script in its home (created first), then the rest of the
 * command. Constant text: homes, scripts and arguments arrive as positional parameters,
 * each source as "HOME SCRIPT N ARG1..ARGN", the list ended by "--". eval only ever sees
 * "${1}" "${2}" ... references, never a value. The seconds the scripts took and the first
 * failing exit code (or 0) go to RM_DATA_STATUS for the runner.
 */
static const char data_wrapper[] =
    "t=$(date +%s 2>/dev/null || echo 0); rc=0; "
    "while [ \"$1\" != -- ]; do h=$1; s=$2; n=$3; shift 3; a=''; i=1; "
    "while [ $i -le $n ]; do a=\"$a \\\"\\${$i}\\\"\"; i=$((i + 1)); done; "
    "if [ $rc -eq 0 ]; then mkdir -p \"$h\" && (cd \"$h\" && eval \"bash \\\"\\$s\\\" $a\") "
    "|| rc=$?; fi; shift $n; done; shift; "
    "echo \"$(($(date +%s 2>/dev/null || echo 0) - t)) $rc\" > " RM_DATA_STATUS "; "
    "[ $rc -eq 0 ] || exit $rc; exec \"$@\"";

static char *script_in_container(const char *script, size_t i)
{
	const char *base = strrchr(script, '/');

	return rm_xasprintf("%s/%zu/%s", RM_DATA_SCRIPTS, i, base ? base + 1 : script);
}

int rm_workload__data_cmd(const rm_workload *w, char ***v, size_t *n, rm_error *err)
{
	size_t k = 0;

	if (!rm_workload_data_scripts(w))
		return 0;
	*v = rm_strv_push(*v, n, "sh");
	*v = rm_strv_push(*v, n, "-c");
	*v = rm_strv_push(*v, n, data_wrapper);
	*v = rm_strv_push(*v, n, "run_models-data");
	for (size_t i = 0; i < w->data.n; i++) {
		const rm_data_source *s = &w->data.sources[i];
		char **words = NULL, *path, count[32];
		size_t nw = 0;

		if (!s->script)
			continue;
		if (rm_split_words(s->script_args ? s->script_args : "", &words, &nw, err) < 0)
			return rm_error_wrap(err, "data '%s': provider 'custom': 'args'",
					     s->dataname);
		path = script_in_container(s->script, k++);
		snprintf(count, sizeof(count), "%zu", nw);
		*v = rm_strv_push(*v, n, s->home);
		*v = rm_strv_push(*v, n, path);
		*v = rm_strv_push(*v, n, count);
		for (size_t j = 0; j < nw; j++)
			*v = rm_strv_push(*v, n, words[j]);
		rm_strv_free(words);
		free(path);
	}
	*v = rm_strv_push(*v, n, "--");
	return 0;
}

const char *rm_workload_data_script(const rm_workload *w, size_t k)
{
	for (size_t i = 0; i < w->data.n; i++)
		if (w->data.sources[i].script && k-- == 0)
			return w->data.sources[i].script;
	return NULL;
}
