/*
 * The results database: URLs, opening, schema and migrations (export.c writes, read.c reads
 * back). One SQL text for both backends; backend.h has what differs.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "rm/db.h"
#include "rm/report.h"
#include "rm/util.h"

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

/* Migrations: append only; never edit one that has shipped. {REBUILD_RESULTS} makes the
 * results table again for a new key (SQLite cannot drop a constraint; PostgreSQL does the
 * same): 3 adds the attempt, 4 the configuration. */
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
     "{RESULTS}"
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
    {2, "accepted changes",
     "CREATE TABLE accepted ("
     " id {ID},"
     " model TEXT NOT NULL,"
     " metric TEXT NOT NULL DEFAULT '',"
     " docker_file TEXT NOT NULL DEFAULT '',"
     " gpu_architecture TEXT NOT NULL DEFAULT '',"
     " n_gpus TEXT NOT NULL DEFAULT '',"
     " machine_name TEXT NOT NULL DEFAULT '',"
     " since_run TEXT NOT NULL,"
     " since_at {TS},"
     " accepted_at {TS} NOT NULL,"
     " reason TEXT NOT NULL DEFAULT '');"
     "CREATE INDEX accepted_model ON accepted (model);"},
    {3, "attempts, provenance: results.attempt (in the results' key), provenance",
     /* what made each run: its host (model ''), each model's image, environment and
      * arguments (rm/provenance.h), grouped for `report compare` */
     "{REBUILD_RESULTS}"
     "CREATE TABLE provenance ("
     " run_id TEXT NOT NULL REFERENCES runs (run_id),"
     " model TEXT NOT NULL DEFAULT '',"
     " docker_file TEXT NOT NULL DEFAULT '',"
     " grp TEXT NOT NULL,"
     " name TEXT NOT NULL,"
     " value TEXT NOT NULL,"
     " PRIMARY KEY (run_id, model, docker_file, grp, name));"},
    {4,
     "configurations: results.config and config_key (in the results' key), "
     "accepted.config_key, config_params",
     "{REBUILD_RESULTS}"
     "ALTER TABLE accepted ADD COLUMN config_key TEXT NOT NULL DEFAULT '';"
     "CREATE TABLE config_params ("
     " config_key TEXT NOT NULL,"
     " name TEXT NOT NULL,"
     " value TEXT NOT NULL,"
     " PRIMARY KEY (config_key, name));"},
};
#define N_MIGRATIONS (sizeof(migrations) / sizeof(migrations[0]))

/* The results table's columns of schema version v (RM_PERF_COLUMNS since v or before), each
 * as "name" or, with decl, "name decl". */
static void results_cols(rm_buf *b, int v, int decl)
{
	int n = 0;

	for (size_t c = 0; c < RM_PERF_COLS; c++)
		if (rm_perf_columns[c].since <= v) {
			rm_buf_addf(b, "%s%s", n++ ? ", " : "", rm_perf_columns[c].db);
			if (decl)
				rm_buf_addf(b, " %s", rm_perf_columns[c].decl);
		}
}

/* The results table as the schema version that made it (1): every column of
 * RM_PERF_COLUMNS since 1, and the database's own (id, direction). */
static void results_table(rm_buf *b)
{
	rm_buf_addstr(b, "CREATE TABLE results (id {ID}, ");
	results_cols(b, 1, 1);
	rm_buf_addstr(b, ", direction TEXT NOT NULL DEFAULT 'unknown'"
			 " CHECK (direction IN ('higher', 'lower', 'unknown')),"
			 " UNIQUE (run_id, model, docker_file, metric, repeat));");
}

/* The results table made again by migration v, for a new unique key (SQLite cannot drop a
 * constraint): the columns of v, the rows copied in id order (ids are renumbered, their
 * order kept), the indexes made again. */
static void results_rebuild(rm_buf *b, int v)
{
	rm_buf_addstr(b, "CREATE TABLE results_new (id {ID}, ");
	results_cols(b, v, 1);
	rm_buf_addstr(b, ", direction TEXT NOT NULL DEFAULT 'unknown'"
			 " CHECK (direction IN ('higher', 'lower', 'unknown')),"
			 " UNIQUE (run_id, model, docker_file, metric");
	rm_buf_addstr(b, v >= 4 ? ", config_key, repeat" : ", repeat");
	rm_buf_addstr(b, v >= 3 ? ", attempt));" : "));");
	rm_buf_addstr(b, "INSERT INTO results_new (");
	results_cols(b, v - 1, 0);
	rm_buf_addstr(b, ", direction) SELECT ");
	results_cols(b, v - 1, 0);
	rm_buf_addstr(b, ", direction FROM results ORDER BY id;"
			 "DROP TABLE results;"
			 "ALTER TABLE results_new RENAME TO results;"
			 "CREATE INDEX results_series ON results"
			 " (model, metric, gpu_architecture, machine_name);"
			 "CREATE INDEX results_ts ON results (ts);");
}

