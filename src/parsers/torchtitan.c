/*
 * torchtitan: TorchTitan / Primus-TorchTitan step lines (the AMD PyTorch training container):
 *
 *   [rank0]:[titan] ... - root - INFO - step: 10  loss:  9.8821  grad_norm: 26.6250
 *   memory: 49.59GiB(35.46%)  tps: 7,026  tflops: 407.35  mfu: 41.15%
 *
 * tps carries thousands separators; older builds print `wps:` for the same tokens-per-second
 * figure and no tflops. Keys are compared whole (`global_step:` is not `step:`). Copies of one
 * step from the same rank (two loggers, or untagged ranks) are averaged into one step value;
 * lines of several tagged ranks ([rank0]:, [rank7]:) are kept apart and the figures come from
 * the rank with the loss. With pipeline parallelism the stages without the loss print
 * `loss: -1.0000` (train.py: torch.tensor([-1.0]) when not pp_has_last_stage): a loss of zero
 * or below is a placeholder and never counts.
 *
 * Units: tflops and tps are per GPU in torchtitan's metrics.py, so the metrics are
 * "tflops_per_gpu" and "tokens_per_sec_per_gpu"; mfu in %, memory in GiB.
 *
 * Primary figure: the steady-state mean of tflops_per_gpu (the figure AMD's training guide
 * publishes per model), or of tokens_per_sec_per_gpu for builds that print no tflops. The mean
 * because the first steps include compilation and allocator warm-up (tps 375 then 7,034 in the
 * published examples).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "parse_util.h"
#include "rm/util.h"

enum { S_TFLOPS, S_TPS, S_MFU, S_LOSS, S_GRAD, S_MEM, S_N };

static const struct {
	const char *name;
	const char *unit;
} series_info[S_N] = {
    {"tflops_per_gpu", "TFLOP/s/GPU"},
    {"tokens_per_sec_per_gpu", "tokens/s/GPU"},
    {"mfu", "%"},
    {"loss", ""},
    {"grad_norm", ""},
    {"memory", "GiB"},
};

struct titan {
	pu_cleaner clean;
	long step;
	double latest_tflops, latest_tps;
	long nonfinite_tflops;
	pu_slots slots;
};

static void *titan_init(const rm_parser_config *cfg)
{
	struct titan *t = rm_xcalloc(1, sizeof(*t));

	t->step = -1;
	t->latest_tflops = t->latest_tps = -1;
	rm_parsers__slots_init(&t->slots, S_N, cfg);
	return t;
}

static void titan_free(void *state)
{
	struct titan *t = state;

	if (!t)
		return;
	rm_parsers__slots_release(&t->slots);
	free(t);
}

/* The `key:` words of a step line; step is not a series. */
enum { K_STEP = S_N };
#define K(k, s, c)                                                                                 \
	{                                                                                          \
		k, sizeof(k) - 1, s, c                                                             \
	}
