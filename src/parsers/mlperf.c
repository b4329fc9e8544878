/*
 * mlperf: MLPerf Training logs, `:::MLLOG {json}` lines (mlperf_logging), e.g.
 *
 *   :::MLLOG {"namespace": "", "time_ms": 1759966206549, "event_type": "INTERVAL_START",
 *             "key": "run_start", "value": null, "metadata": {...}}
 *
 * Anything before ":::MLLOG" on the line (a rank or host prefix) and CRLF line ends are
 * tolerated; non-MLLOG lines are ignored. Only the keys below are decoded (each line is
 * matched on its "key" text first, so jansson sees a fraction of the lines):
 *   run_start / run_stop   time_ms; run_stop metadata.status and metadata.samples_count
 *   tracked_stats          value.throughput (a series, step = metadata.step)
 *   throughput,            value (a number): some implementations log these instead
 *   overall_throughput
 *   eval_accuracy          value (last, step = metadata.samples_count or epoch_num)
 *   train_samples          value
 *
 * Metrics: time_to_train in MINUTES (run_stop.time_ms - run_start.time_ms) / 60000, the unit
 * MLPerf results are published in (aggregate "summary", as run_success, overall_throughput and
 * samples_count), only for a run whose run_stop says "success" (an aborted run has no time to
 * train, not even as a side metric); run_success 1/0 from run_stop's status; throughput (last
 * and steady mean); eval_accuracy (last); samples_count: run_stop's metadata.samples_count,
 * else a train_samples value logged once training began (after an epoch_start or block_start
 * of the run) of a run that reached run_stop: BERT logs the samples trained that way at its
 * end. Before that, train_samples is what mlperf_logging defines it to be, the size of the
 * training set: 3901 for llama2_70b_lora (logged before run_start), 94,605,581 for R-GAT
 * (logged after run_start, before its first epoch, in a run that stopped at epoch 0.9). A
 * run without run_stop did not finish: neither gives a samples_count.
 *
 * Primary figure: time_to_train as metric "time_to_train_min", and only for a run whose
 * run_stop says status "success": an aborted run has no valid score, so it reports no
 * primary figure (lower is better for this metric). A log holding several runs reports the
 * last run_start/run_stop pair.
 */
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse_util.h"
#include "rm/util.h"

struct mlperf {
	pu_cleaner clean;
	int have_start, have_stop, success;
	char status[24];
	double start_ms, stop_ms;
	double samples_count;
	int have_samples, have_train_samples;
	int training; /* an epoch_start or block_start came after run_start */
	double train_samples;
	int have_eval;
	double eval;
	long eval_step;
	int have_overall;
	double overall;
	long step;
	double latest_tp;
	pu_series tp;
};

static void *mlperf_init(const rm_parser_config *cfg)
{
	struct mlperf *m = rm_xcalloc(1, sizeof(*m));

	m->step = -1;
	m->latest_tp = -1;
	rm_parsers__series_init(&m->tp, cfg);
	return m;
}

static int mlperf_num(json_t *j, double *out)
{
	if (!json_is_number(j))
		return -1;
	*out = json_number_value(j);
	return isfinite(*out) ? 0 : -1;
}

/* A step or sample count as a long; -1 when it is not a whole number a long holds (a cast
 * of an out-of-range double is undefined). */
static long step_of(double v)
{
	return v >= 0 && v <= (double)LONG_MAX / 2 ? (long)v : -1;
}

static int key_is(const char *k, size_t kl, const char *want)
{
	return kl == strlen(want) && !memcmp(k, want, kl);
}

/*
 * The per-block lines (tracked_stats, eval_accuracy) are most of the decoded lines and
 * mlperf_logging prints them in one fixed layout, `"value": ...` right after the key and a
 * flat metadata object after it. They are read by scanning that layout; anything that does
 * not fit it exactly (another producer, odd spacing) returns -1 and goes through jansson.
 * This keeps the parser above the 200 MB/s goal (jansson allocates per node).
 */
