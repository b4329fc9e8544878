/*
 * Change detection over a series' history: noise, outliers, levels, the reference, the
 * verdict (rm/detect.h has the contract, docs/nightly.md the method and its figures). Pure
 * arithmetic on at most RM_DETECT_MAX_WINDOW + RM_DETECT_CONTEXT points: fixed arrays on
 * the stack, no allocation, no I/O. Optimal partitioning is O(n^2) per series: 900 steps
 * for the default window.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rm/detect.h"

#define MAXP	    (RM_DETECT_MAX_WINDOW + RM_DETECT_CONTEXT)
#define CENTRED_MAX 1e100

/* The share of the robust noise estimate the levels' spread may not go under, and the
 * rounds of refitting the levels to their own spread (detect_levels). */
#define NOISE_ROBUST_SHARE 0.8
#define NOISE_ROUNDS	   6

const char *rm_noise_from_name(rm_noise_from f)
{
	switch (f) {
	case RM_NOISE_REPEATS:
		return "repeats";
	case RM_NOISE_HISTORY:
		return "history";
	case RM_NOISE_THRESHOLD:
		return "threshold";
	default:
		return "none";
	}
}

const char *rm_verdict_name(rm_verdict v)
{
	static const char *const names[] = {"none", "failed", "skipped", "unknown direction",
					    "same", "better", "noise",	 "regression"};
	return (size_t)v < sizeof(names) / sizeof(names[0]) ? names[v] : "?";
}

/* Student's t, two-sided 95 %, for 1..30 degrees of freedom; then a few steps to 1.96. A
 * fractional dof (Welch) is rounded down, which errs towards calling a change noise. */
double rm_t95(double dof)
{
	static const double t[] = {0,	  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
				   2.306, 2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
				   2.120, 2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
				   2.064, 2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
	long d = dof < 1 || !isfinite(dof) ? 1 : (long)floor(dof);
	if (d <= 30)
		return t[d];
	if (d <= 40)
		return 2.021;
	if (d <= 60)
		return 2.000;
	if (d <= 120)
		return 1.980;
	return 1.960;
}

/*
 * Critical values calibrated by simulation (tools/detect-sim.sh calibrate): for a window of
 * n runs of independent normal noise, the z at which 0.5 % of stable series end in a false
 * regression with the threshold at 0, where the noise is far above any threshold: the worst
 * case. Short windows need more, their noise being measured from few differences; longer
 * ones less, the levels' spread measuring it well. Linear in between.
 */
static const struct {
	size_t n;
	double z;
} z_table[] = {
    {5, 7.30},	{6, 6.72},  {8, 5.24},	{10, 4.85},  {15, 4.28},
    {20, 4.05}, {30, 3.85}, {60, 3.64}, {100, 3.67}, {200, 3.64},
};

/* Under RM_DETECT_MIN_HISTORY runs the noise is not measured from the history: the
 * threshold's floor decides, and the repeats' band with Student's t where there are any. */
#define Z_NOMINAL 4.0

double rm_detect_z(size_t n)
{
	size_t k = sizeof(z_table) / sizeof(z_table[0]);

	if (n < RM_DETECT_MIN_HISTORY)
		return Z_NOMINAL;
	if (n <= z_table[0].n)
		return z_table[0].z;
	for (size_t i = 1; i < k; i++)
		if (n <= z_table[i].n) {
			double f = (double)(n - z_table[i - 1].n) /
				   (double)(z_table[i].n - z_table[i - 1].n);
			return z_table[i - 1].z + f * (z_table[i].z - z_table[i - 1].z);
		}
	return z_table[k - 1].z;
}

static int detect_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y ? 1 : 0;
}

/* The median of v[0..n) (n >= 1); sorts a copy. */
static double detect_median(const double *v, size_t n)
{
	double s[MAXP];

	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), detect_cmp);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* How much better b is than a, in the metric's units (> 0: better). */
static double gain(rm_direction dir, double a, double b)
{
	return dir == RM_DIR_LOWER ? a - b : b - a;
}

static void mark_outlier(rm_detect *d, size_t i)
{
	d->outlier_bits[i / 64] |= 1ULL << (i % 64);
	d->n_outliers++;
}

