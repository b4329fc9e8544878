/*
 * The end of a run: every CI output from the run's perf.csv, in one call. The run's run.json
 * (when there is one) supplies what the caller leaves out: the suite name, the per-entry
 * thresholds, the gate and the baseline; so `run --junit ...` and a later `report ci` on
 * the same files reach the same verdicts.
 */
#include <glob.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rm/accepted.h"
#include "rm/archive.h"
#include "rm/detect.h"
#include "rm/direction.h"
#include "rm/gate.h"
#include "rm/history.h"
#include "rm/junit.h"
#include "rm/manifest.h"
#include "rm/markdown.h"
#include "rm/metrics.h"
#include "rm/references.h"
#include "rm/results.h"
#include "rm/text.h"
#include "rm/db.h"
#include "rm/util.h"
#include "rm/suite.h"

static int nightly_exists(const char *p)
{
	struct stat st;
	return p && p[0] && stat(p, &st) == 0;
}

static char **add_unique(char **v, size_t *n, const char *p)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp(v[i], p))
			return v;
	return rm_strv_push(v, n, p);
}

/* <model>.<run id>[.r<N>].live.log -> <model>.<run id>.build.log (NULL: not a live log). */
static char *build_log(const char *log)
{
	size_t n = strlen(log);
	const char *r;

	if (!rm_ends_with(log, ".live.log"))
		return NULL;
	n -= 9;
	/* a repeat's ".r<N>" */
	for (r = log + n; r > log && r[-1] >= '0' && r[-1] <= '9'; r--)
		;
	if (r < log + n && r - log >= 2 && r[-1] == 'r' && r[-2] == '.')
		n = (size_t)(r - log - 2);
	return rm_xasprintf("%.*s.build.log", (int)n, log);
}

/* The tools' outputs of a live log <base>[.rN].live.log: <base>[.rN].tools, and SLURM's
 * per-rank <base>.node<R>.tools. */
static char **add_tools_dirs(char **v, size_t *n, const char *log)
{
	size_t len = strlen(log) - strlen(".live.log");
	char *dir = rm_xasprintf("%.*s.tools", (int)len, log);
	char *pat = rm_xasprintf("%.*s.node*.tools", (int)len, log);
	glob_t g;

	if (nightly_exists(dir))
		v = add_unique(v, n, dir);
	if (glob(pat, GLOB_NOESCAPE, NULL, &g) == 0)
		for (size_t i = 0; i < g.gl_pathc; i++)
			v = add_unique(v, n, g.gl_pathv[i]);
	globfree(&g);
	free(pat);
	free(dir);
	return v;
}

/* A row's log, its build log, its tools' outputs and its perf_<model>.csv, when they
 * exist. */
static char **add_row_files(char **v, size_t *n, const char *dir, const rm_result *r)
{
	const char *log = r->col[RM_COL_LOG_FILE];
	char *p, *safe = rm_file_safe(r->col[RM_COL_MODEL]), *moved = NULL;

	/* A relative log path is as the runner saw it; from elsewhere, try beside perf.csv (as
	 * JUnit does). */
	if (log[0] && log[0] != '/' && !nightly_exists(log))
		log = moved = rm_xasprintf("%s/%s", dir, log);
	p = rm_xasprintf("%s/perf_%s.csv", dir, safe);
	if (nightly_exists(p))
		v = add_unique(v, n, p);
	free(p);
	free(safe);
	if (nightly_exists(log)) {
		v = add_unique(v, n, log);
		char *b = build_log(log);
		if (b && nightly_exists(b))
			v = add_unique(v, n, b);
		free(b);
		if (rm_ends_with(log, ".live.log"))
			v = add_tools_dirs(v, n, log);
	}
	free(moved);
	return v;
}

/* The run's files for the archive: perf.csv, the perf_<model>.csv of its models,
 * perf_summary.csv, every log named in its rows (and the build logs and the tools' outputs
 * beside them), the accepted changes, and the outputs. */
