/*
 * The perf.csv row layout, relative_change, and the per-metric rows of perf_<model>.csv.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rm/report.h"
#include "rm/util.h"

const char *const rm_perf_header[RM_PERF_COLS] = {
#define RM_PERF_CSV(name, csv, db, kind, decl, since) csv,
    RM_PERF_COLUMNS(RM_PERF_CSV)
#undef RM_PERF_CSV
};

const rm_perf_column rm_perf_columns[RM_PERF_COLS] = {
#define RM_PERF_ROW(name, csv, db, kind, decl, since) {csv, db, RM_PCOL_##kind, decl, since},
    RM_PERF_COLUMNS(RM_PERF_ROW)
#undef RM_PERF_ROW
};

static const char *const metric_header[] = {"timestamp", "run_id", "model", "metric",
					    "value",	 "unit",   "step",  "aggregate"};

/* madengine's and MAD's perf.csv name these; ours does too. */
static const char *const peer_required[] = {"model", "performance", "metric", "status", NULL};

static int same(const char *file_cell, const char *ours)
{
	return !strcmp(file_cell, ours ? ours : "");
}

/* The columns of an earlier record that decide a baseline, found by name in the file's
 * header (a perf.csv of madengine's or MAD's has them elsewhere, or not at all). */
static const int base_cols[] = {RM_COL_STATUS, RM_COL_PERFORMANCE, RM_COL_MODEL,
				RM_COL_METRIC, RM_COL_DOCKERFILE,  RM_COL_MACHINE,
				RM_COL_ARCH,   RM_COL_CONFIG_KEY};
#define N_BASE_COLS (sizeof(base_cols) / sizeof(base_cols[0]))

/* The cell of column base_cols[k] in rec, "" when the file has no such column. */
static const char *base_cell(char **rec, size_t nf, const int *at, size_t k)
{
	return at[k] >= 0 && (size_t)at[k] < nf ? rec[at[k]] : "";
}

/* Whether an earlier perf.csv record is a baseline for row: the same model, metric,
 * Dockerfile, machine, GPU architecture and configuration key, and a SUCCESS. */
static int is_baseline(char **rec, size_t nf, const int *at, const rm_perf_row *row)
{
	if (!row->cell[RM_COL_METRIC] ||
	    rm_status_of(base_cell(rec, nf, at, 0)) != RM_STATUS_SUCCESS)
		return 0;
	for (size_t k = 2; k < N_BASE_COLS; k++) {
		/* A file of madengine's or MAD's has no configuration column: its rows (and ours
		 * in it) are matched as before configurations. */
		if (base_cols[k] == RM_COL_CONFIG_KEY && at[k] < 0)
			continue;
		if (!same(base_cell(rec, nf, at, k), row->cell[base_cols[k]]))
			return 0;
	}
	return 1;
}

void rm_perf_relative_changes(const char *path, rm_perf_row *rows, size_t n, char **rel)
{
	FILE *f = fopen(path, "r");
	char **rec = NULL;
	size_t nf;
	rm_error err = RM_ERROR_INIT;
	double *last = rm_xcalloc(n ? n : 1, sizeof(*last));
	int *found = rm_xcalloc(n ? n : 1, sizeof(*found));
	int at[N_BASE_COLS];

	for (size_t k = 0; k < N_BASE_COLS; k++)
		at[k] = -1;
	/* the header: where the columns are */
	if (f && rm_csv_read_record(f, &rec, &nf, &err) == 1)
		for (size_t j = 0; j < nf; j++)
			for (size_t k = 0; k < N_BASE_COLS; k++)
				if (!strcmp(rec[j], rm_perf_header[base_cols[k]]))
					at[k] = (int)j;
	rm_strv_free(rec);
	rec = NULL;
	/* One pass over the file for every row: perf.csv grows night after night, and a
	 * multiple_results model can have many rows. */
	while (f && at[1] >= 0 && rm_csv_read_record(f, &rec, &nf, &err) == 1) {
		double v;
		if (rm_parse_double(base_cell(rec, nf, at, 1), &v) == 0) {
			for (size_t i = 0; i < n; i++) {
				if (is_baseline(rec, nf, at, &rows[i])) {
					last[i] = v;
					found[i] = 1;
				}
			}
		}
		rm_strv_free(rec);
		rec = NULL;
	}
	if (f)
		fclose(f);
	for (size_t i = 0; i < n; i++) {
		double now;
		const char *perf = rows[i].cell[RM_COL_PERFORMANCE];
		rel[i] = NULL;
		if (found[i] && last[i] != 0 &&
		    rm_status_of(rows[i].cell[RM_COL_STATUS]) == RM_STATUS_SUCCESS && perf &&
		    rm_parse_double(perf, &now) == 0)
			rel[i] = rm_xasprintf("%+.2f", (now - last[i]) / fabs(last[i]) * 100.0);
		rows[i].cell[RM_COL_RELATIVE_CHANGE] = rel[i];
	}
	free(last);
	free(found);
}

