/*
 * run_models build: the images of the selection built once through the Docker launcher's
 * prepare (the same fingerprint and skip-build check as a run), pushed to the registry under
 * their fingerprint when one is given, and listed in the build manifest (rm/runner.h) for
 * `run --manifest`. The manifest is rewritten after every image, so an interrupted build
 * keeps what was done; one image's failure is recorded in it and the others go on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "internal.h"
#include "rm/report.h"
#include "rm/util.h"

extern char **environ;

static void set_s(json_t *o, const char *k, const char *v)
{
	if (v)
		json_object_set_new(o, k, json_string(v));
}

/* The models.json entry, as the manifest's built_models keeps it (madengine's fields). */
static json_t *model_json(const rm_model *m)
{
	json_t *o = json_object(), *tags = json_array();
	char n[32];

	set_s(o, "name", m->name);
	set_s(o, "dockerfile", m->dockerfile);
	set_s(o, "scripts", m->scripts);
	set_s(o, "dockercontext", m->dockercontext);
	snprintf(n, sizeof(n), "%ld", m->n_gpus); /* a string in MAD's models.json */
	json_object_set_new(o, "n_gpus", json_string(n));
	set_s(o, "owner", m->owner);
	set_s(o, "training_precision", m->training_precision);
	for (size_t i = 0; i < m->n_tags; i++)
		json_array_append_new(tags, json_string(m->tags[i]));
	json_object_set_new(o, "tags", tags);
	set_s(o, "args", m->args);
	set_s(o, "url", m->url);
	set_s(o, "data", m->data);
	json_object_set_new(o, "timeout", json_real(m->timeout));
	set_s(o, "multiple_results", m->multiple_results);
	set_s(o, "skip_gpu_arch", m->skip_gpu_arch);
	set_s(o, "additional_docker_run_options", m->additional_docker_run_options);
	set_s(o, "parser", m->parser);
	return o;
}

/* What the images were built for; never the environment variables (secrets live there),
 * and build args masked. */
static json_t *build_image_context(struct run *r)
{
	json_t *c = json_object(), *args = json_object();

	set_s(c, "gpu_vendor", r->ctx.gpu_vendor);
	set_s(c, "guest_os", r->ctx.guest_os);
	set_s(c, "MAD_SYSTEM_GPU_ARCHITECTURE", r->ctx.gpu_arch);
	for (size_t i = 0; i < r->ctx.n_docker_build_arg; i++) {
		char *v = rm_mask_string(&r->mask, r->ctx.docker_build_arg[i].value);
		json_object_set_new(args, r->ctx.docker_build_arg[i].key, json_string(v));
		free(v);
	}
	json_object_set_new(c, "docker_build_arg", args);
	return c;
}

struct built {
	rm_built_image mi;
	rm_published pub;
	double build_s;
	int cached;
};

/* One kept Dockerfile: built (or found), pushed when there is a registry. */
static int build_one(struct run *r, const rm_model *m, const rm_dockerfile *df, size_t n_kept,
		     struct built *b, rm_error *err)
{
	char *safe = rm_file_safe(m->name);
	char *base = n_kept > 1 ? rm_xasprintf("%s_%s", safe, df->stem) : rm_xstrdup(safe);
	char *path = rm_runner__log_path(r, base, ".build.log"),
	     *link = rm_runner__log_link(r, base, ".build.log");
	json_t *args = rm_runner__build_args(r, m);
	rm_image_req req = {.model = m,
			    .df = df,
			    .image = b->mi.key,
			    .buildargs = args,
			    .nocache = r->o->clean_docker_cache,
			    .no_pull = r->o->no_pull,
			    .log = path};
	struct build_log *bl = rm_runner__build_log_open(r, m, path, link, err);
	double t0 = rm_now();
	int ret = -1;

	if (bl) {
		rm_runner__build_log_bind(bl, &req);
		if (r->o->registry)
			ret = rm_launcher_publish(&r->launcher, &req, r->o->registry, &b->pub, err);
		else
			ret = r->launcher.ops->prepare(r->launcher.state, &req, &b->pub.image_id,
						       &b->cached, err);
		if (ret < 0) {
			char *msg = rm_mask_string(&r->mask, rm_error_text(err));
			rm_runner__build_log_failed(bl, msg);
			rm_error_set(err, err->kind, "%s (see %s)", msg, path);
			free(msg);
		}
	}
	b->build_s = rm_now() - t0;
	rm_runner__build_log_close(bl);
	json_decref(args);
	free(path);
	free(link);
	free(base);
	free(safe);
	return ret;
}

/* Records one image in the manifest (and on the terminal); 1 when it failed. */
static int add_image(struct run *r, json_t *doc, const rm_model *m, struct built *b, int failed,
		     rm_build_result *res)
{
	rm_built_image *mi = &b->mi;
	int reused = b->pub.reused || (!r->o->registry && b->cached);

	mi->model = rm_xstrdup(m->name);
	mi->registry_image = rm_xstrdup(b->pub.ref);
	mi->digest = rm_xstrdup(b->pub.digest);
	mi->image_id = rm_xstrdup(b->pub.image_id);
	mi->failed = failed;
	rm_build_manifest_add(doc, mi, model_json(m), b->pub.fingerprint,
			      b->pub.reused    ? 0
			      : b->pub.build_s ? b->pub.build_s
					       : b->build_s,
			      b->pub.push_s, reused);
	if (failed) {
		res->n_failed++;
		rm_warn("image '%s' of model '%s' failed: %s", mi->key, m->name, mi->reason);
	} else {
		if (reused)
			res->n_reused++;
		else
			res->n_built++;
		rm_info("image '%s' of model '%s': %s%s", mi->key, m->name,
			b->pub.reused ? "in the registry already as "
			: b->pub.ref
			    ? (b->pub.cached ? "up to date, pushed as " : "built, pushed as ")
			: b->cached ? "up to date"
				    : "built",
			b->pub.ref ? b->pub.ref : "");
	}
	return failed;
}

