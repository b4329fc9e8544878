/*
 * The results database that dashboards (Grafana, Superset, Metabase) read directly:
 * SQLite (sqlite:PATH, the embedded default) or PostgreSQL (postgresql://..., libpq), with
 * one schema (docs/nightly.md):
 *
 *   runs         one row per run id: start time, machine, GPU architecture, git commit,
 *                suite, build number
 *   results      one row per perf.csv row (every column, performance as a number,
 *                direction of the metric), unique on (run_id, model, docker_file, metric,
 *                config_key, repeat): a run holds a model once per configuration
 *   metrics      one row per perf_<model>.csv row, unique on (run_id, model, metric,
 *                aggregate, step, repeat)
 *   environment  (run_id, name, value) from the run's run.json: host, GPU, driver/ROCm
 *   accepted     changes accepted as intended (run_models accept): the key (empty fields
 *                match any), since_run and its start, accepted_at, reason
 *   config_params the parameters of each configuration by name: (config_key, name, value)
 *   rm_schema    applied migrations (version, description, applied_at)
 *
 * Opening a database applies the migrations it lacks (every version it has not recorded, in
 * order), in one transaction. An export runs in
 * one transaction: either every row lands or none does. Rows already there (same unique
 * key) are left alone, so exporting a run twice adds nothing.
 *
 * Both backends run the same SQL text (INSERT ... ON CONFLICT DO NOTHING, window functions,
 * $1-style parameters); only column types and the transaction start differ
 * (src/db/backend.h). Passwords in URLs never appear in messages.
 */
#ifndef RM_DB_H
#define RM_DB_H

#include <stddef.h>

#include "rm/util.h"
#include "rm/accepted.h"
#include "rm/history.h"
#include "rm/manifest.h"
#include "rm/metrics.h"
#include "rm/results.h"

typedef struct json_t json_t;
typedef struct rm_db rm_db;
struct rm_direction_table;

/* The schema version this build writes. */
#define RM_DB_SCHEMA_VERSION 4

/* Whether s names a database (sqlite:..., postgresql://..., postgres://...) rather than a
 * file. */
int rm_db_is_url(const char *s);
/* The file a sqlite:PATH (or sqlite://PATH) URL names, pointing into url; NULL for any other
 * URL or an empty path. */
const char *rm_db_sqlite_path(const char *url);

/* Opens (and creates, for SQLite) the database and migrates it. Errors: RM_ERR_INPUT for an
 * unknown scheme, RM_ERR_IO for a connection or SQL failure. */
int rm_db_open(const char *url, rm_db **out, rm_error *err);
void rm_db_close(rm_db *db);

/* "sqlite" or "postgresql". */
const char *rm_db_backend(const rm_db *db);
int rm_db_schema_version(rm_db *db, int *version, rm_error *err);

typedef struct rm_export_stats {
	size_t runs, results, metrics, environment, params, provenance; /* rows added */
	size_t results_seen, metrics_seen;				/* rows offered */
} rm_export_stats;

/*
 * Exports rows (perf.csv rows; every one needs a run_id) and metrics (may be NULL) in one
 * transaction. manifest (a run.json, may be NULL) gives the run's start time, suite and
 * environment for the run it names. directions (may be NULL) fills results.direction. Each
 * run's provenance comes from the companion file of the perf.csv its rows came from
 * (rm/provenance.h).
 */
int rm_db_export(rm_db *db, const rm_results *rows, const rm_metrics *metrics,
		 const rm_manifest_file *manifest, const struct rm_direction_table *directions,
		 rm_export_stats *st, rm_error *err);

/*
 * Streams the results (of one run, or all when run_id is NULL) to fn as perf.csv rows,
 * oldest run first: by start time, then by export order (a run's first row id), so runs
 * started within the same second keep their order.
 */
int rm_db_each_result(rm_db *db, const char *run_id, rm_result_fn fn, void *ctx, rm_error *err);

/* Appends the results (of one run, or all when run_id is NULL), oldest run first. */
int rm_db_read_results(rm_db *db, const char *run_id, rm_results *out, rm_error *err);

/* The provenance of run_id (rm/provenance.h's JSON; empty when the run has none). */
int rm_db_provenance(rm_db *db, const char *run_id, json_t **out, rm_error *err);

/* The start of a run ("YYYY-MM-DDTHH:MM:SSZ") into a new string, or NULL when the
 * database has no such run. */
int rm_db_run_start(rm_db *db, const char *run_id, char **start, rm_error *err);

/* Counts rows of a table ("runs", "results", "metrics", "environment", "accepted",
 * "config_params"). */
int rm_db_count(rm_db *db, const char *table, long long *n, rm_error *err);

/*
 * Feeds the history b (rm/history.h) the SUCCESS values of each series' last `runs` runs
 * that started before `before` (ISO-8601; NULL: any), leaving out exclude_run_id; oldest
 * first (start time, then export order). runs 0: the latest run only.
 */
int rm_db_baseline(rm_db *db, const char *exclude_run_id, const char *before, size_t runs,
		   struct rm_baseline *b, rm_error *err);

/* The accepted changes into the history b. */
int rm_db_accepted(rm_db *db, struct rm_baseline *b, rm_error *err);

/* Records accepted changes, in one transaction. */
int rm_db_accept(rm_db *db, const rm_acceptance *a, size_t n, rm_error *err);

/* Baselines from either source */

typedef struct rm_baseline_opts {
	/* A perf.csv path, or a database URL (sqlite:PATH, postgresql://...). */
	const char *source;
	/* This run: its rows are never its own baseline. */
	const char *exclude_run_id;
	/* Databases: only runs that started before this ISO-8601 time (NULL: any). */
	const char *before;
	/* Runs of each series the detector reads; 0: RM_DETECT_WINDOW. */
	size_t window;
} rm_baseline_opts;

#define RM_BASELINE_OPTS_INIT                                                                      \
	{                                                                                          \
		.source = NULL, .exclude_run_id = NULL, .before = NULL, .window = 0                \
	}

/* Opens a baseline, the history of each series: streams the CSV (the runs before
 * exclude_run_id), or queries the database; with the source's accepted changes. */
int rm_baseline_open(const rm_baseline_opts *o, rm_baseline **out, rm_error *err);

/* The URL with any password replaced by "***", for messages; caller frees. */
char *rm_db_redact(const char *url);

#endif
