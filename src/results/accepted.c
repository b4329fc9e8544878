/*
 * Accepted changes in a perf.csv's companion file (rm/results.h): PERF.accepted.csv, read
 * with the CSV reader, written with the locked append perf.csv uses.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rm/report.h"
#include "rm/accepted.h"
#include "rm/history.h"
#include "rm/util.h"

const char *const rm_accepted_header[RM_ACCEPTED_COLS] = {
    "model",	 "metric", "docker_file", "gpu_architecture", "n_gpus",	   "machine_name",
    "since_run", "since",  "accepted_at", "reason",	      "config_key"};

/* Files written before configurations have the first ten columns. */
#define OLD_COLS 10

char *rm_accepted_path(const char *perf_csv)
{
	size_t n = strlen(perf_csv);

	if (rm_ends_with(perf_csv, ".csv"))
		n -= 4;
	return rm_xasprintf("%.*s.accepted.csv", (int)n, perf_csv);
}

/* Whether a header is the companion file's, of now or of before configurations. */
static int accepted_header(char **rec, size_t n)
{
	if (n != OLD_COLS && n != RM_ACCEPTED_COLS)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (strcmp(rec[i], rm_accepted_header[i]))
			return 0;
	return 1;
}

/* Opens the companion file and reads its header: 1 with *f positioned at the first row and
 * *cols its columns, 0 when there is none, -1 on an error. */
static int accepted_open(const char *path, FILE **f, size_t *cols, rm_error *err)
{
	char **rec = NULL;
	size_t n = 0;
	int rc;

	*f = fopen(path, "r");
	if (!*f)
		return errno == ENOENT
			   ? 0
			   : rm_error_sys(err, RM_ERR_IO, errno, "cannot open '%s'", path);
	rc = rm_csv_read_record(*f, &rec, &n, err);
	if (rc == 1 && n && !strncmp(rec[0], "\xEF\xBB\xBF", 3)) {
		rm_warn("'%s' starts with a UTF-8 byte order mark (a spreadsheet's \"CSV UTF-8\"): "
			"read without it",
			path);
		memmove(rec[0], rec[0] + 3, strlen(rec[0] + 3) + 1);
	}
	if (rc == 1 && !accepted_header(rec, n))
		rc = rm_error_set(err, RM_ERR_INPUT,
				  "'%s' does not start with the accepted changes' header (%s,%s,"
				  "...): move it away or fix it",
				  path, rm_accepted_header[0], rm_accepted_header[1]);
	else if (rc < 0)
		rm_error_wrap(err, "reading '%s'", path);
	rm_strv_free(rec);
	*cols = n;
	if (rc < 0) {
		fclose(*f);
		*f = NULL;
		return -1;
	}
	if (rc == 0) {
		fclose(*f);
		*f = NULL;
	}
	return rc;
}

int rm_accepted_read(rm_baseline *b, const char *perf_csv, rm_error *err)
{
	char *path = rm_accepted_path(perf_csv), **rec = NULL;
	FILE *f = NULL;
	size_t n = 0, cols = 0;
	long line = 1;
	int rc = accepted_open(path, &f, &cols, err), ret = rc < 0 ? -1 : 0;

	for (long start = f ? ftell(f) : -1; rc == 1; start = ftell(f)) {
		int open = 0;
		if ((rc = rm_csv_read_record_open(f, &rec, &n, &open, err)) != 1)
			break;
		line++;
		/* An unterminated quote would swallow the acceptances after it: that line is
		 * read alone (a line end closing the quote) and named, and the rest as usual. */
		if ((open || n != cols) && start >= 0 && fseek(f, start, SEEK_SET) == 0) {
			rm_warn(
			    "'%s' line %ld: a '\"' opens a field that is not closed on its "
			    "line (it would swallow the acceptances after it): read as one line",
			    path, line);
			rm_strv_free(rec);
			rec = NULL;
			if ((rc = rm_csv_read_line_record(f, &rec, &n, &open, err)) != 1)
				break;
		}
		if (n == cols && rec[0][0])
			rm_history_accept(b, rec[0], rec[1], rec[2], rec[3], rec[4], rec[5],
					  n > OLD_COLS ? rec[10] : "", rec[6], rec[7]);
		else if (n != 1 || rec[0][0])
			rm_warn("'%s' line %ld has %zu fields, not %zu: skipped (a stray '\"'?)",
				path, line, n, cols);
		rm_strv_free(rec);
		rec = NULL;
	}
	if (rc < 0 && f) {
		ret = rm_error_wrap(err, "'%s' record %ld", path, line + 1);
	}
	rm_strv_free(rec);
	if (f)
		fclose(f);
	free(path);
	return ret;
}

