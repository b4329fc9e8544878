/*
 * The running figures of a run's telemetry (rm/telemetry.h): constant memory, one slot per
 * GPU, updated per reading. Pure: no clock, no files.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rm/telemetry.h"
#include "rm/util.h"

struct gpu_acc {
	long id;
	/* power: the trapezoids so far, the first and the latest reading */
	double energy_j;
	double first_t, first_p;
	double last_t, last_p; /* last_p NAN: no reading yet */
	double util_sum;
	size_t util_n;
	double vram_max, temp_max;
	/* throttling */
	double peak_busy_mhz;
	size_t busy_n, throttled_n;
	/* its causes: busy readings with reasons, and those under each cause */
	size_t busy_known_n, cause_n[RM_THROTTLE_CAUSES];
	unsigned known;
	double limit_w; /* the latest power limit read; 0: none */
};

struct rm_telem_agg {
	size_t n;
	double t_start;
	size_t n_samples;
	double power_max;
	int throttled;
	long thr_gpu;
	double thr_t, thr_from, thr_to, thr_util;
	/* the first busy reading under a problem cause */
	long cause_gpu;
	int cause_first;
	double cause_t;
	struct gpu_acc g[];
};

static double agg_fmax(double a, double b)
{
	return isnan(a) ? b : isnan(b) ? a : fmax(a, b);
}

static double agg_fmin(double a, double b)
{
	return isnan(a) ? b : isnan(b) ? a : fmin(a, b);
}

void rm_telem_summary_none(rm_telem_summary *s)
{
	memset(s, 0, sizeof(*s));
	s->power_avg_w = s->power_max_w = s->energy_j = NAN;
	s->vram_max_mib = s->util_avg_pct = s->temp_max_c = NAN;
	s->throttle_pct = s->throttle_t = s->throttle_from_mhz = NAN;
	s->throttle_to_mhz = s->throttle_util_pct = NAN;
	s->throttle_gpu = -1;
	for (int c = 0; c < RM_THROTTLE_CAUSES; c++)
		s->cause_pct[c] = NAN;
	s->cause_gpu = -1;
	s->cause_first = -1;
	s->cause_t = NAN;
	s->power_limit_w = NAN;
}

int rm_telem_summary_main_cause(const rm_telem_summary *s, int problems_only)
{
	int best = -1;

	for (int c = 0; c < RM_THROTTLE_CAUSES; c++)
		if ((!problems_only || !rm_throttle_causes[c].expected) && s->cause_pct[c] > 0 &&
		    (best < 0 || s->cause_pct[c] > s->cause_pct[best]))
			best = c;
	return best;
}

rm_telem_agg *rm_telem_agg_new(size_t n_gpus, const long *gpu_ids, double t_start)
{
	rm_telem_agg *a;

	if (n_gpus > RM_TELEM_MAX_GPUS)
		n_gpus = RM_TELEM_MAX_GPUS;
	a = rm_xcalloc(1, sizeof(*a) + n_gpus * sizeof(a->g[0]));
	a->n = n_gpus;
	a->t_start = t_start;
	a->power_max = NAN;
	a->thr_gpu = -1;
	a->cause_gpu = -1;
	a->cause_first = -1;
	for (size_t i = 0; i < n_gpus; i++) {
		struct gpu_acc *g = &a->g[i];
		g->id = gpu_ids ? gpu_ids[i] : (long)i;
		g->first_p = g->last_p = NAN;
		g->vram_max = g->temp_max = NAN;
		g->peak_busy_mhz = NAN;
	}
	return a;
}

void rm_telem_agg_free(rm_telem_agg *a)
{
	free(a);
}

static void agg_power(rm_telem_agg *a, struct gpu_acc *g, double t, double p)
{
	double total = 0;
	int all = 1;

	if (isnan(g->last_p)) {
		g->first_t = t;
		g->first_p = p;
	} else if (t > g->last_t) {
		g->energy_j += (g->last_p + p) / 2 * (t - g->last_t);
	}
	g->last_t = t;
	g->last_p = p;
	/* The run's power now: every GPU's latest reading, once each has one. */
	for (size_t i = 0; i < a->n && all; i++) {
		all = !isnan(a->g[i].last_p);
		total += a->g[i].last_p;
	}
	if (all)
		a->power_max = agg_fmax(a->power_max, total);
}

