/*
 * run_models [run] --tags TAG ...: build, run and record the selected models.
 * run_models run --suite FILE [--junit F ...]: a suite, or a run with CI outputs, through
 * rm_suite_run (one run id, run.json, JUnit, summary, report, export, archive, the gate).
 */
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "options.h"
#include "rm/util.h"
#include "rm/runner.h"
#include "rm/suite.h"

/* Checks the values the table cannot check and fills the runner's options. */
static int run_opts(const struct cli *cli, rm_run_opts *o, rm_error *err)
{
	if (!cli->tags.n && !cli->suite && !cli->manifest)
		return rm_error_set(
		    err, RM_ERR_USAGE,
		    "no models selected: give --tags (a model name, a tag, or 'all') or --suite");
	if (cli->tags.n && cli->suite)
		return rm_error_set(err, RM_ERR_USAGE,
				    "--suite selects the models: give --tags or --suite, not both");
	if (cli->shm_size &&
	    (rm_parse_size(cli->shm_size, &o->wl.shm_size) < 0 || o->wl.shm_size <= 0))
		return rm_error_set(err, RM_ERR_USAGE,
				    "--shm-size takes a size such as 64G, not '%s'", cli->shm_size);
	if (cli->repeat < 1)
		return rm_error_set(err, RM_ERR_USAGE, "--repeat takes a count >= 1");
	if (cli->retries < -1 || cli->retries > 100)
		return rm_error_set(err, RM_ERR_USAGE, "--retries takes a count from 0 to 100");
	if (cli->progress_interval <= 0)
		return rm_error_set(err, RM_ERR_USAGE, "--progress-interval takes seconds > 0");
	o->run_dynamic = cli_run_dynamic(cli);
	o->root = ".";
	o->tags = cli->tags.v;
	o->n_tags = cli->tags.n;
	o->contexts = cli->contexts.v;
	o->n_contexts = cli->contexts.n;
	o->output = cli->output ? cli->output : "perf.csv";
	o->log_dir = cli->log_dir ? cli->log_dir : ".";
	o->parser = cli->parser;
	o->wl.timeout = cli->timeout;
	o->live_output = cli->live_output;
	o->wl.keep_alive = cli->keep_alive;
	o->wl.allow_sensitive_mounts = cli->allow_sensitive_mounts;
	o->keep_model_dir = cli->keep_model_dir;
	o->clean_docker_cache = cli->clean_docker_cache;
	o->no_pull = cli->no_pull;
	o->build_timeout = cli->build_timeout > 0 ? cli->build_timeout : 0;
	o->sysfs_root = getenv("RM_SYSFS_ROOT");
	o->wl.tunableop = (rm_tunableop)cli->tunableop;
	o->wl.telemetry = (rm_telemetry_mode)cli->telemetry;
	o->engine = (rm_engine_kind)cli->engine;
	if (cli_warmup(cli, &o->warmup, err) < 0)
		return -1;
	o->dry_run = cli->dry_run;
	o->repeat = cli->repeat;
	o->retries = cli->retries < 0 ? 0 : cli->retries;
	o->retry_wait = cli->retry_wait < 0 ? 10 : cli->retry_wait;
	o->wl.preflight = (rm_preflight_mode)cli->preflight;
	o->score = cli->score == SCORE_MLPERF ? "mlperf" : NULL;
	o->progress = !cli->no_progress;
	o->progress_interval = cli->progress_interval;
	o->sys_env_details = cli->sys_env_details;
	o->context_files = cli->context_files.v;
	o->n_context_files = cli->context_files.n;
	o->skip_model_run = cli->skip_model_run;
	o->disable_skip_gpu_arch = cli->disable_skip_gpu_arch;
	o->data_config = cli->data_config;
	o->tools_config = cli->tools_config;
	o->force_mirror_local = cli->force_mirror_local;
	o->manifest = cli->manifest;
	return 0;
}

static void report_failures(size_t n_failed, int engine_lost, const char *output)
{
	if (n_failed)
		fprintf(stderr, "run_models: %zu run(s) failed; see the reason column of '%s'\n",
			n_failed, output);
	if (engine_lost)
		fprintf(stderr, "run_models: the Docker engine was lost during the run; check it "
				"(run_models doctor) and run again\n");
}

void nightly_outputs(const struct cli *cli, rm_nightly_opts *o)
{
	o->junit = cli->junit;
	o->summary_markdown = cli->summary_markdown;
	o->html = cli->html;
	o->archive = cli->archive;
	o->export_dbs = cli->export_dbs.v;
	o->n_export_dbs = cli->export_dbs.n;
	o->baseline = cli->baseline;
	o->fail_on_regression = cli->fail_on_regression;
	o->no_step_summary = cli->no_step_summary;
	o->references = cli->references;
	o->window = (size_t)cli->history_window;
}

int rm_exit_code_for(size_t n_failed, size_t n_regressions, int engine_lost)
{
	if (engine_lost)
		return RM_EXIT_DOCKER;
	if (n_failed)
		return RM_EXIT_MODEL_FAILED;
	return n_regressions ? RM_EXIT_REGRESSION : RM_EXIT_OK;
}

/* Whether the run is a suite or has CI outputs: then it goes through rm_suite_run. */
static int wants_ci(const struct cli *c)
{
	return c->suite || c->junit || c->summary_markdown || c->html || c->archive ||
	       c->export_dbs.n || c->baseline || c->fail_on_regression >= 0 || c->references ||
	       c->history_window;
}

