/*
 * nemo: NeMo (PyTorch Lightning) training progress, in either of its printed forms:
 *
 *   NeMo 2.0 ProgressPrinter (nemo/lightning/pytorch/callbacks/progress_printer.py), one line
 *   per logged step, `| key: value` pieces, floats with 4 significant digits:
 *     Training epoch 0, iteration 9/99 | lr: 3e-05 | global_batch_size: 4 | global_step: 9 |
 *     reduced_train_loss: 1.277 | train_step_timing in s: 0.248 | consumed_samples: 40 |
 *     TFLOPS_per_GPU: 865.7
 *   NeMo 1.x / Lightning tqdm progress bar, `key=value` pieces in the bar's postfix, each
 *   update after a '\r':
 *     Epoch 0: : 100%|####| 100/100 [20:15<00:00, reduced_train_loss=6.370,
 *     global_step=99.00, consumed_samples=12800.0, train_step_timing in s=11.20]
 *
 * Keys (compared whole): reduced_train_loss, train_step_timing in s, TFLOPS_per_GPU and
 * tflops_per_sec_per_gpu (FLOPsMeasurementCallback, two versions), tokens_per_sec_per_gpu,
 * global_batch_size, global_step (the step; else the N of `iteration N/M`), val_loss.
 * Lightning's own `loss=` (a running mean that is nan on pipeline stages without the loss)
 * is not read: reduced_train_loss is NeMo's loss, reduced on the stage that computes it.
 * Each '\r'-separated update is one record; when a key repeats within a line (updates pasted
 * without their '\r'), a new record starts there. ProgressPrinter pieces are split at '|'
 * and read as `key: value`, progress-bar pieces at ',' and read as `key=value`.
 *
 * Units: step_time_ms (NeMo prints seconds), tflops_per_gpu, tokens_per_sec_per_gpu,
 * samples_per_sec (whole job: global_batch_size / step time).
 *
 * Primary figure: the steady-state mean of tflops_per_gpu, else tokens_per_sec_per_gpu, else
 * samples_per_sec, else step_time_ms (lower is better; what NVIDIA's NeMo benchmark recipes
 * report when nothing else is printed).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "parse_util.h"
#include "rm/util.h"

enum { S_TFLOPS, S_TOKENS, S_SAMPLES, S_TIME, S_LOSS, S_VAL, S_N };

static const struct {
	const char *name;
	const char *unit;
} series_info[S_N] = {
    {"tflops_per_gpu", "TFLOP/s/GPU"}, {"tokens_per_sec_per_gpu", "tokens/s/GPU"},
    {"samples_per_sec", "samples/s"},  {"step_time_ms", "ms"},
    {"reduced_train_loss", ""},	       {"val_loss", ""},
};

enum { F_TFLOPS, F_TOKENS, F_TIME, F_LOSS, F_VAL, F_GBS, F_STEP, F_N };

#define K(f, k)                                                                                    \
	{                                                                                          \
		f, k, sizeof(k) - 1                                                                \
	}
static const struct key {
	int field;
	const char *key;
	size_t len;
} keys[] = {
    K(F_TFLOPS, "TFLOPS_per_GPU"),	   K(F_TFLOPS, "tflops_per_sec_per_gpu"),
    K(F_TOKENS, "tokens_per_sec_per_gpu"), K(F_TIME, "train_step_timing in s"),
    K(F_LOSS, "reduced_train_loss"),	   K(F_VAL, "val_loss"),
    K(F_GBS, "global_batch_size"),	   K(F_STEP, "global_step"),
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

struct record {
	int have[F_N];
	double v[F_N];
	long iteration; /* N of `iteration N/M`, or -1 */
	int any;
};

struct nemo {
	pu_cleaner clean;
	long step, total;
	double latest;
	const char *latest_metric;
	long nonfinite_tflops;
	pu_slots slots;
};

static void *nemo_init(const rm_parser_config *cfg)
{
	struct nemo *m = rm_xcalloc(1, sizeof(*m));

	m->step = m->total = -1;
	m->latest = -1;
	rm_parsers__slots_init(&m->slots, S_N, cfg);
	return m;
}

