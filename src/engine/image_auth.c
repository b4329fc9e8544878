/*
 * Registry credentials for the X-Registry-Auth header (see rm/engine.h): RM_REGISTRY_USER and
 * RM_REGISTRY_PASSWORD, else the docker client configuration (credHelpers, credsStore,
 * auths), else none. Every buffer that held a secret is wiped before it is freed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "rm/engine.h"
#include "rm/util.h"

#define MAX_CONFIG_FILE	  (4u * 1024 * 1024)
#define MAX_HELPER_OUTPUT (64u * 1024)
#define HELPER_TIMEOUT	  30.0
#define NO_AUTH		  "e30=" /* base64 of {} */

static void wipe_free(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

void rm_engine_auth_free(char *value)
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
	rm_error rerr = RM_ERROR_INIT;
	int ret = 1;

	if (!path)
		goto out;
	if (rm_read_file(path, MAX_CONFIG_FILE, &text, NULL, &rerr) < 0) {
		/* No configuration file: nothing for any registry. */
		if (!rm_error_missing(&rerr)) {
			if (err)
				*err = rerr;
			ret = -1;
		}
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

int rm_engine_auth(const char *registry, char **value, const char **source, rm_error *err)
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
