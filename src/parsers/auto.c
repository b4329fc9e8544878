/*
 * auto: recognises which format a log is, without buffering it.
 *
 * Rule: while undecided, every line is scored by each parser's sniff() (0..100, judged on
 * whole keys) and fed to every candidate at once, so nothing needs replaying. The decision is
 * taken as soon as one parser's total reaches AUTO_CONFIDENT (three certain lines), or after
 * AUTO_WINDOW lines when some parser scored, or later at the first certain line (100), or at
 * the end of the log. The parser with the highest total wins; scores say how specific a
 * format is (a workload parser's line scores 100, generic's `performance:` line 30, so a
 * workload log that ends with MAD's `performance:` line is the workload's), and on equal
 * totals a workload parser beats generic, then the earlier row of rm_parsers[] wins. The
 * other candidates are freed. A log on which no parser scored is recognised by none: the
 * result has no figure and says so (FAILURE with a reason, never an empty SUCCESS).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse_util.h"
#include "rm/util.h"

#define AUTO_WINDOW    2000
#define AUTO_CONFIDENT 300
#define AUTO_CERTAIN   100
#define MAX_CAND       16

struct autop {
	pu_cleaner clean; /* the text the parsers see: sniffed, so colour or labels hide nothing */
	rm_parser_config cfg;
	size_t ncand;
	const rm_parser_ops *ops[MAX_CAND];
	void *state[MAX_CAND];
	long score[MAX_CAND];
	long scored_lines[MAX_CAND];
	long lines;
	long decided_at; /* line number of the decision, 0 = at the end */
	const char *how; /* why the decision was taken then */
	int chosen;	 /* index into ops, or -1 */
	int finished;
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
static int beats(const struct autop *a, size_t i, long b)
{
	int gi, gb;

	if (b < 0)
		return 1;
	if (a->score[i] != a->score[b])
		return a->score[i] > a->score[b];
	gi = a->ops[i] == &rm_parser_generic;
	gb = a->ops[b] == &rm_parser_generic;
	return gb && !gi; /* otherwise the earlier row (b) stays */
}

static long best_candidate(const struct autop *a)
{
	long best = -1;

	for (size_t i = 0; i < a->ncand; i++)
		if (a->score[i] > 0 && beats(a, i, best))
			best = (long)i;
	return best;
}

static void decide(struct autop *a, const char *how)
{
	long best = best_candidate(a);

	if (best < 0)
		return;
	for (size_t i = 0; i < a->ncand; i++) {
		if ((long)i != best && a->state[i]) {
			a->ops[i]->free(a->state[i]);
			a->state[i] = NULL;
		}
	}
	a->chosen = (int)best;
	a->decided_at = a->lines;
	a->how = how;
}

static void auto_feed(void *state, const char *line, size_t len)
{
	struct autop *a = state;
	int confident = 0, certain = 0, any = 0;
	const char *text;
	size_t tlen;

	if (a->chosen >= 0) {
		a->ops[a->chosen]->feed_line(a->state[a->chosen], line, len);
		return;
	}
	a->lines++;
	/* Sniffed on what the parsers read (rm_parsers__clean: no colour codes, no launcher
	 * labels, the last progress update), fed raw: each parser cleans it itself. */
	rm_parsers__clean(&a->clean, line, len, &text, &tlen);
	for (size_t i = 0; i < a->ncand; i++) {
		if (a->ops[i]->sniff) {
			int s = a->ops[i]->sniff(text, tlen);
			if (s > 0) {
				a->score[i] += s;
				a->scored_lines[i]++;
				certain |= s >= AUTO_CERTAIN;
			}
			confident |= a->score[i] >= AUTO_CONFIDENT;
			any |= a->score[i] > 0;
		}
		a->ops[i]->feed_line(a->state[i], line, len);
	}
	if (confident)
		decide(a, "reached 300, three certain lines");
	else if (a->lines == AUTO_WINDOW && any)
		decide(a, "highest score after the first 2000 lines");
	else if (a->lines > AUTO_WINDOW && certain)
		decide(a, "highest score at the first certain line after line 2000");
}

static void auto_finish(void *state, rm_parse_result *out)
{
	struct autop *a = state;

	a->finished = 1;
	if (a->chosen < 0)
		decide(a, "highest score at the end of the log");
	if (a->chosen >= 0) {
		a->decided_at = a->decided_at ? a->decided_at : a->lines;
		a->ops[a->chosen]->finish(a->state[a->chosen], out);
		return;
	}
	rm_result_set_problem(out,
			      "no parser recognised this log (auto): none of %ld line(s) matched a "
			      "known format (see 'run_models parse --explain')",
			      a->lines);
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

const rm_parser_ops *rm_parsers__auto_choice(void *auto_state)
{
	struct autop *a = auto_state;

	return a && a->chosen >= 0 ? a->ops[a->chosen] : NULL;
}

size_t rm_parsers__auto_explain(void *auto_state, rm_parser_candidate *out, size_t max)
{
	struct autop *a = auto_state;
	long c = a->chosen;

	for (size_t i = 0; i < a->ncand && i < max; i++) {
		rm_parser_candidate *r = &out[i];
		r->name = a->ops[i]->name;
		r->score = a->score[i];
		r->lines = a->scored_lines[i];
		r->taken = (long)i == c;
		if (r->taken)
			snprintf(r->why, sizeof(r->why), "taken at line %ld: %s", a->decided_at,
				 a->how ? a->how : "");
		else if (!a->ops[i]->sniff)
			snprintf(r->why, sizeof(r->why), "dropped: cannot recognise a format");
		else if (a->score[i] == 0)
			snprintf(r->why, sizeof(r->why), "dropped: no line matched its format");
		else if (c >= 0 && a->score[i] < a->score[c])
			snprintf(r->why, sizeof(r->why), "dropped: score %ld below %s's %ld",
				 a->score[i], a->ops[c]->name, a->score[c]);
		else if (c >= 0 && a->ops[i] == &rm_parser_generic)
			snprintf(r->why, sizeof(r->why),
				 "dropped: same score as %s, and generic loses ties",
				 a->ops[c]->name);
		else if (c >= 0)
			snprintf(r->why, sizeof(r->why),
				 "dropped: same score as %s, which comes first in the table",
				 a->ops[c]->name);
		else
			snprintf(r->why, sizeof(r->why), "dropped: undecided");
	}
	return a->ncand;
}

const rm_parser_ops rm_parser_auto = {
    .name = "auto",
    .description = "recognise the format (sniffs the lines on whole keys) and use that parser",
    .init = auto_init,
    .feed_line = auto_feed,
    .finish = auto_finish,
    .free = auto_free,
    .progress = auto_progress,
    .sniff = NULL,
};
