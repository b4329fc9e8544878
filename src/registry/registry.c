/*
 * models.json loading and validation (see include/rm/registry.h for the contract).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "rm/log.h"
#include "rm/registry.h"
#include "rm/util.h"

/* A registry file is a few hundred entries at most; a ceiling keeps a wrong path (a log, a
 * device) from being read whole into memory. */
#define RM_REGISTRY_MAX_BYTES ((size_t)64 << 20)

#define NAME_PATTERN "^[a-z]+_[a-z0-9_.\\-]+$"

/* Fields we read. */
static const char *const known_fields[] = {
    "name",
    "dockerfile",
    "scripts",
    "n_gpus",
    "owner",
    "tags",
    "args",
    "url",
    "data",
    "timeout",
    "multiple_results",
    "training_precision",
    "skip_gpu_arch",
    "dockercontext",
    "additional_docker_run_options",
    "env_vars",
    "parser",
    "tunableop",
    "build_secrets",
    NULL,
};

/* Fields that MAD/madengine registries carry and that we do not use: accepted silently so a
 * MAD checkout loads without a wall of warnings. "cred" names a credential entry of MAD's
 * credential.json; the rest describe multi-node deployments or bookkeeping. */
static const char *const ignored_fields[] = {
    "cred",	"deprecated", "nnodes",		 "gpus_per_node", "distributed",
    "launcher", "pipeline",   "deployment_type", "description",	  NULL,
};

static int in_list(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (strcmp(*list, s) == 0)
			return 1;
	return 0;
}

/* Where an entry sits, for messages. */
struct entry_ref {
	const char *source;
	const char *name; /* NULL until the name is validated */
	size_t index;	  /* 1-based position in the array */
};

static int field_error(rm_error *err, const struct entry_ref *e, const char *field,
		       const char *type)
{
	if (e->name)
		return rm_error_set(err, RM_ERR_INPUT,
				    "'%s': model '%s' (entry %zu): field '%s' must be %s",
				    e->source, e->name, e->index, field, type);
	return rm_error_set(err, RM_ERR_INPUT, "'%s': entry %zu: field '%s' must be %s", e->source,
			    e->index, field, type);
}

/* ^[a-z]+_[a-z0-9_.\-]+$ without regcomp: the leading run of letters is greedy, so the first
 * non-letter must be the '_' and at least one allowed character must follow it. */
static int valid_short_name(const char *s)
{
	const char *p = s;

	while (*p >= 'a' && *p <= 'z')
		p++;
	if (p == s || *p != '_' || !p[1])
		return 0;
	for (p++; *p; p++) {
		int ok = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' ||
			 *p == '.' || *p == '-';
		if (!ok)
			return 0;
	}
	return 1;
}

/*
 * Joins base and path and normalises the result the way Python's os.path.normpath does
 * (madengine resolves per-folder paths with it): "." and empty segments go, "x/.." pairs
 * cancel. A trailing '/' is kept because a dockerfile prefix such as "docker/" globs
 * "docker/" + "*Dockerfile" and would mean something else without it.
 */
static char *resolve_path(const char *base, const char *path)
{
	char *joined, *seg, *save = NULL;
	char **stack = NULL;
	size_t depth = 0, n_stack = 0;
	int absolute, trailing;
	rm_buf out = RM_BUF_INIT((size_t)1 << 20);

	if (path[0] == '/' || !base || strcmp(base, ".") == 0 || !*base)
		joined = rm_xstrdup(path);
	else
		joined = rm_xasprintf("%s/%s", base, path);
	absolute = joined[0] == '/';
	trailing = joined[0] && joined[strlen(joined) - 1] == '/';

	stack = rm_xcalloc(strlen(joined) / 2 + 2, sizeof(*stack));
	for (seg = strtok_r(joined, "/", &save); seg; seg = strtok_r(NULL, "/", &save)) {
		if (strcmp(seg, ".") == 0)
			continue;
		if (strcmp(seg, "..") == 0) {
			if (depth > 0 && strcmp(stack[depth - 1], "..") != 0) {
				depth--;
				continue;
			}
			if (absolute)
				continue; /* "/.." is "/" */
		}
		stack[depth++] = seg;
	}
	n_stack = depth;

	if (absolute)
		rm_buf_addch(&out, '/');
	for (size_t i = 0; i < n_stack; i++) {
		if (i)
			rm_buf_addch(&out, '/');
		rm_buf_addstr(&out, stack[i]);
	}
	if (out.len == 0)
		rm_buf_addch(&out, '.');
	else if (trailing && out.data[out.len - 1] != '/')
		rm_buf_addch(&out, '/');
	free(stack);
	free(joined);
	return rm_buf_detach(&out);
}

