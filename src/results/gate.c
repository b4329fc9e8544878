/*
 * The regression gate: each model and metric of a run judged against its history by the
 * detector (detect.c), and against its pinned reference when it has one.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rm/config.h"
#include "rm/detect.h"
#include "rm/direction.h"
#include "rm/gate.h"
#include "rm/history.h"
#include "rm/references.h"
#include "rm/results.h"
#include "rm/report.h"
#include "rm/util.h"

#define DEFAULT_THRESHOLD 5.0

void rm_run_ref_text(const rm_run_ref *r, char *buf, size_t size)
{
	int n = snprintf(buf, size, "run %s", r->id[0] ? r->id : "?");
	if (n < 0 || (size_t)n >= size)
		return;
	if (r->start[0] && r->commit[0])
		snprintf(buf + n, size - (size_t)n, " (%s, models at %.12s)", r->start, r->commit);
	else if (r->start[0] || r->commit[0])
		snprintf(buf + n, size - (size_t)n, " (%s%.12s)",
			 r->start[0] ? r->start : "models at ", r->start[0] ? "" : r->commit);
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

/* The change's name in reports ("model[batch_size=8]"), and its pinned reference: the
 * configuration's own under that name, else the model's when the row has no parameters. */
static void name_config(rm_change *c, const rm_gate_opts *o)
{
	rm_config cfg = RM_CONFIG_INIT;

	if (rm_config_parse(&cfg, c->config) < 0)
		rm_config_release(&cfg);
	c->name = rm_config_name(c->model, &cfg);
	c->pin = rm_references_find(o->references, c->name, c->metric);
	if (!c->pin && !cfg.n)
		c->pin = rm_references_find(o->references, c->model, c->metric);
	rm_config_release(&cfg);
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
	c->n_gpus = r->col[RM_COL_NGPUS];
	c->machine = r->col[RM_COL_MACHINE];
	c->config = r->col[RM_COL_CONFIG];
	c->config_key = r->col[RM_COL_CONFIG_KEY];
	c->reason = "";
	c->log_file = r->col[RM_COL_LOG_FILE];
	c->change_pct = NAN;
	c->noise_pct = NAN;
	c->mean = c->sd = c->min = c->max = NAN;
	c->base_mean = c->base_sd = c->level = NAN;
	c->base_run = "";
	c->since = c->from = (rm_run_ref){"", "", ""};
	c->detect.verdict = RM_VERDICT_NONE;
	c->direction = rm_direction_lookup(o->directions, c->model, c->metric, &c->direction_why);
	c->threshold = threshold_for(o, c->model);
	c->detectable_pct = NAN;
	name_config(c, o);
	return c;
}

/* The key's rows, from row `from` along next[]: counts, the first reason, the SUCCESS values
 * into vals, this run's start and commit into *self. Returns the number of values. */
static size_t collect(const rm_results *run, size_t from, const size_t *next, rm_change *c,
		      double *vals, rm_run_ref *self)
{
	size_t nv = 0;

	*self = (rm_run_ref){run->rows[from].col[RM_COL_RUN_ID], "", ""};
	for (size_t j = from; j != RM_DETECT_NONE; j = next[j]) {
		const rm_result *q = &run->rows[j];
		const char *st = q->col[RM_COL_STATUS], *ts = q->col[RM_COL_TIMESTAMP];
		if (q->retried) /* a later attempt is the run's */
			continue;
		c->n_rows++;
		if (ts[0] && (!self->start[0] || strcmp(ts, self->start) < 0))
			self->start = ts;
		if (!self->commit[0])
			self->commit = q->col[RM_COL_GIT_COMMIT];
		if (rm_status_of(st) == RM_STATUS_SUCCESS && isfinite(q->performance)) {
			c->n_success++;
			vals[nv++] = q->performance;
		} else if (rm_status_of(st) == RM_STATUS_SKIPPED) {
			c->n_skipped++;
		} else {
			c->n_failed++; /* FAILURE, or SUCCESS without a number */
		}
		if (rm_status_of(st) != RM_STATUS_SUCCESS && !c->reason[0]) {
			c->reason = q->col[RM_COL_REASON];
			c->log_file = q->col[RM_COL_LOG_FILE];
		}
	}
	return nv;
}