static int fast_point(struct mlperf *m, const char *k, size_t kl, const char *kend, const char *end)
{
	const char *p = kend + 1, *meta;
	double v, step = -1;
	int tracked = key_is(k, kl, "tracked_stats");

	if (!tracked && !key_is(k, kl, "eval_accuracy"))
		return -1;
	if ((size_t)(end - p) < 11 || memcmp(p, ", \"value\": ", 11))
		return -1;
	p += 11;
	if (tracked) {
		if ((size_t)(end - p) < 15 || memcmp(p, "{\"throughput\": ", 15))
			return -1;
		p += 15;
	}
	if (rm_parsers__number(p, end, 0, &v, &p) < 0)
		return -1;
	if (tracked && (p >= end || *p != '}'))
		return -1;
	if (!tracked && (p >= end || *p != ','))
		return -1;
	if (!(meta = pu_find(p, (size_t)(end - p), "\"metadata\": {")))
		return -1;
	/* The metadata object must be flat (no nested object) for the key scan to be exact. */
	if (memchr(meta + 13, '{', (size_t)(end - meta - 13)))
		return -1;
	if (tracked) {
		if (pu_field(meta, (size_t)(end - meta), "\"step\":", 0, &step, NULL) < 0)
			step = -1;
		m->step = step_of(step);
		rm_parsers__series_add(&m->tp, step_of(step), v);
		m->latest_tp = v;
	} else {
		if (pu_field(meta, (size_t)(end - meta), "\"samples_count\":", 0, &step, NULL) <
			0 &&
		    pu_field(meta, (size_t)(end - meta), "\"epoch_num\":", 0, &step, NULL) < 0)
			step = -1;
		m->eval = v;
		m->eval_step = step_of(step);
		m->have_eval = 1;
	}
	return 0;
}

/* One MLLOG record whose key (k, kl) we read, parsed as root. */
static void mlperf_record(struct mlperf *m, const char *k, size_t kl, json_t *root)
{
	json_t *meta = json_object_get(root, "metadata"), *val = json_object_get(root, "value");
	double v;

	if (key_is(k, kl, "run_start")) {
		if (mlperf_num(json_object_get(root, "time_ms"), &v) == 0) {
			m->start_ms = v;
			m->have_start = 1;
			m->have_stop = 0; /* a new run begins */
			m->success = 0;
			m->status[0] = '\0';
			m->have_samples = 0;
			m->have_train_samples = 0;
			m->training = 0;
		}
	} else if (key_is(k, kl, "run_stop")) {
		const char *st = json_string_value(json_object_get(meta, "status"));
		if (mlperf_num(json_object_get(root, "time_ms"), &v) == 0) {
			m->stop_ms = v;
			m->have_stop = 1;
			m->success = st && !strcmp(st, "success");
			snprintf(m->status, sizeof(m->status), "%s", st ? st : "");
		}
		if (mlperf_num(json_object_get(meta, "samples_count"), &v) == 0) {
			m->samples_count = v;
			m->have_samples = 1;
		}
	} else if (key_is(k, kl, "tracked_stats")) {
		double step = -1;
		if (mlperf_num(json_object_get(val, "throughput"), &v) == 0) {
			if (mlperf_num(json_object_get(meta, "step"), &step) < 0)
				step = -1;
			m->step = step_of(step);
			rm_parsers__series_add(&m->tp, step_of(step), v);
			m->latest_tp = v;
		}
	} else if (key_is(k, kl, "eval_accuracy")) {
		double step = -1;
		if (mlperf_num(val, &v) == 0) {
			if (mlperf_num(json_object_get(meta, "samples_count"), &step) < 0 &&
			    mlperf_num(json_object_get(meta, "epoch_num"), &step) < 0)
				step = -1;
			m->eval = v;
			m->eval_step = step_of(step);
			m->have_eval = 1;
		}
	} else if (key_is(k, kl, "train_samples")) {
		/* before training began it is the dataset size, not samples trained */
		if (m->have_start && m->training && mlperf_num(val, &v) == 0) {
			m->train_samples = v;
			m->have_train_samples = 1;
		}
	} else if (mlperf_num(val, &v) == 0) { /* throughput, overall_throughput */
		m->overall = v;
		m->have_overall = 1;
	}
}

