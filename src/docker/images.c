/*
 * Images and registries through the Engine API (see rm/docker.h): tag, push, pull, the
 * registry's digest of a reference, removal, and the X-Registry-Auth credentials.
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
#include <openssl/evp.h>

#include "engine_internal.h"
#include "rm/docker.h"
#include "rm/util.h"

#define MAX_XFER_JSON_LINE (1024u * 1024)
#define MAX_CONFIG_FILE	   (4u * 1024 * 1024)
#define MAX_HELPER_OUTPUT  (64u * 1024)
#define HELPER_TIMEOUT	   30.0
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

/* ---- credentials ---- */

static void wipe_free(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

void rm_registry_auth_free(char *value)
{
	wipe_free(value);
}

/* base64url with padding, as the docker CLI encodes X-Registry-Auth. */
static char *b64url(const char *p, size_t n)
{
	char *out = rm_xmalloc(4 * ((n + 2) / 3) + 1);
	int len = EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)p, (int)n);

	for (int i = 0; i < len; i++) {
		if (out[i] == '+')
			out[i] = '-';
		else if (out[i] == '/')
			out[i] = '_';
	}
	out[len] = '\0';
	return out;
}

/* Standard base64 (config.json "auth"); NULL when it is not base64. */
static char *b64dec(const char *s)
{
	size_t n = strlen(s), pad = 0;
	char *out;
	int len;

	if (n == 0 || n % 4 || n > MAX_CONFIG_FILE)
		return NULL;
	out = rm_xmalloc(n / 4 * 3 + 1);
	len = EVP_DecodeBlock((unsigned char *)out, (const unsigned char *)s, (int)n);
	if (len < 0) {
		free(out);
		return NULL;
	}
	while (pad < 2 && n > pad && s[n - 1 - pad] == '=')
		pad++;
	out[len - (int)pad] = '\0';
	return out;
}

/* The header value for one set of credentials (all may be NULL but server). */
static char *auth_value(const char *user, const char *pass, const char *token, const char *server)
{
	json_t *o = json_object();
	char *js, *v;

	if (user && *user)
		json_object_set_new(o, "username", json_string(user));
	if (pass && *pass)
		json_object_set_new(o, "password", json_string(pass));
	if (token && *token)
		json_object_set_new(o, "identitytoken", json_string(token));
	json_object_set_new(o, "serveraddress", json_string(server));
	js = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!js)
		abort(); /* only fails on allocation */
	v = b64url(js, strlen(js));
	wipe_free(js);
	return v;
}

/* "https://host:5000/v1/" -> "host:5000", as the docker CLI's ConvertToHostname. */
static char *key_host(const char *key)
{
	if (rm_starts_with(key, "http://"))
		key += 7;
	else if (rm_starts_with(key, "https://"))
		key += 8;
	return rm_xstrndup(key, strcspn(key, "/"));
}

static int host_matches(const char *key, const char *registry)
{
	char *h = key_host(key);
	int m = strcmp(h, registry) == 0 ||
		(strcmp(registry, "docker.io") == 0 && strcmp(h, "index.docker.io") == 0);
	free(h);
	return m;
}

/* Docker Hub's credentials are stored under its v1 address. */
static const char *server_url(const char *registry)
{
	return strcmp(registry, "docker.io") == 0 ? "https://index.docker.io/v1/" : registry;
}

/* docker-credential-<helper> get: 0 and *value; 1 when it has nothing for the registry. */
static int from_helper(const char *helper, const char *registry, char **value, rm_error *err)
{
	char *prog = rm_xasprintf("docker-credential-%s", helper);
	char *argv[] = {prog, (char *)"get", NULL};
	rm_proc_out res;
	json_t *j = NULL;
	int ret = -1;

	if (rm_proc_run(argv, server_url(registry), HELPER_TIMEOUT, MAX_HELPER_OUTPUT, &res, err) <
	    0) {
		rm_error_wrap(err, "registry credentials for '%s'", registry);
		goto out;
	}
	if (res.status != 0) {
		/* The helpers' own words for "nothing stored": not an error. */
		if (strstr(res.out, "credentials not found") ||
		    strstr(res.err, "credentials not found")) {
			ret = 1;
			goto out;
		}
		char *why = rm_trim(res.err_len ? res.err : res.out);
		rm_error_set(err, RM_ERR_INPUT,
			     "registry credentials for '%s': '%s get' exited with %d: %.200s",
			     registry, prog, res.status, *why ? why : "(no message)");
		goto out;
	}
	j = json_loadb(res.out, res.out_len, 0, NULL);
	const char *user = json_string_value(json_object_get(j, "Username"));
	const char *secret = json_string_value(json_object_get(j, "Secret"));
	if (!secret) {
		rm_error_set(err, RM_ERR_INPUT,
			     "registry credentials for '%s': '%s get' did not print a JSON object "
			     "with a Secret",
			     registry, prog);
		goto out;
	}
	if (user && strcmp(user, "<token>") == 0)
		*value = auth_value(NULL, NULL, secret, registry);
	else
		*value = auth_value(user, secret, NULL, registry);
	ret = 0;
out:
	if (res.out)
		explicit_bzero(res.out, res.out_len);
	rm_proc_out_release(&res);
	json_decref(j);
	free(prog);
	return ret;
}

