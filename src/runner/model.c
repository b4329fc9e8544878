/*
 * One selected model: its Dockerfiles for this context, the reasons it cannot run here
 * (skip_gpu_arch, paths out of the folder, a wrong data.json entry, too few GPUs, a
 * container request that cannot be made, a GPU-vendor Dockerfile on a host without GPUs),
 * all before anything is built, and for each
 * kept Dockerfile one build and --repeat runs; or, with the context's MAD_CONTAINER_IMAGE
 * or a build manifest (prebuilt.c), --repeat runs of the given image and no build. With a
 * batching launcher (SLURM) the runs wait in a queue (queue.c) until every model is ready.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "rm/util.h"
#include "rm/report.h"

extern char **environ;

/* MAD_SYSTEM_GPU_ARCHITECTURE and the context's docker_build_arg. Secrets are never build
 * args (image history keeps them), unless the user put one there explicitly: warned. */
json_t *rm_runner__build_args(struct run *r, const rm_model *m)
{
	json_t *args = json_object();
	if (r->ctx.gpu_arch)
		json_object_set_new(args, "MAD_SYSTEM_GPU_ARCHITECTURE",
				    json_string(r->ctx.gpu_arch));
	for (size_t i = 0; i < r->ctx.n_docker_build_arg; i++) {
		const rm_kv *kv = &r->ctx.docker_build_arg[i];
		int secret = strstr(kv->key, "MAD_SECRETS") != NULL;
		for (size_t k = 0; k < r->n_secrets && !secret; k++)
			secret = strstr(kv->value, r->secrets[k]) != NULL;
		if (secret)
			rm_warn("model '%s': build arg '%s' carries a secret: the image history "
				"keeps it; pass secrets to the container instead (MAD_SECRETS_* "
				"variables reach its environment)",
				m->name, kv->key);
		json_object_set_new(args, kv->key, json_string(kv->value));
	}
	for (size_t i = 0; i < m->n_build_secrets; i++) {
		const char *name = m->build_secrets[i], *value = getenv(name);
		if (!value) {
			rm_warn("model '%s': field 'build_secrets' names '%s', which is not set on "
				"this host; the build gets no such argument",
				m->name, name);
			continue;
		}
		rm_warn("model '%s': passing secret '%s' as a build arg because its field "
			"'build_secrets' asks for it: the image history keeps its value",
			m->name, name);
		json_object_set_new(args, name, json_string(value));
	}
	return args;
}

/* The image of one Dockerfile, built (or found up to date) by the launcher. */
static int build(struct run *r, const rm_model *m, const rm_dockerfile *df, const char *log_base,
		 struct outcome *oc, rm_error *err)
{
	char *path = rm_runner__log_path(r, log_base, ".build.log"),
	     *link = rm_runner__log_link(r, log_base, ".build.log");
	json_t *args = rm_runner__build_args(r, m);
	rm_image_req req = {.model = m,
			    .df = df,
			    .image = oc->image,
			    .buildargs = args,
			    .nocache = r->o->clean_docker_cache,
			    .no_pull = r->o->no_pull,
			    .log = path};
	double start = rm_now();
	struct build_log *bl = rm_runner__build_log_open(r, m, path, link, err);
	int cached = 0, ret = -1;

	if (bl) {
		rm_runner__build_log_bind(bl, &req);
		ret =
		    r->launcher.ops->prepare(r->launcher.state, &req, &oc->image_id, &cached, err);
		if (ret < 0 && rm_runner__build_log_timed_out(bl)) {
			rm_error_set(err, RM_ERR_DOCKER,
				     "the build of '%s' from '%s' took longer than %g s "
				     "(--build-timeout) and was stopped (see %s)",
				     oc->image, df->path, r->o->build_timeout, path);
			rm_runner__build_log_failed(bl, rm_error_text(err));
		} else if (ret < 0) {
			char *msg = rm_mask_string(&r->mask, rm_error_text(err));
			rm_runner__build_log_failed(bl, msg);
			rm_error_set(err, err->kind, "building '%s' from '%s' (see %s): %s",
				     oc->image, df->path, path, msg);
			free(msg);
		}
	}
	oc->build_s = rm_now() - start;
	rm_runner__build_log_close(bl);
	json_decref(args);
	free(path);
	free(link);
	return ret;
}

