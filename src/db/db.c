/*
 * The results database: schema and migrations, export, reading back, baselines. One SQL
 * text for both backends; backend.h has what differs.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "rm/db.h"
#include "rm/gate.h"
#include "rm/util.h"

struct rm_db {
	const db_backend *be;
	void *h;
	char *url; /* redacted */
};

int rm_db_is_url(const char *s)
{
	return s && (rm_starts_with(s, "sqlite:") || rm_starts_with(s, "postgresql://") ||
		     rm_starts_with(s, "postgres://"));
}

char *rm_db_redact(const char *url)
{
	/* scheme://user:password@host/db?password=...: hide both kinds of password. */
	rm_buf b = RM_BUF_INIT((size_t)1 << 16);
	const char *p = url, *auth = strstr(url, "://");

	if (auth) {
		const char *a = auth + 3, *end = a + strcspn(a, "/?"), *at = NULL, *colon;
		for (const char *q = a; q < end; q++)
			if (*q == '@')
				at = q;
		if (at && (colon = memchr(a, ':', (size_t)(at - a)))) {
			rm_buf_add(&b, url, (size_t)(colon - url + 1));
			rm_buf_addstr(&b, "***");
			p = at;
		}
	}
	while (*p) {
		if (rm_starts_with(p, "password=")) {
			rm_buf_addstr(&b, "password=***");
			p += 9;
			p += strcspn(p, "&");
			continue;
		}
		rm_buf_addch(&b, *p++);
	}
	return rm_buf_detach(&b);
}

const char *rm_db_backend(const rm_db *db)
{
	return db->be->name;
}

/* Replaces {TS} {REAL} {ID} with the backend's types. */
static char *ddl(const db_backend *be, const char *tmpl)
{
	rm_buf b = RM_BUF_INIT((size_t)1 << 20);
	for (const char *p = tmpl; *p; p++) {
		if (rm_starts_with(p, "{TS}")) {
			rm_buf_addstr(&b, be->type_ts);
			p += 3;
		} else if (rm_starts_with(p, "{REAL}")) {
			rm_buf_addstr(&b, be->type_real);
			p += 5;
		} else if (rm_starts_with(p, "{ID}")) {
			rm_buf_addstr(&b, be->type_id);
			p += 3;
		} else {
			rm_buf_addch(&b, *p);
		}
	}
	return rm_buf_detach(&b);
}

/* Migrations: append only; never edit one that has shipped. */
static const struct migration {
	int version;
	const char *description;
	const char *sql;
} migrations[] = {
    {1, "runs, results, metrics, environment",
     "CREATE TABLE runs ("
     " run_id TEXT PRIMARY KEY,"
     " started_at {TS} NOT NULL,"
     " machine_name TEXT NOT NULL DEFAULT '',"
     " gpu_architecture TEXT NOT NULL DEFAULT '',"
     " git_commit TEXT NOT NULL DEFAULT '',"
     " suite TEXT NOT NULL DEFAULT '',"
     " build_number TEXT NOT NULL DEFAULT '',"
     " exported_at {TS} NOT NULL);"
     "CREATE TABLE results ("
     " id {ID},"
     " run_id TEXT NOT NULL REFERENCES runs (run_id),"
     " ts {TS} NOT NULL,"
     " model TEXT NOT NULL,"
     " metric TEXT NOT NULL DEFAULT '',"
     " docker_file TEXT NOT NULL DEFAULT '',"
     " repeat INTEGER NOT NULL DEFAULT 1 CHECK (repeat >= 1),"
     " status TEXT NOT NULL CHECK (status IN ('SUCCESS', 'FAILURE', 'SKIPPED')),"
     " performance {REAL},"
     " relative_change {REAL},"
     " direction TEXT NOT NULL DEFAULT 'unknown'"
     "  CHECK (direction IN ('higher', 'lower', 'unknown')),"
     " machine_name TEXT NOT NULL DEFAULT '',"
     " gpu_architecture TEXT NOT NULL DEFAULT '',"
     " n_gpus TEXT, nnodes TEXT, gpus_per_node TEXT, training_precision TEXT,"
     " pipeline TEXT, args TEXT, tags TEXT, base_docker TEXT, docker_sha TEXT,"
     " docker_image TEXT, git_commit TEXT, deployment_type TEXT, launcher TEXT,"
     " build_duration {REAL}, test_duration {REAL}, dataname TEXT,"
     " data_provider_type TEXT, data_size TEXT, data_download_duration TEXT,"
     " build_number TEXT, additional_docker_run_options TEXT, reason TEXT,"
     " tunableop TEXT, exit_code INTEGER, log_file TEXT,"
     " UNIQUE (run_id, model, docker_file, metric, repeat));"
     "CREATE INDEX results_series ON results (model, metric, gpu_architecture, machine_name);"
     "CREATE INDEX results_ts ON results (ts);"
     "CREATE TABLE metrics ("
     " id {ID},"
     " run_id TEXT NOT NULL REFERENCES runs (run_id),"
     " ts {TS},"
     " model TEXT NOT NULL,"
     " metric TEXT NOT NULL,"
     " aggregate TEXT NOT NULL DEFAULT '',"
     " step INTEGER NOT NULL DEFAULT -1,"
     " repeat INTEGER NOT NULL DEFAULT 1,"
     " value {REAL},"
     " unit TEXT NOT NULL DEFAULT '',"
     " UNIQUE (run_id, model, metric, aggregate, step, repeat));"
     "CREATE TABLE environment ("
     " run_id TEXT NOT NULL REFERENCES runs (run_id),"
     " name TEXT NOT NULL,"
     " value TEXT NOT NULL,"
     " PRIMARY KEY (run_id, name));"},
};
#define N_MIGRATIONS (sizeof(migrations) / sizeof(migrations[0]))

