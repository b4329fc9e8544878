/*
 * run_models: build, run and measure the workloads of a MAD-style models.json through the
 * Docker Engine API. This file only dispatches; each subcommand lives in cmd_<name>.c.
 */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "options.h"
#include "rm/util.h"

struct cmd_entry {
	const char *name;
	int (*fn)(int argc, char **argv, rm_error *err);
	const char *summary; /* NULL: hidden from the usage */
};

static const struct cmd_entry commands[] = {
    {"run", cmd_run, "build and run the selected models, record perf.csv (the default)"},
    {"list", cmd_list, "print the selected models and their Dockerfiles without running"},
    {"discover", cmd_list, "same as list"},
    {"parse", cmd_parse, "re-parse an existing log with a workload parser"},
    {"doctor", cmd_doctor, "check this host before benchmarking"},
    {"report", cmd_report, "HTML trend report; CI outputs (JUnit, summary, gate) from perf.csv"},
    {"export", cmd_export, "export perf.csv results to SQLite or PostgreSQL"},
    {"accept", cmd_accept, "record that a model's change is intended (the gate stops flagging it)"},
    {"suite", cmd_suite, "check a suite file and print its resolved entries"},
    {"build", cmd_build, "build (and push) the selected models' images, write a build manifest"},
    {"completion", cmd_completion, "print the bash completion script (installed with run_models)"},
    {"node-run", cmd_node_run, NULL},
};

static void main_usage(FILE *f)
{
	size_t width = opt_help_width(f);

	fputs("usage: run_models [run] --tags TAG[,TAG...] [options]\n"
	      "       run_models <command> [options]\n\ncommands:\n",
	      f);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (commands[i].summary) {
			fprintf(f, "  %-11s ", commands[i].name);
			opt_wrap(f, commands[i].summary, 14, 14, width);
		}
	fputs("\n'run_models <command> --help' lists each command's options; 'man run_models'\n"
	      "has them all.\n",
	      f);
}

static int exit_code_for(int kind)
{
	switch (kind) {
	case RM_ERR_USAGE:
		return RM_EXIT_USAGE;
	case RM_ERR_INPUT:
		return RM_EXIT_INPUT;
	case RM_ERR_DOCKER:
		return RM_EXIT_DOCKER;
	case RM_ERR_IO:
		return RM_EXIT_IO;
	default:
		return RM_EXIT_INTERNAL;
	}
}

int main(int argc, char **argv)
{
	rm_error err = RM_ERROR_INIT;
	const struct cmd_entry *cmd = &commands[0];
	int rc;

	if (argc > 1 &&
	    (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))) {
		main_usage(stdout);
		return RM_EXIT_OK;
	}
	if (argc > 1 && !strcmp(argv[1], "--version")) {
		puts("run_models " RM_VERSION);
		return RM_EXIT_OK;
	}
	if (argc > 1 && !strcmp(argv[1], "--help=man")) {
		opt_man(stdout);
		return RM_EXIT_OK;
	}
	if (argc > 1 && argv[1][0] != '-') {
		cmd = NULL;
		for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
			if (!strcmp(argv[1], commands[i].name))
				cmd = &commands[i];
		if (!cmd) {
			fprintf(stderr, "run_models: error: unknown command '%s'\n\n", argv[1]);
			main_usage(stderr);
			return RM_EXIT_USAGE;
		}
		argc--;
		argv++;
	}
	rc = cmd->fn(argc, argv, &err);
	if (rc < 0) {
		fprintf(stderr, "run_models: %serror:%s %s\n", rm_color_start(stderr, RM_COLOR_BAD),
			rm_color_end(stderr, RM_COLOR_BAD),
			err.msg[0] ? rm_error_text(&err) : "unknown error");
		return exit_code_for(err.kind);
	}
	return rc;
}
