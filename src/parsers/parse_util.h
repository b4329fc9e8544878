/*
 * Private helpers shared by the log parsers (not a public contract; rm/parser.h is).
 *
 * Line cleaning: a parser sees raw container output. Progress bars rewrite a line with '\r',
 * so only the text after the last '\r' is what a terminal would finally show; ANSI colour
 * codes (ESC '[' ... final byte) sit between the words a parser looks for. rm_parsers__clean()
 * returns that text unchanged when it holds no escape (the common case, no copy), else a cleaned
 * copy in a buffer of RM_PARSER_LINE_MAX bytes owned by the caller (a line handed to a parser is
 * never longer, so nothing is cut).
 *
 * Keys: a key such as "step:" matches only as a whole key, i.e. not preceded by a letter,
 * digit, '_' or '/' ("global_step:" does not contain the key "step:", "reduced_train_loss:"
 * does not contain "loss:").
 *
 * Numbers: rm_parsers__number() reads one decimal number at a cursor, optionally with thousands
 * separators, and never returns nan or inf; it says when the text is a non-finite token, so a
 * parser can report "performance value 'nan' is not finite". A number cut after its '.'
 * ("8.") is rejected: no framework prints one, a line cut mid-write does.
 *
 * Series: pu_series keeps constant memory for "final value + steady-state mean": the sum and
 * count of all steps, the first RM_PARSER_WARMUP_WINDOW steps (for the warm-up rule of
 * rm/parser.h) and the last value. Lines that repeat the same step (one per node, or two
 * loggers) are averaged into one step value first.
 *
 * Ranks: pu_slots keeps one set of series per rank tag (see rm/parser.h) and picks the rank
 * whose figures are reported.
 */
#ifndef RM_PARSE_UTIL_H
#define RM_PARSE_UTIL_H

#include <stddef.h>
#include <string.h>

#include "rm/parser.h"

typedef struct pu_cleaner {
	long tag; /* the rank of the line last cleaned (see rm_parsers__label), or -1 */
	char buf[RM_PARSER_LINE_MAX];
} pu_cleaner;

/* Sets *out and *outlen to the visible text of the line (see above), without the labels in
 * front of it, and c->tag to its rank. Never fails. */
void rm_parsers__clean(pu_cleaner *c, const char *line, size_t len, const char **out,
		       size_t *outlen);

/* Copies the line without ANSI sequences (keeping '\r') into c, or returns it unchanged when
 * it holds none; the labels in front of it are removed and c->tag set as above. */
void rm_parsers__strip(pu_cleaner *c, const char *line, size_t len, const char **out,
		       size_t *outlen);

/*
 * Finds needle (NUL-terminated) in s[0..n); returns a pointer or NULL. Inline so that the
 * length of a literal needle is known at compile time: log lines are short and needles a few
 * bytes, so memchr on the first byte then memcmp beats memmem's setup cost several times over
 * (bench-parsers.sh).
 */
static inline const char *pu_find(const char *s, size_t n, const char *needle)
{
	size_t nl = strlen(needle);
	const char *end = s + n, *p = s;

	if (nl == 0)
		return s;
	while (nl <= (size_t)(end - p) && (p = memchr(p, needle[0], (size_t)(end - p) - nl + 1))) {
		if (!memcmp(p + 1, needle + 1, nl - 1))
			return p;
		p++;
	}
	return NULL;
}

/* Whether ch may be part of a key word: a key is whole when the byte before it is not. */
static inline int pu_word_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '_' || ch == '/';
}

/* Finds key as a whole key in s[0..n) (see above); returns a pointer to it or NULL. */
static inline const char *pu_key(const char *s, size_t n, const char *key)
{
	const char *end = s + n, *p = s, *k;

	while (p < end && (k = pu_find(p, (size_t)(end - p), key))) {
		if (k == s || !pu_word_char(k[-1]))
			return k;
		p = k + 1;
	}
	return NULL;
}

/* Skips blanks (space, tab) from p up to end. */
const char *rm_parsers__skip_blank(const char *p, const char *end);

enum { PU_OK = 0, PU_NONE = -1, PU_NONFINITE = -2 };

/*
 * Parses a finite decimal number at p (after optional blanks): [+-]digits[.digits][e[+-]d].
 * With commas != 0, ',' between digit groups is accepted (tps: 10,050; 1,234.5). Returns
 * PU_OK and sets *out and *next (first char after the number); PU_NONFINITE for nan/inf
 * (*out set to the non-finite value, *next past the token); PU_NONE when there is no number
 * or it is cut after its '.'.
 */
int rm_parsers__number(const char *p, const char *end, int commas, double *out, const char **next);

/* Same for a non-negative integer that fits a long. */
int rm_parsers__long(const char *p, const char *end, long *out, const char **next);

/*
 * Finds key as a whole key in s[0..n) and parses the number after it. Returns PU_OK with *out,
 * PU_NONFINITE, or PU_NONE when the key is absent or not followed by a number. *after
 * (optional) points past the number.
 */
