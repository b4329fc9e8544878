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
#ifndef RM_GATE_H
#define RM_GATE_H

#include <stddef.h>

#include "rm/error.h"
#include "rm/results.h"

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

/* Baseline */

/* The values a key had in its latest earlier run (several when that run had repeats). */
typedef struct rm_baseline_entry {
	const char *model, *metric, *docker_file, *arch, *machine, *run_id;
	double *values;
	size_t n;
} rm_baseline_entry;

typedef struct rm_baseline rm_baseline;

/* A baseline made from rows in memory (history), leaving out exclude_run_id. Rows later in
 * the array are newer. */
rm_baseline *rm_baseline_from_results(const rm_results *rows, const char *exclude_run_id);

/* For sources that feed values one at a time, oldest first (the database reader). */
rm_baseline *rm_baseline_new(void);
void rm_baseline_add(rm_baseline *b, const char *model, const char *metric, const char *docker_file,
		     const char *arch, const char *machine, const char *run_id, double value);
/* Builds the lookup index; call once after the last rm_baseline_add. */
void rm_baseline_seal(rm_baseline *b);

/*
 * The baseline of a key: the latest earlier run that has SUCCESS values for the same model,
 * metric, Dockerfile and GPU architecture, from the same machine when the baseline has one,
 * else from any machine. NULL when there is none.
 */
const rm_baseline_entry *rm_baseline_find(const rm_baseline *b, const char *model,
					  const char *metric, const char *docker_file,
					  const char *arch, const char *machine);

/* Number of keys held. */
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

/* The gate */

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
} rm_gate_opts;

/* One model, metric, Dockerfile and GPU architecture of the run. */
typedef struct rm_change {
	const char *model, *metric, *docker_file, *arch, *machine; /* point into the results */
	const char *reason; /* of the first FAILURE/SKIPPED row, "" when none */
	const char *log_file;
	size_t n_rows, n_success, n_failed, n_skipped;
	rm_direction direction;
	const char *direction_why;
	/* This run's SUCCESS values */
	double mean, sd, min, max;
	/* The baseline's */
	const char *base_run;
	size_t base_n;
	double base_mean, base_sd;
	double change_pct; /* NAN when not compared */
	double threshold;  /* percent used for this model; < 0 when not gated */
	double noise_pct;  /* the noise band as percent of the baseline; NAN without repeats */
	double t_crit;	   /* Student's t used (0 without repeats) */
	rm_verdict verdict;
	char *note; /* one line for reports, e.g. "-7.10% (worse), outside the noise ..." */
} rm_change;

typedef struct rm_gate {
	rm_change *v; /* in the run's row order of first appearance */
	size_t n;
	size_t n_regressions, n_compared, n_failed, n_skipped, n_unknown;
	int enforce;
	double threshold_pct;
	int have_baseline;
	char *rule; /* how the verdicts were reached, one paragraph for reports */
} rm_gate;

/* Judges run (one run's rows) against base (NULL: no baseline). */
void rm_gate_eval(const rm_results *run, const rm_baseline *base, const rm_gate_opts *o,
		  rm_gate *out);
void rm_gate_release(rm_gate *g);

/* Student's t two-sided 95 % critical value for dof degrees of freedom (>= 1). */
double rm_t95(double dof);

#endif
