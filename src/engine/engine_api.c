/*
 * The Docker Engine API client (see rm/engine.h): one libcurl easy handle per request, so an
 * rm_docker is read-only after rm_engine_open and logs/wait may run in parallel threads.
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

char *rm_engine__escape(const char *s)
{
	/* The handle argument is ignored since curl 7.82. */
	char *e = curl_easy_escape(NULL, s, 0);
	if (!e)
		abort(); /* only fails on allocation */
	char *copy = rm_xstrdup(e);
	curl_free(e);
	return copy;
}

int rm_engine__is_2xx(long status)
{
	return status >= 200 && status < 300;
}

static size_t on_write(char *p, size_t size, size_t nmemb, void *ud)
{
	struct req *r = ud;
	size_t n = size * nmemb;
	long status = 0;

	if (r->cancel && r->cancel(r->cancel_ud)) {
		r->cancelled = 1;
		return 0;
	}
	curl_easy_getinfo(r->curl, CURLINFO_RESPONSE_CODE, &status);
	if (!rm_engine__is_2xx(status)) {
		/* Error bodies are only for the message: keep the start, drop the rest. */
		size_t room = r->errbody.max - r->errbody.len;
		(void)rm_buf_add(&r->errbody, p, n < room ? n : room);
		return n;
	}
	if (r->on_data) {
		if (r->on_data(r->ud, p, n) < 0) {
			r->handler_failed = 1;
			return 0;
		}
		return n;
	}
	if (r->resp && rm_buf_add(r->resp, p, n) < 0) {
		r->too_big = 1;
		return 0;
	}
	return n;
}

/* Copies the value of header line p (n bytes) into out when its name is name (lower case,
 * with the colon); header names match without case. */
static void header_value(const char *p, size_t n, const char *name, char *out, size_t size)
{
	size_t nl = strlen(name);

	if (n <= nl)
		return;
	for (size_t i = 0; i < nl; i++)
		if ((p[i] >= 'A' && p[i] <= 'Z' ? p[i] - 'A' + 'a' : p[i]) != name[i])
			return;
	const char *v = p + nl;
	size_t vl = n - nl;
	while (vl && (*v == ' ' || *v == '\t')) {
		v++;
		vl--;
	}
	while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' '))
		vl--;
	if (vl < size) {
		memcpy(out, v, vl);
		out[vl] = '\0';
	}
}

/* Header lines are not NUL-terminated and end in "\r\n". */
static size_t on_header(char *p, size_t size, size_t nmemb, void *ud)
{
	struct req *r = ud;
	size_t n = size * nmemb;

	header_value(p, n, "api-version:", r->api_version, sizeof(r->api_version));
	header_value(p, n, "libpod-api-version:", r->libpod_version, sizeof(r->libpod_version));
	header_value(p, n, "x-docker-container-path-stat:", r->path_stat, sizeof(r->path_stat));
	return n;
}

static size_t on_read(char *buf, size_t size, size_t nitems, void *ud)
{
	struct req *r = ud;
	for (;;) {
		ssize_t n = read(r->upload_fd, buf, size * nitems);
		if (n >= 0)
			return (size_t)n;
		if (errno != EINTR) {
			r->read_errno = errno;
			return CURL_READFUNC_ABORT;
		}
	}
}

static int on_seek(void *ud, curl_off_t offset, int origin)
{
	struct req *r = ud;
	return lseek(r->upload_fd, (off_t)offset, origin) < 0 ? CURL_SEEKFUNC_FAIL
							      : CURL_SEEKFUNC_OK;
}

int rm_engine__should_stop(struct req *r)
{
	if ((r->cancel && r->cancel(r->cancel_ud)) ||
	    (!r->after_interrupt && rm_interrupt_pending()))
		r->cancelled = 1;
	return r->cancelled;
}

static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	return rm_engine__should_stop(ud);
}

/* "No such image: x" -> "no such image: x", but "ID ..." stays as it is. */
static void lower_first(char *s)
{
	if (s[0] >= 'A' && s[0] <= 'Z' && !(s[1] >= 'A' && s[1] <= 'Z'))
		s[0] = (char)(s[0] - 'A' + 'a');
}

