#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rm/results.h"
#include "rm/report.h"
#include "rm/util.h"

#define DEFAULT_THRESHOLD 5.0

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

static double threshold_for(const rm_gate_opts *o, const char *model)
{
	for (size_t i = 0; i < o->n_thresholds; i++) {
		const char *m = o->thresholds[i].model;
		size_t ml = strlen(m);
		if (!strcmp(m, model) || (!strncmp(m, model, ml) && model[ml] == '_'))
			return o->thresholds[i].pct;
	}
	return o->threshold_pct >= 0 ? o->threshold_pct : DEFAULT_THRESHOLD;
}

static int same_key(const rm_result *r, const rm_change *c)
{
	return !strcmp(r->col[RM_COL_MODEL], c->model) &&
	       !strcmp(r->col[RM_COL_METRIC], c->metric) &&
	       !strcmp(r->col[RM_COL_DOCKERFILE], c->docker_file) &&
	       !strcmp(r->col[RM_COL_ARCH], c->arch);
}

/* The verdict of one compared change, and its note. */
static void judge(rm_change *c, size_t nv, const rm_baseline_entry *be)
{
	rm_stats bs = {0};
	double delta, worse, se2 = 0, num_c = 0, num_b = 0, dof_den = 0, noise = 0;
	char band[160] = "";
	/* A model a suite does not gate is still judged, at the default, for the reports. */
	double thr = c->threshold >= 0 ? c->threshold : DEFAULT_THRESHOLD;

	rm_stats_compute(be->values, be->n, &bs);
	c->base_run = be->run_id;
	c->base_n = bs.n;
	c->base_mean = bs.mean;
	c->base_sd = bs.stddev;
	c->noise_pct = NAN;
	if (bs.mean == 0) {
		c->note = rm_xstrdup("baseline is 0: no relative change");
		return;
	}
	c->change_pct = (c->mean - bs.mean) / fabs(bs.mean) * 100.0;
	delta = c->mean - bs.mean;
	/* Welch: se^2 = s1^2/n1 + s2^2/n2; a side with one value is exact. */
	if (nv >= 2) {
		num_c = c->sd * c->sd / (double)nv;
		dof_den += num_c * num_c / (double)(nv - 1);
	}
	if (bs.n >= 2) {
		num_b = bs.stddev * bs.stddev / (double)bs.n;
		dof_den += num_b * num_b / (double)(bs.n - 1);
	}
	se2 = num_c + num_b;
	if (nv >= 2 || bs.n >= 2) {
		double dof = dof_den > 0 ? se2 * se2 / dof_den : (double)(nv + bs.n - 2);
		c->t_crit = rm_t95(dof);
		noise = c->t_crit * sqrt(se2);
		c->noise_pct = noise / fabs(bs.mean) * 100.0;
		snprintf(band, sizeof(band),
			 "noise band +-%.2f%% (t=%.2f, Welch, %zu vs %zu repeats)", c->noise_pct,
			 c->t_crit, nv, bs.n);
	}
	if (c->direction == RM_DIR_UNKNOWN) {
		c->verdict = RM_VERDICT_UNKNOWN;
		c->note = rm_xasprintf("%+.2f%%; direction of '%s' unknown: not judged (set "
				       "metric_direction in models.json)",
				       c->change_pct, c->metric);
		return;
	}
	/* worse > 0 means a change in the bad direction, in percent. */
	worse = c->direction == RM_DIR_HIGHER ? -c->change_pct : c->change_pct;
	if (worse < 0 && -worse > thr)
		c->verdict = RM_VERDICT_BETTER;
	else if (worse <= thr)
		c->verdict = RM_VERDICT_SAME;
	else if (noise > 0 && fabs(delta) <= noise)
		c->verdict = RM_VERDICT_NOISE;
	else
		c->verdict = RM_VERDICT_REGRESSION;
	c->note = rm_xasprintf("%+.2f%% (%s is better: %s) vs %s; threshold %.2f%%%s%s%s",
			       c->change_pct, rm_direction_name(c->direction),
			       c->verdict == RM_VERDICT_BETTER ? "better"
			       : c->verdict == RM_VERDICT_SAME ? "within the threshold"
			       : c->verdict == RM_VERDICT_NOISE
				   ? "worse, but inside the noise: not a regression"
				   : "worse: regression",
			       c->base_run, thr, band[0] ? "; " : "", band,
			       band[0] ? "" : "; no repeats: threshold only");
}