static void model_release(rm_model *m)
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
	free(m->parser);
	free(m->tunableop);
	rm_strv_free(m->build_secrets);
	memset(m, 0, sizeof(*m));
}

/* Drops models appended after `keep`, so a failed file leaves the registry as it was. */
static void registry_truncate(rm_registry *reg, size_t keep)
{
	while (reg->n > keep)
		model_release(&reg->models[--reg->n]);
}

/* A required string; `nonempty` rejects "". */
static int get_required_string(json_t *o, const char *key, int nonempty, const struct entry_ref *e,
			       char **out, rm_error *err)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_string(v) || (nonempty && json_string_length(v) == 0))
		return field_error(err, e, key, nonempty ? "a non-empty string" : "a string");
	*out = rm_xstrdup(json_string_value(v));
	return 0;
}

/* An optional string: absent, null or "" all mean "not set" (MAD files write "url": "" for
 * no repository), so users of rm_model only need the NULL test. */
static int get_optional_string(json_t *o, const char *key, const struct entry_ref *e, char **out,
			       rm_error *err)
{
	json_t *v = json_object_get(o, key);

	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return field_error(err, e, key, "a string");
	if (json_string_length(v) > 0)
		*out = rm_xstrdup(json_string_value(v));
	return 0;
}

static int get_n_gpus(json_t *o, const struct entry_ref *e, long *out, rm_error *err)
{
	static const char *type = "\"-1\" (all GPUs) or a non-negative count such as \"8\"";
	json_t *v = json_object_get(o, "n_gpus");

	if (json_is_integer(v)) {
		json_int_t i = json_integer_value(v);
		if (i < -1 || i > 1000000)
			return field_error(err, e, "n_gpus", type);
		*out = (long)i;
		return 0;
	}
	if (!json_is_string(v) || rm_parse_long(json_string_value(v), -1, 1000000, out) != 0)
		return field_error(err, e, "n_gpus", type);
	return 0;
}

static int get_tags(json_t *o, const struct entry_ref *e, rm_model *m, rm_error *err)
{
	json_t *v = json_object_get(o, "tags"), *t;
	size_t i;

	if (!json_is_array(v))
		return field_error(err, e, "tags", "an array of strings");
	m->tags = rm_xcalloc(1, sizeof(*m->tags));
	json_array_foreach (v, i, t) {
		if (!json_is_string(t))
			return field_error(err, e, "tags", "an array of strings");
		m->tags = rm_strv_push(m->tags, &m->n_tags, json_string_value(t));
	}
	return 0;
}

/* A comma list; an array of strings is joined, since some hand-written registries use one. */
static int get_skip_gpu_arch(json_t *o, const struct entry_ref *e, rm_model *m, rm_error *err)
{
	json_t *v = json_object_get(o, "skip_gpu_arch"), *t;
	rm_buf b = RM_BUF_INIT((size_t)1 << 20);
	size_t i;

	if (!json_is_array(v))
		return get_optional_string(o, "skip_gpu_arch", e, &m->skip_gpu_arch, err);
	json_array_foreach (v, i, t) {
		if (!json_is_string(t)) {
			rm_buf_release(&b);
			return field_error(err, e, "skip_gpu_arch",
					   "a comma list such as \"gfx90a,gfx942\"");
		}
		if (b.len)
			rm_buf_addch(&b, ',');
		rm_buf_addstr(&b, json_string_value(t));
	}
	if (b.len)
		m->skip_gpu_arch = rm_buf_detach(&b);
	rm_buf_release(&b);
	return 0;
}

/* Names of host MAD_SECRETS* variables the model wants as build args. */
static int get_build_secrets(json_t *o, const struct entry_ref *e, rm_model *m, rm_error *err)
{
	json_t *v = json_object_get(o, "build_secrets"), *t;
	size_t i;
	const char *what = "an array of MAD_SECRETS* variable names";

	m->build_secrets = rm_xcalloc(1, sizeof(*m->build_secrets));
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_array(v))
		return field_error(err, e, "build_secrets", what);
	json_array_foreach (v, i, t) {
		if (!json_is_string(t) || !strstr(json_string_value(t), "MAD_SECRETS"))
			return field_error(err, e, "build_secrets", what);
		m->build_secrets =
		    rm_strv_push(m->build_secrets, &m->n_build_secrets, json_string_value(t));
	}
	return 0;
}

