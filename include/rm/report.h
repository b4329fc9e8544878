/*
 * What a run reports: the perf.csv row layout and relative_change, the per-metric rows of
 * perf_<model>.csv, and the summaries of repeated runs in perf_summary.csv. Every file is
 * appended with rm_csv_append (one write under an exclusive lock; a foreign header is
 * refused, but for a perf.csv madengine or MAD wrote, which keeps its own header).
 * perf_<model>.csv and perf_summary.csv live beside perf.csv.
 */
#ifndef RM_REPORT_H
#define RM_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "rm/util.h"
#include "rm/parser.h"

/*
 * perf.csv's columns: madengine's 29 in their order, then ours (always at the end, so that
 * tools that read madengine's columns by position keep working). This list is the one
 * source of each column: the enum, perf.csv's header, the results table of the database
 * (its schema and the export) and the database read-back are generated from it.
 *
 *   X(NAME, csv, db, kind, decl, since)
 *     NAME   RM_COL_<NAME>
 *     csv    the perf.csv header cell
 *     db     the column of the database's results table
 *     kind   how the database keeps it: TEXT, NUM (a number, NULL unless finite), INT (an
 *            integer), TS (a time), REPEAT (the row's repeat number), COUNT (a count from 1:
 *            1 when the cell is empty, as in the rows of files older than the column)
 *     decl   the SQL after the column's name ({REAL}, {TS} per backend, src/db/db.c)
 *     since  the database schema version that added it: a new column is a new migration,
 *            the rows of the old ones never change
 */
#define RM_PERF_COLUMNS(X)                                                                         \
	X(MODEL, "model", "model", TEXT, "TEXT NOT NULL", 1)                                       \
	X(NGPUS, "n_gpus", "n_gpus", TEXT, "TEXT", 1)                                              \
	X(NNODES, "nnodes", "nnodes", TEXT, "TEXT", 1)                                             \
	X(GPUS_PER_NODE, "gpus_per_node", "gpus_per_node", TEXT, "TEXT", 1)                        \
	X(PRECISION, "training_precision", "training_precision", TEXT, "TEXT", 1)                  \
	X(PIPELINE, "pipeline", "pipeline", TEXT, "TEXT", 1)                                       \
	X(ARGS, "args", "args", TEXT, "TEXT", 1)                                                   \
	X(TAGS, "tags", "tags", TEXT, "TEXT", 1)                                                   \
	X(DOCKERFILE, "docker_file", "docker_file", TEXT, "TEXT NOT NULL DEFAULT ''", 1)           \
	X(BASE_DOCKER, "base_docker", "base_docker", TEXT, "TEXT", 1)                              \
	X(DOCKER_SHA, "docker_sha", "docker_sha", TEXT, "TEXT", 1)                                 \
	X(IMAGE, "docker_image", "docker_image", TEXT, "TEXT", 1)                                  \
	X(GIT_COMMIT, "git_commit", "git_commit", TEXT, "TEXT", 1)                                 \
	X(MACHINE, "machine_name", "machine_name", TEXT, "TEXT NOT NULL DEFAULT ''", 1)            \
	X(DEPLOYMENT, "deployment_type", "deployment_type", TEXT, "TEXT", 1)                       \
	X(LAUNCHER, "launcher", "launcher", TEXT, "TEXT", 1)                                       \
	X(ARCH, "gpu_architecture", "gpu_architecture", TEXT, "TEXT NOT NULL DEFAULT ''", 1)       \
	X(PERFORMANCE, "performance", "performance", NUM, "{REAL}", 1)                             \
	X(METRIC, "metric", "metric", TEXT, "TEXT NOT NULL DEFAULT ''", 1)                         \
	X(RELATIVE_CHANGE, "relative_change", "relative_change", NUM, "{REAL}", 1)                 \
	X(STATUS, "status", "status", TEXT,                                                        \
	  "TEXT NOT NULL CHECK (status IN ('SUCCESS', 'FAILURE', 'SKIPPED'))", 1)                  \
	X(BUILD_DURATION, "build_duration", "build_duration", NUM, "{REAL}", 1)                    \
	X(TEST_DURATION, "test_duration", "test_duration", NUM, "{REAL}", 1)                       \
	X(DATANAME, "dataname", "dataname", TEXT, "TEXT", 1)                                       \
	X(DATA_PROVIDER, "data_provider_type", "data_provider_type", TEXT, "TEXT", 1)              \
	X(DATA_SIZE, "data_size", "data_size", TEXT, "TEXT", 1)                                    \
	X(DATA_DOWNLOAD, "data_download_duration", "data_download_duration", TEXT, "TEXT", 1)      \
	X(BUILD_NUMBER, "build_number", "build_number", TEXT, "TEXT", 1)                           \
	X(RUN_OPTIONS, "additional_docker_run_options", "additional_docker_run_options", TEXT,     \
	  "TEXT", 1)                                                                               \
	/* ours */                                                                                 \
	X(TIMESTAMP, "timestamp", "ts", TS, "{TS} NOT NULL", 1)                                    \
	X(RUN_ID, "run_id", "run_id", TEXT, "TEXT NOT NULL REFERENCES runs (run_id)", 1)           \
	X(REPEAT, "repeat", "repeat", REPEAT, "INTEGER NOT NULL DEFAULT 1 CHECK (repeat >= 1)", 1) \
	X(REASON, "reason", "reason", TEXT, "TEXT", 1)                                             \
	X(TUNABLEOP, "tunableop", "tunableop", TEXT, "TEXT", 1)                                    \
	X(EXIT_CODE, "exit_code", "exit_code", INT, "INTEGER", 1)                                  \
	X(LOG_FILE, "log_file", "log_file", TEXT, "TEXT", 1)                                       \
	X(ATTEMPT, "attempt", "attempt", COUNT, "INTEGER NOT NULL DEFAULT 1 CHECK (attempt >= 1)", \
	  3)                                                                                       \
	/* the configuration (rm/config.h): its parameters by name, and its key */                 \
	X(CONFIG, "config", "config", TEXT, "TEXT NOT NULL DEFAULT ''", 4)                         \
	X(CONFIG_KEY, "config_key", "config_key", TEXT, "TEXT NOT NULL DEFAULT ''", 4)

