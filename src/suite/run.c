/*
 * A suite run: every entry through the runner under one run id, run.json once at the start,
 * the CI outputs once at the end (rm/suite.h has the contract).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rm/detect.h"
#include "rm/history.h"
#include "rm/manifest.h"
#include "rm/references.h"
#include "rm/results.h"
#include "rm/context.h"
#include "rm/db.h"
#include "rm/doctor.h"
#include "rm/launcher.h"
#include "rm/util.h"
#include "rm/registry.h"
#include "rm/report.h"
#include "rm/runner.h"
#include "rm/suite.h"

/* One entry as the runner takes it. */
struct plan {
	const char *name;
	const char **tags; /* the entry's tags, then its models */
	size_t n_tags;
	const char **contexts; /* the entry's context as JSON, then the command line's */
	size_t n_contexts;
	char *context_json;
	long repeat;
	double timeout;
	json_t *selected; /* the model names the entry selects */
};

struct srun {
	const rm_suite_run_opts *o;
	const rm_run_opts *run;
	rm_suite suite;
	int have_suite;
	struct plan *p;
	size_t n;
	char run_id[64], started[32];
	char *manifest;
	rm_baseline *base;
	rm_references *refs;
	size_t window;
};

static void run_push(const char ***v, size_t *n, const char *s)
{
	*v = rm_xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = s;
}

/* A plan per suite entry, or one for the command line's --tags. */
static void make_plans(struct srun *s)
{
	const rm_run_opts *run = s->run;
	size_t n = s->have_suite ? s->suite.n : 1;

	s->p = rm_xcalloc(n, sizeof(*s->p));
	s->n = n;
	for (size_t i = 0; i < n; i++) {
		struct plan *p = &s->p[i];
		const rm_suite_entry *e = s->have_suite ? &s->suite.entries[i] : NULL;
		p->selected = json_array();
		p->repeat = s->o->repeat_given || !e ? run->repeat : e->repeat;
		p->timeout = run->wl.timeout >= 0 || !e ? run->wl.timeout : e->timeout;
		if (!e) {
			p->name = "command line";
			for (size_t k = 0; k < run->n_tags; k++)
				run_push(&p->tags, &p->n_tags, run->tags[k]);
		} else {
			p->name = e->name;
			for (size_t k = 0; k < e->n_tags; k++)
				run_push(&p->tags, &p->n_tags, e->tags[k]);
			for (size_t k = 0; k < e->n_models; k++)
				run_push(&p->tags, &p->n_tags, e->models[k]);
			if (json_object_size(e->context)) {
				p->context_json = json_dumps(e->context, JSON_COMPACT);
				run_push(&p->contexts, &p->n_contexts, p->context_json);
			}
		}
		for (size_t k = 0; k < run->n_contexts; k++)
			run_push(&p->contexts, &p->n_contexts, run->contexts[k]);
	}
}

/* A `models` name must select that model and nothing else (it may also be a tag). */
static int check_model_name(const rm_registry *reg, const rm_suite_entry *e, const char *name,
			    rm_error *err)
{
	rm_selection sel = {0};
	int ok = rm_select(reg, &name, 1, &sel, err) == 0 && sel.n == 1 &&
		 !strcmp(sel.items[0].model->name, name);
	size_t n = sel.n;

	rm_selection_release(&sel);
	if (ok)
		return 0;
	return rm_error_set(
	    err, RM_ERR_INPUT, "'%s' line %ld: entry '%s': models: '%s' is not a model name%s",
	    e->file, e->line, e->name, name,
	    n > 1 ? " (it selects several models as a tag: put it under tags)" : "");
}

/* A run holds each model once (its rows, logs and database keys are per run and model):
 * a model two entries select is an error naming both. */
