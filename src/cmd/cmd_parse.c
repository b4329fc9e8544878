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
#include "options.h"
#include "rm/parser.h"
#include "rm/util.h"

static void usage(FILE *f, int markdown)
{
	opt_help(f, CMD_PARSE, "usage: run_models parse [options] LOGFILE", markdown);
	if (markdown)
		return;
	fputs("\nparsers:\n", f);
	for (size_t i = 0; rm_parsers[i]; i++) {
		fprintf(f, "  %-13s ", rm_parsers[i]->name);
		opt_wrap(f, rm_parsers[i]->description, 16, 16, opt_help_width(f));
	}
	fputs("\nCSV rows: metric,value,unit,step,aggregate (last, mean or summary); the primary\n"
	      "figure is the row whose metric is 'performance' (its unit column names the\n"
	      "figure). Exit status: 0 when a performance figure was found, 1 when none was\n"
	      "(the reason is printed on stderr), 2 on a usage error, 5 when the file cannot be\n"
	      "read.\n",
	      f);
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

/* The options the table cannot check: parser, format, warm-up. */
static int parse_opts(const struct cli *cli, const char **parser, int *format,
		      rm_parser_config *cfg, rm_error *err)
{
	if (cli->parser && !rm_parser_find(cli->parser))
		return rm_error_set(err, RM_ERR_USAGE,
				    "unknown parser '%s' (see 'run_models parse --help')",
				    cli->parser);
	if (cli->parser)
		*parser = cli->parser;
	if (cli->format == FORMAT_JSON)
		*format = RM_PARSE_JSON;
	return cli_warmup(cli, &cfg->warmup, err);
}

/* Parses file with parser and prints what it found; returns the exit code. */
static int parse_one(const char *file, const char *parser, int format, int want_explain,
		     const rm_parser_config *cfg, rm_error *err)
{
	rm_parser p;
	rm_parse_result r = {0};
	const rm_parser_ops *eff;
	int rc;

	if (rm_parser_start(&p, parser, cfg) < 0)
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
	rc = r.has_performance ? 0 : 1;
	rm_parse_result_release(&r);
	rm_parser_stop(&p);
	return rc;
}

int cmd_parse(int argc, char **argv, rm_error *err)
{
	const char *parser = "auto";
	int format = RM_PARSE_CSV, rc, md, ret = -1;
	rm_parser_config cfg = {RM_PARSER_WARMUP_DEFAULT};
	struct cli cli;
	struct opt_list pos = {0};

	cli_init(&cli);
	rc = opt_parse(CMD_PARSE, &cli, argc, argv, &pos, &md, err);
	if (rc != 0) {
		if (rc == 1) {
			usage(stdout, md);
			ret = 0;
		}
		goto out;
	}
	if (cli.list_parsers) {
		for (size_t k = 0; rm_parsers[k]; k++)
			printf("%s\n", rm_parsers[k]->name);
		ret = 0;
		goto out;
	}
	if (pos.n > 1) {
		rm_error_set(err, RM_ERR_USAGE, "parse takes one LOGFILE ('%s' and '%s')", pos.v[0],
			     pos.v[1]);
		goto out;
	}
	if (parse_opts(&cli, &parser, &format, &cfg, err) < 0)
		goto out;
	if (!pos.n) {
		rm_error_set(err, RM_ERR_USAGE, "parse needs a LOGFILE (see --help)");
		goto out;
	}
	ret = parse_one(strcmp(pos.v[0], "-") ? pos.v[0] : "/dev/stdin", parser, format,
			cli.explain, &cfg, err);
out:
	cli_release(&cli);
	opt_list_release(&pos);
	return ret;
}
