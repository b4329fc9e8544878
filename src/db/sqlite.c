/* The SQLite backend (libsqlite3): sqlite:PATH. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "rm/db.h"
#include "rm/util.h"

struct db_stmt {
	sqlite3 *db;
	sqlite3_stmt *st;
	int n_params;
	int *index; /* SQLite's index of $1..$n (0: not in the statement) */
};

static int sqlite_fail(sqlite3 *db, rm_error *err, const char *what)
{
	return rm_error_set(err, RM_ERR_IO, "sqlite: %s: %s", what,
			    db ? sqlite3_errmsg(db) : "out of memory");
}

const char *rm_db_sqlite_path(const char *url)
{
	const char *path;

	if (!url || !rm_starts_with(url, "sqlite:"))
		return NULL;
	path = url + strlen("sqlite:");
	/* sqlite://PATH is accepted too; sqlite:///abs/path keeps its leading slash. */
	if (rm_starts_with(path, "//"))
		path += 2;
	return *path ? path : NULL;
}

static int sq_open(const char *url, void **h, rm_error *err)
{
	const char *path = rm_db_sqlite_path(url);
	sqlite3 *db = NULL;

	if (!path)
		return rm_error_set(err, RM_ERR_INPUT, "'%s': no file after 'sqlite:'", url);
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
	    SQLITE_OK) {
		rm_error_set(err, RM_ERR_IO, "sqlite: cannot open '%s': %s", path,
			     db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return -1;
	}
	/* Another exporter or a dashboard reading: wait for its lock rather than fail. WAL
	 * lets readers (Grafana) go on while an export writes. */
	sqlite3_busy_timeout(db, 30000);
	if (sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON;", NULL, NULL,
			 NULL) != SQLITE_OK) {
		sqlite_fail(db, err, path);
		sqlite3_close(db);
		return -1;
	}
	*h = db;
	return 0;
}

static void sq_close(void *h)
{
	sqlite3_close(h);
}

static int sq_exec(void *h, const char *sql, rm_error *err)
{
	char *msg = NULL;
	if (sqlite3_exec(h, sql, NULL, NULL, &msg) != SQLITE_OK) {
		rm_error_set(err, RM_ERR_IO, "sqlite: %s", msg ? msg : sqlite3_errmsg(h));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

static int sq_begin(void *h, rm_error *err)
{
	return sq_exec(h, "BEGIN IMMEDIATE", err);
}

static int sq_commit(void *h, rm_error *err)
{
	return sq_exec(h, "COMMIT", err);
}

static void sq_rollback(void *h)
{
	if (!sqlite3_get_autocommit(h))
		sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
}

static int *param_index(sqlite3_stmt *st, int n);

static int sq_prepare(void *h, const char *sql, int n_params, db_stmt **out, rm_error *err)
{
	db_stmt *s = rm_xcalloc(1, sizeof(*s));
	s->db = h;
	s->n_params = n_params;
	if (sqlite3_prepare_v2(h, sql, -1, &s->st, NULL) != SQLITE_OK) {
		sqlite_fail(h, err, "prepare");
		free(s);
		return -1;
	}
	s->index = param_index(s->st, n_params);
	*out = s;
	return 0;
}

/*
 * $1..$n are named parameters to SQLite, numbered by first appearance. Their indexes are
 * worked out once per statement: sqlite3_bind_parameter_index() is a linear search, and a
 * batch insert has thousands of parameters.
 */
static int *param_index(sqlite3_stmt *st, int n)
{
	int *index = rm_xcalloc((size_t)n + 1, sizeof(*index));
	int total = sqlite3_bind_parameter_count(st);

	for (int k = 1; k <= total; k++) {
		const char *name = sqlite3_bind_parameter_name(st, k);
		long v;
		if (name && name[0] == '$' && rm_parse_long(name + 1, 1, n, &v) == 0)
			index[v - 1] = k;
	}
	return index;
}

static int bind(sqlite3 *db, sqlite3_stmt *st, const int *index, const char *const *params, int n,
		rm_error *err)
{
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	for (int i = 0; i < n; i++) {
		int rc;
		if (!index[i])
			continue;
		rc = params[i] ? sqlite3_bind_text(st, index[i], params[i], -1, SQLITE_STATIC)
			       : sqlite3_bind_null(st, index[i]);
		if (rc != SQLITE_OK)
			return sqlite_fail(db, err, "bind");
	}
	return 0;
}

static int sq_run(db_stmt *s, const char *const *params, size_t *changed, rm_error *err)
{
	int rc;
	if (bind(s->db, s->st, s->index, params, s->n_params, err) < 0)
		return -1;
	while ((rc = sqlite3_step(s->st)) == SQLITE_ROW)
		;
	if (rc != SQLITE_DONE) {
		sqlite_fail(s->db, err, "insert");
		sqlite3_reset(s->st);
		return -1;
	}
	if (changed)
		*changed = (size_t)sqlite3_changes(s->db);
	sqlite3_reset(s->st);
	return 0;
}

static void sq_finalize(db_stmt *s)
{
	if (!s)
		return;
	sqlite3_finalize(s->st);
	free(s->index);
	free(s);
}

static int sq_query(void *h, const char *sql, const char *const *params, int n_params, db_row_fn fn,
		    void *ctx, rm_error *err)
{
	sqlite3_stmt *st = NULL;
	const char **cols = NULL;
	int rc, ret = -1, nc, *index = NULL;

	if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
		return sqlite_fail(h, err, "query");
	index = param_index(st, n_params);
	if (bind(h, st, index, params, n_params, err) < 0)
		goto out;
	nc = sqlite3_column_count(st);
	cols = rm_xcalloc((size_t)nc + 1, sizeof(*cols));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int i = 0; i < nc; i++)
			cols[i] = (const char *)sqlite3_column_text(st, i);
		if (fn(ctx, cols, (size_t)nc))
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		sqlite_fail(h, err, "query");
		goto out;
	}
	ret = 0;
out:
	free(index);
	free(cols);
	sqlite3_finalize(st);
	return ret;
}

const db_backend rm_db_sqlite = {
    .name = "sqlite",
    .type_ts = "TEXT",
    .type_real = "REAL",
    .type_id = "INTEGER PRIMARY KEY",
    .ts_text = "%s",
    .open = sq_open,
    .close = sq_close,
    .exec = sq_exec,
    .begin = sq_begin,
    .commit = sq_commit,
    .rollback = sq_rollback,
    .prepare = sq_prepare,
    .run = sq_run,
    .finalize = sq_finalize,
    .query = sq_query,
};