/* The engine's {"message": ...}, or the body's text, or nothing. */
static void extract_engine_msg(struct req *r)
{
	const char *body = rm_buf_str(&r->errbody);
	size_t len = r->errbody.len;
	json_t *j = json_loadb(body, len, 0, NULL);
	const char *msg = NULL;

	if (j && json_is_object(j))
		msg = json_string_value(json_object_get(j, "message"));
	r->engine_json = msg != NULL;
	if (msg) {
		snprintf(r->engine_msg, sizeof(r->engine_msg), "%s", msg);
	} else {
		while (len && (*body == ' ' || *body == '\n' || *body == '\r')) {
			body++;
			len--;
		}
		if (len >= sizeof(r->engine_msg))
			len = sizeof(r->engine_msg) - 1;
		memcpy(r->engine_msg, body, len);
		r->engine_msg[len] = '\0';
	}
	json_decref(j);
	size_t l = strlen(r->engine_msg);
	while (l && (r->engine_msg[l - 1] == '\n' || r->engine_msg[l - 1] == '\r' ||
		     r->engine_msg[l - 1] == ' '))
		r->engine_msg[--l] = '\0';
	lower_first(r->engine_msg);
}

/*
 * No connection to the engine. The cause is the errno of the connect (os_errno, from
 * CURLINFO_OS_ERRNO; ETIMEDOUT for a connection that timed out): ENOENT, no socket;
 * EACCES or EPERM, the socket is not ours to use; ECONNREFUSED, nothing listens. The
 * advice is the hint, so that a caller with advice of its own (doctor) can drop it.
 */
static int unreachable(const rm_docker *d, CURLcode rc, long os_errno, const char *detail,
		       rm_error *err)
{
	int e = rc == CURLE_OPERATION_TIMEDOUT ? ETIMEDOUT : (int)os_errno;

	if (d->unix_path) {
		/* curl speaks of "localhost port 80" even for a unix socket: name the socket,
		 * and when curl kept no errno, find the cause from the socket file. */
		struct stat st;
		if (!e && stat(d->unix_path, &st) != 0)
			e = errno;
		else if (!e && access(d->unix_path, R_OK | W_OK) != 0)
			e = errno;
		if (e == ENOENT || e == ENOTDIR || e == EACCES || e == EPERM)
			rm_error_sys(err, RM_ERR_DOCKER, e,
				     "cannot reach the docker engine at %s: socket '%s'", d->host,
				     d->unix_path);
		else
			rm_error_sys(
			    err, RM_ERR_DOCKER, e,
			    "cannot reach the docker engine at %s: nothing answers on '%s'",
			    d->host, d->unix_path);
	} else if (e) {
		rm_error_sys(err, RM_ERR_DOCKER, e, "cannot reach the docker engine at %s",
			     d->host);
	} else {
		rm_error_set(err, RM_ERR_DOCKER, "cannot reach the docker engine at %s: %s",
			     d->host, detail);
	}
	if (e == EACCES || e == EPERM)
		return rm_error_hint(err, " (is your user in the 'docker' group?)");
	return rm_error_hint(err, "; start dockerd, or set DOCKER_HOST to the engine's address");
}

/*
 * The transfer, driven by a multi handle so that it can look at its cancel function and the
 * interrupt every POLL_MS even while the engine sends nothing (curl's progress callback
 * alone runs only about once a second when a transfer is idle).
 */
static CURLcode perform(struct req *r)
{
	CURLM *m = curl_multi_init();
	CURLcode rc = CURLE_OK;
	CURLMsg *msg;
	int running = 1, left;

	if (!m || curl_multi_add_handle(m, r->curl) != CURLM_OK) {
		if (m)
			curl_multi_cleanup(m);
		return curl_easy_perform(r->curl);
	}
	while (running) {
		if (curl_multi_perform(m, &running) != CURLM_OK) {
			rc = CURLE_FAILED_INIT;
			break;
		}
		while ((msg = curl_multi_info_read(m, &left)))
			if (msg->msg == CURLMSG_DONE)
				rc = msg->data.result;
		if (!running)
			break;
		if (rm_engine__should_stop(r)) {
			rc = CURLE_ABORTED_BY_CALLBACK;
			break;
		}
		curl_multi_poll(m, NULL, 0, POLL_MS, NULL);
	}
	curl_multi_remove_handle(m, r->curl);
	curl_multi_cleanup(m);
	return rc;
}

/*
 * Runs one request. Returns 0 for a 2xx answer; RM_ENGINE_CANCELLED when the cancel
 * function asked; -1 otherwise, with err naming the request. r->status holds the HTTP
 * status (0 when none came) and r->engine_msg the engine's message for a non-2xx answer,
 * so callers can turn some statuses into success.
 */
void rm_engine__req_cleanup(struct req *r)
{
	curl_slist_free_all(r->hdrs);
	r->hdrs = NULL;
	if (r->curl)
		curl_easy_cleanup(r->curl);
	r->curl = NULL;
	rm_buf_release(&r->errbody);
	free(r->url);
	r->url = NULL;
}