/* Whether a file's columns are ours as an older run_models wrote them: our first ones, in
 * order (columns are only ever added at the end). */
static int older_ours(char **cols)
{
	size_t n = rm_strv_len(cols);

	if (n <= RM_COL_LOG_FILE || n >= RM_PERF_COLS)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (strcmp(cols[i], rm_perf_header[i]))
			return 0;
	return 1;
}

int rm_perf_check(const char *path, rm_error *err)
{
	char *dir = rm_xstrdup(path), *slash = strrchr(dir, '/');
	int ret = 0;

	if (slash && slash != dir) {
		*slash = '\0';
		ret = rm_mkdirs(dir, err);
	}
	free(dir);
	if (ret == 0) {
		char **cols = NULL;
		ret = rm_csv_check_by_name(path, rm_perf_header, RM_PERF_COLS, peer_required, &cols,
					   err);
		if (ret == 0 && cols && older_ours(cols))
			rm_warn("'%s' has the header of an older run_models (%zu of today's %d "
				"columns): it is kept and each row fills its columns; the newer "
				"ones (%s, ...) go to perf_<model>.csv beside it. A new perf.csv "
				"gets them all",
				path, rm_strv_len(cols), RM_PERF_COLS,
				rm_perf_header[rm_strv_len(cols)]);
		else if (ret == 0 && cols)
			rm_warn(
			    "'%s' has another tool's header (madengine's or MAD's, %zu "
			    "columns): it is kept and each row fills the columns it names; "
			    "run_models' other columns (reason, run_id, log_file, ...) go to "
			    "perf_<model>.csv beside it, and the CI outputs (--junit, --html, "
			    "report ci) need run_models' own header: give -o a new file for them",
			    path, rm_strv_len(cols));
		rm_strv_free(cols);
	}
	return ret < 0 ? rm_error_wrap(err, "output file") : 0;
}

/* The cells of rows the file's columns (cols) left out: rows of perf_<model>.csv, metric
 * the column's name, value the cell as it is, aggregate "perf.csv". */
static int leftovers(const char *path, const char *model, const rm_perf_row *rows, size_t n,
		     char **cols, rm_error *err)
{
	enum { COLS = sizeof(metric_header) / sizeof(metric_header[0]) };
	const char **out = NULL;
	size_t n_out = 0;
	char *safe, *name, *file;
	int ret = 0;

	for (size_t i = 0; i < n; i++) {
		for (int c = 0; c < RM_PERF_COLS; c++) {
			const char *v = rows[i].cell[c], **row;
			size_t j;

			/* a perf_<model>.csv row carries its timestamp and run id itself */
			if (!v || !*v || c == RM_COL_TIMESTAMP || c == RM_COL_RUN_ID)
				continue;
			for (j = 0; cols[j] && strcmp(cols[j], rm_perf_header[c]); j++)
				;
			if (cols[j])
				continue;
			out = rm_xrealloc(out, (n_out + 1) * COLS * sizeof(*out));
			row = out + n_out++ * COLS;
			row[0] = rows[i].cell[RM_COL_TIMESTAMP];
			row[1] = rows[i].cell[RM_COL_RUN_ID];
			row[2] = rows[i].cell[RM_COL_MODEL];
			row[3] = rm_perf_header[c];
			row[4] = v;
			row[5] = NULL;
			row[6] = NULL;
			row[7] = "perf.csv";
		}
	}
	if (n_out) {
		safe = rm_file_safe(model);
		name = rm_xasprintf("perf_%s.csv", safe);
		file = rm_perf_sibling(path, name);
		ret = rm_csv_append(file, metric_header, COLS, out, n_out, err);
		free(file);
		free(name);
		free(safe);
	}
	free(out);
	return ret;
}

