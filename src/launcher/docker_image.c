/*
 * Images for the Docker launcher: POST /build with the context tarred by libarchive, skipped
 * when the image's fingerprint label matches; an image given by reference, pulled when the
 * engine lacks it; and the dry run's docker CLI lines.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "docker_internal.h"
#include "rm/util.h"

extern char **environ;
#include "rm/engine.h"
#include "rm/tar.h"

#define FINGERPRINT_LABEL "run_models.fingerprint"

/* SHA-256 over the build context's metadata (rm_tar_context_fingerprint), the Dockerfile
 * name, the build args and the id of the base image as the engine has it now (a re-pulled
 * base makes a new fingerprint). */
int rm_launcher__docker_fingerprint(struct docker_launcher *dl, const rm_image_req *req,
				    char out[65], rm_error *err)
{
	rm_hash *h = rm_hash_new();
	char *js = json_dumps(req->buildargs, JSON_COMPACT | JSON_SORT_KEYS), *df_name = NULL;
	const char *base_image = req->df->base_image;
	json_t *base = NULL;
	rm_error ierr = RM_ERROR_INIT;
	int ret =
	    rm_tar_context_fingerprint(req->model->dockercontext, req->df->path, h, &df_name, err);

	if (ret == 0) {
		rm_hash_update(h, df_name, strlen(df_name) + 1);
		if (js)
			rm_hash_update(h, js, strlen(js) + 1);
		if (base_image && strcmp(base_image, "scratch") &&
		    rm_engine_image_inspect(dl->d, base_image, &base, &ierr) == 0) {
			const char *id = json_string_value(json_object_get(base, "Id"));
			if (id)
				rm_hash_update(h, id, strlen(id));
		}
	}
	json_decref(base);
	free(js);
	free(df_name);
	rm_hash_final_hex(h, out);
	return ret;
}

static int image_is_current(struct docker_launcher *dl, const char *image, const char *fp,
			    char **image_id)
{
	json_t *img = NULL;
	rm_error ierr = RM_ERROR_INIT;
	int current = 0;

	if (rm_engine_image_inspect(dl->d, image, &img, &ierr) == 0) {
		json_t *labels = json_object_get(json_object_get(img, "Config"), "Labels");
		const char *have = json_string_value(json_object_get(labels, FINGERPRINT_LABEL));
		const char *id = json_string_value(json_object_get(img, "Id"));
		if (have && id && !strcmp(have, fp)) {
			*image_id = rm_xstrdup(id);
			current = 1;
		}
	}
	json_decref(img);
	return current;
}

static void say(const rm_image_req *req, const char *msg)
{
	if (req->on_line)
		req->on_line(req->ud, msg, strlen(msg));
}

/* The id of an image the engine has, or NULL. */
static char *local_id(struct docker_launcher *dl, const char *ref)
{
	json_t *img = NULL;
	rm_error ierr = RM_ERROR_INIT;
	char *id = NULL;

	if (rm_engine_image_inspect(dl->d, ref, &img, &ierr) == 0)
		id = rm_xstrdup(json_string_value(json_object_get(img, "Id")));
	json_decref(img);
	return id;
}

/* Pulls an image the engine lacks, as `docker run` would: ":latest" when ref names no tag
 * (a digest pins exactly what runs), credentials as for pushes (rm_engine_auth). */
static int pull_given(struct docker_launcher *dl, const rm_image_req *req, char **image_id,
		      rm_error *err)
{
	char *repo = NULL, *tag = NULL, *ref = NULL, *reg = NULL, *auth = NULL;
	const char *src = NULL;
	rm_image_xfer_opts o = RM_IMAGE_XFER_OPTS_INIT;
	int ret = -1;

	o.on_line = req->on_line;
	o.ud = req->ud;
	o.cancel = req->poll;
	o.cancel_ud = req->ud;
	if (rm_image_ref_split(req->image, &repo, &tag) < 0 ||
	    rm_starts_with(req->image, "sha256:")) {
		rm_error_set(err, RM_ERR_INPUT, "'%s' cannot be pulled by that name", req->image);
		goto out;
	}
	ref = tag ? rm_xstrdup(req->image) : rm_xasprintf("%s:latest", req->image);
	reg = rm_image_ref_registry(ref);
	if (rm_engine_auth(reg, &auth, &src, err) < 0)
		goto out;
	o.auth = auth;
	rm_info("pulling '%s' from %s (credentials: %s)", ref, reg, src);
	if (rm_engine_image_pull(dl->d, ref, &o, NULL, err) < 0)
		goto out;
	if (!(*image_id = local_id(dl, ref))) {
		rm_error_set(err, RM_ERR_DOCKER, "pulled '%s' but the engine does not list it",
			     ref);
		goto out;
	}
	ret = 0;
out:
	if (ret < 0)
		rm_error_wrap(err,
			      "image '%s' is not on the engine at %s and pulling it failed (check "
			      "the name, the registry and its credentials)",
			      req->image, rm_engine_host(dl->d));
	rm_engine_auth_free(auth);
	free(reg);
	free(ref);
	free(tag);
	free(repo);
	return ret;
}