static int selected_before(const struct srun *s, size_t entry, const char *name, rm_error *err)
{
	for (size_t i = 0; i < entry; i++) {
		size_t k;
		json_t *v;
		json_array_foreach (s->p[i].selected, k, v)
			if (!strcmp(json_string_value(v), name))
				return rm_error_set(err, RM_ERR_INPUT,
						    "suite '%s': model '%s' is selected by entry "
						    "%zu (%s) and entry "
						    "%zu (%s); a run holds each model once: give "
						    "the second its own "
						    "suite",
						    s->suite.name, name, i + 1, s->p[i].name,
						    entry + 1, s->p[entry].name);
	}
	return 0;
}

/* Every entry's selection, before anything runs: a suite that names what is not there
 * fails now, not hours into the night. */
static int check_selection(struct srun *s, rm_error *err)
{
	rm_registry reg;
	int ret = -1;

	memset(&reg, 0, sizeof(reg));
	if (rm_registry_load(&reg, s->run->root, err) < 0)
		goto out;
	for (size_t i = 0; i < s->n; i++) {
		struct plan *p = &s->p[i];
		const rm_suite_entry *e = s->have_suite ? &s->suite.entries[i] : NULL;
		rm_selection sel = {0};
		for (size_t k = 0; e && k < e->n_models; k++)
			if (check_model_name(&reg, e, e->models[k], err) < 0)
				goto out;
		if (rm_select(&reg, p->tags, p->n_tags, &sel, err) < 0) {
			if (e)
				rm_error_wrap(err, "'%s' line %ld: entry '%s'", e->file, e->line,
					      e->name);
			rm_selection_release(&sel);
			goto out;
		}
		int twice = 0;
		for (size_t k = 0; k < sel.n && !twice; k++) {
			const char *name = sel.items[k].model->name;
			twice = selected_before(s, i, name, err) < 0;
			if (!twice)
				json_array_append_new(p->selected, json_string(name));
		}
		rm_selection_release(&sel);
		if (twice)
			goto out;
	}
	ret = 0;
out:
	rm_registry_release(&reg);
	return ret;
}

/* Every file of the run, before anything is built: the perf CSVs of every entry's models,
 * run.json and the CI outputs (a clash found at the end would lose them). */
static int suite_check_outputs(const struct srun *s, rm_error *err)
{
	const rm_nightly_opts *ci = &s->o->ci;
	char *dir = rm_dirname(s->run->output), *manifest = rm_manifest_path(dir, s->run_id),
	     *latest = rm_manifest_path(dir, NULL);
	const rm_run_output fixed[] = {{manifest, "the run's manifest (beside the perf CSV)"},
				       {latest, "the link to the latest run's manifest (run.json)"},
				       {ci->junit, "--junit"},
				       {ci->summary_markdown, "--summary-markdown"},
				       {ci->html, "--html"},
				       {ci->archive, "--archive"}};
	size_t n_fixed = sizeof(fixed) / sizeof(fixed[0]), n_extra = n_fixed;
	rm_run_output *extra = rm_xcalloc(n_fixed + ci->n_export_dbs, sizeof(*extra));
	char **whats = rm_xcalloc(ci->n_export_dbs + 1, sizeof(*whats));
	const char **names = NULL;
	size_t n = 0;
	long repeat = 1;
	int ret;

	memcpy(extra, fixed, sizeof(fixed));
	/* a SQLite database is a file too: an archive or a report over it would replace the
	 * whole history */
	for (size_t i = 0; i < ci->n_export_dbs; i++) {
		const char *path = rm_db_sqlite_path(ci->export_dbs[i]);
		if (!path)
			continue;
		whats[i] = rm_xasprintf("the database of --export %s", ci->export_dbs[i]);
		extra[n_extra].path = path;
		extra[n_extra++].what = whats[i];
	}

	for (size_t i = 0; i < s->n; i++) {
		size_t k;
		json_t *v;
		if (s->p[i].repeat > repeat)
			repeat = s->p[i].repeat;
		json_array_foreach (s->p[i].selected, k, v) {
			names = rm_xrealloc(names, (n + 1) * sizeof(*names));
			names[n++] = json_string_value(v);
		}
	}
	ret = rm_perf_check(s->run->output, err);
	if (ret == 0)
		ret = rm_runner_check_outputs(s->run, names, n, repeat, extra, n_extra, err);
	for (size_t i = 0; i < ci->n_export_dbs; i++)
		free(whats[i]);
	free(whats);
	free(extra);
	free(names);
	free(latest);
	free(manifest);
	free(dir);
	return ret;
}