/* The method, and the body to upload when there is one. */
static void set_method(struct req *r)
{
	CURL *c = r->curl;

	if (strcmp(r->method, "GET") == 0) {
		curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
	} else if (strcmp(r->method, "HEAD") == 0) {
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	} else if (strcmp(r->method, "POST") == 0) {
		curl_easy_setopt(c, CURLOPT_POST, 1L);
		if (r->upload_fd >= 0) {
			curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, r->upload_size);
		} else {
			/* An empty body must be an explicit zero length: a chunked empty
			 * body makes /start answer 400. */
			curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE,
					 (long)(r->body ? r->body_len : 0));
			curl_easy_setopt(c, CURLOPT_POSTFIELDS, r->body ? r->body : "");
		}
	} else if (strcmp(r->method, "PUT") == 0 && r->upload_fd >= 0) {
		curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, r->upload_size);
	} else {
		/* DELETE (or a PUT without a body): nothing to upload, so curl never reads
		 * stdin. */
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, r->method);
	}
	if (r->upload_fd >= 0) {
		curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
		curl_easy_setopt(c, CURLOPT_READDATA, r);
		curl_easy_setopt(c, CURLOPT_SEEKFUNCTION, on_seek);
		curl_easy_setopt(c, CURLOPT_SEEKDATA, r);
	}
}

/* Sets up r->curl for the request; the transfer is run by the caller (easy or multi). */
int rm_engine__req_prepare(rm_docker *d, struct req *r, rm_error *err)
{
	char ctype[128];
	char *url;

	r->errbuf[0] = '\0';
	r->hdrs = NULL;
	r->url = NULL;
	r->status = 0;
	r->sent = 0;
	r->engine_msg[0] = '\0';
	r->engine_json = 0;
	r->api_version[0] = '\0';
	r->libpod_version[0] = '\0';
	r->path_stat[0] = '\0';
	rm_buf_init(&r->errbody, MAX_ERROR_BODY);
	r->cancelled = r->too_big = r->handler_failed = r->read_errno = 0;
	r->after_interrupt = rm_interrupt_pending();
	if (r->after_interrupt) {
		size_t plen = strcspn(r->path, "?");
		if (d->hung)
			return rm_error_set(err, RM_ERR_DOCKER,
					    "%s %.*s: not sent: the docker engine at %s did not "
					    "answer the previous call",
					    r->method, (int)plen, r->path, d->host);
		r->timeout_ms = CLEANUP_TIMEOUT_MS;
	} else {
		r->timeout_ms = r->timeout * 1000;
	}

	r->curl = curl_easy_init();
	if (!r->curl)
		return rm_error_set(err, RM_ERR_INTERNAL, "cannot create a curl handle");
	if (r->unversioned)
		url = rm_xasprintf("%s%s", d->base, r->path);
	else
		url = rm_xasprintf("%s/v%s%s", d->base, d->version, r->path);
	r->url = url;

	CURL *c = r->curl;
	curl_easy_setopt(c, CURLOPT_URL, url);
	if (d->unix_path)
		curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, d->unix_path);
	if (d->tls_ca) {
		curl_easy_setopt(c, CURLOPT_CAINFO, d->tls_ca);
		curl_easy_setopt(c, CURLOPT_SSLCERT, d->tls_cert);
		curl_easy_setopt(c, CURLOPT_SSLKEY, d->tls_key);
	}
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, r->errbuf);
	/* Error bodies carry the engine's explanation: never let curl drop them. */
	curl_easy_setopt(c, CURLOPT_FAILONERROR, 0L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "run_models");
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, CONNECT_TIMEOUT);
	if (r->timeout_ms > 0)
		curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, r->timeout_ms);
	curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, r);

	/* The engine rejects or misreads bodies without a Content-Type, and the 100-continue
	 * round trip only adds latency. */
	snprintf(ctype, sizeof(ctype), "Content-Type: %s",
		 r->content_type ? r->content_type : "application/json");
	r->hdrs = curl_slist_append(r->hdrs, ctype);
	r->hdrs = curl_slist_append(r->hdrs, "Expect:");
	for (const char *const *h = r->headers; h && *h && r->hdrs; h++)
		r->hdrs = curl_slist_append(r->hdrs, *h);
	if (!r->hdrs)
		return rm_error_set(err, RM_ERR_INTERNAL, "out of memory");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, r->hdrs);

	set_method(r);
	return 0;
}