static int get_env_vars(json_t *o, const struct entry_ref *e, rm_model *m, rm_error *err)
{
	json_t *v = json_object_get(o, "env_vars"), *val;
	const char *key;

	m->env_vars = rm_xcalloc(1, sizeof(*m->env_vars));
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_object(v))
		return field_error(err, e, "env_vars", "an object of strings");
	json_object_foreach (v, key, val) {
		char *kv;

		if (!json_is_string(val) || !*key || strchr(key, '=')) {
			char what[256];
			snprintf(what, sizeof(what),
				 "an object of strings with names without '=' (see '%.100s')", key);
			return field_error(err, e, "env_vars", what);
		}
		kv = rm_xasprintf("%s=%s", key, json_string_value(val));
		m->env_vars = rm_strv_push(m->env_vars, &m->n_env_vars, kv);
		free(kv);
	}
	return 0;
}

/* Fills m from entry o; on error m holds whatever was set so far (freed by the caller). */
static int parse_entry(json_t *o, struct entry_ref *e, const char *scope, const char *base,
		       rm_model *m, rm_error *err)
{
	json_t *v;
	const char *key;
	char *s = NULL;

	if (!json_is_object(o))
		return rm_error_set(err, RM_ERR_INPUT,
				    "'%s': entry %zu must be an object with the model's fields",
				    e->source, e->index);

	v = json_object_get(o, "name");
	if (!json_is_string(v))
		return field_error(err, e, "name", "a string");
	if (!valid_short_name(json_string_value(v)))
		return rm_error_set(
		    err, RM_ERR_INPUT,
		    "'%s': entry %zu: name '%s' does not match %s (lowercase letters, "
		    "'_', then letters, digits or '_.-', e.g. 'pyt_bert_training')",
		    e->source, e->index, json_string_value(v), NAME_PATTERN);
	m->short_name = rm_xstrdup(json_string_value(v));
	m->name = scope ? rm_xasprintf("%s/%s", scope, m->short_name) : rm_xstrdup(m->short_name);
	m->scope = rm_xstrdup(scope);
	m->source = rm_xstrdup(e->source);
	e->name = m->name;

	if (get_required_string(o, "dockerfile", 1, e, &s, err))
		return -1;
	m->dockerfile = resolve_path(base, s);
	free(s);
	s = NULL;
	if (get_required_string(o, "scripts", 1, e, &s, err))
		return -1;
	m->scripts = resolve_path(base, s);
	free(s);
	s = NULL;
	if (get_n_gpus(o, e, &m->n_gpus, err) ||
	    get_required_string(o, "owner", 0, e, &m->owner, err) || get_tags(o, e, m, err) ||
	    get_required_string(o, "args", 0, e, &m->args, err))
		return -1;

	if (get_optional_string(o, "url", e, &m->url, err) ||
	    get_optional_string(o, "data", e, &m->data, err) ||
	    get_optional_string(o, "multiple_results", e, &m->multiple_results, err) ||
	    get_optional_string(o, "training_precision", e, &m->training_precision, err) ||
	    get_skip_gpu_arch(o, e, m, err) ||
	    get_optional_string(o, "additional_docker_run_options", e,
				&m->additional_docker_run_options, err) ||
	    get_env_vars(o, e, m, err) || get_build_secrets(o, e, m, err) ||
	    get_optional_string(o, "parser", e, &m->parser, err) ||
	    get_optional_string(o, "tunableop", e, &m->tunableop, err))
		return -1;

	v = json_object_get(o, "timeout");
	if (v && !json_is_null(v)) {
		if (!json_is_number(v))
			return field_error(err, e, "timeout", "a number of seconds");
		m->timeout = json_number_value(v);
	}

	if (m->tunableop && strcmp(m->tunableop, "on") != 0 && strcmp(m->tunableop, "off") != 0)
		return field_error(err, e, "tunableop", "\"on\" or \"off\"");
	if (!m->parser)
		m->parser = rm_xstrdup("generic");

	if (get_optional_string(o, "dockercontext", e, &s, err))
		return -1;
	m->dockercontext = resolve_path(base, s ? s : "docker");
	free(s);

	json_object_foreach (o, key, v) {
		if (!in_list(known_fields, key) && !in_list(ignored_fields, key))
			rm_warn("'%s': model '%s': unknown field '%s' ignored", e->source, m->name,
				key);
	}
	return 0;
}

/* Checks m (already appended at index `at`) against every earlier model. */
static int check_duplicate(const rm_registry *reg, size_t first_of_file, size_t at, rm_error *err)
{
	const rm_model *m = &reg->models[at];

	for (size_t j = 0; j < at; j++) {
		const rm_model *o = &reg->models[j];

		if (strcmp(o->name, m->name) != 0)
			continue;
		if (j >= first_of_file)
			return rm_error_set(
			    err, RM_ERR_INPUT,
			    "'%s': model '%s' is defined twice (entries %zu and %zu); "
			    "remove or rename one",
			    m->source, m->name, j - first_of_file + 1, at - first_of_file + 1);
		return rm_error_set(err, RM_ERR_INPUT,
				    "model '%s' is defined in both '%s' and '%s'; rename one",
				    m->name, o->source, m->source);
	}
	return 0;
}

