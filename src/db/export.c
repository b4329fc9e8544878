/*
 * Export: perf.csv rows, perf_<model>.csv metrics and run.json into the tables, batched, in
 * one transaction.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "rm/db.h"
#include "rm/config.h"
#include "rm/direction.h"
#include "rm/doctor.h"
#include "rm/manifest.h"
#include "rm/metrics.h"
#include "rm/results.h"
#include "rm/provenance.h"
#include "rm/util.h"

/* Export */

/* Batched multi-row INSERT ... VALUES (...), (...) ON CONFLICT DO NOTHING: one round trip
 * per batch for PostgreSQL, one statement step for SQLite. */
struct inserter {
	rm_db *db;
	const char *table;
	const char *const *cols;
	size_t ncols, batch, pending;
	db_stmt *full;
	const char **params; /* batch * ncols */
	char **owned;	     /* strings made for this batch (numbers), freed per flush */
	size_t n_owned;
	size_t added;
};

static char *insert_sql(const char *table, const char *const *cols, size_t ncols, size_t rows)
{
	rm_buf b = RM_BUF_INIT((size_t)16 << 20);
	size_t k = 0;
	rm_buf_addf(&b, "INSERT INTO %s (", table);
	for (size_t c = 0; c < ncols; c++)
		rm_buf_addf(&b, "%s%s", c ? ", " : "", cols[c]);
	rm_buf_addstr(&b, ") VALUES ");
	for (size_t r = 0; r < rows; r++) {
		rm_buf_addstr(&b, r ? ", (" : "(");
		for (size_t c = 0; c < ncols; c++)
			rm_buf_addf(&b, "%s$%zu", c ? ", " : "", ++k);
		rm_buf_addch(&b, ')');
	}
	rm_buf_addstr(&b, " ON CONFLICT DO NOTHING");
	return rm_buf_detach(&b);
}

static void ins_init(struct inserter *in, rm_db *db, const char *table, const char *const *cols,
		     size_t ncols)
{
	memset(in, 0, sizeof(*in));
	in->db = db;
	in->table = table;
	in->cols = cols;
	in->ncols = ncols;
	/* Under SQLite's 32766 and PostgreSQL's 65535 parameters per statement. */
	in->batch = 8000 / ncols;
	in->params = rm_xcalloc(in->batch * ncols, sizeof(*in->params));
}

static void drop_owned(struct inserter *in)
{
	for (size_t i = 0; i < in->n_owned; i++)
		free(in->owned[i]);
	free(in->owned);
	in->owned = NULL;
	in->n_owned = 0;
}

static int ins_flush(struct inserter *in, rm_error *err)
{
	const db_backend *be = in->db->be;
	db_stmt *st = NULL;
	size_t changed = 0;
	int rc;

	if (!in->pending)
		return 0;
	if (in->pending == in->batch && in->full) {
		st = in->full;
	} else {
		char *sql = insert_sql(in->table, in->cols, in->ncols, in->pending);
		rc = be->prepare(in->db->h, sql, (int)(in->pending * in->ncols), &st, err);
		free(sql);
		if (rc < 0)
			return -1;
		if (in->pending == in->batch)
			in->full = st;
	}
	rc = be->run(st, in->params, &changed, err);
	if (st != in->full)
		be->finalize(st);
	drop_owned(in);
	in->pending = 0;
	if (rc < 0)
		return rm_error_wrap(err, "table %s", in->table);
	in->added += changed;
	return 0;
}

/* Adds one row of ncols values (NULL = SQL NULL; copied only when owned). */
static int ins_row(struct inserter *in, const char *const *vals, rm_error *err)
{
	memcpy(in->params + in->pending * in->ncols, vals, in->ncols * sizeof(*vals));
	in->pending++;
	return in->pending == in->batch ? ins_flush(in, err) : 0;
}

/* A string that must live until the batch is sent. */
static const char *keep(struct inserter *in, char *s)
{
	in->owned = rm_xrealloc(in->owned, (in->n_owned + 1) * sizeof(*in->owned));
	in->owned[in->n_owned++] = s;
	return s;
}

static void ins_release(struct inserter *in)
{
	if (in->full)
		in->db->be->finalize(in->full);
	drop_owned(in);
	free(in->params);
	memset(in, 0, sizeof(*in));
}

