/* The PostgreSQL backend (libpq): postgresql://... and postgres://... URLs as libpq reads
 * them, e.g. postgresql:///results?host=/run/postgresql. */
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "rm/util.h"

struct db_stmt {
	PGconn *conn;
	char name[32];
	int n_params;
};

/* libpq's messages end with a newline and may span lines; keep the first line. */
static int postgres_fail(PGconn *c, const PGresult *res, rm_error *err, const char *what)
{
	const char *m = res ? PQresultErrorMessage(res) : "";
	char first[1024];
	if (!m || !*m)
		m = PQerrorMessage(c);
	snprintf(first, sizeof(first), "%s", m ? m : "unknown error");
	first[strcspn(first, "\r\n")] = '\0';
	return rm_error_set(err, RM_ERR_IO, "postgresql: %s: %s", what, first);
}

static void notice_quiet(void *arg, const char *msg)
{
	(void)arg;
	(void)msg; /* "relation already exists, skipping" and friends */
}

static int pg_open(const char *url, void **h, rm_error *err)
{
	PGconn *c = PQconnectdb(url);
	if (!c)
		return rm_error_set(err, RM_ERR_INTERNAL, "postgresql: out of memory");
	if (PQstatus(c) != CONNECTION_OK) {
		postgres_fail(c, NULL, err, "cannot connect");
		PQfinish(c);
		return -1;
	}
	PQsetNoticeProcessor(c, notice_quiet, NULL);
	*h = c;
	return 0;
}

static void pg_close(void *h)
{
	PQfinish(h);
}

static int pg_exec(void *h, const char *sql, rm_error *err)
{
	PGresult *r = PQexec(h, sql);
	int ok =
	    r && (PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK);
	if (!ok)
		postgres_fail(h, r, err, "exec");
	PQclear(r);
	return ok ? 0 : -1;
}

static int pg_begin(void *h, rm_error *err)
{
	/* One writer at a time (migrations, exports): a lock released at COMMIT/ROLLBACK. The
	 * key is arbitrary but fixed: "rm" in ASCII. */
	return pg_exec(h, "BEGIN; SELECT pg_advisory_xact_lock(29293)", err);
}

static int pg_commit(void *h, rm_error *err)
{
	return pg_exec(h, "COMMIT", err);
}

static void pg_rollback(void *h)
{
	PQclear(PQexec(h, "ROLLBACK"));
}

static int pg_prepare(void *h, const char *sql, int n_params, db_stmt **out, rm_error *err)
{
	static unsigned counter;
	db_stmt *s = rm_xcalloc(1, sizeof(*s));
	PGresult *r;

	s->conn = h;
	s->n_params = n_params;
	snprintf(s->name, sizeof(s->name), "rm_st_%u", ++counter);
	/* Parameter types are left to the server: it infers them from the target columns. */
	r = PQprepare(h, s->name, sql, n_params, NULL);
	if (!r || PQresultStatus(r) != PGRES_COMMAND_OK) {
		postgres_fail(h, r, err, "prepare");
		PQclear(r);
		free(s);
		return -1;
	}
	PQclear(r);
	*out = s;
	return 0;
}

static int pg_run(db_stmt *s, const char *const *params, size_t *changed, rm_error *err)
{
	PGresult *r = PQexecPrepared(s->conn, s->name, s->n_params, params, NULL, NULL, 0);
	int ok = r && PQresultStatus(r) == PGRES_COMMAND_OK;
	if (!ok)
		postgres_fail(s->conn, r, err, "insert");
	else if (changed)
		*changed = (size_t)strtoul(PQcmdTuples(r), NULL, 10);
	PQclear(r);
	return ok ? 0 : -1;
}

static void pg_finalize(db_stmt *s)
{
	char sql[64];
	if (!s)
		return;
	/* Inside a failed transaction this fails too; the statement goes with the session. */
	snprintf(sql, sizeof(sql), "DEALLOCATE %s", s->name);
	PQclear(PQexec(s->conn, sql));
	free(s);
}

/* Rows one at a time (libpq's single-row mode): a query over a large history is never
 * held in memory whole. */
static int pg_query(void *h, const char *sql, const char *const *params, int n_params, db_row_fn fn,
		    void *ctx, rm_error *err)
{
	const char **cols = NULL;
	PGresult *r;
	int stop = 0, failed = 0;

	if (!PQsendQueryParams(h, sql, n_params, NULL, params, NULL, NULL, 0))
		return postgres_fail(h, NULL, err, "query");
	PQsetSingleRowMode(h);
	/* Every result is read, after a failure or a stop too: the connection must be idle
	 * again. */
	while ((r = PQgetResult(h))) {
		ExecStatusType st = PQresultStatus(r);
		if (st == PGRES_SINGLE_TUPLE && !stop && !failed) {
			int nc = PQnfields(r);
			cols = rm_xrealloc(cols, ((size_t)nc + 1) * sizeof(*cols));
			for (int j = 0; j < nc; j++)
				cols[j] = PQgetisnull(r, 0, j) ? NULL : PQgetvalue(r, 0, j);
			stop = fn(ctx, cols, (size_t)nc);
		} else if (st != PGRES_SINGLE_TUPLE && st != PGRES_TUPLES_OK && !failed) {
			postgres_fail(h, r, err, "query");
			failed = 1;
		}
		PQclear(r);
	}
	free(cols);
	return failed ? -1 : 0;
}

const db_backend rm_db_postgres = {
    .name = "postgresql",
    .type_ts = "TIMESTAMPTZ",
    .type_real = "DOUBLE PRECISION",
    .type_id = "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
    .ts_text = "to_char(%s AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')",
    .open = pg_open,
    .close = pg_close,
    .exec = pg_exec,
    .begin = pg_begin,
    .commit = pg_commit,
    .rollback = pg_rollback,
    .prepare = pg_prepare,
    .run = pg_run,
    .finalize = pg_finalize,
    .query = pg_query,
};
