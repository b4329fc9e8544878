/*
 * Podman's Docker-compatible service, where it reads a request differently from Docker (see
 * docs/engines.md): CDI devices at create. The rest of the client is the same for both.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include <linux/magic.h>

#include <jansson.h>

#include "engine_internal.h"
#include "rm/engine.h"
#include "rm/util.h"

/* Podman's Docker API reads DeviceRequests of driver "cdi" from 5.4 on (containers/podman
 * pull request 25171); before, it drops every DeviceRequests entry. */
#define PODMAN_CDI_COMPAT_MAJOR 5
#define PODMAN_CDI_COMPAT_MINOR 4

/*
 * Told without asking the engine (its /libpod/info takes half a second: it runs its
 * runtime's and conmon's --version): a rootless service's socket belongs to its user, and
 * the host's cgroups are v2 when /sys/fs/cgroup is a cgroup2 mount. An engine on tcp:// is
 * neither.
 */
void rm_engine_podman_facts(rm_docker *d, int *rootless, int *cgroup_v1)
{
	struct stat st;
	struct statfs fs;

	*rootless = *cgroup_v1 = 0;
	if (d->kind != RM_ENGINE_PODMAN || !d->unix_path)
		return;
	*rootless = stat(d->unix_path, &st) == 0 && st.st_uid != 0;
	*cgroup_v1 = statfs("/sys/fs/cgroup", &fs) == 0 && fs.f_type != CGROUP2_SUPER_MAGIC;
}

int rm_engine__podman_at_least(const rm_docker *d, long major, long minor)
{
	long maj = 0, min = 0;
	char *end;

	if (d->kind != RM_ENGINE_PODMAN || !d->product_version[0])
		return 0;
	maj = strtol(d->product_version, &end, 10);
	if (end == d->product_version)
		return 0;
	if (*end == '.')
		min = strtol(end + 1, NULL, 10);
	return maj > major || (maj == major && min >= minor);
}

/* The "cdi" entries of DeviceRequests, as device names; *other set when another driver's
 * entry is there. */
static json_t *cdi_devices(json_t *hc, const char **other)
{
	json_t *names = json_array(), *req;
	size_t i;

	*other = NULL;
	json_array_foreach (json_object_get(hc, "DeviceRequests"), i, req) {
		const char *driver = json_string_value(json_object_get(req, "Driver"));
		json_t *ids = json_object_get(req, "DeviceIDs"), *id;
		size_t k;
		if (!driver || strcmp(driver, "cdi")) {
			*other = driver ? driver : "";
			continue;
		}
		json_array_foreach (ids, k, id)
			if (json_string_value(id))
				json_array_append(names, id);
	}
	return names;
}

/* A namespace mode of the Docker API ("host", "none", "private", "" ...) as libpod's
 * {"nsmode": ...}; NULL for the engine's default. */
static json_t *nsmode(const char *mode, int network)
{
	if (!mode || !*mode || !strcmp(mode, "default"))
		return NULL;
	if (network && !strcmp(mode, "bridge"))
		return json_pack("{s:s}", "nsmode", "bridge");
	return json_pack("{s:s}", "nsmode", mode);
}

/* "src:dst[:opts]" of Binds into libpod's mounts (a host path) or volumes (a name). */
static int add_bind(json_t *spec, const char *bind, rm_error *err)
{
	char *copy = rm_xstrdup(bind), *dst = strchr(copy, ':'), *opts = NULL;
	json_t *options = json_array();

	if (!dst || !dst[1]) {
		free(copy);
		json_decref(options);
		return rm_error_set(err, RM_ERR_INPUT, "bind '%s': expected src:dst[:options]",
				    bind);
	}
	*dst++ = '\0';
	if ((opts = strchr(dst, ':')))
		*opts++ = '\0';
	for (char *o = opts; o && *o;) {
		size_t n = strcspn(o, ",");
		char *word = rm_xstrndup(o, n);
		json_array_append_new(options, json_string(word));
		free(word);
		o += n + (o[n] == ',');
	}
	if (copy[0] == '/') {
		json_t *m = json_object_get(spec, "mounts");
		json_array_append_new(options, json_string("rbind"));
		json_array_append_new(m, json_pack("{s:s, s:s, s:s, s:o}", "destination", dst,
						   "source", copy, "type", "bind", "options",
						   options));
	} else {
		json_t *v = json_object_get(spec, "volumes");
		json_array_append_new(
		    v, json_pack("{s:s, s:s, s:o}", "Name", copy, "Dest", dst, "Options", options));
	}
	free(copy);
	return 0;
}

