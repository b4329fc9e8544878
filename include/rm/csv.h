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
#ifndef RM_CSV_H
#define RM_CSV_H

#include <stddef.h>

#include "rm/error.h"
#include "rm/util.h"

/* Appends field to out, quoted when it holds a comma, quote, CR or LF (quotes doubled). A
 * NULL field is written as empty. */
int rm_csv_quote(rm_buf *out, const char *field);

/* Appends one record: fields joined with commas, ended with "\n". */
int rm_csv_record(rm_buf *out, const char *const *fields, size_t n);

/* Appends n_rows rows of n_cols fields each (rows[r * n_cols + c]) to path with the rules
 * above. */
int rm_csv_append(const char *path, const char *const *header, size_t n_cols,
		  const char *const *rows, size_t n_rows, rm_error *err);

/* Whether rows can be appended to path: it can be opened for appending, or created in its
 * folder when there is none, and starts with header when it is not empty. Run before the
 * work whose rows would go there, so that a long benchmark's result is never lost at the end. */
int rm_csv_check(const char *path, const char *const *header, size_t n_cols, rm_error *err);

/*
 * Streaming reader for one CSV record at a time (RFC 4180: quoted fields may hold commas,
 * quotes and newlines). Used to read multiple_results files and earlier perf.csv rows.
 * Returns 1 and fills *fields (NULL-terminated, free with rm_strv_free) and *n, 0 at end of
 * file, -1 on a record longer than the reader's ceiling (1 MiB) or a read error.
 */
#include <stdio.h>
int rm_csv_read_record(FILE *f, char ***fields, size_t *n, rm_error *err);

#endif
