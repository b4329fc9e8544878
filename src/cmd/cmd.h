/*
 * The command layer: one cmd_<name>() per subcommand, reached through the table in main.c.
 * A command returns the process exit code (>= 0), or -1 with err filled; main() prints the
 * error once and maps its kind to an exit code (docs/exit-codes.md).
 */
#ifndef RM_CMD_H
#define RM_CMD_H

#include <stddef.h>

#include "rm/util.h"
#include "rm/version.h"

/* Exit codes (docs/exit-codes.md). */
enum {
	RM_EXIT_OK = 0, /* every selected model succeeded */
	RM_EXIT_MODEL_FAILED =
	    1,			/* at least one model failed (rows say why); parse: nothing found */
	RM_EXIT_USAGE = 2,	/* bad command line */
	RM_EXIT_INPUT = 3,	/* bad models.json, context, Dockerfile, tag matching nothing */
	RM_EXIT_DOCKER = 4,	/* Docker engine unreachable or refusing */
	RM_EXIT_IO = 5,		/* local files (perf.csv, logs) */
	RM_EXIT_REGRESSION = 6, /* every model ran, a metric regressed (--fail-on-regression) */
	RM_EXIT_INTERNAL = 70,
	RM_EXIT_SIGHUP = 129,
	RM_EXIT_SIGINT = 130,
	RM_EXIT_SIGTERM = 143,
};

int cmd_run(int argc, char **argv, rm_error *err);
int cmd_list(int argc, char **argv, rm_error *err);
int cmd_parse(int argc, char **argv, rm_error *err);
int cmd_doctor(int argc, char **argv, rm_error *err);
int cmd_accept(int argc, char **argv, rm_error *err);
int cmd_report(int argc, char **argv, rm_error *err);
/* report compare (cmd_compare.c) */
int cmd_report_compare(int argc, char **argv, rm_error *err);
int cmd_export(int argc, char **argv, rm_error *err);
int cmd_suite(int argc, char **argv, rm_error *err);

/* The exit code of a finished run: an engine lost (4) outranks a failed model (1), which
 * outranks a regression (6). */
int rm_exit_code_for(size_t n_failed, size_t n_regressions, int engine_lost);
int cmd_build(int argc, char **argv, rm_error *err);
int cmd_node_run(int argc, char **argv, rm_error *err);
int cmd_completion(int argc, char **argv, rm_error *err);

struct cli;
struct rm_nightly_opts;
/* The CI outputs and the gate, as run and report ci share them (cmd_run.c). */
void nightly_outputs(const struct cli *cli, struct rm_nightly_opts *o);
/* The list command's output for an already parsed command line (run --list). */
int list_selection(const struct cli *cli, rm_error *err);

#endif
