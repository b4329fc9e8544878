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

/* perf.csv: madengine's 29 columns in their order, then ours (always at the end, so that
 * tools that read madengine's columns by position keep working). */
enum rm_perf_col {
	RM_COL_MODEL,
	RM_COL_NGPUS,
	RM_COL_NNODES,
	RM_COL_GPUS_PER_NODE,
	RM_COL_PRECISION,
	RM_COL_PIPELINE,
	RM_COL_ARGS,
	RM_COL_TAGS,
	RM_COL_DOCKERFILE,
	RM_COL_BASE_DOCKER,
	RM_COL_DOCKER_SHA,
	RM_COL_IMAGE,
	RM_COL_GIT_COMMIT,
	RM_COL_MACHINE,
	RM_COL_DEPLOYMENT,
	RM_COL_LAUNCHER,
	RM_COL_ARCH,
	RM_COL_PERFORMANCE,
	RM_COL_METRIC,
	RM_COL_RELATIVE_CHANGE,
	RM_COL_STATUS,
	RM_COL_BUILD_DURATION,
	RM_COL_TEST_DURATION,
	RM_COL_DATANAME,
	RM_COL_DATA_PROVIDER,
	RM_COL_DATA_SIZE,
	RM_COL_DATA_DOWNLOAD,
	RM_COL_BUILD_NUMBER,
	RM_COL_RUN_OPTIONS,
	/* ours */
	RM_COL_TIMESTAMP,
	RM_COL_RUN_ID,
	RM_COL_REPEAT,
	RM_COL_REASON,
	RM_COL_TUNABLEOP,
	RM_COL_EXIT_CODE,
	RM_COL_LOG_FILE,
	RM_PERF_COLS
};

extern const char *const rm_perf_header[RM_PERF_COLS];

/* One perf.csv row: a cell per column (NULL is written as empty); the strings are borrowed. */
typedef struct rm_perf_row {
	const char *cell[RM_PERF_COLS];
} rm_perf_row;

/*
 * relative_change: the percent change of performance against the last SUCCESS row of the
 * perf.csv at path with the same model, metric, Dockerfile, machine and GPU architecture
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

/* A name usable in a file name: '/' and ' ' become '_'. Caller frees. */
char *rm_file_safe(const char *name);

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
 * quotes and newlines). Used to read multiple_results files and earlier perf.csv rows.
 * Returns 1 and fills *fields (NULL-terminated, free with rm_strv_free) and *n, 0 at end of
 * file, -1 on a record longer than the reader's ceiling (1 MiB) or a read error.
 */
int rm_csv_read_record(FILE *f, char ***fields, size_t *n, rm_error *err);

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
