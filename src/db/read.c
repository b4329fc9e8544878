/*
 * Reading back: results for reports, and baselines (from the database or a perf.csv).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "rm/db.h"
#include "rm/report.h"
#include "rm/accepted.h"
#include "rm/detect.h"
#include "rm/history.h"
#include "rm/results.h"
#include "rm/provenance.h"
#include "rm/util.h"

/* Reading back */

/* The order of runs: start time, then export order. Runs started within one second (a
 * start has whole seconds) are ordered by their first row's id, which follows perf.csv's
 * order within an export and the order of exports across them. */
#define RUN_SEQ "MIN(r.id) OVER (PARTITION BY r.run_id)"

struct each_ctx {
	rm_result_fn fn;
	void *ctx;
	const char *url;
	long n;
	int stop;
};

/* The results come back as perf.csv rows: rm_perf_header's columns, in its order. */
static int each_row(void *ctx, const char *const *cols, size_t n)
{
	struct each_ctx *e = ctx;
	rm_result r;

	char *config = NULL, *key = NULL;

	if (n != RM_PERF_COLS)
		return 0;
	memset(&r, 0, sizeof(r));
	for (int c = 0; c < RM_PERF_COLS; c++)
		r.col[c] = cols[c] ? cols[c] : "";
	/* rows exported before configurations: their MAD cell, as a perf.csv's */
	if (rm_result_config(&r, NULL, NULL, 0, &config, &key) > 0) {
		r.col[RM_COL_CONFIG] = config;
		r.col[RM_COL_CONFIG_KEY] = key;
	}
	r.file = e->url;
	r.line = ++e->n;
	rm_result_numbers(&r);
	e->stop = e->fn(e->ctx, &r);
	free(config);
	free(key);
	return e->stop;
}

int rm_db_each_result(rm_db *db, const char *run_id, rm_result_fn fn, void *ctx, rm_error *err)
{
	rm_buf sql = RM_BUF_INIT((size_t)1 << 20);
	struct each_ctx ec = {fn, ctx, db->url, 0, 0};
	const char *params[1] = {run_id};
	int ret;

	rm_buf_addstr(&sql, "SELECT ");
	for (size_t i = 0; i < RM_PERF_COLS; i++) {
		const rm_perf_column *c = &rm_perf_columns[i];

		if (i)
			rm_buf_addstr(&sql, ", ");
		if (c->kind == RM_PCOL_TS)
			rm_buf_addf(&sql, db->be->ts_text, c->db);
		else if (c->kind != RM_PCOL_TEXT)
			rm_buf_addf(&sql, "CAST(%s AS TEXT)", c->db);
		else
			rm_buf_addf(&sql, "%s", c->db);
	}
	rm_buf_addstr(&sql, " FROM (SELECT r.*, u.started_at, " RUN_SEQ " AS seq"
			    " FROM results r JOIN runs u ON u.run_id = r.run_id");
	if (run_id)
		rm_buf_addstr(&sql, " WHERE r.run_id = $1");
	rm_buf_addstr(&sql, ") t ORDER BY started_at, seq, id");
	ret = db->be->query(db->h, rm_buf_str(&sql), params, run_id ? 1 : 0, each_row, &ec, err);
	rm_buf_release(&sql);
	return ret < 0 ? rm_error_wrap(err, "reading '%s'", db->url) : 0;
}

static int keep_result(void *ctx, rm_result *row)
{
	rm_results_add(ctx, rm_perf_header, row->col, RM_PERF_COLS, row->file, row->line);
	return 0;
}

int rm_db_read_results(rm_db *db, const char *run_id, rm_results *out, rm_error *err)
{
	return rm_db_each_result(db, run_id, keep_result, out, err);
}

static int start_row(void *ctx, const char *const *c, size_t n)
{
	char **start = ctx;
	if (n == 1 && c[0] && !*start)
		*start = rm_xstrdup(c[0]);
	return 0;
}

static int provenance_row(void *ctx, const char *const *c, size_t n)
{
	if (n == 5 && c[0] && c[1] && c[2])
		rm_provenance_put(ctx, c[3] ? c[3] : "", c[4] ? c[4] : "", c[0], c[1], c[2]);
	return 0;
}

