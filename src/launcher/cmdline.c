/*
 * docker CLI equivalents of our API requests, for --dry-run. The order of the options is
 * fixed (the header's order), so the output can be compared between runs and in tests.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "rm/launcher.h"
#include "rm/util.h"

/* Bounded by the request body, which is already in memory; quoting at most quadruples it. */
#define CMDLINE_MAX ((size_t)-1 / 8)

static int is_safe(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("_./:=@%+,-", c));
}

char *rm_shell_quote(const char *s)
{
	rm_buf b = RM_BUF_INIT(CMDLINE_MAX);
	const char *p;

	if (!s)
		return NULL;
	for (p = s; *p && is_safe(*p); p++)
		;
	if (*s && !*p)
		return rm_xstrdup(s);
	rm_buf_addch(&b, '\'');
	for (p = s; *p; p++) {
		if (*p == '\'')
			rm_buf_addstr(&b, "'\\''");
		else
			rm_buf_addch(&b, *p);
	}
	rm_buf_addch(&b, '\'');
	return rm_buf_detach(&b);
}

/* Appends " word", quoted as needed. */
static void word(rm_buf *b, const char *w)
{
	char *q = rm_shell_quote(w);
	if (b->len)
		rm_buf_addch(b, ' ');
	rm_buf_addstr(b, q);
	free(q);
}

static void opt(rm_buf *b, const char *name, const char *value)
{
	word(b, name);
	word(b, value);
}

/* The text of a scalar JSON value: strings as they are, numbers and booleans as JSON. */
static char *scalar_text(json_t *v)
{
	if (json_is_string(v))
		return rm_xstrndup(json_string_value(v), json_string_length(v));
	char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	char *r = rm_xstrdup(s ? s : "");
	free(s);
	return r;
}

/* "--flag K=V" for each member of an object; a null value gives "--flag K". */
static void kv_opts(rm_buf *b, const char *flag, json_t *obj)
{
	const char *k;
	json_t *v;

	if (!json_is_object(obj))
		return;
	json_object_foreach (obj, k, v) {
		if (json_is_null(v)) {
			opt(b, flag, k);
			continue;
		}
		char *t = scalar_text(v);
		char *kv = rm_xasprintf("%s=%s", k, t);
		opt(b, flag, kv);
		free(kv);
		free(t);
	}
}

/* "--flag S" for each string of an array. */
static void list_opts(rm_buf *b, const char *flag, json_t *arr)
{
	size_t i;
	json_t *v;

	json_array_foreach (arr, i, v) {
		if (json_is_string(v))
			opt(b, flag, json_string_value(v));
	}
}

static void str_opt(rm_buf *b, const char *flag, json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));
	if (s && *s)
		opt(b, flag, s);
}

char *rm_build_cmdline(const char *tag, const char *dockerfile, const char *context,
		       json_t *buildargs, json_t *labels, int nocache, int pull)
{
	return rm_build_cmdline_for("docker", tag, dockerfile, context, buildargs, labels, nocache,
				    pull);
}

char *rm_build_cmdline_for(const char *cli, const char *tag, const char *dockerfile,
			   const char *context, json_t *buildargs, json_t *labels, int nocache,
			   int pull)
{
	rm_buf b = RM_BUF_INIT(CMDLINE_MAX);

	rm_buf_addstr(&b, cli);
	rm_buf_addstr(&b, " build --network=host");
	if (nocache)
		word(&b, "--no-cache");
	if (pull)
		word(&b, "--pull");
	if (tag)
		opt(&b, "-t", tag);
	if (dockerfile)
		opt(&b, "-f", dockerfile);
	kv_opts(&b, "--build-arg", buildargs);
	kv_opts(&b, "--label", labels);
	word(&b, context ? context : ".");
	return rm_buf_detach(&b);
}

static const char *str_or(json_t *obj, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(obj, key));
	return s && *s ? s : dflt;
}

/* The short form docker prints itself when the device keeps its path and rwm access. */
static void device_opt(rm_buf *b, json_t *d)
{
	const char *host = str_or(d, "PathOnHost", NULL);
	const char *ctr = str_or(d, "PathInContainer", host);
	const char *perms = str_or(d, "CgroupPermissions", "rwm");
	char *v;

	if (!host)
		return;
	if (!strcmp(host, ctr) && !strcmp(perms, "rwm"))
		v = rm_xstrdup(host);
	else if (!strcmp(perms, "rwm"))
		v = rm_xasprintf("%s:%s", host, ctr);
	else
		v = rm_xasprintf("%s:%s:%s", host, ctr, perms);
	opt(b, "--device", v);
	free(v);
}

