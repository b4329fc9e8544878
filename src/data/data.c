/*
 * Data providers (see include/rm/data.h): data.json, the context's "data" override and the
 * resolution of a model's data into mounts, MAD_DATAHOME and the perf.csv data columns.
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "rm/data.h"
#include "rm/util.h"

#define DATA_JSON_MAX_BYTES ((size_t)16 << 20)

/* madengine's order (Data.reorder_data_provider_config). */
static const char *const provider_order[] = {"custom", "local", "minio", "nas", "aws", NULL};

static const char *network_what(const char *provider)
{
	if (strcmp(provider, "minio") == 0)
		return "MinIO's S3 endpoint";
	if (strcmp(provider, "nas") == 0)
		return "a NAS over SSH (sshfs/rsync)";
	return "AWS S3";
}

static int known_provider(const char *p)
{
	for (size_t i = 0; provider_order[i]; i++)
		if (strcmp(provider_order[i], p) == 0)
			return 1;
	return 0;
}

/* Every dataname maps to an object of provider objects. */
static int check_shape(const json_t *obj, const char *what, rm_error *err)
{
	const char *name, *prov, *k;
	json_t *v, *cfg, *x;

	if (!json_is_object(obj))
		return rm_error_set(err, RM_ERR_INPUT,
				    "'%s': the top level must be an object {\"<dataname>\": "
				    "{\"local\": {\"path\": ...}}}",
				    what);
	json_object_foreach ((json_t *)obj, name, v) {
		if (!json_is_object(v))
			return rm_error_set(err, RM_ERR_INPUT,
					    "'%s': data '%s' must be an object of providers "
					    "({\"local\": {\"path\": ...}})",
					    what, name);
		json_object_foreach (v, prov, cfg) {
			if (!json_is_object(cfg))
				return rm_error_set(err, RM_ERR_INPUT,
						    "'%s': data '%s': provider '%s' must be an "
						    "object ({\"path\": ...})",
						    what, name, prov);
			if (!known_provider(prov))
				rm_warn("'%s': data '%s': unknown provider '%s' ignored (known: "
					"custom, local, minio, nas, aws)",
					what, name, prov);
			json_object_foreach (cfg, k, x) {
				if (!json_is_string(x) && !json_is_null(x))
					return rm_error_set(err, RM_ERR_INPUT,
							    "'%s': data '%s': provider '%s': "
							    "'%s' must be a string",
							    what, name, prov, k);
			}
		}
	}
	return 0;
}

int rm_data_config_load(rm_data_config *cfg, const char *path, rm_error *err)
{
	char *text = NULL;
	size_t len = 0;
	json_error_t jerr;

	memset(cfg, 0, sizeof(*cfg));
	if (rm_read_file(path, DATA_JSON_MAX_BYTES, &text, &len, err) < 0) {
		if (!rm_error_missing(err))
			return -1;
		rm_error_clear(err); /* no data.json: no data providers */
		cfg->obj = json_object();
		return 0;
	}
	cfg->source = rm_xstrdup(path);
	cfg->obj = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	free(text);
	if (!cfg->obj) {
		rm_error_set(err, RM_ERR_INPUT, "'%s' line %d column %d: %s; fix the JSON syntax",
			     path, jerr.line, jerr.column, jerr.text);
		goto fail;
	}
	if (check_shape(cfg->obj, path, err) < 0)
		goto fail;
	return 0;
fail:
	rm_data_config_release(cfg);
	return -1;
}

int rm_data_config_apply(rm_data_config *cfg, const json_t *data, const char *what, rm_error *err)
{
	const char *name;
	json_t *v;

	if (!data)
		return 0;
	if (check_shape(data, what, err) < 0)
		return -1;
	if (!cfg->obj)
		cfg->obj = json_object();
	json_object_foreach ((json_t *)data, name, v)
		json_object_set_new(cfg->obj, name, json_deep_copy(v));
	return 0;
}

void rm_data_config_force_mirror_local(rm_data_config *cfg, const char *path)
{
	const char *name, *prov;
	json_t *v, *c;

	if (!cfg->obj || !path)
		return;
	json_object_foreach (cfg->obj, name, v)
		json_object_foreach (v, prov, c)
			if (strcmp(prov, "local") != 0)
				json_object_set_new(c, "mirrorlocal", json_string(path));
}