/* An "auths" entry: 0 and *value; 1 when it holds nothing usable. */
static int from_auths_entry(json_t *e, const char *registry, const char *path, char **value,
			    rm_error *err)
{
	const char *auth = json_string_value(json_object_get(e, "auth"));
	const char *user = json_string_value(json_object_get(e, "username"));
	const char *pass = json_string_value(json_object_get(e, "password"));
	const char *token = json_string_value(json_object_get(e, "identitytoken"));

	if (auth && *auth) {
		char *plain = b64dec(auth);
		char *colon = plain ? strchr(plain, ':') : NULL;
		if (!colon) {
			wipe_free(plain);
			/* Never echo the value: it is the credential. */
			return rm_error_set(err, RM_ERR_INPUT,
					    "'%s': the \"auth\" of \"%s\" is not base64 of "
					    "user:password; run 'docker login %s' again",
					    path, registry, registry);
		}
		*colon = '\0';
		*value = auth_value(plain, colon + 1, token, registry);
		*colon = ':';
		wipe_free(plain);
		return 0;
	}
	if ((user && pass) || token) {
		*value = auth_value(user, pass, token, registry);
		return 0;
	}
	return 1;
}

static char *config_path(void)
{
	const char *dir = getenv("DOCKER_CONFIG");
	const char *home = getenv("HOME");

	if (dir && *dir)
		return rm_xasprintf("%s/config.json", dir);
	if (home && *home)
		return rm_xasprintf("%s/.docker/config.json", home);
	return NULL;
}

/* The docker client configuration: 0 and *value; 1 when it has nothing for the registry. */
static int from_config(const char *registry, char **value, const char **source, rm_error *err)
{
	char *path = config_path(), *text = NULL;
	json_t *cfg = NULL, *auths, *e;
	json_error_t je;
	const char *helper, *key;
	int ret = 1, r;

	if (!path)
		goto out;
	r = rm_read_file(path, MAX_CONFIG_FILE, &text, NULL, err);
	if (r != 0) {
		ret = r > 0 ? 1 : -1;
		goto out;
	}
	cfg = json_loads(text, 0, &je);
	if (!json_is_object(cfg)) {
		ret = rm_error_set(err, RM_ERR_INPUT, "'%s' line %d: %s", path, je.line,
				   cfg ? "not a JSON object" : je.text);
		goto out;
	}
	json_t *helpers = json_object_get(cfg, "credHelpers");
	json_object_foreach (helpers, key, e) {
		if (json_is_string(e) && host_matches(key, registry)) {
			ret = from_helper(json_string_value(e), registry, value, err);
			if (ret == 0)
				*source = "credHelpers";
			goto out;
		}
	}
	helper = json_string_value(json_object_get(cfg, "credsStore"));
	if (helper && *helper) {
		ret = from_helper(helper, registry, value, err);
		if (ret == 0)
			*source = "credsStore";
		if (ret <= 0)
			goto out;
	}
	auths = json_object_get(cfg, "auths");
	e = json_object_get(auths, registry);
	if (!e) {
		json_object_foreach (auths, key, e) {
			if (host_matches(key, registry))
				break;
		}
	}
	if (e) {
		ret = from_auths_entry(e, registry, path, value, err);
		if (ret == 0)
			*source = "config.json";
	}
out:
	if (text)
		explicit_bzero(text, strlen(text));
	free(text);
	json_decref(cfg);
	free(path);
	return ret;
}