static void gpus_opt(rm_buf *b, json_t *req)
{
	json_t *ids = json_object_get(req, "DeviceIDs");
	json_t *count = json_object_get(req, "Count");
	const char *driver = json_string_value(json_object_get(req, "Driver"));

	if (driver && !strcmp(driver, "cdi")) {
		/* CDI devices: the CLIs (podman, docker 25+) take their names as --device. */
		size_t i;
		json_t *id;
		json_array_foreach (ids, i, id) {
			if (json_string_value(id))
				opt(b, "--device", json_string_value(id));
		}
	} else if (json_array_size(ids)) {
		/* The inner double quotes keep docker's CSV parsing from splitting at commas. */
		rm_buf v = RM_BUF_INIT(CMDLINE_MAX);
		size_t i;
		json_t *id;
		rm_buf_addstr(&v, "\"device=");
		json_array_foreach (ids, i, id) {
			char *t = scalar_text(id);
			if (i)
				rm_buf_addch(&v, ',');
			rm_buf_addstr(&v, t);
			free(t);
		}
		rm_buf_addch(&v, '"');
		opt(b, "--gpus", rm_buf_str(&v));
		rm_buf_release(&v);
	} else if (json_is_integer(count) && json_integer_value(count) > 0) {
		char *n = rm_xasprintf("%lld", (long long)json_integer_value(count));
		opt(b, "--gpus", n);
		free(n);
	} else {
		opt(b, "--gpus", "all");
	}
}

static void ulimit_opt(rm_buf *b, json_t *u)
{
	const char *name = json_string_value(json_object_get(u, "Name"));
	json_t *soft = json_object_get(u, "Soft"), *hard = json_object_get(u, "Hard");

	if (!name || !json_is_integer(soft))
		return;
	char *v = rm_xasprintf("%s=%lld:%lld", name, (long long)json_integer_value(soft),
			       (long long)json_integer_value(json_is_integer(hard) ? hard : soft));
	opt(b, "--ulimit", v);
	free(v);
}

char *rm_run_cmdline(json_t *body, const char *name)
{
	return rm_run_cmdline_for("docker", body, name);
}

char *rm_run_cmdline_for(const char *cli, json_t *body, const char *name)
{
	rm_buf b = RM_BUF_INIT(CMDLINE_MAX);
	json_t *hc = json_object_get(body, "HostConfig");
	json_t *v, *entry = json_object_get(body, "Entrypoint");
	size_t i;

	rm_buf_addstr(&b, cli);
	rm_buf_addstr(&b, " run --rm");
	if (json_is_true(json_object_get(body, "OpenStdin")))
		word(&b, "-i");
	if (json_is_true(json_object_get(body, "Tty")))
		word(&b, "-t");
	if (name)
		opt(&b, "--name", name);
	str_opt(&b, "--network", hc, "NetworkMode");
	str_opt(&b, "--ipc", hc, "IpcMode");
	str_opt(&b, "-u", body, "User");
	list_opts(&b, "--group-add", json_object_get(hc, "GroupAdd"));
	list_opts(&b, "--cap-add", json_object_get(hc, "CapAdd"));
	list_opts(&b, "--security-opt", json_object_get(hc, "SecurityOpt"));
	json_array_foreach (json_object_get(hc, "Devices"), i, v) {
		device_opt(&b, v);
	}
	json_array_foreach (json_object_get(hc, "DeviceRequests"), i, v) {
		gpus_opt(&b, v);
	}
	json_t *shm = json_object_get(hc, "ShmSize");
	if (json_is_integer(shm) && json_integer_value(shm) > 0) {
		char *n = rm_xasprintf("%lld", (long long)json_integer_value(shm));
		opt(&b, "--shm-size", n);
		free(n);
	}
	str_opt(&b, "--cpuset-cpus", hc, "CpusetCpus");
	if (json_is_true(json_object_get(hc, "Privileged")))
		word(&b, "--privileged");
	if (json_is_true(json_object_get(hc, "Init")))
		word(&b, "--init");
	json_array_foreach (json_object_get(hc, "Ulimits"), i, v) {
		ulimit_opt(&b, v);
	}
	list_opts(&b, "-v", json_object_get(hc, "Binds"));
	list_opts(&b, "-e", json_object_get(body, "Env"));
	kv_opts(&b, "--label", json_object_get(body, "Labels"));
	str_opt(&b, "-w", body, "WorkingDir");
	/*
	 * --entrypoint takes one word; the API's further Entrypoint words run before Cmd, so
	 * they go first in the command.
	 */
	if (json_is_string(entry) && *json_string_value(entry))
		opt(&b, "--entrypoint", json_string_value(entry));
	else if (json_array_size(entry) && json_is_string(json_array_get(entry, 0)))
		opt(&b, "--entrypoint", json_string_value(json_array_get(entry, 0)));
	const char *image = json_string_value(json_object_get(body, "Image"));
	if (image)
		word(&b, image);
	if (json_is_array(entry)) {
		json_array_foreach (entry, i, v) {
			if (i && json_is_string(v))
				word(&b, json_string_value(v));
		}
	}
	json_t *cmd = json_object_get(body, "Cmd");
	if (json_is_string(cmd))
		word(&b, json_string_value(cmd));
	json_array_foreach (cmd, i, v) {
		if (json_is_string(v))
			word(&b, json_string_value(v));
	}
	return rm_buf_detach(&b);
}
