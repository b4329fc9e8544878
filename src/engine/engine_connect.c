/*
 * Connecting to the engine (see rm/engine.h): DOCKER_HOST, the ping and the API version
 * negotiation, the client's lifetime.
 */
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

static int is_socket(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

const rm_choice rm_engine_words[] = {
    {"docker", RM_ENGINE_DOCKER}, {"podman", RM_ENGINE_PODMAN}, {NULL, 0}};

const char *rm_engine_kind_title(rm_engine_kind k)
{
	return k == RM_ENGINE_PODMAN ? "Podman" : k == RM_ENGINE_DOCKER ? "Docker" : "the engine";
}

/*
 * Without DOCKER_HOST: the standard Docker socket, the private engine that
 * tools/ensure-docker.sh starts on a host without a system engine (its socket under
 * $RM_DOCKER_DIR, default PRIVATE_ENGINE_DIR), then Podman's rootful and rootless sockets,
 * so that a new shell needs nothing set. A socket this user cannot open (the Docker socket
 * of a user outside the docker group) gives way to a later one that it can: a rootless
 * Podman user has one of their own.
 */
char *rm_engine_default_host(void)
{
	const char *host = getenv("DOCKER_HOST");
	const char *dir = getenv("RM_DOCKER_DIR");
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char *cand[4];
	char *found = NULL;
	size_t n = 0, i;

	if (host && *host)
		return rm_xstrdup(host);
	cand[n++] = rm_xstrdup(&DEFAULT_HOST[strlen("unix://")]);
	cand[n++] = rm_xasprintf("%s/docker.sock", dir && *dir ? dir : PRIVATE_ENGINE_DIR);
	cand[n++] = rm_xstrdup(PODMAN_ROOTFUL_SOCKET);
	if (xdg && xdg[0] == '/')
		cand[n++] = rm_xasprintf("%s/podman/podman.sock", xdg);
	else
		cand[n++] = rm_xasprintf("/run/user/%ld/podman/podman.sock", (long)getuid());
	for (i = 0; !found && i < n; i++)
		if (is_socket(cand[i]) && access(cand[i], R_OK | W_OK) == 0)
			found = cand[i];
	for (i = 0; !found && i < n; i++)
		if (is_socket(cand[i]))
			found = cand[i];
	host = found ? found : cand[0];
	char *out = rm_xasprintf("unix://%s", host);
	for (i = 0; i < n; i++)
		free(cand[i]);
	return out;
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

static int engine_open(rm_docker **out, const char *host, long ping_timeout, rm_error *err)
{
	int ret = -1;
	rm_docker *d = rm_xcalloc(1, sizeof(*d));
	struct req r;
	long emaj, emin, mmaj, mmin;

	d->host = host && *host ? rm_xstrdup(host) : rm_engine_default_host();
	if (parse_host(d, d->host, err) < 0)
		goto out;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		rm_error_set(err, RM_ERR_INTERNAL, "cannot initialise libcurl");
		goto out;
	}
	d->curl_ready = 1;

	rm_engine__req_init(&r, "GET", "/_ping", ping_timeout);
	r.unversioned = 1;
	if (rm_engine__do_request(d, &r, err) < 0) {
		/* Sent, and timed out with no answer: connected to something that is stuck. */
		if (r.status == 0 && r.sent > 0 && err && err->sys_errno == ETIMEDOUT)
			rm_error_set(err, RM_ERR_DOCKER,
				     "the docker engine at %s accepted the connection but did not "
				     "answer /_ping within %ld s: is dockerd hung? (see its log, "
				     "e.g. journalctl -u docker)",
				     d->host, ping_timeout);
		goto out;
	}
	if (r.libpod_version[0]) {
		d->kind = RM_ENGINE_PODMAN;
		snprintf(d->product_version, sizeof(d->product_version), "%s", r.libpod_version);
	} else {
		d->kind = RM_ENGINE_DOCKER;
	}
	/* Engines too old to send Api-Version speak 1.24, as the docker CLI assumes. */
	const char *engine = r.api_version[0] ? r.api_version : "1.24";
	if (parse_version(engine, &emaj, &emin) < 0) {
		rm_warn("the docker engine at %s sent API version '%s'; using 1.24", d->host,
			engine);
		engine = "1.24";
		emaj = 1;
		emin = 24;
	}
	(void)parse_version(RM_ENGINE_API_MAX, &mmaj, &mmin);
	if (emaj < mmaj || (emaj == mmaj && emin < mmin))
		snprintf(d->version, sizeof(d->version), "%ld.%ld", emaj, emin);
	else
		snprintf(d->version, sizeof(d->version), "%s", RM_ENGINE_API_MAX);
	*out = d;
	d = NULL;
	ret = 0;
out:
	rm_engine_close(d);
	return ret;
}

int rm_engine_open(rm_docker **out, const char *host, rm_error *err)
{
	return engine_open(out, host, PING_TIMEOUT, err);
}

int rm_engine_open_quick(rm_docker **out, const char *host, rm_error *err)
{
	return engine_open(out, host, QUICK_PING_TIMEOUT, err);
}

void rm_engine_close(rm_docker *d)
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

const char *rm_engine_api_version(const rm_docker *d)
{
	return d->version;
}

const char *rm_engine_host(const rm_docker *d)
{
	return d->host;
}

rm_engine_kind rm_engine_get_kind(const rm_docker *d)
{
	return d->kind;
}

const char *rm_engine_product_version(const rm_docker *d)
{
	return d->product_version[0] ? d->product_version : NULL;
}

int rm_engine_ping(rm_docker *d, rm_error *err)
{
	struct req r;

	rm_engine__req_init(&r, "GET", "/_ping", PING_TIMEOUT);
	r.unversioned = 1;
	return rm_engine__do_request(d, &r, err) < 0 ? -1 : 0;
}

int rm_engine_version(rm_docker *d, json_t **out, rm_error *err)
{
	struct req r;
	rm_engine__req_init(&r, "GET", "/version", SHORT_TIMEOUT);
	return rm_engine__json_request(d, &r, out, err);
}
