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
#include <stdio.h>

#include "rm/doctor.h"
#include "rm/util.h"
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
 * Streams the rows of the perf.csv at path (run_id as above) to fn, one at a time: the row
 * and its strings live only during the call (fn may keep the strings by taking
 * row->fields_ and setting it to NULL), so a file of any size is read in constant memory.
 * fn returns non-zero to stop early. Errors as rm_results_read.
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
 */
void rm_results_add(rm_results *res, const char *const *names, const char *const *values, size_t n,
		    const char *file, long line);

/* Fills a row's performance, test_s and repeat from its col[]. */
void rm_result_numbers(rm_result *r);

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
/* The same, only the rows of one metric (NULL: all), e.g. "gpu_power_avg_w" over a history:
 * memory for what is kept, not for every metric of every run. */
int rm_metrics_read_dir_named(rm_metrics *m, const char *dir, const char *run_id,
			      const char *metric, rm_error *err);

void rm_metrics_release(rm_metrics *m);

/* The folder of a file path ("." when it has none); caller frees. */
char *rm_dirname(const char *path);

/*
 * The regression gate: which way each metric should go, the baseline a run is compared
 * with, and the verdict per model and metric.
 *
 * Sign convention (docs/nightly.md): relative_change is the plain percent change of the value,
 * (new - baseline) / |baseline| * 100, as madengine defines the column: +5 means the number
 * went up 5 %, whatever the metric. Whether that is better or worse comes from the metric's
 * direction: for a higher-is-better metric (throughput) a change below -PCT is a
 * regression, for a lower-is-better one (time, latency, loss) a change above +PCT is.
 *
 * Noise: when either side has repeats (several SUCCESS rows of the same run), a change is a
 * regression only if it is also outside the noise band t * se, where se is the standard
 * error of the difference of the two means (Welch) and t Student's two-sided 95 % value for
 * Welch-Satterthwaite's degrees of freedom. A side with one value counts as exact. With no
 * repeats on either side the threshold alone decides, and the verdict says so.
 */
typedef struct json_t json_t;

/* Direction */

typedef enum rm_direction {
	RM_DIR_UNKNOWN = 0,
	RM_DIR_HIGHER, /* higher is better: throughput, samples/s, tokens/s, TFLOP/s, FPS */
	RM_DIR_LOWER,  /* lower is better: time, latency, loss, ms, s */
} rm_direction;

const char *rm_direction_name(rm_direction d); /* "higher", "lower", "unknown" */

/*
 * The direction of a metric from its name and unit (either may be NULL) by the metric table
 * (docs/nightly.md): a rate (X/s, X per second, throughput, FPS, TFLOP/s) is higher-better;
 * a time (s, ms, seconds/step, latency, duration, time to train), a loss or a perplexity is
 * lower-better; anything else is unknown (the gate says so and does not judge it).
 */
rm_direction rm_direction_guess(const char *metric, const char *unit);

/* Per-model overrides: the models.json field "metric_direction", an object mapping a metric
 * name to "higher" or "lower", e.g. {"metric_direction": {"time_to_train": "lower"}}. */
typedef struct rm_direction_table rm_direction_table;

rm_direction_table *rm_direction_table_new(void);
void rm_direction_table_free(rm_direction_table *t);

/* Takes model's "metric_direction" field (absent: nothing to do). A bad value is an error
 * naming source, the model and the metric. */
int rm_direction_table_add_model(rm_direction_table *t, const char *model, const json_t *entry,
				 const char *source, rm_error *err);

/* Reads root/models.json and root/scripts/<dir>/models.json (models named "<dir>/<name>" as
 * the registry names them). Missing files are skipped. */
int rm_direction_table_load(rm_direction_table *t, const char *root, rm_error *err);

/*
 * The direction for a perf.csv row's model and metric: the model's override (a
 * multiple_results row "<model>_<name>" uses <model>'s), else the metric table. *why, when
 * not NULL, receives "models.json" or "metric table". t may be NULL.
 */