/* Busy with its clock below the fraction of its busy peak: the clock fell under load. */
static void agg_clock(rm_telem_agg *a, struct gpu_acc *g, double t, double util, double mhz)
{
	if (isnan(util) || isnan(mhz) || util < RM_TELEM_BUSY_PCT)
		return;
	g->busy_n++;
	if (!isnan(g->peak_busy_mhz) &&
	    mhz < g->peak_busy_mhz * (100.0 - RM_TELEM_THROTTLE_DROP_PCT) / 100.0) {
		g->throttled_n++;
		if (!a->throttled) {
			a->throttled = 1;
			a->thr_gpu = g->id;
			a->thr_t = t - a->t_start;
			a->thr_from = g->peak_busy_mhz;
			a->thr_to = mhz;
			a->thr_util = util;
		}
	}
	g->peak_busy_mhz = agg_fmax(g->peak_busy_mhz, mhz);
}

/* A busy reading's causes; the first one under a problem cause is the run's to name. */
static void agg_causes(rm_telem_agg *a, struct gpu_acc *g, double t, const rm_telem_sample *s)
{
	if (!s->causes_known || isnan(s->util_pct) || s->util_pct < RM_TELEM_BUSY_PCT)
		return;
	g->known |= s->causes_known;
	g->busy_known_n++;
	for (int c = 0; c < RM_THROTTLE_CAUSES; c++) {
		if (!(s->causes & s->causes_known & (1u << c)))
			continue;
		g->cause_n[c]++;
		if (a->cause_gpu < 0 && !rm_throttle_causes[c].expected) {
			a->cause_gpu = g->id;
			a->cause_first = c;
			a->cause_t = t - a->t_start;
		}
	}
}

void rm_telem_agg_add(rm_telem_agg *a, size_t i, double t, const rm_telem_sample *s)
{
	struct gpu_acc *g;

	if (i >= a->n)
		return;
	g = &a->g[i];
	a->n_samples++;
	if (isfinite(s->power_w) && s->power_w >= 0)
		agg_power(a, g, t, s->power_w);
	if (isfinite(s->util_pct)) {
		g->util_sum += s->util_pct;
		g->util_n++;
	}
	if (isfinite(s->vram_mib))
		g->vram_max = agg_fmax(g->vram_max, s->vram_mib);
	if (isfinite(s->temp_c))
		g->temp_max = agg_fmax(g->temp_max, s->temp_c);
	agg_clock(a, g, t, s->util_pct, s->sclk_mhz);
	agg_causes(a, g, t, s);
	if (isfinite(s->power_limit_w) && s->power_limit_w > 0)
		g->limit_w = s->power_limit_w;
}

/* The causes' shares over the GPUs, and the power limit worth naming: the throttling
 * GPU's, else the first one under a problem cause, else the lowest of the run. */
static void agg_summary_causes(const rm_telem_agg *a, rm_telem_summary *out)
{
	size_t busy = 0, n[RM_THROTTLE_CAUSES] = {0};
	unsigned known = 0;

	for (size_t i = 0; i < a->n; i++) {
		const struct gpu_acc *g = &a->g[i];
		busy += g->busy_known_n;
		known |= g->known;
		for (int c = 0; c < RM_THROTTLE_CAUSES; c++)
			n[c] += g->cause_n[c];
		if (g->limit_w > 0 &&
		    (g->id == a->thr_gpu || (a->thr_gpu < 0 && g->id == a->cause_gpu)))
			out->power_limit_w = g->limit_w;
	}
	if (isnan(out->power_limit_w))
		for (size_t i = 0; i < a->n; i++)
			if (a->g[i].limit_w > 0)
				out->power_limit_w = agg_fmin(out->power_limit_w, a->g[i].limit_w);
	out->n_busy_known = busy;
	for (int c = 0; c < RM_THROTTLE_CAUSES && busy; c++)
		if (known & (1u << c))
			out->cause_pct[c] = 100.0 * (double)n[c] / (double)busy;
	out->cause_gpu = a->cause_gpu;
	out->cause_first = a->cause_first;
	out->cause_t = a->cause_gpu >= 0 ? a->cause_t : NAN;
}