/* Fills the build facts of a repeat's outcome from the build's. */
static void outcome_from_build(struct outcome *oc, const struct outcome *b, int first)
{
	oc->exit_code = -1;
	oc->dockerfile = rm_xstrdup(b->dockerfile);
	oc->base_image = rm_xstrdup(b->base_image);
	oc->image = rm_xstrdup(b->image);
	oc->image_id = rm_xstrdup(b->image_id);
	/* One build serves every repeat: its time is on the first row only, so sums over
	 * perf.csv stay right. */
	oc->build_s = first ? b->build_s : 0;
}

int rm_runner__cannot_run(struct run *r, const rm_selected *s, const rm_workload *w,
			  const char *skip, const char *why, rm_error *err)
{
	const rm_model *m = s->model;
	struct outcome oc = {0};
	int ret = 0;

	oc.exit_code = -1;
	if (skip) {
		oc.status = RM_STATUS_SKIPPED;
		const char *gpu =
		    rm_skip_gpu_arch_match(s->model->skip_gpu_arch, r->ctx.gpu_arch, NULL)
			? r->ctx.gpu_arch
			: r->ctx.gpu_product_name;
		oc.reason = rm_xasprintf("skip_gpu_arch ('%s') names this host's GPU '%s' "
					 "(--disable-skip-gpu-arch runs it)",
					 s->model->skip_gpu_arch, gpu ? gpu : "");
	} else {
		rm_runner__fail(&oc, "%s", why);
	}
	if (r->o->dry_run) {
		printf("  would be %s: %s\n", rm_status_name(oc.status), oc.reason);
		r->n_failed += oc.status == RM_STATUS_FAILURE;
	} else {
		rm_runner__outcome_report(r, m, &oc);
		ret = rm_runner__record(r, s, w, &oc, err);
	}
	rm_runner__outcome_release(&oc);
	return ret;
}

/* Records a build that failed or could not be tried. */
static int build_failed(struct run *r, const rm_selected *s, const rm_workload *w,
			struct outcome *b, rm_error *err)
{
	rm_runner__outcome_report(r, s->model, b);
	return rm_runner__record(r, s, w, b, err);
}

void rm_runner__repeat_logs(const struct run *r, const char *log_base, const struct outcome *b,
			    long rep, long attempt, char **file, char **link)
{
	if (r->o->repeat > 1 || attempt > 1) {
		char *lsuffix = r->o->repeat > 1 ? rm_xasprintf(".r%ld.live.log", rep)
						 : rm_xstrdup(".live.log");
		char *suffix = attempt > 1
				   ? rm_xasprintf("%.*s.a%ld.live.log", (int)(strlen(lsuffix) - 9),
						  lsuffix, attempt)
				   : rm_xstrdup(lsuffix);
		*file = rm_runner__log_path(r, log_base, suffix);
		*link = rm_runner__log_link(r, log_base, lsuffix);
		free(suffix);
		free(lsuffix);
	} else {
		*file = rm_xstrdup(b->log_file);
		*link = rm_xstrdup(b->log_link);
	}
}