int rm_detect_is_outlier(const rm_detect *d, size_t i)
{
	if (i < d->first || i - d->first >= RM_DETECT_MAX_WINDOW)
		return 0;
	i -= d->first;
	return (d->outlier_bits[i / 64] >> (i % 64)) & 1;
}

/* Two runs: the plain threshold, and Welch's band when either has repeats. */
static void two_runs(const rm_point *p, size_t n, const rm_detect_opts *o, rm_detect *d)
{
	const rm_point *b = &p[n - 2], *c = &p[n - 1];
	double thr = o->threshold_pct, num_c = 0, num_b = 0, dof_den = 0, se2, band = 0, worse;

	d->ref = b->mean;
	d->ref_first = n - 2;
	d->ref_n = 1;
	d->level = c->mean;
	d->level_n = 1;
	if (b->mean == 0) {
		d->verdict = RM_VERDICT_NONE;
		return;
	}
	d->change_pct = (c->mean - b->mean) / fabs(b->mean) * 100.0;
	/* Welch: se^2 = s1^2/n1 + s2^2/n2; a side with one value is exact. */
	if (c->n >= 2) {
		num_c = c->sd * c->sd / (double)c->n;
		dof_den += num_c * num_c / (double)(c->n - 1);
	}
	if (b->n >= 2) {
		num_b = b->sd * b->sd / (double)b->n;
		dof_den += num_b * num_b / (double)(b->n - 1);
	}
	se2 = num_c + num_b;
	if (c->n >= 2 || b->n >= 2) {
		double dof = dof_den > 0 ? se2 * se2 / dof_den : (double)(c->n + b->n - 2);
		d->z_crit = rm_t95(dof);
		band = d->z_crit * sqrt(se2);
		d->noise = sqrt(se2);
		d->noise_from = RM_NOISE_REPEATS;
		d->band_pct = band / fabs(b->mean) * 100.0;
		d->z = se2 > 0 ? fabs(c->mean - b->mean) / sqrt(se2) : INFINITY;
	}
	if (o->direction == RM_DIR_UNKNOWN) {
		d->verdict = RM_VERDICT_UNKNOWN;
		return;
	}
	worse = o->direction == RM_DIR_HIGHER ? -d->change_pct : d->change_pct;
	if (worse < 0 && -worse > thr)
		d->verdict = RM_VERDICT_BETTER;
	else if (worse <= thr)
		d->verdict = RM_VERDICT_SAME;
	else if (band > 0 && fabs(c->mean - b->mean) <= band)
		d->verdict = RM_VERDICT_NOISE;
	else
		d->verdict = RM_VERDICT_REGRESSION;
	if (d->verdict != RM_VERDICT_SAME)
		d->since = n - 1;
}

