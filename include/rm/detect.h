/*
 * The change detector (src/results/detect.c): a series' runs in, a verdict out. The
 * verdicts are also the gate's (rm/gate.h), which adds FAILED and SKIPPED for runs without
 * a value. Student's t (rm_t95) is here, the detector's and the gate's two-run band.
 */
#ifndef RM_DETECT_H
#define RM_DETECT_H

#include <stddef.h>

#include "rm/direction.h"

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
 * are its neighbours: they tell the window's first runs from outliers and count towards
 * its first level. Up to RM_DETECT_HOLD points before those let a regression found on an
 * earlier night hold (below). RM_DETECT_KEEP(window) points are all it reads. Indexes in
 * the result are into the caller's array.
 *
 *  - noise: the standard deviation of one run's mean. It starts as the largest of: the
 *    run-to-run differences (1.4826 MAD / sqrt 2, robust to steps, drift and outliers; from
 *    RM_DETECT_MIN_HISTORY runs in the window on), the repeats' pooled standard error, and
 *    a floor of threshold / (2 z) so that changes far under the threshold are not
 *    resolved; then the levels below are refitted to their own spread until the two agree,
 *    up or down, never under the floor, the repeats' or 0.8 of the robust estimate;
 *  - outliers: a run (neither the first of the series nor the last) that is more than
 *    RM_DETECT_OUTLIER noise from the median of the three runs before it and from the
 *    median of the (two or three, once the noise is measured) after it, on the same side
 *    of both, is set aside;
 *  - levels: the piecewise-constant fit of the remaining runs that minimises the squared
 *    error over noise^2 plus z^2 per change (optimal partitioning, exact), so a change is
 *    kept when its two-sample z exceeds z;
 *  - the reference: the first level, replaced by each later level that is better by more
 *    than the threshold and significantly (improvements become the level to keep); worse
 *    levels never replace it, so a step stays reported and drift adds up;
 *  - the verdict: the latest level against the reference: regression when worse by more
 *    than the threshold and by more than z standard errors, noise when only the first,
 *    better when the latest level is an improvement, else same. A regression ends on two
 *    runs: a judged run alone back near the reference joins the regressed level before it;
 *    and a regression found on an earlier night holds while every night since has its
 *    latest level worse than the reference by more than half the threshold;
 *  - unstable: the threshold is out of reach: a lasting change of its size, half the
 *    window before it and half after, would not be significant. detectable_pct is the least
 *    one-run change the noise lets be told, for every series.
 * With two runs (one earlier) the plain threshold applies, with Welch's noise band when
 * either run has repeats (as rm_gate has always done).
 */
#define RM_DETECT_WINDOW      30  /* runs analysed by default, the one judged included */
#define RM_DETECT_MAX_WINDOW  200 /* the largest window accepted */
#define RM_DETECT_CONTEXT     3	  /* runs before the window used to judge its first runs */
#define RM_DETECT_MIN_HISTORY 5	  /* runs in the window before their differences count */
#define RM_DETECT_OUTLIER     4.0 /* noise units from both neighbourhoods: an outlier */
#define RM_DETECT_MAX_CHANGES 16  /* change points kept (the latest) */
#define RM_DETECT_HOLD	      10  /* nights looked back at for a regression that holds */
#define RM_DETECT_NONE	      ((size_t)-1)
/* The runs of a series the detector reads for a window of w: the window, its neighbours,
 * and the nights a regression that holds is looked back at. */
#define RM_DETECT_KEEP(w) ((w) + RM_DETECT_CONTEXT + RM_DETECT_HOLD)

/* One run of a series: its SUCCESS values' mean, standard deviation and count. */
typedef struct rm_point {
	double mean;
	double sd; /* 0 with one value */
	size_t n;  /* >= 1 */
} rm_point;

/* Why a regression holds though this night's levels alone would not show it. */
typedef enum rm_held {
	RM_HELD_NONE = 0,
	RM_HELD_RUN,	/* the judged run alone was back near the reference: it joined the
			   regressed level before it (a regression ends on two runs) */
	RM_HELD_NIGHTS, /* found on an earlier night, and every night since still worse than
			   the reference by more than half the threshold */
} rm_held;

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

#define RM_DETECT_OPTS_INIT                                                                        \
	{                                                                                          \
		.direction = RM_DIR_UNKNOWN, .threshold_pct = 0, .window = 0, .z = 0               \
	}

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
	/* the measured noise makes the threshold unreachable: a lasting change of its size,
	   seen over half the window, would not be significant (docs/nightly.md) */
	int unstable;
	double detectable_pct; /* the least one-run change the noise lets be told, percent of
				  the reference; NAN when not measured */
	rm_held held;	       /* a regression kept though this night alone would not show it */
	size_t held_nights;    /* RM_HELD_NIGHTS: nights back to the one that found it */
	size_t n_outliers;
	/* bit i: p[first + i] was set aside as an outlier (rm_detect_is_outlier reads it) */
	unsigned long long outlier_bits[(RM_DETECT_MAX_WINDOW + 63) / 64];
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

/* Student's t two-sided 95 % critical value for dof degrees of freedom (>= 1). */
double rm_t95(double dof);

#endif