/* A new change for r's key, its values not yet collected. */
static rm_change *new_change(rm_gate *g, size_t *cap, const rm_result *r, const rm_gate_opts *o)
{
	rm_change *c;

	if (g->n == *cap) {
		*cap = *cap ? *cap * 2 : 32;
		g->v = rm_xrealloc(g->v, *cap * sizeof(*g->v));
	}
	c = &g->v[g->n++];
	memset(c, 0, sizeof(*c));
	c->model = r->col[RM_COL_MODEL];
	c->metric = r->col[RM_COL_METRIC];
	c->docker_file = r->col[RM_COL_DOCKERFILE];
	c->arch = r->col[RM_COL_ARCH];
	c->machine = r->col[RM_COL_MACHINE];
	c->reason = "";
	c->log_file = r->col[RM_COL_LOG_FILE];
	c->change_pct = NAN;
	c->noise_pct = NAN;
	c->mean = c->sd = c->min = c->max = NAN;
	c->base_mean = c->base_sd = NAN;
	c->base_run = "";
	c->direction = rm_direction_lookup(o->directions, c->model, c->metric, &c->direction_why);
	c->threshold = threshold_for(o, c->model);
	return c;
}

/* The key's rows from row `from` on: counts, the first reason, the SUCCESS values into
 * vals. Returns the number of values. */
static size_t collect(const rm_results *run, size_t from, rm_change *c, double *vals)
{
	size_t nv = 0;

	for (size_t j = from; j < run->n; j++) {
		const rm_result *q = &run->rows[j];
		const char *st = q->col[RM_COL_STATUS];
		if (!same_key(q, c))
			continue;
		c->n_rows++;
		if (!strcmp(st, "SUCCESS") && isfinite(q->performance)) {
			c->n_success++;
			vals[nv++] = q->performance;
		} else if (!strcmp(st, "SKIPPED")) {
			c->n_skipped++;
		} else {
			c->n_failed++; /* FAILURE, or SUCCESS without a number */
		}
		if (strcmp(st, "SUCCESS") && !c->reason[0]) {
			c->reason = q->col[RM_COL_REASON];
			c->log_file = q->col[RM_COL_LOG_FILE];
		}
	}
	return nv;
}

/* The verdict of one key with nv values, and the gate's counts. */
static void verdict(rm_gate *g, rm_change *c, const double *vals, size_t nv,
		    const rm_baseline *base)
{
	const rm_baseline_entry *be;
	rm_stats st;

	if (c->n_failed)
		g->n_failed++;
	else if (c->n_skipped && !nv)
		g->n_skipped++;
	if (!nv) {
		c->verdict = c->n_failed ? RM_VERDICT_FAILED : RM_VERDICT_SKIPPED;
		c->note = rm_xstrdup(c->reason[0] ? c->reason : rm_verdict_name(c->verdict));
		return;
	}
	rm_stats_compute(vals, nv, &st);
	c->mean = st.mean;
	c->sd = st.stddev;
	c->min = st.min;
	c->max = st.max;
	be = base ? rm_baseline_find(base, c->model, c->metric, c->docker_file, c->arch, c->machine)
		  : NULL;
	if (!be) {
		c->verdict = RM_VERDICT_NONE;
		c->note = rm_xstrdup("no baseline");
		return;
	}
	judge(c, nv, be);
	if (isfinite(c->change_pct))
		g->n_compared++;
	if (c->verdict == RM_VERDICT_UNKNOWN)
		g->n_unknown++;
	if (c->verdict == RM_VERDICT_REGRESSION && c->threshold >= 0)
		g->n_regressions++;
}

void rm_gate_eval(const rm_results *run, const rm_baseline *base, const rm_gate_opts *o, rm_gate *g)
{
	double *vals = rm_xcalloc(run->n ? run->n : 1, sizeof(*vals));
	size_t cap = 0;

	memset(g, 0, sizeof(*g));
	g->enforce = o->enforce;
	g->threshold_pct = o->threshold_pct >= 0 ? o->threshold_pct : DEFAULT_THRESHOLD;
	g->have_baseline = base != NULL && rm_baseline_size(base) > 0;
	for (size_t i = 0; i < run->n; i++) {
		const rm_result *r = &run->rows[i];
		size_t k;
		for (k = 0; k < g->n; k++)
			if (same_key(r, &g->v[k]))
				break;
		if (k < g->n)
			continue;
		rm_change *c = new_change(g, &cap, r, o);
		verdict(g, c, vals, collect(run, i, c, vals), base);
	}
	free(vals);
	g->rule = rm_xasprintf(
	    "A metric regressed when it moved the wrong way (direction from models.json "
	    "metric_direction, else the metric table) by more than %.2f%% of its baseline "
	    "(the latest earlier SUCCESS run of the same model, metric, Dockerfile and GPU "
	    "architecture, same machine preferred)%s, and, where either side has repeats, by more "
	    "than the noise band: Student's t (95%%, Welch) times the standard error of the "
	    "difference of the means. A change inside the noise is not a regression.",
	    g->threshold_pct,
	    o->n_thresholds ? " (suite entries may set their own threshold)" : "");
}

void rm_gate_release(rm_gate *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->v[i].note);
	free(g->v);
	free(g->rule);
	memset(g, 0, sizeof(*g));
}
