/*
 * run_models parse [--parser NAME] [--format csv|json] [--warmup auto|N] [--explain] LOGFILE
 * run_models parse --list-parsers
 *
 * Re-parses an existing log (a <model>.live.log, an output.txt, a published result file)
 * and prints what the parser finds. Exit 0 when a performance figure was found, 1 when none
 * was (the reason is printed on stderr), 2 on a usage error, 5 when the file cannot be read.
 */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "rm/parse_file.h"
#include "rm/parser.h"
#include "rm/util.h"

enum { OPT_PARSER, OPT_FORMAT, OPT_WARMUP, OPT_EXPLAIN, OPT_LIST, OPT_HELP };

/* One table for parsing and for --help. */
static const struct opt {
	int id;
	const char *lng;
	const char *arg; /* NULL: a flag */
	const char *help;
} opts[] = {
    {OPT_PARSER, "--parser", "NAME", "parser to use (default auto: recognise the format)"},
    {OPT_FORMAT, "--format", "csv|json", "output format (default csv)"},
    {OPT_WARMUP, "--warmup", "auto|N",
     "warm-up steps left out of means: auto (default, from the data) or the first N"},
    {OPT_EXPLAIN, "--explain", NULL,
     "print on stderr why auto took or dropped each candidate parser"},
    {OPT_LIST, "--list-parsers", NULL, "print the parser names, one per line, and exit"},
    {OPT_HELP, "--help", NULL, "show this help"},
};
#define NOPTS (sizeof(opts) / sizeof(opts[0]))

static void usage(FILE *f)
{
	fputs("usage: run_models parse [options] LOGFILE\n\noptions:\n", f);
	for (size_t i = 0; i < NOPTS; i++) {
		char left[40];
		snprintf(left, sizeof(left), "%s%s%s", opts[i].lng, opts[i].arg ? " " : "",
			 opts[i].arg ? opts[i].arg : "");
		fprintf(f, "  %-22s %s\n", left, opts[i].help);
	}
	fputs("\nparsers:\n", f);
	for (size_t i = 0; rm_parsers[i]; i++)
		fprintf(f, "  %-22s %s\n", rm_parsers[i]->name, rm_parsers[i]->description);
	fputs("\nCSV rows: metric,value,unit,step,aggregate (last, mean or summary); the primary\n"
	      "figure is the row whose metric is 'performance' (its unit column names the\n"
	      "figure). Exit status: 0 when a performance figure was found, 1 when none was\n"
	      "(the reason is printed on stderr), 2 on a usage error, 5 when the file cannot be\n"
	      "read.\n",
	      f);
}

/* Matches argv[*i] against the table; handles "--opt value" and "--opt=value". */
static const struct opt *match_opt(char **argv, int argc, int *i, const char **val, rm_error *err)
{
	const char *a = argv[*i];

	for (size_t k = 0; k < NOPTS; k++) {
		size_t l = strlen(opts[k].lng);
		if (strncmp(a, opts[k].lng, l) || (a[l] && a[l] != '='))
			continue;
		if (!opts[k].arg) {
			if (a[l]) {
				rm_error_set(err, RM_ERR_USAGE, "'%s' takes no value", opts[k].lng);
				return NULL;
			}
			*val = NULL;
		} else if (a[l] == '=') {
			*val = a + l + 1;
		} else if (*i + 1 < argc) {
			*val = argv[++*i];
		} else {
			rm_error_set(err, RM_ERR_USAGE, "'%s' needs a value (%s)", opts[k].lng,
				     opts[k].arg);
			return NULL;
		}
		return &opts[k];
	}
	rm_error_set(err, RM_ERR_USAGE, "unknown option '%s' for parse (see --help)", a);
	return NULL;
}

