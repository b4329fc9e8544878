/*
 * Reading what runs wrote, for everything that comes after a run (the regression gate,
 * JUnit, the Markdown summary, the HTML report, database export): perf.csv rows and
 * perf_<model>.csv metrics as structs. Works from the files alone; knows nothing of the
 * runner.
 *
 * perf.csv columns are found by name, so run_models' files (madengine's 29 columns, then
 * ours) and madengine's own perf.csv both read. A header without the columns model,
 * performance, metric and status is refused, the error naming the file and the missing
 * column (another tool's CSV must not be read as results). Rows keep file order, which in an
 * append-only perf.csv is time order.
 *
 * Ownership: an rm_results owns all its strings; rm_results_release frees them. The col[]
 * pointers of a row are never NULL (a column the file lacks reads as "").
 */
#ifndef RM_RESULTS_H
#define RM_RESULTS_H

#include <stddef.h>

#include "rm/error.h"
#include "rm/report.h"

/* The perf.csv columns (enum rm_perf_col, rm_perf_header) are rm/report.h's. */

/* perf_<model>.csv's header. */
extern const char *const rm_metric_header[8];

typedef struct rm_result {
	const char *col[RM_PERF_COLS]; /* every column as text, "" when absent */
	double performance;	       /* NAN when empty or not a number */
	double test_s;		       /* test_duration; NAN when not a number */
	long repeat;		       /* >= 1; 1 when absent */
	long line;		       /* record number in its file (the header is 1) */
	const char *file;	       /* the file it came from (points into rm_results.files) */
	char **fields_;		       /* owned storage behind col[] */
} rm_result;

typedef struct rm_results {
	rm_result *rows;
	size_t n;
	size_t cap_;
	char **files; /* NULL-terminated, every file read */
	size_t n_files;
} rm_results;

#define RM_RESULTS_INIT                                                                            \
	{                                                                                          \
		NULL, 0, 0, NULL, 0                                                                \
	}

/*
 * Appends the rows of the perf.csv at path whose run_id equals run_id (every row when
 * run_id is NULL). Returns 0, or -1 with err naming the file (missing file: RM_ERR_IO;
 * foreign header or a record over 1 MiB: RM_ERR_INPUT, with the record number).
 */
int rm_results_read(rm_results *res, const char *path, const char *run_id, rm_error *err);

/*
 * Appends a row made of n (column, value) pairs (columns not named read as ""), e.g. rows
 * read back from a database. The strings are copied. file/line describe where it came from.
 */
void rm_results_add(rm_results *res, const char *const *names, const char *const *values, size_t n,
		    const char *file, long line);

void rm_results_release(rm_results *res);

/* The run_id of the last row that has one (the newest run of an append-only file), or
 * NULL. */
const char *rm_results_last_run(const rm_results *res);

/* The column index of a perf.csv column name, or -1. */
int rm_perf_col_index(const char *name);

/* One perf_<model>.csv row: a metric the parser saw. */
typedef struct rm_metric_row {
	const char *timestamp, *run_id, *model, *metric, *unit, *aggregate;
	double value; /* NAN when not a number */
	long step;    /* -1 when none */
	long repeat;  /* occurrence of this (run, model, metric, aggregate, step): 1, 2, ... */
	char **fields_;
} rm_metric_row;

typedef struct rm_metrics {
	rm_metric_row *rows;
	size_t n;
	size_t cap_;
} rm_metrics;

#define RM_METRICS_INIT                                                                            \
	{                                                                                          \
		NULL, 0, 0                                                                         \
	}

/* Appends the rows of one perf_<model>.csv (run_id as for rm_results_read). */
int rm_metrics_read(rm_metrics *m, const char *path, const char *run_id, rm_error *err);

/*
 * Appends the rows of every perf_*.csv in dir whose header is perf_<model>.csv's
 * (perf_summary.csv and files of other shapes are passed over). A missing dir adds nothing.
 */
int rm_metrics_read_dir(rm_metrics *m, const char *dir, const char *run_id, rm_error *err);

void rm_metrics_release(rm_metrics *m);

/* The folder of a file path ("." when it has none); caller frees. */
char *rm_dirname(const char *path);

#endif
