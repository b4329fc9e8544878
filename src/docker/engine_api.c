/*
 * The Docker Engine API client (see rm/docker.h): one libcurl easy handle per request, so an
 * rm_docker is read-only after rm_docker_open and logs/wait may run in parallel threads.
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
#include "rm/docker.h"
#include "rm/log.h"
#include "rm/util.h"

#define DEFAULT_HOST	    "unix:///var/run/docker.sock"
#define CONNECT_TIMEOUT	    10L
#define SHORT_TIMEOUT	    RM_DOCKER_SHORT_TIMEOUT
#define LONG_TIMEOUT	    300L /* remove (volumes, big layers) and archive copies */
#define MAX_JSON_RESPONSE   (16u * 1024 * 1024)
#define MAX_ERROR_BODY	    (64u * 1024)
#define MAX_BUILD_JSON_LINE (1024u * 1024)
#define MAX_BUILD_TEXT_LINE (64u * 1024)

struct rm_docker {
	char *host;	 /* what we connected to, for messages */
	char *unix_path; /* NULL for tcp */
	char *base;	 /* "http://localhost", "http://host:port" or "https://host:port" */
	char *tls_ca, *tls_cert, *tls_key;
	char version[16];
	int curl_ready;
};

static char *escape(const char *s)
{
	/* The handle argument is ignored since curl 7.82. */
	char *e = curl_easy_escape(NULL, s, 0);
	if (!e)
		abort(); /* only fails on allocation */
	char *copy = rm_xstrdup(e);
	curl_free(e);
	return copy;
}

static int is_2xx(long status)
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
	if (!is_2xx(status)) {
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

/* Header lines are not NUL-terminated and end in "\r\n". */
static size_t on_header(char *p, size_t size, size_t nmemb, void *ud)
{
	struct req *r = ud;
	size_t n = size * nmemb;
	static const char name[] = "api-version:";
	size_t nl = sizeof(name) - 1;

	if (n > nl) {
		char lower[sizeof(name)];
		for (size_t i = 0; i < nl; i++)
			lower[i] = (char)(p[i] >= 'A' && p[i] <= 'Z' ? p[i] - 'A' + 'a' : p[i]);
		if (memcmp(lower, name, nl) == 0) {
			const char *v = p + nl;
			size_t vl = n - nl;
			while (vl && (*v == ' ' || *v == '\t')) {
				v++;
				vl--;
			}
			while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' '))
				vl--;
			if (vl < sizeof(r->api_version)) {
				memcpy(r->api_version, v, vl);
				r->api_version[vl] = '\0';
			}
		}
	}
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

static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct req *r = ud;
	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	if (r->cancel && r->cancel(r->cancel_ud)) {
		r->cancelled = 1;
		return 1;
	}
	return 0;
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

static int unreachable(const rm_docker *d, const char *detail, rm_error *err)
{
	char why[512];

	snprintf(why, sizeof(why), "%s", detail);
	/* curl speaks of "localhost port 80" even for a unix socket: say what went wrong. */
	if (d->unix_path) {
		struct stat st;
		if (stat(d->unix_path, &st) != 0 && errno == ENOENT)
			snprintf(why, sizeof(why), "no socket at '%s'", d->unix_path);
		else if (access(d->unix_path, R_OK | W_OK) != 0 && errno == EACCES)
			snprintf(why, sizeof(why),
				 "permission denied on '%s' (is your user in the 'docker' group?)",
				 d->unix_path);
		else
			snprintf(why, sizeof(why), "nothing answers on '%s'", d->unix_path);
	}
	return rm_error_set(err, RM_ERR_DOCKER,
			    "cannot reach the docker engine at %s (%s): start dockerd, or set "
			    "DOCKER_HOST to the engine's address",
			    d->host, why);
}

/*
 * Runs one request. Returns 0 for a 2xx answer; RM_DOCKER_CANCELLED when the cancel
 * function asked; -1 otherwise, with err naming the request. r->status holds the HTTP
 * status (0 when none came) and r->engine_msg the engine's message for a non-2xx answer,
 * so callers can turn some statuses into success.
 */
static void req_cleanup(struct req *r)
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

