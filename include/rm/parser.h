/*
 * Log parsers: one small table of functions per workload format, registered in one array,
 * rm_parsers[] (src/parsers/table.c). Adding a workload is one new file in src/parsers/ and
 * one row in that array; the golden test, the benchmark, `auto` and the seed check all walk it.
 *
 * Feeding (the same for the live stream and `run_models parse`):
 *
 *   rm_parser_start(&p, name, &cfg);
 *   for each piece rm_lines (rm/util.h) hands out:
 *                              rm_parser_feed_split(&p, line, len, kind);  (no '\n')
 *   or, the end cut short:     rm_parser_feed_fragment(&p, rest, len);
 *   rm_parser_finish(&p, &result);  ...  rm_parse_result_release(&result);
 *   rm_parser_stop(&p);
 *
 * Lines are split by the caller with rm_lines initialised with RM_PARSER_LINE_MAX, which says
 * what each call is: a whole line (RM_LINE_WHOLE, whatever its length: a line of exactly
 * RM_PARSER_LINE_MAX bytes is whole), a piece of a longer line that continues in the next
 * call (RM_LINE_PIECE), or the last line of the stream without a line end (RM_LINE_END, read
 * as a whole line: a result file's last record often has no '\n'). Of a longer line the
 * parser sees only whole text: in a piece, the text before its first '\r' (when it continues
 * an earlier piece) and after its last '\r' (when more follows) is cut text and is dropped;
 * what lies between carriage returns is whole progress-bar updates. When the caller knows the
 * end was cut short (the runner stopped the workload mid-write: a timeout, a signal, a lost
 * engine, `lm loss: 8.` or half a JSON record left behind) it hands the end to
 * rm_parser_feed_fragment() instead: only text before its last '\r' can count there, so a cut
 * line never becomes a metric. stderr and the runner's own messages are never fed.
 *
 * A parser keeps constant memory: running sums, last values and the first
 * RM_PARSER_WARMUP_WINDOW steps of each series, never the log.
 *
 * Results are metrics with a name, value, unit, optional step and an aggregate:
 *   "last"     the final finite value of a series (with its step)
 *   "mean"     the steady-state mean of a series: warm-up steps left out (see below)
 *   "summary"  a figure the framework or script itself reported for the whole run (Trainer's
 *              train metrics, MLPerf's time to train, MAD's `performance:` line)
 * nan and inf are never results. Names say the unit and scope: `_ms`, `_per_sec`, `_min`;
 * throughput per GPU ends in `_per_gpu`, a throughput name without it is for the whole job
 * (docs/parsers.md lists every name).
 *
 * Warm-up (rm_parser_config.warmup):
 *   RM_PARSER_WARMUP_AUTO (the default): detected from the data. Over the first
 *     RM_PARSER_WARMUP_WINDOW steps of the series behind the primary figure, the reference is
 *     the median of the later half of those steps; leading steps worse than the reference by
 *     more than RM_PARSER_WARMUP_SLACK_PCT percent (lower throughput, longer step time) are
 *     warm-up, up to the first step that is not. At least one step is always kept. Every
 *     series of the parser leaves out the same steps (by step number).
 *   N >= 0: the first min(N, n - 1) steps of each series are left out.
 * The number of steps left out is in rm_parse_result.warmup_dropped and in a metric row
 * `warmup_steps_dropped` (aggregate "summary"), so perf_<model>.csv shows it.
 *
 * Labels a launcher puts in front of every line (srun --label's `3: `, padded or not,
 * torchrun's `[rank3]:`, Ray's `(name, pid=N) `) are removed before any parser, and `auto`,
 * reads the line: every parser sees the same text (docs/parsers.md).
 *
 * Several ranks in one log: lines carrying a rank tag ([rank3]:, [default3]:, [rank-3/8],
 * a leading `3: `) are kept apart per rank (up to RM_PARSER_MAX_RANKS). The figures come
 * from one rank: the one that computed the loss (most steps with a real, positive loss;
 * ties to the rank seen first), else the one with most steps. A loss of zero or below is a
 * placeholder of a pipeline stage without the loss and never counts.
 */
#ifndef RM_PARSER_H
#define RM_PARSER_H

