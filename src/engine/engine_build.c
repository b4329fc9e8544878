/*
 * POST /build (see rm/engine.h): the context tar uploaded, the JSON stream of the answer read
 * object by object.
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

#include "engine_internal.h"
#include "rm/engine.h"
#include "rm/util.h"

/* ---- build ---- */

struct build_state {
	const rm_build_opts *o;
	rm_buf line;   /* one JSON object of the stream */
	rm_lines text; /* "stream" texts assembled into lines */
	char *image_id;
	char *error;
	rm_error *err;
};

static void build_text_line(void *ud, const char *line, size_t len)
{
	struct build_state *b = ud;
	if (b->o->on_line)
		b->o->on_line(b->o->ud, line, len);
}

/* Pieces of an over-long build line go to the log as lines of their own. */
static void build_text_piece(void *ud, const char *line, size_t len, int kind)
{
	(void)kind;
	build_text_line(ud, line, len);
}

static void build_object(void *ud, const char *p, size_t n)
{
	struct build_state *b = ud;
	while (n && (p[0] == ' ' || p[0] == '\r' || p[0] == '\t')) {
		p++;
		n--;
	}
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\r' || p[n - 1] == '\t'))
		n--;
	if (!n)
		return;
	json_t *o = json_loadb(p, n, 0, NULL);
	if (!o || !json_is_object(o)) {
		/* Not what the engine sends; keep it for the build log rather than lose it. */
		json_decref(o);
		build_text_line(b, p, n);
		return;
	}
	json_t *detail = json_object_get(o, "errorDetail");
	const char *emsg = json_string_value(json_object_get(detail, "message"));
	if (!emsg)
		emsg = json_string_value(json_object_get(o, "error"));
	if (detail && !emsg)
		emsg = "the build failed (no message)";
	if (emsg && !b->error) {
		/* Podman's (buildah's) messages end in a line end: not in a perf row's reason. */
		size_t len = strlen(emsg);
		while (len &&
		       (emsg[len - 1] == '\n' || emsg[len - 1] == '\r' || emsg[len - 1] == ' '))
			len--;
		b->error = rm_xstrndup(emsg, len);
	}

	const char *stream = json_string_value(json_object_get(o, "stream"));
	if (stream)
		rm_lines_feed(&b->text, stream, json_string_length(json_object_get(o, "stream")),
			      build_text_piece, b);

	/* Pull progress of a FROM image: the status line, never the progress bar. */
	const char *status = json_string_value(json_object_get(o, "status"));
	if (status && !json_object_get(o, "progressDetail") && b->o->on_line) {
		const char *id = json_string_value(json_object_get(o, "id"));
		char *l = id ? rm_xasprintf("%s: %s", id, status) : rm_xstrdup(status);
		b->o->on_line(b->o->ud, l, strlen(l));
		free(l);
	}

	const char *aux_id = json_string_value(json_object_get(json_object_get(o, "aux"), "ID"));
	if (aux_id) {
		free(b->image_id);
		b->image_id = rm_xstrdup(aux_id);
	}
	json_decref(o);
}

static int build_data(void *ud, const char *p, size_t n)
{
	struct build_state *b = ud;
	return rm_engine__json_lines(&b->line, p, n, build_object, b, "a build output line",
				     b->err);
}

/* Appends "&key=<value, URL-encoded>"; 1 when the buffer is full. */
static int add_param(rm_buf *q, const char *key, const char *value)
{
	char *e = rm_engine__escape(value);
	int r = rm_buf_addf(q, "&%s=%s", key, e);
	free(e);
	return r < 0;
}

/* A JSON object as one URL-encoded query parameter (buildargs, labels); NULL adds nothing.
 * Non-zero when it does not fit. */
static int add_json_param(rm_buf *q, const char *key, json_t *value)
{
	char *js;
	int bad;

	if (!value)
		return 0;
	js = json_dumps(value, JSON_COMPACT);
	bad = !js || add_param(q, key, js);
	free(js);
	return bad;
}

/* The query of POST /build; non-zero when it would be too long. */
static int build_query(const rm_docker *d, const rm_build_opts *o, rm_buf *q)
{
	int bad = rm_buf_addstr(q, "/build?version=1&rm=1&forcerm=1") < 0;

	if (o->tag)
		bad |= add_param(q, "t", o->tag);
	if (o->dockerfile)
		bad |= add_param(q, "dockerfile", o->dockerfile);
	bad |= add_json_param(q, "buildargs", o->buildargs);
	if (o->nocache)
		bad |= rm_buf_addstr(q, "&nocache=1") < 0;
	if (o->networkmode)
		bad |= add_param(q, "networkmode", o->networkmode);
	bad |= add_json_param(q, "labels", o->labels);
	if (o->extrahosts && d->kind == RM_ENGINE_PODMAN) {
		/* Podman reads extrahosts as a JSON array of "name:ip" (Docker: one string)
		 * and answers 400 with no message to anything else. */
		json_t *hosts = json_pack("[s]", o->extrahosts);
		bad |= add_json_param(q, "extrahosts", hosts);
		json_decref(hosts);
	} else if (o->extrahosts) {
		bad |= add_param(q, "extrahosts", o->extrahosts);
	}
	return bad;
}

int rm_engine_build(rm_docker *d, const rm_build_opts *o, char **image_id, rm_error *err)
{
	int ret = -1, fd = -1;
	struct build_state b = {0};
	struct req r;
	rm_buf q = RM_BUF_INIT(1024 * 1024);
	struct stat st;

	b.o = o;
	b.err = err;
	rm_buf_init(&b.line, MAX_BUILD_JSON_LINE);
	rm_lines_init(&b.text, MAX_BUILD_TEXT_LINE);

	fd = open(o->context_tar, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		rm_error_sys(err, RM_ERR_IO, errno, "cannot open build context '%s'",
			     o->context_tar);
		goto out;
	}

	if (build_query(d, o, &q)) {
		rm_error_set(err, RM_ERR_INPUT, "the build arguments are too long");
		goto out;
	}

	/* No timeout: a build takes as long as it takes; cancel closes the connection, which
	 * makes the engine stop the build. */
	rm_engine__req_init(&r, "POST", rm_buf_str(&q), 0);
	r.content_type = "application/x-tar";
	r.upload_fd = fd;
	r.upload_size = (curl_off_t)st.st_size;
	r.on_data = build_data;
	r.ud = &b;
	r.cancel = o->cancel;
	r.cancel_ud = o->cancel_ud;
	ret = rm_engine__do_request(d, &r, err);
	if (ret < 0)
		goto out;
	ret = -1;
	build_object(&b, rm_buf_str(&b.line), b.line.len);
	rm_lines_flush(&b.text, build_text_piece, &b);
	if (b.error) {
		rm_error_set(err, RM_ERR_DOCKER, "POST /build: %s", b.error);
		goto out;
	}
	if (!b.image_id) {
		rm_error_set(
		    err, RM_ERR_DOCKER,
		    "POST /build: the engine reported no image id (is it using BuildKit?)");
		goto out;
	}
	*image_id = b.image_id;
	b.image_id = NULL;
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	rm_buf_release(&q);
	rm_buf_release(&b.line);
	rm_lines_release(&b.text);
	free(b.image_id);
	free(b.error);
	return ret;
}