enum rm_perf_col {
#define RM_PERF_ENUM(name, csv, db, kind, decl, since) RM_COL_##name,
	RM_PERF_COLUMNS(RM_PERF_ENUM)
#undef RM_PERF_ENUM
	    RM_PERF_COLS
};

/* How the database keeps a column (the kind of RM_PERF_COLUMNS). */
typedef enum rm_perf_kind {
	RM_PCOL_TEXT,
	RM_PCOL_NUM,
	RM_PCOL_INT,
	RM_PCOL_TS,
	RM_PCOL_REPEAT,
	RM_PCOL_COUNT
} rm_perf_kind;

/* One column of RM_PERF_COLUMNS, as data. */
typedef struct rm_perf_column {
	const char *csv;
	const char *db;
	rm_perf_kind kind;
	const char *decl;
	int since;
} rm_perf_column;

extern const rm_perf_column rm_perf_columns[RM_PERF_COLS];
extern const char *const rm_perf_header[RM_PERF_COLS];

/* One perf.csv row: a cell per column (NULL is written as empty); the strings are borrowed. */
typedef struct rm_perf_row {
	const char *cell[RM_PERF_COLS];
} rm_perf_row;

/*
 * relative_change: the percent change of performance against the last SUCCESS row of the
 * perf.csv at path with the same model, metric, Dockerfile, machine, GPU architecture and
 * configuration key
 * (madengine leaves the column empty). One pass over the file for all rows; no earlier row,
 * an unreadable file or a zero baseline leaves a row's change empty. rel[i] receives
 * "+1.23" or NULL (caller frees) and rows[i] points its cell at it.
 */
void rm_perf_relative_changes(const char *path, rm_perf_row *rows, size_t n, char **rel);

/*
 * Whether perf rows can be appended to path, creating its folder. A perf.csv madengine or
 * MAD wrote (a header naming model, performance, metric and status, each once) is taken:
 * its header is kept, never rewritten (warned about once: our own columns go elsewhere,
 * see rm_perf_append). Any other header is refused.
 */
int rm_perf_check(const char *path, rm_error *err);

/*
 * Appends rows to perf.csv at path (the rows of one run of model). In a file of our layout
 * every column is written. In one madengine or MAD wrote, each row fills the columns the
 * file has, by name, and every other non-empty cell of the row (run_models' own columns, a
 * madengine column an older header lacks) goes to perf_<model>.csv beside it as a row
 * (timestamp, run_id, the row's model, metric = the column's name, value = the cell, unit
 * and step empty, aggregate "perf.csv"). Line ends follow the file's (CRLF when its header
 * line ends so).
 */
int rm_perf_append(const char *path, const char *model, const rm_perf_row *rows, size_t n,
		   rm_error *err);

/* Before a run: perf_<model>.csv beside perf_path, when it exists, is a regular file with
 * our header (a stale file of another tool would fail the run at its end). */
int rm_metrics_check(const char *perf_path, const char *model, rm_error *err);
/* The same for perf_summary.csv (written by --repeat). */
int rm_summary_check(const char *perf_path, rm_error *err);

/* "<folder of perf_path>/<name>": where perf_<model>.csv and perf_summary.csv go. */
char *rm_perf_sibling(const char *perf_path, const char *name);

/* perf_<model>.csv beside perf_path: one row per metric of pr
 * (timestamp,run_id,model,metric,value,unit,step,aggregate). Nothing when pr has none. */
int rm_metrics_append(const char *perf_path, const char *timestamp, const char *run_id,
		      const char *model, const rm_parse_result *pr, rm_error *err);
/* The same, with the model column of each metric row given (row_models[i] for
 * pr->metrics[i], e.g. the "<model>_<row>" of a multiple_results row); the file is still
 * perf_<model>.csv. */
int rm_metrics_append_rows(const char *perf_path, const char *timestamp, const char *run_id,
			   const char *model, const char *const *row_models,
			   const rm_parse_result *pr, rm_error *err);