int rm_db_provenance(rm_db *db, const char *run_id, json_t **out, rm_error *err)
{
	const char *params[1] = {run_id};

	*out = json_object();
	if (db->be->query(db->h,
			  "SELECT grp, name, value, model, docker_file FROM provenance"
			  " WHERE run_id = $1 ORDER BY model, docker_file, grp, name",
			  params, 1, provenance_row, *out, err) < 0)
		return rm_error_wrap(err, "reading '%s'", db->url);
	return 0;
}

int rm_db_run_start(rm_db *db, const char *run_id, char **start, rm_error *err)
{
	rm_buf sql = RM_BUF_INIT((size_t)1 << 16);
	const char *params[1] = {run_id};
	int rc;

	*start = NULL;
	rm_buf_addstr(&sql, "SELECT ");
	rm_buf_addf(&sql, db->be->ts_text, "started_at");
	rm_buf_addstr(&sql, " FROM runs WHERE run_id = $1");
	rc = db->be->query(db->h, rm_buf_str(&sql), params, 1, start_row, start, err);
	rm_buf_release(&sql);
	return rc < 0 ? rm_error_wrap(err, "reading '%s'", db->url) : 0;
}

/* A history row: model, metric, docker_file, arch, n_gpus, machine, run_id, start, commit,
 * performance, config, config_key. */
static int history_row(void *ctx, const char *const *c, size_t n)
{
	rm_result r;
	double v;
	char *config = NULL, *key = NULL;

	if (n != 12 || !c[9] || rm_parse_double(c[9], &v) < 0)
		return 0;
	memset(&r, 0, sizeof(r));
	for (int k = 0; k < RM_PERF_COLS; k++)
		r.col[k] = "";
	r.col[RM_COL_MODEL] = c[0] ? c[0] : "";
	r.col[RM_COL_METRIC] = c[1] ? c[1] : "";
	r.col[RM_COL_DOCKERFILE] = c[2] ? c[2] : "";
	r.col[RM_COL_ARCH] = c[3] ? c[3] : "";
	r.col[RM_COL_NGPUS] = c[4] ? c[4] : "";
	r.col[RM_COL_MACHINE] = c[5] ? c[5] : "";
	r.col[RM_COL_RUN_ID] = c[6] ? c[6] : "";
	r.col[RM_COL_TIMESTAMP] = c[7] ? c[7] : "";
	r.col[RM_COL_GIT_COMMIT] = c[8] ? c[8] : "";
	r.col[RM_COL_STATUS] = rm_status_name(RM_STATUS_SUCCESS);
	r.col[RM_COL_PERFORMANCE] = c[9];
	r.col[RM_COL_CONFIG] = c[10] ? c[10] : "";
	r.col[RM_COL_CONFIG_KEY] = c[11] ? c[11] : "";
	if (rm_result_config(&r, NULL, NULL, 0, &config, &key) > 0) {
		r.col[RM_COL_CONFIG] = config;
		r.col[RM_COL_CONFIG_KEY] = key;
	}
	r.performance = v;
	rm_history_add(ctx, &r);
	free(config);
	free(key);
	return 0;
}

int rm_db_baseline(rm_db *db, const char *exclude_run_id, const char *before, size_t runs,
		   struct rm_baseline *b, rm_error *err)
{
	/* For each series: the SUCCESS rows of its last `runs` runs before `before`, oldest
	 * first. */
	rm_buf sql = RM_BUF_INIT((size_t)1 << 16);
	char nruns[32];
	const char *params[3] = {exclude_run_id ? exclude_run_id : "",
				 before ? before : "9999-12-31T23:59:59Z", nruns};
	int rc;

	snprintf(nruns, sizeof(nruns), "%zu", runs ? runs : 1);
	rm_buf_addstr(&sql, "SELECT model, metric, docker_file, gpu_architecture, n_gpus,"
			    " machine_name, run_id, ");
	rm_buf_addf(&sql, db->be->ts_text, "started_at");
	rm_buf_addstr(
	    &sql, ", git_commit, CAST(performance AS TEXT), config, config_key FROM ("
		  " SELECT a.*, DENSE_RANK() OVER (PARTITION BY a.model, a.metric, a.docker_file,"
		  " a.gpu_architecture, a.n_gpus, a.machine_name, a.config_key"
		  " ORDER BY a.started_at DESC, a.seq DESC) AS k FROM ("
		  " SELECT r.id, r.model, r.metric, r.docker_file, r.gpu_architecture,"
		  " COALESCE(r.n_gpus, '') AS n_gpus, r.machine_name, r.run_id, r.performance,"
		  " r.config, r.config_key,"
		  " COALESCE(r.git_commit, '') AS git_commit, u.started_at, " RUN_SEQ " AS seq"
		  " FROM results r JOIN runs u ON u.run_id = r.run_id"
		  " WHERE r.status = 'SUCCESS' AND r.performance IS NOT NULL AND r.run_id <> $1"
		  " AND u.started_at < $2) a) t"
		  " WHERE k <= CAST($3 AS INTEGER) ORDER BY started_at, seq, id");
	rc = db->be->query(db->h, rm_buf_str(&sql), params, 3, history_row, b, err);
	rm_buf_release(&sql);
	if (rc < 0)
		return rm_error_wrap(err, "reading the history in '%s'", db->url);
	return 0;
}

