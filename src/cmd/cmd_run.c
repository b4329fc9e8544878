/*
 * run_models [run] --tags TAG ...: build, run and record the selected models.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "options.h"
#include "rm/log.h"
#include "rm/runner.h"
#include "rm/util.h"

struct run_cli {
	struct opt_list tags;
	struct opt_list contexts;
	const char *output;
	const char *log_dir;
	const char *parser;
	double timeout;
	int live_output;
	int keep_alive;
	int keep_model_dir;
	int clean_docker_cache;
	int list;
	int quiet;
};

#define F(field) offsetof(struct run_cli, field)
static const struct opt run_options[] = {
    {"tags", 't', OPT_LIST, F(tags), "TAGS",
     "models to run: names, tags, 'all', scope/tag, name:key=value (repeatable, comma lists)"},
    {"additional-context", 0, OPT_LIST, F(contexts), "JSON|@FILE",
     "override the detected context (gpu_vendor, guest_os, docker_env_vars, ...)"},
    {"output", 'o', OPT_STRING, F(output), "FILE", "perf CSV to append to (default perf.csv)"},
    {"log-dir", 0, OPT_STRING, F(log_dir), "DIR",
     "where the .live.log/.build.log files go (default .)"},
    {"live-output", 'l', OPT_FLAG, F(live_output), NULL,
     "stream build and run output to the terminal"},
    {"timeout", 0, OPT_NUMBER, F(timeout), "SECONDS",
     "kill a run after this long (default: the model's timeout, else 7200; 0 = none)"},
    {"parser", 0, OPT_STRING, F(parser), "NAME",
     "log parser for every model (default: the model's)"},
    {"keep-alive", 0, OPT_FLAG, F(keep_alive), NULL, "do not remove the containers"},
    {"keep-model-dir", 0, OPT_FLAG, F(keep_model_dir), NULL,
     "copy the model dir out of the container into the log dir"},
    {"clean-docker-cache", 0, OPT_FLAG, F(clean_docker_cache), NULL,
     "build without the layer cache"},
    {"list", 0, OPT_FLAG, F(list), NULL, "print the selection (as 'run_models list') and stop"},
    {"quiet", 'q', OPT_FLAG, F(quiet), NULL, "only warnings and errors from the runner itself"},
    OPT_END,
};
#undef F

int cmd_run(int argc, char **argv, rm_error *err)
{
	struct run_cli cli = {.timeout = -1};
	struct opt_list pos = {0};
	rm_run_opts o = {0};
	size_t n_failed = 0;
	int interrupted = 0, rc, ret = -1;

	rc = opt_parse(run_options, &cli, argc, argv, &pos, err);
	if (rc != 0) {
		if (rc == 1) {
			opt_help(stdout, "usage: run_models [run] --tags TAG[,TAG...] [options]",
				 run_options);
			ret = RM_EXIT_OK;
		}
		goto out;
	}
	if (pos.n) {
		rm_error_set(err, RM_ERR_USAGE, "unexpected argument '%s' (tags go after --tags)",
			     pos.v[0]);
		goto out;
	}
	if (cli.list) {
		/* Same selection, printed by the list command. */
		ret = cmd_list(argc, argv, err);
		goto out;
	}
	if (!cli.tags.n) {
		rm_error_set(err, RM_ERR_USAGE,
			     "no models selected: give --tags (a model name, a tag, or 'all')");
		goto out;
	}
	if (cli.quiet)
		rm_log_set_level(0);
	o.root = ".";
	o.tags = cli.tags.v;
	o.n_tags = cli.tags.n;
	o.contexts = cli.contexts.v;
	o.n_contexts = cli.contexts.n;
	o.output = cli.output ? cli.output : "perf.csv";
	o.log_dir = cli.log_dir ? cli.log_dir : ".";
	o.parser = cli.parser;
	o.timeout = cli.timeout;
	o.live_output = cli.live_output;
	o.keep_alive = cli.keep_alive;
	o.keep_model_dir = cli.keep_model_dir;
	o.clean_docker_cache = cli.clean_docker_cache;
	o.sysfs_root = getenv("RM_SYSFS_ROOT");

	rm_runner_install_signal_handlers();
	if (rm_runner_run(&o, &n_failed, &interrupted, err) < 0) {
		if (interrupted) {
			fprintf(stderr, "run_models: %s; containers of this run removed\n",
				err->msg);
			ret = interrupted == 15 ? RM_EXIT_SIGTERM : RM_EXIT_SIGINT;
		}
		goto out;
	}
	if (n_failed)
		fprintf(stderr, "run_models: %zu run(s) failed; see the reason column of '%s'\n",
			n_failed, o.output);
	ret = n_failed ? RM_EXIT_MODEL_FAILED : RM_EXIT_OK;
out:
	opt_list_release(&cli.tags);
	opt_list_release(&cli.contexts);
	opt_list_release(&pos);
	return ret;
}
