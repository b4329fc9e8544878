/*
 * Log parsers: one small table of functions per workload format, registered in one array
 * (src/parsers/registry.c). Adding a workload is one new file and one line there.
 *
 * A parser sees the container's stdout one line at a time (no '\n'; a trailing '\r' and ANSI
 * colour codes may be present: the parser strips what it must). It keeps constant memory:
 * running sums and last values, never the log. stderr and the runner's own messages are
 * never fed to it.
 *
 * Results are metrics with a name, value, unit, optional step, and an aggregate: "last"
 * (the final finite value of a series or a one-off figure) or "mean" (the steady-state mean
 * of a series, leaving out warm-up steps per rm_parser_config.warmup). nan and inf are never
 * results. The primary figure (value + metric name) is what goes into perf.csv.
 */
#ifndef RM_PARSER_H
#define RM_PARSER_H

#include <stddef.h>

typedef struct rm_parser_config {
	/* Steps of a series left out of the steady-state mean: the first `warmup` steps seen,
	 * but never so many that fewer than one step remains. Default 1 (RM_PARSER_WARMUP). */
	long warmup;
} rm_parser_config;

#define RM_PARSER_WARMUP_DEFAULT 1

typedef struct rm_metric {
	char *name; /* e.g. "throughput/samples_per_sec", "lm_loss", "tflops_per_gpu" */
	double value;
	char *unit;	 /* e.g. "samples/s", "TFLOP/s/GPU", "" when unitless */
	long step;	 /* the step the value comes from, -1 when none */
	char *aggregate; /* "last" or "mean" */
} rm_metric;

typedef struct rm_parse_result {
	rm_metric *metrics;
	size_t n;
	int has_performance;
	double performance;	  /* primary figure */
	char *performance_metric; /* its metric name as perf.csv shows it, e.g. "samples_per_sec" */
} rm_parse_result;

/* Live progress for status lines; fields unknown are -1 / NULL. */
typedef struct rm_parse_progress {
	long step;
	long total_steps;
	double throughput; /* latest value of the primary figure, or -1 */
	const char *throughput_metric;
} rm_parse_progress;

typedef struct rm_parser_ops {
	const char *name;	 /* the name used by models.json "parser" and --parser */
	const char *description; /* one line for --help */
	void *(*init)(const rm_parser_config *cfg);
	void (*feed_line)(void *state, const char *line, size_t len);
	/* Fills *out (zeroed by the caller) with everything found; may be called once. */
	void (*finish)(void *state, rm_parse_result *out);
	void (*free)(void *state);
	/* Optional (may be NULL): current progress. */
	void (*progress)(void *state, rm_parse_progress *out);
	/* Optional (may be NULL): how strongly a line looks like this format (0 none .. 100
	 * certain), for the "auto" parser. */
	int (*sniff)(const char *line, size_t len);
} rm_parser_ops;

/* NULL-terminated table of every parser, "generic" first. */
extern const rm_parser_ops *const rm_parsers[];

/* Finds a parser by name, or NULL. */
const rm_parser_ops *rm_parser_find(const char *name);

/* A running parser instance: the ops plus its state. */
typedef struct rm_parser {
	const rm_parser_ops *ops;
	void *state;
} rm_parser;

/* Returns 0, or -1 when no parser has that name. cfg may be NULL (defaults). */
int rm_parser_start(rm_parser *p, const char *name, const rm_parser_config *cfg);
void rm_parser_feed(rm_parser *p, const char *line, size_t len);
void rm_parser_finish(rm_parser *p, rm_parse_result *out);
void rm_parser_stop(rm_parser *p); /* frees the state; safe to call twice */

/* Result helpers for parser implementations. The name/unit strings are copied. A non-finite
 * value is ignored (returns without adding). */
void rm_result_add(rm_parse_result *r, const char *name, double value, const char *unit, long step,
		   const char *aggregate);
void rm_result_set_performance(rm_parse_result *r, double value, const char *metric);
void rm_parse_result_release(rm_parse_result *r);

#endif
