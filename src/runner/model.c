/*
 * One selected model: its Dockerfiles for this context, the reasons it cannot run here
 * (skip_gpu_arch, too few GPUs, a GPU-vendor Dockerfile on a host without GPUs), and for
 * each kept Dockerfile one build and --repeat runs.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "rm/log.h"
#include "rm/report.h"
#include "rm/util.h"

extern char **environ;

static int arch_skipped(const rm_model *m, const char *arch)
{
	if (!m->skip_gpu_arch || !arch)
		return 0;
	const char *p = m->skip_gpu_arch;
	size_t al = strlen(arch);
	while (*p) {
		while (*p == ' ' || *p == ',')
			p++;
		size_t len = strcspn(p, ", ");
		if (len == al && !strncmp(p, arch, al))
			return 1;
		p += len;
	}
	return 0;
}

/* MAD_SYSTEM_GPU_ARCHITECTURE and the context's docker_build_arg. Secrets are never build
 * args (image history keeps them), unless the user put one there explicitly: warned. */
json_t *build_args(struct run *r, const rm_model *m)
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

/* Where tuned TunableOp results live between runs: <log dir>/tunableop/<model>/. */
static char *tunableop_dir(struct run *r, const rm_model *m, int create)
{
	char real[PATH_MAX];
	char *safe = rm_file_safe(m->name), *dir;
	const char *base = realpath(r->o->log_dir, real) ? real : r->o->log_dir;

	dir = rm_xasprintf("%s/tunableop/%s", base, safe);
	if (create) {
		char *top = rm_xasprintf("%s/tunableop", base);
		if ((mkdir(top, 0755) != 0 && errno != EEXIST) ||
		    (mkdir(dir, 0755) != 0 && errno != EEXIST))
			rm_warn("model '%s': cannot create '%s': %s", m->name, dir,
				strerror(errno));
		free(top);
	}
	free(safe);
	return dir;
}

/* The image of one Dockerfile, built (or found up to date) by the launcher; without df, the
 * image oc->image names, made present (pulled) by the launcher. */
static int build(struct run *r, const rm_model *m, const rm_dockerfile *df, const char *log_base,
		 struct outcome *oc, rm_error *err)
{
	char *path = log_path(r, log_base, ".build.log"),
	     *link = log_link(r, log_base, ".build.log");
	json_t *args = build_args(r, m);
	rm_image_req req = {.model = m,
			    .df = df,
			    .image = oc->image,
			    .image_ref = df ? NULL : oc->image,
			    .buildargs = args,
			    .nocache = r->o->clean_docker_cache,
			    .log = path};
	double start = rm_now();
	struct build_log *bl = build_log_open(r, m, path, link, err);
	int cached = 0, ret = -1;

	if (bl) {
		build_log_bind(bl, &req);
		ret =
		    r->launcher.ops->prepare(r->launcher.state, &req, &oc->image_id, &cached, err);
		if (ret < 0) {
			char *msg = rm_mask_string(&r->mask, err->msg);
			build_log_failed(bl, msg);
			if (df)
				rm_error_set(err, err->kind, "building '%s' from '%s' (see %s): %s",
					     oc->image, df->path, path, msg);
			else
				rm_error_set(err, err->kind, "getting image '%s' (see %s): %s",
					     oc->image, path, msg);
			free(msg);
		}
	}
	oc->build_s = rm_now() - start;
	build_log_close(bl);
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
	oc->tunableop = b->tunableop;
	/* One build serves every repeat: its time is on the first row only, so sums over
	 * perf.csv stay right. */
	oc->build_s = first ? b->build_s : 0;
}

int cannot_run(struct run *r, const rm_selected *s, const rm_spec_in *in, const char *skip,
	       const char *why, rm_error *err)
{
	const rm_model *m = s->model;
	struct outcome oc = {0};
	int ret = 0;

	oc.exit_code = -1;
	oc.tunableop = in->tunableop;
	if (skip) {
		oc.status = "SKIPPED";
		oc.reason = rm_xasprintf("skip_gpu_arch lists '%s'", r->ctx.gpu_arch);
	} else {
		fail(&oc, "%s", why);
	}
	if (r->o->dry_run) {
		printf("  would be %s: %s\n", oc.status, oc.reason);
	} else {
		outcome_report(r, m, &oc);
		ret = record(r, s, in, &oc, err);
	}
	outcome_release(&oc);
	return ret;
}