static void nemo_free(void *state)
{
	struct nemo *m = state;

	if (!m)
		return;
	rm_parsers__slots_release(&m->slots);
	free(m);
}

static int nemo_key_index(const char *k, size_t kl)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (keys[i].len == kl && !memcmp(keys[i].key, k, kl))
			return (int)i;
	return -1;
}

static void commit(struct nemo *m, long tag, struct record *r)
{
	double v[S_N];
	int have[S_N] = {0};
	long step;
	pu_series *ser;

	if (!r->any)
		return;
	step = r->have[F_STEP] ? (long)llround(r->v[F_STEP]) : r->iteration;
	/* FLOPsMeasurementCallback starts from tflops_per_sec_per_gpu = -1 and logs that when it
	 * cannot compute the figure (an unknown model, a PEFT job): zero or below is no figure */
	if (r->have[F_TFLOPS] && r->v[F_TFLOPS] > 0) {
		v[S_TFLOPS] = r->v[F_TFLOPS];
		have[S_TFLOPS] = 1;
	}
	if (r->have[F_TOKENS] && r->v[F_TOKENS] > 0) {
		v[S_TOKENS] = r->v[F_TOKENS];
		have[S_TOKENS] = 1;
	}
	if (r->have[F_TIME] && r->v[F_TIME] > 0) {
		v[S_TIME] = r->v[F_TIME] * 1000.0;
		have[S_TIME] = 1;
		if (r->have[F_GBS] && r->v[F_GBS] > 0) {
			v[S_SAMPLES] = r->v[F_GBS] / r->v[F_TIME];
			have[S_SAMPLES] = 1;
		}
	}
	if (r->have[F_LOSS] && rm_parsers__real_loss(r->v[F_LOSS])) {
		v[S_LOSS] = r->v[F_LOSS];
		have[S_LOSS] = 1;
	}
	if (r->have[F_VAL]) {
		v[S_VAL] = r->v[F_VAL];
		have[S_VAL] = 1;
	}
	ser = rm_parsers__slots_get(&m->slots, tag, have[S_LOSS]);
	if (ser)
		for (int i = 0; i < S_N; i++)
			if (have[i])
				rm_parsers__series_add(&ser[i], step, v[i]);
	m->step = step;
	for (int i = S_TFLOPS; i <= S_TIME; i++) {
		if (have[i]) {
			m->latest = v[i];
			m->latest_metric = series_info[i].name;
			break;
		}
	}
	memset(r, 0, sizeof(*r));
	r->iteration = -1;
}

/*
 * One '\r'-separated update. ProgressPrinter lines (`..., iteration N/M | key: value | ...`)
 * are `key: value` pieces between '|'; a progress bar's postfix is `key=value` pieces
 * between ','.
 */
static void read_update(struct nemo *m, long tag, const char *s, size_t n)
{
	const char *end = s + n, *p = s;
	int printer = pu_find(s, n, ", iteration ") != NULL;
	char sepc = printer ? '|' : ',', kv = printer ? ':' : '=';
	struct record r;
	long it, total;

	memset(&r, 0, sizeof(r));
	r.iteration = -1;
	if (printer && rm_parsers__iteration(s, n, &it, &total) == 0) {
		r.iteration = it;
		m->total = total;
	}
	while (p < end) {
		const char *q = memchr(p, sepc, (size_t)(end - p)), *k, *sep, *ke;
		int i, rc;
		double x;
		if (!q)
			q = end;
		k = rm_parsers__skip_blank(p, q);
		p = q < end ? q + 1 : end;
		if (!(sep = memchr(k, kv, (size_t)(q - k))))
			continue;
		ke = sep;
		while (ke > k && (ke[-1] == ' ' || ke[-1] == '\t'))
			ke--;
		if ((i = nemo_key_index(k, (size_t)(ke - k))) < 0)
			continue;
		rc = rm_parsers__number(sep + 1, q, 0, &x, NULL);
		if (rc == PU_NONFINITE && keys[i].field == F_TFLOPS)
			m->nonfinite_tflops++;
		if (rc != PU_OK)
			continue;
		if (r.have[keys[i].field]) /* updates pasted without their '\r' */
			commit(m, tag, &r);
		r.have[keys[i].field] = 1;
		r.v[keys[i].field] = x;
		if (keys[i].field != F_GBS && keys[i].field != F_STEP)
			r.any = 1;
	}
	commit(m, tag, &r);
}