/* Sets up r->curl for the request; the transfer is run by the caller (easy or multi). */
static int req_prepare(rm_docker *d, struct req *r, rm_error *err)
{
	char ctype[128];
	char *url;

	r->errbuf[0] = '\0';
	r->hdrs = NULL;
	r->url = NULL;
	r->status = 0;
	r->engine_msg[0] = '\0';
	r->api_version[0] = '\0';
	rm_buf_init(&r->errbody, MAX_ERROR_BODY);
	r->cancelled = r->too_big = r->handler_failed = r->read_errno = 0;

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
	if (r->timeout > 0)
		curl_easy_setopt(c, CURLOPT_TIMEOUT, r->timeout);
	curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
	if (r->cancel) {
		curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
		curl_easy_setopt(c, CURLOPT_XFERINFODATA, r);
	}

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

	if (strcmp(r->method, "GET") == 0) {
		curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
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

	return 0;
}

/* Interprets the end of a transfer; see do_request for the return values. */
static int req_complete(rm_docker *d, struct req *r, CURLcode rc, rm_error *err)
{
	int ret = -1;
	const char *errbuf = r->errbuf;
	size_t plen = strcspn(r->path, "?");
	CURL *c = r->curl;

	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	if (r->cancelled) {
		rm_error_set(err, RM_ERR_DOCKER, "cancelled");
		ret = RM_DOCKER_CANCELLED;
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
		long sent = 0;
		curl_easy_getinfo(c, CURLINFO_REQUEST_SIZE, &sent);
		if (r->read_errno)
			rm_error_set(err, RM_ERR_IO, "%s %.*s: cannot read the request body: %s",
				     r->method, (int)plen, r->path, strerror(r->read_errno));
		else if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
			 (rc == CURLE_OPERATION_TIMEDOUT && sent == 0))
			unreachable(d, detail, err);
		else if (rc == CURLE_OPERATION_TIMEDOUT)
			rm_error_set(err, RM_ERR_DOCKER, "%s %.*s: no answer within %ld s",
				     r->method, (int)plen, r->path, r->timeout);
		else
			rm_error_set(err, RM_ERR_DOCKER, "%s %.*s: %s", r->method, (int)plen,
				     r->path, detail);
		goto out;
	}
	if (!is_2xx(r->status)) {
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
 * Runs one request. Returns 0 for a 2xx answer; RM_DOCKER_CANCELLED when the cancel
 * function asked; -1 otherwise, with err naming the request.
 */
static int do_request(rm_docker *d, struct req *r, rm_error *err)
{
	int ret = req_prepare(d, r, err);
	if (ret == 0)
		ret = req_complete(d, r, curl_easy_perform(r->curl), err);
	req_cleanup(r);
	return ret;
}

static void req_init(struct req *r, const char *method, const char *path, long timeout)
{
	memset(r, 0, sizeof(*r));
	r->method = method;
	r->path = path;
	r->timeout = timeout;
	r->upload_fd = -1;
}

/* A request whose 2xx answer is JSON; *out may be NULL to ignore the answer. */
static int json_request(rm_docker *d, struct req *r, json_t **out, rm_error *err)
{
	rm_buf resp = RM_BUF_INIT(MAX_JSON_RESPONSE);
	int ret;

	r->resp = &resp;
	ret = do_request(d, r, err);
	if (ret == 0 && out) {
		json_error_t je;
		*out = json_loadb(rm_buf_str(&resp), resp.len, 0, &je);
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

/* "1.41" -> 1, 41; -1 when it is not such a version. */
static int parse_version(const char *s, long *major, long *minor)
{
	char *dot = strchr(s, '.');
	if (!dot || dot == s)
		return -1;
	char *maj = rm_xstrndup(s, (size_t)(dot - s));
	int r =
	    rm_parse_long(maj, 0, 1000, major) == 0 && rm_parse_long(dot + 1, 0, 100000, minor) == 0
		? 0
		: -1;
	free(maj);
	return r;
}

static int parse_host(rm_docker *d, const char *host, rm_error *err)
{
	if (rm_starts_with(host, "unix://")) {
		if (!host[7])
			return rm_error_set(err, RM_ERR_USAGE, "DOCKER_HOST '%s' names no socket",
					    host);
		d->unix_path = rm_xstrdup(host + 7);
		d->base = rm_xstrdup("http://localhost");
		return 0;
	}
	if (rm_starts_with(host, "tcp://")) {
		const char *hp = host + 6;
		size_t len = strcspn(hp, "/");
		const char *tls = getenv("DOCKER_TLS_VERIFY");
		int use_tls = tls && *tls;
		if (!len)
			return rm_error_set(err, RM_ERR_USAGE, "DOCKER_HOST '%s' names no host",
					    host);
		/* A port is there when the last ':' comes after any IPv6 ']'. */
		int has_port = 0;
		for (size_t i = len; i-- > 0 && hp[i] != ']';) {
			if (hp[i] == ':') {
				has_port = 1;
				break;
			}
		}
		d->base = rm_xasprintf("%s://%.*s%s", use_tls ? "https" : "http", (int)len, hp,
				       has_port ? "" : (use_tls ? ":2376" : ":2375"));
		if (use_tls) {
			const char *dir = getenv("DOCKER_CERT_PATH");
			const char *home = getenv("HOME");
			char *def = NULL;
			if (!dir || !*dir)
				dir = def = rm_xasprintf("%s/.docker", home ? home : "");
			d->tls_ca = rm_xasprintf("%s/ca.pem", dir);
			d->tls_cert = rm_xasprintf("%s/cert.pem", dir);
			d->tls_key = rm_xasprintf("%s/key.pem", dir);
			free(def);
		}
		return 0;
	}
	return rm_error_set(err, RM_ERR_USAGE,
			    "unsupported DOCKER_HOST '%s': use unix:///path/to/docker.sock or "
			    "tcp://host:port",
			    host);
}

int rm_docker_open(rm_docker **out, const char *host, rm_error *err)
{
	int ret = -1;
	rm_docker *d = rm_xcalloc(1, sizeof(*d));
	struct req r;
	long emaj, emin, mmaj, mmin;

	if (!host || !*host) {
		host = getenv("DOCKER_HOST");
		if (!host || !*host)
			host = DEFAULT_HOST;
	}
	d->host = rm_xstrdup(host);
	if (parse_host(d, host, err) < 0)
		goto out;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		rm_error_set(err, RM_ERR_INTERNAL, "cannot initialise libcurl");
		goto out;
	}
	d->curl_ready = 1;

	req_init(&r, "GET", "/_ping", SHORT_TIMEOUT);
	r.unversioned = 1;
	if (do_request(d, &r, err) < 0)
		goto out;
	/* Engines too old to send Api-Version speak 1.24, as the docker CLI assumes. */
	const char *engine = r.api_version[0] ? r.api_version : "1.24";
	if (parse_version(engine, &emaj, &emin) < 0) {
		rm_warn("the docker engine at %s sent API version '%s'; using 1.24", d->host,
			engine);
		engine = "1.24";
		emaj = 1;
		emin = 24;
	}
	(void)parse_version(RM_DOCKER_API_MAX, &mmaj, &mmin);
	if (emaj < mmaj || (emaj == mmaj && emin < mmin))
		snprintf(d->version, sizeof(d->version), "%ld.%ld", emaj, emin);
	else
		snprintf(d->version, sizeof(d->version), "%s", RM_DOCKER_API_MAX);
	*out = d;
	d = NULL;
	ret = 0;
out:
	rm_docker_close(d);
	return ret;
}

void rm_docker_close(rm_docker *d)
{
	if (!d)
		return;
	if (d->curl_ready)
		curl_global_cleanup();
	free(d->host);
	free(d->unix_path);
	free(d->base);
	free(d->tls_ca);
	free(d->tls_cert);
	free(d->tls_key);
	free(d);
}

const char *rm_docker_api_version(const rm_docker *d)
{
	return d->version;
}

const char *rm_docker_host(const rm_docker *d)
{
	return d->host;
}

int rm_docker_version(rm_docker *d, json_t **out, rm_error *err)
{
	struct req r;
	req_init(&r, "GET", "/version", SHORT_TIMEOUT);
	return json_request(d, &r, out, err);
}

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

static void build_object(struct build_state *b, const char *p, size_t n)
{
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
	if (emsg && !b->error)
		b->error = rm_xstrdup(emsg);

	const char *stream = json_string_value(json_object_get(o, "stream"));
	if (stream)
		rm_lines_feed(&b->text, stream, json_string_length(json_object_get(o, "stream")),
			      build_text_line, b);

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

/* The stream is one JSON object per line ("\r\n"), cut into chunks at arbitrary places. */
static int build_data(void *ud, const char *p, size_t n)
{
	struct build_state *b = ud;
	while (n) {
		const char *nl = memchr(p, '\n', n);
		size_t seg = nl ? (size_t)(nl - p) : n;
		if (rm_buf_add(&b->line, p, seg) < 0)
			return rm_error_set(b->err, RM_ERR_DOCKER,
					    "a build output line is longer than %u bytes",
					    MAX_BUILD_JSON_LINE);
		if (!nl)
			break;
		build_object(b, rm_buf_str(&b->line), b->line.len);
		rm_buf_reset(&b->line);
		p += seg + 1;
		n -= seg + 1;
	}
	return 0;
}

/* Appends "&key=<value, URL-encoded>"; 1 when the buffer is full. */
static int add_param(rm_buf *q, const char *key, const char *value)
{
	char *e = escape(value);
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

int rm_docker_build(rm_docker *d, const rm_build_opts *o, char **image_id, rm_error *err)
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
		rm_error_set(err, RM_ERR_IO, "cannot open build context '%s': %s", o->context_tar,
			     strerror(errno));
		goto out;
	}

	int bad = rm_buf_addstr(&q, "/build?version=1&rm=1&forcerm=1") < 0;
	if (o->tag)
		bad |= add_param(&q, "t", o->tag);
	if (o->dockerfile)
		bad |= add_param(&q, "dockerfile", o->dockerfile);
	bad |= add_json_param(&q, "buildargs", o->buildargs);
	if (o->nocache)
		bad |= rm_buf_addstr(&q, "&nocache=1") < 0;
	if (o->networkmode)
		bad |= add_param(&q, "networkmode", o->networkmode);
	bad |= add_json_param(&q, "labels", o->labels);
	if (bad) {
		rm_error_set(err, RM_ERR_INPUT, "the build arguments are too long");
		goto out;
	}

	/* No timeout: a build takes as long as it takes; cancel closes the connection, which
	 * makes the engine stop the build. */
	req_init(&r, "POST", rm_buf_str(&q), 0);
	r.content_type = "application/x-tar";
	r.upload_fd = fd;
	r.upload_size = (curl_off_t)st.st_size;
	r.on_data = build_data;
	r.ud = &b;
	r.cancel = o->cancel;
	r.cancel_ud = o->cancel_ud;
	ret = do_request(d, &r, err);
	if (ret < 0)
		goto out;
	ret = -1;
	build_object(&b, rm_buf_str(&b.line), b.line.len);
	rm_lines_flush(&b.text, build_text_line, &b);
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

/* ---- images and containers ---- */

int rm_docker_image_inspect(rm_docker *d, const char *name, json_t **out, rm_error *err)
{
	struct req r;
	char *path = rm_xasprintf("/images/%s/json", name);
	req_init(&r, "GET", path, SHORT_TIMEOUT);
	int ret = json_request(d, &r, out, err);
	if (ret < 0 && r.status == 404)
		rm_error_set(err, RM_ERR_INPUT, "no such image: %s", name);
	free(path);
	return ret;
}

int rm_docker_create(rm_docker *d, const char *name, json_t *body, char **id, rm_error *err)
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
		esc = escape(name);
		path = rm_xasprintf("/containers/create?name=%s", esc);
	} else {
		path = rm_xstrdup("/containers/create");
	}
	req_init(&r, "POST", path, SHORT_TIMEOUT);
	r.body = js;
	r.body_len = strlen(js);
	if (json_request(d, &r, &resp, err) < 0)
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
	char *esc = escape(id);
	char *path = rm_xasprintf("/containers/%s%s", esc, suffix);
	req_init(r, method, path, timeout);
	int ret = do_request(d, r, err);
	r->path = NULL;
	free(path);
	free(esc);
	return ret;
}

int rm_docker_start(rm_docker *d, const char *id, rm_error *err)
{
	struct req r;
	int ret = container_call(d, "POST", id, "/start", 2 * SHORT_TIMEOUT, &r, err);
	if (ret < 0 && r.status == 304) /* already started */
		ret = 0;
	return ret;
}

int rm_docker_kill(rm_docker *d, const char *id, const char *signal, rm_error *err)
{
	struct req r;
	char *esc = escape(signal ? signal : "SIGKILL");
	char *suffix = rm_xasprintf("/kill?signal=%s", esc);
	int ret = container_call(d, "POST", id, suffix, SHORT_TIMEOUT, &r, err);
	if (ret < 0 && r.status == 409 && strstr(r.engine_msg, "is not running")) {
		rm_error_clear(err);
		ret = 0;
	}
	free(suffix);
	free(esc);
	return ret;
}

int rm_docker_remove(rm_docker *d, const char *id, rm_error *err)
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

int rm_docker_inspect(rm_docker *d, const char *id, json_t **out, rm_error *err)
{
	struct req r;
	char *esc = escape(id);
	char *path = rm_xasprintf("/containers/%s/json", esc);
	req_init(&r, "GET", path, SHORT_TIMEOUT);
	int ret = json_request(d, &r, out, err);
	free(path);
	free(esc);
	return ret;
}

int rm_docker_list_by_label(rm_docker *d, const char *label, char ***ids, size_t *n, rm_error *err)
{
	int ret = -1;
	struct req r;
	json_t *resp = NULL;
	json_t *filters = json_pack("{s:[s]}", "label", label);
	char *js = filters ? json_dumps(filters, JSON_COMPACT) : NULL;
	char *esc = NULL, *path = NULL;
	char **v = NULL;
	size_t k = 0;

	if (!js) {
		rm_error_set(err, RM_ERR_INTERNAL, "cannot encode the label filter");
		goto out;
	}
	esc = escape(js);
	path = rm_xasprintf("/containers/json?all=1&filters=%s", esc);
	req_init(&r, "GET", path, SHORT_TIMEOUT);
	if (json_request(d, &r, &resp, err) < 0)
		goto out;
	if (!json_is_array(resp)) {
		rm_error_set(err, RM_ERR_DOCKER, "GET /containers/json: the answer is not a list");
		goto out;
	}
	size_t i;
	json_t *c;
	json_array_foreach (resp, i, c) {
		const char *cid = json_string_value(json_object_get(c, "Id"));
		if (cid)
			v = rm_strv_push(v, &k, cid);
	}
	if (!v)
		v = rm_xcalloc(1, sizeof(*v));
	*ids = v;
	v = NULL;
	if (n)
		*n = k;
	ret = 0;
out:
	rm_strv_free(v);
	json_decref(resp);
	json_decref(filters);
	free(js);
	free(esc);
	free(path);
	return ret;
}

/* ---- archives ---- */

int rm_docker_put_archive(rm_docker *d, const char *id, const char *path, const char *tar_path,
			  rm_error *err)
{
	int ret = -1, fd;
	struct stat st;
	struct req r;
	char *eid = NULL, *epath = NULL, *url = NULL;

	fd = open(tar_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		rm_error_set(err, RM_ERR_IO, "cannot open '%s': %s", tar_path, strerror(errno));
		goto out;
	}
	eid = escape(id);
	epath = escape(path);
	url = rm_xasprintf("/containers/%s/archive?path=%s", eid, epath);
	req_init(&r, "PUT", url, LONG_TIMEOUT);
	r.content_type = "application/x-tar";
	r.upload_fd = fd;
	r.upload_size = (curl_off_t)st.st_size;
	ret = do_request(d, &r, err);
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
	if (n > s->max - s->written)
		return rm_error_set(s->err, RM_ERR_INPUT,
				    "'%s' in the container is larger than the limit of %zu bytes",
				    s->path, s->max);
	s->written += n;
	while (n) {
		ssize_t w = write(s->fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return rm_error_set(s->err, RM_ERR_IO, "cannot write the archive: %s",
					    strerror(errno));
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int rm_docker_get_archive(rm_docker *d, const char *id, const char *path, int out_fd,
			  size_t max_bytes, rm_error *err)
{
	struct req r;
	struct archive_sink sink = {out_fd, 0, max_bytes, path, err};
	char *eid = escape(id), *epath = escape(path);
	char *url = rm_xasprintf("/containers/%s/archive?path=%s", eid, epath);

	req_init(&r, "GET", url, LONG_TIMEOUT);
	r.on_data = archive_data;
	r.ud = &sink;
	int ret = do_request(d, &r, err);
	if (ret < 0 && r.status == 404)
		rm_error_set(err, RM_ERR_INPUT, "no such file: '%s' in container %.12s", path, id);
	free(eid);
	free(epath);
	free(url);
	return ret;
}

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
			    rm_docker_cancel_fn cancel, void *cancel_ud, rm_error *err)
{
	rm_frame_init(&s->dec, tty);
	s->cb = cb;
	s->ud = ud;
	s->err = err;
	req_init(r, method, url, 0);
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

int rm_docker_logs(rm_docker *d, const char *id, int tty, rm_frame_cb cb, void *ud,
		   rm_docker_cancel_fn cancel, void *cancel_ud, rm_error *err)
{
	struct req r;
	struct logs_state s;
	char *eid = escape(id);
	char *url = rm_xasprintf("/containers/%s/logs?follow=1&stdout=1&stderr=1", eid);

	stream_req_init(&r, &s, "GET", url, tty, cb, ud, cancel, cancel_ud, err);
	int ret = stream_check_end(do_request(d, &r, err), &s, "GET logs of", id, err);
	free(eid);
	free(url);
	return ret;
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
int rm_docker_attach_start(rm_docker *d, const char *id, int tty, rm_frame_cb cb, void *ud,
			   rm_docker_cancel_fn cancel, void *cancel_ud, rm_error *err)
{
	struct req r;
	struct logs_state s;
	char *eid = escape(id);
	char *url = rm_xasprintf("/containers/%s/attach?stream=1&stdout=1&stderr=1", eid);
	CURLM *m = NULL;
	CURLcode rc = CURLE_OK;
	int ret = -1, started = 0, running = 1;

	stream_req_init(&r, &s, "POST", url, tty, cb, ud, cancel, cancel_ud, err);
	if (req_prepare(d, &r, err) < 0)
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
			if (status && is_2xx(status)) {
				started = 1;
				if (rm_docker_start(d, id, err) < 0)
					goto out;
			} else if (status || !running) {
				break; /* an error answer: req_complete reports it */
			}
		}
		if (running && curl_multi_poll(m, NULL, 0, 200, NULL) != CURLM_OK) {
			rm_error_set(err, RM_ERR_INTERNAL, "curl multi poll failed");
			goto out;
		}
		if (running && cancel && cancel(cancel_ud)) {
			r.cancelled = 1;
			break;
		}
	}
	if (running && !r.cancelled) {
		/* Stopped early on an error answer: let curl finish reading it. */
		while (running && curl_multi_perform(m, &running) == CURLM_OK && running)
			curl_multi_poll(m, NULL, 0, 200, NULL);
		multi_done(m, &rc);
	}
	ret = req_complete(d, &r, rc, err);
	if (ret == 0 && !started)
		ret = rm_error_set(err, RM_ERR_DOCKER,
				   "POST /containers/%.12s/attach: the engine closed the stream "
				   "before the container started",
				   id);
	ret = stream_check_end(ret, &s, "POST attach to", id, err);
out:
	if (m && r.curl)
		curl_multi_remove_handle(m, r.curl);
	req_cleanup(&r);
	if (m)
		curl_multi_cleanup(m);
	free(eid);
	free(url);
	return ret;
}

int rm_docker_wait(rm_docker *d, const char *id, const char *condition, long *status,
		   rm_docker_cancel_fn cancel, void *cancel_ud, rm_error *err)
{
	int ret = -1;
	struct req r;
	json_t *resp = NULL;
	char *eid = escape(id), *econd = NULL, *url;

	if (condition) {
		econd = escape(condition);
		url = rm_xasprintf("/containers/%s/wait?condition=%s", eid, econd);
	} else {
		url = rm_xasprintf("/containers/%s/wait", eid);
	}
	req_init(&r, "POST", url, 0);
	r.cancel = cancel;
	r.cancel_ud = cancel_ud;
	ret = json_request(d, &r, &resp, err);
	if (ret < 0)
		goto out;
	ret = -1;
	json_t *code = json_object_get(resp, "StatusCode");
	if (!json_is_integer(code)) {
		rm_error_set(err, RM_ERR_DOCKER, "POST /containers/%.12s/wait: no StatusCode", id);
		goto out;
	}
	if (status)
		*status = (long)json_integer_value(code);
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

/* ---- for the other files of src/docker (engine_internal.h) ---- */

void rm_docker_req_init(struct req *r, const char *method, const char *path, long timeout)
{
	req_init(r, method, path, timeout);
}

int rm_docker_do_request(rm_docker *d, struct req *r, rm_error *err)
{
	return do_request(d, r, err);
}

int rm_docker_json_request(rm_docker *d, struct req *r, json_t **out, rm_error *err)
{
	return json_request(d, r, out, err);
}

char *rm_docker_escape(const char *s)
{
	return escape(s);
}
