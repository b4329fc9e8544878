/*
 * The regression gate (src/results/gate.c): each model and metric of a run judged against
 * its history (rm/history.h) by the detector (rm/detect.h), in the metric's direction
 * (rm/direction.h), and against its pinned reference (rm/references.h).
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

#include "rm/detect.h"
#include "rm/direction.h"
#include "rm/history.h"
#include "rm/references.h"
#include "rm/results.h"

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

#define RM_GATE_OPTS_INIT                                                                          \
	{                                                                                          \
		.threshold_pct = -1, .enforce = 0, .thresholds = NULL, .n_thresholds = 0,          \
		.directions = NULL, .window = 0, .references = NULL                                \
	}

/* A run where a change started: the run judged, or one of the history's. */
typedef struct rm_run_ref {
	const char *id, *start, *commit; /* "" when unknown */
} rm_run_ref;

/* One model, metric, Dockerfile, GPU architecture, GPU count and configuration of the run. */
typedef struct rm_change {
	const char *model, *metric, *docker_file, *arch, *n_gpus, *machine; /* into the rows */
	const char *config, *config_key; /* the configuration (rm/config.h); "" before them */
	char *name;	    /* how reports name it: "model", or "model[batch_size=8,...]" */
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
	double level;	       /* the latest level (this run alone, or the runs since its change) */
	size_t level_n;	       /* runs in it */
	size_t n_history;      /* runs the detector read, this one included */
	double change_pct;     /* (level - reference) / |reference|; NAN when not compared */
	double threshold;      /* percent used for this model; < 0 when not gated */
	double noise_pct;      /* the significance band as percent of the reference; NAN if none */
	double detectable_pct; /* the least one-run change its noise lets be told; NAN if none */
	double t_crit;	       /* the critical value (Student's t with two runs) */
	rm_detect detect;      /* the detector's result (verdict NONE when no history) */
	rm_run_ref since;      /* where the change judged started (id "" when none) */
	rm_run_ref from;       /* the first run the detector read */
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

/* A change in percent as the outputs print it: "+1.23%", or "+9.84e+19%" for a value far out
 * of range (a judged 1e20 against a history near 100), never hundreds of digits. */
void rm_pct_text(double pct, char *buf, size_t size);

#endif
