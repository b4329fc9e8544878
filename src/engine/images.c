/*
 * Images and registries through the Engine API (see rm/engine.h): tag, push, pull, the
 * registry's digest of a reference, removal (credentials: image_auth.c).
 *
 * Push and pull answer 200 at once and then stream JSON objects, one per line; a failure
 * (registry unreachable, unauthorized, unknown manifest) comes as an errorDetail object
 * INSIDE that 200 stream, exactly as for /build.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "engine_internal.h"
#include "rm/engine.h"
#include "rm/util.h"

#define MAX_XFER_JSON_LINE (1024u * 1024)
#define NO_AUTH		   "e30=" /* base64 of {} */

/* ---- references ---- */

int rm_image_ref_split(const char *ref, char **repo, char **tag)
{
	const char *at, *slash, *colon;

	*repo = *tag = NULL;
	if (!ref || !*ref)
		return -1;
	at = strchr(ref, '@');
	if (at) {
		if (at == ref || !at[1])
			return -1;
		*repo = rm_xstrndup(ref, (size_t)(at - ref));
		*tag = rm_xstrdup(at + 1);
		return 0;
	}
	/* A ':' after the last '/' separates the tag; one before it is a registry port. */
	slash = strrchr(ref, '/');
	colon = strrchr(slash ? slash : ref, ':');
	if (colon) {
		if (colon == ref || !colon[1])
			return -1;
		*repo = rm_xstrndup(ref, (size_t)(colon - ref));
		*tag = rm_xstrdup(colon + 1);
		return 0;
	}
	*repo = rm_xstrdup(ref);
	return 0;
}

char *rm_image_ref_registry(const char *ref)
{
	size_t n = strcspn(ref, "/");

	if (ref[n] == '/' && (memchr(ref, '.', n) || memchr(ref, ':', n) ||
			      (n == 9 && !memcmp(ref, "localhost", 9))))
		return rm_xstrndup(ref, n);
	return rm_xstrdup("docker.io");
}

int rm_image_tag_valid(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n == 0 || n > 128 || s[0] == '.' || s[0] == '-')
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return 0;
	}
	return 1;
}

/* An image name in a URL path: the engine's routes take slashes and colons as they are
 * ("/images/127.0.0.1:5000/a/b/push"); anything else unusual is percent-encoded. */
static char *path_escape(const char *s)
{
	rm_buf b = RM_BUF_INIT(64 * 1024);

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr("._~/:@-", c))
			rm_buf_addch(&b, (char)c);
		else
			rm_buf_addf(&b, "%%%02X", c);
	}
	return rm_buf_detach(&b);
}

/* ---- streams of push and pull ---- */

struct xfer {
	const rm_image_xfer_opts *o;
	rm_buf line; /* one JSON object of the stream */
	char *error; /* the first error message */
	char *digest;
	rm_error *err;
};

static void xfer_line(struct xfer *x, const char *s)
{
	if (x->o && x->o->on_line)
		x->o->on_line(x->o->ud, s, strlen(s));
}

static void xfer_object(void *ud, const char *p, size_t n)
{
	struct xfer *x = ud;
	json_t *o;

	while (n && (p[0] == ' ' || p[0] == '\r' || p[0] == '\t'))
		p++, n--;
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\r' || p[n - 1] == '\t'))
		n--;
	if (!n)
		return;
	o = json_loadb(p, n, 0, NULL);
	if (!json_is_object(o)) {
		char *s = rm_xstrndup(p, n);
		xfer_line(x, s);
		free(s);
		json_decref(o);
		return;
	}
	json_t *detail = json_object_get(o, "errorDetail");
	const char *emsg = json_string_value(json_object_get(detail, "message"));
	if (!emsg)
		emsg = json_string_value(json_object_get(o, "error"));
	if (detail && !emsg)
		emsg = "(no message)";
	if (emsg && !x->error) {
		/* Podman's messages may end in a line end: not in a message's middle. */
		size_t len = strlen(emsg);
		while (len &&
		       (emsg[len - 1] == '\n' || emsg[len - 1] == '\r' || emsg[len - 1] == ' '))
			len--;
		x->error = rm_xstrndup(emsg, len);
	}

	/* Status lines, but not the progress bars ("Pushing [==>  ]" with current/total). */
	const char *status = json_string_value(json_object_get(o, "status"));
	json_t *pd = json_object_get(o, "progressDetail");
	if (status && !json_object_get(pd, "current") && !json_object_get(pd, "total")) {
		const char *id = json_string_value(json_object_get(o, "id"));
		char *l = id ? rm_xasprintf("%s: %s", id, status) : rm_xstrdup(status);
		xfer_line(x, l);
		free(l);
		/* Pull: "Digest: sha256:..." */
		if (rm_starts_with(status, "Digest: sha256:")) {
			free(x->digest);
			x->digest = rm_xstrdup(status + 8);
		}
		/* Push: "<tag>: digest: sha256:... size: N", Podman's only word of it (Docker
		 * also sends the aux object below, which comes later and wins). */
		const char *dg = strstr(status, ": digest: sha256:");
		if (dg) {
			dg += strlen(": digest: ");
			free(x->digest);
			x->digest = rm_xstrndup(dg, strcspn(dg, " "));
		}
	}
	/* Push: {"aux":{"Tag":"t","Digest":"sha256:...","Size":N}} */
	const char *dg = json_string_value(json_object_get(json_object_get(o, "aux"), "Digest"));
	if (dg) {
		free(x->digest);
		x->digest = rm_xstrdup(dg);
	}
	json_decref(o);
}