/* A number column: NULL unless the text is a finite number, normalised for both backends. */
static const char *num(struct inserter *in, const char *s)
{
	double v;
	if (!s || !*s || rm_parse_double(s, &v) < 0)
		return NULL;
	return keep(in, rm_xasprintf("%.17g", v));
}

static const char *intnum(struct inserter *in, const char *s)
{
	long v;
	if (!s || !*s || rm_parse_long(s, -2147483647L, 2147483647L, &v) < 0)
		return NULL;
	return keep(in, rm_xasprintf("%ld", v));
}

/* The results table's columns: every perf.csv column (RM_PERF_COLUMNS), then direction. */
static const char *const result_cols[] = {
#define RM_PERF_DB(name, csv, db, kind, decl, since) db,
    RM_PERF_COLUMNS(RM_PERF_DB)
#undef RM_PERF_DB
	"direction"};
#define N_RESULT_COLS (sizeof(result_cols) / sizeof(result_cols[0]))

static const char *const metric_cols[] = {"run_id", "ts",     "model", "metric", "aggregate",
					  "step",   "repeat", "value", "unit"};
static const char *const run_cols[] = {"run_id",	   "started_at", "machine_name",
				       "gpu_architecture", "git_commit", "suite",
				       "build_number",	   "exported_at"};
static const char *const env_cols[] = {"run_id", "name", "value"};
static const char *const prov_cols[] = {"run_id", "grp", "name", "value", "model", "docker_file"};
static const char *const param_cols[] = {"config_key", "name", "value"};

/* Environment rows from run.json: flat fields, then the doctor's findings. */
static int export_environment(struct inserter *in, const rm_manifest_file *mf, const char *run_id,
			      rm_error *err)
{
	const char *key;
	json_t *v;

	json_object_foreach (mf->json, key, v) {
		const char *row[3] = {run_id, key, NULL};
		if (json_is_string(v))
			row[2] = json_string_value(v);
		else if (json_is_number(v) || json_is_boolean(v))
			row[2] = keep(in, json_dumps(v, JSON_ENCODE_ANY));
		else
			continue;
		if (ins_row(in, row, err) < 0)
			return -1;
	}
	for (size_t i = 0; i < mf->m.n_findings; i++) {
		const rm_finding *f = &mf->m.findings[i];
		const char *status = rm_choice_name(rm_finding_words, f->status);
		const char *row[3] = {run_id, NULL, NULL};
		row[1] = keep(in, rm_xasprintf("doctor.%s", f->check));
		row[2] = keep(
		    in, rm_xasprintf("%s %s", status ? status : "", f->detail ? f->detail : ""));
		if (ins_row(in, row, err) < 0)
			return -1;
	}
	return 0;
}

/* One export: its input, the run ids it holds, its counts. */
struct export
{
	rm_db *db;
	const rm_results *rows;
	const rm_metrics *metrics;
	const rm_manifest_file *manifest; /* or NULL */
	const struct rm_direction_table *dirs;
	char now[32];
	char **runs;
	size_t n_runs;
	rm_export_stats *st;
};

static int has_run(const struct export *x, const char *id)
{
	for (size_t k = 0; k < x->n_runs; k++)
		if (!strcmp(x->runs[k], id))
			return 1;
	return 0;
}

/* Sends the last batch; *added receives the rows the table gained. -1: in is released. */
static int ins_done(struct inserter *in, size_t *added, rm_error *err)
{
	int rc = ins_flush(in, err);
	if (rc == 0)
		*added = in->added;
	ins_release(in);
	return rc;
}

/* runs: one per run id, in order of appearance; start = run.json's, else the earliest row
 * timestamp. */