void rm_telem_agg_summary(const rm_telem_agg *a, double t_end, rm_telem_summary *out)
{
	double window = t_end - a->t_start, energy = 0, util = 0;
	size_t util_n = 0, busy = 0, throttled = 0;
	int any_power = 0;

	rm_telem_summary_none(out);
	out->n_gpus = a->n;
	out->n_samples = a->n_samples;
	out->window_s = window > 0 ? window : 0;
	for (size_t i = 0; i < a->n; i++) {
		const struct gpu_acc *g = &a->g[i];
		if (!isnan(g->last_p)) {
			/* the first and last readings held to the window's edges */
			double head = g->first_t > a->t_start ? g->first_t - a->t_start : 0;
			double tail = t_end > g->last_t ? t_end - g->last_t : 0;
			energy += g->energy_j + g->first_p * head + g->last_p * tail;
			any_power = 1;
		}
		util += g->util_sum;
		util_n += g->util_n;
		out->vram_max_mib = agg_fmax(out->vram_max_mib, g->vram_max);
		out->temp_max_c = agg_fmax(out->temp_max_c, g->temp_max);
		busy += g->busy_n;
		throttled += g->throttled_n;
	}
	if (any_power) {
		out->energy_j = energy;
		out->power_avg_w = window > 0 ? energy / window : NAN;
		out->power_max_w = a->power_max;
	}
	if (util_n)
		out->util_avg_pct = util / (double)util_n;
	if (busy)
		out->throttle_pct = 100.0 * (double)throttled / (double)busy;
	if (a->throttled) {
		out->throttle_gpu = a->thr_gpu;
		out->throttle_t = a->thr_t;
		out->throttle_from_mhz = a->thr_from;
		out->throttle_to_mhz = a->thr_to;
		out->throttle_util_pct = a->thr_util;
	}
	agg_summary_causes(a, out);
}

/* a + b where NAN means "not measured": one side alone counts. */
static double agg_sum(double a, double b)
{
	return isnan(a) ? b : isnan(b) ? a : a + b;
}

/* Causes over hosts: shares weighted by their busy readings; the first problem seen. */
static void summary_merge_causes(rm_telem_summary *into, const rm_telem_summary *o)
{
	double ni = (double)into->n_busy_known, no = (double)o->n_busy_known;

	for (int c = 0; c < RM_THROTTLE_CAUSES; c++) {
		double a = into->cause_pct[c], b = o->cause_pct[c];
		if (isnan(a) || !ni)
			into->cause_pct[c] = b;
		else if (!isnan(b) && no)
			into->cause_pct[c] = (a * ni + b * no) / (ni + no);
	}
	into->n_busy_known += o->n_busy_known;
	if (into->cause_gpu < 0 && o->cause_gpu >= 0) {
		into->cause_gpu = o->cause_gpu;
		into->cause_first = o->cause_first;
		into->cause_t = o->cause_t;
	}
	if (isnan(into->power_limit_w) || (into->throttle_gpu < 0 && o->throttle_gpu >= 0))
		into->power_limit_w =
		    isnan(o->power_limit_w) ? into->power_limit_w : o->power_limit_w;
}

void rm_telem_summary_merge(rm_telem_summary *into, const rm_telem_summary *o)
{
	size_t n_into = into->n_samples, n_o = o->n_samples;

	into->power_avg_w = agg_sum(into->power_avg_w, o->power_avg_w);
	into->power_max_w = agg_sum(into->power_max_w, o->power_max_w);
	into->energy_j = agg_sum(into->energy_j, o->energy_j);
	into->vram_max_mib = agg_fmax(into->vram_max_mib, o->vram_max_mib);
	into->temp_max_c = agg_fmax(into->temp_max_c, o->temp_max_c);
	if (isnan(into->util_avg_pct) || !n_into)
		into->util_avg_pct = o->util_avg_pct;
	else if (!isnan(o->util_avg_pct) && n_o)
		into->util_avg_pct =
		    (into->util_avg_pct * (double)n_into + o->util_avg_pct * (double)n_o) /
		    (double)(n_into + n_o);
	into->throttle_pct = agg_fmax(into->throttle_pct, o->throttle_pct);
	summary_merge_causes(into, o);
	if (into->throttle_gpu < 0 && o->throttle_gpu >= 0) {
		into->throttle_gpu = o->throttle_gpu;
		into->throttle_t = o->throttle_t;
		into->throttle_from_mhz = o->throttle_from_mhz;
		into->throttle_to_mhz = o->throttle_to_mhz;
		into->throttle_util_pct = o->throttle_util_pct;
	}
	into->window_s = fmax(into->window_s, o->window_s);
	into->n_gpus += o->n_gpus;
	into->n_samples += o->n_samples;
}