void rm_data_config_release(rm_data_config *cfg)
{
	if (!cfg)
		return;
	json_decref(cfg->obj);
	free(cfg->source);
	memset(cfg, 0, sizeof(*cfg));
}

static void source_release(rm_data_source *s)
{
	free(s->dataname);
	free(s->provider);
	free(s->home);
	free(s->host_path);
	free(s->script);
	free(s->script_args);
}

void rm_data_plan_release(rm_data_plan *plan)
{
	if (!plan)
		return;
	for (size_t i = 0; i < plan->n; i++)
		source_release(&plan->sources[i]);
	free(plan->sources);
	free(plan->datahome);
	free(plan->dataname);
	free(plan->provider_type);
	memset(plan, 0, sizeof(*plan));
}

static const char *cfg_str(const json_t *cfg, const char *key)
{
	const char *s = json_string_value(json_object_get(cfg, key));

	return s && *s ? s : NULL;
}

/* A host path made absolute against root, normalised by realpath when it exists. */
static char *host_abs(const char *root, const char *path)
{
	char real[PATH_MAX];
	char *joined;

	if (path[0] == '/')
		joined = rm_xstrdup(path);
	else if (!root || !*root || strcmp(root, ".") == 0)
		joined = rm_xstrdup(path);
	else
		joined = rm_xasprintf("%s/%s", root, path);
	if (realpath(joined, real)) {
		free(joined);
		return rm_xstrdup(real);
	}
	if (joined[0] != '/') {
		char cwd[PATH_MAX];
		if (getcwd(cwd, sizeof(cwd))) {
			char *abs = rm_xasprintf("%s/%s", cwd, joined);
			free(joined);
			joined = abs;
		}
	}
	return joined;
}

static int is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int exists(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0;
}

/* A container path: absolute, no "..", no ',' (MAD_DATAHOME joins homes with it), no ':'
 * (Docker's bind syntax). */
static int bad_home(const char *h)
{
	return h[0] != '/' || strstr(h, "..") || strchr(h, ',') || strchr(h, ':');
}

/* Whether rel stays inside the folder (lexically: no absolute path, no ".." segment). */
static int inside_folder(const char *rel)
{
	const char *p = rel;

	if (rel[0] == '/')
		return 0;
	while (*p) {
		size_t n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return 0;
		p += n;
		while (*p == '/')
			p++;
	}
	return 1;
}

/* Whether the resolved path abs lies inside the resolved root (symlinks followed). */
static int under_root(const char *root, const char *abs)
{
	char real[PATH_MAX];
	size_t n;

	if (!realpath(root && *root ? root : ".", real))
		return 0;
	n = strlen(real);
	if (n == 1) /* the root is "/" */
		return 1;
	return !strncmp(abs, real, n) && (abs[n] == '/' || !abs[n]);
}

/* The local provider: 1 when its path exists (src filled), 0 when not (why appended). */
static int try_local(const char *dataname, const json_t *c, const char *root, rm_data_source *src,
		     rm_buf *why, rm_error *err)
{
	const char *path = cfg_str(c, "path"), *rw = cfg_str(c, "readwrite");
	char *abs;

	if (cfg_str(c, "mirrorlocal"))
		return rm_error_set(err, RM_ERR_INPUT,
				    "data '%s': 'mirrorlocal' cannot be given for provider "
				    "'local' (its data is already local); remove it",
				    dataname);
	if (!path) {
		rm_buf_addf(why, "; local: no 'path'");
		return 0;
	}
	abs = host_abs(root, path);
	if (!exists(abs)) {
		rm_buf_addf(why, "; local: '%s' does not exist", path);
		free(abs);
		return 0;
	}
	src->host_path = abs;
	src->read_only = !(rw && !strcmp(rw, "true"));
	return 1;
}

/* The custom provider's script, which must resolve inside the folder: 1 when it exists. */
static int custom_script(const char *dataname, const char *path, const char *root, rm_buf *why,
			 rm_error *err)
{
	char *abs;
	int ret = 1;

	if (!inside_folder(path))
		return rm_error_set(err, RM_ERR_INPUT,
				    "data '%s': provider 'custom': 'path' ('%s') leaves the "
				    "folder; the script must be inside it",
				    dataname, path);
	abs = host_abs(root, path);
	if (!exists(abs)) {
		rm_buf_addf(why, "; custom: script '%s' does not exist", path);
		ret = 0;
	} else if (!under_root(root, abs)) {
		ret = rm_error_set(err, RM_ERR_INPUT,
				   "data '%s': provider 'custom': 'path' ('%s') resolves to '%s', "
				   "outside the folder (a symlink); the script must be inside it",
				   dataname, path, abs);
	}
	free(abs);
	return ret;
}

