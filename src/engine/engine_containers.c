/*
 * Containers, images and archives (see rm/engine.h): the short calls.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>
#include <openssl/evp.h>

#include "engine_internal.h"
#include "rm/engine.h"
#include "rm/tar.h"
#include "rm/util.h"

/* ---- images and containers ---- */

int rm_engine_image_inspect(rm_docker *d, const char *name, json_t **out, rm_error *err)
{
	struct req r;
	char *path = rm_xasprintf("/images/%s/json", name);
	rm_engine__req_init(&r, "GET", path, SHORT_TIMEOUT);
	int ret = rm_engine__json_request(d, &r, out, err);
	if (ret < 0 && r.status == 404)
		rm_error_set(err, RM_ERR_INPUT, "no such image: %s", name);
	free(path);
	return ret;
}

int rm_engine_create(rm_docker *d, const char *name, json_t *body, char **id, rm_error *err)
{
	int ret = -1;
	struct req r;
	json_t *resp = NULL;
	char *path = NULL, *esc = NULL;
	char *js = json_dumps(body, JSON_COMPACT);

	if (!js) {
		rm_error_set(err, RM_ERR_INTERNAL, "cannot encode the container configuration");
		goto out;
	}
	if (name) {
		esc = rm_engine__escape(name);
		path = rm_xasprintf("/containers/create?name=%s", esc);
	} else {
		path = rm_xstrdup("/containers/create");
	}
	if (d->kind == RM_ENGINE_PODMAN) {
		int pr = rm_engine__podman_create(d, name, body, id, err);
		if (pr <= 0) {
			ret = pr;
			goto out;
		}
	}
	rm_engine__req_init(&r, "POST", path, SHORT_TIMEOUT);
	r.body = js;
	r.body_len = strlen(js);
	if (rm_engine__json_request(d, &r, &resp, err) < 0)
		goto out;
	const char *cid = json_string_value(json_object_get(resp, "Id"));
	if (!cid || !*cid) {
		rm_error_set(err, RM_ERR_DOCKER, "POST /containers/create: the answer has no Id");
		goto out;
	}
	json_t *warnings = json_object_get(resp, "Warnings");
	size_t i;
	json_t *w;
	json_array_foreach (warnings, i, w) {
		if (json_string_value(w) && *json_string_value(w))
			rm_warn("docker: %s", json_string_value(w));
	}
	*id = rm_xstrdup(cid);
	ret = 0;
out:
	json_decref(resp);
	free(js);
	free(path);
	free(esc);
	return ret;
}

/* A request on /containers/{id}<suffix> with an empty body and no interesting answer. */
static int container_call(rm_docker *d, const char *method, const char *id, const char *suffix,
			  long timeout, struct req *r, rm_error *err)
{
	char *esc = rm_engine__escape(id);
	char *path = rm_xasprintf("/containers/%s%s", esc, suffix);
	rm_engine__req_init(r, method, path, timeout);
	int ret = rm_engine__do_request(d, r, err);
	r->path = NULL;
	free(path);
	free(esc);
	return ret;
}

int rm_engine_start(rm_docker *d, const char *id, rm_error *err)
{
	struct req r;
	int ret = container_call(d, "POST", id, "/start", 2 * SHORT_TIMEOUT, &r, err);
	if (ret < 0 && r.status == 304) /* already started */
		ret = 0;
	return ret;
}

int rm_engine_kill(rm_docker *d, const char *id, const char *signal, rm_error *err)
{
	struct req r;
	char *esc = rm_engine__escape(signal ? signal : "SIGKILL");
	char *suffix = rm_xasprintf("/kill?signal=%s", esc);
	int ret = container_call(d, "POST", id, suffix, SHORT_TIMEOUT, &r, err);
	/* Podman: 500 "can only kill running containers. ... container state improper". */
	if (ret < 0 && ((r.status == 409 && strstr(r.engine_msg, "is not running")) ||
			(d->kind == RM_ENGINE_PODMAN && r.status == 500 &&
			 strstr(r.engine_msg, "container state improper")))) {
		rm_error_clear(err);
		ret = 0;
	}
	free(suffix);
	free(esc);
	return ret;
}

int rm_engine_remove(rm_docker *d, const char *id, rm_error *err)
{
	struct req r;
	int ret = container_call(d, "DELETE", id, "?force=1&v=1", LONG_TIMEOUT, &r, err);
	/* Gone already, or another remover got there first (AutoRemove, a cleanup pass). */
	if (ret < 0 &&
	    (r.status == 404 || (r.status == 409 && strstr(r.engine_msg, "already in progress")))) {
		rm_error_clear(err);
		ret = 0;
	}
	return ret;
}