/* Scratch for one key: the points the detector reads and where each run came from. */
struct pts {
	rm_point p[RM_DETECT_KEEP(RM_DETECT_MAX_WINDOW) + 1];
	rm_run_ref at[RM_DETECT_KEEP(RM_DETECT_MAX_WINDOW) + 1];
	size_t n;
};

static rm_run_ref run_ref(const rm_baseline *b, size_t run)
{
	const rm_run_info *ri = rm_history_run(b, run);
	return (rm_run_ref){ri->id, ri->start, ri->commit};
}

/* The history's valued runs (from the acceptance on, the last window + context of them),
 * then this run. */
static void gather(const rm_baseline *b, const rm_hseries *s, size_t window, const rm_point *now,
		   const rm_run_ref *self, struct pts *x)
{
	size_t from = rm_history_from(b, s), want = RM_DETECT_KEEP(window), start = s->n;

	for (size_t k = 0; start > from && k < want; start--)
		k += s->p[start - 1].n > 0 &&
		     strcmp(rm_history_run(b, s->p[start - 1].run)->id, self->id);
	x->n = 0;
	for (size_t i = start; i < s->n; i++) {
		/* failed-only runs, and this run should the history hold it */
		if (!s->p[i].n || !strcmp(rm_history_run(b, s->p[i].run)->id, self->id))
			continue;
		x->p[x->n] = rm_hpoint_value(&s->p[i]);
		x->at[x->n++] = run_ref(b, s->p[i].run);
	}
	x->p[x->n] = *now;
	x->at[x->n++] = *self;
}

int rm_history_judge(const rm_baseline *b, const rm_hseries *s, const rm_detect_opts *o,
		     rm_detect *d, rm_run_ref *since)
{
	struct pts *x = rm_xmalloc(sizeof(*x));
	size_t last = s->n;
	rm_run_ref self;
	int ret = -1;

	while (last > 0 && !s->p[last - 1].n)
		last--;
	*since = (rm_run_ref){"", "", ""};
	if (last) {
		rm_point now = rm_hpoint_value(&s->p[last - 1]);
		rm_hseries before = *s;
		self = run_ref(b, s->p[last - 1].run);
		before.n = last - 1;
		gather(b, &before, o->window ? o->window : RM_DETECT_WINDOW, &now, &self, x);
		if (x->n >= 2) {
			rm_detect_run(x->p, x->n, o, d);
			if (d->since != RM_DETECT_NONE)
				*since = x->at[d->since];
			ret = 0;
		}
	}
	free(x);
	return ret;
}

/* "what" of a verdict in notes */
static const char *what(rm_verdict v)
{
	switch (v) {
	case RM_VERDICT_BETTER:
		return "better";
	case RM_VERDICT_NOISE:
		return "worse, but inside the noise: not a regression";
	case RM_VERDICT_REGRESSION:
		return "worse: regression";
	default:
		return "within the threshold";
	}
}

void rm_pct_text(double pct, char *buf, size_t size)
{
	snprintf(buf, size, fabs(pct) < 1e6 ? "%+.2f%%" : "%+.3g%%", pct);
}

