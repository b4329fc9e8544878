/*
 * megatron: the iteration lines of Megatron-LM and the families that kept its training_log():
 *
 *   Megatron-LM / ROCm Megatron / Primus
 *     iteration 71/ 100 | consumed samples: 9088 | elapsed time per iteration (ms): 5361.6 |
 *     throughput per GPU (TFLOP/s/GPU): 243.6 | ... | global batch size: 128 |
 *     lm loss: 1.818812E+00 | ...
 *   Megatron-DeepSpeed (microsoft, deepspeedai)
 *     ... elapsed time per iteration (ms): 1979.2 | ... | samples per second: 6.063 |
 *     tokens per gpu per second (tgs): 2069.506 | TFLOPs: 127.00 |
 *   Megatron-DeepSpeed (BigScience): the time in SECONDS
 *     ... elapsed time per iteration (s): 140.37 | ... | samples per second: 14.590 |
 *     TFLOPs: 148.94 |
 *   GPT-NeoX
 *     samples/sec: 2.930 | iteration 1/ 55000 | elapsed time per iteration (ms): 10921.0 |
 *     ... | approx flops per GPU: 9.8TFLOPS | lm_loss: 2.276005E+00 | ...
 *
 * Some builds (Primus) print `current/average` pairs (`13100.0/13240.9`) or `X (avg Y)`; the
 * first number is this iteration's and the mean is computed here (the build's running
 * average includes the warm-up). Lines may carry ANSI colours, '\r' and rank tags.
 *
 * Units: one per metric, said in its name: step_time_ms (the (s) spelling is converted),
 * tflops_per_gpu (TFLOPs: of Megatron-DeepSpeed and NeoX's "approx flops per GPU" are per GPU
 * too), tokens_per_sec_per_gpu (tgs), samples_per_sec (for the whole job: Megatron-DeepSpeed's
 * "samples per second", NeoX's "samples/sec", else global batch size / step time).
 *
 * Primary figure: the steady-state mean of tflops_per_gpu (the figure the ROCm Megatron
 * guide quotes, comparable across GPU counts), else of tokens_per_sec_per_gpu, else of
 * samples_per_sec. The mean, not the last value: a single iteration is noisy and the last one
 * may include checkpoint or shutdown work.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "parse_util.h"
#include "rm/util.h"

enum { S_TFLOPS, S_TOKENS, S_SAMPLES, S_TIME, S_LOSS, S_N };

static const struct {
	const char *name;
	const char *unit;
} series_info[S_N] = {
    {"tflops_per_gpu", "TFLOP/s/GPU"},
    {"tokens_per_sec_per_gpu", "tokens/s/GPU"},
    {"samples_per_sec", "samples/s"},
    {"step_time_ms", "ms"},
    {"lm_loss", ""},
};

/* The spellings of each figure, in the order they are tried; scale converts to the unit. */
#define K(s, k, scale)                                                                             \
	{                                                                                          \
		s, k, sizeof(k) - 1, scale                                                         \
	}
static const struct key {
	int series;
	const char *key;
	size_t len;
	double scale;
} keys[] = {
    K(S_TFLOPS, "throughput per GPU (TFLOP/s/GPU):", 1),
    K(S_TFLOPS, "compute per GPU (TFLOP/s/GPU):", 1),
    K(S_TFLOPS, "TFLOPs:", 1),
    K(S_TFLOPS, "approx flops per GPU:", 1),
    K(S_TOKENS, "tokens per GPU (tokens/s/GPU):", 1),
    K(S_TOKENS, "tokens/s/GPU inst/harmonic mean:", 1),
    K(S_TOKENS, "tokens per gpu per second (tgs):", 1),
    K(S_SAMPLES, "samples per second:", 1),
    K(S_SAMPLES, "samples/sec:", 1),
    K(S_TIME, "elapsed time per iteration (ms):", 1),
    K(S_TIME, "elapsed time per iteration (s):", 1000),
    K(S_LOSS, "lm loss:", 1),
    K(S_LOSS, "lm_loss:", 1),
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

struct megatron {
	pu_cleaner clean;
	long iter, total;
	double latest_tflops;
	long nonfinite_tflops;
	pu_slots slots;
};

static void *megatron_init(const rm_parser_config *cfg)
{
	struct megatron *m = rm_xcalloc(1, sizeof(*m));

	m->iter = m->total = -1;
	m->latest_tflops = -1;
	rm_parsers__slots_init(&m->slots, S_N, cfg);
	return m;
}

static void megatron_free(void *state)
{
	struct megatron *m = state;

	if (!m)
		return;
	rm_parsers__slots_release(&m->slots);
	free(m);
}

/* The timing key that makes a line an iteration line. */
static int has_timing(const char *s, size_t n)
{
	return pu_find(s, n, "elapsed time per iteration (") != NULL;
}

/* Which key of the table a `key: value` piece names (k[0..kl) without the ':'), or -1. */
static int megatron_key_index(const char *k, size_t kl)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (keys[i].len == kl + 1 && !memcmp(keys[i].key, k, kl))
			return (int)i;
	return -1;
}