/* "seccomp=unconfined", "apparmor=unconfined", "label=disable", "no-new-privileges". */
static int add_security_opt(json_t *spec, const char *opt, rm_error *err)
{
	if (rm_starts_with(opt, "seccomp=") || rm_starts_with(opt, "seccomp:"))
		json_object_set_new(spec, "seccomp_profile_path", json_string(opt + 8));
	else if (rm_starts_with(opt, "apparmor=") || rm_starts_with(opt, "apparmor:"))
		json_object_set_new(spec, "apparmor_profile", json_string(opt + 9));
	else if (rm_starts_with(opt, "label=") || rm_starts_with(opt, "label:")) {
		json_t *s = json_object_get(spec, "selinux_opts");
		if (!s)
			json_object_set_new(spec, "selinux_opts", s = json_array());
		json_array_append_new(s, json_string(opt + 6));
	} else if (!strcmp(opt, "no-new-privileges") || !strcmp(opt, "no-new-privileges:true"))
		json_object_set_new(spec, "no_new_privileges", json_true());
	else
		return rm_error_set(err, RM_ERR_INPUT,
				    "security option '%s' has no translation to Podman's API", opt);
	return 0;
}

/* Ulimits [{Name, Soft, Hard}] as libpod's r_limits [{type: "RLIMIT_NAME", soft, hard}]. */
static void add_ulimits(json_t *spec, json_t *ulimits)
{
	json_t *out = json_array(), *u;
	size_t i;

	json_array_foreach (ulimits, i, u) {
		const char *name = json_string_value(json_object_get(u, "Name"));
		char type[64];
		size_t k;
		if (!name)
			continue;
		snprintf(type, sizeof(type), "RLIMIT_%s", name);
		for (k = 7; type[k]; k++)
			if (type[k] >= 'a' && type[k] <= 'z')
				type[k] = (char)(type[k] - 'a' + 'A');
		json_array_append_new(out, json_pack("{s:s, s:O, s:O}", "type", type, "soft",
						     json_object_get(u, "Soft"), "hard",
						     json_object_get(u, "Hard")));
	}
	json_object_set_new(spec, "r_limits", out);
}

/* Whether a member of the create body carries nothing (absent, false, 0, "", [], {}). */
static int empty(json_t *v)
{
	return !v || json_is_null(v) || json_is_false(v) ||
	       (json_is_integer(v) && !json_integer_value(v)) ||
	       (json_is_string(v) && !*json_string_value(v)) ||
	       (json_is_array(v) && !json_array_size(v)) ||
	       (json_is_object(v) && !json_object_size(v));
}

/* -1 with err naming the first member of o not in known that holds something (where: the
 * object's name for the message, "" at the top). */
static int only_known(json_t *o, const char *const *known, const char *where, rm_error *err)
{
	const char *key;
	json_t *v;

	json_object_foreach (o, key, v) {
		size_t k;
		for (k = 0; known[k] && strcmp(known[k], key); k++)
			;
		if (!known[k] && !empty(v))
			return rm_error_set(err, RM_ERR_INPUT,
					    "'%s%s' has no translation to Podman's API", where,
					    key);
	}
	return 0;
}

