/*
 * `run_models build --registry`: an image built once and pushed under its fingerprint, so
 * that every node pulls exactly what was built, and a later build of the same inputs finds
 * it in the registry and builds nothing (see rm_launcher_publish in rm/launcher.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docker_internal.h"
#include "rm/engine.h"
#include "rm/launcher.h"
#include "rm/util.h"

void rm_published_release(rm_published *p)
{
	if (!p)
		return;
	free(p->ref);
	free(p->digest);
	free(p->fingerprint);
	free(p->image_id);
	memset(p, 0, sizeof(*p));
}

static void docker_publish_say(const rm_image_req *req, const char *msg)
{
	if (req->on_line)
		req->on_line(req->ud, msg, strlen(msg));
}

/* Built (or found up to date locally), then tagged and pushed. */
static int build_and_push(struct docker_launcher *dl, const rm_image_req *req, const char *auth,
			  rm_published *out, rm_error *err)
{
	rm_image_xfer_opts o = RM_IMAGE_XFER_OPTS_INIT;
	double t0 = rm_now();

	o.auth = auth;
	o.on_line = req->on_line;
	o.ud = req->ud;
	o.cancel = req->poll;
	o.cancel_ud = req->ud;
	if (rm_launcher__docker_prepare(dl, req, &out->image_id, &out->cached, err) < 0)
		return -1;
	out->build_s = rm_now() - t0;
	t0 = rm_now();
	rm_info("pushing '%s'", out->ref);
	if (rm_engine_image_tag(dl->d, out->image_id, out->ref, err) < 0 ||
	    rm_engine_image_push(dl->d, out->ref, &o, &out->digest, err) < 0)
		return rm_error_wrap(err, "cannot push '%s'", out->ref);
	out->push_s = rm_now() - t0;
	return 0;
}

int rm_launcher_publish(rm_launcher *l, const rm_image_req *req, const char *registry,
			rm_published *out, rm_error *err)
{
	struct docker_launcher *dl = l->state;
	char fp[65], *auth = NULL, *host = NULL, *msg;
	const char *src = NULL;
	int r, ret = -1;

	memset(out, 0, sizeof(*out));
	if (l->ops != &rm_launcher_docker || !dl->d)
		return rm_error_set(err, RM_ERR_INTERNAL,
				    "images are pushed by the Docker launcher");
	if (rm_launcher__docker_fingerprint(dl, req, fp, err) < 0)
		return rm_error_wrap(err, "build context '%s'", req->model->dockercontext);
	out->fingerprint = rm_xstrdup(fp);
	out->ref = rm_xasprintf("%s/%s:%.16s", registry, req->image, fp);
	host = rm_image_ref_registry(out->ref);
	if (rm_engine_auth(host, &auth, &src, err) < 0)
		goto out;
	/* --clean-docker-cache rebuilds and pushes whatever the registry has. */
	r = req->nocache ? 1
			 : rm_engine_distribution_digest(dl->d, out->ref, auth, &out->digest, err);
	if (r < 0) {
		rm_error_wrap(err, "cannot ask registry '%s' for '%s' (credentials: %s)", registry,
			      out->ref, src);
		goto out;
	}
	if (r == 0) {
		out->reused = 1;
		msg = rm_xasprintf("run_models: registry '%s' has '%s' (%s), the fingerprint of "
				   "'%s' and its context: nothing built or pushed",
				   registry, out->ref, out->digest, req->df->path);
		docker_publish_say(req, msg);
		free(msg);
		rm_info("'%s' is in the registry already; build skipped", out->ref);
		ret = 0;
		goto out;
	}
	ret = build_and_push(dl, req, auth, out, err);
out:
	rm_engine_auth_free(auth);
	free(host);
	return ret;
}