/*
 * Reads the `| key: value |` pieces of an iteration line in one pass (each key is compared
 * whole). The first figure of each series wins; v/have are filled.
 */
static void read_fields(struct megatron *m, const char *s, size_t n, double *v, int *have,
			double *gbs)
{
	const char *end = s + n, *p = s;

	while (p < end) {
		const char *bar = memchr(p, '|', (size_t)(end - p)), *q = bar ? bar : end;
		const char *k = rm_parsers__skip_blank(p, q),
			   *colon = memchr(k, ':', (size_t)(q - k)), *ke;
		p = bar ? bar + 1 : end;
		if (!colon)
			continue;
		ke = colon;
		while (ke > k && (ke[-1] == ' ' || ke[-1] == '\t'))
			ke--;
		int i = megatron_key_index(k, (size_t)(ke - k));
		double x;
		int rc;
		if (i < 0) {
			if ((size_t)(ke - k) == 17 && !memcmp(k, "global batch size", 17))
				rm_parsers__number(colon + 1, q, 0, gbs, NULL);
			continue;
		}
		int sr = keys[i].series;
		if (have[sr])
			continue;
		rc = rm_parsers__number(colon + 1, q, 0, &x, NULL);
		if (rc == PU_NONFINITE && sr == S_TFLOPS)
			m->nonfinite_tflops++;
		if (rc != PU_OK)
			continue;
		if (sr == S_LOSS && !rm_parsers__real_loss(x))
			continue; /* placeholder of a stage without the loss */
		v[sr] = x * keys[i].scale;
		have[sr] = 1;
	}
}

static void megatron_feed(void *state, const char *line, size_t len)
{
	struct megatron *m = state;
	const char *s;
	size_t n;
	long it, total;
	double v[S_N] = {0}, gbs = -1;
	int have[S_N] = {0};
	pu_series *ser;

	if (len < 40 || !has_timing(line, len))
		return;
	rm_parsers__clean(&m->clean, line, len, &s, &n);
	if (!has_timing(s, n) || rm_parsers__iteration(s, n, &it, &total) < 0)
		return;
	m->iter = it;
	m->total = total;
	read_fields(m, s, n, v, have, &gbs);
	if (!have[S_SAMPLES] && have[S_TIME] && v[S_TIME] > 0 && gbs > 0) {
		v[S_SAMPLES] = gbs * 1000.0 / v[S_TIME];
		have[S_SAMPLES] = 1;
	}
	ser = rm_parsers__slots_get(&m->slots, m->clean.tag, have[S_LOSS]);
	if (!ser)
		return;
	for (int i = 0; i < S_N; i++)
		if (have[i])
			rm_parsers__series_add(&ser[i], it, v[i]);
	if (have[S_TFLOPS])
		m->latest_tflops = v[S_TFLOPS];
}

static void megatron_finish(void *state, rm_parse_result *out)
{
	struct megatron *m = state;
	pu_series *ser = rm_parsers__slots_best(&m->slots);
	pu_cut cut = {0, -1, 0};
	int primary = -1;
	long dropped = 0;
	double mean = NAN;

	if (!ser) {
		rm_result_set_problem(out,
				      "no 'iteration N/ M | ... elapsed time per iteration' line");
		return;
	}
	for (int i = S_TFLOPS; i <= S_SAMPLES && primary < 0; i++)
		if (rm_parsers__series_count(&ser[i]))
			primary = i;
	if (primary >= 0) {
		cut = rm_parsers__series_cut(&ser[primary], 1);
		mean = rm_parsers__series_mean(&ser[primary], &cut, &dropped);
	}
	for (int i = 0; i < S_N; i++)
		rm_parsers__series_emit(&ser[i], out, series_info[i].name, series_info[i].unit,
					&cut);
	if (primary < 0) {
		if (m->nonfinite_tflops)
			rm_result_set_problem(out, "performance value 'nan' is not finite (every "
						   "TFLOP/s figure of the iteration lines)");
		else
			rm_result_set_problem(out, "the iteration lines hold no throughput (no "
						   "TFLOP/s, tokens/s or samples/s, and no global "
						   "batch size to derive samples/s)");
		return;
	}
	rm_parsers__report_warmup(out, dropped);
	rm_result_set_performance_agg(out, mean, series_info[primary].name, "mean");
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

	if (len < 40 || !has_timing(line, len))
		return 0;
	return rm_parsers__iteration(line, len, &it, &total) == 0 ? 100 : 20;
}

const rm_parser_ops rm_parser_megatron = {
    .name = "megatron",
    .description = "Megatron-LM / Megatron-DeepSpeed / GPT-NeoX / Primus 'iteration N/ M |' lines",
    .init = megatron_init,
    .feed_line = megatron_feed,
    .finish = megatron_finish,
    .free = megatron_free,
    .progress = megatron_progress,
    .sniff = megatron_sniff,
};