rm_direction rm_direction_lookup(const rm_direction_table *t, const char *model, const char *metric,
				 const char **why);

typedef enum rm_verdict {
	RM_VERDICT_NONE = 0,   /* no baseline to compare with */
	RM_VERDICT_FAILED,     /* no SUCCESS value in this run (FAILURE rows) */
	RM_VERDICT_SKIPPED,    /* only SKIPPED rows */
	RM_VERDICT_UNKNOWN,    /* compared, but the metric's direction is unknown: not judged */
	RM_VERDICT_SAME,       /* within the threshold */
	RM_VERDICT_BETTER,     /* better by more than the threshold */
	RM_VERDICT_NOISE,      /* worse by more than the threshold, but inside the noise band */
	RM_VERDICT_REGRESSION, /* worse by more than the threshold and outside the noise */
} rm_verdict;

const char *rm_verdict_name(rm_verdict v); /* "none", "failed", ..., "regression" */

/*
 * Change detection over a series' history (src/results/detect.c): pure, no I/O, no
 * allocation. docs/nightly.md has the method, its false-alarm rate and its power.
 *
 * The input is one point per run, oldest first, the run being judged last. The last
 * `window` points are analysed; up to RM_DETECT_CONTEXT points before them, when given,
 * are the neighbours that tell the window's first runs from outliers. Indexes in the
 * result are into the caller's array.
 *
 *  - noise: the standard deviation of one run's mean, the largest of: the window's
 *    run-to-run differences (1.4826 MAD / sqrt 2, robust to steps, drift and outliers; from
 *    RM_DETECT_MIN_HISTORY runs on), the repeats' pooled standard error, and a floor of
 *    threshold / (2 z) so that changes far under the threshold are not resolved;
 *  - outliers: a run (neither the first of the series nor the last) that is more than
 *    RM_DETECT_OUTLIER noise from the median of the three runs before it and from the
 *    median of the three after it, on the same side of both, is set aside;
 *  - levels: the piecewise-constant fit of the remaining runs that minimises the squared
 *    error over noise^2 plus z^2 per change (optimal partitioning, exact), so a change is
 *    kept when its two-sample z exceeds z;
 *  - the reference: the first level, replaced by each later level that is better by more
 *    than the threshold and significantly (improvements become the level to keep); worse
 *    levels never replace it, so a step stays reported and drift adds up;
 *  - the verdict: the latest level against the reference: regression when worse by more
 *    than the threshold and by more than z standard errors, noise when only the first,
 *    better when the latest level is an improvement, else same.
 * With two runs (one earlier) the plain threshold applies, with Welch's noise band when
 * either run has repeats (as rm_gate has always done).
 */
#define RM_DETECT_WINDOW      30  /* runs analysed by default, the one judged included */
#define RM_DETECT_MAX_WINDOW  200 /* the largest window accepted */
#define RM_DETECT_CONTEXT     3	  /* runs before the window used to judge its first runs */
#define RM_DETECT_MIN_HISTORY 5	  /* runs in the window before their differences count */
#define RM_DETECT_OUTLIER     4.0 /* noise units from both neighbourhoods: an outlier */
#define RM_DETECT_MAX_CHANGES 16  /* change points kept (the latest) */
#define RM_DETECT_NONE	      ((size_t)-1)

/* One run of a series: its SUCCESS values' mean, standard deviation and count. */
typedef struct rm_point {
	double mean;
	double sd; /* 0 with one value */
	size_t n;  /* >= 1 */
} rm_point;

typedef enum rm_noise_from {
	RM_NOISE_NONE = 0,  /* two runs without repeats: the threshold alone */
	RM_NOISE_REPEATS,   /* the repeats' spread */
	RM_NOISE_HISTORY,   /* the run-to-run differences in the window */
	RM_NOISE_THRESHOLD, /* the floor: too few runs, or a quieter series than the threshold */
} rm_noise_from;

const char *rm_noise_from_name(rm_noise_from f);