/* One repeat, tried again while it fails for the machine. */
static int run_attempts(struct run *r, const rm_selected *s, rm_workload *w, const char *log_base,
			const struct outcome *b, long rep, size_t *k, rm_summary *sm, rm_error *err)
{
	const rm_model *m = s->model;
	int ret = 0, again = 1;

	/* a build or pull tried again counts among the first repeat's attempts */
	long first = rep == 1 && b->attempt > 0 ? b->attempt + 1 : 1;

	for (long attempt = first; again && ret == 0; attempt++) {
		struct outcome oc = {0};
		outcome_from_build(&oc, b, rep == 1 && attempt == first);
		oc.repeat = rep;
		oc.attempt = attempt;
		rm_runner__repeat_logs(r, log_base, b, rep, attempt, &oc.log_file, &oc.log_link);
		if (rm_runner__execute(r, w, attempt > first ? *k - 1 : (*k)++, &oc) < 0)
			ret = -1;
		if (oc.status == RM_STATUS_NONE)
			rm_runner__fail(&oc, "unknown failure");
		again = ret == 0 && rm_runner__retry(r, m, &oc);
		if (!again)
			rm_runner__outcome_report(r, m, &oc);
		if (oc.status == RM_STATUS_SUCCESS)
			rm_summary_collect(sm, &oc.pr);
		if (rm_runner__record(r, s, w, &oc, err) < 0)
			ret = -1;
		rm_runner__outcome_release(&oc);
		if (rm_signal_received())
			ret = -1;
	}
	return ret;
}

int rm_runner__run_repeats(struct run *r, const rm_selected *s, rm_workload *w,
			   const char *log_base, const struct outcome *b, size_t *k, rm_error *err)
{
	const rm_model *m = s->model;
	rm_summary sm = {0};
	int ret = 0;

	for (long rep = 1; rep <= r->o->repeat && ret == 0; rep++)
		ret = run_attempts(r, s, w, log_base, b, rep, k, &sm, err);
	if (r->o->repeat > 1 && sm.n &&
	    rm_summary_write(&sm, r->o->output, r->run_id, m->name, r->o->repeat, r->o->score,
			     stdout, err) < 0)
		ret = -1;
	rm_summary_release(&sm);
	return ret;
}

/* Whether the workloads run on this host (the Docker launcher), where this host's GPUs
 * count; elsewhere (SLURM) the node that runs them checks its own. */
int rm_runner__runs_here(struct run *r, const rm_workload *w)
{
	rm_launch_desc d = {.nnodes = 1};
	rm_error err = RM_ERROR_INIT;
	rm_launcher *L = rm_runner__launcher(r, w, &err);

	if (!L)
		return 0;
	L->ops->describe(L->state, w, &d);
	return !d.deployment_type || !strcmp(d.deployment_type, "local");
}

/* Whether w's launcher cannot run it (cannot be opened, or its check says no): err says why. */
static int launcher_refuses(struct run *r, const rm_workload *w, rm_error *err)
{
	rm_launcher *L = rm_runner__launcher(r, w, err);

	return !L || (L->ops->check && L->ops->check(L->state, w, err) < 0);
}

/* A prepared image: its --repeat runs now, or (batching) once every model is prepared. */
static int ready(struct run *r, const rm_selected *s, rm_workload *w, const char *log_base,
		 struct outcome *b, size_t *k, rm_error *err)
{
	if (r->o->skip_model_run) {
		rm_info("model '%s': image '%s' ready; not run (--skip-model-run)", s->model->name,
			b->image);
		return 0;
	}
	if (r->batching) {
		rm_runner__queue_workload(r, s, w, log_base, b, k);
		return 0;
	}
	return rm_runner__run_repeats(r, s, w, log_base, b, k, err);
}