static char **archive_list(const rm_nightly_opts *o, const rm_results *run, size_t *n)
{
	char **v = NULL, *dir = rm_dirname(o->perf_csv);
	const char *outs[] = {o->manifest, o->junit, o->summary_markdown, o->html};

	*n = 0;
	v = add_unique(v, n, o->perf_csv);
	for (size_t i = 0; i < run->n; i++)
		v = add_row_files(v, n, dir, &run->rows[i]);
	char *summary = rm_xasprintf("%s/perf_summary.csv", dir),
	     *acc = rm_accepted_path(o->perf_csv);
	if (nightly_exists(summary))
		v = add_unique(v, n, summary);
	if (nightly_exists(acc))
		v = add_unique(v, n, acc);
	free(summary);
	free(acc);
	/* an output written through a FIFO or to /dev/stdout is not a file to archive */
	for (size_t i = 0; i < sizeof(outs) / sizeof(outs[0]); i++) {
		struct stat st, lst;
		char *real;
		if (!outs[i] || stat(outs[i], &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		/* written through a symlink: the file itself goes in, not the link */
		real = lstat(outs[i], &lst) == 0 && S_ISLNK(lst.st_mode) ? realpath(outs[i], NULL)
									 : NULL;
		v = add_unique(v, n, real ? real : outs[i]);
		free(real);
	}
	for (size_t i = 0; i < o->n_extra_files; i++)
		v = add_unique(v, n, o->extra_files[i]);
	free(dir);
	return v;
}

/* What the finish works on. */
struct finish {
	const rm_nightly_opts *o;
	rm_results run; /* the run's rows */
	rm_metrics metrics;
	rm_direction_table *dirs;
	rm_manifest_file manifest; /* the run.json of this run; its json NULL when none */
	rm_baseline *base;
	rm_baseline *use_base;
	rm_references *refs;
	const rm_references *use_refs;
	rm_threshold *thresholds;
	size_t n_thresholds;
	size_t window;
	rm_gate gate;
	char *run_id, *dir;
	const char *suite;
};

/* An option of the run as run.json keeps it (NULL without run.json). */
static const json_t *manifest_option(const struct finish *f, const char *key)
{
	return json_object_get(f->manifest.m.options, key);
}

/* The run id of the last row that has one (the newest run of an append-only file). */
static int last_run_row(void *ctx, rm_result *row)
{
	char **id = ctx;
	if (row->col[RM_COL_RUN_ID][0] && (!*id || strcmp(*id, row->col[RM_COL_RUN_ID]))) {
		free(*id);
		*id = rm_xstrdup(row->col[RM_COL_RUN_ID]);
	}
	return 0;
}

/* One pass over perf.csv: the run's rows, and (with no other baseline) its history. */
struct collect {
	struct finish *f;
	rm_baseline *h;
};

static int collect_row(void *ctx, rm_result *row)
{
	struct collect *c = ctx;
	if (!strcmp(row->col[RM_COL_RUN_ID], c->f->run_id))
		rm_results_add(&c->f->run, rm_perf_header, row->col, RM_PERF_COLS,
			       c->f->o->perf_csv, row->line);
	if (c->h)
		rm_history_add(c->h, row);
	return 0;
}

/* The baseline source: the caller's, else run.json's (unless its password is hidden). */
static const char *baseline_source(const struct finish *f)
{
	const char *cfg = json_string_value(manifest_option(f, "baseline"));

	if (f->o->baseline)
		return f->o->baseline;
	if (cfg && strstr(cfg, "***")) {
		rm_warn("the baseline in '%s' (%s) has its password hidden: give --baseline to use "
			"it; comparing with the earlier runs in '%s'",
			f->o->manifest, cfg, f->o->perf_csv);
		return NULL;
	}
	return cfg;
}

/* run.json: read, and dropped when it is another run's. */
static int read_manifest(struct finish *f, rm_error *err)
{
	const rm_nightly_opts *o = f->o;

	if (o->manifest && nightly_exists(o->manifest) &&
	    rm_manifest_load(o->manifest, &f->manifest, err) < 0)
		return -1;
	/* A run.json of another run (an older run reported on) says nothing about this one. */
	if (f->manifest.m.run_id && strcmp(f->manifest.m.run_id, f->run_id)) {
		rm_info("'%s' is of run %s, not %s: its suite and gate settings are not used",
			o->manifest, f->manifest.m.run_id, f->run_id);
		rm_manifest_file_release(&f->manifest);
	}
	return 0;
}

/*
 * The run's rows from perf.csv, its history (perf.csv's earlier runs, or the baseline's),
 * the accepted changes, its metrics, its run.json. perf.csv is streamed: once for the run
 * id when it is not given, once for the rows and the history.
 */
static int load(struct finish *f, rm_error *err)
{
	const rm_nightly_opts *o = f->o;
	const json_t *win;
	const char *src;
	struct collect c = {f, NULL};

	if (o->run_id)
		f->run_id = rm_xstrdup(o->run_id);
	else if (rm_results_each(o->perf_csv, NULL, last_run_row, &f->run_id, err) < 0)
		return -1;
	if (!f->run_id)
		return rm_error_set(err, RM_ERR_INPUT, "'%s' has no run_id: nothing to report on",
				    o->perf_csv);
	/* The manifest first: it may name the baseline and the window. */
	if (read_manifest(f, err) < 0)
		return -1;
	win = manifest_option(f, "history_window");
	f->window = o->window		   ? o->window
		    : json_is_integer(win) ? (size_t)json_integer_value(win)
					   : RM_DETECT_WINDOW;
	src = baseline_source(f);
	if (o->baseline_open) {
		f->use_base = o->baseline_open;
	} else if (!src) {
		rm_history_opts ho = RM_HISTORY_OPTS_INIT;
		ho.window = f->window;
		ho.before_run = f->run_id;
		c.h = f->base = rm_history_new(&ho);
	}
	if (rm_results_each(o->perf_csv, NULL, collect_row, &c, err) < 0)
		return -1;
	if (!f->run.n)
		return rm_error_set(err, RM_ERR_INPUT, "'%s' has no rows of run '%s'", o->perf_csv,
				    f->run_id);
	if (!f->use_base && src) {
		rm_baseline_opts bo = RM_BASELINE_OPTS_INIT;
		bo.source = src;
		bo.exclude_run_id = f->run_id;
		bo.before = f->manifest.m.started_at;
		bo.window = f->window;
		if (rm_baseline_open(&bo, &f->base, err) < 0)
			return -1;
	}
	if (!f->use_base)
		f->use_base = f->base;
	/* Changes accepted in perf.csv's companion count whatever the history's source. */
	if (rm_accepted_read(f->use_base, o->perf_csv, err) < 0)
		return -1;
	if (rm_metrics_read_dir(&f->metrics, f->dir, f->run_id, err) < 0)
		return -1;
	if (o->models_root && rm_direction_table_load(f->dirs, o->models_root, err) < 0)
		return -1;
	f->suite = o->suite ? o->suite : f->manifest.m.suite;
	return 0;
}

/* The pinned references: the caller's, a file, or run.json's. */
static int references(struct finish *f, rm_error *err)
{
	const json_t *inline_refs = manifest_option(f, "references");

	if (f->o->references_open) {
		f->use_refs = f->o->references_open;
		return 0;
	}
	f->use_refs = f->refs = rm_references_new();
	if (f->o->references)
		return rm_references_load(f->refs, f->o->references, err);
	if (json_is_object(inline_refs))
		return rm_references_add_json(f->refs, inline_refs, f->o->manifest, err);
	return 0;
}

static void add_threshold(struct finish *f, const char *model, double pct)
{
	f->thresholds = rm_xrealloc(f->thresholds, (f->n_thresholds + 1) * sizeof(*f->thresholds));
	f->thresholds[f->n_thresholds].model = model;
	f->thresholds[f->n_thresholds++].pct = pct;
}

/*
 * The gate's settings: the caller's threshold, else run.json's options.fail_on_regression;
 * on when either is set or any suite entry sets its own. A model takes the threshold of
 * the entry that selected it: its own PCT, none for "off", and none either when the gate
 * is on only through other entries' thresholds.
 */
static void gate_opts(struct finish *f, rm_gate_opts *go)
{
	const json_t *entries = f->manifest.m.suite_entries, *e, *name;
	const json_t *cfg = manifest_option(f, "fail_on_regression");
	size_t i, k;
	int any = 0;

	*go = (rm_gate_opts)RM_GATE_OPTS_INIT;
	go->threshold_pct = f->o->fail_on_regression;
	if (go->threshold_pct < 0 && json_is_number(cfg))
		go->threshold_pct = json_number_value(cfg);
	json_array_foreach (entries, i, e)
		any |= json_is_number(json_object_get(e, "fail_on_regression"));
	go->enforce = go->threshold_pct >= 0 || any;
	json_array_foreach (entries, i, e) {
		const json_t *fr = json_object_get(e, "fail_on_regression");
		double pct = json_is_number(fr) ? json_number_value(fr) : -1;
		/* Set by neither the entry nor "off": the run's threshold, or no gate. */
		if (!json_is_number(fr) && !json_is_string(fr) &&
		    (go->threshold_pct >= 0 || !go->enforce))
			continue;
		json_array_foreach (json_object_get(e, "selected"), k, name)
			if (json_is_string(name))
				add_threshold(f, json_string_value(name), pct);
	}
	go->thresholds = f->thresholds;
	go->n_thresholds = f->n_thresholds;
	go->directions = f->dirs;
	go->window = f->window;
	go->references = f->use_refs;
}

/* The Markdown summary, into its file and $GITHUB_STEP_SUMMARY. */
static int summary(struct finish *f, rm_error *err)
{
	const rm_nightly_opts *o = f->o;
	const char *gh = o->no_step_summary ? NULL : getenv("GITHUB_STEP_SUMMARY");
	rm_buf md = RM_BUF_INIT((size_t)64 << 20);
	int rc;

	if (!o->summary_markdown && !(gh && *gh))
		return 0;
	rc = rm_summary_markdown(&md, f->suite, &f->run, &f->gate);
	if (rc < 0)
		rm_error_set(err, RM_ERR_INTERNAL, "the Markdown summary exceeds 64 MiB");
	if (rc == 0 && o->summary_markdown)
		rc = rm_write_text_file(o->summary_markdown, md.data, md.len, 0, err);
	if (rc == 0 && gh && *gh)
		rc = rm_write_text_file(gh, md.data, md.len, 1, err);
	rm_buf_release(&md);
	return rc;
}

static int export(struct finish *f, const char *url, rm_error *err)
{
	rm_db *db = NULL;
	rm_export_stats st;
	double t0 = rm_now();
	int rc = rm_db_open(url, &db, err);

	if (rc == 0)
		rc = rm_db_export(db, &f->run, &f->metrics, f->manifest.json ? &f->manifest : NULL,
				  f->dirs, &st, err);
	if (rc == 0)
		rm_info("exported run %s to %s: %zu of %zu results new, %zu metrics, %.2f s",
			f->run_id, rm_db_backend(db), st.results, st.results_seen, st.metrics,
			rm_now() - t0);
	rm_db_close(db);
	return rc;
}

/* The HTML report over perf.csv's whole history, streamed once more into plot points. */
static int html(struct finish *f, const rm_gate_opts *go, rm_error *err)
{
	rm_nightly_html_opts ho = RM_NIGHTLY_HTML_OPTS_INIT;

	ho.path = f->o->html;
	ho.files = &f->o->perf_csv;
	ho.n_files = 1;
	ho.title = f->suite;
	ho.threshold_pct = go->threshold_pct;
	ho.window = f->window;
	ho.directions = f->dirs;
	return rm_nightly_html(&ho, NULL, err);
}

/* Every output, in order; the archive last, so that it holds the others. */
static int outputs(struct finish *f, const rm_gate_opts *go, rm_error *err)
{
	const rm_nightly_opts *o = f->o;

	if (o->junit) {
		rm_junit_opts jo = RM_JUNIT_OPTS_INIT;
		jo.suite = f->suite;
		jo.base_dir = f->dir;
		jo.log_lines = 50;
		jo.gate = &f->gate;
		jo.metrics = &f->metrics;
		if (rm_junit_write(o->junit, &f->run, &jo, err) < 0)
			return -1;
	}
	if (summary(f, err) < 0)
		return -1;
	if (o->html && html(f, go, err) < 0)
		return -1;
	for (size_t i = 0; i < o->n_export_dbs; i++)
		if (export(f, o->export_dbs[i], err) < 0)
			return -1;
	if (o->archive) {
		size_t n = 0;
		char *top = rm_xasprintf("run_models-%s", f->run_id);
		char **files = archive_list(o, &f->run, &n);
		/* Masked again here: the archive is what CI uploads, whoever wrote its files. */
		size_t n_secrets = 0;
		char **secrets = rm_secrets_from_env(environ, &n_secrets);
		rm_mask mask;
		rm_mask_init(&mask, (const char *const *)secrets, n_secrets);
		int rc =
		    rm_archive_write(o->archive, top, (const char *const *)files, n, &mask, err);
		rm_mask_release(&mask);
		rm_strv_free(secrets);
		rm_strv_free(files);
		free(top);
		if (rc < 0)
			return -1;
	}
	return 0;
}

int rm_nightly_finish(const rm_nightly_opts *o, rm_nightly_result *res, rm_error *err)
{
	struct finish f;
	rm_gate_opts go;
	int ret = -1;

	memset(&f, 0, sizeof(f));
	memset(res, 0, sizeof(*res));
	if (o->window == 1 || o->window > RM_DETECT_MAX_WINDOW)
		return rm_error_set(err, RM_ERR_USAGE,
				    "--history-window takes 2 to %d runs, not %zu",
				    RM_DETECT_MAX_WINDOW, o->window);
	f.o = o;
	f.run = (rm_results)RM_RESULTS_INIT;
	f.metrics = (rm_metrics)RM_METRICS_INIT;
	f.dirs = rm_direction_table_new();
	f.dir = rm_dirname(o->perf_csv);
	/* The baseline before the export: this run must not become its own. */
	if (load(&f, err) < 0 || references(&f, err) < 0)
		goto out;
	gate_opts(&f, &go);
	rm_gate_eval(&f.run, f.use_base, &go, &f.gate);
	res->n_rows = f.run.n;
	res->n_failed = f.gate.n_failed;
	res->n_skipped = f.gate.n_skipped;
	res->n_compared = f.gate.n_compared;
	res->n_regressions = f.gate.n_regressions;
	res->n_better = f.gate.n_better;
	res->n_unstable = f.gate.n_unstable;
	res->gate_enforced = f.gate.enforce;
	ret = outputs(&f, &go, err);
out:
	rm_manifest_file_release(&f.manifest);
	rm_gate_release(&f.gate);
	rm_baseline_free(f.base);
	rm_references_free(f.refs);
	free(f.thresholds);
	rm_direction_table_free(f.dirs);
	rm_metrics_release(&f.metrics);
	rm_results_release(&f.run);
	free(f.run_id);
	free(f.dir);
	return ret;
}
