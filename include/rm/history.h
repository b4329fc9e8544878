/*
 * The history (src/results/baseline.c): what the gate, the HTML report and relative_change
 * judge a run against. Per series (model, metric, Dockerfile, GPU architecture, GPU count,
 * machine, configuration key: rm/config.h) a bounded list of its runs, fed one perf.csv row at a
 * time, so that memory grows with the number of series, not of rows. Each run of a series is one
 * point (the mean and spread of its SUCCESS values, its FAILURE rows counted). Runs are numbered in
 * the order they first appear (an append-only perf.csv is in time order; a database is read by
 * start time, then export order).
 *
 * A series keeps its last RM_DETECT_KEEP(window) runs for the detector; with `plot`
 * set it keeps up to that many points, older runs being merged pairwise as more come (the
 * HTML report's trends: recent runs exact, older ones coarser).
 *
 * The "baseline" of the earlier gate is the latest valued run of a series (rm_baseline_find,
 * rm_baseline_change: relative_change in perf.csv).
 */
#ifndef RM_HISTORY_H
#define RM_HISTORY_H

#include <stddef.h>

#include "rm/detect.h"
#include "rm/results.h"
#include "rm/util.h"

typedef struct rm_baseline rm_baseline;

/* The fewest points a series with `plot` set keeps for a window of w. */
#define RM_HISTORY_PLOT_MIN(w) (2 * RM_DETECT_KEEP(w))

typedef struct rm_history_opts {
	size_t window; /* runs kept per series for the detector; 0: RM_DETECT_WINDOW */
	/* > 0: keep up to this many points per series, merging older ones; raised to
	 * RM_HISTORY_PLOT_MIN(window) when below it (the detector's runs stay exact) */
	size_t plot;
	/* Rows of this run are left out, and of the runs that first appear after it (a
	 * history is what came before the run judged). NULL: none. */
	const char *before_run;
	/* Keep the rows of the run that appeared last (rm_history_latest). */
	int keep_latest;
} rm_history_opts;

#define RM_HISTORY_OPTS_INIT                                                                       \
	{                                                                                          \
		.window = 0, .plot = 0, .before_run = NULL, .keep_latest = 0                       \
	}

/* A run of the history. */
typedef struct rm_run_info {
	const char *id;
	const char *start;  /* its earliest row timestamp, "" when none */
	const char *commit; /* the models folder's git commit of its first row that has one */
} rm_run_info;

/* One run of a series (or, in a plot, several merged runs). */
typedef struct rm_hpoint {
	double mean, m2;  /* of its SUCCESS values (Welford: m2 = sum of squared deviations) */
	unsigned n;	  /* SUCCESS values; 0 when the run only failed */
	unsigned failed;  /* FAILURE rows */
	size_t run;	  /* rm_history_run index */
	size_t run_first; /* a merged point: the first run it covers (else == run) */
} rm_hpoint;

/* A series as the history shows it; the history keeps more of it (baseline.c). */
typedef struct rm_hseries {
	const char *model, *metric, *docker_file, *arch, *n_gpus, *machine;
	const char *config_key; /* "" for rows written before configurations */
	const char *config;	/* the parameters (the first row's `config` cell), "" when none */
	rm_hpoint *p;		/* oldest first */
	size_t n;
	size_t n_runs, n_failed_runs; /* every run seen, and those with a FAILURE row */
} rm_hseries;

rm_baseline *rm_history_new(const rm_history_opts *o);

/* One perf.csv row (any status). */
void rm_history_add(rm_baseline *b, const rm_result *row);

/* Streams the rows of the perf.csv at path into b (rm_results_each). */
int rm_history_read_csv(rm_baseline *b, const char *path, rm_error *err);

/* Streams the rows of one metric of every perf_<model>.csv in dir into b, as series of
 * (model, metric) without a Dockerfile, architecture or machine (a missing dir adds
 * nothing): e.g. each model's gpu_power_avg_w per run over a history. */
int rm_history_read_metric_dir(rm_baseline *b, const char *dir, const char *metric, rm_error *err);