typedef struct rm_detect_opts {
	rm_direction direction; /* RM_DIR_UNKNOWN: levels are found, the verdict is UNKNOWN */
	double threshold_pct;	/* >= 0 */
	size_t window;		/* points analysed; 0: RM_DETECT_WINDOW */
	double z;		/* critical value; 0: rm_detect_z's for the window's size */
} rm_detect_opts;

typedef struct rm_detect {
	rm_verdict verdict; /* NONE (fewer than two runs, or a value that is not finite),
			       UNKNOWN, SAME, BETTER, NOISE, REGRESSION */
	size_t first;	    /* index of the window's first point */
	size_t n;	    /* points in the window, the judged one included */
	double level;	    /* the latest level: the mean of the runs since its change */
	size_t level_n;
	double ref; /* the reference level */
	size_t ref_first, ref_n;
	size_t since;	   /* index of the first run of the change judged, or RM_DETECT_NONE */
	double change_pct; /* (level - ref) / |ref| * 100; NAN when ref is 0 */
	double noise;	   /* of one run's mean, absolute; NAN with two runs and no repeats */
	rm_noise_from noise_from;
	double band_pct;  /* z_crit standard errors of the change, as percent of |ref|; NAN
			     when not computed */
	double z, z_crit; /* the change in standard errors, and the critical value (Student's t
			     with two runs) */
	int unstable;	  /* the measured noise hides a one-run change of the threshold's size */
	size_t n_outliers;
	unsigned long long outliers_[(RM_DETECT_MAX_WINDOW + 63) / 64]; /* rm_detect_is_outlier */
	size_t cps[RM_DETECT_MAX_CHANGES]; /* first run of each level after the first, oldest
					      first */
	size_t n_cps;
} rm_detect;

/* The calibrated critical value for a window of n runs (docs/nightly.md). */
double rm_detect_z(size_t n);

/* Judges p[n - 1] against the history p[0 .. n - 1). */
void rm_detect_run(const rm_point *p, size_t n, const rm_detect_opts *o, rm_detect *out);

/* Whether p[i] was set aside as an outlier. */
int rm_detect_is_outlier(const rm_detect *d, size_t i);

/*
 * The history (src/results/baseline.c): per series (model, metric, Dockerfile, GPU
 * architecture, GPU count, machine) a bounded list of its runs, fed one perf.csv row at a
 * time, so that memory grows with the number of series, not of rows. Each run of a series
 * is one point (the mean and spread of its SUCCESS values, its FAILURE rows counted).
 * Runs are numbered in the order they first appear (an append-only perf.csv is in time
 * order; a database is read by start time, then export order).
 *
 * A series keeps its last `window` + RM_DETECT_CONTEXT runs for the detector; with `plot`
 * set it keeps up to that many points, older runs being merged pairwise as more come (the
 * HTML report's trends: recent runs exact, older ones coarser).
 *
 * The "baseline" of the earlier gate is the latest valued run of a series (rm_baseline_find,
 * rm_baseline_change: relative_change in perf.csv).
 */

typedef struct rm_baseline rm_baseline;

typedef struct rm_history_opts {
	size_t window; /* runs kept per series for the detector; 0: RM_DETECT_WINDOW */
	size_t plot;   /* > 0: keep up to this many points per series, merging older ones */
	/* Rows of this run are left out, and of the runs that first appear after it (a
	 * history is what came before the run judged). NULL: none. */
	const char *before_run;
	/* Keep the rows of the run that appeared last (rm_history_latest). */
	int keep_latest;
} rm_history_opts;

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
	size_t run;	  /* rm_baseline_run index */
	size_t run_first; /* a merged point: the first run it covers (else == run) */
} rm_hpoint;

