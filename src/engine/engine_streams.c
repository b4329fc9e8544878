/*
 * The long calls (see rm/engine.h): container output (logs, attach) and wait.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "engine_internal.h"
#include "rm/engine.h"
#include "rm/util.h"

/* ---- logs and wait ---- */

struct logs_state {
	rm_frame_decoder dec;
	rm_frame_cb cb;
	void *ud;
	rm_error *err;
};

static int logs_data(void *ud, const char *p, size_t n)
{
	struct logs_state *s = ud;
	if (rm_frame_feed(&s->dec, p, n, s->cb, s->ud) < 0)
		return rm_error_set(s->err, RM_ERR_DOCKER,
				    "the log stream has a frame of unknown type %u (is the "
				    "container a tty?)",
				    (unsigned)s->dec.hdr[0]);
	return 0;
}

/* A long request whose body is a container's output stream (logs, attach), decoded into cb. */
static void stream_req_init(struct req *r, struct logs_state *s, const char *method,
			    const char *url, int tty, rm_frame_cb cb, void *ud,
			    rm_engine_cancel_fn cancel, void *cancel_ud, rm_error *err)
{
	rm_frame_init(&s->dec, tty);
	s->cb = cb;
	s->ud = ud;
	s->err = err;
	rm_engine__req_init(r, method, url, 0);
	r->on_data = logs_data;
	r->ud = s;
	r->cancel = cancel;
	r->cancel_ud = cancel_ud;
}

/* A stream that ended in the middle of a frame lost output: an error, not a clean end. */
static int stream_check_end(int ret, const struct logs_state *s, const char *what, const char *id,
			    rm_error *err)
{
	if (ret == 0 && rm_frame_incomplete(&s->dec))
		return rm_error_set(err, RM_ERR_DOCKER,
				    "%s /containers/%.12s: the stream ended inside a frame", what,
				    id);
	return ret;
}

/* A container's output stream to its end: method on /containers/ID/<what>. */
static int follow(rm_docker *d, const char *method, const char *what, const char *label,
		  const char *id, int tty, rm_frame_cb cb, void *ud, rm_engine_cancel_fn cancel,
		  void *cancel_ud, rm_error *err)
{
	struct req r;
	struct logs_state s;
	char *eid = rm_engine__escape(id);
	char *url = rm_xasprintf("/containers/%s/%s", eid, what);
	int ret;

	stream_req_init(&r, &s, method, url, tty, cb, ud, cancel, cancel_ud, err);
	ret = stream_check_end(rm_engine__do_request(d, &r, err), &s, label, id, err);
	free(eid);
	free(url);
	return ret;
}

int rm_engine_logs(rm_docker *d, const char *id, int tty, rm_frame_cb cb, void *ud,
		   rm_engine_cancel_fn cancel, void *cancel_ud, rm_error *err)
{
	return follow(d, "GET", "logs?follow=1&stdout=1&stderr=1", "GET logs of", id, tty, cb, ud,
		      cancel, cancel_ud, err);
}

int rm_engine_attach(rm_docker *d, const char *id, int tty, rm_frame_cb cb, void *ud,
		     rm_engine_cancel_fn cancel, void *cancel_ud, rm_error *err)
{
	return follow(d, "POST", "attach?stream=1&stdout=1&stderr=1", "POST attach to", id, tty, cb,
		      ud, cancel, cancel_ud, err);
}

/* The result of the transfer once curl reports it done (unchanged otherwise). */
static void multi_done(CURLM *m, CURLcode *rc)
{
	CURLMsg *msg;
	int left;
	while ((msg = curl_multi_info_read(m, &left)))
		if (msg->msg == CURLMSG_DONE)
			*rc = msg->data.result;
}

/*
 * Attaches to a created container, starts it once the engine has answered the attach (the
 * engine writes the response headers only after the attach streams are set up, so no output
 * is lost), and streams until the container's output ends. Driven by a curl multi handle so
 * the start request can go out while the attach transfer is open. Cheaper for the engine
 * than logs?follow, which re-reads and decodes the container's json log file.
 */
int rm_engine_attach_start(rm_docker *d, const char *id, int tty, rm_frame_cb cb, void *ud,
			   rm_engine_cancel_fn cancel, void *cancel_ud, rm_error *err)
{
	struct req r;
	struct logs_state s;
	char *eid = rm_engine__escape(id);
	char *url = rm_xasprintf("/containers/%s/attach?stream=1&stdout=1&stderr=1", eid);
	CURLM *m = NULL;
	CURLcode rc = CURLE_OK;
	int ret = -1, started = 0, running = 1;

	stream_req_init(&r, &s, "POST", url, tty, cb, ud, cancel, cancel_ud, err);
	if (rm_engine__req_prepare(d, &r, err) < 0)
		goto out;
	m = curl_multi_init();
	if (!m || curl_multi_add_handle(m, r.curl) != CURLM_OK) {
		rm_error_set(err, RM_ERR_INTERNAL, "cannot create a curl multi handle");
		goto out;
	}
	while (running) {
		if (curl_multi_perform(m, &running) != CURLM_OK) {
			rm_error_set(err, RM_ERR_INTERNAL, "curl multi transfer failed");
			goto out;
		}
		multi_done(m, &rc);
		if (!started) {
			long status = 0;
			curl_easy_getinfo(r.curl, CURLINFO_RESPONSE_CODE, &status);
			if (status && rm_engine__is_2xx(status)) {
				started = 1;
				if (rm_engine_start(d, id, err) < 0)
					goto out;
			} else if (status || !running) {
				break; /* an error answer: req_complete reports it */
			}
		}
		if (running && curl_multi_poll(m, NULL, 0, POLL_MS, NULL) != CURLM_OK) {
			rm_error_set(err, RM_ERR_INTERNAL, "curl multi poll failed");
			goto out;
		}
		if (running && rm_engine__should_stop(&r))
			break;
	}
	if (running && !r.cancelled) {
		/* Stopped early on an error answer: let curl finish reading it. */
		while (running && curl_multi_perform(m, &running) == CURLM_OK && running)
			curl_multi_poll(m, NULL, 0, POLL_MS, NULL);
		multi_done(m, &rc);
	}
	ret = rm_engine__req_complete(d, &r, rc, err);
	if (ret == 0 && !started)
		ret = rm_error_set(err, RM_ERR_DOCKER,
				   "POST /containers/%.12s/attach: the engine closed the stream "
				   "before the container started",
				   id);
	ret = stream_check_end(ret, &s, "POST attach to", id, err);
out:
	if (m && r.curl)
		curl_multi_remove_handle(m, r.curl);
	rm_engine__req_cleanup(&r);
	if (m)
		curl_multi_cleanup(m);
	free(eid);
	free(url);
	return ret;
}