/* The history and the references, opened once: from the command line, else the suite's. */
static int open_baseline(struct srun *s, rm_error *err)
{
	const char *src = s->o->ci.baseline;

	s->window = s->o->ci.window ? s->o->ci.window : s->have_suite ? s->suite.window : 0;
	if (s->window == 1 || s->window > RM_DETECT_MAX_WINDOW)
		return rm_error_set(err, RM_ERR_USAGE,
				    "--history-window takes 2 to %d runs, not %zu",
				    RM_DETECT_MAX_WINDOW, s->window);
	if (s->o->ci.references || (s->have_suite && s->suite.references)) {
		s->refs = rm_references_new();
		if (s->o->ci.references ? rm_references_load(s->refs, s->o->ci.references, err) < 0
					: rm_references_add_json(s->refs, s->suite.references,
								 s->suite.file, err) < 0)
			return -1;
	}
	if (!src && s->have_suite)
		src = s->suite.baseline;
	if (!src)
		return 0;
	rm_baseline_opts bo = RM_BASELINE_OPTS_INIT;
	bo.source = src;
	bo.exclude_run_id = s->run_id;
	bo.before = s->started;
	bo.window = s->window;
	if (rm_baseline_open(&bo, &s->base, err) < 0)
		return -1;
	rm_info("baseline: %zu series from '%s'", rm_history_n_series(s->base), src);
	return 0;
}

static json_t *run_str_or_null(const char *v)
{
	return v ? json_string(v) : json_null();
}

static json_t *redacted(const char *url)
{
	char *r;
	json_t *j;

	if (!url)
		return json_null();
	r = rm_db_redact(url);
	j = json_string(r);
	free(r);
	return j;
}

/* The options of the run, for run.json (not the contexts' text: they may hold secrets). */
static json_t *options_json(const struct srun *s)
{
	const rm_run_opts *run = s->run;
	const rm_nightly_opts *ci = &s->o->ci;
	json_t *o = json_object(), *tags = json_array(), *files = json_array();
	const char *baseline = ci->baseline ? ci->baseline : s->suite.baseline;

	for (size_t i = 0; !s->have_suite && i < run->n_tags; i++)
		json_array_append_new(tags, json_string(run->tags[i]));
	for (size_t i = 0; i < s->o->n_context_files; i++)
		json_array_append_new(files, json_string(s->o->context_files[i]));
	json_object_set_new(o, "tags", tags);
	json_object_set_new(o, "additional_context_files", files);
	json_object_set_new(o, "additional_contexts", json_integer((json_int_t)run->n_contexts));
	json_object_set_new(o, "output", json_string(run->output));
	json_object_set_new(o, "log_dir", json_string(run->log_dir));
	json_object_set_new(o, "repeat",
			    s->o->repeat_given ? json_integer(run->repeat) : json_null());
	json_object_set_new(o, "timeout",
			    run->wl.timeout >= 0 ? json_real(run->wl.timeout) : json_null());
	json_object_set_new(o, "parser", run_str_or_null(run->parser));
	json_object_set_new(o, "fail_on_regression",
			    ci->fail_on_regression >= 0 ? json_real(ci->fail_on_regression)
							: json_null());
	json_object_set_new(o, "baseline", redacted(baseline));
	json_object_set_new(o, "history_window",
			    s->window ? json_integer((json_int_t)s->window) : json_null());
	json_object_set_new(o, "references", s->refs ? rm_references_json(s->refs) : json_null());
	json_object_set_new(o, "junit", run_str_or_null(ci->junit));
	json_object_set_new(o, "summary_markdown", run_str_or_null(ci->summary_markdown));
	json_object_set_new(o, "html", run_str_or_null(ci->html));
	json_object_set_new(o, "archive", run_str_or_null(ci->archive));
	json_t *exports = json_array();
	for (size_t i = 0; i < ci->n_export_dbs; i++)
		json_array_append_new(exports, redacted(ci->export_dbs[i]));
	json_object_set_new(o, "export", exports);
	return o;
}

