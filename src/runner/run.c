/*
 * The run: load the registry, select, detect the context, open the launcher, run each
 * selected model (model.c), and on the way out remove what a failure or a signal left.
 * Every failure of a model becomes a FAILURE row with its reason; only a failure to start
 * at all (no registry, no selection, unwritable perf.csv) ends the run early.
 */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "rm/doctor.h"
#include "rm/launcher.h"
#include "rm/tools.h"
#include "rm/util.h"
#include "rm/report.h"

extern char **environ;

/* The run id names containers and rows: time, pid and randomness keep two runners on one
 * host apart. */
void rm_run_id_new(char *out, size_t size)
{
	unsigned rnd = 0;
	char ts[32];
	time_t t = time(NULL);
	struct tm tm;
	FILE *ur = fopen("/dev/urandom", "r");

	if (!ur || fread(&rnd, sizeof(rnd), 1, ur) != 1)
		rnd = (unsigned)getpid() ^ (unsigned)time(NULL);
	if (ur)
		fclose(ur);
	gmtime_r(&t, &tm);
	strftime(ts, sizeof(ts), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(out, size, "%s-%ld-%04x", ts, (long)getpid(), rnd & 0xffff);
}

/* A secret of a few characters is masked wherever those characters appear in the output,
 * numbers and words included: say so, since the logs will look mangled. */
void rm_runner__warn_short_secrets(void)
{
	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '='), *p;
		if (!eq || !memmem(*e, (size_t)(eq - *e), "MAD_SECRETS", 11))
			continue;
		for (p = eq + 1; *p;) {
			size_t len = strcspn(p, "\n");
			if (len && len < 6) {
				rm_warn(
				    "%.*s holds a value (or a line) of fewer than 6 characters: "
				    "it is masked as *** wherever it appears in logs and CSVs, "
				    "which may mangle them; use a longer secret",
				    (int)(eq - *e), *e);
				break;
			}
			p += len;
			p += *p == '\n';
		}
	}
}

/* Context keys nobody reads are warned about (k8s refused): known are run_models' own, the
 * launchers', the tools' and those a CONTEXT line of a selected model's Dockerfiles names. */
static int check_context_keys(struct run *r, rm_error *err)
{
	json_t *launchers = rm_launcher_deployment(&r->ctx), *v;
	char **known = rm_xcalloc(1, sizeof(*known)), **also = rm_xcalloc(1, sizeof(*also));
	size_t n_known = 0, n_also = 0;
	const char *key;
	int ret;

	json_object_foreach (launchers, key, v)
		known = rm_strv_push(known, &n_known, key);
	for (const char *const *k = rm_tools_context_keys; *k; k++)
		known = rm_strv_push(known, &n_known, *k);
	for (size_t i = 0; i < r->sel.n; i++) {
		rm_dockerfile *dfs = NULL;
		size_t n = 0;
		rm_error derr = RM_ERROR_INIT;

		rm_dockerfiles_select(r->sel.items[i].model->dockerfile, &r->ctx, &dfs, &n, &derr);
		for (size_t k = 0; k < n; k++)
			json_object_foreach (dfs[k].context_req, key, v)
				also = rm_strv_push(also, &n_also, key);
		rm_dockerfiles_free(dfs, n);
	}
	ret = rm_context_check_keys(&r->ctx, (const char *const *)known, (const char *const *)also,
				    err);
	rm_strv_free(known);
	rm_strv_free(also);
	json_decref(launchers);
	return ret;
}

/* The context: detected (with the folder's ctx_test), then --additional-context-file, then
 * --additional-context; keys nobody reads are named (the selection must be made). */
int rm_runner__load_context(struct run *r, rm_error *err)
{
	const rm_run_opts *o = r->o;

	if (rm_context_detect(&r->ctx, o->sysfs_root ? o->sysfs_root : "/sys", 1, err) < 0 ||
	    rm_context_ctx_test(&r->ctx, o->root, err) < 0)
		return -1;
	for (size_t i = 0; i < o->n_context_files; i++)
		if (rm_context_apply_file(&r->ctx, o->context_files[i], err) < 0)
			return -1;
	for (size_t i = 0; i < o->n_contexts; i++)
		if (rm_context_apply(&r->ctx, o->contexts[i], "--additional-context", err) < 0)
			return -1;
	r->ctx.engine = o->engine;
	rm_context_host_devices(&r->ctx);
	if (r->ctx.no_fuse && r->ctx.gpu_vendor &&
	    (!strcmp(r->ctx.gpu_vendor, "AMD") || !strcmp(r->ctx.gpu_vendor, "NVIDIA")))
		rm_warn(
		    "this host has no /dev/fuse: the runs leave madengine's '--device /dev/fuse' "
		    "out (a model that mounts FUSE file systems inside its container needs it: "
		    "'run_models doctor' checks it)");
	return check_context_keys(r, err);
}