/* Migration m's SQL for backend be: its text with {RESULTS} or {REBUILD_RESULTS} made from
 * the column list, else the columns RM_PERF_COLUMNS says it added (each with a DEFAULT when
 * NOT NULL). */
static char *migration_sql(const db_backend *be, const struct migration *m)
{
	rm_buf b = RM_BUF_INIT((size_t)1 << 20);
	const char *at = strstr(m->sql, "{RESULTS}"), *re = strstr(m->sql, "{REBUILD_RESULTS}");
	char *sql;

	if (at) {
		rm_buf_add(&b, m->sql, (size_t)(at - m->sql));
		results_table(&b);
		rm_buf_addstr(&b, at + strlen("{RESULTS}"));
	} else if (re) {
		rm_buf_add(&b, m->sql, (size_t)(re - m->sql));
		results_rebuild(&b, m->version);
		rm_buf_addstr(&b, re + strlen("{REBUILD_RESULTS}"));
	} else {
		rm_buf_addstr(&b, m->sql);
	}
	for (size_t c = 0; c < RM_PERF_COLS && m->version > 1 && !re; c++)
		if (rm_perf_columns[c].since == m->version)
			rm_buf_addf(&b, "ALTER TABLE results ADD COLUMN %s %s;",
				    rm_perf_columns[c].db, rm_perf_columns[c].decl);
	sql = ddl(be, rm_buf_str(&b));
	rm_buf_release(&b);
	return sql;
}

/* The versions a database has applied: bit v of *(unsigned long long *)ctx, and the
 * newest in applied_max. */
struct applied {
	unsigned long long bits;
	int max;
};

static int applied_row(void *ctx, const char *const *cols, size_t n)
{
	struct applied *a = ctx;
	long v;
	if (n && cols[0] && rm_parse_long(cols[0], 0, 1000000, &v) == 0) {
		if (v < 64)
			a->bits |= 1ULL << v;
		if (v > a->max)
			a->max = (int)v;
	}
	return 0;
}

static int migrate(rm_db *db, rm_error *err)
{
	const db_backend *be = db->be;
	struct applied done = {0, 0};
	char now[32];

	rm_utc_timestamp(now, sizeof(now));
	if (be->begin(db->h, err) < 0)
		return -1;
	if (be->exec(db->h,
		     "CREATE TABLE IF NOT EXISTS rm_schema (version INTEGER PRIMARY KEY,"
		     " description TEXT NOT NULL, applied_at TEXT NOT NULL)",
		     err) < 0 ||
	    be->query(db->h, "SELECT version FROM rm_schema", NULL, 0, applied_row, &done, err) < 0)
		goto fail;
	if (done.max > RM_DB_SCHEMA_VERSION) {
		rm_error_set(err, RM_ERR_INPUT,
			     "database schema version %d is newer than this run_models writes "
			     "(%d): upgrade run_models",
			     done.max, RM_DB_SCHEMA_VERSION);
		goto fail;
	}
	for (size_t i = 0; i < N_MIGRATIONS; i++) {
		const struct migration *m = &migrations[i];
		char v[16];
		const char *params[] = {v, m->description, now};
		db_stmt *st = NULL;
		char *sql;
		int rc;

		if (done.bits >> m->version & 1)
			continue;
		sql = migration_sql(be, m);
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
	struct applied done = {0, 0};
	int rc =
	    db->be->query(db->h, "SELECT version FROM rm_schema", NULL, 0, applied_row, &done, err);

	*version = done.max;
	return rc;
}

static int count_row(void *ctx, const char *const *cols, size_t n)
{
	*(long long *)ctx = n && cols[0] ? strtoll(cols[0], NULL, 10) : 0;
	return 0;
}

int rm_db_count(rm_db *db, const char *table, long long *n, rm_error *err)
{
	static const char *const tables[] = {"runs",	 "results",	  "metrics",  "environment",
					     "accepted", "config_params", "rm_schema"};
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