/* The suite's entries as rm_suite_json gives them, each with the models it selected. */
static json_t *entries_json(const struct srun *s)
{
	json_t *all = s->have_suite ? rm_suite_json(&s->suite) : NULL;
	json_t *entries = all ? json_incref(json_object_get(all, "entries")) : json_array();

	json_decref(all);
	for (size_t i = 0; s->have_suite && i < s->n; i++)
		json_object_set(json_array_get(entries, i), "selected", s->p[i].selected);
	return entries;
}

/* The context as the runner will see it (before the entries' own), for the GPU fields. */
static int manifest_context(const struct srun *s, rm_context *ctx, rm_error *err)
{
	const rm_run_opts *run = s->run;

	if (rm_context_detect(ctx, run->sysfs_root ? run->sysfs_root : "/sys", 1, err) < 0)
		return -1;
	for (size_t i = 0; i < run->n_context_files; i++)
		if (rm_context_apply_file(ctx, run->context_files[i], err) < 0)
			return -1;
	for (size_t i = 0; i < run->n_contexts; i++)
		if (rm_context_apply(ctx, run->contexts[i], "--additional-context", err) < 0)
			return -1;
	return 0;
}

/* The run's own manifest, once, beside perf.csv (run.<run id>.json: a run started beside it
 * writes its own), and run.json pointed at it as the latest. */
static int write_manifest(struct srun *s, rm_error *err)
{
	const rm_run_opts *run = s->run;
	rm_context ctx;
	rm_doctor_opts dopt = RM_DOCTOR_OPTS_INIT;
	rm_finding *findings = NULL;
	size_t n_findings = 0, n_secrets = 0;
	char *dir = rm_dirname(run->output), *commit = rm_git_commit(run->root);
	char **secrets = rm_secrets_from_env(environ, &n_secrets);
	rm_mask mask;
	json_t *entries = entries_json(s), *options = options_json(s);
	int ret = -1;

	memset(&ctx, 0, sizeof(ctx));
	if (run->sysfs_root)
		dopt.sysfs_root = run->sysfs_root;
	dopt.docker_host = run->docker_host;
	dopt.work_dir = run->log_dir;
	/* A tag argument or an entry's context may carry a secret's value: run.json is
	 * masked as every other file of the run. */
	rm_mask_init(&mask, (const char *const *)secrets, n_secrets);
	s->manifest = rm_manifest_path(dir, s->run_id);
	if (manifest_context(s, &ctx, err) < 0)
		goto out;
	dopt.backends = rm_launcher_probe_all;
	rm_doctor_collect(&dopt, &findings, &n_findings);
	rm_manifest m = {s->run_id,
			 s->started,
			 commit,
			 run->root,
			 NULL,
			 s->have_suite ? s->suite.name : NULL,
			 s->have_suite ? s->suite.file : NULL,
			 entries,
			 options,
			 ctx.gpu_vendor,
			 ctx.gpu_arch,
			 ctx.n_gpus,
			 findings,
			 n_findings,
			 &mask};
	ret = rm_mkdirs(dir, err) < 0 ? -1 : rm_manifest_write(s->manifest, &m, err);
	if (ret == 0)
		rm_manifest_link_latest(s->manifest);
out:
	rm_mask_release(&mask);
	rm_strv_free(secrets);
	rm_findings_free(findings, n_findings);
	rm_context_release(&ctx);
	json_decref(entries);
	json_decref(options);
	free(commit);
	free(dir);
	return ret;
}

/* Each entry through the runner. Stops at the first entry that is interrupted or cannot
 * run (err filled, -1). */