/* Records a build that failed or could not be tried. */
static int build_failed(struct run *r, const rm_selected *s, const rm_spec_in *in,
			struct outcome *b, rm_error *err)
{
	outcome_report(r, s->model, b);
	return record(r, s, in, b, err);
}

void repeat_logs(const struct run *r, const char *log_base, const struct outcome *b, long rep,
		 char **file, char **link)
{
	if (r->o->repeat > 1) {
		char *suffix = rm_xasprintf(".r%ld.live.log", rep);
		*file = log_path(r, log_base, suffix);
		*link = log_link(r, log_base, suffix);
		free(suffix);
	} else {
		*file = rm_xstrdup(b->log_file);
		*link = rm_xstrdup(b->log_link);
	}
}

int run_repeats(struct run *r, const rm_selected *s, rm_spec_in *in, const char *log_base,
		const struct outcome *b, size_t *k, rm_error *err)
{
	const rm_model *m = s->model;
	rm_summary sm = {0};
	int ret = 0;

	for (long rep = 1; rep <= r->o->repeat && ret == 0; rep++) {
		struct outcome oc = {0};
		outcome_from_build(&oc, b, rep == 1);
		oc.repeat = rep;
		repeat_logs(r, log_base, b, rep, &oc.log_file, &oc.log_link);
		if (execute(r, in, (*k)++, &oc) < 0)
			ret = -1;
		if (!oc.status)
			fail(&oc, "unknown failure");
		outcome_report(r, m, &oc);
		if (!strcmp(oc.status, "SUCCESS"))
			rm_summary_collect(&sm, &oc.pr);
		if (record(r, s, in, &oc, err) < 0)
			ret = -1;
		outcome_release(&oc);
		if (rm_runner_signal())
			ret = -1;
	}
	if (r->o->repeat > 1 && sm.n &&
	    rm_summary_write(&sm, r->o->output, r->run_id, m->name, r->o->repeat, r->o->score,
			     stdout, err) < 0)
		ret = -1;
	rm_summary_release(&sm);
	return ret;
}

/* Whether the workloads run on this host (the Docker launcher), where this host's GPUs
 * count; elsewhere (SLURM) the node that runs them checks its own. */
static int runs_here(struct run *r, const rm_spec_in *in)
{
	rm_launch_desc d = {NULL, NULL, 1, 0};
	r->launcher.ops->describe(r->launcher.state, in, &d);
	return !d.deployment_type || !strcmp(d.deployment_type, "local");
}

/* One workload: a kept Dockerfile (df), or an image given by reference (image_ref, from a
 * build manifest): build (or get) it once, run it --repeat times. */