static int export_runs(struct export *x, rm_error *err)
{
	const rm_results *rows = x->rows;
	const char *mrun = x->manifest ? x->manifest->m.run_id : NULL;
	struct inserter in = {0};

	ins_init(&in, x->db, "runs", run_cols, 8);
	for (size_t i = 0; i < rows->n; i++) {
		const rm_result *r = &rows->rows[i];
		const char *id = r->col[RM_COL_RUN_ID], *start = NULL, *suite = "";
		if (has_run(x, id))
			continue;
		x->runs = rm_strv_push(x->runs, &x->n_runs, id);
		for (size_t j = i; j < rows->n; j++) {
			const char *ts = rows->rows[j].col[RM_COL_TIMESTAMP];
			if (!strcmp(rows->rows[j].col[RM_COL_RUN_ID], id) && ts[0] &&
			    (!start || strcmp(ts, start) < 0))
				start = ts;
		}
		if (mrun && !strcmp(mrun, id)) {
			if (x->manifest->m.started_at)
				start = x->manifest->m.started_at;
			if (x->manifest->m.suite)
				suite = x->manifest->m.suite;
		}
		const char *row[8] = {id,
				      start ? start : x->now,
				      r->col[RM_COL_MACHINE],
				      r->col[RM_COL_ARCH],
				      r->col[RM_COL_GIT_COMMIT],
				      suite,
				      r->col[RM_COL_BUILD_NUMBER],
				      x->now};
		if (ins_row(&in, row, err) < 0) {
			ins_release(&in);
			return -1;
		}
	}
	return ins_done(&in, &x->st->runs, err);
}

/* One results row: every perf.csv column, numbers as numbers, the metric's direction. */
static int result_row(struct export *x, struct inserter *in, const rm_result *r, rm_error *err)
{
	const char *const *c = r->col;
	const char *row[N_RESULT_COLS];

	for (size_t i = 0; i < RM_PERF_COLS; i++) {
		switch (rm_perf_columns[i].kind) {
		case RM_PCOL_TEXT:
			row[i] = c[i];
			break;
		case RM_PCOL_NUM:
			row[i] = num(in, c[i]);
			break;
		case RM_PCOL_INT:
			row[i] = intnum(in, c[i]);
			break;
		case RM_PCOL_TS:
			row[i] = c[i][0] ? c[i] : x->now;
			break;
		case RM_PCOL_REPEAT:
			row[i] = keep(in, rm_xasprintf("%ld", r->repeat));
			break;
		case RM_PCOL_COUNT:
			row[i] = c[i][0] ? intnum(in, c[i]) : "1";
			break;
		}
	}
	row[RM_PERF_COLS] = rm_direction_name(
	    rm_direction_lookup(x->dirs, c[RM_COL_MODEL], c[RM_COL_METRIC], NULL));
	x->st->results_seen++;
	if (ins_row(in, row, err) < 0)
		return rm_error_wrap(err, "'%s' near record %ld", r->file, r->line);
	return 0;
}

static int export_results(struct export *x, rm_error *err)
{
	struct inserter in = {0};

	ins_init(&in, x->db, "results", result_cols, N_RESULT_COLS);
	for (size_t i = 0; i < x->rows->n; i++)
		if (result_row(x, &in, &x->rows->rows[i], err) < 0) {
			ins_release(&in);
			return -1;
		}
	return ins_done(&in, &x->st->results, err);
}

/* metrics of the runs being exported (a run whose perf.csv rows are not is left out). */
static int export_metrics(struct export *x, rm_error *err)
{
	struct inserter in = {0};

	ins_init(&in, x->db, "metrics", metric_cols, 9);
	for (size_t i = 0; x->metrics && i < x->metrics->n; i++) {
		const rm_metric_row *m = &x->metrics->rows[i];
		if (!has_run(x, m->run_id))
			continue;
		const char *row[9] = {
		    m->run_id,
		    m->timestamp[0] ? m->timestamp : NULL,
		    m->model,
		    m->metric,
		    m->aggregate,
		    keep(&in, rm_xasprintf("%ld", m->step)),
		    keep(&in, rm_xasprintf("%ld", m->repeat)),
		    isfinite(m->value) ? keep(&in, rm_xasprintf("%.17g", m->value)) : NULL,
		    m->unit};
		x->st->metrics_seen++;
		if (ins_row(&in, row, err) < 0) {
			ins_release(&in);
			return -1;
		}
	}
	return ins_done(&in, &x->st->metrics, err);
}

/* config_params: the parameters of every configuration the rows name, by name, once. */
static int export_params(struct export *x, rm_error *err)
{
	struct inserter in = {0};
	json_t *seen = json_object();
	int ret = 0;

	ins_init(&in, x->db, "config_params", param_cols, 3);
	for (size_t i = 0; ret == 0 && i < x->rows->n; i++) {
		const rm_result *r = &x->rows->rows[i];
		const char *key = r->col[RM_COL_CONFIG_KEY];
		rm_config c = RM_CONFIG_INIT;
		if (!key[0] || json_object_get(seen, key) ||
		    rm_config_parse(&c, r->col[RM_COL_CONFIG]) < 0)
			continue;
		json_object_set_new(seen, key, json_true());
		for (size_t k = 0; ret == 0 && k < c.n; k++) {
			const char *row[3] = {key, keep(&in, rm_xstrdup(c.p[k].name)),
					      keep(&in, rm_xstrdup(c.p[k].value))};
			ret = ins_row(&in, row, err);
		}
		rm_config_release(&c);
	}
	json_decref(seen);
	if (ret < 0) {
		ins_release(&in);
		return -1;
	}
	return ins_done(&in, &x->st->params, err);
}

