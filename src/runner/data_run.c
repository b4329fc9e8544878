/*
 * A model's data (rm/data.h) in a run: data.json loaded once, each model's plan resolved
 * before its build (data no provider serves is warned about and left out: the model runs
 * without it, as in madengine; a wrong data.json entry is the model's FAILURE, nothing
 * built), the plan handed to the launcher's spec, and after the run the data_size and
 * data_download_duration columns.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "rm/util.h"

/* data_size gives up beyond this: a size must never stall a run. */
#define DATA_SIZE_MAX_ENTRIES 1000000
#define DATA_SIZE_MAX_SECONDS 10.0

int rm_runner__data_load(struct run *r, rm_error *err)
{
	const rm_run_opts *o = r->o;
	json_t *ctx_data = json_object_get(r->ctx.obj, "data");
	char *path;
	int need = 0, ret = -1;

	for (size_t i = 0; i < r->sel.n; i++)
		need |= r->sel.items[i].model->data && *r->sel.items[i].model->data;
	if (!need)
		return 0;
	path = o->data_config ? rm_xstrdup(o->data_config)
			      : rm_xasprintf("%s/data.json", o->root ? o->root : ".");
	if (o->data_config && access(path, R_OK) != 0) {
		rm_error_sys(err, RM_ERR_INPUT, errno, "--data-config '%s'", path);
		goto out;
	}
	if (rm_data_config_load(&r->data, path, err) < 0)
		goto out;
	r->data_loaded = 1;
	if (ctx_data &&
	    rm_data_config_apply(&r->data, ctx_data, "the context's 'data' key", err) < 0)
		goto out;
	if (o->force_mirror_local)
		rm_data_config_force_mirror_local(&r->data, o->force_mirror_local);
	ret = 0;
out:
	free(path);
	return ret;
}

int rm_runner__data_prepare(struct run *r, const rm_model *m, rm_data_plan *plan, rm_error *err)
{
	char *unserved = NULL;

	memset(plan, 0, sizeof(*plan));
	if (!m->data || !*m->data)
		return 0;
	if (rm_data_resolve(r->data_loaded ? &r->data : NULL, m->data, r->o->root, plan, &unserved,
			    err) < 0)
		return -1;
	/* madengine runs the model without it (its script may fetch its own data, as MAD's
	 * Hugging Face models do): say so, and run. */
	if (unserved && !rm_strv_has(r->unserved_said, unserved)) {
		rm_warn("model '%s': %s; it runs without that data, as madengine runs it "
			"(MAD_DATANAME is '%s'%s; its data columns stay empty); so does every "
			"other model of this run that names it",
			m->name, unserved, m->data,
			plan->n ? "" : ", MAD_DATAHOME only what docker_env_vars gives");
		r->unserved_said = rm_strv_push(r->unserved_said, &r->n_unserved_said, unserved);
	}
	free(unserved);
	for (size_t i = 0; i < plan->n && !r->o->dry_run; i++) {
		const rm_data_source *s = &plan->sources[i];
		if (s->create_host_path && rm_mkdirs(s->host_path, err) < 0) {
			rm_error_wrap(err, "data '%s': mirrorlocal", s->dataname);
			rm_data_plan_release(plan);
			return -1;
		}
	}
	return 0;
}

/* The data_size column: `du -sh` of every mounted source, joined by ','; "" when one of
 * them cannot be sized in time. */
static void data_size(const rm_data_plan *plan, struct outcome *oc)
{
	size_t used = 0;

	oc->data_size[0] = '\0';
	for (size_t i = 0; i < plan->n; i++) {
		char one[32];
		int w;

		if (!plan->sources[i].host_path)
			continue;
		if (rm_data_size(plan->sources[i].host_path, DATA_SIZE_MAX_ENTRIES,
				 DATA_SIZE_MAX_SECONDS, one, sizeof(one)) < 0) {
			oc->data_size[0] = '\0';
			return;
		}
		w = snprintf(oc->data_size + used, sizeof(oc->data_size) - used, "%s%s",
			     used ? "," : "", one);
		if (w < 0 || (size_t)w >= sizeof(oc->data_size) - used) {
			oc->data_size[0] = '\0';
			return;
		}
		used += (size_t)w;
	}
}

void rm_runner__data_log(struct stream *st, const rm_workload *w)
{
	const char *field = w->model->data;

	if (field && *field && !w->data.n)
		rm_runner__stream_note(st,
				       "run_models: data '%s': no provider serves it; the model "
				       "runs without it (see the run's warnings)",
				       field);
	for (size_t i = 0; i < w->data.n; i++) {
		const rm_data_source *s = &w->data.sources[i];
		if (s->script)
			rm_runner__stream_note(
			    st, "run_models: data '%s': provider custom, '%s %s' runs in %s%s%s",
			    s->dataname, s->script, s->script_args ? s->script_args : "", s->home,
			    s->host_path ? ", kept in " : "", s->host_path ? s->host_path : "");
		else
			rm_runner__stream_note(
			    st, "run_models: data '%s': provider %s, %s mounted at %s (%s)",
			    s->dataname, s->provider, s->host_path, s->home,
			    s->read_only ? "read-only" : "read-write");
	}
}

/* "<seconds> <exit code>" the custom scripts' wrapper left in the workload. */
static int data_status(struct run *r, rm_job *job, long *secs, long *rc)
{
	rm_error err = RM_ERROR_INIT;
	FILE *f = rm_runner__fetch_file(r, job, RM_DATA_STATUS, &err);
	int ok = f && fscanf(f, "%ld %ld", secs, rc) == 2 && *secs >= 0;

	if (f)
		fclose(f);
	return ok ? 0 : -1;
}

void rm_runner__data_after_run(struct run *r, const rm_workload *w, rm_job *job, struct outcome *oc)
{
	long secs = 0, rc = 0;

	if (!w->data.n)
		return;
	data_size(&w->data, oc);
	if (!rm_workload_data_scripts(w)) {
		oc->data_ran = 1; /* local data: nothing to fetch */
		oc->data_s = 0;
		return;
	}
	if (data_status(r, job, &secs, &rc) < 0)
		return; /* the scripts did not finish: no duration */
	oc->data_ran = 1;
	oc->data_s = (double)secs;
	if (rc != 0 && !oc->reason)
		rm_runner__fail(
		    oc,
		    "data '%s': a custom provider's script exited with code %ld (its output "
		    "is in the log)",
		    w->data.dataname, rc);
}