int rm_engine_inspect(rm_docker *d, const char *id, json_t **out, rm_error *err)
{
	struct req r;
	char *esc = rm_engine__escape(id);
	char *path = rm_xasprintf("/containers/%s/json", esc);
	rm_engine__req_init(&r, "GET", path, SHORT_TIMEOUT);
	int ret = rm_engine__json_request(d, &r, out, err);
	free(path);
	free(esc);
	return ret;
}

int rm_engine_container_state(rm_docker *d, const char *id, rm_container_state *out, rm_error *err)
{
	struct req r;
	char *esc = rm_engine__escape(id), *path = rm_xasprintf("/containers/%s/json", esc);
	json_t *o = NULL;
	int ret;

	memset(out, 0, sizeof(*out));
	out->exit_code = -1;
	rm_engine__req_init(&r, "GET", path, SHORT_TIMEOUT);
	ret = rm_engine__json_request(d, &r, &o, err);
	if (ret < 0 && r.status == 404) {
		out->gone = 1;
		rm_error_clear(err);
		ret = 0;
	} else if (ret == 0) {
		json_t *st = json_object_get(o, "State");
		const char *status = json_string_value(json_object_get(st, "Status"));
		/* a forced removal marks the container "removing" before it kills it */
		out->gone = status && !strcmp(status, "removing");
		out->running =
		    json_is_true(json_object_get(st, "Running")) ||
		    (status && (!strcmp(status, "restarting") || !strcmp(status, "paused")));
		out->oom_killed = json_is_true(json_object_get(st, "OOMKilled"));
		if (json_is_integer(json_object_get(st, "ExitCode")))
			out->exit_code = (long)json_integer_value(json_object_get(st, "ExitCode"));
	}
	json_decref(o);
	free(path);
	free(esc);
	return ret < 0 ? -1 : 0;
}

int rm_engine_container_end(rm_docker *d, const char *id, int *gone, int *oom_killed, rm_error *err)
{
	rm_container_state cs;
	int ret = rm_engine_container_state(d, id, &cs, err);

	*gone = cs.gone;
	*oom_killed = cs.oom_killed;
	return ret;
}

int rm_engine_list_containers(rm_docker *d, const char *label, json_t **out, rm_error *err)
{
	int ret = -1;
	struct req r;
	json_t *resp = NULL;
	json_t *filters = label ? json_pack("{s:[s]}", "label", label) : NULL;
	char *js = filters ? json_dumps(filters, JSON_COMPACT) : NULL;
	char *esc = NULL, *path = NULL;

	if (label && !js) {
		rm_error_set(err, RM_ERR_INTERNAL, "cannot encode the label filter");
		goto out;
	}
	if (js) {
		esc = rm_engine__escape(js);
		path = rm_xasprintf("/containers/json?all=1&filters=%s", esc);
	} else {
		path = rm_xstrdup("/containers/json?all=1");
	}
	rm_engine__req_init(&r, "GET", path, SHORT_TIMEOUT);
	if (rm_engine__json_request(d, &r, &resp, err) < 0)
		goto out;
	if (!json_is_array(resp)) {
		rm_error_set(err, RM_ERR_DOCKER, "GET /containers/json: the answer is not a list");
		goto out;
	}
	*out = resp;
	resp = NULL;
	ret = 0;
out:
	json_decref(resp);
	json_decref(filters);
	free(js);
	free(esc);
	free(path);
	return ret;
}

int rm_engine_list_by_label(rm_docker *d, const char *label, char ***ids, size_t *n, rm_error *err)
{
	json_t *list = NULL, *c;
	char **v = rm_xcalloc(1, sizeof(*v));
	size_t i, k = 0;

	if (rm_engine_list_containers(d, label, &list, err) < 0) {
		free(v);
		return -1;
	}
	json_array_foreach (list, i, c) {
		const char *cid = json_string_value(json_object_get(c, "Id"));
		if (cid)
			v = rm_strv_push(v, &k, cid);
	}
	json_decref(list);
	*ids = v;
	if (n)
		*n = k;
	return 0;
}

/* ---- archives ---- */

int rm_engine_put_archive(rm_docker *d, const char *id, const char *path, const char *tar_path,
			  rm_error *err)
{
	int ret = -1, fd;
	struct stat st;
	struct req r;
	char *eid = NULL, *epath = NULL, *url = NULL;

	fd = open(tar_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		rm_error_sys(err, RM_ERR_IO, errno, "cannot open '%s'", tar_path);
		goto out;
	}
	eid = rm_engine__escape(id);
	epath = rm_engine__escape(path);
	url = rm_xasprintf("/containers/%s/archive?path=%s", eid, epath);
	rm_engine__req_init(&r, "PUT", url, LONG_TIMEOUT);
	r.content_type = "application/x-tar";
	r.upload_fd = fd;
	r.upload_size = (curl_off_t)st.st_size;
	ret = rm_engine__do_request(d, &r, err);
out:
	if (fd >= 0)
		close(fd);
	free(eid);
	free(epath);
	free(url);
	return ret;
}

