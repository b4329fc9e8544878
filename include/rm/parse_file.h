/*
 * Re-parsing an existing log file with one of the parsers of rm/parser.h, as the `parse`
 * subcommand does, and printing what was found. Lives in the library (not in cmd_parse.c) so
 * tests and benchmarks can drive it without the program's main().
 *
 * The file is read in fixed-size chunks and split into lines; a line longer than
 * RM_PARSE_LINE_MAX bytes is delivered in pieces. Memory stays bounded whatever the file size.
 *
 * Output formats:
 *   CSV  header `metric,value,unit,step,aggregate`, one row per metric in the parser's order,
 *        then `performance,<value>,<primary metric name>,,last` when a primary figure exists.
 *        Values are printed with "%.10g"; an empty step means none.
 *   JSON {"parser": NAME, "performance": {"value": V, "metric": M} | null,
 *         "metrics": [{"metric", "value", "unit", "step" (null when none), "aggregate"}]}
 */
#ifndef RM_PARSE_FILE_H
#define RM_PARSE_FILE_H

#include <stdio.h>

#include "rm/error.h"
#include "rm/parser.h"

#define RM_PARSE_LINE_MAX (1024 * 1024)

enum rm_parse_format { RM_PARSE_CSV = 0, RM_PARSE_JSON = 1 };

/*
 * Parses `path` with parser `name` ("auto" recognises the format) and writes the findings to
 * `out` (may be NULL: parse only). When chosen is not NULL it receives the name of the parser
 * that produced the result (for "auto", the one it picked; a static string).
 * Returns 0 when something was found, 1 when nothing was, -1 with err filled (RM_ERR_USAGE
 * for an unknown parser, RM_ERR_IO when the file cannot be read).
 */
int rm_parse_file(const char *path, const char *name, const rm_parser_config *cfg, FILE *out,
		  int format, const char **chosen, rm_error *err);

/* Writes a result in the CSV or JSON form above. */
void rm_parse_result_write_csv(const rm_parse_result *r, FILE *out);
void rm_parse_result_write_json(const rm_parse_result *r, const char *parser, FILE *out);

/* The parser that produced p's results: p->ops, or for "auto" the parser it picked (NULL
 * while undecided). */
const rm_parser_ops *rm_parser_effective(const rm_parser *p);

#endif