int rm_registry_load_buffer(rm_registry *reg, const char *text, size_t len, const char *source,
			    const char *scope, const char *base, rm_error *err)
{
	json_error_t jerr;
	json_t *root = NULL, *entry;
	size_t keep = reg->n, i;
	int ret = -1;

	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		rm_error_set(err, RM_ERR_INPUT,
			     "'%s' line %d column %d: %s; fix the JSON syntax (a missing or "
			     "trailing comma, or an unquoted string, are the usual causes)",
			     source, jerr.line, jerr.column, jerr.text);
		goto out;
	}
	if (!json_is_array(root)) {
		rm_error_set(err, RM_ERR_INPUT,
			     "'%s': the top level must be an array of model objects ([{\"name\": "
			     "...}, ...])",
			     source);
		goto out;
	}

	reg->models =
	    rm_xrealloc(reg->models, (reg->n + json_array_size(root) + 1) * sizeof(*reg->models));
	json_array_foreach (root, i, entry) {
		struct entry_ref e = {source, NULL, i + 1};
		rm_model *m = &reg->models[reg->n];

		memset(m, 0, sizeof(*m));
		if (parse_entry(entry, &e, scope, base, m, err)) {
			model_release(m);
			goto out;
		}
		reg->n++;
		if (check_duplicate(reg, keep, reg->n - 1, err))
			goto out;
	}
	ret = 0;
out:
	if (ret)
		registry_truncate(reg, keep);
	json_decref(root);
	return ret;
}

/* "<root>/<rel>", or just rel for root ".", so messages show the paths users typed. */
static char *under_root(const char *root, const char *rel)
{
	if (!root || !*root || strcmp(root, ".") == 0)
		return rm_xstrdup(rel);
	if (root[strlen(root) - 1] == '/')
		return rm_xasprintf("%s%s", root, rel);
	return rm_xasprintf("%s/%s", root, rel);
}

/* Loads one file if it exists; *found says whether it did. */
static int load_file(rm_registry *reg, const char *path, const char *scope, const char *base,
		     int *found, rm_error *err)
{
	char *text = NULL;
	size_t len = 0;
	int ret;

	ret = rm_read_file(path, RM_REGISTRY_MAX_BYTES, &text, &len, err);
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

int rm_registry_load(rm_registry *reg, const char *root, rm_error *err)
{
	char *path = NULL, *scripts = NULL;
	char **dirs = NULL;
	size_t n_dirs = 0, keep = reg->n;
	int found = 0, ret = -1;
	DIR *d = NULL;
	struct dirent *de;

	path = under_root(root, "models.json");
	if (load_file(reg, path, NULL, ".", &found, err))
		goto out;

	scripts = under_root(root, "scripts");
	d = opendir(scripts);
	if (!d && errno != ENOENT && errno != ENOTDIR) {
		rm_error_set(err, RM_ERR_IO, "cannot list '%s': %s", scripts, strerror(errno));
		goto out;
	}
	dirs = rm_xcalloc(1, sizeof(*dirs));
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		dirs = rm_strv_push(dirs, &n_dirs, de->d_name);
	}
	if (n_dirs)
		qsort(dirs, n_dirs, sizeof(*dirs), cmp_str);

	for (size_t i = 0; i < n_dirs; i++) {
		char *dir = rm_xasprintf("scripts/%s", dirs[i]);
		char *rel = rm_xasprintf("%s/models.json", dir);
		int r;

		free(path);
		path = under_root(root, rel);
		r = load_file(reg, path, dirs[i], dir, &found, err);
		free(rel);
		free(dir);
		if (r)
			goto out;
	}

	if (!found) {
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
		registry_truncate(reg, keep);
	if (d)
		closedir(d);
	rm_strv_free(dirs);
	free(scripts);
	free(path);
	return ret;
}

void rm_registry_release(rm_registry *reg)
{
	if (!reg)
		return;
	registry_truncate(reg, 0);
	free(reg->models);
	reg->models = NULL;
	reg->n = 0;
}

const rm_model *rm_registry_find(const rm_registry *reg, const char *name)
{
	if (!reg || !name)
		return NULL;
	for (size_t i = 0; i < reg->n; i++)
		if (strcmp(reg->models[i].name, name) == 0)
			return &reg->models[i];
	return NULL;
}