static int xfer_data(void *ud, const char *p, size_t n)
{
	struct xfer *x = ud;
	return rm_engine__json_lines(&x->line, p, n, xfer_object, x, "a progress line", x->err);
}

/* Runs a push or pull request (path, already encoded) and reads its stream. */
static int xfer_run(rm_docker *d, const char *path, const rm_image_xfer_opts *o, struct xfer *x,
		    struct req *r, rm_error *err)
{
	char *hdr = rm_xasprintf("X-Registry-Auth: %s", o && o->auth ? o->auth : NO_AUTH);
	const char *hdrs[] = {hdr, NULL};
	int ret;

	x->o = o;
	x->err = err;
	rm_buf_init(&x->line, MAX_XFER_JSON_LINE);
	/* No timeout: big layers take as long as they take; cancel closes the connection. */
	rm_engine__req_init(r, "POST", path, 0);
	r->headers = hdrs;
	r->on_data = xfer_data;
	r->ud = x;
	if (o) {
		r->cancel = o->cancel;
		r->cancel_ud = o->cancel_ud;
	}
	ret = rm_engine__do_request(d, r, err);
	if (ret == 0)
		xfer_object(x, rm_buf_str(&x->line), x->line.len);
	rm_buf_release(&x->line);
	rm_engine_auth_free(hdr); /* it carries the credentials */
	return ret;
}

int rm_engine_image_tag(rm_docker *d, const char *source, const char *ref, rm_error *err)
{
	char *repo = NULL, *tag = NULL, *src = NULL, *erepo = NULL, *etag = NULL, *path = NULL;
	struct req r;
	int ret = -1;

	if (rm_image_ref_split(ref, &repo, &tag) < 0 || (tag && rm_starts_with(tag, "sha256:"))) {
		rm_error_set(err, RM_ERR_INPUT,
			     "cannot tag '%s' as '%s': not a NAME[:TAG] reference", source, ref);
		goto out;
	}
	src = path_escape(source);
	erepo = rm_engine__escape(repo);
	etag = rm_engine__escape(tag ? tag : "latest");
	path = rm_xasprintf("/images/%s/tag?repo=%s&tag=%s", src, erepo, etag);
	rm_engine__req_init(&r, "POST", path, SHORT_TIMEOUT);
	ret = rm_engine__do_request(d, &r, err);
	if (ret < 0 && r.status == 404)
		rm_error_set(err, RM_ERR_INPUT, "cannot tag '%s': no such image", source);
out:
	free(repo);
	free(tag);
	free(src);
	free(erepo);
	free(etag);
	free(path);
	return ret;
}

int rm_engine_image_push(rm_docker *d, const char *ref, const rm_image_xfer_opts *o, char **digest,
			 rm_error *err)
{
	char *repo = NULL, *tag = NULL, *erepo = NULL, *etag = NULL, *path = NULL;
	struct xfer x = {0};
	struct req r;
	int ret = -1;

	if (rm_image_ref_split(ref, &repo, &tag) < 0 || !tag || rm_starts_with(tag, "sha256:")) {
		rm_error_set(err, RM_ERR_INPUT, "cannot push '%s': name it HOST:PORT/NAME:TAG",
			     ref);
		goto out;
	}
	erepo = path_escape(repo);
	etag = rm_engine__escape(tag);
	path = rm_xasprintf("/images/%s/push?tag=%s", erepo, etag);
	ret = xfer_run(d, path, o, &x, &r, err);
	if (ret < 0) {
		if (r.status == 404)
			rm_error_set(err, RM_ERR_INPUT, "cannot push '%s': no such local image",
				     ref);
		goto out;
	}
	ret = -1;
	if (x.error) {
		rm_error_set(err, RM_ERR_DOCKER, "pushing '%s': %s", ref, x.error);
		goto out;
	}
	if (!x.digest) {
		rm_error_set(err, RM_ERR_DOCKER, "pushing '%s': the engine reported no digest",
			     ref);
		goto out;
	}
	*digest = x.digest;
	x.digest = NULL;
	ret = 0;
out:
	free(x.error);
	free(x.digest);
	free(repo);
	free(tag);
	free(erepo);
	free(etag);
	free(path);
	return ret;
}