/* The noise of one run's mean: history, repeats, and the threshold's floor. */
static void noise(const rm_point *p, size_t from, size_t first, size_t n, double thr_abs, double z,
		  rm_detect *d, double *lower, rm_noise_from *lower_from)
{
	double dif[MAXP], dev[MAXP], hist = 0, rep = 0, floor_ = thr_abs / (2 * z);
	double ss = 0, dof = 0, inv_n = 0;
	size_t m = n - first, md_n = n - from;

	/* From RM_DETECT_MIN_HISTORY runs in the window on; the neighbours before it count. */
	if (m >= RM_DETECT_MIN_HISTORY) {
		for (size_t i = from + 1; i < n; i++)
			dif[i - from - 1] = p[i].mean - p[i - 1].mean;
		double md = detect_median(dif, md_n - 1);
		for (size_t i = 0; i < md_n - 1; i++)
			dev[i] = fabs(dif[i] - md);
		hist = 1.4826 * detect_median(dev, md_n - 1) / sqrt(2.0);
	}
	for (size_t i = first; i < n; i++) {
		if (p[i].n >= 2) {
			ss += (double)(p[i].n - 1) * p[i].sd * p[i].sd;
			dof += (double)(p[i].n - 1);
		}
		inv_n += 1.0 / (double)(p[i].n ? p[i].n : 1);
	}
	/* The pooled within-run variance over the harmonic mean of the repeat counts. */
	if (dof > 0)
		rep = sqrt(ss / dof * inv_n / (double)m);
	d->noise = floor_;
	d->noise_from = RM_NOISE_THRESHOLD;
	if (rep > d->noise) {
		d->noise = rep;
		d->noise_from = RM_NOISE_REPEATS;
	}
	if (hist > d->noise) {
		d->noise = hist;
		d->noise_from = RM_NOISE_HISTORY;
	}
	/* Identical values and no threshold: any difference is a change. */
	if (!(d->noise > 0))
		d->noise = 1e-12 * fmax(fabs(p[n - 1].mean), 1e-300);
	/* The floor the levels' spread may not go under (detect_levels): the repeats', the
	 * threshold's, and most of the robust estimate's, so that a fit that split too much
	 * cannot talk the noise down. */
	*lower = floor_;
	*lower_from = RM_NOISE_THRESHOLD;
	if (rep > *lower) {
		*lower = rep;
		*lower_from = RM_NOISE_REPEATS;
	}
	if (NOISE_ROBUST_SHARE * hist > *lower) {
		*lower = NOISE_ROBUST_SHARE * hist;
		*lower_from = RM_NOISE_HISTORY;
	}
	if (!(*lower > 0)) {
		*lower = d->noise;
		*lower_from = d->noise_from;
	}
}

/* Whether p[i] is far from the detect_median of the runs before it and of those after it, on the
 * same side. */
static int is_outlier(const rm_point *p, size_t lo, size_t n, size_t i, double tol,
		      size_t min_after)
{
	double l[RM_DETECT_CONTEXT], r[RM_DETECT_CONTEXT], ml, mr;
	size_t nl = 0, nr = 0;

	for (size_t k = i > lo + RM_DETECT_CONTEXT ? i - RM_DETECT_CONTEXT : lo; k < i; k++)
		l[nl++] = p[k].mean;
	for (size_t k = i + 1; k < n && nr < RM_DETECT_CONTEXT; k++)
		r[nr++] = p[k].mean;
	/* Once the noise is measured, one run after it is too little to tell an outlier from
	 * the first run of a step (before, the threshold's floor is the noise, and a young
	 * series' runs are set aside more readily). */
	if (!nl || nr < min_after)
		return 0;
	ml = p[i].mean - detect_median(l, nl);
	mr = p[i].mean - detect_median(r, nr);
	return fabs(ml) > tol && fabs(mr) > tol && (ml > 0) == (mr > 0);
}

struct seg {
	size_t first, len; /* into the kept runs */
	double mean;
};

/* Optimal partitioning of y[0..m): minimises sum of squared error / s2 + beta per change,
 * with no change before y[lead] (the window's neighbours join its first level). Returns the
 * number of segments. */
static size_t partition(const double *y, size_t m, size_t lead, double s2, double beta,
			struct seg *seg)
{
	double s1[MAXP + 1], sq[MAXP + 1], f[MAXP + 1];
	size_t last[MAXP + 1], ns = 0, cut[MAXP];

	double mid, cen[MAXP];

	/* Centred: sum of squares minus square of sums cancels badly for a level of 1e9 with
	 * a noise of 1. On the median, not the mean: one value far out of range (1e20 in a
	 * history near 100) would otherwise be the centre, and the levels of the others would
	 * drown in its rounding (a reference of -1024). Distances are capped at 1e100 so that
	 * their squares stay finite (1e300 is judged, not a NaN cost); the levels' means are the
	 * values' own. */
	mid = detect_median(y, m);
	for (size_t i = 0; i < m; i++)
		cen[i] = fmax(-CENTRED_MAX, fmin(CENTRED_MAX, y[i] - mid));
	s1[0] = sq[0] = 0;
	for (size_t i = 0; i < m; i++) {
		s1[i + 1] = s1[i] + cen[i];
		sq[i + 1] = sq[i] + cen[i] * cen[i];
	}
	f[0] = -beta;
	for (size_t j = 1; j <= m; j++) {
		f[j] = INFINITY;
		last[j] = j - 1 >= lead ? j - 1 : 0; /* were every cost NaN */
		for (size_t i = 0; i < j; i++) {
			if (i > 0 && i < lead)
				continue;
			double len = (double)(j - i), sum = s1[j] - s1[i];
			double sse = sq[j] - sq[i] - sum * sum / len;
			double c = f[i] + (sse > 0 ? sse : 0) / s2 + beta;
			if (c < f[j]) {
				f[j] = c;
				last[j] = i;
			}
		}
	}
	for (size_t j = m; j > 0; j = last[j])
		cut[ns++] = last[j];
	for (size_t k = 0; k < ns; k++) {
		size_t a = cut[ns - 1 - k], b = k + 1 < ns ? cut[ns - 2 - k] : m;
		seg[k].first = a;
		seg[k].len = b - a;
		double sum = 0;
		for (size_t i = a; i < b; i++)
			sum += y[i] - mid;
		seg[k].mean = mid + sum / (double)(b - a);
	}
	return ns;
}

