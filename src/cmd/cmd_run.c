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
	const char *tunableop;
	const char *shm_size;
	int dry_run;
	long repeat;
	const char *score;
	int no_progress;
	double progress_interval;
	int sys_env_details;
	struct opt_list context_files;
	long warmup;
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
    {"tunableop", 0, OPT_STRING, F(tunableop), "on|off",
     "PyTorch TunableOp: on tunes GEMMs and keeps the results in <log dir>/tunableop/<model>/ "
     "for later runs; off disables it (default: the model's setting)"},
    {"additional-context-file", 0, OPT_LIST, F(context_files), "FILE",
     "context as a JSON or YAML file, applied before --additional-context"},
    {"shm-size", 0, OPT_STRING, F(shm_size), "SIZE",
     "/dev/shm of the containers, e.g. 64G (a model's own --shm-size wins)"},
    {"dry-run", 'n', OPT_FLAG, F(dry_run), NULL,
     "print the Dockerfiles, build args and docker build/run commands; contact no engine"},
    {"repeat", 0, OPT_INT, F(repeat), "N", "run each model N times on one build, with a summary"},
    {"score", 0, OPT_STRING, F(score), "mlperf",
     "with --repeat: score time to train by MLPerf's rule (drop fastest and slowest)"},
    {"no-progress", 0, OPT_FLAG, F(no_progress), NULL, "no status line / progress lines"},
    {"progress-interval", 0, OPT_NUMBER, F(progress_interval), "SECONDS",
     "seconds between progress lines when stderr is not a terminal (default 30)"},
    {"sys-env-details", 0, OPT_FLAG, F(sys_env_details), NULL,
     "store the 'run_models doctor' findings beside the logs of the run"},
    {"warmup", 0, OPT_INT, F(warmup), "N",
     "steps left out of the steady-state means of step series (default 1)"},
    {"list", 0, OPT_FLAG, F(list), NULL, "print the selection (as 'run_models list') and stop"},
    {"quiet", 'q', OPT_FLAG, F(quiet), NULL, "only warnings and errors from the runner itself"},
    OPT_END,
};
#undef F

int cmd_run(int argc, char **argv, rm_error *err)
{
	struct run_cli cli = {.timeout = -1, .repeat = 1, .progress_interval = 30, .warmup = -1};
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
	if (cli.tunableop && strcmp(cli.tunableop, "on") && strcmp(cli.tunableop, "off")) {
		rm_error_set(err, RM_ERR_USAGE, "--tunableop takes 'on' or 'off', not '%s'",
			     cli.tunableop);
		goto out;
	}
	if (cli.shm_size && (rm_parse_size(cli.shm_size, &o.shm_size) < 0 || o.shm_size <= 0)) {
		rm_error_set(err, RM_ERR_USAGE, "--shm-size takes a size such as 64G, not '%s'",
			     cli.shm_size);
		goto out;
	}
	if (cli.repeat < 1) {
		rm_error_set(err, RM_ERR_USAGE, "--repeat takes a count >= 1");
		goto out;
	}
	if (cli.score && strcmp(cli.score, "mlperf")) {
		rm_error_set(err, RM_ERR_USAGE, "--score knows only 'mlperf', not '%s'", cli.score);
		goto out;
	}
	if (cli.progress_interval <= 0) {
		rm_error_set(err, RM_ERR_USAGE, "--progress-interval takes seconds > 0");
		goto out;
	}
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
	o.tunableop = cli.tunableop;
	o.warmup = cli.warmup;
	o.dry_run = cli.dry_run;
	o.repeat = cli.repeat;
	o.score = cli.score;
	o.progress = !cli.no_progress;
	o.progress_interval = cli.progress_interval;
	o.sys_env_details = cli.sys_env_details;
	o.context_files = cli.context_files.v;
	o.n_context_files = cli.context_files.n;

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
	opt_list_release(&cli.context_files);
	opt_list_release(&pos);
	return ret;
}
