/*
 * The small interface each database backend implements (one file each: sqlite.c,
 * postgres.c). Parameters and results travel as text (NULL = SQL NULL); the database
 * converts them to the column types. Every function returns 0 or -1 with err filled.
 */
#ifndef RM_DB_BACKEND_H
#define RM_DB_BACKEND_H

#include <stddef.h>

#include "rm/util.h"

typedef struct db_stmt db_stmt;

/* Called once per result row with n column values (NULL for SQL NULL); non-zero stops. */
typedef int (*db_row_fn)(void *ctx, const char *const *cols, size_t n);

typedef struct db_backend {
	const char *name;
	/* Column types in the DDL: {TS} a point in time, {REAL} a double, {ID} an
	 * auto-increment primary key. */
	const char *type_ts, *type_real, *type_id;
	/* An SQL expression printing a {TS} column (%s) as "YYYY-MM-DDTHH:MM:SSZ". */
	const char *ts_text;
	int (*open)(const char *url, void **h, rm_error *err);
	void (*close)(void *h);
	/* Runs statements without parameters or results (may hold several, ';'-separated). */
	int (*exec)(void *h, const char *sql, rm_error *err);
	/* Starts a write transaction that excludes other writers (SQLite BEGIN IMMEDIATE,
	 * PostgreSQL BEGIN plus a transaction-scoped advisory lock). */
	int (*begin)(void *h, rm_error *err);
	int (*commit)(void *h, rm_error *err);
	void (*rollback)(void *h);
	int (*prepare)(void *h, const char *sql, int n_params, db_stmt **st, rm_error *err);
	/* Runs a prepared statement; *changed (may be NULL) receives the rows it changed. */
	int (*run)(db_stmt *st, const char *const *params, size_t *changed, rm_error *err);
	void (*finalize)(db_stmt *st);
	int (*query)(void *h, const char *sql, const char *const *params, int n_params,
		     db_row_fn fn, void *ctx, rm_error *err);
} db_backend;

/* An open database (rm/db.h's rm_db). */
struct rm_db {
	const db_backend *be;
	void *h;
	char *url; /* redacted */
};

extern const db_backend rm_db_sqlite;
extern const db_backend rm_db_postgres;

#endif