#include <stddef.h>
#include <stdio.h>

#include "rm/util.h"

/* Longest line handed to a parser in one call; the live stream and `parse` both split with
 * rm_lines at this size. */
#define RM_PARSER_LINE_MAX 65536

#define RM_PARSER_WARMUP_AUTO	   (-1L)
#define RM_PARSER_WARMUP_DEFAULT   RM_PARSER_WARMUP_AUTO
#define RM_PARSER_WARMUP_WINDOW	   32
#define RM_PARSER_WARMUP_SLACK_PCT 5
#define RM_PARSER_MAX_RANKS	   8

typedef struct rm_parser_config {
	/* RM_PARSER_WARMUP_AUTO (-1): detect the warm-up from the data; N >= 0: leave out the
	 * first N steps of each series (never all of them). */
	long warmup;
} rm_parser_config;

typedef struct rm_metric {
	char *name; /* e.g. "throughput/samples_per_sec", "lm_loss", "tflops_per_gpu" */
	double value;
	char *unit;	 /* e.g. "samples/s", "TFLOP/s/GPU", "" when unitless */
	long step;	 /* the step the value comes from, -1 when none */
	char *aggregate; /* "last", "mean" or "summary" */
} rm_metric;

/*
 * What a parser found. Zero it before rm_parser_finish(); rm_parse_result_release() frees it.
 * Exactly one of has_performance and problem is set after finish: a run without a usable
 * primary figure always says why.
 */
typedef struct rm_parse_result {
	rm_metric *metrics;
	size_t n;
	int has_performance;
	double performance;	  /* primary figure */
	char *performance_metric; /* its metric name as perf.csv shows it, e.g. "tflops_per_gpu" */
	char *performance_aggregate; /* "last", "mean" or "summary"; NULL without a figure */
	long warmup_dropped;	     /* steps left out of the means (0 when none or no series) */
	/* Why there is no usable performance, e.g. "performance value 'nan' is not finite",
	 * "no parser recognised this log (auto): ..."; NULL when there is a figure. For the
	 * runner's FAILURE reason. */
	char *problem;
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
	/* One line of whole text (see the feeding rules above); may hold '\r'-separated
	 * progress-bar updates, the last of which a terminal would show. */
	void (*feed_line)(void *state, const char *line, size_t len);
	/* Fills *out (zeroed by the caller) with everything found; called once. */
	void (*finish)(void *state, rm_parse_result *out);
	void (*free)(void *state);
	/* Optional (may be NULL): current progress. */
	void (*progress)(void *state, rm_parse_progress *out);
	/* Optional (may be NULL): how strongly a line looks like this format (0 none .. 100
	 * certain), judged on whole keys, for "auto". */
	int (*sniff)(const char *line, size_t len);
} rm_parser_ops;

/* NULL-terminated table of every parser, "generic" first, "auto" last. */
extern const rm_parser_ops *const rm_parsers[];

/* Finds a parser by name, or NULL. */
const rm_parser_ops *rm_parser_find(const char *name);

/* A running parser instance. Treat the fields as private. */
typedef struct rm_parser {
	const rm_parser_ops *ops;
	void *state;
	int in_piece; /* the last call was a piece of an over-long line */
} rm_parser;

/* Returns 0, or -1 when no parser has that name. cfg may be NULL (defaults). */
int rm_parser_start(rm_parser *p, const char *name, const rm_parser_config *cfg);
/* One whole line without its '\n' (any length). */
void rm_parser_feed(rm_parser *p, const char *line, size_t len);
/* What rm_lines hands out, with its kind (RM_LINE_WHOLE, RM_LINE_PIECE, RM_LINE_END). */
void rm_parser_feed_split(rm_parser *p, const char *line, size_t len, int kind);
/* The unterminated bytes after the last '\n' of a stream that was cut short: never parsed
 * as a metric unless they hold whole '\r'-terminated progress updates. Call at most once,
 * before finish. */
void rm_parser_feed_fragment(rm_parser *p, const char *line, size_t len);
void rm_parser_finish(rm_parser *p, rm_parse_result *out);
void rm_parser_stop(rm_parser *p); /* frees the state; safe to call twice */