/* environment rows of the run run.json names, when it is being exported. */
static int export_env(struct export *x, rm_error *err)
{
	const char *mrun = x->manifest ? x->manifest->m.run_id : NULL;
	struct inserter in = {0};

	if (!mrun || !has_run(x, mrun))
		return 0;
	ins_init(&in, x->db, "environment", env_cols, 3);
	if (export_environment(&in, x->manifest, mrun, err) < 0) {
		ins_release(&in);
		return -1;
	}
	return ins_done(&in, &x->st->environment, err);
}

/* One run's provenance (its values stay in prov until the batch is sent). */
static int provenance_rows(struct inserter *in, const char *run_id, json_t *prov, rm_error *err)
{
	const char *key, *g, *name;
	json_t *scope, *vals, *v;

	json_object_foreach (prov, key, scope)
		json_object_foreach (json_object_get(scope, "groups"), g, vals)
			json_object_foreach (vals, name, v) {
				const char *row[6] = {
				    run_id,
				    g,
				    name,
				    json_string_value(v),
				    json_string_value(json_object_get(scope, "model")),
				    json_string_value(json_object_get(scope, "docker_file"))};
				if (ins_row(in, row, err) < 0)
					return -1;
			}
	return 0;
}

/* provenance rows of each run exported, from the companion file of the perf.csv its rows
 * came from (rm/provenance.h); a run without one has none. */
static int export_provenance(struct export *x, rm_error *err)
{
	struct inserter in = {0};
	json_t *all = json_array();
	int rc = 0;

	ins_init(&in, x->db, "provenance", prov_cols, 6);
	for (size_t k = 0; k < x->n_runs && rc == 0; k++) {
		const char *file = NULL;
		json_t *prov = NULL;
		for (size_t i = 0; i < x->rows->n && !file; i++)
			if (!strcmp(x->rows->rows[i].col[RM_COL_RUN_ID], x->runs[k]))
				file = x->rows->rows[i].file;
		if (!file || !*file)
			continue;
		rc = rm_provenance_read(file, x->runs[k], &prov, err);
		json_array_append_new(all, prov);
		if (rc == 0)
			rc = provenance_rows(&in, x->runs[k], prov, err);
	}
	if (rc < 0)
		ins_release(&in);
	else
		rc = ins_done(&in, &x->st->provenance, err);
	json_decref(all);
	return rc;
}

int rm_db_export(rm_db *db, const rm_results *rows, const rm_metrics *metrics,
		 const rm_manifest_file *manifest, const struct rm_direction_table *directions,
		 rm_export_stats *st, rm_error *err)
{
	struct export x = {db, rows, metrics, manifest, directions, "", NULL, 0, st};
	int ret = -1;

	memset(st, 0, sizeof(*st));
	rm_utc_timestamp(x.now, sizeof(x.now));
	for (size_t i = 0; i < rows->n; i++) {
		const rm_result *r = &rows->rows[i];
		if (!r->col[RM_COL_RUN_ID][0])
			return rm_error_set(err, RM_ERR_INPUT,
					    "'%s' record %ld has no run_id: only run_models' "
					    "perf.csv files can be exported",
					    r->file, r->line);
	}
	if (db->be->begin(db->h, err) < 0)
		return -1;
	if (export_runs(&x, err) == 0 && export_results(&x, err) == 0 &&
	    export_metrics(&x, err) == 0 && export_params(&x, err) == 0 &&
	    export_env(&x, err) == 0 && export_provenance(&x, err) == 0 &&
	    db->be->commit(db->h, err) == 0) {
		ret = 0;
	} else {
		db->be->rollback(db->h);
		memset(st, 0, sizeof(*st));
		rm_error_wrap(err, "export to '%s' rolled back", db->url);
	}
	rm_strv_free(x.runs);
	return ret;
}