/* Messages that mean "the registry does not have it" (manifest or repository unknown). */
static int says_not_found(const char *msg)
{
	return strstr(msg, "manifest unknown") || strstr(msg, "not found") ||
	       strstr(msg, "name unknown") || strstr(msg, "repository does not exist");
}

int rm_engine_image_pull(rm_docker *d, const char *ref, const rm_image_xfer_opts *o, char **digest,
			 rm_error *err)
{
	char *repo = NULL, *tag = NULL, *erepo = NULL, *etag = NULL, *path = NULL;
	struct xfer x = {0};
	struct req r;
	int ret = -1;

	if (digest)
		*digest = NULL;
	if (rm_image_ref_split(ref, &repo, &tag) < 0 || !tag) {
		rm_error_set(err, RM_ERR_INPUT,
			     "cannot pull '%s': name a tag or a digest (NAME:TAG, NAME@sha256:...)",
			     ref);
		goto out;
	}
	erepo = rm_engine__escape(repo);
	etag = rm_engine__escape(tag);
	path = rm_xasprintf("/images/create?fromImage=%s&tag=%s", erepo, etag);
	ret = xfer_run(d, path, o, &x, &r, err);
	if (ret < 0) {
		if (r.status == 404 || says_not_found(r.engine_msg))
			rm_error_set(err, RM_ERR_INPUT,
				     "cannot pull '%s': the registry does not have it (%s)", ref,
				     r.engine_msg);
		goto out;
	}
	ret = -1;
	if (x.error) {
		rm_error_set(err, says_not_found(x.error) ? RM_ERR_INPUT : RM_ERR_DOCKER,
			     "pulling '%s': %s", ref, x.error);
		goto out;
	}
	if (digest) {
		*digest = x.digest;
		x.digest = NULL;
	}
	ret = 0;
out:
	free(x.error);
	free(x.digest);
	free(repo);
	free(tag);
	free(erepo);
	free(etag);
	free(path);
	return ret;
}

int rm_engine_distribution_digest(rm_docker *d, const char *ref, const char *auth, char **digest,
				  rm_error *err)
{
	char *eref = path_escape(ref);
	char *path = rm_xasprintf("/distribution/%s/json", eref);
	char *hdr = rm_xasprintf("X-Registry-Auth: %s", auth ? auth : NO_AUTH);
	const char *hdrs[] = {hdr, NULL};
	json_t *resp = NULL;
	struct req r;
	int ret;

	*digest = NULL;
	rm_engine__req_init(&r, "GET", path, SHORT_TIMEOUT);
	r.headers = hdrs;
	ret = rm_engine__json_request(d, &r, &resp, err);
	if (ret < 0 && d->kind == RM_ENGINE_PODMAN && r.status == 404 && !r.engine_json) {
		/* Podman before 4.4 has no /distribution (its router's plain 404): the registry
		 * cannot be asked, so the image is not known to be there (built and pushed; the
		 * registry is sent only the layers it lacks). */
		rm_error_clear(err);
		rm_info("Podman %s cannot ask the registry for '%s' (no GET /distribution): "
			"pushing it",
			d->product_version, ref);
		ret = 1;
		goto out;
	}
	if (ret < 0) {
		if (r.status == 404 || (r.status >= 400 && says_not_found(r.engine_msg))) {
			rm_error_clear(err);
			ret = 1;
		}
		goto out;
	}
	const char *dg =
	    json_string_value(json_object_get(json_object_get(resp, "Descriptor"), "digest"));
	if (!dg || !rm_starts_with(dg, "sha256:")) {
		ret = rm_error_set(err, RM_ERR_DOCKER,
				   "GET /distribution/%s/json: the answer has no Descriptor.digest",
				   ref);
		goto out;
	}
	*digest = rm_xstrdup(dg);
out:
	json_decref(resp);
	rm_engine_auth_free(hdr); /* it carries the credentials */
	free(eref);
	free(path);
	return ret;
}

int rm_engine_image_remove(rm_docker *d, const char *name, int force, rm_error *err)
{
	char *ename = path_escape(name);
	char *path = rm_xasprintf("/images/%s%s", ename, force ? "?force=1" : "");
	struct req r;
	int ret;

	rm_engine__req_init(&r, "DELETE", path, SHORT_TIMEOUT);
	ret = rm_engine__do_request(d, &r, err);
	if (ret < 0 && r.status == 404) {
		rm_error_clear(err);
		ret = 0;
	}
	free(ename);
	free(path);
	return ret;
}