typedef struct rm_hseries {
	const char *model, *metric, *docker_file, *arch, *n_gpus, *machine;
	rm_hpoint *p; /* oldest first */
	size_t n;
	size_t n_runs, n_failed_runs; /* every run seen, and those with a FAILURE row */
	size_t cap_, next_;
	double *last_; /* values of the latest valued run (rm_baseline_find) */
	size_t n_last_, cap_last_, last_run_;
	char *keys_;
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
 * Model, metric, Dockerfile, GPU architecture and GPU count must match. NULL: none.
 */
const rm_hseries *rm_history_find(const rm_baseline *b, const char *model, const char *metric,
				  const char *docker_file, const char *arch, const char *n_gpus,
				  const char *machine);

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
		       const char *machine, const char *since_run, const char *since_start);
const char *rm_history_accepted(const rm_baseline *b, const rm_hseries *s, const char **start);

/* The index of the first point of s the gate judges from: after the acceptance, if any. */
size_t rm_history_from(const rm_baseline *b, const rm_hseries *s);

/*
 * Accepted changes, recorded by `run_models accept`: "this model's metric changed on
 * purpose from run X on". For a perf.csv they live in its companion file beside it,
 * PERF.accepted.csv (perf.csv -> perf.accepted.csv), a CSV of rm_accepted_header's columns
 * appended under the same lock as perf.csv; for a database, in its `accepted` table. Empty
 * key fields match any value.
 */
typedef struct rm_acceptance {
	const char *model, *metric, *docker_file, *arch, *n_gpus, *machine;
	const char *since_run, *since_start, *accepted_at, *reason;
} rm_acceptance;

extern const char *const rm_accepted_header[10];

/* The companion file of a perf.csv; caller frees. */
char *rm_accepted_path(const char *perf_csv);

/* Reads the acceptances of perf_csv's companion file into b (none when it is missing). */
int rm_accepted_read(rm_baseline *b, const char *perf_csv, rm_error *err);

/* Appends acceptances to perf_csv's companion file, creating it with its header. */
int rm_accepted_append(const char *perf_csv, const rm_acceptance *a, size_t n, rm_error *err);

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
 * metric, Dockerfile and GPU architecture, from the same machine when the baseline has one,
 * else from any machine. NULL when there is none.
 */
const rm_baseline_entry *rm_baseline_find(const rm_baseline *b, const char *model,
					  const char *metric, const char *docker_file,
					  const char *arch, const char *machine);

/* Number of keys with a valued run. */
size_t rm_baseline_size(const rm_baseline *b);

/*
 * relative_change for one perf.csv row (as the runner writes it): "%+.2f" of the row's value
 * against the mean of its baseline, into buf. Returns 0, or 1 leaving buf "" when the row
 * has no value or no baseline (or the baseline mean is 0).
 */
int rm_baseline_change(const rm_baseline *b, const char *model, const char *metric,
		       const char *docker_file, const char *arch, const char *machine, double value,
		       char *buf, size_t size);

void rm_baseline_free(rm_baseline *b);

/*
 * Pinned references (ReFrame's): an expected value per model and metric with a tolerance
 * below and above it, in percent. A value outside on the bad side is a regression whatever
 * the history says; outside on the good side it is reported (time to update the reference).
 * For a metric whose direction is unknown, both sides fail.
 *
 *   {"pyt_resnet50": {"samples_per_second": {"value": 2400, "lower": 5, "upper": 10}}}
 *
 * (YAML or JSON, optionally under a top-level "references" key; lower or upper left out:
 * no bound on that side.)
 */
typedef struct rm_reference {
	const char *model, *metric;
	double value;
	double lower_pct, upper_pct; /* NAN: no bound on that side */
} rm_reference;

typedef struct rm_references rm_references;

rm_references *rm_references_new(void);
void rm_references_free(rm_references *t);
/* Adds the references of an object as above; errors name source, model and metric. */
int rm_references_add_json(rm_references *t, const json_t *obj, const char *source, rm_error *err);
/* Reads a YAML or JSON file of references. */
int rm_references_load(rm_references *t, const char *path, rm_error *err);
const rm_reference *rm_references_find(const rm_references *t, const char *model,
				       const char *metric);