struct archive_sink {
	int fd;
	size_t written, max;
	const char *path;
	rm_error *err;
};

static int archive_data(void *ud, const char *p, size_t n)
{
	struct archive_sink *s = ud;
	/* RM_ERR_IO, not RM_ERR_INPUT: the path exists (a missing one is RM_ERR_INPUT, 404) */
	if (n > s->max - s->written)
		return rm_error_set(
		    s->err, RM_ERR_IO,
		    "'%s' in the container is over the limit of %zu bytes (%zu MiB)", s->path,
		    s->max, s->max >> 20);
	s->written += n;
	while (n) {
		ssize_t w = write(s->fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return rm_error_sys(s->err, RM_ERR_IO, errno, "cannot write the archive");
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Go's os.ModeSymlink, in the mode of X-Docker-Container-Path-Stat. */
#define GO_MODE_SYMLINK (1UL << 27)

/*
 * Podman's GET /archive of a symbolic link sends what the link points to (Docker sends the
 * link). Its HEAD /archive says what the path is (X-Docker-Container-Path-Stat: base64 of
 * {"name", "mode", "linkTarget", ...}): a link is answered here as Docker answers it, a tar
 * of the link alone. 1 when the path is no link (or the engine does not say), 0 when the
 * link was written to out_fd, -1 on a failure (404: no such file).
 */
static int podman_archive_link(rm_docker *d, const char *url, const char *id, const char *path,
			       int out_fd, rm_error *err)
{
	struct req r;
	unsigned char *raw = NULL;
	json_t *st = NULL;
	int ret = 1, n;
	size_t len;

	rm_engine__req_init(&r, "HEAD", url, SHORT_TIMEOUT);
	if (rm_engine__do_request(d, &r, err) < 0) {
		if (r.status == 404)
			rm_error_set(err, RM_ERR_INPUT, "no such file: '%s' in container %.12s",
				     path, id);
		return -1;
	}
	len = strlen(r.path_stat);
	if (!len || len % 4)
		return 1;
	raw = rm_xmalloc(len / 4 * 3 + 1);
	n = EVP_DecodeBlock(raw, (const unsigned char *)r.path_stat, (int)len);
	if (n > 0) {
		while (n > 0 && raw[n - 1] == '\0') /* the padding decodes to NULs */
			n--;
		st = json_loadb((const char *)raw, (size_t)n, 0, NULL);
	}
	json_int_t mode = json_integer_value(json_object_get(st, "mode"));
	const char *target = json_string_value(json_object_get(st, "linkTarget"));
	if (st && ((unsigned long)mode & GO_MODE_SYMLINK) && target && *target) {
		const char *base = strrchr(path, '/');
		base = base && base[1] ? base + 1 : path;
		ret = rm_tar_symlink(base, target, out_fd, err);
	}
	json_decref(st);
	free(raw);
	return ret;
}

int rm_engine_get_archive(rm_docker *d, const char *id, const char *path, int out_fd,
			  size_t max_bytes, rm_error *err)
{
	struct req r;
	struct archive_sink sink = {out_fd, 0, max_bytes, path, err};
	char *eid = rm_engine__escape(id), *epath = rm_engine__escape(path);
	char *url = rm_xasprintf("/containers/%s/archive?path=%s", eid, epath);
	int ret =
	    d->kind == RM_ENGINE_PODMAN ? podman_archive_link(d, url, id, path, out_fd, err) : 1;

	if (ret <= 0)
		goto out;
	rm_engine__req_init(&r, "GET", url, LONG_TIMEOUT);
	r.on_data = archive_data;
	r.ud = &sink;
	ret = rm_engine__do_request(d, &r, err);
	if (ret < 0 && r.status == 404)
		rm_error_set(err, RM_ERR_INPUT, "no such file: '%s' in container %.12s", path, id);
out:
	free(eid);
	free(epath);
	free(url);
	return ret;
}

int rm_engine_image_save(rm_docker *d, const char *name, int out_fd, rm_error *err)
{
	struct req r;
	struct archive_sink sink = {out_fd, 0, (size_t)-1, name, err};
	char *ename = rm_engine__escape(name), *url = rm_xasprintf("/images/%s/get", ename);
	int ret;

	/* No timeout, as a build: an image of tens of GB takes as long as it takes. */
	rm_engine__req_init(&r, "GET", url, 0);
	r.on_data = archive_data;
	r.ud = &sink;
	ret = rm_engine__do_request(d, &r, err);
	if (ret < 0 && r.status == 404)
		rm_error_set(err, RM_ERR_INPUT, "no such image: '%s'", name);
	free(ename);
	free(url);
	return ret;
}