/* The custom provider: 1 when its script exists (src filled), 0 when not (why appended). */
static int try_custom(const char *dataname, const json_t *c, const char *root, rm_data_source *src,
		      rm_buf *why, rm_error *err)
{
	const char *path = cfg_str(c, "path"), *mirror = cfg_str(c, "mirrorlocal");
	int r;

	if (!path) {
		rm_buf_addf(why, "; custom: no 'path' (the script that fetches the data)");
		return 0;
	}
	if ((r = custom_script(dataname, path, root, why, err)) <= 0)
		return r;
	if (mirror) {
		char *m = host_abs(root, mirror);
		if (!is_dir(m)) {
			free(m);
			return rm_error_set(err, RM_ERR_INPUT,
					    "data '%s': provider 'custom': mirrorlocal '%s' "
					    "is not an existing folder; create it",
					    dataname, mirror);
		}
		src->host_path = rm_xasprintf("%s/%s", m, dataname);
		src->create_host_path = 1;
		src->read_only = 0;
		free(m);
	}
	src->script = rm_xstrdup(path);
	src->script_args = rm_xstrdup(cfg_str(c, "args") ? cfg_str(c, "args") : "");
	return 1;
}

/* Tries one provider: 1 when it serves the data (src filled), 0 when unavailable (why
 * appended to `why`), -1 on a configuration error. */
static int try_provider(const char *dataname, const char *prov, const json_t *c, size_t index,
			const char *root, rm_data_source *src, rm_buf *why, rm_error *err)
{
	const char *home = cfg_str(c, "home");
	int r;

	if (home && bad_home(home))
		return rm_error_set(err, RM_ERR_INPUT,
				    "data '%s': provider '%s': 'home' ('%s') must be an absolute "
				    "container path without '..', ',' or ':'",
				    dataname, prov, home);
	if (strcmp(prov, "local") == 0) {
		r = try_local(dataname, c, root, src, why, err);
	} else if (strcmp(prov, "custom") == 0) {
		r = try_custom(dataname, c, root, src, why, err);
	} else {
		rm_buf_addf(why,
			    "; %s: needs the network (%s), which run_models does not fetch from "
			    "(mirror the data to a local path and give it a 'local' entry)",
			    prov, network_what(prov));
		return 0;
	}
	if (r <= 0)
		return r;
	src->dataname = rm_xstrdup(dataname);
	src->provider = rm_xstrdup(prov);
	src->home = home ? rm_xstrdup(home) : rm_xasprintf("/data_dlm_%zu", index);
	return 1;
}

/* One name of a model's data field into src: the first provider of madengine's order that
 * serves it. Returns 1 when one does, 0 when none can (why appended to unserved), -1 on an
 * error (an unknown name, a wrong configuration). */
static int resolve_one(const rm_data_config *cfg, const char *name, size_t index, const char *root,
		       rm_data_source *src, rm_buf *unserved, rm_error *err)
{
	json_t *entry = cfg && cfg->obj ? json_object_get(cfg->obj, name) : NULL;
	rm_buf why = RM_BUF_INIT((size_t)1 << 16);
	int served = 0;

	if (!entry && (!cfg || !cfg->source))
		return rm_error_set(err, RM_ERR_INPUT,
				    "data '%s': there is no data.json in the folder; add one with "
				    "{\"%s\": {\"local\": {\"path\": \"/path/to/data\"}}}",
				    name, name);
	if (!entry)
		return rm_error_set(err, RM_ERR_INPUT,
				    "data '%s' is not in '%s'; add it (e.g. {\"%s\": {\"local\": "
				    "{\"path\": \"/path/to/data\"}}})",
				    name, cfg->source, name);
	for (size_t k = 0; provider_order[k] && served == 0; k++) {
		const json_t *c = json_object_get(entry, provider_order[k]);
		if (c)
			served =
			    try_provider(name, provider_order[k], c, index, root, src, &why, err);
	}
	if (served <= 0) {
		source_release(src);
		memset(src, 0, sizeof(*src));
	}
	if (served == 0) {
		const char *w = rm_buf_str(&why);
		/* "; local: ..." items: the first one's separator becomes the parenthesis */
		rm_buf_addf(unserved, "%sdata '%s': no provider serves it (%s)",
			    unserved->len ? "; " : "", name,
			    why.len ? w + 2 : "data.json lists no provider for it");
	}
	rm_buf_release(&why);
	return served;
}