int rm_registry_auth(const char *registry, char **value, const char **source, rm_error *err)
{
	const char *user = getenv("RM_REGISTRY_USER");
	const char *pass = getenv("RM_REGISTRY_PASSWORD");
	const char *src = "none";
	int r;

	*value = NULL;
	if ((user && *user) || (pass && *pass)) {
		if (!(user && *user) || !(pass && *pass))
			return rm_error_set(
			    err, RM_ERR_USAGE,
			    "set both RM_REGISTRY_USER and RM_REGISTRY_PASSWORD, or "
			    "neither (then the docker client configuration is used)");
		*value = auth_value(user, pass, NULL, registry);
		src = "RM_REGISTRY_USER";
	} else {
		r = from_config(registry, value, &src, err);
		if (r < 0)
			return -1;
		if (r > 0) {
			*value = rm_xstrdup(NO_AUTH);
			src = "none";
		}
	}
	if (source)
		*source = src;
	return 0;
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

static void xfer_object(struct xfer *x, const char *p, size_t n)
{
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
	if (emsg && !x->error)
		x->error = rm_xstrdup(emsg);

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
	}
	/* Push: {"aux":{"Tag":"t","Digest":"sha256:...","Size":N}} */
	const char *dg = json_string_value(json_object_get(json_object_get(o, "aux"), "Digest"));
	if (dg) {
		free(x->digest);
		x->digest = rm_xstrdup(dg);
	}
	json_decref(o);
}

/* One JSON object per line ("\r\n"), cut into chunks at arbitrary places. */
static int xfer_data(void *ud, const char *p, size_t n)
{
	struct xfer *x = ud;

	while (n) {
		const char *nl = memchr(p, '\n', n);
		size_t seg = nl ? (size_t)(nl - p) : n;
		if (rm_buf_add(&x->line, p, seg) < 0)
			return rm_error_set(x->err, RM_ERR_DOCKER,
					    "a progress line is longer than %u bytes",
					    MAX_XFER_JSON_LINE);
		if (!nl)
			break;
		xfer_object(x, rm_buf_str(&x->line), x->line.len);
		rm_buf_reset(&x->line);
		p += seg + 1;
		n -= seg + 1;
	}
	return 0;
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
	engine_req_init(r, "POST", path, 0);
	r->headers = hdrs;
	r->on_data = xfer_data;
	r->ud = x;
	if (o) {
		r->cancel = o->cancel;
		r->cancel_ud = o->cancel_ud;
	}
	ret = engine_do_request(d, r, err);
	if (ret == 0)
		xfer_object(x, rm_buf_str(&x->line), x->line.len);
	rm_buf_release(&x->line);
	wipe_free(hdr);
	return ret;
}

int rm_docker_image_tag(rm_docker *d, const char *source, const char *ref, rm_error *err)
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
	erepo = engine_escape(repo);
	etag = engine_escape(tag ? tag : "latest");
	path = rm_xasprintf("/images/%s/tag?repo=%s&tag=%s", src, erepo, etag);
	engine_req_init(&r, "POST", path, SHORT_TIMEOUT);
	ret = engine_do_request(d, &r, err);
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

int rm_docker_image_push(rm_docker *d, const char *ref, const rm_image_xfer_opts *o, char **digest,
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
	etag = engine_escape(tag);
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

int rm_docker_image_pull(rm_docker *d, const char *ref, const rm_image_xfer_opts *o, char **digest,
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
	erepo = engine_escape(repo);
	etag = engine_escape(tag);
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

int rm_docker_distribution_digest(rm_docker *d, const char *ref, const char *auth, char **digest,
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
	engine_req_init(&r, "GET", path, SHORT_TIMEOUT);
	r.headers = hdrs;
	ret = engine_json_request(d, &r, &resp, err);
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
	wipe_free(hdr);
	free(eref);
	free(path);
	return ret;
}

int rm_docker_image_remove(rm_docker *d, const char *name, int force, rm_error *err)
{
	char *ename = path_escape(name);
	char *path = rm_xasprintf("/images/%s%s", ename, force ? "?force=1" : "");
	struct req r;
	int ret;

	engine_req_init(&r, "DELETE", path, SHORT_TIMEOUT);
	ret = engine_do_request(d, &r, err);
	if (ret < 0 && r.status == 404) {
		rm_error_clear(err);
		ret = 0;
	}
	free(ename);
	free(path);
	return ret;
}
