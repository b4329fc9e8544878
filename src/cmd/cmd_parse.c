/*
 * run_models parse [--parser NAME] [--format csv|json] [--warmup N] LOGFILE
 *
 * Re-parses an existing log (a <model>.live.log, an output.txt, a published result file)
 * and prints what the parser finds. Exit 0 when something was found, 1 when nothing was.
 */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "options.h"
#include "rm/parse_file.h"
#include "rm/parser.h"
#include "rm/util.h"

static void usage(FILE *f, int markdown)
{
	opt_help(f, CMD_PARSE, "usage: run_models parse [options] LOGFILE", markdown);
	if (markdown)
		return;
	fputs("\nparsers:\n", f);
	for (size_t i = 0; rm_parsers[i]; i++)
		fprintf(f, "  %-22s %s\n", rm_parsers[i]->name, rm_parsers[i]->description);
	fputs("\nCSV rows: metric,value,unit,step,aggregate; the primary figure is the row whose\n"
	      "metric is 'performance' (its unit column names the figure). Exit status: 0 when\n"
	      "something was found, 1 when nothing was.\n",
	      f);
}

int cmd_parse(int argc, char **argv, rm_error *err)
{
	const char *parser = "auto", *file = NULL, *chosen = NULL;
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
	if (pos.n > 1) {
		rm_error_set(err, RM_ERR_USAGE, "parse takes one LOGFILE ('%s' and '%s')", pos.v[0],
			     pos.v[1]);
		goto out;
	}
	if (cli.parser && !rm_parser_find(cli.parser)) {
		rm_error_set(err, RM_ERR_USAGE,
			     "unknown parser '%s' (see 'run_models parse --help')", cli.parser);
		goto out;
	}
	if (cli.parser)
		parser = cli.parser;
	if (cli.format && !strcmp(cli.format, "json")) {
		format = RM_PARSE_JSON;
	} else if (cli.format && strcmp(cli.format, "csv")) {
		rm_error_set(err, RM_ERR_USAGE, "unknown format '%s' (csv or json)", cli.format);
		goto out;
	}
	if (cli.warmup >= 0)
		cfg.warmup = cli.warmup;
	if (!pos.n) {
		rm_error_set(err, RM_ERR_USAGE, "parse needs a LOGFILE (see --help)");
		goto out;
	}
	file = strcmp(pos.v[0], "-") ? pos.v[0] : "/dev/stdin";
	rc = rm_parse_file(file, parser, &cfg, stdout, format, &chosen, err);
	if (rc < 0)
		goto out;
	if (!strcmp(parser, "auto"))
		fprintf(stderr, "parse: auto chose parser '%s'\n", chosen ? chosen : "none");
	if (rc == 1)
		fprintf(stderr, "parse: nothing found in '%s'\n", file);
	fflush(stdout);
	ret = rc;
out:
	cli_release(&cli);
	opt_list_release(&pos);
	return ret;
}