size_t rm_references_size(const rm_references *t);
/* The table as an object of the form above (for run.json). */
json_t *rm_references_json(const rm_references *t);

/* The gate */

/* A suite entry's own threshold for the models it selected. */
typedef struct rm_threshold {
	const char *model;
	double pct; /* < 0: this model is not gated */
} rm_threshold;

typedef struct rm_gate_opts {
	double threshold_pct; /* percent; < 0: the default, 5 */
	int enforce;	      /* --fail-on-regression given: regressions decide the exit code */
	const rm_threshold *thresholds; /* per model, overriding threshold_pct */
	size_t n_thresholds;
	const rm_direction_table *directions; /* NULL: the metric table only */
	size_t window;			      /* runs the detector reads; 0: RM_DETECT_WINDOW */
	const rm_references *references;      /* NULL: none */
} rm_gate_opts;

/* A run where a change started: the run judged, or one of the history's. */
typedef struct rm_run_ref {
	const char *id, *start, *commit; /* "" when unknown */
} rm_run_ref;

/* One model, metric, Dockerfile, GPU architecture and GPU count of the run. */
typedef struct rm_change {
	const char *model, *metric, *docker_file, *arch, *n_gpus, *machine; /* into the rows */
	const char *reason; /* of the first FAILURE/SKIPPED row, "" when none */
	const char *log_file;
	size_t n_rows, n_success, n_failed, n_skipped;
	rm_direction direction;
	const char *direction_why;
	/* This run's SUCCESS values */
	double mean, sd, min, max;
	/* What it is judged against: with one earlier run, that run; with more, the reference
	 * level of the history (rm_detect) */
	const char *base_run; /* the reference's first run */
	size_t base_n;	      /* its runs (one earlier run: its values) */
	double base_mean, base_sd;
	double level;	   /* the latest level (this run alone, or the runs since its change) */
	size_t level_n;	   /* runs in it */
	size_t n_history;  /* runs the detector read, this one included */
	double change_pct; /* (level - reference) / |reference|; NAN when not compared */
	double threshold;  /* percent used for this model; < 0 when not gated */
	double noise_pct;  /* the significance band as percent of the reference; NAN if none */
	double t_crit;	   /* the critical value (Student's t with two runs) */
	rm_detect detect;  /* the detector's result (verdict NONE when no history) */
	rm_run_ref since;  /* where the change judged started (id "" when none) */
	rm_run_ref from;   /* the first run the detector read */
	rm_run_ref cps[RM_DETECT_MAX_CHANGES]; /* every change point in the window */
	size_t n_cps;
	const char *accepted; /* the run an acceptance starts the history at, or NULL */
	const rm_reference *pin;
	rm_verdict pin_verdict; /* NONE, SAME, BETTER (above the upper bound), REGRESSION */
	rm_verdict verdict;	/* the detector's, made REGRESSION by the reference */
	char *note; /* one line for reports, e.g. "-7.10% (worse), outside the noise ..." */
} rm_change;

typedef struct rm_gate {
	rm_change *v; /* in the run's row order of first appearance */
	size_t n;
	size_t n_regressions, n_compared, n_failed, n_skipped, n_unknown, n_better, n_unstable;
	int enforce;
	double threshold_pct;
	int have_baseline;
	char *rule; /* how the verdicts were reached, one paragraph for reports */
} rm_gate;

/* Judges run (one run's rows) against the history base (NULL: none). */
void rm_gate_eval(const rm_results *run, const rm_baseline *base, const rm_gate_opts *o,
		  rm_gate *out);
void rm_gate_release(rm_gate *g);

/*
 * Judges the latest valued run of a series of the history against the runs before it (from
 * its acceptance on), as the gate would have judged that run: returns 0 and fills d and
 * *since (the run the change started at, id "" when none), or -1 when it has fewer than
 * two valued runs.
 */
int rm_history_judge(const rm_baseline *b, const rm_hseries *s, const rm_detect_opts *o,
		     rm_detect *d, rm_run_ref *since);