/* A companion file written before configurations gets their column (its rows: any
 * configuration), through a copy renamed over it, before a row that names one is added. */
static int accepted_upgrade(const char *path, rm_error *err)
{
	char *tmp = rm_xasprintf("%s.upgrade.tmp", path), **rec = NULL;
	const char **rows = NULL;
	char ***keep = NULL;
	size_t n = 0, cols = 0, nrows = 0;
	FILE *f = NULL;
	int rc = accepted_open(path, &f, &cols, err), ret = -1;

	if (rc <= 0 || cols == RM_ACCEPTED_COLS) {
		ret = rc < 0 ? -1 : 0;
		goto out;
	}
	while ((rc = rm_csv_read_record(f, &rec, &n, err)) == 1) {
		if (n != OLD_COLS) {
			rm_strv_free(rec);
			rec = NULL;
			continue;
		}
		keep = rm_xrealloc(keep, (nrows + 1) * sizeof(*keep));
		keep[nrows] = rec;
		rows = rm_xrealloc(rows, (nrows + 1) * RM_ACCEPTED_COLS * sizeof(*rows));
		for (size_t c = 0; c < RM_ACCEPTED_COLS; c++)
			rows[nrows * RM_ACCEPTED_COLS + c] = c < OLD_COLS ? rec[c] : "";
		nrows++;
		rec = NULL;
	}
	unlink(tmp);
	if (rc == 0 &&
	    rm_csv_append(tmp, rm_accepted_header, RM_ACCEPTED_COLS, rows, nrows, err) == 0 &&
	    (ret = rename(tmp, path)) != 0)
		ret = rm_error_sys(err, RM_ERR_IO, errno, "cannot replace '%s'", path);
	if (ret < 0)
		unlink(tmp);
out:
	for (size_t i = 0; i < nrows; i++)
		rm_strv_free(keep[i]);
	free(keep);
	free(rows);
	rm_strv_free(rec);
	if (f)
		fclose(f);
	free(tmp);
	return ret;
}

int rm_accepted_append(const char *perf_csv, const rm_acceptance *a, size_t n, rm_error *err)
{
	char *path = rm_accepted_path(perf_csv);
	const char **rows = rm_xcalloc(n ? n * RM_ACCEPTED_COLS : 1, sizeof(*rows));
	int ret = accepted_upgrade(path, err);

	for (size_t i = 0; i < n; i++) {
		const char *v[RM_ACCEPTED_COLS] = {a[i].model,
						   a[i].metric,
						   a[i].docker_file,
						   a[i].arch,
						   a[i].n_gpus,
						   a[i].machine,
						   a[i].since_run,
						   a[i].since_start,
						   a[i].accepted_at,
						   a[i].reason,
						   a[i].config_key ? a[i].config_key : ""};
		memcpy(rows + i * RM_ACCEPTED_COLS, v, sizeof(v));
	}
	if (ret == 0)
		ret = rm_csv_append(path, rm_accepted_header, RM_ACCEPTED_COLS, rows, n, err);
	free(rows);
	free(path);
	return ret;
}