static const struct key {
	const char *key;
	size_t len;
	int series;
	int commas;
} keys[] = {
    K("step", K_STEP, 0), K("loss", S_LOSS, 0), K("grad_norm", S_GRAD, 0), K("memory", S_MEM, 0),
    K("tps", S_TPS, 1),	  K("wps", S_TPS, 1),	K("tflops", S_TFLOPS, 0),  K("mfu", S_MFU, 0),
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

/*
 * Reads the `key: value` pairs of a line in one pass: at every ':' the whole word before it
 * is looked up (so `global_step:` is not `step:`). Returns the step, or -1 when the line is
 * not a step line (no `step:` number or no `loss:`).
 */
static long read_pairs(struct titan *t, const char *s, size_t n, double *v, int *have)
{
	const char *end = s + n, *p = s, *c;
	long step = -1;
	int loss_seen = 0;

	while (p < end && (c = memchr(p, ':', (size_t)(end - p)))) {
		const char *w = c;
		size_t kl;
		p = c + 1;
		while (w > s && pu_word_char(w[-1]))
			w--;
		kl = (size_t)(c - w);
		if (kl < 3 || kl > 9)
			continue;
		for (size_t i = 0; i < NKEYS; i++) {
			double x;
			int rc;
			if (keys[i].len != kl || memcmp(keys[i].key, w, kl))
				continue;
			if (keys[i].series == K_STEP) {
				if (step < 0 && rm_parsers__long(c + 1, end, &step, NULL) < 0)
					step = -1;
				break;
			}
			if (keys[i].series == S_LOSS)
				loss_seen = 1;
			rc = rm_parsers__number(c + 1, end, keys[i].commas, &x, NULL);
			if (rc == PU_NONFINITE && keys[i].series == S_TFLOPS)
				t->nonfinite_tflops++;
			if (rc == PU_OK && !have[keys[i].series]) {
				v[keys[i].series] = x;
				have[keys[i].series] = 1;
			}
			break;
		}
	}
	return loss_seen ? step : -1;
}

static void titan_feed(void *state, const char *line, size_t len)
{
	struct titan *t = state;
	const char *s;
	size_t n;
	long step;
	double v[S_N] = {0};
	int have[S_N] = {0};
	pu_series *ser;

	if (len < 20 || !pu_find(line, len, "step:"))
		return;
	rm_parsers__clean(&t->clean, line, len, &s, &n);
	step = read_pairs(t, s, n, v, have);
	if (step < 0)
		return;
	t->step = step;
	if (have[S_LOSS] && !rm_parsers__real_loss(v[S_LOSS]))
		have[S_LOSS] = 0; /* placeholder of a pipeline stage without the loss */
	ser = rm_parsers__slots_get(&t->slots, t->clean.tag, have[S_LOSS]);
	if (!ser)
		return;
	for (int i = 0; i < S_N; i++)
		if (have[i])
			rm_parsers__series_add(&ser[i], step, v[i]);
	if (have[S_TPS])
		t->latest_tps = v[S_TPS];
	if (have[S_TFLOPS])
		t->latest_tflops = v[S_TFLOPS];
}

static void titan_finish(void *state, rm_parse_result *out)
{
	struct titan *t = state;
	pu_series *ser = rm_parsers__slots_best(&t->slots);
	pu_cut cut = {0, -1, 0};
	int primary = -1;
	long dropped = 0;
	double mean = NAN;

	if (!ser) {
		rm_result_set_problem(out, "no torchtitan 'step: N  loss: ...' line");
		return;
	}
	if (rm_parsers__series_count(&ser[S_TFLOPS]))
		primary = S_TFLOPS;
	else if (rm_parsers__series_count(&ser[S_TPS]))
		primary = S_TPS;
	if (primary >= 0) {
		cut = rm_parsers__series_cut(&ser[primary], 1);
		mean = rm_parsers__series_mean(&ser[primary], &cut, &dropped);
	}
	for (int i = 0; i < S_N; i++)
		rm_parsers__series_emit(&ser[i], out, series_info[i].name, series_info[i].unit,
					&cut);
	if (primary < 0) {
		if (t->nonfinite_tflops)
			rm_result_set_problem(out, "performance value 'nan' is not finite (every "
						   "tflops of the step lines)");
		else
			rm_result_set_problem(out, "the step lines hold no tflops and no tps/wps");
		return;
	}
	rm_parsers__report_warmup(out, dropped);
	rm_result_set_performance_agg(out, mean, series_info[primary].name, "mean");
}

static void titan_progress(void *state, rm_parse_progress *out)
{
	struct titan *t = state;

	out->step = t->step;
	out->total_steps = -1;
	if (t->latest_tflops >= 0) {
		out->throughput = t->latest_tflops;
		out->throughput_metric = "tflops_per_gpu";
	} else {
		out->throughput = t->latest_tps;
		out->throughput_metric = t->latest_tps >= 0 ? "tokens_per_sec_per_gpu" : NULL;
	}
}

/* Returns the step of a metrics line (whole keys `step:` and `loss:`), or -1. */
static long torchtitan_step_of(const char *s, size_t n)
{
	const char *k = pu_key(s, n, "step:");
	long step;

	if (!k || rm_parsers__long(k + 5, s + n, &step, NULL) < 0)
		return -1;
	if (!pu_key(k, (size_t)(s + n - k), "loss:"))
		return -1;
	return step;
}

static int titan_sniff(const char *line, size_t len)
{
	if (len < 20 || torchtitan_step_of(line, len) < 0)
		return 0;
	if (pu_key(line, len, "tps:") || pu_key(line, len, "wps:"))
		return pu_key(line, len, "memory:") ? 100 : 60;
	return 0;
}

const rm_parser_ops rm_parser_torchtitan = {
    .name = "torchtitan",
    .description = "TorchTitan 'step: N loss: X memory: ... tps: N tflops: X mfu: X%' lines",
    .init = titan_init,
    .feed_line = titan_feed,
    .finish = titan_finish,
    .free = titan_free,
    .progress = titan_progress,
    .sniff = titan_sniff,
};