/* The run a change starts at, as "run ID (TIME, models at COMMIT)" into buf. */
void rm_run_ref_text(const rm_run_ref *r, char *buf, size_t size);

/* Student's t two-sided 95 % critical value for dof degrees of freedom (>= 1). */
double rm_t95(double dof);

/*
 * What a CI job reads after a run: JUnit XML, a Markdown summary, the run.json manifest,
 * one tar.gz artefact (rm/suite.h's rm_nightly_finish makes them all at the end of a run).
 * Everything works from the run's perf.csv, so it can also be run later on files alone
 * (run_models report ci).
 *
 * Every writer writes to a temporary file beside the target and renames it into place: a
 * failed or interrupted write never leaves a half file for CI to pick up.
 */
typedef struct json_t json_t;

/* JUnit */

typedef struct rm_junit_opts {
	const char *suite;	   /* testsuite name and testcase classname; NULL: "run_models" */
	const char *hostname;	   /* NULL: this host's name */
	const char *base_dir;	   /* relative log_file paths not found from the current folder are
				      looked up here (the perf.csv's folder); NULL: none */
	size_t log_lines;	   /* lines of the log in a failure; 0: 50 */
	const rm_gate *gate;	   /* changes as properties; with gate->enforce, a testcase per
				      gated metric that fails on a regression. NULL: none */
	const rm_metrics *metrics; /* perf_<model>.csv rows as properties; NULL: none */
} rm_junit_opts;

/*
 * Writes JUnit XML (libxml2's xmlTextWriter) in the form both of the widely used schemas
 * accept (Apache Ant's, as published by windyroad, and Jenkins' junit-10.xsd): <testsuites>
 * holding one <testsuite> (package, id, name, timestamp, hostname, tests, failures, errors,
 * skipped, time) with <properties> first, then one <testcase> per perf.csv row (classname =
 * suite, name = model, time = test_duration) holding at most one <failure> (the reason and
 * the last log lines) or <skipped>, then <system-out> and <system-err>. Neither schema allows
 * properties inside a testcase, so a row's metrics are suite properties named
 * "<testcase name>.<metric>" (see docs/nightly.md).
 */
int rm_junit_write(const char *path, const rm_results *run, const rm_junit_opts *o, rm_error *err);

/* Markdown summary */

/*
 * A GitHub-flavoured Markdown summary: a headline with the counts, then a table of models,
 * status, value, baseline, change and verdict (one line per model and metric; failures with
 * their reason), then the regression rule. Appended to rm_buf out.
 */
int rm_summary_markdown(rm_buf *out, const char *title, const rm_results *run, const rm_gate *gate);

/* Writes text to path, replacing it (append = 0) or appending (append = 1, for
 * $GITHUB_STEP_SUMMARY). */
int rm_write_text_file(const char *path, const char *text, size_t len, int append, rm_error *err);

/* run.json */

typedef struct rm_manifest {
	const char *run_id;
	const char *started_at; /* "YYYY-MM-DDTHH:MM:SSZ"; NULL: now */
	const char *git_commit; /* of the models folder */
	const char *models_root;
	const char *host; /* NULL: this host's name */
	const char *suite;
	const char *suite_file;
	const json_t *suite_entries; /* rm_suite_json()'s "entries", or NULL */
	const json_t *options;	     /* the run's options as an object, or NULL */
	const char *gpu_vendor, *gpu_arch;
	long n_gpus;
	const rm_finding *findings; /* the doctor's (GPU, driver, ROCm, CUDA, OS, docker) */
	size_t n_findings;
	const rm_mask *mask; /* the run's secrets: every string (and key) masked; NULL: none */
} rm_manifest;

/* The manifest as JSON: run_id, started_at, git_commit, host, gpu {vendor, arch, count},
 * versions {os, rocm, cuda, gpus, docker} taken from the doctor's findings, doctor (all
 * findings), suite, suite_file, entries, options, run_models version. */