/* What the phases of rm_detect_run hand on to each other. */
struct fit {
	const rm_point *p;
	size_t n, first, m;	  /* the points, the window's first, the points in the window */
	size_t from;		  /* the first point read: the window's neighbours before it */
	size_t lead;		  /* the kept runs before the window (they join its first level) */
	double thr, z;		  /* the threshold in percent, the critical value */
	double lower;		  /* the least noise the levels' spread may set (noise()), */
	rm_noise_from lower_from; /* and what sets it */
	size_t keep[MAXP];	  /* the runs that are not outliers, */
	double y[MAXP];		  /* and their means */
	size_t q;
	struct seg seg[MAXP]; /* the levels of the kept runs */
	size_t ns;
	size_t k, r, r_prev; /* the latest level, the reference and the reference before it */
	double ref_prev;
	int improved; /* the latest level replaced the reference */
};

/* The window; 1 when the points are judged here already (too few, not finite, two runs). */
static int detect_window(const rm_point *p, size_t n, const rm_detect_opts *o, rm_detect *d)
{
	size_t window = o->window ? o->window : RM_DETECT_WINDOW, first, m;

	memset(d, 0, sizeof(*d));
	d->verdict = RM_VERDICT_NONE;
	d->since = d->ref_first = RM_DETECT_NONE;
	d->change_pct = d->noise = d->band_pct = d->level = d->ref = d->detectable_pct = NAN;
	if (window > RM_DETECT_MAX_WINDOW)
		window = RM_DETECT_MAX_WINDOW;
	if (window < 2)
		window = 2;
	first = n > window ? n - window : 0;
	m = n - first;
	d->first = first;
	d->n = m;
	if (m < 2)
		return 1;
	/* Sums of huge values overflow: such a window is not judged. */
	for (size_t i = first > RM_DETECT_CONTEXT ? first - RM_DETECT_CONTEXT : 0; i < n; i++)
		if (!isfinite(p[i].mean) || !isfinite(p[i].sd))
			return 1;
	if (m == 2) {
		two_runs(p, n, o, d);
		return 1;
	}
	return 0;
}

/* The threshold and the critical value: the caller's, else the calibrated one for the
 * window, else (too few runs) Student's t of the repeats. */
static void detect_crit(struct fit *f, const rm_detect_opts *o, rm_detect *d)
{
	f->thr = o->threshold_pct > 0 ? o->threshold_pct : 0;
	f->z = o->z > 0 ? o->z : rm_detect_z(f->m);
	if (!(o->z > 0) && f->m < RM_DETECT_MIN_HISTORY) {
		/* No history to measure the noise: the repeats' band, as with two runs. */
		double dof = 0;
		for (size_t i = f->first; i < f->n; i++)
			dof += f->p[i].n >= 2 ? (double)(f->p[i].n - 1) : 0;
		if (dof > 0)
			f->z = rm_t95(dof);
	}
	d->z_crit = f->z;
}