/* The end of a dry run: how many models would fail, and the exit code a run would give. */
static int dry_run_end(size_t n_failed)
{
	if (!n_failed)
		return RM_EXIT_OK;
	fprintf(stderr,
		"run_models: dry run: %zu model(s) would be FAILURE (the lines \"would be "
		"FAILURE\" and \"would fail\" above say why)\n",
		n_failed);
	return RM_EXIT_MODEL_FAILED;
}

/* A suite, or --tags with CI outputs: one run id, run.json, the outputs at the end. */
static int run_ci(const struct cli *cli, const rm_run_opts *o, int repeat_given, rm_error *err)
{
	rm_suite_run_opts so = RM_SUITE_RUN_OPTS_INIT;
	rm_suite_run_result res;

	so.run = o;
	so.suite_file = cli->suite;
	so.repeat_given = repeat_given;
	so.retries_given = cli->retries >= 0;
	so.yes = cli->yes;
	nightly_outputs(cli, &so.ci);
	so.context_files = cli->context_files.v;
	so.n_context_files = cli->context_files.n;
	if (rm_suite_run(&so, &res, err) < 0) {
		if (!res.interrupted)
			return -1;
		fprintf(stderr, "run_models: %s\n", rm_error_text(err));
		return 128 + res.interrupted; /* 129 SIGHUP, 130 SIGINT, 143 SIGTERM */
	}
	if (o->dry_run)
		return dry_run_end(res.n_failed);
	report_failures(res.n_failed, res.engine_lost, o->output);
	if (res.ci.gate_enforced && res.ci.n_regressions)
		fprintf(stderr,
			"run_models: %zu regression(s) against the baseline; see the "
			"summary or the JUnit regression testcases\n",
			res.ci.n_regressions);
	return rm_exit_code_for(res.n_failed, res.ci.gate_enforced ? res.ci.n_regressions : 0,
				res.engine_lost);
}

static void list_push(struct opt_list *l, const char *s)
{
	l->v = rm_xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = s;
}

static int print_point(void *ctx, const size_t *values)
{
	const rm_suite_entry *e = ctx;
	char *name = rm_sweep_point_name(e->sweep, values, e->name);
	printf("#   %s\n", name);
	free(name);
	return 0;
}

/* run --suite FILE --list: each entry's selection, as the list command prints it, and the
 * points of its sweep. */
static int list_suite(struct cli *cli, rm_error *err)
{
	rm_suite s;
	int ret = RM_EXIT_OK;

	if (rm_suite_load(cli->suite, &s, err) < 0)
		return -1;
	if (rm_suite_check_size(&s, cli->yes, err) < 0) {
		rm_suite_release(&s);
		return -1;
	}
	for (size_t i = 0; i < s.n && ret == RM_EXIT_OK; i++) {
		const rm_suite_entry *e = &s.entries[i];
		struct opt_list tags = {0}, ctx = {0}, saved = cli->tags, saved_ctx = cli->contexts;
		char *json = json_dumps(e->context, JSON_COMPACT);
		for (size_t k = 0; k < e->n_tags + e->n_models; k++)
			list_push(&tags, k < e->n_tags ? e->tags[k] : e->models[k - e->n_tags]);
		/* The entry's context, then the command line's (as the run applies them). */
		list_push(&ctx, json);
		for (size_t k = 0; k < saved_ctx.n; k++)
			list_push(&ctx, saved_ctx.v[k]);
		printf("# suite %s, entry %zu of %zu: %s\n", s.name, i + 1, s.n, e->name);
		if (e->sweep) {
			printf("# %zu points of its sweep:\n", e->sweep->n_points);
			rm_sweep_each(e->sweep, print_point, (void *)e);
		}
		fflush(stdout);
		cli->tags = tags;
		cli->contexts = ctx;
		ret = list_selection(cli, err);
		cli->tags = saved;
		cli->contexts = saved_ctx;
		opt_list_release(&tags);
		opt_list_release(&ctx);
		free(json);
	}
	rm_suite_release(&s);
	return ret;
}

int cmd_run(int argc, char **argv, rm_error *err)
{
	struct cli cli;
	struct opt_list pos = {0};
	rm_run_opts o = RM_RUN_OPTS_INIT;
	rm_run_result res;
	int rc, md, repeat_given, quiet = 0, ret = -1;

	cli_init(&cli);
	cli.repeat = -1; /* to tell a given --repeat from the default (a suite's entries) */
	rc = opt_parse(CMD_RUN, &cli, argc, argv, &pos, &md, err);
	repeat_given = cli.repeat >= 0;
	if (!repeat_given)
		cli.repeat = 1;
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
		ret = cli.suite ? list_suite(&cli, err) : list_selection(&cli, err);
		goto out;
	}
	if (run_opts(&cli, &o, err) < 0)
		goto out;
	if (cli_quiet(&cli, &quiet, err) < 0)
		goto out;
	if (quiet)
		rm_log_set_level(0);
	rm_signals_install(0);
	if (wants_ci(&cli)) {
		ret = run_ci(&cli, &o, repeat_given, err);
		goto out;
	}
	if (rm_runner_run(&o, &res, err) < 0) {
		if (res.interrupted) {
			fprintf(stderr, "run_models: %s\n", rm_error_text(err));
			ret = 128 + res.interrupted; /* 129 SIGHUP, 130 SIGINT, 143 SIGTERM */
		}
		goto out;
	}
	if (o.dry_run) {
		ret = dry_run_end(res.n_failed);
		goto out;
	}
	report_failures(res.n_failed, res.engine_lost, o.output);
	ret = rm_exit_code_for(res.n_failed, 0, res.engine_lost);
out:
	cli_release(&cli);
	opt_list_release(&pos);
	return ret;
}