size_t rm_history_n_series(const rm_baseline *b);
const rm_hseries *rm_history_series_at(const rm_baseline *b, size_t i);
size_t rm_history_n_runs(const rm_baseline *b);
const rm_run_info *rm_history_run(const rm_baseline *b, size_t i);
/* The index of a run id, or RM_DETECT_NONE. */
size_t rm_history_run_index(const rm_baseline *b, const char *id);

/*
 * The series of a machine configuration: the same machine's when there is one, else the
 * one whose latest run is the newest among the machines (CI runners change host names).
 * Model, metric, Dockerfile, GPU architecture, GPU count and configuration key must match
 * (a configuration with no history has none: it is never compared with another). NULL:
 * none.
 */
const rm_hseries *rm_history_find(const rm_baseline *b, const char *model, const char *metric,
				  const char *docker_file, const char *arch, const char *n_gpus,
				  const char *machine, const char *config_key);

/*
 * The latest run (the newest start time; of equal ones, the last to appear) and, with
 * keep_latest, its rows. *complete is 0 when the latest run is not the one that appeared
 * last (files given out of time order): read its rows again by run id. NULL: no runs.
 */
const char *rm_history_latest(const rm_baseline *b, const rm_results **rows, int *complete);

/* A series' point as the detector takes it. */
rm_point rm_hpoint_value(const rm_hpoint *p);

/*
 * Accepted changes ("intended since run X"): a record per key, empty fields matching any
 * value. rm_history_accepted gives, for a series, the latest acceptance's run and start
 * time (NULL when none): the gate judges only the runs from there on.
 */
void rm_history_accept(rm_baseline *b, const char *model, const char *metric,
		       const char *docker_file, const char *arch, const char *n_gpus,
		       const char *machine, const char *config_key, const char *since_run,
		       const char *since_start);
const char *rm_history_accepted(const rm_baseline *b, const rm_hseries *s, const char **start);

/* The index of the first point of s the gate judges from: after the acceptance, if any. */
size_t rm_history_from(const rm_baseline *b, const rm_hseries *s);

/* Baseline: the earlier API, for relative_change and the two-run gate. */

/* The values a key had in its latest earlier run (several when that run had repeats). */
typedef struct rm_baseline_entry {
	const char *model, *metric, *docker_file, *arch, *machine, *run_id;
	double *values;
	size_t n;
} rm_baseline_entry;

/* A baseline made from rows in memory (history), leaving out exclude_run_id. Rows later in
 * the array are newer. */
rm_baseline *rm_baseline_from_results(const rm_results *rows, const char *exclude_run_id);

/* For sources that feed values one at a time, oldest first. */
rm_baseline *rm_baseline_new(void);
void rm_baseline_add(rm_baseline *b, const char *model, const char *metric, const char *docker_file,
		     const char *arch, const char *machine, const char *run_id, double value);
/* Builds the lookup index; call once after the last add. */
void rm_baseline_seal(rm_baseline *b);

/*
 * The baseline of a key: the latest earlier run that has SUCCESS values for the same model,
 * metric, Dockerfile, GPU architecture and configuration key, from the same machine when
 * the baseline has one, else from any machine. NULL when there is none.
 */
const rm_baseline_entry *rm_baseline_find(const rm_baseline *b, const char *model,
					  const char *metric, const char *docker_file,
					  const char *arch, const char *machine,
					  const char *config_key);

/* Number of keys with a valued run. */
size_t rm_baseline_size(const rm_baseline *b);

/*
 * relative_change for one perf.csv row (as the runner writes it): "%+.2f" of the row's value
 * against the mean of its baseline, into buf. Returns 0, or 1 leaving buf "" when the row
 * has no value or no baseline (or the baseline mean is 0).
 */
int rm_baseline_change(const rm_baseline *b, const char *model, const char *metric,
		       const char *docker_file, const char *arch, const char *machine,
		       const char *config_key, double value, char *buf, size_t size);

void rm_baseline_free(rm_baseline *b);

#endif