static inline int pu_field(const char *s, size_t n, const char *key, int commas, double *out,
			   const char **after)
{
	const char *k = pu_key(s, n, key);

	if (!k)
		return PU_NONE;
	return rm_parsers__number(k + strlen(key), s + n, commas, out, after);
}

/*
 * Labels: what a launcher puts in front of every line of a worker, the same for every parser:
 * torchrun's `[rank3]:` and `[default3]:`, srun --label's `3: ` (padded: ` 3: `, `   3:  `),
 * Ray's `(name, pid=4112) ` (SkyPilot, Ray Train). Returns the rank (-1 for a Ray label,
 * which names a process, not a rank) and sets *rest past the label and one blank after it;
 * RM_PARSERS_NO_LABEL when s does not start with one (leading blanks allowed).
 */
#define RM_PARSERS_NO_LABEL (-2)
long rm_parsers__label(const char *s, size_t n, const char **rest);

/* The rank of a line: its label's, else a Primus `[rank-3/8]` tag near its start; or -1. */
long rm_parsers__rank_tag(const char *s, size_t n);

/* Whether a loss value is real (finite and above zero) rather than a placeholder. */
int rm_parsers__real_loss(double v);

typedef struct pu_series {
	long fixed; /* fixed warm-up count, or RM_PARSER_WARMUP_AUTO */
	long n;	    /* committed steps */
	double sum;
	double sum_after_fixed; /* of committed steps after the first `fixed` */
	double win[RM_PARSER_WARMUP_WINDOW];
	long win_step[RM_PARSER_WARMUP_WINDOW];
	double last;
	long last_step;
	int pending;
	long pend_step;
	double pend_sum;
	long pend_cnt;
} pu_series;

/* Which leading steps the means leave out: `count` steps of the series the cut was found on,
 * or (by_step) every leading step numbered <= `step`. */
typedef struct pu_cut {
	long count;
	long step;
	int by_step;
} pu_cut;

void rm_parsers__series_init(pu_series *s, const rm_parser_config *cfg);
/* Adds one observation; non-finite values are ignored. step -1 = no step (never merged). */
void rm_parsers__series_add(pu_series *s, long step, double v);
/* Commits the pending step; returns the number of steps. */
long rm_parsers__series_count(pu_series *s);
double rm_parsers__series_last(pu_series *s);
/* The warm-up cut of rm/parser.h found on s (the primary series; higher_better for
 * throughput, 0 for times). */
pu_cut rm_parsers__series_cut(pu_series *s, int higher_better);
/* Mean of s leaving out the cut's steps; NAN when s has no step. *dropped (optional) gets
 * the number of steps left out. */
double rm_parsers__series_mean(pu_series *s, const pu_cut *cut, long *dropped);
/* Adds "<name>" last (with its step) and mean rows when the series has any step. */
void rm_parsers__series_emit(pu_series *s, rm_parse_result *r, const char *name, const char *unit,
			     const pu_cut *cut);

/* Per-rank sets of nser series each (see rm/parser.h). */
typedef struct pu_slots {
	size_t nser;
	rm_parser_config cfg;
	int used;
	long tag[RM_PARSER_MAX_RANKS];
	long loss_lines[RM_PARSER_MAX_RANKS];
	long lines[RM_PARSER_MAX_RANKS];
	pu_series *ser[RM_PARSER_MAX_RANKS];
} pu_slots;

void rm_parsers__slots_init(pu_slots *ps, size_t nser, const rm_parser_config *cfg);
/*
 * The series of the rank `tag` (-1 = lines without a tag), creating them on first use.
 * real_loss says whether the line carries a real loss: when all slots are taken, such a line
 * replaces a rank that never had one; other lines of unknown ranks are then dropped (NULL).
 */
pu_series *rm_parsers__slots_get(pu_slots *ps, long tag, int real_loss);
/* The series of the rank whose figures are reported, or NULL when no line was added. */
pu_series *rm_parsers__slots_best(pu_slots *ps);
void rm_parsers__slots_release(pu_slots *ps);

/* Adds the `warmup_steps_dropped` row and sets r->warmup_dropped. */
void rm_parsers__report_warmup(rm_parse_result *r, long dropped);

/* The parser auto settled on (its ops), or NULL while undecided. */
const rm_parser_ops *rm_parsers__auto_choice(void *auto_state);
size_t rm_parsers__auto_explain(void *auto_state, rm_parser_candidate *out, size_t max);

/* Parsers referenced by name outside registry.c. */
extern const rm_parser_ops rm_parser_generic;
extern const rm_parser_ops rm_parser_auto;

/* The first `iteration <N>/ <M>` (a whole word "iteration", then N/M) in s[0..n): sets
 * *iter and *total; -1 when there is none. Megatron-LM and NeMo print it. */
int rm_parsers__iteration(const char *s, size_t n, long *iter, long *total);

#endif
