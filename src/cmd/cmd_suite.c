/*
 * run_models suite FILE.yaml: checks a suite file (and what it includes) and prints its
 * entries as `run --suite` will run them, as JSON. Exit 0 when valid, 3 when not.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "options.h"
#include "rm/suite.h"
#include "rm/util.h"

int cmd_suite(int argc, char **argv, rm_error *err)
{
	struct cli cli;
	struct opt_list pos = {0};
	rm_suite s;
	json_t *j;
	char *text;
	int md, rc, yes;

	cli_init(&cli);
	rc = opt_parse(CMD_SUITE, &cli, argc, argv, &pos, &md, err);
	yes = cli.yes;
	cli_release(&cli);
	if (rc != 0) {
		if (rc == 1)
			opt_help(stdout, CMD_SUITE,
				 "usage: run_models suite FILE.yaml\n\nChecks a suite file and "
				 "prints its resolved entries (defaults and includes applied, each "
				 "sweep's\npoints with their parameters) as JSON.",
				 md);
		opt_list_release(&pos);
		return rc == 1 ? RM_EXIT_OK : -1;
	}
	if (pos.n != 1) {
		opt_list_release(&pos);
		return rm_error_set(err, RM_ERR_USAGE, "suite takes one FILE (see --help)");
	}
	rc = rm_suite_load(pos.v[0], &s, err);
	opt_list_release(&pos);
	if (rc < 0)
		return -1;
	if (rm_suite_check_size(&s, yes, err) < 0) {
		rm_suite_release(&s);
		return -1;
	}
	j = rm_suite_json(&s);
	text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	puts(text ? text : "null");
	free(text);
	json_decref(j);
	rm_suite_release(&s);
	return RM_EXIT_OK;
}
