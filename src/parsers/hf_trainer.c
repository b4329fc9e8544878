/*
 * hf_trainer: the Hugging Face Trainer's end-of-training summary, in either form:
 *
 *   dict   {'train_runtime': 80.3532, 'train_samples_per_second': 4.978,
 *           'train_steps_per_second': 1.245, 'train_loss': 0.352..., 'epoch': 100.0}
 *   table  ***** train metrics *****
 *            epoch                    =      100.0
 *            train_runtime            = 0:01:20.35
 *            train_samples_per_second =      4.978
 *
 * Table rows may carry a logger prefix ("INFO train_loss = 117.8037"); the table ends at the
 * first line without '='. train_runtime in the table is h:mm:ss.ff and is converted to
 * seconds. When both forms are present the dict's values win: they are printed unrounded.
 * Among several summaries (several trainings in one log) the last of each form wins.
 *
 * Every figure is the Trainer's own summary of the run (aggregate "summary"). Primary figure:
 * train_samples_per_second (whole job) as metric "samples_per_second", the value madengine
 * itself falls back to for Trainer logs. A non-finite value (`'train_loss': nan`) is left out.
 */
#include <stdlib.h>
#include <string.h>

#include "parse_util.h"
#include "rm/util.h"

enum { K_SPS, K_STEPS, K_TOKENS, K_RUNTIME, K_LOSS, K_EPOCH, K_N };

static const struct {
	const char *key;
	const char *dict_key; /* as the dict form prints it */
	const char *unit;
} keys[K_N] = {
    {"train_samples_per_second", "'train_samples_per_second':", "samples/s"},
    {"train_steps_per_second", "'train_steps_per_second':", "steps/s"},
    {"train_tokens_per_second", "'train_tokens_per_second':", "tokens/s"},
    {"train_runtime", "'train_runtime':", "s"},
    {"train_loss", "'train_loss':", ""},
    {"epoch", "'epoch':", ""},
};

struct hf {
	pu_cleaner clean;
	int in_table;
	int have_dict[K_N], have_table[K_N];
	double dict[K_N], table[K_N];
};

static void *hf_init(const rm_parser_config *cfg)
{
	(void)cfg;
	return rm_xcalloc(1, sizeof(struct hf));
}

static int key_index(const char *k, size_t kl)
{
	for (int i = 0; i < K_N; i++)
		if (kl == strlen(keys[i].key) && !memcmp(k, keys[i].key, kl))
			return i;
	return -1;
}

/* "0:08:59.74" -> 539.74; plain numbers pass through. */
static int duration(const char *p, const char *end, double *out)
{
	double parts[3], v;
	int np = 0;
	const char *q;

	p = rm_parsers__skip_blank(p, end);
	while (np < 3) {
		if (rm_parsers__number(p, end, 0, &v, &q) < 0)
			return -1;
		parts[np++] = v;
		if (q < end && *q == ':') {
			p = q + 1;
			continue;
		}
		break;
	}
	v = 0;
	for (int i = 0; i < np; i++)
		v = v * 60 + parts[i];
	*out = v;
	return 0;
}

static void parse_dict(struct hf *h, const char *s, size_t n)
{
	for (int i = 0; i < K_N; i++) {
		double v;
		if (pu_field(s, n, keys[i].dict_key, 0, &v, NULL) == 0) {
			h->dict[i] = v;
			h->have_dict[i] = 1;
		}
	}
}

static void parse_row(struct hf *h, const char *s, size_t n)
{
	const char *end = s + n, *eq = memchr(s, '=', n), *k, *ke;
	double v;
	int i;

	if (!eq) {
		h->in_table = 0;
		return;
	}
	ke = eq;
	while (ke > s && (ke[-1] == ' ' || ke[-1] == '\t'))
		ke--;
	k = ke;
	while (k > s && k[-1] != ' ' && k[-1] != '\t' && k[-1] != ']' && k[-1] != ':')
		k--;
	i = key_index(k, (size_t)(ke - k));
	if (i < 0)
		return;
	if ((i == K_RUNTIME ? duration(eq + 1, end, &v)
			    : rm_parsers__number(eq + 1, end, 0, &v, NULL)) == 0) {
		h->table[i] = v;
		h->have_table[i] = 1;
	}
}

static void hf_feed(void *state, const char *line, size_t len)
{
	struct hf *h = state;
	const char *s;
	size_t n;

	if (!h->in_table && (len < 16 || (!memchr(line, '*', len) && !memchr(line, '\'', len))))
		return;
	rm_parsers__clean(&h->clean, line, len, &s, &n);
	if (pu_find(s, n, "'train_runtime':") || pu_find(s, n, "'train_samples_per_second':")) {
		parse_dict(h, s, n);
		return;
	}
	if (pu_find(s, n, "***** train metrics *****")) {
		h->in_table = 1;
		return;
	}
	if (h->in_table)
		parse_row(h, s, n);
}

static void hf_finish(void *state, rm_parse_result *out)
{
	struct hf *h = state;
	int have_any = 0;

	for (int i = 0; i < K_N; i++)
		have_any |= h->have_dict[i] | h->have_table[i];
	if (!have_any) {
		rm_result_set_problem(out, "no Trainer train metrics ({'train_runtime': ...} or "
					   "'***** train metrics *****')");
		return;
	}
	for (int i = 0; i < K_N; i++) {
		if (h->have_dict[i])
			rm_result_add(out, keys[i].key, h->dict[i], keys[i].unit, -1, "summary");
		else if (h->have_table[i])
			rm_result_add(out, keys[i].key, h->table[i], keys[i].unit, -1, "summary");
	}
	if (h->have_dict[K_SPS])
		rm_result_set_performance_agg(out, h->dict[K_SPS], "samples_per_second", "summary");
	else if (h->have_table[K_SPS])
		rm_result_set_performance_agg(out, h->table[K_SPS], "samples_per_second",
					      "summary");
	else
		rm_result_set_problem(out,
				      "the Trainer train metrics hold no train_samples_per_second");
}

static int hf_sniff(const char *line, size_t len)
{
	if (len < 16)
		return 0;
	if (pu_find(line, len, "***** train metrics *****") ||
	    pu_find(line, len, "'train_samples_per_second':"))
		return 100;
	return 0;
}

const rm_parser_ops rm_parser_hf_trainer = {
    .name = "hf_trainer",
    .description = "Hugging Face Trainer train metrics (dict or '***** train metrics *****')",
    .init = hf_init,
    .feed_line = hf_feed,
    .finish = hf_finish,
    .free = free,
    .progress = NULL,
    .sniff = hf_sniff,
};