static void mlperf_feed(void *state, const char *line, size_t len)
{
	struct mlperf *m = state;
	const char *s, *j, *k, *kend, *end;
	size_t n, kl;
	json_t *root;
	json_error_t jerr;

	if (len < 20 || !(j = pu_find(line, len, ":::MLLOG")))
		return;
	rm_parsers__clean(&m->clean, line, len, &s, &n);
	end = s + n;
	if (s != line && !(j = pu_find(s, n, ":::MLLOG")))
		return; /* cleaning moved the text: find the marker again */
	if (j < s || j >= end || !(j = memchr(j, '{', (size_t)(end - j))))
		return;
	/* Match the key before paying for a JSON parse. */
	if (!(k = pu_find(j, (size_t)(end - j), "\"key\":")))
		return;
	k = rm_parsers__skip_blank(k + 6, end);
	if (k >= end || *k != '"' || !(kend = memchr(k + 1, '"', (size_t)(end - k - 1))))
		return;
	k++;
	kl = (size_t)(kend - k);
	if (key_is(k, kl, "epoch_start") || key_is(k, kl, "block_start")) {
		m->training = m->have_start;
		return;
	}
	if (!key_is(k, kl, "run_start") && !key_is(k, kl, "run_stop") &&
	    !key_is(k, kl, "tracked_stats") && !key_is(k, kl, "eval_accuracy") &&
	    !key_is(k, kl, "train_samples") && !key_is(k, kl, "throughput") &&
	    !key_is(k, kl, "overall_throughput"))
		return;
	if (fast_point(m, k, kl, kend, end) == 0)
		return;
	root = json_loadb(j, (size_t)(end - j), JSON_DISABLE_EOF_CHECK, &jerr);
	if (!json_is_object(root)) {
		json_decref(root);
		return;
	}
	mlperf_record(m, k, kl, root);
	json_decref(root);
}

static void mlperf_finish(void *state, rm_parse_result *out)
{
	struct mlperf *m = state;
	double ttt = NAN;
	pu_cut cut = rm_parsers__series_cut(&m->tp, 1);

	if (m->have_start && m->have_stop && m->success && m->stop_ms >= m->start_ms) {
		ttt = (m->stop_ms - m->start_ms) / 60000.0;
		rm_result_add(out, "time_to_train", ttt, "min", -1, "summary");
	}
	if (m->have_stop)
		rm_result_add(out, "run_success", m->success ? 1 : 0, "", -1, "summary");
	rm_parsers__series_emit(&m->tp, out, "throughput", "samples/s", &cut);
	if (m->have_overall)
		rm_result_add(out, "overall_throughput", m->overall, "samples/s", -1, "summary");
	if (m->have_eval)
		rm_result_add(out, "eval_accuracy", m->eval, "", m->eval_step, "last");
	if (m->have_stop && m->have_samples)
		rm_result_add(out, "samples_count", m->samples_count, "samples", -1, "summary");
	else if (m->have_stop && m->have_train_samples)
		rm_result_add(out, "samples_count", m->train_samples, "samples", -1, "summary");
	if (m->success && isfinite(ttt))
		rm_result_set_performance_agg(out, ttt, "time_to_train_min", "summary");
	else if (!m->have_start)
		rm_result_set_problem(out, "no MLLOG run_start");
	else if (!m->have_stop)
		rm_result_set_problem(out,
				      "no MLLOG run_stop after the last run_start (the run did "
				      "not finish)");
	else if (!m->success)
		rm_result_set_problem(out,
				      "run_stop status is '%s', not 'success': an unsuccessful "
				      "run has no valid time to train",
				      m->status[0] ? m->status : "(none)");
	else
		rm_result_set_problem(out, "run_stop is earlier than run_start");
}

static void mlperf_progress(void *state, rm_parse_progress *out)
{
	struct mlperf *m = state;

	out->step = m->step;
	out->total_steps = -1;
	out->throughput = m->latest_tp;
	out->throughput_metric = m->latest_tp >= 0 ? "throughput" : NULL;
}

static int mlperf_sniff(const char *line, size_t len)
{
	if (len < 10 || !pu_find(line, len, ":::MLLOG"))
		return 0;
	return pu_find(line, len, "\"key\"") ? 100 : 50;
}

const rm_parser_ops rm_parser_mlperf = {
    .name = "mlperf",
    .description = "MLPerf Training ':::MLLOG {json}' lines (time to train, throughput)",
    .init = mlperf_init,
    .feed_line = mlperf_feed,
    .finish = mlperf_finish,
    .free = free,
    .progress = mlperf_progress,
    .sniff = mlperf_sniff,
};