/* The build, tried again (--retries) while the engine dies under it; then the runs. */
static int build_attempts(struct run *r, const rm_selected *s, rm_workload *w,
			  const rm_dockerfile *df, const char *log_base, struct outcome *b,
			  size_t *k, rm_error *err)
{
	const rm_model *m = s->model;

	for (long attempt = 1;; attempt++) {
		rm_error berr = RM_ERROR_INIT;
		int brc = build(r, m, df, log_base, b, &berr), again;
		if (brc >= 0)
			return ready(r, s, w, log_base, b, k, err);
		b->attempt = attempt;
		b->machine = brc == RM_LAUNCH_LOST;
		if (brc == RM_LAUNCH_LOST) /* the engine died under the build */
			r->engine_lost = 1;
		if (rm_signal_received())
			rm_runner__fail(b, "interrupted by %s during the build", rm_signal_name());
		else
			rm_runner__fail(b, "build failed: %s", rm_error_text(&berr));
		again = rm_runner__retry(r, m, b);
		if (!again)
			return build_failed(r, s, w, b, err);
		if (rm_runner__record(r, s, w, b, err) < 0)
			return -1;
		r->engine_lost = 0; /* it may come back: the next attempt says */
		free(b->reason);
		b->reason = NULL;
		b->status = RM_STATUS_NONE;
	}
}

/* One kept Dockerfile: build once, run --repeat times. */
static int run_dockerfile(struct run *r, const rm_selected *s, rm_workload *w,
			  const rm_dockerfile *df, size_t n_kept, size_t *k, rm_error *err)
{
	const rm_model *m = s->model;
	struct outcome b = {0};
	char *safe = rm_runner__log_name(r, m), *log_base;
	/* A Dockerfile made for a GPU vendor cannot run on a host without GPUs: say so before
	 * pulling a base image of tens of GB. */
	const char *want = rm_runner__runs_here(r, w)
			       ? json_string_value(json_object_get(df->context_req, "gpu_vendor"))
			       : NULL;
	int ret = 0;

	log_base = n_kept > 1 ? rm_xasprintf("%s_%s", safe, df->stem) : rm_xstrdup(safe);
	free(safe);
	b.exit_code = -1;
	b.dockerfile = rm_xstrdup(df->path);
	b.base_image = rm_xstrdup(df->base_image);
	b.image = rm_image_name(m->name, df->stem);
	b.log_file = rm_runner__log_path(r, log_base, ".live.log");
	b.log_link = rm_runner__log_link(r, log_base, ".live.log");
	rm_workload_set_image(w, b.image);

	if (r->o->dry_run) {
		json_t *args = rm_runner__build_args(r, m);
		rm_image_req req = {.model = m,
				    .df = df,
				    .image = b.image,
				    .buildargs = args,
				    .nocache = r->o->clean_docker_cache,
				    .no_pull = r->o->no_pull};
		char *name = rm_runner__container_name(r, m, 0, 1);
		rm_job_spec spec = {.w = w, .name = name};
		rm_runner__dry_run_dockerfile(r, &req, &spec,
					      want && !r->ctx.gpu_vendor ? want : NULL);
		r->n_failed += want && !r->ctx.gpu_vendor;
		free(name);
		json_decref(args);
	} else if (want && !r->ctx.gpu_vendor) {
		rm_runner__fail(
		    &b,
		    "'%s' is for %s GPUs (its CONTEXT line) and no GPU was found on this host; "
		    "give --additional-context '{\"gpu_vendor\": \"%s\"}' to build and run it "
		    "anyway",
		    df->path, want, want);
		ret = build_failed(r, s, w, &b, err);
	} else {
		ret = build_attempts(r, s, w, df, log_base, &b, k, err);
	}
	free(log_base);
	rm_runner__outcome_release(&b);
	return ret;
}

/* The context's MAD_CONTAINER_IMAGE: run that image, build nothing. NULL when not set. */
static const char *model_given_image(const struct run *r)
{
	const char *v = rm_context_get(&r->ctx, "MAD_CONTAINER_IMAGE");
	return v && *v ? v : NULL;
}

/* An image reference as the engine takes it: name[:tag][@digest], nothing else. */
static int image_ref_ok(const char *v)
{
	if (*v == '-' || *v == '/' || *v == '.' || strstr(v, ".."))
		return 0;
	return strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/:@-") ==
	       strlen(v);
}