/* Prints auto's reasoning: one row per candidate. */
static void explain(const rm_parser *p, FILE *f)
{
	rm_parser_candidate c[16];
	size_t n = rm_parser_explain(p, c, sizeof(c) / sizeof(c[0]));

	if (n == 0) {
		fprintf(f, "parse: parser '%s' was given, nothing to choose\n", p->ops->name);
		return;
	}
	fprintf(f, "%-12s %7s %6s  %s\n", "candidate", "score", "lines", "verdict");
	for (size_t i = 0; i < n && i < sizeof(c) / sizeof(c[0]); i++)
		fprintf(f, "%-12s %7ld %6ld  %s\n", c[i].name, c[i].score, c[i].lines, c[i].why);
}

int cmd_parse(int argc, char **argv, rm_error *err)
{
	const char *parser = "auto", *file = NULL;
	int format = RM_PARSE_CSV, want_explain = 0;
	rm_parser_config cfg = {RM_PARSER_WARMUP_DEFAULT};
	rm_parser p;
	rm_parse_result r = {0};
	const rm_parser_ops *eff;

	for (int i = 1; i < argc; i++) {
		const struct opt *o;
		const char *val = NULL;
		long w;

		if (!strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		}
		if (argv[i][0] != '-' || !strcmp(argv[i], "-")) {
			if (file)
				return rm_error_set(err, RM_ERR_USAGE,
						    "parse takes one LOGFILE ('%s' and '%s')", file,
						    argv[i]);
			file = argv[i];
			continue;
		}
		if (!(o = match_opt(argv, argc, &i, &val, err)))
			return -1;
		switch (o->id) {
		case OPT_PARSER:
			if (!rm_parser_find(val))
				return rm_error_set(err, RM_ERR_USAGE,
						    "unknown parser '%s' (see 'run_models parse "
						    "--help')",
						    val);
			parser = val;
			break;
		case OPT_FORMAT:
			if (!strcmp(val, "csv"))
				format = RM_PARSE_CSV;
			else if (!strcmp(val, "json"))
				format = RM_PARSE_JSON;
			else
				return rm_error_set(err, RM_ERR_USAGE,
						    "unknown format '%s' (csv or json)", val);
			break;
		case OPT_WARMUP:
			if (!strcmp(val, "auto")) {
				cfg.warmup = RM_PARSER_WARMUP_AUTO;
				break;
			}
			if (rm_parse_long(val, 0, 1000000000L, &w) < 0)
				return rm_error_set(err, RM_ERR_USAGE,
						    "--warmup needs 'auto' or a whole number >= 0, "
						    "not '%s'",
						    val);
			cfg.warmup = w;
			break;
		case OPT_EXPLAIN:
			want_explain = 1;
			break;
		case OPT_LIST:
			for (size_t k = 0; rm_parsers[k]; k++)
				printf("%s\n", rm_parsers[k]->name);
			return 0;
		case OPT_HELP:
			usage(stdout);
			return 0;
		}
	}
	if (!file)
		return rm_error_set(err, RM_ERR_USAGE, "parse needs a LOGFILE (see --help)");
	if (!strcmp(file, "-"))
		file = "/dev/stdin";
	if (rm_parser_start(&p, parser, &cfg) < 0)
		return rm_error_set(err, RM_ERR_USAGE, "unknown parser '%s'", parser);
	if (rm_parse_path(file, &p, &r, err) < 0) {
		rm_parser_stop(&p);
		return -1;
	}
	eff = rm_parser_effective(&p);
	if (format == RM_PARSE_JSON)
		rm_parse_result_write_json(&r, eff ? eff->name : "", stdout);
	else
		rm_parse_result_write_csv(&r, stdout);
	fflush(stdout);
	if (want_explain)
		explain(&p, stderr);
	else if (!strcmp(parser, "auto"))
		fprintf(stderr, "parse: auto chose parser '%s'\n", eff ? eff->name : "none");
	if (!r.has_performance)
		fprintf(stderr, "parse: no performance figure in '%s': %s\n", file,
			r.problem ? r.problem : "(no reason given)");
	int rc = r.has_performance ? 0 : 1;
	rm_parse_result_release(&r);
	rm_parser_stop(&p);
	return rc;
}