/* The noise, then the outliers set aside: the runs kept into f->keep and f->y. */
static void detect_noise(struct fit *f, rm_detect *d)
{
	double thr_abs;

	for (size_t i = f->first; i < f->n; i++)
		f->y[i - f->first] = f->p[i].mean;
	thr_abs = f->thr / 100.0 * fabs(detect_median(f->y, f->m));
	noise(f->p, f->from, f->first, f->n, thr_abs, f->z, d, &f->lower, &f->lower_from);
	/* Outliers: never the run judged, never a run with nothing before it. The neighbours
	 * before the window are read too: they tell its first runs from outliers, and they
	 * count towards its first level (a step near the window's start stays told). */
	f->q = f->lead = 0;
	for (size_t i = f->from; i < f->n; i++) {
		if (i + 1 < f->n && is_outlier(f->p, f->from, f->n, i, RM_DETECT_OUTLIER * d->noise,
					       f->m >= RM_DETECT_MIN_HISTORY ? 2 : 1)) {
			if (i >= f->first)
				mark_outlier(d, i - f->first);
			continue;
		}
		f->lead += i < f->first;
		f->keep[f->q] = i;
		f->y[f->q++] = f->p[i].mean;
	}
}

/* The spread of the kept runs around their levels, or -1 with too few runs to tell. */
static double level_spread(const struct fit *f)
{
	double rss = 0;

	if (f->q <= f->ns + 1)
		return -1;
	for (size_t s = 0; s < f->ns; s++)
		for (size_t i = f->seg[s].first; i < f->seg[s].first + f->seg[s].len; i++)
			rss += (f->y[i] - f->seg[s].mean) * (f->y[i] - f->seg[s].mean);
	return sqrt(rss / (double)(f->q - f->ns));
}

/*
 * The levels of the kept runs, and the change points between them. The spread around the
 * levels is the efficient measure of the noise: the fit is redone with it until the two
 * agree, up or down (a noise taken too high hides a step, which then inflates the spread
 * that hid it; one taken too low splits noise into levels). It never goes under f->lower.
 */
static void detect_levels(struct fit *f, rm_detect *d)
{
	const double *y = f->y;

	f->ns = partition(y, f->q, f->lead, d->noise * d->noise, f->z * f->z, f->seg);
	for (int round = 0; round < NOISE_ROUNDS; round++) {
		double res = level_spread(f), next;
		if (res < 0)
			break;
		next = fmax(res, f->lower);
		if (fabs(next - d->noise) <= 1e-9 * d->noise)
			break;
		d->noise_from = res >= f->lower ? RM_NOISE_HISTORY : f->lower_from;
		d->noise = next;
		f->ns = partition(y, f->q, f->lead, d->noise * d->noise, f->z * f->z, f->seg);
	}
}

/*
 * A regression ends on two runs, not one: when the latest level is the judged run alone,
 * better than a level of several runs before it that is worse than the reference by more
 * than the threshold, that run joins the level before it (a night whose noise lands high
 * must not clear a step that persists; a second run at its level does, as a level of one
 * run is no reference either).
 */
static void detect_recovery(struct fit *f, rm_direction dir, rm_detect *d)
{
	struct seg *seg = f->seg;
	size_t k = f->k;
	double ref = seg[f->r].mean;

	if (dir == RM_DIR_UNKNOWN || f->improved || k < 1 || k - 1 <= f->r || seg[k].len != 1 ||
	    seg[k - 1].len < 2 || gain(dir, seg[k - 1].mean, seg[k].mean) <= 0 ||
	    -gain(dir, ref, seg[k - 1].mean) <= f->thr / 100.0 * fabs(ref))
		return;
	seg[k - 1].mean =
	    (seg[k - 1].mean * (double)seg[k - 1].len + seg[k].mean) / (double)(seg[k - 1].len + 1);
	seg[k - 1].len++;
	f->ns--;
	f->k--;
	d->held = RM_HELD_RUN;
}

/* The change points: the first run of each level after the first (the latest kept). */
static void detect_cps(const struct fit *f, rm_detect *d)
{
	for (size_t s = f->ns > RM_DETECT_MAX_CHANGES + 1 ? f->ns - RM_DETECT_MAX_CHANGES : 1;
	     s < f->ns; s++)
		d->cps[d->n_cps++] = f->keep[f->seg[s].first];
}