json_t *rm_manifest_json(const rm_manifest *m);
int rm_manifest_write(const char *path, const rm_manifest *m, rm_error *err);
/* Reads a run.json back (NULL with err when missing or not JSON). */
json_t *rm_manifest_read(const char *path, rm_error *err);

/* Archive */

/*
 * Writes a gzip-compressed tar (libarchive) of the given files and folders (folders with
 * everything under them), each stored under top/ by its path when that is relative and has
 * no "..", else by its base name. A path that does not exist is an error naming it. With an
 * active mask (the run's secrets), every regular file is stored masked, whoever wrote it:
 * the archive is what a CI job uploads.
 */
int rm_archive_write(const char *out_path, const char *top, const char *const *paths, size_t n,
		     const rm_mask *mask, rm_error *err);

/*
 * The HTML trend report (run_models report html): ONE self-contained file, no scripts, no
 * fonts, no network (a Content-Security-Policy of default-src 'none' makes the browser
 * refuse anything else, and log it). Per model and metric: an inline SVG trend over the
 * history (one point per run: the mean of its repeats; failed runs as red ticks), the latest
 * value, its baseline (the latest earlier run) and the change coloured by the metric's
 * direction; then the latest run's failures with their reasons. Rows are ordered
 * regressions first, then failures, then by model, so the top of the page is what needs a
 * look. Sized for 500 models x 90 nights (docs/nightly.md has the measurements).
 */
typedef struct rm_html_opts {
	const char *title;    /* NULL: "run_models results" */
	const char *source;   /* shown under the title: the files or database read */
	double threshold_pct; /* change colouring and verdicts; < 0: 5 */
	const rm_direction_table *directions; /* NULL: the metric table only */
	size_t window;			      /* the detector's; 0: RM_DETECT_WINDOW */
	/* The GPU power per run of each model (rm_history_read_metric_dir of gpu_power_avg_w),
	 * or NULL: plotted beside its trend on the same run axis (a column shown only when
	 * some run of the history has a figure). */
	const rm_baseline *power;
} rm_html_opts;

/* Points a series keeps for its trend (rm_history_opts.plot). */
#define RM_HTML_PLOT_POINTS 128

/*
 * Writes the report of a history store made with rm_history_opts.plot (and keep_latest);
 * latest is the latest run's rows (rm_history_latest), the run judged.
 */
int rm_html_report(const char *path, const rm_baseline *history, const rm_results *latest,
		   const rm_html_opts *o, rm_error *err);

/*
 * Making untrusted text (container logs, failure reasons, model names) safe for the formats
 * reports are written in. All functions append to an rm_buf and return 0, or -1 when the
 * buffer's ceiling is reached (the buffer keeps what fit).
 */
/*
 * Text that is valid UTF-8 and allowed in XML 1.0: ANSI escape sequences (colours, cursor
 * moves) are dropped, other control characters except tab and newline become "\xNN" (a CR
 * before a newline is dropped, a lone CR becomes a newline: progress bars), invalid UTF-8
 * bytes and the non-characters U+FFFE/U+FFFF become U+FFFD.
 */
int rm_text_clean(rm_buf *out, const char *s, size_t n);

/* rm_text_clean, then &, <, >, " and ' as entities: for HTML text and attributes. */
int rm_text_html(rm_buf *out, const char *s);

/* rm_text_clean, then a Markdown table cell: '|' escaped, newlines as spaces, backticks and
 * the characters that start inline markup left alone but '<' as &lt; (GitHub renders
 * HTML). */
int rm_text_md_cell(rm_buf *out, const char *s);

/*
 * The last n_lines lines of a file, at most max_bytes (read backwards from the end, never
 * the whole file), into out as cleaned text. Returns 0, or -1 with err naming the file.
 */
struct rm_error;
int rm_tail_lines(const char *path, size_t n_lines, size_t max_bytes, rm_buf *out,
		  struct rm_error *err);

#endif
