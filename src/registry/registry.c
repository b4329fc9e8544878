/*
 * models.json files and folders: reading them, per-folder and dynamic registries, release and
 * lookup (see include/rm/registry.h). Parsing and validation of one file is in parse.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "dynamic.h"
#include "internal.h"
#include "names.h"
#include "rm/util.h"
#include "rm/registry.h"

/* Only regular files are read, sized first; the ceiling is far above the largest real
 * registry (130,000 entries are about 50 MiB) and keeps a wrong file from exhausting memory. */
#define RM_REGISTRY_MAX_BYTES ((size_t)256 << 20)

void rm_model_release(rm_model *m)
{
	if (!m)
		return;
	free(m->name);
	free(m->short_name);
	free(m->scope);
	free(m->source);
	free(m->dockerfile);
	free(m->scripts);
	free(m->owner);
	rm_strv_free(m->tags);
	free(m->args);
	free(m->url);
	free(m->data);
	free(m->multiple_results);
	free(m->training_precision);
	free(m->skip_gpu_arch);
	free(m->dockercontext);
	free(m->additional_docker_run_options);
	rm_strv_free(m->env_vars);
	json_decref(m->slurm);
	json_decref(m->distributed);
	free(m->parser);
	rm_strv_free(m->build_secrets);
	memset(m, 0, sizeof(*m));
}

/* Drops models appended after `keep`, so a failed file leaves the registry as it was. */
void rm_registry_truncate(rm_registry *reg, size_t keep)
{
	if (reg->n <= keep)
		return;
	while (reg->n > keep)
		rm_model_release(&reg->models[--reg->n]);
	if (reg->names)
		rm_names_rebuild(reg->names, reg->models, reg->n);
}

/* "<root>/<rel>", or just rel for root ".", so messages show the paths users typed. */
static char *registry_under_root(const char *root, const char *rel)
{
	if (!root || !*root || strcmp(root, ".") == 0)
		return rm_xstrdup(rel);
	if (root[strlen(root) - 1] == '/')
		return rm_xasprintf("%s%s", root, rel);
	return rm_xasprintf("%s/%s", root, rel);
}

/* Reads a regular file whole; 1 when it does not exist. A folder or a device in its place
 * is an error that says so. */
static int read_registry_file(const char *path, char **out, size_t *len, rm_error *err)
{
	struct stat st;
	char *buf = NULL;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 1;
		return rm_error_sys(err, RM_ERR_IO, errno, "cannot open '%s'", path);
	}
	if (fstat(fd, &st) != 0) {
		rm_error_sys(err, RM_ERR_IO, errno, "cannot read '%s'", path);
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		rm_error_set(err, RM_ERR_INPUT,
			     "cannot read '%s': it is %s, and a registry must be a JSON file", path,
			     S_ISDIR(st.st_mode) ? "a folder" : "not a regular file");
		goto fail;
	}
	if ((unsigned long long)st.st_size > RM_REGISTRY_MAX_BYTES) {
		rm_error_set(err, RM_ERR_INPUT, "'%s' is larger than %zu MiB", path,
			     RM_REGISTRY_MAX_BYTES >> 20);
		goto fail;
	}
	buf = rm_xmalloc((size_t)st.st_size + 1);
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rm_error_sys(err, RM_ERR_IO, errno, "cannot read '%s'", path);
			goto fail;
		}
		if (r == 0)
			break; /* shrank meanwhile: parse what is there */
		got += (size_t)r;
	}
	buf[got] = '\0';
	close(fd);
	*out = buf;
	*len = got;
	return 0;
fail:
	free(buf);
	close(fd);
	return -1;
}

