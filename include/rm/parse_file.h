/*
 * Re-parsing an existing log file with one of the parsers of rm/parser.h, as the `parse`
 * subcommand does, and printing what was found. Lives in the library (not in cmd_parse.c) so
 * tests and benchmarks can drive it without the program's main().
 *
 * The file is read in fixed-size chunks and split with rm_lines (rm/frame.h) at
 * RM_PARSER_LINE_MAX, exactly as the runner splits a container's stdout; the unterminated end
 * of the file goes through rm_parser_feed_fragment(). Memory stays bounded whatever the file
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
#ifndef RM_PARSE_FILE_H
#define RM_PARSE_FILE_H

#include <stdio.h>

#include "rm/error.h"
#include "rm/parser.h"

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