/* The note of a judged change: the figure first (CI views show the start of it). */
static void change_note(rm_change *c, const struct pts *x, double thr)
{
	const rm_detect *d = &c->detect;
	rm_buf b = RM_BUF_INIT((size_t)1 << 16);
	char since[256], pct[64];

	rm_pct_text(c->change_pct, pct, sizeof(pct));
	if (c->verdict == RM_VERDICT_UNKNOWN)
		rm_buf_addf(&b,
			    "%s; direction of '%s' unknown: not judged (set "
			    "metric_direction in models.json)",
			    pct, c->metric);
	else
		rm_buf_addf(&b, "%s (%s is better: %s)", pct, rm_direction_name(c->direction),
			    what(d->verdict));
	if (c->since.id[0]) {
		rm_run_ref_text(&c->since, since, sizeof(since));
		rm_buf_addf(&b, " since %s", since);
	}
	if (d->n == 2) {
		rm_buf_addf(&b, " vs %s; threshold %.2f%%", c->base_run, thr);
		if (d->noise_from == RM_NOISE_REPEATS)
			rm_buf_addf(&b, "; noise band +-%.2f%% (t=%.2f, Welch, %zu vs %zu repeats)",
				    d->band_pct, d->z_crit, x->p[x->n - 1].n, x->p[x->n - 2].n);
		else
			rm_buf_addstr(&b, "; no repeats: threshold only");
	} else {
		rm_buf_addf(&b,
			    ": level %.6g over %zu run%s vs %.6g over %zu run%s from %s; threshold "
			    "%.2f%%; noise %.3g (%s; %zu runs read), change %.1f vs %.2f standard "
			    "errors",
			    d->level, d->level_n, d->level_n == 1 ? "" : "s", d->ref, d->ref_n,
			    d->ref_n == 1 ? "" : "s", c->base_run, thr, d->noise,
			    d->noise_from == RM_NOISE_HISTORY	? "measured from the history"
			    : d->noise_from == RM_NOISE_REPEATS ? "from the repeats"
								: "the threshold's floor",
			    d->n, d->z, d->z_crit);
		if (d->n_outliers)
			rm_buf_addf(&b, "; %zu one-run outlier%s set aside", d->n_outliers,
				    d->n_outliers == 1 ? "" : "s");
		if (d->held == RM_HELD_RUN)
			rm_buf_addstr(&b, "; the run judged alone is back near the reference: it "
					  "joins the level before it until a second run agrees");
		else if (d->held == RM_HELD_NIGHTS)
			rm_buf_addf(&b,
				    "; found %zu night%s ago and still worse than the reference by "
				    "more than half the threshold",
				    d->held_nights, d->held_nights == 1 ? "" : "s");
		if (isfinite(d->detectable_pct))
			rm_buf_addf(&b,
				    "; a one-run change under %.2f%% cannot be told from its noise",
				    d->detectable_pct);
		if (d->unstable)
			rm_buf_addstr(&b, "; unstable: the threshold is out of reach of its noise "
					  "(a lasting change of its size would not be told)");
	}
	if (c->accepted)
		rm_buf_addf(&b, "; accepted from run %s on", c->accepted);
	c->note = rm_buf_detach(&b);
}

/* The history's verdict of a key with this run's values. */
static void judge(rm_change *c, const rm_point *now, const rm_run_ref *self,
		  const rm_baseline *base, const rm_gate_opts *o)
{
	const rm_hseries *s = rm_history_find(base, c->model, c->metric, c->docker_file, c->arch,
					      c->n_gpus, c->machine, c->config_key);
	/* A model a suite does not gate is still judged, at the default, for the reports. */
	double thr = c->threshold >= 0 ? c->threshold : DEFAULT_THRESHOLD;
	struct pts *x;
	rm_detect *d = &c->detect;

	if (!s)
		return;
	x = rm_xmalloc(sizeof(*x));
	gather(base, s, o->window ? o->window : RM_DETECT_WINDOW, now, self, x);
	if (x->n < 2) {
		free(x);
		return;
	}
	c->accepted = rm_history_accepted(base, s, NULL);
	rm_detect_opts dopt = RM_DETECT_OPTS_INIT;
	dopt.direction = c->direction;
	dopt.threshold_pct = thr;
	dopt.window = o->window;
	rm_detect_run(x->p, x->n, &dopt, d);
	c->verdict = d->verdict;
	c->n_history = d->n;
	c->base_mean = d->ref;
	c->base_n = d->n == 2 ? x->p[x->n - 2].n : d->ref_n;
	c->base_sd = d->n == 2 ? x->p[x->n - 2].sd : d->noise;
	c->base_run = d->ref_first != RM_DETECT_NONE ? x->at[d->ref_first].id : "";
	c->level = d->level;
	c->level_n = d->level_n;
	c->change_pct = d->change_pct;
	c->noise_pct = d->band_pct;
	c->detectable_pct = d->detectable_pct;
	c->t_crit = d->z_crit;
	if (d->since != RM_DETECT_NONE)
		c->since = x->at[d->since];
	c->from = x->at[d->first];
	for (size_t i = 0; i < d->n_cps; i++)
		c->cps[c->n_cps++] = x->at[d->cps[i]];
	if (d->verdict == RM_VERDICT_NONE) {
		c->note =
		    rm_xstrdup(d->ref == 0 ? "reference level is 0: no relative change"
					   : "a run's value is not a finite number: not judged");
		free(x);
		return;
	}
	change_note(c, x, thr);
	free(x);
}

