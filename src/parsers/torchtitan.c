/*
 * torchtitan: TorchTitan / Primus-TorchTitan step lines (the AMD PyTorch training container):
 *
 *   [rank0]:[titan] ... - root - INFO - step: 10  loss:  9.8821  grad_norm: 26.6250
 *   memory: 49.59GiB(35.46%)  tps: 7,026  tflops: 407.35  mfu: 41.15%
 *
 * tps carries thousands separators; older builds print `wps:` for the same tokens-per-second
 * figure and no tflops. Every rank may print the same step: copies of one step are averaged
 * into one step value.
 *
 * Primary figure: the steady-state mean of `tflops` as metric "tflops" (TFLOP/s per GPU, the
 * figure AMD's training guide publishes per model), or of `tps` as metric "tps" (tokens/s
 * per GPU) for builds that print no tflops. The mean because the first steps include
 * compilation and allocator warm-up (tps 375 then 7,034 in the published examples).
 */
#include <stdlib.h>
#include <string.h>

#include "parse_util.h"
#include "rm/util.h"

enum { S_TFLOPS, S_TPS, S_MFU, S_LOSS, S_GRAD, S_MEM, S_N };

static const struct {
	const char *name;
	const char *unit;
} series_info[S_N] = {
    {"tflops", "TFLOP/s/GPU"}, {"tps", "tokens/s/GPU"}, {"mfu", "%"}, {"loss", ""},
    {"grad_norm", ""},	       {"memory", "GiB"},
};

struct titan {
	pu_cleaner clean;
	long step;
	double latest_tflops, latest_tps;
	pu_series s[S_N];
};

static void *titan_init(const rm_parser_config *cfg)
{
	struct titan *t = rm_xcalloc(1, sizeof(*t));

	t->step = -1;
	t->latest_tflops = t->latest_tps = -1;
	for (int i = 0; i < S_N; i++)
		pu_series_init(&t->s[i], cfg);
	return t;
}

/* Returns the step of a metrics line, or -1 when the line is not one. */
static long step_of(const char *s, size_t n)
{
	const char *k = pu_find(s, n, "step:");
	long step;

	if (!k || pu_long(k + 5, s + n, &step, NULL) < 0)
		return -1;
	if (!pu_find(s, n, "loss:"))
		return -1;
	return step;
}

/* pu_field from *from to the end of the line, else over the whole line; advances *from. */
static int field(const char *s, size_t n, const char **from, const char *key, int commas,
		 double *out)
{
	const char *after;

	if (pu_field(*from, (size_t)(s + n - *from), key, commas, out, &after) == 0 ||
	    pu_field(s, n, key, commas, out, &after) == 0) {
		*from = after;
		return 0;
	}
	return -1;
}

static void titan_feed(void *state, const char *line, size_t len)
{
	struct titan *t = state;
	const char *s, *from;
	size_t n;
	long step;
	double v;

	if (len < 20 || !pu_find(line, len, "step:"))
		return;
	pu_clean(&t->clean, line, len, &s, &n);
	step = step_of(s, n);
	if (step < 0)
		return;
	t->step = step;
	/* Fields are searched in the order torchtitan prints them, each from where the previous
	 * one ended (one pass over the line); a field found out of order still counts. */
	from = s;
	if (field(s, n, &from, "loss:", 0, &v) == 0)
		pu_series_add(&t->s[S_LOSS], step, v);
	if (field(s, n, &from, "grad_norm:", 0, &v) == 0)
		pu_series_add(&t->s[S_GRAD], step, v);
	if (field(s, n, &from, "memory:", 0, &v) == 0)
		pu_series_add(&t->s[S_MEM], step, v);
	if (field(s, n, &from, "tps:", 1, &v) == 0 || field(s, n, &from, "wps:", 1, &v) == 0) {
		pu_series_add(&t->s[S_TPS], step, v);
		t->latest_tps = v;
	}
	if (field(s, n, &from, "tflops:", 0, &v) == 0) {
		pu_series_add(&t->s[S_TFLOPS], step, v);
		t->latest_tflops = v;
	}
	if (field(s, n, &from, "mfu:", 0, &v) == 0)
		pu_series_add(&t->s[S_MFU], step, v);
}

static void titan_finish(void *state, rm_parse_result *out)
{
	struct titan *t = state;

	for (int i = 0; i < S_N; i++)
		pu_series_emit(&t->s[i], out, series_info[i].name, series_info[i].unit);
	if (pu_series_count(&t->s[S_TFLOPS]))
		rm_result_set_performance(out, pu_series_mean(&t->s[S_TFLOPS]), "tflops");
	else if (pu_series_count(&t->s[S_TPS]))
		rm_result_set_performance(out, pu_series_mean(&t->s[S_TPS]), "tps");
}

static void titan_progress(void *state, rm_parse_progress *out)
{
	struct titan *t = state;

	out->step = t->step;
	out->total_steps = -1;
	if (t->latest_tflops >= 0) {
		out->throughput = t->latest_tflops;
		out->throughput_metric = "tflops";
	} else {
		out->throughput = t->latest_tps;
		out->throughput_metric = t->latest_tps >= 0 ? "tps" : NULL;
	}
}

static int titan_sniff(const char *line, size_t len)
{
	if (len < 20 || step_of(line, len) < 0)
		return 0;
	if (pu_find(line, len, "tps:") || pu_find(line, len, "wps:"))
		return pu_find(line, len, "memory:") ? 100 : 60;
	return 0;
}

const rm_parser_ops rm_parser_torchtitan = {
    .name = "torchtitan",
    .description = "TorchTitan 'step: N loss: X memory: ... tps: N tflops: X mfu: X%' lines",
    .init = titan_init,
    .feed_line = titan_feed,
    .finish = titan_finish,
    .free = free,
    .progress = titan_progress,
    .sniff = titan_sniff,
};
