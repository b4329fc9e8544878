/*
 * Reading what runs wrote, for everything that comes after a run (the regression gate,
 * JUnit, the Markdown summary, the HTML report, database export): perf.csv rows as structs.
 * Works from the files alone; knows nothing of the runner. perf_<model>.csv's rows are
 * rm/metrics.h's; the rest of src/results/ has a header per concept (rm/direction.h,
 * rm/detect.h, rm/history.h, rm/accepted.h, rm/references.h, rm/gate.h, rm/junit.h,
 * rm/markdown.h, rm/text.h, rm/manifest.h, rm/archive.h, rm/html.h).
 *
 * perf.csv columns are found by name, so run_models' files (madengine's 29 columns, then
 * ours) and madengine's own perf.csv both read. A header without the columns model,
 * performance, metric and status is refused, the error naming the file and the missing
 * column (another tool's CSV must not be read as results). Rows keep file order, which in an
 * append-only perf.csv is time order.
 *
 * Ownership: an rm_results owns all its strings (and those of its rows, held in its store);
 * rm_results_release frees them. The col[] pointers of a row are never NULL (a column the
 * file lacks reads as "").
 */
#ifndef RM_RESULTS_H
#define RM_RESULTS_H

#include <stddef.h>
#include <stdio.h>

#include "rm/report.h"
#include "rm/util.h"

/* The perf.csv columns (enum rm_perf_col, rm_perf_header) are rm/report.h's. */

typedef struct rm_result {
	const char *col[RM_PERF_COLS]; /* every column as text, "" when absent */
	double performance;	       /* NAN when empty or not a number */
	double test_s;		       /* test_duration; NAN when not a number */
	long repeat;		       /* >= 1; 1 when absent */
	long attempt;		       /* >= 1; 1 when absent (run --retries) */
	/* A later attempt of the same run (run id, Dockerfile, repeat) of the same model
	 * follows in the set: this row's result was tried again (rm_results_add marks it). */
	int retried;
	long line;	  /* record number in its file (the header is 1) */
	const char *file; /* the file it came from (points into rm_results.files) */
} rm_result;

/* The storage behind the rows (results.c): their strings and the array's room. */
typedef struct rm_results_store rm_results_store;

typedef struct rm_results {
	rm_result *rows;
	size_t n;
	char **files; /* NULL-terminated, every file read */
	size_t n_files;
	rm_results_store *store; /* NULL until a row is added */
} rm_results;

#define RM_RESULTS_INIT                                                                            \
	{                                                                                          \
		.rows = NULL, .n = 0, .files = NULL, .n_files = 0, .store = NULL                   \
	}

/*
 * Appends the rows of the perf.csv at path whose run_id equals run_id (every row when
 * run_id is NULL). Returns 0, or -1 with err naming the file (missing file: RM_ERR_IO;
 * foreign header or a record over 1 MiB: RM_ERR_INPUT, with the record number).
 */
int rm_results_read(rm_results *res, const char *path, const char *run_id, rm_error *err);

/*
 * Streams the rows of the perf.csv at path (run_id as above) to fn, one at a time: the row
 * and its strings live only during the call (rm_results_add copies one to keep it), so a
 * file of any size is read in constant memory. fn returns non-zero to stop early. Errors
 * as rm_results_read.
 */
typedef int (*rm_result_fn)(void *ctx, rm_result *row);
int rm_results_each(const char *path, const char *run_id, rm_result_fn fn, void *ctx,
		    rm_error *err);
/* The same from an open stream; name is the file's in messages and rows. */
int rm_results_each_file(FILE *f, const char *name, const char *run_id, rm_result_fn fn, void *ctx,
			 rm_error *err);

/*
 * Appends a row made of n (column, value) pairs (columns not named read as ""), e.g. rows
 * read back from a database. The strings are copied. file/line describe where it came from.
 * A row of attempt N > 1 marks the earlier attempts of its run in res as retried.
 */
void rm_results_add(rm_results *res, const char *const *names, const char *const *values, size_t n,
		    const char *file, long line);

/*
 * The configuration a row without a key (written before configurations, or by madengine)
 * carries in MAD's cells: the narrow layout's cell columns (n_cells names and values, e.g.
 * inp, out, max_concurrency) and the cell in its metric's text (rm/config.h). Returns 1 with
 * *config (the `config` cell) and *key (its key, over the model and the cell) filled, the
 * caller freeing both; 0 with both NULL when the row has a key or no cell. Reading a perf.csv
 * does this for every row; a database's rows are read the same way.
 */
int rm_result_config(const rm_result *r, const char *const *cell_names,
		     const char *const *cell_values, size_t n_cells, char **config, char **key);

/* Fills a row's performance, test_s, repeat and attempt from its col[]. */
void rm_result_numbers(rm_result *r);

void rm_results_release(rm_results *res);

/* Whether row b is a later attempt of the run of row a: the same run id, Dockerfile and
 * repeat, the same model (or a multiple_results row "<model>_<row>" of it), a higher
 * attempt. */
int rm_result_retries(const rm_result *a, const rm_result *b);

/* The run_id of the last row that has one (the newest run of an append-only file), or
 * NULL. */
const char *rm_results_last_run(const rm_results *res);

/* The column index of a perf.csv column name, or -1. */
int rm_perf_col_index(const char *name);

/* The folder of a file path ("." when it has none); caller frees. */
char *rm_dirname(const char *path);

#endif