/* The pinned reference's verdict, and the overall one. A failed reference leads the note
 * (CI views show its start); otherwise it follows the history's verdict. */
static void pin(rm_change *c)
{
	const rm_reference *r = c->pin;
	double lo = isfinite(r->lower_pct) ? r->value - fabs(r->value) * r->lower_pct / 100 : NAN;
	double hi = isfinite(r->upper_pct) ? r->value + fabs(r->value) * r->upper_pct / 100 : NAN;
	int below = isfinite(lo) && c->mean < lo, above = isfinite(hi) && c->mean > hi;
	int bad =
	    (below && c->direction != RM_DIR_LOWER) || (above && c->direction != RM_DIR_HIGHER);
	char los[32] = "no bound", his[32] = "no bound", *pn, *n;

	if (isfinite(lo))
		snprintf(los, sizeof(los), "%.6g", lo);
	if (isfinite(hi))
		snprintf(his, sizeof(his), "%.6g", hi);
	c->pin_verdict = bad		  ? RM_VERDICT_REGRESSION
			 : below || above ? RM_VERDICT_BETTER
					  : RM_VERDICT_SAME;
	pn = rm_xasprintf("%.6g %s its reference %.6g (allowed %s .. %s)%s", c->mean,
			  below	  ? "is below"
			  : above ? "is above"
				  : "is within",
			  r->value, los, his,
			  bad					? ": regression"
			  : c->pin_verdict == RM_VERDICT_BETTER ? ": better, update the reference"
								: "");
	if (!c->note)
		n = pn;
	else if (bad)
		n = rm_xasprintf("%s; history: %s", pn, c->note);
	else
		n = rm_xasprintf("%s; %s", c->note, pn);
	if (n != pn)
		free(pn);
	free(c->note);
	c->note = n;
	if (c->pin_verdict == RM_VERDICT_REGRESSION)
		c->verdict = RM_VERDICT_REGRESSION;
	else if (c->verdict == RM_VERDICT_NONE)
		c->verdict =
		    c->pin_verdict == RM_VERDICT_BETTER ? RM_VERDICT_BETTER : RM_VERDICT_SAME;
}

/* The verdict of one key with nv values, and the gate's counts. */
static void verdict(rm_gate *g, rm_change *c, const double *vals, size_t nv, const rm_run_ref *self,
		    const rm_baseline *base, const rm_gate_opts *o)
{
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
	rm_point now = {st.mean, st.stddev, nv};
	judge(c, &now, self, base, o);
	if (c->pin)
		pin(c);
	if (c->verdict == RM_VERDICT_NONE) {
		if (!c->note)
			c->note = rm_xstrdup("no baseline");
		return;
	}
	if (isfinite(c->change_pct))
		g->n_compared++;
	if (c->verdict == RM_VERDICT_UNKNOWN)
		g->n_unknown++;
	if (c->verdict == RM_VERDICT_BETTER)
		g->n_better++;
	if (c->detect.unstable)
		g->n_unstable++;
	if (c->verdict == RM_VERDICT_REGRESSION && c->threshold >= 0)
		g->n_regressions++;
}

/* The run's rows by key (model, metric, Dockerfile, GPU architecture and count,
 * configuration key): next[i] the key's next row after row i, first[k] the first row of the
 * k-th key in order of appearance. Returns the number of keys. A hash table, so that a run
 * of 10,000 configurations is not 10,000^2 comparisons. */