/* --sys-env-details: the doctor's findings beside the run's logs. */
static void write_sys_env(struct run *r)
{
	rm_doctor_opts dopt = RM_DOCTOR_OPTS_INIT;
	char *path = rm_xasprintf("%s/%s.sys_env_details.txt", r->o->log_dir, r->run_id);
	rm_error err = RM_ERROR_INIT;

	if (r->o->sysfs_root)
		dopt.sysfs_root = r->o->sysfs_root;
	dopt.docker_host = r->o->docker_host;
	dopt.work_dir = r->o->log_dir;
	dopt.backends = rm_launcher_probe_all;
	if (rm_doctor_write(&dopt, path, &err) < 0)
		rm_warn("%s", rm_error_text(&err));
	else
		rm_info("system details in '%s'", path);
	free(path);
}

/* The launcher configuration of the run. */
static rm_launcher_config launcher_config(const struct run *r)
{
	const rm_run_opts *o = r->o;
	rm_launcher_config lc = {.docker_host = o->docker_host,
				 .ctx = &r->ctx,
				 .run_id = r->run_id,
				 .dry_run = o->dry_run,
				 .context_files = o->context_files,
				 .n_context_files = o->n_context_files,
				 .contexts = o->contexts,
				 .n_contexts = o->n_contexts,
				 .root = o->root,
				 .log_dir = o->log_dir};
	return lc;
}

rm_launcher *rm_runner__launcher(struct run *r, const rm_workload *w, rm_error *err)
{
	const rm_dist_launcher *l = rm_workload_dist_launcher(w);
	rm_launcher_config lc;

	if (r->launcher.ops->batch_host || !l || l->start != RM_DIST_SCRIPT)
		return &r->launcher;
	if (!r->cards.ops) {
		lc = launcher_config(r);
		if (rm_launcher_open_batch_host(&r->cards, &lc, err) < 0) {
			rm_error_wrap(err, "model '%s'", w->model_name);
			return NULL;
		}
	}
	return &r->cards;
}

static void dry_run(struct run *r, rm_error *err)
{
	printf("dry run %s: %zu model(s); context: vendor %s, %ld GPU(s), arch %s; %s\n", r->run_id,
	       r->sel.n, r->ctx.gpu_vendor ? r->ctx.gpu_vendor : "none", r->ctx.n_gpus,
	       r->ctx.gpu_arch ? r->ctx.gpu_arch : "none",
	       r->launcher.ops->where(r->launcher.state));
	for (size_t i = 0; i < r->sel.n; i++)
		rm_runner__run_model(r, &r->sel.items[i], err);
}

/* The label sweep costs a request: only when a removal failed or a signal came. Returns
 * -1 when something of the run may be left (the message says what to do). */
static int sweep(struct run *r)
{
	rm_error err = RM_ERROR_INIT;

	if (!((!r->o->wl.keep_alive && r->unremoved) || rm_signal_received()) || !r->jobs_started)
		return 0; /* nothing to sweep: no workload was ever started */
	if (r->launcher.ops->sweep(r->launcher.state, &err) == 0 &&
	    (!r->cards.ops || r->cards.ops->sweep(r->cards.state, &err) == 0))
		return 0;
	rm_warn("%s",
		rm_error_text(&err)); /* the launcher says what is left and how to remove it */
	return -1;
}

/* What runs whose runner is gone (kill -9, a crash) left on this host. */
static void reap(struct run *r)
{
	rm_error err = RM_ERROR_INIT;
	size_t n = 0;

	if (r->launcher.ops->reap(r->launcher.state, &n, &err) < 0 && !rm_signal_received())
		rm_warn("%s", rm_error_text(&err));
	else if (n)
		rm_info("removed %zu leftover container(s) of runs whose runner is gone", n);
}

/* Where the results go must be usable before anything runs: a benchmark's result must
 * never be lost at the end for want of a folder or because of another tool's perf.csv. */
static int check_outputs(struct run *r, rm_error *err)
{
	if (rm_mkdirs(r->o->log_dir, err) < 0)
		return rm_error_wrap(err, "--log-dir");
	if (access(r->o->log_dir, W_OK) != 0)
		return rm_error_sys(err, RM_ERR_IO, errno, "--log-dir: cannot write in '%s'",
				    r->o->log_dir);
	if (rm_perf_check(r->o->output, err) < 0)
		return -1;
	const char **names = rm_xcalloc(r->sel.n + 1, sizeof(*names));
	for (size_t i = 0; i < r->sel.n; i++)
		names[i] = r->sel.items[i].model->name;
	int rc = rm_runner_check_outputs(r->o, names, r->sel.n, r->o->repeat, NULL, 0, err);
	free(names);
	return rc;
}