int rm_data_resolve(const rm_data_config *cfg, const char *data_field, const char *root,
		    rm_data_plan *plan, char **unserved, rm_error *err)
{
	rm_buf home = RM_BUF_INIT((size_t)1 << 20), types = RM_BUF_INIT((size_t)1 << 20),
	       names = RM_BUF_INIT((size_t)1 << 20), none = RM_BUF_INIT((size_t)1 << 20);
	const char *p = data_field;
	size_t index = 0;
	int ret = -1;

	memset(plan, 0, sizeof(*plan));
	*unserved = NULL;
	if (!data_field || !*data_field)
		return 0;
	plan->sources = rm_xcalloc(strlen(data_field) / 2 + 2, sizeof(*plan->sources));
	while (*p) {
		size_t len = strcspn(p, ",");
		char *name = rm_xstrndup(p, len);
		char *trimmed = rm_trim(name);
		rm_data_source *src = &plan->sources[plan->n];
		int r = 0;

		p += len + (p[len] == ',');
		if (*trimmed &&
		    (r = resolve_one(cfg, trimmed, index++, root, src, &none, err)) < 0) {
			free(name);
			goto out;
		}
		if (r > 0) {
			rm_buf_addf(&home, "%s%s", plan->n ? "," : "", src->home);
			rm_buf_addf(&types, "%s%s", plan->n ? "," : "", src->provider);
			rm_buf_addf(&names, "%s%s", plan->n ? "," : "", src->dataname);
			plan->n++;
		}
		free(name);
	}
	if (plan->n) {
		plan->datahome = rm_buf_detach(&home);
		plan->provider_type = rm_buf_detach(&types);
		plan->dataname = rm_buf_detach(&names);
	} else {
		free(plan->sources);
		plan->sources = NULL;
	}
	if (none.len)
		*unserved = rm_buf_detach(&none);
	ret = 0;
out:
	rm_buf_release(&home);
	rm_buf_release(&types);
	rm_buf_release(&names);
	rm_buf_release(&none);
	if (ret)
		rm_data_plan_release(plan);
	return ret;
}

/* --- data_size ------------------------------------------------------------------------- */

static struct {
	unsigned long long bytes;
	size_t entries, max_entries;
	double deadline;
	int too_big;
} walk;

static int add_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)path;
	(void)ftw;
	if (flag == FTW_NS || flag == FTW_DNR)
		return 0;
	walk.bytes += (unsigned long long)st->st_blocks * 512ULL;
	if (++walk.entries > walk.max_entries ||
	    (walk.entries % 1024 == 0 && rm_now() > walk.deadline)) {
		walk.too_big = 1;
		return 1;
	}
	return 0;
}

int rm_data_size(const char *path, size_t max_entries, double max_seconds, char *buf, size_t size)
{
	static const char units[] = "KMGTPE";
	double v;
	int u = 0;

	if (size)
		buf[0] = '\0';
	memset(&walk, 0, sizeof(walk));
	walk.max_entries = max_entries;
	walk.deadline = rm_now() + max_seconds;
	if (nftw(path, add_entry, 32, FTW_PHYS | FTW_MOUNT) != 0 || walk.too_big)
		return -1;
	/* du -h: KiB units at least, one decimal below 10, rounded up. */
	v = (double)walk.bytes / 1024.0;
	while (v >= 1024.0 && units[u + 1]) {
		v /= 1024.0;
		u++;
	}
	if (v < 10.0 && !(u == 0 && v == 0))
		snprintf(buf, size, "%.1f%c", ceil(v * 10.0) / 10.0, units[u]);
	else
		snprintf(buf, size, "%.0f%c", ceil(v), units[u]);
	return 0;
}