static int run_entries(struct srun *s, rm_suite_run_result *res, rm_error *err)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct plan *p = &s->p[i];
		rm_run_opts eo = *s->run;
		rm_run_result r;

		eo.tags = p->tags;
		eo.n_tags = p->n_tags;
		eo.contexts = p->contexts;
		eo.n_contexts = p->n_contexts;
		eo.repeat = p->repeat;
		eo.wl.timeout = p->timeout;
		eo.run_id = s->run_id;
		eo.baseline = s->base;
		if (s->have_suite)
			rm_info("suite %s, entry %zu of %zu: %s (%zu model(s), repeat %ld)",
				s->suite.name, i + 1, s->n, p->name, json_array_size(p->selected),
				p->repeat);
		int rc = rm_runner_run(&eo, &r, err);
		res->n_failed += r.n_failed;
		res->engine_lost |= r.engine_lost;
		res->interrupted = r.interrupted;
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* The CI outputs. After a failed or interrupted run only what CI picks up from the job's
 * files (JUnit, summary, archive): no report, no export, no gate. */
static int run_finish(struct srun *s, rm_suite_run_result *res, int partial, rm_error *err)
{
	rm_nightly_opts ci = s->o->ci;
	double t0 = rm_now();

	ci.perf_csv = s->run->output;
	ci.run_id = s->run_id;
	ci.manifest = s->manifest;
	ci.models_root = s->run->root;
	ci.baseline_open = s->base;
	ci.references_open = s->refs;
	ci.window = s->window;
	if (!ci.suite && s->have_suite)
		ci.suite = s->suite.name;
	if (partial) {
		ci.html = NULL;
		ci.n_export_dbs = 0;
		ci.fail_on_regression = -1;
	}
	if (rm_nightly_finish(&ci, &res->ci, err) < 0)
		return -1;
	res->finished = 1;
	rm_info("CI outputs of run %s in %.2f s: %zu compared, %zu regression(s)%s", s->run_id,
		rm_now() - t0, res->ci.n_compared, res->ci.n_regressions,
		res->ci.gate_enforced ? "" : " (gate off)");
	return 0;
}

static void release(struct srun *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->p[i].tags);
		free(s->p[i].contexts);
		free(s->p[i].context_json);
		json_decref(s->p[i].selected);
	}
	free(s->p);
	free(s->manifest);
	rm_baseline_free(s->base);
	rm_references_free(s->refs);
	if (s->have_suite)
		rm_suite_release(&s->suite);
}

/* After a failed or interrupted entry: the outputs of what ran (the caller reports the
 * entry's error). */
static void finish_partial(struct srun *s, rm_suite_run_result *res)
{
	rm_error e = RM_ERROR_INIT;

	if (run_finish(s, res, 1, &e) < 0)
		rm_info("no CI outputs for the stopped run: %s", rm_error_text(&e));
	res->finished = 0;
}

int rm_suite_run(const rm_suite_run_opts *o, rm_suite_run_result *res, rm_error *err)
{
	struct srun s;
	int ret = -1;

	memset(&s, 0, sizeof(s));
	memset(res, 0, sizeof(*res));
	s.o = o;
	s.run = o->run;
	if (o->suite_file) {
		if (rm_suite_load(o->suite_file, &s.suite, err) < 0)
			return -1;
		s.have_suite = 1;
	}
	make_plans(&s);
	rm_run_id_new(s.run_id, sizeof(s.run_id));
	snprintf(res->run_id, sizeof(res->run_id), "%s", s.run_id);
	rm_utc_timestamp(s.started, sizeof(s.started));
	if (s.run->dry_run) {
		ret = run_entries(&s, res, err);
		goto out;
	}
	if (check_selection(&s, err) < 0 || suite_check_outputs(&s, err) < 0 ||
	    open_baseline(&s, err) < 0 || write_manifest(&s, err) < 0)
		goto out;
	if (run_entries(&s, res, err) < 0) {
		finish_partial(&s, res);
		goto out;
	}
	ret = run_finish(&s, res, 0, err);
out:
	release(&s);
	return ret;
}