/* The reference walk: improvements become the level to keep. */
static void detect_reference(struct fit *f, rm_direction dir, const rm_detect *d)
{
	const struct seg *seg = f->seg;
	double ref;

	f->k = f->ns - 1;
	/* A level of one run is no reference: it may have been an outlier with nothing
	 * before it to tell (the first run of a series). */
	f->r = seg[0].len >= 2 || f->k == 0 ? 0 : 1;
	f->r_prev = 0;
	f->ref_prev = NAN;
	f->improved = 0;
	if (dir == RM_DIR_UNKNOWN) {
		/* Not judged: the latest level against the one before it. */
		f->r = f->k > f->r ? f->k - 1 : f->r;
		return;
	}
	ref = seg[f->r].mean;
	for (size_t s = f->r + 1; s < f->ns; s++) {
		double se = d->noise * sqrt(1.0 / (double)seg[s].len + 1.0 / (double)seg[f->r].len);
		double g = gain(dir, ref, seg[s].mean);
		if ((seg[s].len >= 2 || s == f->k) && g > f->thr / 100.0 * fabs(ref) &&
		    g / se > f->z) {
			f->ref_prev = ref;
			f->r_prev = f->r;
			f->improved = s == f->k;
			ref = seg[s].mean;
			f->r = s;
		}
	}
}

/* The latest level and the reference it is judged against. */
static void detect_compare(const struct fit *f, rm_detect *d)
{
	const struct seg *seg = f->seg;
	size_t k = f->k, r = f->r;

	if (f->improved) {
		/* The latest level is an improvement: against the reference before it. */
		d->level = seg[k].mean;
		d->level_n = seg[k].len;
		d->ref = f->ref_prev;
		d->ref_n = seg[f->r_prev].len;
		d->ref_first = f->keep[seg[f->r_prev].first];
	} else if (r == k) {
		/* One level: the runs before the judged one against it. */
		size_t a = seg[k].first;
		double sum = 0;
		for (size_t i = a; i + 1 < f->q; i++)
			sum += f->y[i];
		d->level = f->y[f->q - 1];
		d->level_n = 1;
		d->ref_n = f->q - 1 - a;
		d->ref = d->ref_n ? sum / (double)d->ref_n : NAN;
		d->ref_first = f->keep[a];
	} else {
		d->level = seg[k].mean;
		d->level_n = seg[k].len;
		d->ref = seg[r].mean;
		d->ref_n = seg[r].len;
		d->ref_first = f->keep[seg[r].first];
	}
}

/* The verdict on the latest level against the reference, and where its change started. */
static void detect_verdict(const struct fit *f, rm_direction dir, rm_detect *d)
{
	const struct seg *seg = f->seg;
	double se = d->noise * sqrt(1.0 / (double)d->level_n + 1.0 / (double)d->ref_n);
	double g = gain(dir, d->ref, d->level), z = f->z, thr = f->thr;
	size_t since = f->k, r = f->r, k = f->k;

	d->change_pct = (d->level - d->ref) / fabs(d->ref) * 100.0;
	d->z = fabs(d->level - d->ref) / se;
	d->band_pct = z * se / fabs(d->ref) * 100.0;
	if (dir == RM_DIR_UNKNOWN) {
		d->verdict = RM_VERDICT_UNKNOWN;
	} else if (g > thr / 100.0 * fabs(d->ref) && (d->z > z || f->improved)) {
		d->verdict = RM_VERDICT_BETTER;
	} else if (-g > thr / 100.0 * fabs(d->ref)) {
		d->verdict = d->z > z ? RM_VERDICT_REGRESSION : RM_VERDICT_NOISE;
		/* Where it started: the first of the levels since the reference that are all
		 * worse than it. */
		while (since > r + 1 && gain(dir, d->ref, seg[since - 1].mean) < 0)
			since--;
	} else {
		d->verdict = RM_VERDICT_SAME;
	}
	if (d->verdict != RM_VERDICT_SAME)
		d->since = r == k && !f->improved ? f->keep[f->q - 1] : f->keep[seg[since].first];
}