/* ---- JSON, for the result files of SLURM nodes ---- */

#define SUMMARY_FIELDS(X)                                                                          \
	X(window_s)                                                                                \
	X(power_avg_w)                                                                             \
	X(power_max_w)                                                                             \
	X(energy_j)                                                                                \
	X(vram_max_mib)                                                                            \
	X(util_avg_pct)                                                                            \
	X(temp_max_c)                                                                              \
	X(throttle_pct)                                                                            \
	X(throttle_t)                                                                              \
	X(throttle_from_mhz)                                                                       \
	X(throttle_to_mhz)                                                                         \
	X(throttle_util_pct)                                                                       \
	X(cause_t)                                                                                 \
	X(power_limit_w)

json_t *rm_telem_summary_to_json(const rm_telem_summary *s)
{
	json_t *j = json_object();

	json_object_set_new(j, "n_gpus", json_integer((json_int_t)s->n_gpus));
	json_object_set_new(j, "n_samples", json_integer((json_int_t)s->n_samples));
	if (s->throttle_gpu >= 0)
		json_object_set_new(j, "throttle_gpu", json_integer(s->throttle_gpu));
	json_object_set_new(j, "n_busy_known", json_integer((json_int_t)s->n_busy_known));
	if (s->cause_gpu >= 0 && s->cause_first >= 0 && s->cause_first < RM_THROTTLE_CAUSES) {
		json_object_set_new(j, "cause_gpu", json_integer(s->cause_gpu));
		json_object_set_new(j, "cause_first",
				    json_string(rm_throttle_causes[s->cause_first].word));
	}
	for (int c = 0; c < RM_THROTTLE_CAUSES; c++)
		if (isfinite(s->cause_pct[c])) {
			char key[64];
			snprintf(key, sizeof(key), "throttle_%s_pct", rm_throttle_causes[c].word);
			json_object_set_new(j, key, json_real(s->cause_pct[c]));
		}
#define TO_JSON(f)                                                                                 \
	if (isfinite(s->f))                                                                        \
		json_object_set_new(j, #f, json_real(s->f));
	SUMMARY_FIELDS(TO_JSON)
#undef TO_JSON
	return j;
}

static void summary_causes_from_json(json_t *j, rm_telem_summary *out)
{
	json_t *v;

	if (json_is_integer(v = json_object_get(j, "n_busy_known")) && json_integer_value(v) >= 0)
		out->n_busy_known = (size_t)json_integer_value(v);
	for (int c = 0; c < RM_THROTTLE_CAUSES; c++) {
		char key[64];
		snprintf(key, sizeof(key), "throttle_%s_pct", rm_throttle_causes[c].word);
		if (json_is_number(v = json_object_get(j, key)) && isfinite(json_number_value(v)))
			out->cause_pct[c] = json_number_value(v);
		if (json_is_string(v = json_object_get(j, "cause_first")) &&
		    !strcmp(json_string_value(v), rm_throttle_causes[c].word))
			out->cause_first = c;
	}
	if (out->cause_first >= 0 && json_is_integer(v = json_object_get(j, "cause_gpu")))
		out->cause_gpu = (long)json_integer_value(v);
	if (out->cause_gpu < 0)
		out->cause_first = -1;
}

void rm_telem_summary_from_json(json_t *j, rm_telem_summary *out)
{
	json_t *v;

	rm_telem_summary_none(out);
	if (!json_is_object(j))
		return;
	if (json_is_integer(v = json_object_get(j, "n_gpus")) && json_integer_value(v) >= 0)
		out->n_gpus = (size_t)json_integer_value(v);
	if (json_is_integer(v = json_object_get(j, "n_samples")) && json_integer_value(v) >= 0)
		out->n_samples = (size_t)json_integer_value(v);
	if (json_is_integer(v = json_object_get(j, "throttle_gpu")))
		out->throttle_gpu = (long)json_integer_value(v);
#define FROM_JSON(f)                                                                               \
	if (json_is_number(v = json_object_get(j, #f)) && isfinite(json_number_value(v)))          \
		out->f = json_number_value(v);
	SUMMARY_FIELDS(FROM_JSON)
#undef FROM_JSON
	summary_causes_from_json(j, out);
	if (isnan(out->window_s))
		out->window_s = 0;
}
