/*
 * auto: recognises which format a log is, without buffering it.
 *
 * Rule: every line of a sniffing window is scored by each parser's sniff() (0..100) and fed
 * to every candidate parser at once, so nothing needs replaying. The window closes after
 * AUTO_WINDOW lines, or as soon as one parser's total reaches AUTO_CONFIDENT (three certain
 * lines). The parser with the highest total then wins (ties go to the earlier entry of
 * rm_parsers[], except that generic loses every tie: its `performance:` line ends many
 * workload logs too) and the other candidates are freed. When no line scored, all candidates
 * keep running to the end and the first (workload parsers before generic) that found a
 * primary figure, else any metric, is chosen.
 */
#include <stdlib.h>
#include <string.h>

#include "parse_util.h"
#include "rm/util.h"

#define AUTO_WINDOW    2000
#define AUTO_CONFIDENT 300
#define MAX_CAND       8

struct autop {
	rm_parser_config cfg;
	size_t ncand;
	const rm_parser_ops *ops[MAX_CAND];
	void *state[MAX_CAND];
	long score[MAX_CAND];
	long lines;
	int chosen; /* index into ops, or -1 */
};

static void *auto_init(const rm_parser_config *cfg)
{
	struct autop *a = rm_xcalloc(1, sizeof(*a));

	a->cfg = *cfg;
	a->chosen = -1;
	for (size_t i = 0; rm_parsers[i] && a->ncand < MAX_CAND; i++) {
		if (rm_parsers[i] == &rm_parser_auto)
			continue;
		a->ops[a->ncand] = rm_parsers[i];
		a->state[a->ncand] = rm_parsers[i]->init(&a->cfg);
		a->ncand++;
	}
	return a;
}

/* Whether candidate i beats the current best b (see the tie rule above). */
static int beats(struct autop *a, size_t i, long b)
{
	if (b < 0)
		return 1;
	if (a->score[i] != a->score[b])
		return a->score[i] > a->score[b];
	return a->ops[b] == &rm_parser_generic && a->ops[i] != &rm_parser_generic;
}

static void choose(struct autop *a, size_t idx)
{
	for (size_t i = 0; i < a->ncand; i++) {
		if (i != idx && a->state[i]) {
			a->ops[i]->free(a->state[i]);
			a->state[i] = NULL;
		}
	}
	a->chosen = (int)idx;
}

static void decide(struct autop *a)
{
	long best = -1;

	for (size_t i = 0; i < a->ncand; i++)
		if (a->score[i] > 0 && beats(a, i, best))
			best = (long)i;
	if (best >= 0)
		choose(a, (size_t)best);
}

static void auto_feed(void *state, const char *line, size_t len)
{
	struct autop *a = state;
	int confident = 0;

	if (a->chosen >= 0) {
		a->ops[a->chosen]->feed_line(a->state[a->chosen], line, len);
		return;
	}
	a->lines++;
	for (size_t i = 0; i < a->ncand; i++) {
		if (a->lines <= AUTO_WINDOW && a->ops[i]->sniff) {
			a->score[i] += a->ops[i]->sniff(line, len);
			if (a->score[i] >= AUTO_CONFIDENT)
				confident = 1;
		}
		a->ops[i]->feed_line(a->state[i], line, len);
	}
	if (confident || a->lines == AUTO_WINDOW)
		decide(a);
}

/* Rank of a finished candidate when nothing was sniffed: lower is better, -1 = unusable. */
static int fallback_rank(const struct autop *a, size_t i, const rm_parse_result *r)
{
	int generic = a->ops[i] == &rm_parser_generic;

	if (r->has_performance)
		return generic;
	if (r->n > 0)
		return 2 + generic;
	return -1;
}

static void auto_finish(void *state, rm_parse_result *out)
{
	struct autop *a = state;
	rm_parse_result res[MAX_CAND];
	long best = -1;
	int best_rank = 99;

	if (a->chosen < 0)
		decide(a);
	if (a->chosen >= 0) {
		a->ops[a->chosen]->finish(a->state[a->chosen], out);
		return;
	}
	/* Nothing sniffed: ask every candidate what it found, workload parsers first. */
	memset(res, 0, sizeof(res));
	for (size_t i = 0; i < a->ncand; i++) {
		int rank;
		a->ops[i]->finish(a->state[i], &res[i]);
		rank = fallback_rank(a, i, &res[i]);
		if (rank >= 0 && rank < best_rank) {
			best_rank = rank;
			best = (long)i;
		}
	}
	for (size_t i = 0; i < a->ncand; i++) {
		if ((long)i == best)
			*out = res[i];
		else
			rm_parse_result_release(&res[i]);
	}
	if (best < 0) /* nothing at all: report it as generic's (empty) finding */
		for (size_t i = 0; i < a->ncand; i++)
			if (a->ops[i] == &rm_parser_generic)
				best = (long)i;
	if (best >= 0)
		choose(a, (size_t)best);
}

static void auto_free(void *state)
{
	struct autop *a = state;

	if (!a)
		return;
	for (size_t i = 0; i < a->ncand; i++)
		if (a->state[i])
			a->ops[i]->free(a->state[i]);
	free(a);
}

static void auto_progress(void *state, rm_parse_progress *out)
{
	struct autop *a = state;

	if (a->chosen >= 0 && a->ops[a->chosen]->progress) {
		a->ops[a->chosen]->progress(a->state[a->chosen], out);
		return;
	}
	out->step = -1;
	out->total_steps = -1;
	out->throughput = -1;
	out->throughput_metric = NULL;
}

const rm_parser_ops *pu_auto_choice(void *auto_state)
{
	struct autop *a = auto_state;

	return a && a->chosen >= 0 ? a->ops[a->chosen] : NULL;
}

const rm_parser_ops rm_parser_auto = {
    .name = "auto",
    .description = "recognise the format (sniffs the first lines) and use that parser",
    .init = auto_init,
    .feed_line = auto_feed,
    .finish = auto_finish,
    .free = auto_free,
    .progress = auto_progress,
    .sniff = NULL,
};