static void built_release(struct built *b)
{
	rm_published_release(&b->pub);
	free(b->mi.key);
	free(b->mi.model);
	free(b->mi.dockerfile);
	free(b->mi.base_image);
	free(b->mi.registry_image);
	free(b->mi.digest);
	free(b->mi.image_id);
	free(b->mi.reason);
}

static void build_one_model(struct run *r, const rm_model *m, json_t *doc, rm_build_result *res)
{
	rm_dockerfile *dfs = NULL;
	size_t n = 0, kept = 0;
	rm_error err = RM_ERROR_INIT;

	rm_info("model '%s'", m->name);
	if (rm_dockerfiles_select(m->dockerfile, &r->ctx, &dfs, &n, &err) < 0) {
		char *safe = rm_file_safe(m->name);
		struct built b;
		memset(&b, 0, sizeof(b));
		b.mi.key = rm_xasprintf("ci-%s", safe);
		b.mi.reason = rm_xstrdup(rm_error_text(&err));
		add_image(r, doc, m, &b, 1, res);
		built_release(&b);
		free(safe);
	}
	for (size_t i = 0; i < n; i++)
		kept += dfs[i].kept != 0;
	for (size_t i = 0; i < n && !rm_signal_received(); i++) {
		struct built b;
		rm_error berr = RM_ERROR_INIT;
		if (!dfs[i].kept)
			continue;
		memset(&b, 0, sizeof(b));
		b.mi.key = rm_image_name(m->name, dfs[i].stem);
		b.mi.dockerfile = rm_xstrdup(dfs[i].path);
		b.mi.base_image = rm_xstrdup(dfs[i].base_image);
		if (build_one(r, m, &dfs[i], kept, &b, &berr) < 0)
			b.mi.reason =
			    rm_xstrdup(rm_signal_received() ? "interrupted" : rm_error_text(&berr));
		add_image(r, doc, m, &b, b.mi.reason != NULL, res);
		built_release(&b);
	}
	rm_dockerfiles_free(dfs, n);
}

static int build_all(struct run *r, rm_build_result *res, rm_error *err)
{
	const rm_run_opts *o = r->o;
	rm_launcher_config lc = {
	    .docker_host = o->docker_host, .ctx = &r->ctx, .run_id = r->run_id};
	json_t *ctx = build_image_context(r), *dep = rm_launcher_deployment(&r->ctx), *doc;
	int ret = 0;

	doc = rm_build_manifest_new(o->registry, ctx, dep);
	json_decref(ctx);
	json_decref(dep);
	if (rm_mkdirs(o->log_dir, err) < 0 ||
	    rm_launcher_open_named(&r->launcher, "docker", &lc, err) < 0) {
		json_decref(doc);
		return -1;
	}
	rm_launcher_engine_facts(&r->launcher, &r->ctx);
	rm_info("build %s: %zu model(s), %s%s%s", r->run_id, r->sel.n,
		r->launcher.ops->where(r->launcher.state), o->registry ? ", registry " : "",
		o->registry ? o->registry : "");
	for (size_t i = 0; i < r->sel.n && !rm_signal_received() && ret == 0; i++) {
		build_one_model(r, r->sel.items[i].model, doc, res);
		ret = rm_build_manifest_write(doc, o->manifest, err);
	}
	json_decref(doc);
	return ret;
}

int rm_runner_build(const rm_run_opts *o, rm_build_result *res, rm_error *err)
{
	struct run r;
	int ret = -1;

	memset(&r, 0, sizeof(r));
	memset(res, 0, sizeof(*res));
	r.o = o;
	rm_run_id_new(r.run_id, sizeof(r.run_id));
	r.secrets = rm_secrets_from_env(environ, &r.n_secrets);
	rm_runner__warn_short_secrets();
	rm_mask_init(&r.mask, (const char *const *)r.secrets, r.n_secrets);
	rm_runner__outcome_set_mask(&r.mask);
	rm_interrupt_set(rm_signal_cancelled, NULL);
	if (o->progress)
		r.progress_mode = isatty(STDERR_FILENO) && !o->live_output ? 1 : 2;
	rm_log_set_before(rm_runner__progress_clear);
	if (rm_registry_load(&r.reg, o->root, err) < 0 ||
	    rm_select(&r.reg, o->tags, o->n_tags, &r.sel, err) < 0 ||
	    rm_runner__load_context(&r, err) < 0)
		goto out;
	ret = build_all(&r, res, err);
	if (ret == 0 && rm_signal_received()) {
		res->interrupted = rm_signal_received();
		ret = rm_error_set(err, RM_ERR_NONE,
				   "interrupted by %s; the manifest '%s' lists "
				   "what was built",
				   rm_signal_name(), o->manifest);
	}
	if (ret == 0)
		rm_info("manifest '%s': %zu image(s) built, %zu up to date, %zu failed",
			o->manifest, res->n_built, res->n_reused, res->n_failed);
out:
	rm_runner__progress_clear();
	rm_log_set_before(NULL);
	rm_runner__outcome_set_mask(NULL);
	rm_interrupt_set(NULL, NULL);
	rm_launcher_close(&r.launcher);
	rm_mask_release(&r.mask);
	rm_strv_free(r.secrets);
	rm_context_release(&r.ctx);
	rm_selection_release(&r.sel);
	rm_registry_release(&r.reg);
	return ret;
}