/* The container's process: image, name, command, environment (an object), user, tty. */
static void spec_process(json_t *spec, json_t *body, const char *name)
{
	json_t *env = json_object(), *v;
	size_t i;

	json_object_set(spec, "image", json_object_get(body, "Image"));
	if (name)
		json_object_set_new(spec, "name", json_string(name));
	json_object_set(spec, "command", json_object_get(body, "Cmd"));
	json_array_foreach (json_object_get(body, "Env"), i, v) {
		const char *kv = json_string_value(v), *eq = kv ? strchr(kv, '=') : NULL;
		char *k = kv ? rm_xstrndup(kv, eq ? (size_t)(eq - kv) : strlen(kv)) : NULL;
		if (k)
			json_object_set_new(env, k, json_string(eq ? eq + 1 : ""));
		free(k);
	}
	json_object_set_new(spec, "env", env);
	if ((v = json_object_get(body, "WorkingDir")) && !empty(v))
		json_object_set(spec, "work_dir", v);
	if ((v = json_object_get(body, "User")) && !empty(v))
		json_object_set(spec, "user", v);
	json_object_set_new(spec, "terminal",
			    json_boolean(json_is_true(json_object_get(body, "Tty"))));
	json_object_set_new(spec, "stdin",
			    json_boolean(json_is_true(json_object_get(body, "OpenStdin"))));
	if ((v = json_object_get(body, "Labels")))
		json_object_set(spec, "labels", v);
}

/* HostConfig's device nodes ("host:container:permissions") and the CDI names. */
static void spec_devices(json_t *spec, json_t *hc, json_t *cdi)
{
	json_t *devices = json_array(), *v;
	size_t i;

	json_array_foreach (json_object_get(hc, "Devices"), i, v) {
		const char *host = json_string_value(json_object_get(v, "PathOnHost"));
		const char *ctr = json_string_value(json_object_get(v, "PathInContainer"));
		const char *perm = json_string_value(json_object_get(v, "CgroupPermissions"));
		char *path;
		if (!host)
			continue;
		path = rm_xasprintf("%s:%s:%s", host, ctr && *ctr ? ctr : host,
				    perm && *perm ? perm : "rwm");
		json_array_append_new(devices, json_pack("{s:s}", "path", path));
		free(path);
	}
	json_array_foreach (cdi, i, v)
		json_array_append_new(devices, json_pack("{s:O}", "path", v));
	json_object_set_new(spec, "devices", devices);
}

/* HostConfig's namespaces, mounts, security and limits. */
static int spec_host(json_t *spec, json_t *hc, rm_error *err)
{
	json_t *v;
	size_t i;

	if ((v = nsmode(json_string_value(json_object_get(hc, "NetworkMode")), 1)))
		json_object_set_new(spec, "netns", v);
	if ((v = nsmode(json_string_value(json_object_get(hc, "IpcMode")), 0)))
		json_object_set_new(spec, "ipcns", v);
	json_object_set_new(spec, "remove",
			    json_boolean(json_is_true(json_object_get(hc, "AutoRemove"))));
	json_object_set_new(spec, "mounts", json_array());
	json_object_set_new(spec, "volumes", json_array());
	json_array_foreach (json_object_get(hc, "Binds"), i, v)
		if (json_string_value(v) && add_bind(spec, json_string_value(v), err) < 0)
			return -1;
	if ((v = json_object_get(hc, "CapAdd")))
		json_object_set(spec, "cap_add", v);
	if ((v = json_object_get(hc, "GroupAdd")))
		json_object_set(spec, "groups", v);
	json_array_foreach (json_object_get(hc, "SecurityOpt"), i, v)
		if (json_string_value(v) && add_security_opt(spec, json_string_value(v), err) < 0)
			return -1;
	if ((v = json_object_get(hc, "CpusetCpus")) && !empty(v))
		json_object_set_new(spec, "resource_limits",
				    json_pack("{s:{s:O}}", "cpu", "cpus", v));
	if ((v = json_object_get(hc, "ShmSize")) && !empty(v))
		json_object_set(spec, "shm_size", v);
	if ((v = json_object_get(hc, "Ulimits")) && !empty(v))
		add_ulimits(spec, v);
	if (json_is_true(json_object_get(hc, "Privileged")))
		json_object_set_new(spec, "privileged", json_true());
	if (json_is_true(json_object_get(hc, "Init")))
		json_object_set_new(spec, "init", json_true());
	return 0;
}