static int max_version_row(void *ctx, const char *const *cols, size_t n)
{
	long v;
	if (n && cols[0] && rm_parse_long(cols[0], 0, 1000000, &v) == 0)
		*(int *)ctx = (int)v;
	return 0;
}

static void utc_now(char *buf, size_t size)
{
	rm_utc_timestamp(buf, size);
}

static int migrate(rm_db *db, rm_error *err)
{
	const db_backend *be = db->be;
	int version = 0;
	char now[32];

	utc_now(now, sizeof(now));
	if (be->begin(db->h, err) < 0)
		return -1;
	if (be->exec(db->h,
		     "CREATE TABLE IF NOT EXISTS rm_schema (version INTEGER PRIMARY KEY,"
		     " description TEXT NOT NULL, applied_at TEXT NOT NULL)",
		     err) < 0 ||
	    be->query(db->h, "SELECT MAX(version) FROM rm_schema", NULL, 0, max_version_row,
		      &version, err) < 0)
		goto fail;
	if (version > RM_DB_SCHEMA_VERSION) {
		rm_error_set(err, RM_ERR_INPUT,
			     "database schema version %d is newer than this run_models writes "
			     "(%d): upgrade run_models",
			     version, RM_DB_SCHEMA_VERSION);
		goto fail;
	}
	for (size_t i = 0; i < N_MIGRATIONS; i++) {
		const struct migration *m = &migrations[i];
		char v[16];
		const char *params[] = {v, m->description, now};
		db_stmt *st = NULL;
		char *sql;
		int rc;

		if (m->version <= version)
			continue;
		sql = ddl(be, m->sql);
		rc = be->exec(db->h, sql, err);
		free(sql);
		if (rc < 0) {
			rm_error_wrap(err, "migration %d", m->version);
			goto fail;
		}
		snprintf(v, sizeof(v), "%d", m->version);
		if (be->prepare(db->h,
				"INSERT INTO rm_schema (version, description, applied_at)"
				" VALUES ($1, $2, $3)",
				3, &st, err) < 0)
			goto fail;
		rc = be->run(st, params, NULL, err);
		be->finalize(st);
		if (rc < 0)
			goto fail;
	}
	return be->commit(db->h, err);
fail:
	be->rollback(db->h);
	return -1;
}

int rm_db_open(const char *url, rm_db **out, rm_error *err)
{
	rm_db *db;
	const db_backend *be = NULL;

	*out = NULL;
	if (rm_starts_with(url, "sqlite:"))
		be = &rm_db_sqlite;
	else if (rm_starts_with(url, "postgresql://") || rm_starts_with(url, "postgres://"))
		be = &rm_db_postgres;
	if (!be)
		return rm_error_set(err, RM_ERR_INPUT,
				    "'%s' is not a database URL: use sqlite:PATH or "
				    "postgresql://[user@]host/db",
				    url);
	db = rm_xcalloc(1, sizeof(*db));
	db->be = be;
	db->url = rm_db_redact(url);
	if (be->open(url, &db->h, err) < 0) {
		rm_error_wrap(err, "'%s'", db->url);
		free(db->url);
		free(db);
		return -1;
	}
	if (migrate(db, err) < 0) {
		rm_error_wrap(err, "'%s'", db->url);
		rm_db_close(db);
		return -1;
	}
	*out = db;
	return 0;
}

