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

/* Checks the values the table cannot check and fills the runner's options. */
static int run_opts(const struct cli *cli, rm_run_opts *o, rm_error *err)
{
	if (!cli->tags.n && !cli->manifest)
		return rm_error_set(
		    err, RM_ERR_USAGE,
		    "no models selected: give --tags (a model name, a tag, or 'all')");
	if (cli->tunableop && strcmp(cli->tunableop, "on") && strcmp(cli->tunableop, "off"))
		return rm_error_set(err, RM_ERR_USAGE, "--tunableop takes 'on' or 'off', not '%s'",
				    cli->tunableop);
	if (cli->shm_size && (rm_parse_size(cli->shm_size, &o->shm_size) < 0 || o->shm_size <= 0))
		return rm_error_set(err, RM_ERR_USAGE,
				    "--shm-size takes a size such as 64G, not '%s'", cli->shm_size);
	if (cli->repeat < 1)
		return rm_error_set(err, RM_ERR_USAGE, "--repeat takes a count >= 1");
	if (cli->score && strcmp(cli->score, "mlperf"))
		return rm_error_set(err, RM_ERR_USAGE, "--score knows only 'mlperf', not '%s'",
				    cli->score);
	if (cli->progress_interval <= 0)
		return rm_error_set(err, RM_ERR_USAGE, "--progress-interval takes seconds > 0");
	o->root = ".";
	o->tags = cli->tags.v;
	o->n_tags = cli->tags.n;
	o->contexts = cli->contexts.v;
	o->n_contexts = cli->contexts.n;
	o->output = cli->output ? cli->output : "perf.csv";
	o->log_dir = cli->log_dir ? cli->log_dir : ".";
	o->parser = cli->parser;
	o->timeout = cli->timeout;
	o->live_output = cli->live_output;
	o->keep_alive = cli->keep_alive;
	o->keep_model_dir = cli->keep_model_dir;
	o->clean_docker_cache = cli->clean_docker_cache;
	o->sysfs_root = getenv("RM_SYSFS_ROOT");
	o->tunableop = cli->tunableop;
	if (cli_warmup(cli, &o->warmup, err) < 0)
		return -1;
	o->dry_run = cli->dry_run;
	o->repeat = cli->repeat;
	o->score = cli->score;
	o->progress = !cli->no_progress;
	o->progress_interval = cli->progress_interval;
	o->sys_env_details = cli->sys_env_details;
	o->context_files = cli->context_files.v;
	o->n_context_files = cli->context_files.n;
	o->manifest = cli->manifest;
	return 0;
}

int cmd_run(int argc, char **argv, rm_error *err)
{
	struct cli cli;
	struct opt_list pos = {0};
	rm_run_opts o = {0};
	rm_run_result res;
	int rc, md, ret = -1;

	cli_init(&cli);
	rc = opt_parse(CMD_RUN, &cli, argc, argv, &pos, &md, err);
	if (rc != 0) {
		if (rc == 1) {
			opt_help(stdout, CMD_RUN,
				 "usage: run_models [run] --tags TAG[,TAG...] [options]", md);
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
		ret = list_selection(&cli, err);
		goto out;
	}
	if (run_opts(&cli, &o, err) < 0)
		goto out;
	if (cli.quiet)
		rm_log_set_level(0);
	rm_runner_install_signal_handlers();
	if (rm_runner_run(&o, &res, err) < 0) {
		if (res.interrupted) {
			fprintf(stderr, "run_models: %s\n", err->msg);
			ret = 128 + res.interrupted; /* 129 SIGHUP, 130 SIGINT, 143 SIGTERM */
		}
		goto out;
	}
	if (res.n_failed)
		fprintf(stderr, "run_models: %zu run(s) failed; see the reason column of '%s'\n",
			res.n_failed, o.output);
	if (res.engine_lost)
		fprintf(stderr, "run_models: the Docker engine was lost during the run; check it "
				"(run_models doctor) and run again\n");
	ret = res.engine_lost ? RM_EXIT_DOCKER : res.n_failed ? RM_EXIT_MODEL_FAILED : RM_EXIT_OK;
out:
	cli_release(&cli);
	opt_list_release(&pos);
	return ret;
}
