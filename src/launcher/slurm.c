/*
 * The SLURM launcher: a context with a "slurm" key (madengine's keys, slurm.h) makes `run`
 * submit each workload with sbatch instead of running it here; each task of the job runs
 * `run_models node-run` on its node (the Docker launcher there), and this process follows
 * the job: rank 0's log as the workload's output, the queue's state, the final state as the
 * verdict. Inside an allocation (SLURM_JOB_ID set) the same batch script runs with bash, and
 * its srun uses the allocation. See slurm_launcher.h for the files and docs/scale-out.md.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "docker_internal.h"
#include "slurm_launcher.h"
#include "rm/util.h"

/* "distributed" is madengine's launcher settings (torchrun, ...), read with "slurm". */
static const char *const slurm_keys[] = {"slurm", "distributed", NULL};

static int slurm_claims(const rm_context *ctx)
{
	json_t *s = ctx && ctx->obj ? json_object_get(ctx->obj, "slurm") : NULL;
	return s && !json_is_null(s);
}

/* An absolute path for p (which may not exist yet: then made absolute by hand). */
static char *absolute(const char *p)
{
	char real[PATH_MAX], cwd[PATH_MAX];

	if (realpath(p, real))
		return rm_xstrdup(real);
	if (p[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		return rm_xstrdup(p);
	return rm_xasprintf("%s/%s", cwd, p);
}

static void set_where(struct slurm_launcher *sl)
{
	const char *conf = getenv("SLURM_CONF");

	if (sl->alloc)
		sl->where = rm_xasprintf("SLURM allocation %ld (srun, %ld node(s) a workload)",
					 sl->alloc, sl->sc.nodes);
	else
		sl->where =
		    rm_xasprintf("SLURM (sbatch, %ld node(s) a job, partition %s%s%s)",
				 sl->sc.nodes, sl->sc.partition ? sl->sc.partition : "default",
				 conf ? ", " : "", conf ? conf : "");
}

static int check_conf(struct slurm_launcher *sl, rm_error *err)
{
	char *runner = NULL;
	int r = 0;

	/* the card's own script (slurm_multi, ...) has no runner to check */
	if (!rm_dist_runs_script(rm_dist_launcher_find(sl->dc.launcher), 1))
		r = rm_slurm_runner(&sl->dc, 1, &runner, err);
	free(runner);
	if (r < 0)
		return -1;
	for (char **n = sl->sc.notes; n && *n; n++)
		rm_warn("%s", *n);
	if (!sl->cfg.dry_run && !sl->alloc && !rm_on_path("sbatch"))
		return rm_error_set(
		    err, RM_ERR_USAGE,
		    sl->present
			? "the context has a \"slurm\" key but sbatch is not on PATH: run "
			  "from a SLURM submit host, or drop the key to run here"
			: "a multi-node card (distributed.launcher slurm_multi) runs its "
			  "script on a SLURM batch host, and sbatch is not on PATH: run from "
			  "a SLURM submit host, or inside an allocation (salloc)");
	return 0;
}

static void slurm_close(void *state);

static int slurm_open(void **state, const rm_launcher_config *cfg, rm_error *err)
{
	struct slurm_launcher *sl = rm_xcalloc(1, sizeof(*sl));
	const char *jid = getenv("SLURM_JOB_ID");
	char host[256];

	sl->cfg = *cfg;
	if (rm_slurm_conf_parse(cfg->ctx->obj, &sl->sc, &sl->dc, &sl->present, err) < 0) {
		free(sl);
		return -1;
	}
	if (rm_slurm_nodes_check(&sl->sc, &sl->dc, "the context", "the context", err) < 0) {
		rm_slurm_conf_release(&sl->sc);
		rm_dist_conf_release(&sl->dc);
		free(sl);
		return rm_error_wrap(err, "--additional-context");
	}
	if (jid && rm_parse_long(jid, 1, 1L << 50, &sl->alloc) < 0)
		sl->alloc = 0;
	if (gethostname(host, sizeof(host)) != 0)
		host[0] = '\0';
	host[sizeof(host) - 1] = '\0';
	sl->self = absolute("/proc/self/exe");
	sl->root = absolute(cfg->root ? cfg->root : ".");
	sl->submit_dir = absolute(".");
	sl->log_dir = absolute(cfg->log_dir ? cfg->log_dir : ".");
	sl->job_file = rm_xasprintf("%s/%s.job.json", sl->log_dir, cfg->run_id);
	sl->comment = rm_xasprintf("run_models.run=%s,host=%s,pid=%ld,start=%lld", cfg->run_id,
				   host, (long)getpid(), rm_process_start((long)getpid()));
	set_where(sl);
	if (check_conf(sl, err) < 0) {
		slurm_close(sl);
		return -1;
	}
	*state = sl;
	return 0;
}

static void slurm_close(void *state)
{
	struct slurm_launcher *sl = state;

	if (!sl)
		return;
	rm_launcher_close(&sl->docker);
	free(sl->finals);
	for (size_t i = 0; i < sl->n_subs; i++)
		rm_launcher__slurm_sub_release(&sl->subs[i]);
	free(sl->subs);
	rm_strv_free(sl->img_names);
	rm_strv_free(sl->img_ids);
	rm_job_doc_release(&sl->doc);
	rm_slurm_conf_release(&sl->sc);
	rm_dist_conf_release(&sl->dc);
	free(sl->self);
	free(sl->root);
	free(sl->submit_dir);
	free(sl->log_dir);
	free(sl->job_file);
	free(sl->comment);
	free(sl->where);
	free(sl);
}

static const char *slurm_where(void *state)
{
	return ((struct slurm_launcher *)state)->where;
}

static void slurm_say(const rm_image_req *req, const char *msg)
{
	if (req->on_line)
		req->on_line(req->ud, msg, strlen(msg));
}

/* An image by reference goes to the nodes as it is (each pulls it); one to build is built
 * on this host through the Docker launcher, for nodes that share its engine or have the
 * image (build and push with `run_models build --registry` for the others). */
static int slurm_prepare(void *state, const rm_image_req *req, char **image_id, int *cached,
			 rm_error *err)
{
	struct slurm_launcher *sl = state;
	rm_launcher_config dc = {
	    .docker_host = sl->cfg.docker_host, .ctx = sl->cfg.ctx, .run_id = sl->cfg.run_id};
	size_t n1, n2;

	if (!req->df) {
		char *msg = rm_xasprintf("run_models: image '%s': each SLURM node pulls it when "
					 "its engine lacks it",
					 req->image);
		slurm_say(req, msg);
		free(msg);
		*image_id = rm_xstrdup(req->image);
		*cached = 1;
		return 0;
	}
	if (!sl->docker.ops && rm_launcher_open_named(&sl->docker, "docker", &dc, err) < 0)
		return rm_error_wrap(err,
				     "building '%s' on this host for the SLURM nodes (or "
				     "build and push it first: run_models build --registry, "
				     "then run --manifest)",
				     req->image);
	if (sl->docker.ops->prepare(sl->docker.state, req, image_id, cached, err) < 0)
		return -1;
	n1 = n2 = sl->n_imgs;
	sl->img_names = rm_strv_push(sl->img_names, &n1, req->image);
	sl->img_ids = rm_strv_push(sl->img_ids, &n2, *image_id);
	sl->n_imgs = n1;
	return 0;
}

/* The card's object of key under the context's (the card fills what the context leaves). */
static json_t *card_under(json_t *ctx_obj, const char *key, const json_t *card)
{
	json_t *c = json_object_get(ctx_obj, key);
	json_t *out = json_is_object(c) ? json_deep_copy(c) : json_object();
	const char *k;
	json_t *v;

	json_object_foreach ((json_t *)card, k, v)
		if (!json_object_get(out, k))
			json_object_set(out, k, v);
	return out;
}

/* Where slurm.<key> or distributed.<key> of w's settings came from, for messages. */
static char *source_of(const struct slurm_launcher *sl, const rm_workload *w, const char *obj,
		       const char *key)
{
	json_t *ctx = json_object_get(sl->cfg.ctx->obj, obj);
	const json_t *card = !w->model		     ? NULL
			     : !strcmp(obj, "slurm") ? w->model->slurm
						     : w->model->distributed;

	if (json_object_get(ctx, key))
		return rm_xstrdup("the context");
	if (json_object_get(card, key))
		return rm_xasprintf("card '%s'", w->model_name);
	return rm_xstrdup("the default");
}

int rm_launcher__slurm_conf_for(const struct slurm_launcher *sl, const rm_workload *w,
				rm_slurm_conf *sc, rm_dist_conf *dc, rm_error *err)
{
	json_t *ctx = sl->cfg.ctx->obj, *obj = json_object();
	json_t *s = card_under(ctx, "slurm", w->model ? w->model->slurm : NULL);
	json_t *d = card_under(ctx, "distributed", w->model ? w->model->distributed : NULL);
	char *from_nodes = NULL, *from_nnodes = NULL;
	int present, ret;

	if (w->dist_launcher)
		json_object_set_new(d, "launcher", json_string(w->dist_launcher));
	json_object_set_new(obj, "slurm", s);
	json_object_set_new(obj, "distributed", d);
	ret = rm_slurm_conf_parse(obj, sc, dc, &present, err);
	if (ret == 0) {
		from_nodes = source_of(sl, w, "slurm", "nodes");
		from_nnodes = source_of(sl, w, "distributed", "nnodes");
		ret = rm_slurm_nodes_check(sc, dc, from_nodes, from_nnodes, err);
		if (ret < 0) {
			rm_slurm_conf_release(sc);
			rm_dist_conf_release(dc);
		}
	}
	if (ret < 0)
		rm_error_wrap(err, "model '%s'", w->model_name);
	free(from_nodes);
	free(from_nnodes);
	json_decref(obj);
	return ret;
}

long rm_launcher__slurm_gpus_per_node(const struct slurm_launcher *sl, const rm_workload *w)
{
	rm_slurm_conf sc;
	rm_dist_conf dc;
	rm_error err = RM_ERROR_INIT;
	long gpn;

	if (rm_launcher__slurm_conf_for(sl, w, &sc, &dc, &err) < 0)
		return rm_slurm_gpus_per_node(&sl->sc, w->n_gpus, sl->cfg.ctx->n_gpus);
	gpn = rm_slurm_gpus_per_node(&sc, w->n_gpus, sl->cfg.ctx->n_gpus);
	rm_slurm_conf_release(&sc);
	rm_dist_conf_release(&dc);
	return gpn;
}

/* Before the build: the workload's settings (slurm.nodes against distributed.nnodes), and a
 * card's env_vars placeholders. */
static int slurm_check(void *state, const rm_workload *w, rm_error *err)
{
	rm_slurm_conf sc;
	rm_dist_conf dc;

	if (rm_launcher__slurm_conf_for(state, w, &sc, &dc, err) < 0)
		return -1;
	rm_slurm_conf_release(&sc);
	rm_dist_conf_release(&dc);
	return rm_workload_check_placeholders(w, err);
}

static void slurm_describe(void *state, const rm_workload *w, rm_launch_desc *out)
{
	struct slurm_launcher *sl = state;
	rm_slurm_conf sc;
	rm_dist_conf dc;
	rm_error err = RM_ERROR_INIT;
	const rm_dist_launcher *l = rm_workload_dist_launcher(w);

	out->deployment_type = "slurm";
	out->launcher = l ? l->name : sl->dc.launcher ? sl->dc.launcher : RM_SLURM_DEFAULT_LAUNCHER;
	out->nnodes = sl->sc.nodes;
	if (rm_launcher__slurm_conf_for(sl, w, &sc, &dc, &err) == 0) {
		out->nnodes = sc.nodes;
		rm_slurm_conf_release(&sc);
		rm_dist_conf_release(&dc);
	}
	out->gpus_per_node = rm_launcher__slurm_gpus_per_node(sl, w);
}

/* --dry-run: the image (as the Docker launcher would make it, and each node runs it) and
 * the batch script, exactly as it would be written and submitted. */
static void slurm_plan(void *state, const rm_image_req *req, const rm_job_spec *spec, FILE *out)
{
	struct slurm_launcher *sl = state;
	struct slurm_sub sub = {0};
	char *text = NULL;
	rm_error err = RM_ERROR_INIT;

	int card = rm_launcher__slurm_runs_card(sl, spec->w), rc;

	rm_launcher__docker_plan(sl->cfg.ctx, req, card ? NULL : spec, out);
	rm_launcher__slurm_names(sl, spec, &sub.key, &sub.log_base);
	sub.batch_log = rm_xasprintf("%s.batch.log", sub.log_base);
	sub.script = rm_xasprintf("%s.sbatch", sub.log_base);
	if (card) {
		sub.steps = rm_xasprintf("%s.steps", sub.log_base);
		rc = rm_launcher__slurm_card_script(sl, spec, &sub, &text, &err);
	} else {
		rc = rm_launcher__slurm_script_for(sl, &spec, &sub, 1, sub.batch_log, &text, &err);
	}
	if (rc < 0) {
		fprintf(out, "  would fail: %s\n", rm_error_text(&err));
	} else {
		fprintf(out, "  %s %s, with the batch script (kept there)%s:\n",
			sl->alloc ? "bash" : "sbatch", sub.script,
			card ? "; the card's script starts its own containers" : "");
		for (char *line = text, *nl; *line; line = nl) {
			nl = strchr(line, '\n');
			nl = nl ? nl + 1 : line + strlen(line);
			fprintf(out, "    %.*s", (int)(nl - line), line);
		}
	}
	free(text);
	rm_launcher__slurm_sub_release(&sub);
}

/* Cancels the jobs whose comment starts with prefix and pass keep; *n counts them. */
static int cancel_mine(const char *prefix, int (*keep)(const char *comment), size_t *n,
		       rm_error *err)
{
	long *ids = NULL;
	char **comments = NULL;
	size_t k = 0;
	int ret = rm_slurm_mine(prefix, &ids, &comments, &k, err);

	for (size_t i = 0; i < k; i++) {
		rm_error cerr = RM_ERROR_INIT;
		if (keep && !keep(comments[i]))
			continue;
		if (rm_slurm_cancel(ids[i], -1, &cerr) < 0) {
			if (err)
				*err = cerr;
			ret = -1;
			continue;
		}
		if (n) {
			(*n)++;
			rm_info("cancelled slurm job %ld (%s): its runner is gone", ids[i],
				comments[i]);
		}
	}
	free(ids);
	rm_strv_free(comments);
	return ret;
}

/* The jobs of this run, found by their comment (the watchdog's copy of the launcher was
 * made before anything was submitted). */
static int slurm_sweep(void *state, rm_error *err)
{
	struct slurm_launcher *sl = state;
	char *prefix = rm_xasprintf("run_models.run=%s,", sl->cfg.run_id);
	int ret = cancel_mine(prefix, NULL, NULL, err);

	free(prefix);
	return ret;
}

/* A comment naming a runner on this host that is gone (kill -9, a reboot). */
static int slurm_runner_gone(const char *comment)
{
	char host[256], me[256];
	long pid;
	long long start;
	const char *h = strstr(comment, ",host=");

	if (!h || sscanf(h, ",host=%255[^,],pid=%ld,start=%lld", host, &pid, &start) != 3)
		return 0;
	if (gethostname(me, sizeof(me)) != 0)
		return 0;
	me[sizeof(me) - 1] = '\0';
	return !strcmp(host, me) && pid != (long)getpid() && rm_process_gone(pid, start);
}

static int slurm_reap(void *state, size_t *n, rm_error *err)
{
	(void)state;
	*n = 0;
	return cancel_mine("run_models.run=", slurm_runner_gone, n, err);
}

/* doctor: only on a host with SLURM's commands (elsewhere there is nothing to say). */
static void slurm_probe(const char *docker_host, rm_probe *out)
{
	char *argv[] = {(char *)"scontrol", (char *)"ping", NULL};
	rm_proc_out res;
	rm_error err = RM_ERROR_INIT;

	(void)docker_host;
	if (!rm_on_path("sbatch"))
		return;
	if (rm_proc_run(argv, NULL, 10, 64 * 1024, &res, &err) < 0 || res.status != 0 ||
	    !strstr(res.out, "UP")) {
		out->status = RM_FINDING_WARN;
		const char *why = err.msg[0]	      ? rm_error_text(&err)
				  : *rm_trim(res.err) ? rm_trim(res.err)
						      : rm_trim(res.out);
		if (strrchr(why, '\n'))
			why = strrchr(why, '\n') + 1; /* its last word on the matter */
		out->detail = rm_xasprintf("sbatch is here but 'scontrol ping' does not find "
					   "slurmctld up: %s",
					   *why ? why : "no answer");
		out->action = rm_xstrdup("check SLURM_CONF and slurmctld; runs with a \"slurm\" "
					 "context submit through it");
	} else {
		out->status = RM_FINDING_OK;
		out->detail = rm_xasprintf("SLURM: %s", rm_trim(res.out));
	}
	rm_proc_out_release(&res);
}

const rm_launcher_ops rm_launcher_slurm = {
    .name = "slurm",
    .batch_host = 1,
    .claims = slurm_claims,
    .context_keys = slurm_keys,
    .open = slurm_open,
    .close = slurm_close,
    .where = slurm_where,
    .prepare = slurm_prepare,
    .start = rm_launcher__slurm_start,
    .stream = rm_launcher__slurm_stream,
    .stop = rm_launcher__slurm_stop,
    .wait = rm_launcher__slurm_wait,
    .fetch = rm_launcher__slurm_fetch,
    .cleanup = rm_launcher__slurm_cleanup,
    .sweep = slurm_sweep,
    .reap = slurm_reap,
    .describe = slurm_describe,
    .check = slurm_check,
    .plan = slurm_plan,
    .probe = slurm_probe,
    .submit_all = rm_launcher__slurm_submit_all,
    .telemetry = rm_launcher__slurm_telemetry,
    .host_provenance = rm_launcher__slurm_provenance,
};