static int run_all(struct run *r, rm_error *err)
{
	const rm_run_opts *o = r->o;
	rm_launcher_config lc = launcher_config(r);
	int ret = 0;

	if (!o->dry_run && check_outputs(r, err) < 0)
		return -1;
	if (rm_launcher_open(&r->launcher, &lc, err) < 0)
		return -1;
	/* What the containers are rendered for: the engine the launcher found. */
	rm_launcher_engine_facts(&r->launcher, &r->ctx);
	r->batching = r->launcher.ops->submit_all && !o->dry_run;
	if (o->dry_run) {
		dry_run(r, err);
		return 0;
	}
	r->git_commit = rm_git_commit(o->root);
	rm_info("run %s: %zu model(s), %s", r->run_id, r->sel.n,
		r->launcher.ops->where(r->launcher.state));
	reap(r);
	if (rm_runner__watchdog_start(r) < 0)
		rm_warn_sys(errno,
			    "cannot start the watchdog (if this runner is killed with SIGKILL, the "
			    "next run removes its containers)");
	/* After the watchdog's fork: a fork keeps the pipes of the thread's nvidia-smi open,
	 * and their reader would wait for the watchdog's end. */
	rm_runner__provenance_start(r);
	if (o->sys_env_details)
		write_sys_env(r);
	for (size_t i = 0; i < r->sel.n && !rm_signal_received(); i++) {
		if (rm_runner__run_model(r, &r->sel.items[i], err) < 0 && !rm_signal_received()) {
			ret = -1; /* perf.csv could not be written */
			break;
		}
	}
	if (r->batching && ret == 0 && rm_runner__run_queue(r, err) < 0 && !rm_signal_received())
		ret = -1;
	rm_runner__provenance_finish(r);
	r->swept = sweep(r) == 0;
	rm_runner__watchdog_done(r);
	return ret;
}

int rm_runner_run(const rm_run_opts *o, rm_run_result *res, rm_error *err)
{
	struct run r;
	rm_registry_opts ropts = RM_REGISTRY_OPTS_INIT;
	int ret = -1;

	memset(&r, 0, sizeof(r));
	memset(res, 0, sizeof(*res));
	ropts.run_dynamic = o->run_dynamic;
	r.o = o;
	if (o->run_id)
		snprintf(r.run_id, sizeof(r.run_id), "%s", o->run_id);
	else
		rm_run_id_new(r.run_id, sizeof(r.run_id));
	snprintf(res->run_id, sizeof(res->run_id), "%s", r.run_id);
	if (gethostname(r.machine, sizeof(r.machine)) != 0)
		r.machine[0] = '\0';
	r.machine[sizeof(r.machine) - 1] = '\0';
	r.secrets = rm_secrets_from_env(environ, &r.n_secrets);
	rm_runner__warn_short_secrets();
	rm_mask_init(&r.mask, (const char *const *)r.secrets, r.n_secrets);
	rm_runner__outcome_set_mask(&r.mask);
	rm_interrupt_set(rm_signal_cancelled, NULL);
	if (o->progress && !o->dry_run)
		r.progress_mode = isatty(STDERR_FILENO) && !o->live_output ? 1 : 2;
	rm_log_set_before(rm_runner__progress_clear);
	if (!o->dry_run)
		rm_runner__summary_init(&r);
	rm_runner__point_names(&r);

	if (rm_registry_load_opts(&r.reg, o->root, &ropts, err) < 0 ||
	    (o->manifest && rm_build_manifest_load(&r.man, o->manifest, err) < 0))
		goto out;
	if (o->manifest && !o->n_tags ? rm_runner__select_from_manifest(&r, err) < 0
				      : rm_select(&r.reg, o->tags, o->n_tags, &r.sel, err) < 0)
		goto out;
	if (rm_runner__load_context(&r, err) < 0 || rm_runner__data_load(&r, err) < 0 ||
	    rm_runner__tools_load(&r, err) < 0)
		goto out;
	ret = run_all(&r, err);
	rm_runner__progress_clear();
	if (rm_log_level() >= 1)
		rm_runner__summary_print(&r);
	if (rm_signal_received()) {
		res->interrupted = rm_signal_received();
		ret = rm_error_set(err, RM_ERR_NONE, "interrupted by %s; %s", rm_signal_name(),
				   r.swept ? "what the run started is stopped and removed"
					   : "what the run started may be left (see above)");
	}
	res->n_failed = r.n_failed;
	res->engine_lost = r.engine_lost;
out:
	rm_log_set_before(NULL);
	free(r.point_file);
	rm_table_release(&r.summary);
	free(r.last_log);
	rm_runner__provenance_finish(&r); /* a run that stopped before its end */
	rm_strv_free(r.prov_done);
	rm_runner__outcome_set_mask(NULL);
	rm_interrupt_set(NULL, NULL);
	rm_launcher_close(&r.launcher);
	rm_launcher_close(&r.cards);
	rm_build_manifest_release(&r.man);
	rm_mask_release(&r.mask);
	rm_strv_free(r.secrets);
	rm_strv_free(r.unserved_said);
	free(r.git_commit);
	rm_data_config_release(&r.data);
	rm_tool_plan_release(&r.tools);
	rm_context_release(&r.ctx);
	rm_selection_release(&r.sel);
	rm_registry_release(&r.reg);
	return ret;
}