int run_image(struct run *r, const rm_selected *s, rm_spec_in *in, const struct image_src *src,
	      size_t n_kept, size_t *k, rm_error *err)
{
	const rm_model *m = s->model;
	const rm_dockerfile *df = src->df;
	struct outcome b = {0};
	char *safe = rm_file_safe(m->name), *log_base;
	/* A Dockerfile made for a GPU vendor cannot run on a host without GPUs: say so before
	 * pulling a base image of tens of GB. */
	const char *want =
	    df ? json_string_value(json_object_get(df->context_req, "gpu_vendor")) : NULL;
	int ret = 0;

	if (!runs_here(r, in))
		want = NULL;
	log_base = n_kept > 1 ? rm_xasprintf("%s_%s", safe, src->stem) : rm_xstrdup(safe);
	free(safe);
	b.exit_code = -1;
	b.tunableop = in->tunableop;
	b.dockerfile = rm_xstrdup(df ? df->path : src->dockerfile);
	b.base_image = rm_xstrdup(df ? df->base_image : src->base_image);
	b.image = df ? rm_image_name(m->name, df->stem) : rm_xstrdup(src->image_ref);
	b.log_file = log_path(r, log_base, ".live.log");
	b.log_link = log_link(r, log_base, ".live.log");
	in->image = b.image;

	if (r->o->dry_run) {
		json_t *args = build_args(r, m);
		rm_image_req req = {.model = m,
				    .df = df,
				    .image = b.image,
				    .image_ref = df ? NULL : b.image,
				    .buildargs = args,
				    .nocache = r->o->clean_docker_cache};
		char *name = container_name(r, m, 0);
		rm_job_spec spec = {.in = in, .name = name};
		dry_run_dockerfile(r, &req, &spec, want && !r->ctx.gpu_vendor ? want : NULL);
		free(name);
		json_decref(args);
	} else if (want && !r->ctx.gpu_vendor) {
		fail(&b,
		     "'%s' is for %s GPUs (its CONTEXT line) and no GPU was found on this host; "
		     "give --additional-context '{\"gpu_vendor\": \"%s\"}' to build and run it "
		     "anyway",
		     df->path, want, want);
		ret = build_failed(r, s, in, &b, err);
	} else {
		rm_error berr = RM_ERROR_INIT;
		if (build(r, m, df, log_base, &b, &berr) < 0) {
			if (rm_runner_signal())
				fail(&b, "interrupted by %s during the build",
				     runner_signal_name());
			else
				fail(&b, "build failed: %s", berr.msg);
			ret = build_failed(r, s, in, &b, err);
		} else {
			/* An image by reference runs as what the launcher named (a local id). */
			if (!df)
				in->image = b.image_id;
			if (r->batching)
				queue_workload(r, s, in, log_base, &b, k);
			else
				ret = run_repeats(r, s, in, log_base, &b, k, err);
		}
	}
	free(log_base);
	outcome_release(&b);
	return ret;
}

int run_model(struct run *r, const rm_selected *s, rm_error *err)
{
	const rm_model *m = s->model;
	rm_dockerfile *dfs = NULL;
	size_t n_dfs = 0, kept = 0, k = 0;
	rm_error derr = RM_ERROR_INIT;
	long runtime_ngpus = m->n_gpus < 0 ? r->ctx.n_gpus : m->n_gpus;
	const char *tunableop = rm_tunableop_effective(m, r->o->tunableop);
	int tuning = tunableop && !strcmp(tunableop, "on");
	char *tdir = tuning ? tunableop_dir(r, m, !r->o->dry_run) : NULL;
	rm_spec_in in = {m,
			 &r->ctx,
			 s->extra_args,
			 NULL,
			 r->run_id,
			 (const char *const *)environ,
			 runtime_ngpus,
			 tunableop,
			 tdir,
			 r->o->shm_size,
			 r->o->keep_alive};
	/* With a manifest, its entries are the images: no Dockerfile is read. */
	int ret = 0, sel_rc = r->man.path ? 0
					  : rm_dockerfiles_select(m->dockerfile, &r->ctx, &dfs,
								  &n_dfs, &derr);

	for (size_t i = 0; i < n_dfs; i++)
		kept += dfs[i].kept != 0;
	if (r->o->dry_run)
		dry_run_model(r, m, &in, dfs, n_dfs);
	else
		rm_info("model '%s'", m->name);

	if (arch_skipped(m, r->ctx.gpu_arch)) {
		ret = cannot_run(r, s, &in, "skip_gpu_arch", NULL, err);
	} else if (sel_rc < 0) {
		ret = cannot_run(r, s, &in, NULL, derr.msg, err);
	} else if (m->n_gpus > 0 && m->n_gpus > r->ctx.n_gpus && runs_here(r, &in)) {
		char *why = rm_xasprintf("the model needs %ld GPUs and the context has %ld",
					 m->n_gpus, r->ctx.n_gpus);
		ret = cannot_run(r, s, &in, NULL, why, err);
		free(why);
	} else if (r->man.path) {
		ret = run_from_manifest(r, s, &in, &k, err);
	} else {
		for (size_t i = 0; i < n_dfs && ret == 0 && !rm_runner_signal(); i++) {
			struct image_src src = {.df = &dfs[i], .stem = dfs[i].stem};
			if (dfs[i].kept)
				ret = run_image(r, s, &in, &src, kept, &k, err);
		}
	}
	rm_dockerfiles_free(dfs, n_dfs);
	free(tdir);
	return ret;
}