static size_t group_rows(const rm_results *run, size_t *next, size_t *first)
{
	json_t *index = json_object();
	size_t *last = rm_xcalloc(run->n ? run->n : 1, sizeof(*last)), nk = 0;
	rm_buf key = RM_BUF_INIT((size_t)1 << 20);
	static const int cols[] = {RM_COL_MODEL, RM_COL_METRIC, RM_COL_DOCKERFILE,
				   RM_COL_ARCH,	 RM_COL_NGPUS,	RM_COL_CONFIG_KEY};

	for (size_t i = 0; i < run->n; i++) {
		json_t *v;
		rm_buf_reset(&key);
		for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++) {
			rm_buf_addstr(&key, run->rows[i].col[cols[c]]);
			rm_buf_addch(&key, '\x1f');
		}
		next[i] = RM_DETECT_NONE;
		v = json_object_getn(index, rm_buf_str(&key), key.len);
		if (v) {
			size_t k = (size_t)json_integer_value(v);
			next[last[k]] = i;
			last[k] = i;
			continue;
		}
		json_object_setn_new_nocheck(index, rm_buf_str(&key), key.len,
					     json_integer((json_int_t)nk));
		first[nk] = last[nk] = i;
		nk++;
	}
	rm_buf_release(&key);
	json_decref(index);
	free(last);
	return nk;
}

void rm_gate_eval(const rm_results *run, const rm_baseline *base, const rm_gate_opts *o, rm_gate *g)
{
	double *vals = rm_xcalloc(run->n ? run->n : 1, sizeof(*vals));
	size_t *next = rm_xcalloc(run->n ? run->n : 1, sizeof(*next));
	size_t *first = rm_xcalloc(run->n ? run->n : 1, sizeof(*first));
	size_t cap = 0, nk = group_rows(run, next, first);
	rm_run_ref self;

	memset(g, 0, sizeof(*g));
	g->enforce = o->enforce;
	g->threshold_pct = o->threshold_pct >= 0 ? o->threshold_pct : DEFAULT_THRESHOLD;
	g->have_baseline = (base != NULL && rm_history_n_series(base) > 0) ||
			   rm_references_size(o->references) > 0;
	for (size_t k = 0; k < nk; k++) {
		rm_change *c = new_change(g, &cap, &run->rows[first[k]], o);
		size_t nv = collect(run, first[k], next, c, vals, &self);
		verdict(g, c, vals, nv, &self, base, o);
	}
	free(vals);
	free(next);
	free(first);
	g->rule = rm_xasprintf(
	    "Each metric is judged against its history (the same model, metric, Dockerfile, GPU "
	    "architecture and count, and configuration, same machine preferred; the last %zu runs, "
	    "from an accepted "
	    "change on). The noise of a run is measured from the history (robustly, from the "
	    "run-to-run differences, then from the spread around the levels) and from the "
	    "repeats; a run far from the runs on both sides of it is an outlier and set aside; "
	    "the history is cut into levels where it changes significantly (optimal "
	    "partitioning). A metric regressed when its latest level is worse than the reference "
	    "level (the first level, or the latest significant improvement; worse levels never "
	    "replace it, so a step stays reported until accepted and a drift adds up) by more than "
	    "%.2f%%%s and by more than the calibrated critical value in standard errors; a change "
	    "inside the noise is not a regression. With one earlier run the threshold alone "
	    "decides, with Welch's band when there are repeats. Direction from models.json "
	    "metric_direction, else the metric table.%s",
	    o->window ? o->window : (size_t)RM_DETECT_WINDOW, g->threshold_pct,
	    o->n_thresholds ? " (suite entries may set their own threshold)" : "",
	    rm_references_size(o->references)
		? " A value outside its pinned reference on the bad side is a regression too."
		: "");
}

void rm_gate_release(rm_gate *g)
{
	for (size_t i = 0; i < g->n; i++) {
		free(g->v[i].note);
		free(g->v[i].name);
	}
	free(g->v);
	free(g->rule);
	memset(g, 0, sizeof(*g));
}