/*
 * Podman's wait may answer StatusCode -1 when the container's process has ended and its
 * exit code is not written yet (its conmon writes it): the container's own State.ExitCode,
 * once its State.Status is "exited" (or "stopped"), asked for up to 5 s. 0 with *status,
 * -1 when it does not say.
 */
static int podman_exit_code(rm_docker *d, const char *id, long *status, rm_engine_cancel_fn cancel,
			    void *cancel_ud)
{
	double until = rm_now() + 5;

	while (rm_now() < until && !(cancel && cancel(cancel_ud)) && !rm_interrupt_pending()) {
		json_t *o = NULL;
		rm_error ierr = RM_ERROR_INIT;
		if (rm_engine_inspect(d, id, &o, &ierr) < 0)
			return -1;
		json_t *st = json_object_get(o, "State");
		const char *s = json_string_value(json_object_get(st, "Status"));
		json_t *code = json_object_get(st, "ExitCode");
		int done = s && (!strcmp(s, "exited") || !strcmp(s, "stopped")) &&
			   json_is_integer(code) && json_integer_value(code) >= 0;
		int never = s && (!strcmp(s, "created") || !strcmp(s, "configured"));
		if (done)
			*status = (long)json_integer_value(code);
		json_decref(o);
		if (done || never)
			return done ? 0 : -1; /* a container that never ran has no exit code */
		nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
	}
	return -1;
}

int rm_engine_wait(rm_docker *d, const char *id, const char *condition, long *status,
		   rm_engine_cancel_fn cancel, void *cancel_ud, rm_error *err)
{
	int ret = -1;
	struct req r;
	json_t *resp = NULL;
	char *eid = rm_engine__escape(id), *econd = NULL, *url;

	int libpod =
	    d->kind == RM_ENGINE_PODMAN && (!condition || !strcmp(condition, "not-running"));

	if (libpod) {
		/* Podman's Docker-API wait looks at the container every 250 ms (a quarter of a
		 * second on every run); its own takes the interval, and answers the exit code
		 * alone. "stopped" and "exited" are not-running for a container that ran. */
		url = rm_xasprintf("/v%s/libpod/containers/%s/wait?condition=stopped&"
				   "condition=exited&interval=" PODMAN_WAIT_INTERVAL,
				   d->product_version, eid);
	} else if (condition) {
		econd = rm_engine__escape(condition);
		url = rm_xasprintf("/containers/%s/wait?condition=%s", eid, econd);
	} else {
		url = rm_xasprintf("/containers/%s/wait", eid);
	}
	rm_engine__req_init(&r, "POST", url, 0);
	r.unversioned = libpod;
	r.decode_any = libpod;
	r.cancel = cancel;
	r.cancel_ud = cancel_ud;
	ret = rm_engine__json_request(d, &r, &resp, err);
	if (ret < 0)
		goto out;
	ret = -1;
	if (libpod && json_is_integer(resp)) {
		json_t *o = json_pack("{s:O}", "StatusCode", resp);
		json_decref(resp);
		resp = o;
	}
	json_t *code = json_object_get(resp, "StatusCode");
	if (!json_is_integer(code)) {
		rm_error_set(err, RM_ERR_DOCKER, "POST /containers/%.12s/wait: no StatusCode", id);
		goto out;
	}
	if (status)
		*status = (long)json_integer_value(code);
	if (d->kind == RM_ENGINE_PODMAN && json_integer_value(code) == -1 && status &&
	    podman_exit_code(d, id, status, cancel, cancel_ud) < 0) {
		rm_error_set(err, RM_ERR_DOCKER,
			     "POST /containers/%.12s/wait: Podman gave no exit code (-1), and the "
			     "container did not say one",
			     id);
		goto out;
	}
	const char *emsg =
	    json_string_value(json_object_get(json_object_get(resp, "Error"), "Message"));
	if (emsg && *emsg) {
		rm_error_set(err, RM_ERR_DOCKER, "POST /containers/%.12s/wait: %s", id, emsg);
		goto out;
	}
	ret = 0;
out:
	json_decref(resp);
	free(eid);
	free(econd);
	free(url);
	return ret;
}