/*
 * What the noise lets be told: the least one-run change (z standard errors of the judged
 * run against the runs before it), and whether the threshold is out of reach: a lasting
 * change of its size, half the window before it and half after, would still be under z
 * standard errors. A series is "unstable" only then: a label on every series whose one-run
 * change is hidden would be on nearly all of them, and ignored.
 */
static void detect_label(const struct fit *f, const rm_detect_opts *o, rm_detect *d)
{
	size_t w = o->window ? o->window : RM_DETECT_WINDOW;
	double ref = fabs(d->ref), zw;

	if (w > RM_DETECT_MAX_WINDOW)
		w = RM_DETECT_MAX_WINDOW;
	if (w < 4)
		w = 4;
	zw = o->z > 0 ? o->z : rm_detect_z(w);
	if (!(ref > 0) || !isfinite(d->noise))
		return;
	d->detectable_pct = f->z * d->noise * sqrt(1.0 + 1.0 / (double)(f->m - 1)) / ref * 100.0;
	d->unstable = f->thr > 0 && d->noise_from != RM_NOISE_THRESHOLD &&
		      zw * d->noise * sqrt(4.0 / (double)w) > f->thr / 100.0 * ref;
}

/* One night's verdict on p[n - 1], from the window alone. */
static void detect_night(const rm_point *p, size_t n, const rm_detect_opts *o, rm_detect *d)
{
	struct fit f = {.p = p, .n = n};

	if (detect_window(p, n, o, d))
		return;
	f.first = d->first;
	f.m = d->n;
	f.from = f.first > RM_DETECT_CONTEXT ? f.first - RM_DETECT_CONTEXT : 0;
	detect_crit(&f, o, d);
	detect_noise(&f, d);
	detect_levels(&f, d);
	detect_reference(&f, o->direction, d);
	detect_recovery(&f, o->direction, d);
	detect_cps(&f, d);
	detect_compare(&f, d);
	if (!d->ref_n || !(d->ref != 0)) {
		d->verdict = RM_VERDICT_NONE;
		return;
	}
	detect_verdict(&f, o->direction, d);
	detect_label(&f, o, d);
}

/* Whether a night's latest level is still worse than its reference by more than half the
 * threshold (at a threshold of 0: by more than half the critical value in standard
 * errors): what keeps a regression found on an earlier night. */
static int still_worse(const rm_detect *d, const rm_detect_opts *o)
{
	double g;

	if (!isfinite(d->level) || !isfinite(d->ref) || d->verdict == RM_VERDICT_NONE ||
	    d->verdict == RM_VERDICT_UNKNOWN || d->verdict == RM_VERDICT_BETTER)
		return 0;
	g = gain(o->direction, d->ref, d->level);
	if (o->threshold_pct > 0)
		return -g > o->threshold_pct / 200.0 * fabs(d->ref);
	return d->z > d->z_crit / 2 && g < 0;
}

/*
 * A regression found on an earlier night holds while every night since has its latest
 * level still worse than its reference by more than half the threshold: a step that
 * persists stays reported though a night's noise, or where the levels cut, makes it look
 * smaller for a night. Nights are looked back at one by one (RM_DETECT_HOLD at most, each
 * judged from its own window, none with fewer than RM_DETECT_MIN_HISTORY runs), so a series
 * whose latest run is not worse costs one night.
 */
void rm_detect_run(const rm_point *p, size_t n, const rm_detect_opts *o, rm_detect *d)
{
	rm_detect y;

	detect_night(p, n, o, d);
	if (d->verdict == RM_VERDICT_REGRESSION || !still_worse(d, o))
		return;
	for (size_t back = 1; back <= RM_DETECT_HOLD && n - back >= 2; back++) {
		detect_night(p, n - back, o, &y);
		/* A night too young to measure its noise (the threshold alone judged it) holds
		 * nothing: such nights fail far more often by chance. */
		if (y.n < RM_DETECT_MIN_HISTORY)
			return;
		if (y.verdict == RM_VERDICT_REGRESSION) {
			d->verdict = RM_VERDICT_REGRESSION;
			d->since = y.since;
			d->held = RM_HELD_NIGHTS;
			d->held_nights = back;
			return;
		}
		if (!still_worse(&y, o))
			return;
	}
}
