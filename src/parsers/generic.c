/*
 * generic: the MAD convention `performance: <number> <metric>` (e.g. `performance: 1234.5
 * samples_per_sec`).
 *
 * Primary figure: the LAST such line, as a "summary" (the script's own figure for the run).
 * The peers take the first match, which picks up the runner's or a wrapper's own messages
 * printed earlier; the model's script prints its figure at the end. The number may carry
 * thousands separators (`1,234.5`). When that last line says `nan` or `inf`, the run has no
 * valid figure: the result says "performance value 'nan' is not finite" (an earlier finite
 * line does not stand in for it). The metric is the word after the number; the forms
 * MAD's "adding a model" guide also accepts, `performance: 14164/s, samples_per_second` and
 * `performance: 14164, /s samples_per_second`, give samples_per_second too (a "/unit" piece
 * between number and metric is skipped). Shell trace lines (`+ echo 'performance: ...'`, from
 * `set -x`) are the script's source, not its output: they never count.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "parse_util.h"
#include "rm/util.h"

#define METRIC_MAX 128

struct generic {
	pu_cleaner clean;
	int have;
	double value; /* may be nan or inf: the last line decides */
	char metric[METRIC_MAX];
};

/* Parses `performance: <number> <metric>` in s; returns 0 with the figure or -1. */
static int match(const char *s, size_t n, double *value, const char **metric, size_t *mlen)
{
	const char *end = s + n, *p = s, *k;

	while ((k = pu_key(p, (size_t)(end - p), "performance:"))) {
		const char *q, *w;
		p = k + 12;
		if (rm_parsers__number(p, end, 1, value, &q) == PU_NONE)
			continue;
		if (q >= end || (*q != ' ' && *q != '\t' && *q != ',' && *q != '/'))
			continue;
		/* "/s," or ", /s" between the number and the metric */
		for (;;) {
			while (q < end && (*q == ' ' || *q == '\t' || *q == ','))
				q++;
			if (q >= end || *q != '/')
				break;
			while (q < end && *q != ' ' && *q != '\t' && *q != ',')
				q++;
		}
		w = q;
		while (q < end && *q != ' ' && *q != '\t' && *q != ',' && *q != ';' && *q != '\'' &&
		       *q != '"')
			q++;
		if (q == w)
			continue;
		*metric = w;
		*mlen = (size_t)(q - w);
		return 0;
	}
	return -1;
}

static void *generic_init(const rm_parser_config *cfg)
{
	(void)cfg;
	return rm_xcalloc(1, sizeof(struct generic));
}

static void generic_feed(void *state, const char *line, size_t len)
{
	struct generic *g = state;
	const char *s, *m;
	size_t n, mlen;
	double v;

	if (len < 14 || !pu_find(line, len, "performance:"))
		return;
	rm_parsers__clean(&g->clean, line, len, &s, &n);
	if (n > 1 && s[0] == '+' && (s[1] == ' ' || s[1] == '+'))
		return; /* set -x trace of the echo, not its output */
	if (match(s, n, &v, &m, &mlen) < 0)
		return;
	if (mlen >= METRIC_MAX)
		mlen = METRIC_MAX - 1;
	memcpy(g->metric, m, mlen);
	g->metric[mlen] = '\0';
	g->value = v;
	g->have = 1;
}

static void generic_finish(void *state, rm_parse_result *out)
{
	struct generic *g = state;

	if (!g->have) {
		rm_result_set_problem(out, "no 'performance: <number> <metric>' line");
		return;
	}
	rm_result_add(out, g->metric, g->value, "", -1, "summary");
	rm_result_set_performance_agg(out, g->value, g->metric, "summary");
}

static void generic_progress(void *state, rm_parse_progress *out)
{
	struct generic *g = state;

	out->step = -1;
	out->total_steps = -1;
	out->throughput = g->have && isfinite(g->value) ? g->value : -1;
	out->throughput_metric = out->throughput >= 0 ? g->metric : NULL;
}

static int generic_sniff(const char *line, size_t len)
{
	double v;
	const char *m;
	size_t mlen;

	if (len < 14 || !pu_key(line, len, "performance:"))
		return 0;
	/* Common in every MAD log (the script's last word), so never decisive on its own. */
	return match(line, len, &v, &m, &mlen) == 0 ? 30 : 0;
}

const rm_parser_ops rm_parser_generic = {
    .name = "generic",
    .description = "MAD 'performance: <number> <metric>' line (the last one wins)",
    .init = generic_init,
    .feed_line = generic_feed,
    .finish = generic_finish,
    .free = free,
    .progress = generic_progress,
    .sniff = generic_sniff,
};
