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
#include "rm/results.h"
#include "rm/util.h"

/* Reading back */

struct read_ctx {
	rm_results *out;
	const char *url;
	long n;
};

/* The results come back as perf.csv rows: rm_perf_header's columns, in its order. */
static int read_row(void *ctx, const char *const *cols, size_t n)
{
	struct read_ctx *rc = ctx;
	if (n == RM_PERF_COLS)
		rm_results_add(rc->out, rm_perf_header, cols, n, rc->url, ++rc->n);
	return 0;
}

int rm_db_read_results(rm_db *db, const char *run_id, rm_results *out, rm_error *err)
{
	rm_buf sql = RM_BUF_INIT((size_t)1 << 20);
	struct read_ctx rc = {out, db->url, 0};
	const char *params[1] = {run_id};
	int ret;

	rm_buf_addstr(&sql, "SELECT ");
	for (size_t i = 0; i < RM_PERF_COLS; i++) {
		if (i)
			rm_buf_addstr(&sql, ", ");
		if (!strcmp(rm_perf_header[i], "timestamp")) {
			rm_buf_addf(&sql, db->be->ts_text, "r.ts");
		} else if (!strcmp(rm_perf_header[i], "performance") ||
			   !strcmp(rm_perf_header[i], "relative_change") ||
			   !strcmp(rm_perf_header[i], "build_duration") ||
			   !strcmp(rm_perf_header[i], "test_duration") ||
			   !strcmp(rm_perf_header[i], "exit_code") ||
			   !strcmp(rm_perf_header[i], "repeat")) {
			rm_buf_addf(&sql, "CAST(r.%s AS TEXT)", rm_perf_header[i]);
		} else {
			rm_buf_addf(&sql, "r.%s", rm_perf_header[i]);
		}
	}
	rm_buf_addstr(&sql, " FROM results r JOIN runs u ON u.run_id = r.run_id");
	if (run_id)
		rm_buf_addstr(&sql, " WHERE r.run_id = $1");
	rm_buf_addstr(&sql, " ORDER BY u.started_at, r.run_id, r.id");
	ret = db->be->query(db->h, rm_buf_str(&sql), params, run_id ? 1 : 0, read_row, &rc, err);
	rm_buf_release(&sql);
	return ret < 0 ? rm_error_wrap(err, "reading '%s'", db->url) : 0;
}

static int baseline_row(void *ctx, const char *const *c, size_t n)
{
	double v;
	if (n == 7 && c[6] && rm_parse_double(c[6], &v) == 0)
		rm_baseline_add(ctx, c[0], c[1], c[2], c[3], c[4], c[5], v);
	return 0;
}

int rm_db_baseline(rm_db *db, const char *exclude_run_id, const char *before, struct rm_baseline *b,
		   rm_error *err)
{
	/* For each (model, metric, Dockerfile, arch, machine): the SUCCESS rows of its latest
	 * run before `before`, oldest run first so that rm_baseline's "latest" is the last. */
	static const char *const sql =
	    "SELECT model, metric, docker_file, gpu_architecture, machine_name, run_id,"
	    " CAST(performance AS TEXT) FROM ("
	    " SELECT r.model, r.metric, r.docker_file, r.gpu_architecture, r.machine_name,"
	    " r.run_id, r.performance, r.id, u.started_at,"
	    " DENSE_RANK() OVER (PARTITION BY r.model, r.metric, r.docker_file,"
	    " r.gpu_architecture, r.machine_name ORDER BY u.started_at DESC, r.run_id DESC) AS k"
	    " FROM results r JOIN runs u ON u.run_id = r.run_id"
	    " WHERE r.status = 'SUCCESS' AND r.performance IS NOT NULL AND r.run_id <> $1"
	    " AND u.started_at < $2) t"
	    " WHERE k = 1 ORDER BY started_at, run_id, id";
	const char *params[2] = {exclude_run_id ? exclude_run_id : "",
				 before ? before : "9999-12-31T23:59:59Z"};
	if (db->be->query(db->h, sql, params, 2, baseline_row, b, err) < 0)
		return rm_error_wrap(err, "reading the history in '%s'", db->url);
	return 0;
}

int rm_baseline_open(const rm_baseline_opts *o, rm_baseline **out, rm_error *err)
{
	*out = NULL;
	if (rm_db_is_url(o->source)) {
		rm_db *db = NULL;
		rm_baseline *b;
		if (rm_db_open(o->source, &db, err) < 0)
			return rm_error_wrap(err, "baseline");
		b = rm_baseline_new();
		if (rm_db_baseline(db, o->exclude_run_id, o->before, b, err) < 0) {
			rm_baseline_free(b);
			rm_db_close(db);
			return rm_error_wrap(err, "baseline");
		}
		rm_db_close(db);
		rm_baseline_seal(b);
		*out = b;
		return 0;
	}
	rm_results rows = RM_RESULTS_INIT;
	if (rm_results_read(&rows, o->source, NULL, err) < 0) {
		rm_results_release(&rows);
		return rm_error_wrap(err, "baseline");
	}
	*out = rm_baseline_from_results(&rows, o->exclude_run_id);
	rm_results_release(&rows);
	return 0;
}