/* What must hold before anything is built: the model's paths stay in the folder, its data
 * entries are right (data no provider serves is only warned about), MAD_CONTAINER_IMAGE is
 * an image reference. */
static int precheck(struct run *r, const rm_model *m, rm_data_plan *plan, rm_error *err)
{
	const char *given = model_given_image(r);

	if (given && !image_ref_ok(given))
		return rm_error_set(err, RM_ERR_INPUT,
				    "MAD_CONTAINER_IMAGE '%s' is not an image reference "
				    "(name[:tag][@digest])",
				    given);
	if (rm_model_check_paths(m, r->o->root, err) < 0)
		return -1;
	return rm_runner__data_prepare(r, m, plan, err);
}

/* Whether the container request can be made on this host (run options the render does
 * not take, binds the folder must not make): said before the build, not after it. */
static int renders(const rm_workload *w, const rm_context *ctx, rm_error *err)
{
	json_t *body = NULL;
	int ret = rm_workload_render(w, ctx, (const char *const *)environ, &body, err);

	json_decref(body);
	return ret;
}

static void no_build_output(void *ud, const char *line, size_t len)
{
	(void)ud;
	(void)line;
	(void)len;
}

/* A given image found or pulled, tried again (--retries) while the engine or the registry
 * fails; then the runs. */
static int given_attempts(struct run *r, const rm_selected *s, rm_workload *w,
			  const rm_image_req *req, const char *log_base, struct outcome *b,
			  size_t *k, rm_error *err)
{
	for (long attempt = 1;; attempt++) {
		rm_error perr = RM_ERROR_INIT;
		int cached = 0;
		if (r->launcher.ops->prepare(r->launcher.state, req, &b->image_id, &cached,
					     &perr) == 0)
			return ready(r, s, w, log_base, b, k, err);
		b->attempt = attempt;
		b->machine = perr.kind == RM_ERR_DOCKER; /* the engine's or the registry's */
		rm_runner__fail(b, "%s", rm_error_text(&perr));
		if (!rm_runner__retry(r, s->model, b))
			return build_failed(r, s, w, b, err);
		if (rm_runner__record(r, s, w, b, err) < 0)
			return -1;
		free(b->reason);
		b->reason = NULL;
		b->status = RM_STATUS_NONE;
	}
}

/* An image given as it is (MAD_CONTAINER_IMAGE, a build manifest's entry): --repeat runs of
 * it; the launcher builds nothing (it pulls what the engine lacks). */
int rm_runner__run_given(struct run *r, const rm_selected *s, rm_workload *w,
			 const struct image_src *src, size_t n_images, size_t *k, rm_error *err)
{
	const rm_model *m = s->model;
	struct outcome b = {0};
	char *safe = rm_runner__log_name(r, m);
	char *log_base = n_images > 1 ? rm_xasprintf("%s_%s", safe, src->stem) : rm_xstrdup(safe);
	rm_image_req req = {.model = m,
			    .image = src->image,
			    .on_line = no_build_output,
			    .poll = rm_signal_cancelled};
	int ret = 0;

	b.exit_code = -1;
	b.image = rm_xstrdup(src->image);
	b.dockerfile = rm_xstrdup(src->dockerfile);
	b.base_image = rm_xstrdup(src->base_image);
	b.log_file = rm_runner__log_path(r, log_base, ".live.log");
	b.log_link = rm_runner__log_link(r, log_base, ".live.log");
	rm_workload_set_image(w, b.image);
	if (r->o->dry_run) {
		char *name = rm_runner__container_name(r, m, 0, 1);
		rm_job_spec spec = {.w = w, .name = name};
		rm_runner__dry_run_dockerfile(r, &req, &spec, NULL);
		free(name);
	} else {
		ret = given_attempts(r, s, w, &req, log_base, &b, k, err);
	}
	free(safe);
	free(log_base);
	rm_runner__outcome_release(&b);
	return ret;
}