/* An image given as it is (MAD_CONTAINER_IMAGE, a build manifest's entry): its id, pulled
 * when the engine lacks it; nothing built. *cached: it was there. */
static int given_image(struct docker_launcher *dl, const rm_image_req *req, char **image_id,
		       int *cached, rm_error *err)
{
	char *msg;

	*image_id = local_id(dl, req->image);
	*cached = *image_id != NULL;
	if (!*cached && pull_given(dl, req, image_id, err) < 0)
		return -1;
	msg = rm_xasprintf("run_models: image '%s' (%s)%s; nothing built", req->image, *image_id,
			   *cached ? " is on this engine" : " pulled");
	say(req, msg);
	rm_info("image '%s' (%s) given as it is; nothing built", req->image, *image_id);
	free(msg);
	return 0;
}

/*
 * madengine builds with `docker build --pull`: the base image is pulled again so that a
 * newer one in its registry is built on. Done here before the fingerprint (which holds the
 * base image's id, so a newer base rebuilds the image), once per base image and run. Only
 * an image the engine got from a registry (it has RepoDigests) is pulled: one built or
 * loaded here has nowhere to come from, one the engine lacks is pulled by the build itself,
 * one pinned by digest cannot change. A registry out of reach (no network) is warned about
 * and the build goes on with the engine's copy: such a host keeps working.
 */
static void refresh_base(struct docker_launcher *dl, const rm_image_req *req)
{
	const char *base = req->df->base_image;
	char *repo = NULL, *tag = NULL, *ref = NULL, *reg = NULL, *auth = NULL, *msg;
	const char *src = NULL;
	json_t *img = NULL;
	rm_error err = RM_ERROR_INIT;
	rm_image_xfer_opts o = RM_IMAGE_XFER_OPTS_INIT;

	o.cancel = req->poll;
	o.cancel_ud = req->ud;
	if (req->no_pull || !base || !strcmp(base, "scratch") || strchr(base, '@'))
		return;
	for (size_t i = 0; i < dl->n_pulled; i++)
		if (!strcmp(dl->pulled[i], base))
			return;
	if (!dl->pulled)
		dl->pulled = rm_xcalloc(1, sizeof(*dl->pulled));
	dl->pulled = rm_strv_push(dl->pulled, &dl->n_pulled, base);
	if (rm_engine_image_inspect(dl->d, base, &img, &err) < 0 ||
	    !json_array_size(json_object_get(img, "RepoDigests")))
		goto out;
	if (rm_image_ref_split(base, &repo, &tag) < 0)
		goto out;
	ref = tag ? rm_xstrdup(base) : rm_xasprintf("%s:latest", base);
	reg = rm_image_ref_registry(ref);
	if (rm_engine_auth(reg, &auth, &src, &err) == 0) {
		o.auth = auth;
		if (rm_engine_image_pull(dl->d, ref, &o, NULL, &err) == 0) {
			msg =
			    rm_xasprintf("run_models: base image '%s' pulled from %s (a newer one "
					 "rebuilds the image; --no-pull builds on the engine's "
					 "copy)",
					 ref, reg);
			say(req, msg);
			free(msg);
			goto out;
		}
	}
	msg = rm_xasprintf("run_models: cannot pull base image '%s' from %s (%s); building on "
			   "the engine's copy (--no-pull skips the pull)",
			   ref, reg, rm_error_text(&err));
	say(req, msg);
	rm_warn("%s", msg + strlen("run_models: "));
	free(msg);
out:
	json_decref(img);
	rm_engine_auth_free(auth);
	free(reg);
	free(ref);
	free(tag);
	free(repo);
}

/* A failed build, or the engine went away under it: ask, and say which (RM_LAUNCH_LOST). */
static int docker_build_failed(struct docker_launcher *dl, const rm_image_req *req, int ret,
			       rm_error *err)
{
	rm_error perr = RM_ERROR_INIT;

	if (rm_interrupt_pending() || (req->poll && req->poll(req->ud)) ||
	    rm_engine_ping(dl->d, &perr) >= 0)
		return ret;
	char *why = rm_xstrdup(rm_error_text(err));
	rm_error_set(err, RM_ERR_DOCKER,
		     "lost the engine at %s while building the image (%s): the build "
		     "did not finish; the next run removes what the engine kept of "
		     "it",
		     rm_engine_host(dl->d), why);
	free(why);
	return RM_LAUNCH_LOST;
}

