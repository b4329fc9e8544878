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
#include "rm/provenance.h"
#include "rm/references.h"
#include "rm/results.h"
#include "rm/config.h"
#include "rm/context.h"
#include "rm/db.h"
#include "rm/doctor.h"
#include "rm/launcher.h"
#include "rm/util.h"
#include "rm/registry.h"
#include "rm/report.h"
#include "rm/runner.h"
#include "rm/suite.h"

/* One entry, or one point of an entry's sweep, as the runner takes it. */
struct plan {
	const char *name;
	size_t entry;	   /* its entry's index (0 for --tags) */
	const char **tags; /* the entry's tags, then its models (a point's with its args) */
	size_t n_tags;
	const char **contexts; /* the entry's context as JSON, a point's, then the command line's */
	size_t n_contexts;
	char *context_json;
	long repeat, retries;
	double timeout;
	json_t *selected; /* the model names the entry selects */
	/* a sweep's point: its name, tags and context (owned), its parameters and settings */
	int has_point;
	char *point_name, *point_json, *label;
	char **point_tags;
	size_t n_point_tags;
	rm_config point;
	rm_tunableop tunableop; /* UNSET: the command line's */
	long n_gpus;		/* 0: the models' */
	const char *precision;	/* into point */
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

/* The plan of an entry (or of --tags, e NULL): its tags, models, context, repeat, timeout. */
static void plan_entry(const struct srun *s, struct plan *p, const rm_suite_entry *e, size_t i)
{
	const rm_run_opts *run = s->run;

	p->entry = i;
	p->tunableop = RM_TUNABLEOP_UNSET;
	p->selected = json_array();
	p->label = rm_xstrdup("");
	p->repeat = s->o->repeat_given || !e ? run->repeat : e->repeat;
	p->retries = s->o->retries_given || !e || e->retries < 0 ? run->retries : e->retries;
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
}

/* The command line's contexts, after the entry's and the point's. */
static void plan_cli_contexts(const struct srun *s, struct plan *p)
{
	for (size_t k = 0; k < s->run->n_contexts; k++)
		run_push(&p->contexts, &p->n_contexts, s->run->contexts[k]);
}

/* A point of e's sweep: the entry's plan, its arguments after every tag and model (the tag
 * form name:key=value), its environment and GPUs as a context, its settings. */
static void plan_point(const struct srun *s, struct plan *p, const rm_suite_entry *e,
		       const size_t *values)
{
	const rm_sweep *sw = e->sweep;
	rm_buf args = RM_BUF_INIT((size_t)1 << 20);
	json_t *ctx = json_object(), *env = json_object();

	p->has_point = 1;
	p->point = (rm_config)RM_CONFIG_INIT;
	rm_sweep_params(sw, values, &p->point);
	free(p->label);
	p->label = rm_config_label(&p->point);
	p->point_name = rm_sweep_point_name(sw, values, e->name);
	p->name = p->point_name;
	for (size_t d = 0; d < sw->n_dims; d++) {
		const rm_sweep_dim *dim = &sw->dims[d];
		const char *v = dim->values[values[d]];
		int t;
		switch (dim->bind) {
		case RM_SWEEP_ARG:
		case RM_SWEEP_PRECISION:
			rm_buf_addf(&args, ":%s=%s", dim->target, v);
			if (dim->bind == RM_SWEEP_PRECISION)
				p->precision = rm_config_get(&p->point, dim->name);
			break;
		case RM_SWEEP_ENV:
			json_object_set_new(env, dim->target, json_string(v));
			break;
		case RM_SWEEP_DOCKER_GPUS:
			json_object_set_new(ctx, "docker_gpus", json_string(v));
			break;
		case RM_SWEEP_TUNABLEOP:
			if (rm_choice_parse(rm_tunableop_words, v, &t) == 0)
				p->tunableop = (rm_tunableop)t;
			break;
		case RM_SWEEP_N_GPUS:
			rm_parse_long(v, -1, 1000000, &p->n_gpus);
			break;
		case RM_SWEEP_REPEAT:
			if (!s->o->repeat_given)
				rm_parse_long(v, 1, 1000000, &p->repeat);
			break;
		}
	}
	p->point_tags = rm_xcalloc(p->n_tags + 1, sizeof(*p->point_tags));
	p->n_point_tags = p->n_tags;
	for (size_t k = 0; k < p->n_tags; k++) {
		p->point_tags[k] = rm_xasprintf("%s%s", p->tags[k], rm_buf_str(&args));
		p->tags[k] = p->point_tags[k];
	}
	if (json_object_size(env))
		json_object_set(ctx, "docker_env_vars", env);
	if (json_object_size(ctx)) {
		p->point_json = json_dumps(ctx, JSON_COMPACT);
		run_push(&p->contexts, &p->n_contexts, p->point_json);
	}
	json_decref(env);
	json_decref(ctx);
	rm_buf_release(&args);
}

struct point_plans {
	struct srun *s;
	const rm_suite_entry *e;
	size_t entry;
};

static int add_point(void *ctx, const size_t *values)
{
	struct point_plans *pp = ctx;
	struct srun *s = pp->s;
	struct plan *p = &s->p[s->n++];

	plan_entry(s, p, pp->e, pp->entry);
	plan_point(s, p, pp->e, values);
	plan_cli_contexts(s, p);
	return 0;
}

/* A plan per suite entry and per point of its sweep, or one for the command line's --tags. */
static void make_plans(struct srun *s)
{
	size_t n = 0;

	for (size_t i = 0; s->have_suite && i < s->suite.n; i++)
		n += s->suite.entries[i].sweep ? s->suite.entries[i].sweep->n_points : 1;
	s->p = rm_xcalloc(s->have_suite ? n : 1, sizeof(*s->p));
	s->n = 0;
	if (!s->have_suite) {
		plan_entry(s, &s->p[s->n], NULL, 0);
		plan_cli_contexts(s, &s->p[s->n++]);
		return;
	}
	for (size_t i = 0; i < s->suite.n; i++) {
		const rm_suite_entry *e = &s->suite.entries[i];
		struct point_plans pp = {s, e, i};
		if (e->sweep) {
			rm_sweep_each(e->sweep, add_point, &pp);
			continue;
		}
		plan_entry(s, &s->p[s->n], e, i);
		plan_cli_contexts(s, &s->p[s->n++]);
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

/* A run holds each model once per configuration (its rows, logs and database keys are per
 * run, model and configuration): a model two plans select is an error naming both, unless
 * both are points of sweeps with different parameters. seen maps each model to the plans
 * that selected it: {"": plan of no point, LABEL: plan of that point}. */
static int selected_before(const struct srun *s, json_t *seen, size_t i, const char *name,
			   rm_error *err)
{
	const struct plan *p = &s->p[i], *q = NULL;
	json_t *m = json_object_get(seen, name), *at;
	const char *label;

	if (!m)
		json_object_set_new(seen, name, m = json_object());
	if (!p->has_point && json_object_size(m))
		json_object_foreach (m, label, at) {
			q = &s->p[json_integer_value(at)];
			break;
		}
	else if ((at = json_object_get(m, "")) || (at = json_object_get(m, p->label)))
		q = &s->p[json_integer_value(at)];
	if (q)
		return rm_error_set(
		    err, RM_ERR_INPUT,
		    "suite '%s': model '%s' is selected by entry %zu (%s) and "
		    "entry %zu (%s) with the same configuration; a run holds each "
		    "model once per configuration: give the second its own suite, or "
		    "make both points of one sweep",
		    s->suite.name, name, q->entry + 1, q->name, p->entry + 1, p->name);
	json_object_set_new(m, p->has_point ? p->label : "", json_integer((json_int_t)i));
	return 0;
}

/* Every entry's selection, before anything runs: a suite that names what is not there
 * fails now, not hours into the night. */
static int check_selection(struct srun *s, rm_error *err)
{
	rm_registry reg;
	json_t *seen = json_object();
	int ret = -1;

	memset(&reg, 0, sizeof(reg));
	if (rm_registry_load(&reg, s->run->root, err) < 0)
		goto out;
	for (size_t i = 0; i < s->n; i++) {
		struct plan *p = &s->p[i];
		const rm_suite_entry *e = s->have_suite ? &s->suite.entries[p->entry] : NULL;
		rm_selection sel = {0};
		int twice = 0;
		/* once per entry, not per point */
		for (size_t k = 0;
		     e && (i == 0 || s->p[i - 1].entry != p->entry) && k < e->n_models; k++)
			if (check_model_name(&reg, e, e->models[k], err) < 0)
				goto out;
		if (rm_select(&reg, p->tags, p->n_tags, &sel, err) < 0) {
			if (e)
				rm_error_wrap(err, "'%s' line %ld: entry '%s'", e->file, e->line,
					      p->name);
			rm_selection_release(&sel);
			goto out;
		}
		for (size_t k = 0; k < sel.n && !twice; k++) {
			const char *name = sel.items[k].model->name;
			twice = selected_before(s, seen, i, name, err) < 0;
			if (!twice)
				json_array_append_new(p->selected, json_string(name));
		}
		rm_selection_release(&sel);
		if (twice)
			goto out;
	}
	ret = 0;
out:
	json_decref(seen);
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
	json_t *once = json_object();
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
			if (json_object_get(once, json_string_value(v)))
				continue; /* a model of several points: its files once */
			json_object_set_new(once, json_string_value(v), json_true());
			names = rm_xrealloc(names, (n + 1) * sizeof(*names));
			names[n++] = json_string_value(v);
		}
	}
	json_decref(once);
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
	/* an entry's selection: its first plan's (its points select the same models) */
	for (size_t i = 0; s->have_suite && i < s->n; i++)
		if (i == 0 || s->p[i - 1].entry != s->p[i].entry)
			json_object_set(json_array_get(entries, s->p[i].entry), "selected",
					s->p[i].selected);
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

/* The host's provenance (rm/doctor.h), once for every entry: into run.json and perf.csv's
 * companion file (rm/provenance.h); the JSON of the latter, masked. */
static json_t *host_provenance(struct srun *s, const rm_context *ctx, const rm_mask *mask)
{
	rm_provenance_opts po = RM_PROVENANCE_OPTS_INIT;
	json_t *groups, *prov = json_object(), *vals, *v;
	const char *g, *name;
	rm_error err = RM_ERROR_INIT;

	po.ctx = ctx;
	if (s->run->sysfs_root)
		po.sysfs_root = s->run->sysfs_root;
	po.root = s->run->root;
	groups = rm_doctor_provenance(&po);
	json_object_foreach (groups, g, vals)
		json_object_foreach (vals, name, v) {
			char *m = rm_mask_string(mask, json_string_value(v));
			json_object_set_new(vals, name, json_string(m));
			rm_provenance_put(prov, "", "", g, name, m);
			free(m);
		}
	if (rm_provenance_append(s->run->output, s->run_id, "", "", groups, &err) < 0)
		rm_warn("the run's provenance: %s", rm_error_text(&err));
	json_decref(groups);
	return prov;
}

/* At the end: run.json gets every model's provenance too (perf.csv's companion file). */
static void manifest_provenance(struct srun *s)
{
	rm_manifest_file mf;
	json_t *prov = NULL;
	rm_error err = RM_ERROR_INIT;

	if (!s->manifest || rm_manifest_load(s->manifest, &mf, &err) < 0)
		return;
	if (rm_provenance_read(s->run->output, s->run_id, &prov, &err) == 0 &&
	    json_object_size(prov)) {
		mf.m.provenance = prov;
		if (rm_manifest_write(s->manifest, &mf.m, &err) < 0)
			rm_warn("run.json's provenance: %s", rm_error_text(&err));
	}
	json_decref(prov);
	rm_manifest_file_release(&mf);
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
	json_t *entries = entries_json(s), *options = options_json(s), *prov = NULL;
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
	prov = host_provenance(s, &ctx, &mask);
	rm_manifest m = {.run_id = s->run_id,
			 .started_at = s->started,
			 .git_commit = commit,
			 .models_root = run->root,
			 .host = NULL,
			 .suite = s->have_suite ? s->suite.name : NULL,
			 .suite_file = s->have_suite ? s->suite.file : NULL,
			 .suite_entries = entries,
			 .options = options,
			 .gpu_vendor = ctx.gpu_vendor,
			 .gpu_arch = ctx.gpu_arch,
			 .n_gpus = ctx.n_gpus,
			 .findings = findings,
			 .n_findings = n_findings,
			 .mask = &mask,
			 .provenance = prov};
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
	json_decref(prov);
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
		eo.retries = p->retries;
		eo.no_host_provenance = 1; /* written once, with run.json */
		/* a suite's pre-flight check is on unless --preflight off */
		if (eo.wl.preflight == RM_PREFLIGHT_AUTO)
			eo.wl.preflight = RM_PREFLIGHT_ON;
		eo.wl.timeout = p->timeout;
		eo.run_id = s->run_id;
		eo.baseline = s->base;
		if (p->has_point) {
			eo.point = &p->point;
			eo.precision = p->precision;
			eo.n_gpus = p->n_gpus;
			if (p->tunableop != RM_TUNABLEOP_UNSET)
				eo.wl.tunableop = p->tunableop;
		}
		if (s->have_suite && json_array_size(p->selected))
			rm_info("suite %s, entry %zu of %zu: %s (%zu model(s), repeat %ld)",
				s->suite.name, p->entry + 1, s->suite.n, p->name,
				json_array_size(p->selected), p->repeat);
		else if (s->have_suite) /* a dry run: the selection is the runner's to print */
			rm_info("suite %s, entry %zu of %zu: %s (repeat %ld)", s->suite.name,
				p->entry + 1, s->suite.n, p->name, p->repeat);
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

	manifest_provenance(s);
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
		free(s->p[i].point_name);
		free(s->p[i].point_json);
		free(s->p[i].label);
		for (size_t k = 0; k < s->p[i].n_point_tags; k++)
			free(s->p[i].point_tags[k]);
		free(s->p[i].point_tags);
		rm_config_release(&s->p[i].point);
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
		if (rm_suite_check_size(&s.suite, o->yes, err) < 0) {
			rm_suite_release(&s.suite);
			return -1;
		}
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
