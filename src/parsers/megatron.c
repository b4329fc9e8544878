/*
 * megatron: Megatron-LM, ROCm Megatron-LM and Primus iteration lines:
 *
 *   iteration 71/ 100 | consumed samples: 9088 | elapsed time per iteration (ms): 5361.6 |
 *   throughput per GPU (TFLOP/s/GPU): 243.6 | ... | global batch size: 128 |
 *   lm loss: 1.818812E+00 | ...
 *
 * Some builds (Primus) print `current/average` pairs (`13100.0/13240.9`); the first number
 * is this iteration's, and the steady-state mean is computed here from those rather than
 * trusted from the build, whose running average includes the warm-up. Primus 26.5 spells the
 * fields `compute per GPU (TFLOP/s/GPU): X (avg Y)` and `tokens/s/GPU inst/harmonic mean:
 * X/Y`; both are read the same way. Lines may carry ANSI colours and '\r' (parse_util).
 * Multi-node runs print the same iteration from several nodes, some with `nan`: a non-finite
 * field is dropped, and finite copies of one iteration are averaged into one step.
 *
 * Primary figure: the steady-state mean of `throughput per GPU (TFLOP/s/GPU)` as metric
 * "tflops_per_gpu" (the figure the ROCm Megatron guide quotes, comparable across GPU
 * counts). Builds that print no TFLOP/s fall back to the mean of tokens per GPU
 * ("tokens_per_gpu"), then to samples per second derived per iteration as
 * global batch size / elapsed time ("samples_per_sec"). The mean, not the last value: a
 * single iteration is noisy and the last one may include checkpoint or shutdown work.
 */
#include <stdlib.h>
#include <string.h>

#include "parse_util.h"
#include "rm/util.h"

enum { S_TFLOPS, S_TOKENS, S_SAMPLES, S_ELAPSED, S_LOSS, S_N };

static const struct {
	const char *name;
	const char *unit;
} series_info[S_N] = {
    {"tflops_per_gpu", "TFLOP/s/GPU"},
    {"tokens_per_gpu", "tokens/s/GPU"},
    {"samples_per_sec", "samples/s"},
    {"elapsed_time_per_iteration", "ms"},
    {"lm_loss", ""},
};

struct megatron {
	pu_cleaner clean;
	long iter, total;
	double latest_tflops;
	pu_series s[S_N];
};

static void *megatron_init(const rm_parser_config *cfg)
{
	struct megatron *m = rm_xcalloc(1, sizeof(*m));

	m->iter = m->total = -1;
	m->latest_tflops = -1;
	for (int i = 0; i < S_N; i++)
		pu_series_init(&m->s[i], cfg);
	return m;
}

/* Finds `iteration <N>/ <M>` (the first "iteration" followed by a number). */
static int iteration_of(const char *s, size_t n, long *iter, long *total)
{
	const char *end = s + n, *p = s, *k;

	while ((k = pu_find(p, (size_t)(end - p), "iteration"))) {
		const char *q;
		p = k + 9;
		if (pu_long(p, end, iter, &q) < 0)
			continue;
		q = pu_skip_blank(q, end);
		if (q >= end || *q != '/' || pu_long(q + 1, end, total, NULL) < 0)
			continue;
		return 0;
	}
	return -1;
}

/* Reads the field's value; for "cur/avg" pairs and "cur (avg y)" the first number. */
static int field(const char *s, size_t n, const char *key, double *out)
{
	return pu_field(s, n, key, 0, out, NULL);
}

static void megatron_feed(void *state, const char *line, size_t len)
{
	struct megatron *m = state;
	const char *s;
	size_t n;
	long it, total;
	double v, ms = -1, gbs = -1;

	if (len < 40 || !pu_find(line, len, "per iteration (ms)"))
		return;
	pu_clean(&m->clean, line, len, &s, &n);
	if (iteration_of(s, n, &it, &total) < 0)
		return;
	m->iter = it;
	m->total = total;
	if (field(s, n, "throughput per GPU (TFLOP/s/GPU):", &v) == 0 ||
	    field(s, n, "compute per GPU (TFLOP/s/GPU):", &v) == 0) {
		pu_series_add(&m->s[S_TFLOPS], it, v);
		m->latest_tflops = v;
	}
	if (field(s, n, "tokens per GPU (tokens/s/GPU):", &v) == 0 ||
	    field(s, n, "tokens/s/GPU inst/harmonic mean:", &v) == 0)
		pu_series_add(&m->s[S_TOKENS], it, v);
	if (field(s, n, "elapsed time per iteration (ms):", &ms) == 0)
		pu_series_add(&m->s[S_ELAPSED], it, ms);
	else
		ms = -1;
	if (field(s, n, "lm loss:", &v) == 0)
		pu_series_add(&m->s[S_LOSS], it, v);
	if (field(s, n, "global batch size:", &gbs) == 0 && ms > 0 && gbs > 0)
		pu_series_add(&m->s[S_SAMPLES], it, gbs * 1000.0 / ms);
}

static void megatron_finish(void *state, rm_parse_result *out)
{
	struct megatron *m = state;

	for (int i = 0; i < S_N; i++)
		pu_series_emit(&m->s[i], out, series_info[i].name, series_info[i].unit);
	for (int i = S_TFLOPS; i <= S_SAMPLES; i++) {
		if (pu_series_count(&m->s[i])) {
			rm_result_set_performance(out, pu_series_mean(&m->s[i]),
						  series_info[i].name);
			break;
		}
	}
}

static void megatron_progress(void *state, rm_parse_progress *out)
{
	struct megatron *m = state;

	out->step = m->iter;
	out->total_steps = m->total;
	out->throughput = m->latest_tflops;
	out->throughput_metric = m->latest_tflops >= 0 ? "tflops_per_gpu" : NULL;
}

static int megatron_sniff(const char *line, size_t len)
{
	long it, total;

	if (len < 40 || !pu_find(line, len, "elapsed time per iteration (ms)"))
		return 0;
	return iteration_of(line, len, &it, &total) == 0 ? 100 : 20;
}

const rm_parser_ops rm_parser_megatron = {
    .name = "megatron",
    .description = "Megatron-LM / ROCm Megatron / Primus 'iteration N/ M |' lines",
    .init = megatron_init,
    .feed_line = megatron_feed,
    .finish = megatron_finish,
    .free = free,
    .progress = megatron_progress,
    .sniff = megatron_sniff,
};