/* POST /build of req's Dockerfile with its context, tarred into a temporary file. */
static int docker_build(struct docker_launcher *dl, const rm_image_req *req, json_t *labels,
			char **image_id, rm_error *err)
{
	const char *ctx_dir = req->model->dockercontext;
	char *tar_path = NULL, *df_name = NULL, *mark = NULL, *extrahosts = NULL;
	rm_build_opts bo = RM_BUILD_OPTS_INIT;
	int fd, ret = -1;

	fd = rm_make_temp(&tar_path, err);
	if (fd < 0)
		goto out;
	if (rm_tar_build_context(ctx_dir, req->df->path, fd, &df_name, err) < 0) {
		rm_error_wrap(err, "build context '%s'", ctx_dir);
		goto out;
	}
	rm_info("building '%s' from '%s' (log: %s)", req->image, req->df->path, req->log);
	mark = rm_launcher__docker_build_mark(dl);
	extrahosts = rm_xasprintf("%s:127.0.0.1", mark);
	bo.labels = labels;
	bo.extrahosts = extrahosts;
	bo.context_tar = tar_path;
	bo.dockerfile = df_name;
	bo.tag = req->image;
	bo.buildargs = req->buildargs;
	bo.nocache = req->nocache;
	bo.networkmode = "host";
	bo.on_line = req->on_line;
	bo.ud = req->ud;
	bo.cancel = req->poll;
	bo.cancel_ud = req->ud;
	ret = rm_engine_build(dl->d, &bo, image_id, err);
	if (ret < 0)
		ret = docker_build_failed(dl, req, ret, err);
out:
	if (fd >= 0)
		close(fd);
	if (tar_path)
		unlink(tar_path);
	free(tar_path);
	free(df_name);
	free(mark);
	free(extrahosts);
	return ret;
}

int rm_launcher__docker_prepare(void *state, const rm_image_req *req, char **image_id, int *cached,
				rm_error *err)
{
	struct docker_launcher *dl = state;
	json_t *labels;
	char fp[65];
	int ret = -1;

	*cached = 0;
	if (!req->df)
		return given_image(dl, req, image_id, cached, err);
	labels = json_object();
	refresh_base(dl, req);
	/* The image is up to date when its fingerprint label matches the context, the build
	 * args and the base image as they are now: skip the build (a fully cached build still
	 * costs the engine a context upload and a cache lookup per step). */
	if (rm_launcher__docker_fingerprint(dl, req, fp, err) < 0) {
		rm_error_wrap(err, "build context '%s'", req->model->dockercontext);
		goto out;
	}
	json_object_set_new(labels, FINGERPRINT_LABEL, json_string(fp));
	/* Which run and runner built it. Not the containers' labels: containers inherit their
	 * image's labels, and one a user starts from the image must not look like ours. */
	json_object_set_new(labels, "run_models.built_by_run", json_string(dl->cfg.run_id));
	json_object_set_new(labels, "run_models.built_by",
			    json_pack("s++", dl->host, "/", dl->pid));
	if (!req->nocache && image_is_current(dl, req->image, fp, image_id)) {
		char *msg = rm_xasprintf("run_models: image '%s' (%s) is up to date with '%s' and "
					 "its context (fingerprint %s); build skipped, "
					 "--clean-docker-cache rebuilds it",
					 req->image, *image_id, req->df->path, fp);
		req->on_line(req->ud, msg, strlen(msg));
		free(msg);
		rm_info("image '%s' is up to date; build skipped", req->image);
		*cached = 1;
		ret = 0;
		goto out;
	}
	ret = docker_build(dl, req, labels, image_id, err);
out:
	json_decref(labels);
	return ret;
}

void rm_launcher__docker_plan(const rm_context *ctx, const rm_image_req *req,
			      const rm_job_spec *spec, FILE *out)
{
	json_t *body = NULL;
	rm_error err = RM_ERROR_INIT;
	const char *cli = ctx->engine == RM_ENGINE_PODMAN ? "podman" : "docker";

	if (req->df) {
		char *js = json_dumps(req->buildargs, JSON_COMPACT | JSON_SORT_KEYS);
		char *build =
		    rm_build_cmdline_for(cli, req->image, req->df->path, req->model->dockercontext,
					 req->buildargs, NULL, req->nocache, !req->no_pull);
		fprintf(out, "  dockerfile: %s (base image %s%s)\n", req->df->path,
			req->df->base_image ? req->df->base_image : "unknown",
			req->df->context_req ? "" : "; no CONTEXT line: kept for every context");
		fprintf(out, "  build args: %s\n", js ? js : "{}");
		fprintf(out, "  %s\n", build);
		free(build);
		free(js);
	} else {
		fprintf(out,
			"  image: %s (given as it is: nothing built; pulled when the engine lacks "
			"it)\n",
			req->image);
	}
	if (!spec) /* the image only (a card whose script starts its own containers) */
		return;
	if (rm_workload_render(spec->w, ctx, (const char *const *)environ, &body, &err) < 0) {
		fprintf(out, "  would fail: %s\n", rm_error_text(&err));
	} else {
		char *run = rm_run_cmdline_for(cli, body, spec->name);
		fprintf(out, "  %s\n", run);
		free(run);
	}
	json_decref(body);
}
