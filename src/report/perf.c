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
    "model", "n_gpus", "nnodes", "gpus_per_node", "training_precision", "pipeline", "args", "tags",
    "docker_file", "base_docker", "docker_sha", "docker_image", "git_commit", "machine_name",
    "deployment_type", "launcher", "gpu_architecture", "performance", "metric", "relative_change",
    "status", "build_duration", "test_duration", "dataname", "data_provider_type", "data_size",
    "data_download_duration", "build_number", "additional_docker_run_options",
    /* ours */
    "timestamp", "run_id", "repeat", "reason", "tunableop", "exit_code", "log_file"};

static const char *const metric_header[] = {"timestamp", "run_id", "model", "metric",
					    "value",	 "unit",   "step",  "aggregate"};

static int same(const char *file_cell, const char *ours)
{
	return !strcmp(file_cell, ours ? ours : "");
}

/* Whether an earlier perf.csv record is a baseline for row: the same model, metric,
 * Dockerfile, machine and GPU architecture, and a SUCCESS. */
static int is_baseline(char **rec, const rm_perf_row *row)
{
	return row->cell[RM_COL_METRIC] && !strcmp(rec[RM_COL_STATUS], "SUCCESS") &&
	       same(rec[RM_COL_MODEL], row->cell[RM_COL_MODEL]) &&
	       same(rec[RM_COL_METRIC], row->cell[RM_COL_METRIC]) &&
	       same(rec[RM_COL_DOCKERFILE], row->cell[RM_COL_DOCKERFILE]) &&
	       same(rec[RM_COL_MACHINE], row->cell[RM_COL_MACHINE]) &&
	       same(rec[RM_COL_ARCH], row->cell[RM_COL_ARCH]);
}

void rm_perf_relative_changes(const char *path, rm_perf_row *rows, size_t n, char **rel)
{
	FILE *f = fopen(path, "r");
	char **rec = NULL;
	size_t nf;
	rm_error err = RM_ERROR_INIT;
	double *last = rm_xcalloc(n ? n : 1, sizeof(*last));
	int *found = rm_xcalloc(n ? n : 1, sizeof(*found));

	/* One pass over the file for every row: perf.csv grows night after night, and a
	 * multiple_results model can have many rows. */
	while (f && rm_csv_read_record(f, &rec, &nf, &err) == 1) {
		double v;
		if (nf >= RM_PERF_COLS && rm_parse_double(rec[RM_COL_PERFORMANCE], &v) == 0) {
			for (size_t i = 0; i < n; i++) {
				if (is_baseline(rec, &rows[i])) {
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
		if (found[i] && last[i] != 0 && same("SUCCESS", rows[i].cell[RM_COL_STATUS]) &&
		    perf && rm_parse_double(perf, &now) == 0)
			rel[i] = rm_xasprintf("%+.2f", (now - last[i]) / fabs(last[i]) * 100.0);
		rows[i].cell[RM_COL_RELATIVE_CHANGE] = rel[i];
	}
	free(last);
	free(found);
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
	if (ret == 0)
		ret = rm_csv_check(path, rm_perf_header, RM_PERF_COLS, err);
	return ret < 0 ? rm_error_wrap(err, "output file") : 0;
}

int rm_perf_append(const char *path, const rm_perf_row *rows, size_t n, rm_error *err)
{
	return rm_csv_append(path, rm_perf_header, RM_PERF_COLS, (const char *const *)rows, n, err);
}

char *rm_perf_sibling(const char *perf_path, const char *name)
{
	const char *slash = strrchr(perf_path, '/');
	if (!slash)
		return rm_xstrdup(name);
	return rm_xasprintf("%.*s/%s", (int)(slash - perf_path), perf_path, name);
}

char *rm_file_safe(const char *name)
{
	char *s = rm_xstrdup(name);
	for (char *p = s; *p; p++)
		if (*p == '/' || *p == ' ')
			*p = '_';
	return s;
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
