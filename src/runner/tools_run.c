/*
 * The run's tools (rm/tools.h): the context's tools, pre_scripts, post_scripts and
 * encapsulate_script resolved once, before anything is built (an unknown tool stops the run
 * there), into the plan every workload of the run carries; after each run, what the tools
 * came to (a failed script is the run's FAILURE, naming the tool and the phase) and their
 * outputs copied beside the run's log.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "rm/util.h"

static int has_key(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);
	return v && !json_is_null(v);
}

int rm_runner__tools_load(struct run *r, rm_error *err)
{
	const rm_run_opts *o = r->o;
	const json_t *obj = r->ctx.obj;
	rm_tools_config c;
	int tools = has_key(obj, "tools"), any = 0, ret;

	for (const char *const *k = rm_tools_context_keys; *k; k++)
		any |= has_key(obj, *k);
	if (!any) {
		if (o->tools_config)
			rm_warn("--tools-config '%s' given, but the context selects no tool (add "
				"\"tools\": [{\"name\": ...}] to --additional-context)",
				o->tools_config);
		return 0;
	}
	memset(&c, 0, sizeof(c));
	/* The definitions are read only when a tool is selected: a broken tools file does not
	 * stop runs that use none. */
	if (tools && rm_tools_config_load(&c, o->tools_config, o->root, err) < 0)
		return -1;
	ret = rm_tools_resolve(tools ? &c : NULL, obj, o->root, &r->tools, err);
	rm_tools_config_release(&c);
	if (ret == 0 && r->tools.n_tools && !o->dry_run) {
		rm_buf b = RM_BUF_INIT((size_t)1 << 20);
		for (size_t i = 0; i < r->tools.n_tools; i++)
			rm_buf_addf(&b, "%s%s (%s)", i ? ", " : "", r->tools.tools[i],
				    r->tools.sources[i]);
		rm_info("tools: %s", rm_buf_str(&b));
		rm_buf_release(&b);
	}
	return ret;
}

void rm_runner__tools_log(struct stream *st, const rm_workload *w)
{
	const rm_tool_plan *p = &w->tools;

	for (size_t i = 0; i < p->n_tools; i++)
		rm_runner__stream_note(st, "run_models: tool '%s' (%s)", p->tools[i],
				       p->sources[i]);
	if (p->wrap)
		rm_runner__stream_note(st, "run_models: the model's command runs under: %s",
				       p->wrap);
}

/* "<log dir>/<model>.<run id>[.rN].tools": beside the run's own live log. */
char *rm_runner__tools_dir(const char *live_log)
{
	size_t n = strlen(live_log);

	if (rm_ends_with(live_log, ".live.log"))
		n -= strlen(".live.log");
	return rm_xasprintf("%.*s.tools", (int)n, live_log);
}

void rm_runner__tools_after_run(struct run *r, const rm_workload *w, rm_job *job, struct stream *st,
				struct outcome *oc)
{
	rm_tools_verdict v;
	rm_error err = RM_ERROR_INIT;
	char *dest;

	if (rm_tool_plan_empty(&w->tools) || !job)
		return;
	dest = rm_runner__tools_dir(oc->log_file);
	if (rm_launcher_tools_collect(r->active, job, w, dest, &v, &err) < 0)
		rm_warn("model '%s': %s", w->model_name, rm_error_text(&err));
	if (v.outputs) {
		rm_runner__stream_note(st, "run_models: the tools' outputs are in %s", v.outputs);
		rm_info("model '%s': the tools' outputs are in '%s'", w->model_name, v.outputs);
	}
	/* A failed pre script is the run's reason (the model did not run); a failed post script
	 * too, unless the model failed first (its exit code says more). */
	if (v.failure && !oc->reason && (!v.post || v.model_rc == 0))
		rm_runner__fail(oc, "%s", v.failure);
	rm_tools_verdict_release(&v);
	free(dest);
}