/* Loads one file if it exists; *found says whether it did. */
static int load_file(rm_registry *reg, const char *path, const char *scope, const char *base,
		     int *found, rm_error *err)
{
	char *text = NULL;
	size_t len = 0;
	int ret;

	ret = read_registry_file(path, &text, &len, err);
	if (ret)
		return ret > 0 ? 0 : -1;
	*found = 1;
	ret = rm_registry_load_buffer(reg, text, len, path, scope, base, err);
	free(text);
	return ret;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* The sorted names of the folders under root/scripts (none when it does not exist). */
static int scripts_dirs(const char *scripts, char ***dirs, size_t *n, rm_error *err)
{
	DIR *d = opendir(scripts);
	struct dirent *de;

	*n = 0;
	*dirs = rm_xcalloc(1, sizeof(**dirs));
	if (!d && errno != ENOENT && errno != ENOTDIR)
		return rm_error_sys(err, RM_ERR_IO, errno, "cannot list '%s'", scripts);
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			*dirs = rm_strv_push(*dirs, n, de->d_name);
	if (d)
		closedir(d);
	if (*n)
		qsort(*dirs, *n, sizeof(**dirs), cmp_str);
	return 0;
}

/* scripts/<name>/: its models.json, or its get_models_json.py (run or recorded as skipped);
 * *found is set when it held a registry. */
static int load_scope(rm_registry *reg, const char *root, const char *name,
		      const rm_registry_opts *opts, int *found, rm_error *err)
{
	char *dir = rm_xasprintf("scripts/%s", name), *rel = rm_xasprintf("%s/models.json", dir);
	char *dyn_rel = rm_xasprintf("%s/get_models_json.py", dir);
	char *dyn = registry_under_root(root, dyn_rel), *path = registry_under_root(root, rel);
	int r = load_file(reg, path, name, dir, found, err);

	if (r == 0 && file_exists(dyn)) {
		if (*found) {
			r = rm_error_set(err, RM_ERR_INPUT,
					 "both '%s' and '%s' exist (madengine refuses this too); "
					 "keep one",
					 path, dyn);
		} else if (opts && opts->run_dynamic) {
			*found = 1;
			r = rm_dynamic_load(reg, root, dyn, name, dir, opts->dynamic_timeout, err);
		} else {
			reg->dynamic_skipped =
			    rm_strv_push(reg->dynamic_skipped ? reg->dynamic_skipped
							      : rm_xcalloc(1, sizeof(char *)),
					 &reg->n_dynamic_skipped, dyn_rel);
			rm_warn(
			    "'%s' lists models by running Python on this host; it was not run, "
			    "so models of scope '%s' cannot be selected (give --dynamic-registry "
			    "run, or set RM_DYNAMIC_REGISTRY=run, to run it, or write its models "
			    "to '%s')",
			    dyn, name, path);
		}
	}
	free(path);
	free(dyn);
	free(dyn_rel);
	free(rel);
	free(dir);
	return r;
}

int rm_registry_load_opts(rm_registry *reg, const char *root, const rm_registry_opts *opts,
			  rm_error *err)
{
	char *path = registry_under_root(root, "models.json"),
	     *scripts = registry_under_root(root, "scripts");
	char **dirs = NULL;
	size_t n_dirs = 0, keep = reg->n;
	int found = 0, ret = -1;

	if (load_file(reg, path, NULL, ".", &found, err) ||
	    scripts_dirs(scripts, &dirs, &n_dirs, err) < 0)
		goto out;
	for (size_t i = 0; i < n_dirs; i++) {
		int in_scope = 0;
		if (load_scope(reg, root, dirs[i], opts, &in_scope, err))
			goto out;
		found = found || in_scope;
	}
	if (!found && !reg->n_dynamic_skipped) {
		rm_error_set(
		    err, RM_ERR_INPUT,
		    "no models.json in '%s' nor in '%s/*/'; run from the folder that holds "
		    "models.json (or pass its folder)",
		    root && *root ? root : ".", scripts);
		goto out;
	}
	ret = 0;
out:
	if (ret)
		rm_registry_truncate(reg, keep);
	rm_strv_free(dirs);
	free(scripts);
	free(path);
	return ret;
}

int rm_registry_load(rm_registry *reg, const char *root, rm_error *err)
{
	const char *env = getenv("RM_DYNAMIC_REGISTRY");
	rm_registry_opts opts = RM_REGISTRY_OPTS_INIT;

	opts.run_dynamic = env && strcmp(env, "run") == 0;
	return rm_registry_load_opts(reg, root, &opts, err);
}

void rm_registry_release(rm_registry *reg)
{
	if (!reg)
		return;
	rm_registry_truncate(reg, 0);
	free(reg->models);
	reg->models = NULL;
	reg->n = 0;
	rm_names_release(reg->names);
	free(reg->names);
	reg->names = NULL;
	rm_strv_free(reg->dynamic_skipped);
	reg->dynamic_skipped = NULL;
	reg->n_dynamic_skipped = 0;
}

const rm_model *rm_registry_find(const rm_registry *reg, const char *name)
{
	long i;

	if (!reg || !name || !reg->names)
		return NULL;
	i = rm_names_find(reg->names, reg->models, name);
	return i < 0 ? NULL : &reg->models[i];
}