void rm_db_close(rm_db *db)
{
	if (!db)
		return;
	db->be->close(db->h);
	free(db->url);
	free(db);
}

int rm_db_schema_version(rm_db *db, int *version, rm_error *err)
{
	*version = 0;
	return db->be->query(db->h, "SELECT MAX(version) FROM rm_schema", NULL, 0, max_version_row,
			     version, err);
}

static int count_row(void *ctx, const char *const *cols, size_t n)
{
	*(long long *)ctx = n && cols[0] ? strtoll(cols[0], NULL, 10) : 0;
	return 0;
}

int rm_db_count(rm_db *db, const char *table, long long *n, rm_error *err)
{
	static const char *const tables[] = {"runs", "results", "metrics", "environment",
					     "rm_schema"};
	char sql[64];
	size_t i;

	for (i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		if (!strcmp(table, tables[i]))
			break;
	if (i == sizeof(tables) / sizeof(tables[0]))
		return rm_error_set(err, RM_ERR_USAGE, "no table '%s'", table);
	snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM %s", tables[i]);
	*n = 0;
	return db->be->query(db->h, sql, NULL, 0, count_row, n, err);
}

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

static const char *const result_cols[] = {"run_id",
					  "ts",
					  "model",
					  "metric",
					  "docker_file",
					  "repeat",
					  "status",
					  "performance",
					  "relative_change",
					  "direction",
					  "machine_name",
					  "gpu_architecture",
					  "n_gpus",
					  "nnodes",
					  "gpus_per_node",
					  "training_precision",
					  "pipeline",
					  "args",
					  "tags",
					  "base_docker",
					  "docker_sha",
					  "docker_image",
					  "git_commit",
					  "deployment_type",
					  "launcher",
					  "build_duration",
					  "test_duration",
					  "dataname",
					  "data_provider_type",
					  "data_size",
					  "data_download_duration",
					  "build_number",
					  "additional_docker_run_options",
					  "reason",
					  "tunableop",
					  "exit_code",
					  "log_file"};
#define N_RESULT_COLS (sizeof(result_cols) / sizeof(result_cols[0]))

static const char *const metric_cols[] = {"run_id", "ts",     "model", "metric", "aggregate",
					  "step",   "repeat", "value", "unit"};
static const char *const run_cols[] = {"run_id",	   "started_at", "machine_name",
				       "gpu_architecture", "git_commit", "suite",
				       "build_number",	   "exported_at"};
static const char *const env_cols[] = {"run_id", "name", "value"};

static const char *manifest_str(const json_t *m, const char *key)
{
	return json_string_value(json_object_get(m, key));
}

/* Environment rows from run.json: flat fields, then the doctor's findings. */
static int export_environment(struct inserter *in, const json_t *m, const char *run_id,
			      rm_error *err)
{
	const char *key;
	json_t *v, *f;
	size_t i;

	json_object_foreach ((json_t *)m, key, v) {
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
	json_array_foreach (json_object_get(m, "doctor"), i, f) {
		const char *check = manifest_str(f, "check");
		const char *row[3] = {run_id, NULL, NULL};
		if (!check)
			continue;
		row[1] = keep(in, rm_xasprintf("doctor.%s", check));
		row[2] = keep(
		    in, rm_xasprintf("%s %s",
				     manifest_str(f, "status") ? manifest_str(f, "status") : "",
				     manifest_str(f, "detail") ? manifest_str(f, "detail") : ""));
		if (ins_row(in, row, err) < 0)
			return -1;
	}
	return 0;
}

int rm_db_export(rm_db *db, const rm_results *rows, const rm_metrics *metrics,
		 const json_t *manifest, const struct rm_direction_table *directions,
		 rm_export_stats *st, rm_error *err)
{
	const db_backend *be = db->be;
	struct inserter in = {0};
	char now[32];
	char **runs = NULL;
	size_t n_runs = 0;
	const char *mrun = manifest_str(manifest, "run_id");
	int ret = -1;

	memset(st, 0, sizeof(*st));
	utc_now(now, sizeof(now));
	for (size_t i = 0; i < rows->n; i++) {
		const rm_result *r = &rows->rows[i];
		if (!r->col[RM_COL_RUN_ID][0])
			return rm_error_set(err, RM_ERR_INPUT,
					    "'%s' record %ld has no run_id: only run_models' "
					    "perf.csv files can be exported",
					    r->file, r->line);
	}
	if (be->begin(db->h, err) < 0)
		return -1;

	/* runs: one per run id, in order of appearance; start = run.json's, else the
	 * earliest row timestamp. */
	ins_init(&in, db, "runs", run_cols, 8);
	for (size_t i = 0; i < rows->n; i++) {
		const rm_result *r = &rows->rows[i];
		const char *id = r->col[RM_COL_RUN_ID], *start = NULL, *suite = "";
		size_t k;
		for (k = 0; k < n_runs; k++)
			if (!strcmp(runs[k], id))
				break;
		if (k < n_runs)
			continue;
		runs = rm_strv_push(runs, &n_runs, id);
		for (size_t j = i; j < rows->n; j++) {
			const char *ts = rows->rows[j].col[RM_COL_TIMESTAMP];
			if (!strcmp(rows->rows[j].col[RM_COL_RUN_ID], id) && ts[0] &&
			    (!start || strcmp(ts, start) < 0))
				start = ts;
		}
		if (mrun && !strcmp(mrun, id)) {
			if (manifest_str(manifest, "started_at"))
				start = manifest_str(manifest, "started_at");
			if (manifest_str(manifest, "suite"))
				suite = manifest_str(manifest, "suite");
		}
		const char *row[8] = {id,
				      start ? start : now,
				      r->col[RM_COL_MACHINE_NAME],
				      r->col[RM_COL_GPU_ARCHITECTURE],
				      r->col[RM_COL_GIT_COMMIT],
				      suite,
				      r->col[RM_COL_BUILD_NUMBER],
				      now};
		if (ins_row(&in, row, err) < 0)
			goto fail;
	}
	if (ins_flush(&in, err) < 0)
		goto fail;
	st->runs = in.added;
	ins_release(&in);

	ins_init(&in, db, "results", result_cols, N_RESULT_COLS);
	for (size_t i = 0; i < rows->n; i++) {
		const rm_result *r = &rows->rows[i];
		const char *const *c = r->col;
		char rep[24];
		snprintf(rep, sizeof(rep), "%ld", r->repeat);
		const char *row[N_RESULT_COLS] = {
		    c[RM_COL_RUN_ID],
		    c[RM_COL_TIMESTAMP][0] ? c[RM_COL_TIMESTAMP] : now,
		    c[RM_COL_MODEL],
		    c[RM_COL_METRIC],
		    c[RM_COL_DOCKER_FILE],
		    keep(&in, rm_xstrdup(rep)),
		    c[RM_COL_STATUS],
		    num(&in, c[RM_COL_PERFORMANCE]),
		    num(&in, c[RM_COL_RELATIVE_CHANGE]),
		    rm_direction_name(
			rm_direction_lookup(directions, c[RM_COL_MODEL], c[RM_COL_METRIC], NULL)),
		    c[RM_COL_MACHINE_NAME],
		    c[RM_COL_GPU_ARCHITECTURE],
		    c[RM_COL_N_GPUS],
		    c[RM_COL_NNODES],
		    c[RM_COL_GPUS_PER_NODE],
		    c[RM_COL_TRAINING_PRECISION],
		    c[RM_COL_PIPELINE],
		    c[RM_COL_ARGS],
		    c[RM_COL_TAGS],
		    c[RM_COL_BASE_DOCKER],
		    c[RM_COL_DOCKER_SHA],
		    c[RM_COL_DOCKER_IMAGE],
		    c[RM_COL_GIT_COMMIT],
		    c[RM_COL_DEPLOYMENT_TYPE],
		    c[RM_COL_LAUNCHER],
		    num(&in, c[RM_COL_BUILD_DURATION]),
		    num(&in, c[RM_COL_TEST_DURATION]),
		    c[RM_COL_DATANAME],
		    c[RM_COL_DATA_PROVIDER_TYPE],
		    c[RM_COL_DATA_SIZE],
		    c[RM_COL_DATA_DOWNLOAD_DURATION],
		    c[RM_COL_BUILD_NUMBER],
		    c[RM_COL_ADDITIONAL_DOCKER_RUN_OPTIONS],
		    c[RM_COL_REASON],
		    c[RM_COL_TUNABLEOP],
		    intnum(&in, c[RM_COL_EXIT_CODE]),
		    c[RM_COL_LOG_FILE],
		};
		st->results_seen++;
		if (ins_row(&in, row, err) < 0) {
			rm_error_wrap(err, "'%s' near record %ld", r->file, r->line);
			goto fail;
		}
	}
	if (ins_flush(&in, err) < 0)
		goto fail;
	st->results = in.added;
	ins_release(&in);

	ins_init(&in, db, "metrics", metric_cols, 9);
	for (size_t i = 0; metrics && i < metrics->n; i++) {
		const rm_metric_row *m = &metrics->rows[i];
		size_t k;
		for (k = 0; k < n_runs; k++)
			if (!strcmp(runs[k], m->run_id))
				break;
		if (k == n_runs)
			continue; /* a run whose perf.csv rows are not being exported */
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
		st->metrics_seen++;
		if (ins_row(&in, row, err) < 0)
			goto fail;
	}
	if (ins_flush(&in, err) < 0)
		goto fail;
	st->metrics = in.added;
	ins_release(&in);

	if (mrun) {
		size_t k;
		for (k = 0; k < n_runs; k++)
			if (!strcmp(runs[k], mrun))
				break;
		if (k < n_runs) {
			ins_init(&in, db, "environment", env_cols, 3);
			if (export_environment(&in, manifest, mrun, err) < 0 ||
			    ins_flush(&in, err) < 0)
				goto fail;
			st->environment = in.added;
			ins_release(&in);
		}
	}
	if (be->commit(db->h, err) < 0)
		goto fail;
	ret = 0;
	goto out;
fail:
	ins_release(&in);
	be->rollback(db->h);
	memset(st, 0, sizeof(*st));
	rm_error_wrap(err, "export to '%s' rolled back", db->url);
out:
	rm_strv_free(runs);
	return ret;
}

/* Reading back */

static const char *const read_cols[] = {"model",
					"n_gpus",
					"nnodes",
					"gpus_per_node",
					"training_precision",
					"pipeline",
					"args",
					"tags",
					"docker_file",
					"base_docker",
					"docker_sha",
					"docker_image",
					"git_commit",
					"machine_name",
					"deployment_type",
					"launcher",
					"gpu_architecture",
					"performance",
					"metric",
					"relative_change",
					"status",
					"build_duration",
					"test_duration",
					"dataname",
					"data_provider_type",
					"data_size",
					"data_download_duration",
					"build_number",
					"additional_docker_run_options",
					"timestamp",
					"run_id",
					"repeat",
					"reason",
					"tunableop",
					"exit_code",
					"log_file"};
#define N_READ_COLS (sizeof(read_cols) / sizeof(read_cols[0]))

struct read_ctx {
	rm_results *out;
	const char *url;
	long n;
};

static int read_row(void *ctx, const char *const *cols, size_t n)
{
	struct read_ctx *rc = ctx;
	if (n == N_READ_COLS)
		rm_results_add(rc->out, read_cols, cols, n, rc->url, ++rc->n);
	return 0;
}

int rm_db_read_results(rm_db *db, const char *run_id, rm_results *out, rm_error *err)
{
	rm_buf sql = RM_BUF_INIT((size_t)1 << 20);
	struct read_ctx rc = {out, db->url, 0};
	const char *params[1] = {run_id};
	int ret;

	rm_buf_addstr(&sql, "SELECT ");
	for (size_t i = 0; i < N_READ_COLS; i++) {
		if (i)
			rm_buf_addstr(&sql, ", ");
		if (!strcmp(read_cols[i], "timestamp")) {
			rm_buf_addf(&sql, db->be->ts_text, "r.ts");
		} else if (!strcmp(read_cols[i], "performance") ||
			   !strcmp(read_cols[i], "relative_change") ||
			   !strcmp(read_cols[i], "build_duration") ||
			   !strcmp(read_cols[i], "test_duration") ||
			   !strcmp(read_cols[i], "exit_code") || !strcmp(read_cols[i], "repeat")) {
			rm_buf_addf(&sql, "CAST(r.%s AS TEXT)", read_cols[i]);
		} else {
			rm_buf_addf(&sql, "r.%s", read_cols[i]);
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
