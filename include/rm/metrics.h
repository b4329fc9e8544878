/*
 * perf_<model>.csv rows read back (src/results/results.c): every metric a parser saw, one
 * row per metric, aggregate and step of a run, for JUnit properties and database export.
 *
 * Ownership: an rm_metrics owns its rows' strings (held in its store);
 * rm_metrics_release frees them.
 */
#ifndef RM_METRICS_H
#define RM_METRICS_H

#include <stddef.h>

#include "rm/util.h"

/* perf_<model>.csv's header. */
extern const char *const rm_metric_header[8];

/* One perf_<model>.csv row: a metric the parser saw. */
typedef struct rm_metric_row {
	const char *timestamp, *run_id, *model, *metric, *unit, *aggregate;
	double value; /* NAN when not a number */
	long step;    /* -1 when none */
	long repeat;  /* occurrence of this (run, model, metric, aggregate, step): 1, 2, ... */
} rm_metric_row;

/* The storage behind the rows (results.c): their strings and the array's room. */
typedef struct rm_metrics_store rm_metrics_store;

typedef struct rm_metrics {
	rm_metric_row *rows;
	size_t n;
	rm_metrics_store *store; /* NULL until a row is read */
} rm_metrics;

#define RM_METRICS_INIT                                                                            \
	{                                                                                          \
		.rows = NULL, .n = 0, .store = NULL                                                \
	}

/* Appends the rows of one perf_<model>.csv whose run_id equals run_id (every row when
 * run_id is NULL). */
int rm_metrics_read(rm_metrics *m, const char *path, const char *run_id, rm_error *err);

/*
 * Appends the rows of every perf_*.csv in dir whose header is perf_<model>.csv's
 * (perf_summary.csv and files of other shapes are passed over). A missing dir adds nothing.
 */
int rm_metrics_read_dir(rm_metrics *m, const char *dir, const char *run_id, rm_error *err);
/* The same, only the rows of one metric (NULL: all), e.g. "gpu_power_avg_w" over a history:
 * memory for what is kept, not for every metric of every run. */
int rm_metrics_read_dir_named(rm_metrics *m, const char *dir, const char *run_id,
			      const char *metric, rm_error *err);

void rm_metrics_release(rm_metrics *m);

#endif