static int accepted_row(void *ctx, const char *const *c, size_t n)
{
	if (n == 9)
		rm_history_accept(ctx, c[0], c[1], c[2], c[3], c[4], c[5], c[8] ? c[8] : "", c[6],
				  c[7] ? c[7] : "");
	return 0;
}

int rm_db_accepted(rm_db *db, struct rm_baseline *b, rm_error *err)
{
	rm_buf sql = RM_BUF_INIT((size_t)1 << 16);
	int rc;

	rm_buf_addstr(&sql, "SELECT model, metric, docker_file, gpu_architecture, n_gpus,"
			    " machine_name, since_run, ");
	rm_buf_addf(&sql, db->be->ts_text, "since_at");
	rm_buf_addstr(&sql, ", config_key FROM accepted ORDER BY id");
	rc = db->be->query(db->h, rm_buf_str(&sql), NULL, 0, accepted_row, b, err);
	rm_buf_release(&sql);
	return rc < 0 ? rm_error_wrap(err, "reading the accepted changes in '%s'", db->url) : 0;
}

int rm_db_accept(rm_db *db, const rm_acceptance *a, size_t n, rm_error *err)
{
	static const char *const sql =
	    "INSERT INTO accepted (model, metric, docker_file, gpu_architecture, n_gpus,"
	    " machine_name, since_run, since_at, accepted_at, reason, config_key)"
	    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)";
	db_stmt *st = NULL;

	if (db->be->begin(db->h, err) < 0)
		return rm_error_wrap(err, "'%s'", db->url);
	if (db->be->prepare(db->h, sql, 11, &st, err) < 0)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		const char *v[11] = {a[i].model,
				     a[i].metric ? a[i].metric : "",
				     a[i].docker_file ? a[i].docker_file : "",
				     a[i].arch ? a[i].arch : "",
				     a[i].n_gpus ? a[i].n_gpus : "",
				     a[i].machine ? a[i].machine : "",
				     a[i].since_run,
				     a[i].since_start && a[i].since_start[0] ? a[i].since_start
									     : NULL,
				     a[i].accepted_at,
				     a[i].reason ? a[i].reason : "",
				     a[i].config_key ? a[i].config_key : ""};
		if (db->be->run(st, v, NULL, err) < 0)
			goto fail;
	}
	db->be->finalize(st);
	st = NULL;
	if (db->be->commit(db->h, err) == 0)
		return 0;
fail:
	if (st)
		db->be->finalize(st);
	db->be->rollback(db->h);
	return rm_error_wrap(err, "recording in '%s'", db->url);
}

int rm_baseline_open(const rm_baseline_opts *o, rm_baseline **out, rm_error *err)
{
	size_t window = o->window ? o->window : RM_DETECT_WINDOW;
	rm_history_opts ho = RM_HISTORY_OPTS_INIT;
	rm_baseline *b;

	ho.window = window;
	ho.before_run = o->exclude_run_id;
	b = rm_history_new(&ho);
	*out = NULL;
	if (rm_db_is_url(o->source)) {
		rm_db *db = NULL;
		int rc = rm_db_open(o->source, &db, err);
		if (rc == 0)
			rc = rm_db_baseline(db, o->exclude_run_id, o->before,
					    RM_DETECT_KEEP(window), b, err);
		if (rc == 0)
			rc = rm_db_accepted(db, b, err);
		rm_db_close(db);
		if (rc < 0) {
			rm_baseline_free(b);
			return rm_error_wrap(err, "baseline");
		}
	} else if (rm_history_read_csv(b, o->source, err) < 0 ||
		   rm_accepted_read(b, o->source, err) < 0) {
		rm_baseline_free(b);
		return rm_error_wrap(err, "baseline");
	}
	rm_baseline_seal(b);
	*out = b;
	return 0;
}
