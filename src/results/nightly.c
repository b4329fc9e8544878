/* The end of a run: every CI output from the run's perf.csv, in one call. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rm/ci.h"
#include "rm/db.h"
#include "rm/html.h"
#include "rm/log.h"
#include "rm/util.h"

static int exists(const char *p)
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

/* The run's files for the archive: perf.csv, the perf_<model>.csv of its models,
 * perf_summary.csv, every log named in its rows (and the build logs beside them), and the
 * outputs. */
static char **archive_list(const rm_nightly_opts *o, const rm_results *run, size_t *n)
{
	char **v = NULL, *dir = rm_dirname(o->perf_csv);
	const char *outs[] = {o->manifest, o->junit, o->summary_markdown, o->html};

	*n = 0;
	v = add_unique(v, n, o->perf_csv);
	for (size_t i = 0; i < run->n; i++) {
		const rm_result *r = &run->rows[i];
		const char *log = r->col[RM_COL_LOG_FILE];
		char *p, *safe = rm_xstrdup(r->col[RM_COL_MODEL]), *moved = NULL;
		/* A relative log path is as the runner saw it; from elsewhere, try beside
		 * perf.csv (as JUnit does). */
		if (log[0] && log[0] != '/' && !exists(log))
			log = moved = rm_xasprintf("%s/%s", dir, log);
		for (char *s = safe; *s; s++)
			if (*s == '/' || *s == ' ')
				*s = '_';
		p = rm_xasprintf("%s/perf_%s.csv", dir, safe);
		if (exists(p))
			v = add_unique(v, n, p);
		free(p);
		free(safe);
		if (exists(log)) {
			v = add_unique(v, n, log);
			/* <model>.live.log -> <model>.build.log */
			if (rm_ends_with(log, ".live.log")) {
				char *b =
				    rm_xasprintf("%.*s.build.log", (int)(strlen(log) - 9), log);
				if (exists(b))
					v = add_unique(v, n, b);
				free(b);
			}
		}
		free(moved);
	}
	char *summary = rm_xasprintf("%s/perf_summary.csv", dir);
	if (exists(summary))
		v = add_unique(v, n, summary);
	free(summary);
	for (size_t i = 0; i < sizeof(outs) / sizeof(outs[0]); i++)
		if (exists(outs[i]))
			v = add_unique(v, n, outs[i]);
	for (size_t i = 0; i < o->n_extra_files; i++)
		v = add_unique(v, n, o->extra_files[i]);
	free(dir);
	return v;
}

int rm_nightly_finish(const rm_nightly_opts *o, rm_nightly_result *res, rm_error *err)
{
	rm_results run = RM_RESULTS_INIT, history = RM_RESULTS_INIT;
	rm_metrics metrics = RM_METRICS_INIT;
	rm_direction_table *dirs = rm_direction_table_new();
	rm_baseline *base = NULL;
	rm_gate gate = {0};
	json_t *manifest = NULL;
	char *run_id = NULL, *dir = rm_dirname(o->perf_csv), **files = NULL;
	size_t n_files = 0;
	int ret = -1;

	memset(res, 0, sizeof(*res));
	if (rm_results_read(&history, o->perf_csv, NULL, err) < 0)
		goto out;
	run_id = rm_xstrdup(o->run_id ? o->run_id : rm_results_last_run(&history));
	if (!run_id) {
		rm_error_set(err, RM_ERR_INPUT, "'%s' has no run_id: nothing to report on",
			     o->perf_csv);
		goto out;
	}
	for (size_t i = 0; i < history.n; i++)
		if (!strcmp(history.rows[i].col[RM_COL_RUN_ID], run_id))
			rm_results_add(&run, rm_perf_header, history.rows[i].col, RM_PERF_NCOLS,
				       history.rows[i].file, history.rows[i].line);
	if (!run.n) {
		rm_error_set(err, RM_ERR_INPUT, "'%s' has no rows of run '%s'", o->perf_csv,
			     run_id);
		goto out;
	}
	if (rm_metrics_read_dir(&metrics, dir, run_id, err) < 0)
		goto out;
	if (o->models_root && rm_direction_table_load(dirs, o->models_root, err) < 0)
		goto out;
	if (o->manifest && exists(o->manifest) && !(manifest = rm_manifest_read(o->manifest, err)))
		goto out;

	/* Baseline before export: this run must not become its own. */
	if (o->baseline) {
		rm_baseline_opts bo = {o->baseline, run_id,
				       json_string_value(json_object_get(manifest, "started_at"))};
		if (rm_baseline_open(&bo, &base, err) < 0)
			goto out;
	} else {
		base = rm_baseline_from_results(&history, run_id);
	}
	rm_gate_opts go = {o->fail_on_regression, o->fail_on_regression >= 0, o->thresholds,
			   o->n_thresholds, dirs};
	rm_gate_eval(&run, base, &go, &gate);
	res->n_rows = run.n;
	res->n_failed = gate.n_failed;
	res->n_skipped = gate.n_skipped;
	res->n_compared = gate.n_compared;
	res->n_regressions = gate.n_regressions;
	res->gate_enforced = gate.enforce;

	if (o->junit) {
		rm_junit_opts jo = {o->suite, NULL, dir, 50, &gate, &metrics};
		if (rm_junit_write(o->junit, &run, &jo, err) < 0)
			goto out;
	}
	if (o->summary_markdown || (!o->no_step_summary && getenv("GITHUB_STEP_SUMMARY") &&
				    *getenv("GITHUB_STEP_SUMMARY"))) {
		rm_buf md = RM_BUF_INIT((size_t)64 << 20);
		const char *gh = o->no_step_summary ? NULL : getenv("GITHUB_STEP_SUMMARY");
		int rc = rm_summary_markdown(&md, o->suite, &run, &gate);
		if (rc < 0)
			rm_error_set(err, RM_ERR_INTERNAL, "the Markdown summary exceeds 64 MiB");
		if (rc == 0 && o->summary_markdown)
			rc = rm_write_text_file(o->summary_markdown, md.data, md.len, 0, err);
		if (rc == 0 && gh && *gh)
			rc = rm_write_text_file(gh, md.data, md.len, 1, err);
		rm_buf_release(&md);
		if (rc < 0)
			goto out;
	}
	if (o->html) {
		rm_html_opts ho = {o->suite, o->perf_csv, go.threshold_pct, dirs};
		if (rm_html_report(o->html, &history, &ho, err) < 0)
			goto out;
	}
	if (o->export_db) {
		rm_db *db = NULL;
		rm_export_stats st;
		int rc = rm_db_open(o->export_db, &db, err);
		if (rc == 0)
			rc = rm_db_export(db, &run, &metrics, manifest, dirs, &st, err);
		rm_db_close(db);
		if (rc < 0)
			goto out;
		rm_info("exported run %s: %zu of %zu results new, %zu metrics", run_id, st.results,
			st.results_seen, st.metrics);
	}
	if (o->archive) {
		char *top = rm_xasprintf("run_models-%s", run_id);
		files = archive_list(o, &run, &n_files);
		int rc =
		    rm_archive_write(o->archive, top, (const char *const *)files, n_files, err);
		free(top);
		if (rc < 0)
			goto out;
	}
	ret = 0;
out:
	rm_strv_free(files);
	json_decref(manifest);
	rm_gate_release(&gate);
	rm_baseline_free(base);
	rm_direction_table_free(dirs);
	rm_metrics_release(&metrics);
	rm_results_release(&run);
	rm_results_release(&history);
	free(run_id);
	free(dir);
	return ret;
}
