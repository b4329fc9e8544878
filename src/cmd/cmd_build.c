/*
 * run_models build --tags TAG [--registry HOST:PORT] [--manifest FILE]: builds the images of
 * the selection once, pushes them to the registry under their fingerprint, and writes the
 * build manifest that `run_models run --manifest` (here or on SLURM nodes) runs from.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "options.h"
#include "rm/runner.h"
#include "rm/util.h"

#define DEFAULT_MANIFEST "build_manifest.json" /* madengine's default name */

static int build_opts(const struct cli *cli, rm_run_opts *o, rm_error *err)
{
	if (!cli->tags.n)
		return rm_error_set(
		    err, RM_ERR_USAGE,
		    "no models selected: give --tags (a model name, a tag, or 'all')");
	if (cli->registry && (!*cli->registry || strstr(cli->registry, "://") ||
			      rm_ends_with(cli->registry, "/") || strpbrk(cli->registry, " \t@")))
		return rm_error_set(err, RM_ERR_USAGE,
				    "--registry takes HOST[:PORT] (optionally with a path, e.g. "
				    "registry.example.com:5000/team), not '%s'",
				    cli->registry);
	if (cli->progress_interval <= 0)
		return rm_error_set(err, RM_ERR_USAGE, "--progress-interval takes seconds > 0");
	o->root = ".";
	o->tags = cli->tags.v;
	o->n_tags = cli->tags.n;
	o->contexts = cli->contexts.v;
	o->n_contexts = cli->contexts.n;
	o->context_files = cli->context_files.v;
	o->n_context_files = cli->context_files.n;
	o->log_dir = cli->log_dir ? cli->log_dir : ".";
	o->live_output = cli->live_output;
	o->clean_docker_cache = cli->clean_docker_cache;
	o->no_pull = cli->no_pull;
	o->build_timeout = cli->build_timeout > 0 ? cli->build_timeout : 0;
	o->sysfs_root = getenv("RM_SYSFS_ROOT");
	o->progress = !cli->no_progress;
	o->progress_interval = cli->progress_interval;
	o->registry = cli->registry;
	o->manifest = cli->manifest ? cli->manifest : DEFAULT_MANIFEST;
	o->repeat = 1;
	return 0;
}

int cmd_build(int argc, char **argv, rm_error *err)
{
	struct cli cli;
	struct opt_list pos = {0};
	rm_run_opts o = RM_RUN_OPTS_INIT;
	rm_build_result res;
	int rc, md, quiet = 0, ret = -1;

	cli_init(&cli);
	rc = opt_parse(CMD_BUILD, &cli, argc, argv, &pos, &md, err);
	if (rc != 0) {
		if (rc == 1) {
			opt_help(
			    stdout, CMD_BUILD,
			    "usage: run_models build --tags TAG[,TAG...] [--registry HOST:PORT] "
			    "[--manifest FILE] [options]",
			    md);
			ret = RM_EXIT_OK;
		}
		goto out;
	}
	if (pos.n) {
		rm_error_set(err, RM_ERR_USAGE, "unexpected argument '%s' (tags go after --tags)",
			     pos.v[0]);
		goto out;
	}
	if (build_opts(&cli, &o, err) < 0)
		goto out;
	if (cli_quiet(&cli, &quiet, err) < 0)
		goto out;
	if (quiet)
		rm_log_set_level(0);
	rm_signals_install(0);
	if (rm_runner_build(&o, &res, err) < 0) {
		if (res.interrupted) {
			fprintf(stderr, "run_models: %s\n", rm_error_text(err));
			ret = 128 + res.interrupted;
		}
		goto out;
	}
	if (res.n_failed)
		fprintf(stderr, "run_models: %zu image(s) failed; the manifest '%s' says why\n",
			res.n_failed, o.manifest);
	ret = res.n_failed ? RM_EXIT_MODEL_FAILED : RM_EXIT_OK;
out:
	cli_release(&cli);
	opt_list_release(&pos);
	return ret;
}
