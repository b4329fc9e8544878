/*
 * Accepted changes in a perf.csv's companion file (rm/results.h): PERF.accepted.csv, read
 * with the CSV reader, written with the locked append perf.csv uses.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rm/report.h"
#include "rm/accepted.h"
#include "rm/history.h"
#include "rm/util.h"

const char *const rm_accepted_header[10] = {
    "model",	    "metric",	 "docker_file", "gpu_architecture", "n_gpus",
    "machine_name", "since_run", "since",	"accepted_at",	    "reason"};

char *rm_accepted_path(const char *perf_csv)
{
	size_t n = strlen(perf_csv);

	if (rm_ends_with(perf_csv, ".csv"))
		n -= 4;
	return rm_xasprintf("%.*s.accepted.csv", (int)n, perf_csv);
}

int rm_accepted_read(rm_baseline *b, const char *perf_csv, rm_error *err)
{
	char *path = rm_accepted_path(perf_csv), **rec = NULL;
	FILE *f = fopen(path, "r");
	size_t n = 0;
	long line = 1;
	int rc, ret = -1;

	if (!f) {
		ret = errno == ENOENT
			  ? 0
			  : rm_error_sys(err, RM_ERR_IO, errno, "cannot open '%s'", path);
		free(path);
		return ret;
	}
	rc = rm_csv_read_record(f, &rec, &n, err);
	if (rc == 1 && n && !strncmp(rec[0], "\xEF\xBB\xBF", 3)) {
		rm_warn("'%s' starts with a UTF-8 byte order mark (a spreadsheet's \"CSV UTF-8\"): "
			"read without it",
			path);
		memmove(rec[0], rec[0] + 3, strlen(rec[0] + 3) + 1);
	}
	if (rc < 0 ||
	    (rc == 1 && (n != 10 || strcmp(rec[0], "model") || strcmp(rec[6], "since_run")))) {
		if (rc == 1)
			rm_error_set(err, RM_ERR_INPUT,
				     "'%s' does not start with the accepted changes' header (%s,%s,"
				     "...): move it away or fix it",
				     path, rm_accepted_header[0], rm_accepted_header[1]);
		else
			rm_error_wrap(err, "reading '%s'", path);
		goto out;
	}
	rm_strv_free(rec);
	rec = NULL;
	for (long start = ftell(f); rc == 1; start = ftell(f)) {
		int open = 0;
		if ((rc = rm_csv_read_record_open(f, &rec, &n, &open, err)) != 1)
			break;
		line++;
		/* An unterminated quote would swallow the acceptances after it: that line is
		 * read alone (a line end closing the quote) and named, and the rest as usual. */
		if ((open || n != 10) && start >= 0 && fseek(f, start, SEEK_SET) == 0) {
			rm_warn("'%s' line %ld: a '\"' opens a field that is not closed on its "
				"line (it "
				"would swallow the acceptances after it): read as one line",
				path, line);
			rm_strv_free(rec);
			rec = NULL;
			if ((rc = rm_csv_read_line_record(f, &rec, &n, &open, err)) != 1)
				break;
		}
		if (n == 10 && rec[0][0])
			rm_history_accept(b, rec[0], rec[1], rec[2], rec[3], rec[4], rec[5], rec[6],
					  rec[7]);
		else if (n != 1 || rec[0][0])
			rm_warn("'%s' line %ld has %zu fields, not 10: skipped (a stray '\"'?)",
				path, line, n);
		rm_strv_free(rec);
		rec = NULL;
	}
	if (rc < 0) {
		rm_error_wrap(err, "'%s' record %ld", path, line + 1);
		goto out;
	}
	ret = 0;
out:
	rm_strv_free(rec);
	fclose(f);
	free(path);
	return ret;
}

int rm_accepted_append(const char *perf_csv, const rm_acceptance *a, size_t n, rm_error *err)
{
	char *path = rm_accepted_path(perf_csv);
	const char **rows = rm_xcalloc(n ? n * 10 : 1, sizeof(*rows));
	int ret;

	for (size_t i = 0; i < n; i++) {
		const char *v[10] = {
		    a[i].model,	  a[i].metric,	  a[i].docker_file, a[i].arch,	      a[i].n_gpus,
		    a[i].machine, a[i].since_run, a[i].since_start, a[i].accepted_at, a[i].reason};
		memcpy(rows + i * 10, v, sizeof(v));
	}
	ret = rm_csv_append(path, rm_accepted_header, 10, rows, n, err);
	free(rows);
	free(path);
	return ret;
}