/* The runs of a model that can run here: one per kept Dockerfile, or the given image. */
static int run_images(struct run *r, const rm_selected *s, rm_workload *w, const rm_dockerfile *dfs,
		      size_t n_dfs, rm_error *err)
{
	size_t kept = 0, k = 0;
	int ret = 0;

	if (r->man.path)
		return rm_runner__run_from_manifest(r, s, w, &k, err);
	if (model_given_image(r)) {
		struct image_src src = {.image = model_given_image(r), .stem = "given"};
		return rm_runner__run_given(r, s, w, &src, 1, &k, err);
	}
	for (size_t i = 0; i < n_dfs; i++)
		kept += dfs[i].kept != 0;
	for (size_t i = 0; i < n_dfs && ret == 0 && !rm_signal_received(); i++)
		if (dfs[i].kept)
			ret = run_dockerfile(r, s, w, &dfs[i], kept, &k, err);
	return ret;
}

int rm_runner__run_model(struct run *r, const rm_selected *s, rm_error *err)
{
	const rm_model *m = s->model;
	rm_dockerfile *dfs = NULL;
	size_t n_dfs = 0;
	rm_error derr = RM_ERROR_INIT, perr = RM_ERROR_INIT;
	rm_workload_in win = {.model = m,
			      .ctx = &r->ctx,
			      .set = &r->o->wl,
			      .run_id = r->run_id,
			      .log_dir = r->o->log_dir,
			      .extra_args = s->extra_args,
			      .host_env = (const char *const *)environ,
			      .tools = &r->tools,
			      .create_dirs = !r->o->dry_run,
			      .n_gpus = r->o->n_gpus};
	rm_workload w;
	/* A given image (or a manifest's) needs no Dockerfile. */
	int ret = 0,
	    sel_rc = model_given_image(r) || r->man.path
			 ? 0
			 : rm_dockerfiles_select(m->dockerfile, &r->ctx, &dfs, &n_dfs, &derr);

	if (rm_workload_build(&w, &win, err) < 0) {
		rm_dockerfiles_free(dfs, n_dfs);
		return -1;
	}
	if (r->o->dry_run)
		rm_runner__dry_run_model(r, m, &w, dfs, n_dfs);
	else
		rm_info("model '%s'", m->name);

	if (!r->o->disable_skip_gpu_arch &&
	    rm_skip_gpu_arch_match(m->skip_gpu_arch, r->ctx.gpu_arch, r->ctx.gpu_product_name)) {
		ret = rm_runner__cannot_run(r, s, &w, "skip_gpu_arch", NULL, err);
	} else if (precheck(r, m, &w.data, &perr) < 0) {
		ret = rm_runner__cannot_run(r, s, &w, NULL, rm_error_text(&perr), err);
	} else if (sel_rc < 0) {
		ret = rm_runner__cannot_run(r, s, &w, NULL, rm_error_text(&derr), err);
	} else if (w.n_gpus > 0 && w.n_gpus > r->ctx.n_gpus && rm_runner__runs_here(r, &w)) {
		char *why = rm_xasprintf("the model needs %ld GPUs and the context has %ld",
					 w.n_gpus, r->ctx.n_gpus);
		ret = rm_runner__cannot_run(r, s, &w, NULL, why, err);
		free(why);
	} else if (rm_runner__runs_here(r, &w) && renders(&w, &r->ctx, &perr) < 0) {
		ret = rm_runner__cannot_run(r, s, &w, NULL, rm_error_text(&perr), err);
	} else if (launcher_refuses(r, &w, &perr)) {
		ret = rm_runner__cannot_run(r, s, &w, NULL, rm_error_text(&perr), err);
	} else {
		ret = run_images(r, s, &w, dfs, n_dfs, err);
	}
	rm_workload_release(&w);
	rm_dockerfiles_free(dfs, n_dfs);
	return ret;
}
