/*
 * Private helpers shared by the log parsers (not a public contract).
 *
 * Line cleaning: a parser sees raw container output. Progress bars rewrite a line with '\r',
 * so only the text after the last '\r' is what a terminal would finally show; ANSI colour
 * codes (ESC '[' ... final byte) sit between the words a parser looks for. pu_clean() returns
 * the line unchanged when it holds neither (the common case, no copy), else a cleaned copy in
 * a bounded buffer owned by the caller.
 *
 * Numbers: pu_number() reads one decimal number at a cursor, optionally with thousands
 * separators, and rejects nan/inf, so no parser can ever turn "nan" into a result.
 *
 * Series: pu_series keeps constant memory for "final value + steady-state mean": the sum of
 * the steps after the first `warmup`, the count and the last value. The mean
 * leaves out min(warmup, n - 1) leading steps, so at least one step always remains. Lines that
 * repeat the same step (one per rank or node) are averaged into one step value first.
 */
#ifndef RM_PARSE_UTIL_H
#define RM_PARSE_UTIL_H

#include <stddef.h>

#include "rm/parser.h"

#define PU_LINE_MAX 65536 /* longer cleaned lines are cut; no format needs more */

typedef struct pu_cleaner {
	char buf[PU_LINE_MAX];
} pu_cleaner;

/* Sets *out and *outlen to the visible text of the line (see above). Never fails. */
void pu_clean(pu_cleaner *c, const char *line, size_t len, const char **out, size_t *outlen);

/* Finds needle (NUL-terminated) in s[0..n); returns a pointer or NULL. */
const char *pu_find(const char *s, size_t n, const char *needle);

/* Skips blanks (space, tab) from p up to end. */
const char *pu_skip_blank(const char *p, const char *end);

/*
 * Parses a finite decimal number at p (after optional blanks): [+-]digits[.digits][e[+-]d].
 * With commas != 0, ',' between digit groups is accepted (tps: 10,050). Returns 0 and sets
 * *out and *next (first char after the number), or -1 (nan, inf, no digits, overflow).
 */
int pu_number(const char *p, const char *end, int commas, double *out, const char **next);

/* Same for a non-negative integer that fits a long. */
int pu_long(const char *p, const char *end, long *out, const char **next);

/*
 * Finds key (e.g. "lm loss:") in s[0..n) and parses the number after it. Returns 0 with *out,
 * or -1 when the key is absent or not followed by a finite number. *after (optional) points
 * past the number.
 */
int pu_field(const char *s, size_t n, const char *key, int commas, double *out, const char **after);

typedef struct pu_series {
	long warmup;
	long n;		   /* committed steps */
	double sum_steady; /* of committed steps after the first `warmup` */
	double last;
	long last_step;
	int pending;
	long pend_step;
	double pend_sum;
	long pend_cnt;
} pu_series;

void pu_series_init(pu_series *s, const rm_parser_config *cfg);
/* Adds one observation; non-finite values are ignored. step -1 = no step (never merged). */
void pu_series_add(pu_series *s, long step, double v);
/* Commits the pending step; returns the number of steps. */
long pu_series_count(pu_series *s);
double pu_series_last(pu_series *s);
double pu_series_mean(pu_series *s);
/* Adds "<name>" last (with its step) and mean rows when the series has any step. */
void pu_series_emit(pu_series *s, rm_parse_result *r, const char *name, const char *unit);

long pu_warmup(const rm_parser_config *cfg);

/* The parsers, registered in registry.c. */
extern const rm_parser_ops rm_parser_generic;
extern const rm_parser_ops rm_parser_llm_foundry;
extern const rm_parser_ops rm_parser_megatron;
extern const rm_parser_ops rm_parser_torchtitan;
extern const rm_parser_ops rm_parser_mlperf;
extern const rm_parser_ops rm_parser_hf_trainer;
extern const rm_parser_ops rm_parser_auto;

/* The parser auto settled on (its ops), or NULL while undecided. */
const rm_parser_ops *pu_auto_choice(void *auto_state);

#endif