static int is_nemo_line(const char *s, size_t n)
{
	return pu_find(s, n, "reduced_train_loss") || pu_find(s, n, "train_step_timing in s") ||
	       pu_find(s, n, "TFLOPS_per_GPU") || pu_find(s, n, "tokens_per_sec_per_gpu") ||
	       pu_find(s, n, "tflops_per_sec_per_gpu");
}

static void nemo_feed(void *state, const char *line, size_t len)
{
	struct nemo *m = state;
	const char *s, *end, *p;
	size_t n;
	long tag;

	if (len < 20 || !is_nemo_line(line, len))
		return;
	rm_parsers__strip(&m->clean, line, len, &s, &n);
	tag = m->clean.tag;
	end = s + n;
	for (p = s; p < end;) {
		const char *cr = memchr(p, '\r', (size_t)(end - p)), *q = cr ? cr : end;
		if (q > p)
			read_update(m, tag, p, (size_t)(q - p));
		p = cr ? cr + 1 : end;
	}
}

static void nemo_finish(void *state, rm_parse_result *out)
{
	struct nemo *m = state;
	pu_series *ser = rm_parsers__slots_best(&m->slots);
	pu_cut cut = {0, -1, 0};
	int primary = -1;
	long dropped = 0;
	double mean = NAN;

	if (!ser) {
		rm_result_set_problem(out,
				      "no NeMo progress line ('Training epoch E, iteration N/M "
				      "| ...' or a progress bar with 'reduced_train_loss=')");
		return;
	}
	for (int i = S_TFLOPS; i <= S_TIME && primary < 0; i++)
		if (rm_parsers__series_count(&ser[i]))
			primary = i;
	if (primary >= 0) {
		cut = rm_parsers__series_cut(&ser[primary], primary != S_TIME);
		mean = rm_parsers__series_mean(&ser[primary], &cut, &dropped);
	}
	for (int i = 0; i < S_N; i++)
		rm_parsers__series_emit(&ser[i], out, series_info[i].name, series_info[i].unit,
					&cut);
	if (primary < 0) {
		if (m->nonfinite_tflops)
			rm_result_set_problem(out, "performance value 'nan' is not finite (every "
						   "TFLOPS_per_GPU of the progress lines)");
		else
			rm_result_set_problem(out,
					      "the NeMo progress lines hold no throughput and no "
					      "'train_step_timing in s'");
		return;
	}
	rm_parsers__report_warmup(out, dropped);
	rm_result_set_performance_agg(out, mean, series_info[primary].name, "mean");
}

static void nemo_progress(void *state, rm_parse_progress *out)
{
	struct nemo *m = state;

	out->step = m->step;
	out->total_steps = m->total;
	out->throughput = m->latest_metric ? m->latest : -1;
	out->throughput_metric = m->latest_metric;
}

static int nemo_sniff(const char *line, size_t len)
{
	if (len < 20)
		return 0;
	/* ProgressPrinter: `, iteration N/M | ... | reduced_train_loss: ...` */
	if (pu_find(line, len, ", iteration ") && pu_find(line, len, " | ") &&
	    (pu_key(line, len, "reduced_train_loss:") || pu_key(line, len, "global_step:") ||
	     pu_key(line, len, "train_step_timing in s:")))
		return 100;
	/* Lightning progress bar postfix */
	if (pu_key(line, len, "reduced_train_loss=") ||
	    pu_key(line, len, "train_step_timing in s="))
		return 100;
	return 0;
}

const rm_parser_ops rm_parser_nemo = {
    .name = "nemo",
    .description = "NeMo 2.0 'Training epoch E, iteration N/M | key: value' lines and NeMo "
		   "1.x progress bars",
    .init = nemo_init,
    .feed_line = nemo_feed,
    .finish = nemo_finish,
    .free = nemo_free,
    .progress = nemo_progress,
    .sniff = nemo_sniff,
};