/*
 * The Docker create body as libpod's container spec (its SpecGenerator, JSON): the members
 * run_models sends and nothing else. A member with no translation here is an error naming
 * it, never dropped.
 */
static json_t *libpod_spec(json_t *body, const char *name, json_t *cdi, rm_error *err)
{
	static const char *const top_known[] = {
	    "Image",	    "Cmd",	 "Env",	   "WorkingDir", "Tty",	       "AttachStdout",
	    "AttachStderr", "OpenStdin", "Labels", "User",	 "HostConfig", NULL};
	static const char *const hc_known[] = {
	    "NetworkMode", "AutoRemove", "Binds",	"Devices", "DeviceRequests",
	    "CapAdd",	   "GroupAdd",	 "SecurityOpt", "IpcMode", "CpusetCpus",
	    "ShmSize",	   "Ulimits",	 "Privileged",	"Init",	   NULL};
	json_t *hc = json_object_get(body, "HostConfig"), *spec;

	if (only_known(body, top_known, "", err) < 0 ||
	    only_known(hc, hc_known, "HostConfig.", err) < 0)
		return NULL;
	spec = json_object();
	spec_process(spec, body, name);
	spec_devices(spec, hc, cdi);
	if (spec_host(spec, hc, err) < 0) {
		json_decref(spec);
		return NULL;
	}
	return spec;
}

int rm_engine__podman_create(rm_docker *d, const char *name, json_t *body, char **id, rm_error *err)
{
	json_t *hc = json_object_get(body, "HostConfig");
	const char *other = NULL;
	json_t *cdi = cdi_devices(hc, &other), *spec = NULL, *resp = NULL;
	char *js = NULL, *path = NULL;
	struct req r;
	int ret = -1;

	if (other) {
		rm_error_set(err, RM_ERR_INPUT,
			     "POST /containers/create: Podman drops device requests of driver "
			     "'%s' (Docker's NVIDIA runtime): ask for CDI devices (driver 'cdi', "
			     "e.g. nvidia.com/gpu=all)",
			     other);
		goto out;
	}
	if (!json_array_size(cdi) ||
	    rm_engine__podman_at_least(d, PODMAN_CDI_COMPAT_MAJOR, PODMAN_CDI_COMPAT_MINOR)) {
		ret = 1;
		goto out;
	}
	if (!(spec = libpod_spec(body, name, cdi, err))) {
		rm_error_wrap(err, "POST /libpod/containers/create (CDI devices on Podman %s)",
			      d->product_version);
		goto out;
	}
	js = json_dumps(spec, JSON_COMPACT);
	path = rm_xasprintf("/v%s/libpod/containers/create", d->product_version);
	rm_engine__req_init(&r, "POST", path, SHORT_TIMEOUT);
	r.unversioned = 1;
	r.body = js;
	r.body_len = js ? strlen(js) : 0;
	if (rm_engine__json_request(d, &r, &resp, err) < 0)
		goto out;
	const char *cid = json_string_value(json_object_get(resp, "Id"));
	if (!cid || !*cid) {
		rm_error_set(err, RM_ERR_DOCKER,
			     "POST /libpod/containers/create: the answer has no Id");
		goto out;
	}
	*id = rm_xstrdup(cid);
	ret = 0;
out:
	json_decref(cdi);
	json_decref(spec);
	json_decref(resp);
	free(js);
	free(path);
	return ret;
}