/* The parser that produced p's results: p->ops, or for "auto" the parser it picked (NULL
 * while undecided or when it recognised nothing). */
const rm_parser_ops *rm_parser_effective(const rm_parser *p);

/* Why "auto" took or dropped each candidate (call after finish). */
typedef struct rm_parser_candidate {
	const char *name;
	long score; /* sum of sniff() over the lines read while undecided */
	long lines; /* lines that scored above 0 */
	int taken;
	char why[192];
} rm_parser_candidate;

/* Fills up to max rows, one per candidate in table order; returns the number of candidates
 * (0 when p is not "auto"). */
size_t rm_parser_explain(const rm_parser *p, rm_parser_candidate *out, size_t max);

/* Result helpers for parser implementations. The strings are copied. A non-finite value is
 * not added. */
void rm_result_add(rm_parse_result *r, const char *name, double value, const char *unit, long step,
		   const char *aggregate);
/* Sets the primary figure with aggregate "last" (kept for existing callers). */
void rm_result_set_performance(rm_parse_result *r, double value, const char *metric);
/* Sets the primary figure and its aggregate. A non-finite value sets problem instead:
 * "performance value 'nan' is not finite" (or 'inf', '-inf'). */
void rm_result_set_performance_agg(rm_parse_result *r, double value, const char *metric,
				   const char *aggregate);
/* Sets problem (replacing an earlier one) unless a figure is set. */
void rm_result_set_problem(rm_parse_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void rm_parse_result_release(rm_parse_result *r);

/*
 * Re-parsing an existing log file with one of the parsers of rm/parser.h, as the `parse`
 * subcommand does, and printing what was found. Lives in the library (not in cmd_parse.c) so
 * tests and benchmarks can drive it without the program's main().
 *
 * The file is read in fixed-size chunks and split with rm_lines (rm/util.h) at
 * RM_PARSER_LINE_MAX, exactly as the runner splits a container's stdout; the end of the file
 * is the end of the output, so a last line without a line end is read as a whole line (as the
 * runner reads it when the workload ended by itself). Memory stays bounded whatever the file
 * size.
 *
 * Output formats:
 *   CSV  header `metric,value,unit,step,aggregate`, one row per metric in the parser's order,
 *        then `performance,<value>,<primary metric name>,,<aggregate>` when a primary figure
 *        exists (aggregate: last, mean or summary). Values are printed with "%.10g"; an empty
 *        step means none.
 *   JSON {"parser": NAME, "performance": {"value": V, "metric": M, "aggregate": A} | null,
 *         "problem": TEXT | null, "warmup_steps_dropped": N,
 *         "metrics": [{"metric", "value", "unit", "step" (null when none), "aggregate"}]}
 */
enum rm_parse_format { RM_PARSE_CSV = 0, RM_PARSE_JSON = 1 };

/*
 * Streams the file at path through the started parser p and finishes it into *out (zeroed
 * by the caller; release it with rm_parse_result_release). The caller still owns p (for
 * rm_parser_effective / rm_parser_explain) and stops it. Returns 0, or -1 with err filled
 * (RM_ERR_IO when the file cannot be read; *out is then untouched).
 */
int rm_parse_path(const char *path, rm_parser *p, rm_parse_result *out, rm_error *err);

/*
 * Parses `path` with parser `name` ("auto" recognises the format) and writes the findings to
 * `out` (may be NULL: parse only). When chosen is not NULL it receives the name of the parser
 * that produced the result (for "auto", the one it picked, NULL when none; a static string).
 * Returns 0 when a performance figure was found, 1 when none was (the reason is in the
 * output's problem / on the result), -1 with err filled (RM_ERR_USAGE for an unknown parser,
 * RM_ERR_IO when the file cannot be read).
 */
int rm_parse_file(const char *path, const char *name, const rm_parser_config *cfg, FILE *out,
		  int format, const char **chosen, rm_error *err);

/* Writes a result in the CSV or JSON form above. */
void rm_parse_result_write_csv(const rm_parse_result *r, FILE *out);
void rm_parse_result_write_json(const rm_parse_result *r, const char *parser, FILE *out);

#endif