/* The values of each metric over the repeats of one model (--repeat N). */
typedef struct rm_series {
	char *name;
	char *unit;
	char *aggregate;
	double *v;
	size_t n;
} rm_series;

typedef struct rm_summary {
	rm_series *s;
	size_t n;
} rm_summary;

/* Adds a successful run's performance and metrics. */
void rm_summary_collect(rm_summary *sm, const rm_parse_result *pr);
/*
 * Prints the statistics of every series to out and appends them to perf_summary.csv beside
 * perf_path. score "mlperf" scores time to train by MLPerf's rule (drop the fastest and the
 * slowest, mean of the rest); NULL for none.
 */
int rm_summary_write(const rm_summary *sm, const char *perf_path, const char *run_id,
		     const char *model, long runs, const char *score, FILE *out, rm_error *err);
void rm_summary_release(rm_summary *sm);

/*
 * Appending rows to CSV files that other processes read and write too (perf.csv,
 * perf_<model>.csv): RFC 4180 quoting, a fixed header, one write() per batch of rows under an
 * exclusive flock(2), so concurrent runners and a crash mid-run never leave a torn row.
 *
 * A new or empty file gets the header first. An existing file must start with the same
 * header; otherwise nothing is written and the error names the file and what to do (another
 * tool's perf.csv must not silently get rows with other columns). A file whose last byte is
 * not a newline (a foreign writer died mid-row) gets one before our rows.
 */
/* Appends field to out, quoted when it holds a comma, quote, CR or LF (quotes doubled). A
 * NULL field is written as empty. */
int rm_csv_quote(rm_buf *out, const char *field);

/* Appends one record: fields joined with commas, ended with "\n". */
int rm_csv_record(rm_buf *out, const char *const *fields, size_t n);

/* Appends n_rows rows of n_cols fields each (rows[r * n_cols + c]) to path with the rules
 * above. The header is compared column by column, so a file saved with CRLF line ends (or
 * other quoting) is ours too; rows then end with CRLF as its lines do. */
int rm_csv_append(const char *path, const char *const *header, size_t n_cols,
		  const char *const *rows, size_t n_rows, rm_error *err);

/* Whether rows can be appended to path: it can be opened for appending, or created in its
 * folder when there is none, and starts with header when it is not empty. Run before the
 * work whose rows would go there, so that a long benchmark's result is never lost at the end. */
int rm_csv_check(const char *path, const char *const *header, size_t n_cols, rm_error *err);

/* The same, where an existing file may have another tool's header: when required (column
 * names, NULL-terminated) is not NULL, a header that names each of them once is kept and
 * every row fills the file's columns by name (a column of the file we do not have stays
 * empty). *file_cols (NULL-terminated, caller frees with rm_strv_free; may be NULL) receives
 * the file's columns when they are not ours, else NULL. */
int rm_csv_append_by_name(const char *path, const char *const *header, size_t n_cols,
			  const char *const *rows, size_t n_rows, const char *const *required,
			  char ***file_cols, rm_error *err);
int rm_csv_check_by_name(const char *path, const char *const *header, size_t n_cols,
			 const char *const *required, char ***file_cols, rm_error *err);

/*
 * Streaming reader for one CSV record at a time (RFC 4180: quoted fields may hold commas,
 * quotes and newlines). Used to read multiple_results files and earlier perf.csv rows. A
 * line ends at "\n", "\r\n" or a lone "\r" (old Mac files).
 * Returns 1 and fills *fields (NULL-terminated, free with rm_strv_free) and *n, 0 at end of
 * file, -1 on a record longer than the reader's ceiling (1 MiB) or a read error.
 */
int rm_csv_read_record(FILE *f, char ***fields, size_t *n, rm_error *err);
/* The same, and *open_quote says whether the file ended inside a quoted field (a stray '"'
 * swallowed the rest of it). */
int rm_csv_read_record_open(FILE *f, char ***fields, size_t *n, int *open_quote, rm_error *err);
/* One physical line as a record: a line end closes a quoted field left open (*open_quote set).
 * For re-reading what a stray '"' swallowed, line by line. */
int rm_csv_read_line_record(FILE *f, char ***fields, size_t *n, int *open_quote, rm_error *err);

/*
 * Summary statistics over repeated runs (--repeat N), and the MLPerf Training score rule.
 */
typedef struct rm_stats {
	size_t n;
	double mean;
	double median; /* mean of the two middle values for even n */
	double stddev; /* sample standard deviation (n - 1); 0 when n == 1 */
	double min;
	double max;
} rm_stats;

/* Non-finite values are skipped (n counts the finite ones). Returns -1 when none is left. */
int rm_stats_compute(const double *v, size_t n, rm_stats *out);

/*
 * MLPerf Training's rule for a score from several runs of time to train: drop the fastest
 * and the slowest, average the rest. MLPerf asks for 10 runs (some benchmarks 5+); this
 * needs at least 3 finite values and fills err otherwise. *used receives how many values
 * were averaged.
 */
int rm_score_mlperf(const double *v, size_t n, double *score, size_t *used, rm_error *err);

#endif
