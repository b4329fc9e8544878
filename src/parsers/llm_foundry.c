/*
 * llm_foundry: Composer / LLM Foundry console logs (MPT-30B and friends). Composer prints a
 * block per logged batch:
 *
 *   [batch=2/10]:            (or [epoch=1][batch=5/5]:)
 *            Train throughput/samples_per_sec: 2.7330
 *            Train loss/train/total: 8.4213
 *
 * indented with spaces or tabs. A fixed set of keys is tracked (constant memory; Composer can
 * print hundreds of per-layer keys); each key is a series whose step is the N of the last
 * `[batch=N/M]` header.
 *
 * Primary figure: `throughput/samples_per_sec` (whole job), LAST value, as metric
 * "samples_per_sec", aggregate "last". This is what ROCm MAD's MPT-30B script reports
 * (`grep ... | tail -1`), and Composer's value is already a windowed average over recent
 * batches, so the final one is the settled figure; the steady-state mean (warm-up detected on
 * that series) is reported beside it. The `device/` keys are per GPU. A log without throughput
 * lines (Composer prints none until its speed window fills) has no primary figure, never 0.
 */
#include <stdlib.h>
#include <string.h>

#include "parse_util.h"
#include "rm/util.h"

static const struct key {
	const char *key; /* as printed after "Train " */
	const char *name;
	const char *unit;
} keys[] = {
    {"throughput/samples_per_sec", "throughput/samples_per_sec", "samples/s"},
    {"throughput/device/samples_per_sec", "throughput/device/samples_per_sec", "samples/s"},
    {"throughput/tokens_per_sec", "throughput/tokens_per_sec", "tokens/s"},
    {"throughput/device/tokens_per_sec", "throughput/device/tokens_per_sec", "tokens/s"},
    {"throughput/batches_per_sec", "throughput/batches_per_sec", "batches/s"},
    {"throughput/device/batches_per_sec", "throughput/device/batches_per_sec", "batches/s"},
    {"throughput/device/mfu", "throughput/device/mfu", ""},
    {"loss/train/total", "loss/train/total", ""},
    {"metrics/train/LanguageCrossEntropy", "metrics/train/LanguageCrossEntropy", ""},
    {"metrics/train/LanguagePerplexity", "metrics/train/LanguagePerplexity", ""},
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

struct foundry {
	pu_cleaner clean;
	long batch, total;
	pu_series s[NKEYS];
};

static void *foundry_init(const rm_parser_config *cfg)
{
	struct foundry *f = rm_xcalloc(1, sizeof(*f));

	f->batch = -1;
	f->total = -1;
	for (size_t i = 0; i < NKEYS; i++)
		rm_parsers__series_init(&f->s[i], cfg);
	return f;
}

/* `[batch=N/M]:` possibly after `[epoch=E]`; returns 0 with N and M. */
static int batch_header(const char *s, size_t n, long *batch, long *total)
{
	const char *end = s + n, *k = pu_find(s, n, "[batch="), *p;

	if (!k || rm_parsers__long(k + 7, end, batch, &p) < 0 || p >= end || *p != '/')
		return -1;
	if (rm_parsers__long(p + 1, end, total, &p) < 0 || p >= end || *p != ']')
		return -1;
	return 0;
}

static void foundry_feed(void *state, const char *line, size_t len)
{
	struct foundry *f = state;
	const char *s, *end, *p, *colon;
	size_t n;
	double v;

	if (len < 8)
		return;
	rm_parsers__clean(&f->clean, line, len, &s, &n);
	end = s + n;
	p = rm_parsers__skip_blank(s, end);
	if ((size_t)(end - p) > 6 && !memcmp(p, "Train ", 6)) {
		p += 6;
		colon = memchr(p, ':', (size_t)(end - p));
		if (!colon || rm_parsers__number(colon + 1, end, 0, &v, NULL) < 0)
			return;
		for (size_t i = 0; i < NKEYS; i++) {
			size_t kl = strlen(keys[i].key);
			if ((size_t)(colon - p) == kl && !memcmp(p, keys[i].key, kl)) {
				rm_parsers__series_add(&f->s[i], f->batch, v);
				break;
			}
		}
		return;
	}
	if (memchr(s, '[', n)) {
		long b, t;
		if (batch_header(s, n, &b, &t) == 0) {
			f->batch = b;
			f->total = t;
		}
	}
}

static void foundry_finish(void *state, rm_parse_result *out)
{
	struct foundry *f = state;
	pu_cut cut = rm_parsers__series_cut(&f->s[0], 1);
	long dropped = 0;

	rm_parsers__series_mean(&f->s[0], &cut, &dropped);
	for (size_t i = 0; i < NKEYS; i++)
		rm_parsers__series_emit(&f->s[i], out, keys[i].name, keys[i].unit, &cut);
	if (!rm_parsers__series_count(&f->s[0])) {
		rm_result_set_problem(
		    out, f->batch >= 0 ? "no 'Train throughput/samples_per_sec' value (Composer "
					 "prints none until its speed window fills)"
				       : "no Composer '[batch=N/M]:' block");
		return;
	}
	rm_parsers__report_warmup(out, dropped);
	rm_result_set_performance_agg(out, rm_parsers__series_last(&f->s[0]), "samples_per_sec",
				      "last");
}

static void foundry_progress(void *state, rm_parse_progress *out)
{
	struct foundry *f = state;
	pu_series *s = &f->s[0];

	out->step = f->batch;
	out->total_steps = f->total;
	out->throughput =
	    (s->n || s->pending) ? (s->pending ? s->pend_sum / (double)s->pend_cnt : s->last) : -1;
	out->throughput_metric = out->throughput >= 0 ? "samples_per_sec" : NULL;
}

static int foundry_sniff(const char *line, size_t len)
{
	long b, t;

	if (len < 8)
		return 0;
	if (pu_find(line, len, "Train throughput/") || pu_find(line, len, "Train loss/train/"))
		return 100;
	if (batch_header(line, len, &b, &t) == 0 && pu_find(line, len, "]:"))
		return 60;
	return 0;
}

const rm_parser_ops rm_parser_llm_foundry = {
    .name = "llm_foundry",
    .description = "Composer / LLM Foundry '[batch=N/M]:' blocks (MPT-30B)",
    .init = foundry_init,
    .feed_line = foundry_feed,
    .finish = foundry_finish,
    .free = free,
    .progress = foundry_progress,
    .sniff = foundry_sniff,
};