/* Interprets the end of a transfer; see do_request for the return values. */
int rm_engine__req_complete(rm_docker *d, struct req *r, CURLcode rc, rm_error *err)
{
	int ret = -1;
	const char *errbuf = r->errbuf;
	size_t plen = strcspn(r->path, "?");
	CURL *c = r->curl;

	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	curl_easy_getinfo(c, CURLINFO_REQUEST_SIZE, &r->sent);
	if (r->cancelled) {
		rm_error_set(err, RM_ERR_DOCKER, "cancelled");
		ret = RM_ENGINE_CANCELLED;
		goto out;
	}
	if (r->handler_failed) {
		rm_error_wrap(err, "%s %.*s", r->method, (int)plen, r->path);
		goto out;
	}
	if (r->too_big) {
		rm_error_set(err, RM_ERR_DOCKER, "%s %.*s: the answer is larger than %zu bytes",
			     r->method, (int)plen, r->path, r->resp->max);
		goto out;
	}
	if (rc != CURLE_OK) {
		const char *detail = errbuf[0] ? errbuf : curl_easy_strerror(rc);
		long os_errno = 0;
		curl_easy_getinfo(c, CURLINFO_OS_ERRNO, &os_errno);
		if (r->read_errno)
			rm_error_sys(err, RM_ERR_IO, r->read_errno,
				     "%s %.*s: cannot read the request body", r->method, (int)plen,
				     r->path);
		else if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
			 (rc == CURLE_OPERATION_TIMEDOUT && r->sent == 0))
			unreachable(d, rc, os_errno, detail, err);
		else if (rc == CURLE_OPERATION_TIMEDOUT)
			/* ETIMEDOUT: callers tell "no answer" from the other failures by it. */
			rm_error_sys(err, RM_ERR_DOCKER, ETIMEDOUT,
				     "%s %.*s: no answer within %g s", r->method, (int)plen,
				     r->path, (double)r->timeout_ms / 1000);
		else if (os_errno)
			/* curl's kind of failure, then the socket's errno says why. */
			rm_error_sys(err, RM_ERR_DOCKER, (int)os_errno, "%s %.*s: %s", r->method,
				     (int)plen, r->path, curl_easy_strerror(rc));
		else
			rm_error_set(err, RM_ERR_DOCKER, "%s %.*s: %s", r->method, (int)plen,
				     r->path, detail);
		if (rc == CURLE_OPERATION_TIMEDOUT && r->after_interrupt)
			d->hung = 1;
		goto out;
	}
	if (!rm_engine__is_2xx(r->status)) {
		extract_engine_msg(r);
		rm_error_set(err, RM_ERR_DOCKER, "%s %.*s: %ld %s", r->method, (int)plen, r->path,
			     r->status, r->engine_msg[0] ? r->engine_msg : "(no message)");
		goto out;
	}
	ret = 0;
out:
	return ret;
}

/*
 * Runs one request. Returns 0 for a 2xx answer; RM_ENGINE_CANCELLED when the cancel
 * function asked; -1 otherwise, with err naming the request.
 */
int rm_engine__do_request(rm_docker *d, struct req *r, rm_error *err)
{
	int ret = rm_engine__req_prepare(d, r, err);
	if (ret == 0)
		ret = rm_engine__req_complete(d, r, perform(r), err);
	rm_engine__req_cleanup(r);
	return ret;
}

void rm_engine__req_init(struct req *r, const char *method, const char *path, long timeout)
{
	memset(r, 0, sizeof(*r));
	r->method = method;
	r->path = path;
	r->timeout = timeout;
	r->upload_fd = -1;
}

/* A request whose 2xx answer is JSON; *out may be NULL to ignore the answer. */
int rm_engine__json_request(rm_docker *d, struct req *r, json_t **out, rm_error *err)
{
	rm_buf resp = RM_BUF_INIT(MAX_JSON_RESPONSE);
	int ret;

	r->resp = &resp;
	ret = rm_engine__do_request(d, r, err);
	if (ret == 0 && out) {
		json_error_t je;
		*out = json_loadb(rm_buf_str(&resp), resp.len, r->decode_any ? JSON_DECODE_ANY : 0,
				  &je);
		if (!*out) {
			size_t plen = strcspn(r->path, "?");
			ret =
			    rm_error_set(err, RM_ERR_DOCKER, "%s %.*s: the answer is not JSON: %s",
					 r->method, (int)plen, r->path, je.text);
		}
	}
	rm_buf_release(&resp);
	r->resp = NULL;
	return ret;
}

int rm_engine__json_lines(rm_buf *line, const char *p, size_t n,
			  void (*on_object)(void *ud, const char *s, size_t len), void *ud,
			  const char *what, rm_error *err)
{
	while (n) {
		const char *nl = memchr(p, '\n', n);
		size_t seg = nl ? (size_t)(nl - p) : n;
		if (rm_buf_add(line, p, seg) < 0)
			return rm_error_set(err, RM_ERR_DOCKER, "%s is longer than %zu bytes", what,
					    line->max);
		if (!nl)
			break;
		on_object(ud, rm_buf_str(line), line->len);
		rm_buf_reset(line);
		p += seg + 1;
		n -= seg + 1;
	}
	return 0;
}