int rm_perf_append(const char *path, const char *model, const rm_perf_row *rows, size_t n,
		   rm_error *err)
{
	char **cols = NULL;
	int ret = rm_csv_append_by_name(path, rm_perf_header, RM_PERF_COLS,
					(const char *const *)rows, n, peer_required, &cols, err);

	if (ret == 0 && cols)
		ret = leftovers(path, model, rows, n, cols, err);
	rm_strv_free(cols);
	return ret;
}

char *rm_perf_sibling(const char *perf_path, const char *name)
{
	const char *slash = strrchr(perf_path, '/');
	if (!slash)
		return rm_xstrdup(name);
	return rm_xasprintf("%.*s/%s", (int)(slash - perf_path), perf_path, name);
}

static char *fmt_num(double v)
{
	return rm_xasprintf("%.10g", v);
}

int rm_metrics_check(const char *perf_path, const char *model, rm_error *err)
{
	enum { COLS = sizeof(metric_header) / sizeof(metric_header[0]) };
	char *safe = rm_file_safe(model), *name = rm_xasprintf("perf_%s.csv", safe);
	char *path = rm_perf_sibling(perf_path, name);
	int ret = rm_csv_check(path, metric_header, COLS, err);

	free(path);
	free(name);
	free(safe);
	return ret;
}

int rm_metrics_append(const char *perf_path, const char *timestamp, const char *run_id,
		      const char *model, const rm_parse_result *pr, rm_error *err)
{
	return rm_metrics_append_rows(perf_path, timestamp, run_id, model, NULL, pr, err);
}

int rm_metrics_append_rows(const char *perf_path, const char *timestamp, const char *run_id,
			   const char *model, const char *const *row_models,
			   const rm_parse_result *pr, rm_error *err)
{
	enum { COLS = sizeof(metric_header) / sizeof(metric_header[0]) };
	char *safe, *name, *path;
	const char **rows;
	char **vals;
	int ret;

	if (!pr->n)
		return 0;
	safe = rm_file_safe(model);
	name = rm_xasprintf("perf_%s.csv", safe);
	path = rm_perf_sibling(perf_path, name);
	rows = rm_xcalloc(pr->n * COLS, sizeof(*rows));
	vals = rm_xcalloc(pr->n * 2, sizeof(*vals));
	for (size_t i = 0; i < pr->n; i++) {
		const rm_metric *mt = &pr->metrics[i];
		const char **row = rows + i * COLS;
		vals[2 * i] = fmt_num(mt->value);
		vals[2 * i + 1] = mt->step >= 0 ? rm_xasprintf("%ld", mt->step) : NULL;
		row[0] = timestamp;
		row[1] = run_id;
		row[2] = row_models ? row_models[i] : model;
		row[3] = mt->name;
		row[4] = vals[2 * i];
		row[5] = mt->unit;
		row[6] = vals[2 * i + 1];
		row[7] = mt->aggregate;
	}
	ret = rm_csv_append(path, metric_header, COLS, rows, pr->n, err);
	for (size_t i = 0; i < pr->n * 2; i++)
		free(vals[i]);
	free(vals);
	free(rows);
	free(path);
	free(name);
	free(safe);
	return ret;
}
