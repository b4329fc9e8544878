/*
 * models.json loading and validation (see include/rm/registry.h for the contract).
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
#include "names.h"
#include "rm/log.h"
#include "rm/registry.h"
#include "rm/util.h"

/* Only regular files are read, sized first; the ceiling is far above the largest real
 * registry (130,000 entries are about 50 MiB) and keeps a wrong file from exhausting memory. */
#define RM_REGISTRY_MAX_BYTES ((size_t)256 << 20)

/* Model timeouts: MAD's -1 means "no override"; anything above a year is a typo. */
#define TIMEOUT_MAX 31536000.0
/* GPUs one model may ask for. */
#define N_GPUS_MAX 65536

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

/* MAD imposes no name pattern; only what breaks tag selection (',' separates tags, ':' starts
 * key=value args), the command line (blanks) or files named after models (control
 * characters) is refused. Returns the offending character, or 0 when the name is fine. */
static int bad_name_char(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p == ',' || *p == ':' || *p == ' ' || *p < 0x20 || *p == 0x7f)
			return *p;
	return 0;
}

/*
 * Joins base and path and normalises the result the way Python's os.path.normpath does
 * (madengine resolves per-folder paths with it): "." and empty segments go, "x/.." pairs
 * cancel. A trailing '/' is kept because a dockerfile prefix such as "docker/" globs
 * "docker/.*Dockerfile" and would mean something else without it. The result is absolute
 * or starts with ".." when the path leaves the folder (see path_leaves).
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

/* Whether a resolved path is absolute or climbs out of the root. */
static int path_leaves(const char *resolved)
{
	return resolved[0] == '/' ||
	       (resolved[0] == '.' && resolved[1] == '.' && (!resolved[2] || resolved[2] == '/'));
}

/* A path field resolved against base, refused when it leaves the folder. */
static int get_path(json_t *o, const char *key, int required, const char *base,
		    const struct entry_ref *e, char **out, rm_error *err)
{
	json_t *v = json_object_get(o, key);
	const char *given;
	char *resolved;

	*out = NULL;
	if (!required && (!v || json_is_null(v) || (json_is_string(v) && !json_string_length(v))))
		return 0;
	if (!json_is_string(v) || json_string_length(v) == 0)
		return field_error(err, e, key, required ? "a non-empty string" : "a string");
	given = json_string_value(v);
	resolved = resolve_path(base, given);
	if (path_leaves(resolved)) {
		free(resolved);
		return rm_error_set(err, RM_ERR_INPUT,
				    "'%s': model '%s' (entry %zu): field '%s' ('%s') leaves the "
				    "folder that holds models.json; give a path inside it",
				    e->source, e->name ? e->name : "?", e->index, key, given);
	}
	*out = resolved;
	return 0;
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
	if (reg->n <= keep)
		return;
	while (reg->n > keep)
		model_release(&reg->models[--reg->n]);
	if (reg->names)
		rm_names_rebuild(reg->names, reg->models, reg->n);
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
	static const char *type = "\"-1\" (all GPUs) or a count from 0 to 65536 such as \"8\"";
	json_t *v = json_object_get(o, "n_gpus");

	if (json_is_integer(v)) {
		json_int_t i = json_integer_value(v);
		if (i < -1 || i > N_GPUS_MAX)
			return field_error(err, e, "n_gpus", type);
		*out = (long)i;
		return 0;
	}
	if (!json_is_string(v) || rm_parse_long(json_string_value(v), -1, N_GPUS_MAX, out) != 0)
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

static int get_timeout(json_t *o, const struct entry_ref *e, rm_model *m, rm_error *err)
{
	json_t *v = json_object_get(o, "timeout");
	double t;

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_number(v))
		return field_error(err, e, "timeout", "a number of seconds");
	t = json_number_value(v);
	if (t == -1)
		t = 0; /* MAD's "no model override" */
	if (t < 0 || t > TIMEOUT_MAX)
		return field_error(err, e, "timeout",
				   "a number of seconds from 0 to 31536000 (0 or -1: no model "
				   "override)");
	m->timeout = t;
	return 0;
}

/* Fills m from entry o; on error m holds whatever was set so far (freed by the caller). */
static int parse_entry(json_t *o, struct entry_ref *e, const char *scope, const char *base,
		       rm_model *m, rm_error *err)
{
	json_t *v;
	const char *key;
	int c;

	if (!json_is_object(o))
		return rm_error_set(err, RM_ERR_INPUT,
				    "'%s': entry %zu must be an object with the model's fields",
				    e->source, e->index);

	v = json_object_get(o, "name");
	if (!json_is_string(v) || json_string_length(v) == 0)
		return field_error(err, e, "name", "a non-empty string");
	if ((c = bad_name_char(json_string_value(v))) != 0) {
		char what[32];

		if (c > 0x20 && c < 0x7f)
			snprintf(what, sizeof(what), "'%c'", c);
		else
			snprintf(what, sizeof(what), "%s",
				 c == ' ' ? "a blank" : "a control character");
		return rm_error_set(err, RM_ERR_INPUT,
				    "'%s': entry %zu: name '%s' holds %s; model names may hold "
				    "anything but ',', ':', blanks and control characters (they "
				    "separate tags and arguments on the command line)",
				    e->source, e->index, json_string_value(v), what);
	}
	m->short_name = rm_xstrdup(json_string_value(v));
	m->name = scope ? rm_xasprintf("%s/%s", scope, m->short_name) : rm_xstrdup(m->short_name);
	m->scope = rm_xstrdup(scope);
	m->source = rm_xstrdup(e->source);
	e->name = m->name;

	/* As madengine: dockerfile and scripts are relative to the registry's folder,
	 * dockercontext and multiple_results are not rebased. */
	if (get_path(o, "dockerfile", 1, base, e, &m->dockerfile, err) ||
	    get_path(o, "scripts", 1, base, e, &m->scripts, err) ||
	    get_path(o, "dockercontext", 0, ".", e, &m->dockercontext, err) ||
	    get_path(o, "multiple_results", 0, ".", e, &m->multiple_results, err))
		return -1;
	if (!m->dockercontext)
		m->dockercontext = rm_xstrdup("docker");
	if (get_n_gpus(o, e, &m->n_gpus, err) ||
	    get_required_string(o, "owner", 0, e, &m->owner, err) || get_tags(o, e, m, err) ||
	    get_required_string(o, "args", 0, e, &m->args, err))
		return -1;

	if (get_optional_string(o, "url", e, &m->url, err) ||
	    get_optional_string(o, "data", e, &m->data, err) ||
	    get_optional_string(o, "training_precision", e, &m->training_precision, err) ||
	    get_skip_gpu_arch(o, e, m, err) ||
	    get_optional_string(o, "additional_docker_run_options", e,
				&m->additional_docker_run_options, err) ||
	    get_env_vars(o, e, m, err) || get_build_secrets(o, e, m, err) ||
	    get_optional_string(o, "parser", e, &m->parser, err) ||
	    get_optional_string(o, "tunableop", e, &m->tunableop, err) || get_timeout(o, e, m, err))
		return -1;

	if (m->data && (m->data[0] == '/' || strstr(m->data, "..") || strchr(m->data, '/')))
		return field_error(err, e, "data",
				   "the name of a data.json entry (or a comma list of names), "
				   "not a path");
	if (m->tunableop && strcmp(m->tunableop, "on") != 0 && strcmp(m->tunableop, "off") != 0)
		return field_error(err, e, "tunableop", "\"on\" or \"off\"");
	if (!m->parser)
		m->parser = rm_xstrdup("generic");

	json_object_foreach (o, key, v) {
		if (!in_list(known_fields, key) && !in_list(ignored_fields, key))
			rm_warn("'%s': model '%s': unknown field '%s' ignored", e->source, m->name,
				key);
	}
	return 0;
}

/* Indexes the model appended at `at`; an earlier model of the same name is an error. */
static int check_duplicate(rm_registry *reg, size_t first_of_file, size_t at, rm_error *err)
{
	const rm_model *m = &reg->models[at], *o;
	long j;

	if (!reg->names)
		reg->names = rm_xcalloc(1, sizeof(*reg->names));
	j = rm_names_add(reg->names, reg->models, at);
	if (j < 0)
		return 0;
	o = &reg->models[j];
	if ((size_t)j >= first_of_file)
		return rm_error_set(err, RM_ERR_INPUT,
				    "'%s': model '%s' is defined twice (entries %zu and %zu); "
				    "remove or rename one",
				    m->source, m->name, (size_t)j - first_of_file + 1,
				    at - first_of_file + 1);
	return rm_error_set(err, RM_ERR_INPUT,
			    "model '%s' is defined in both '%s' and '%s'; rename one", m->name,
			    o->source, m->source);
}

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* 1-based line and column of text[off]. */
static void line_col(const char *text, size_t off, int *line, int *col)
{
	const char *nl = NULL;

	*line = 1;
	for (const char *p = text; p < text + off; p++)
		if (*p == '\n') {
			(*line)++;
			nl = p;
		}
	*col = (int)(text + off - (nl ? nl + 1 : text)) + 1;
}

static int syntax_error(rm_error *err, const char *source, const char *text, size_t off,
			const char *what)
{
	int line, col;

	line_col(text, off, &line, &col);
	return rm_error_set(err, RM_ERR_INPUT,
			    "'%s' line %d column %d: %s; fix the JSON syntax (a missing or "
			    "trailing comma, or an unquoted string, are the usual causes)",
			    source, line, col, what);
}

/* jansson's error position counts the bytes read, the bad one included: its column is the
 * one of the last byte read, which is what users saw before entries were parsed alone. */
static size_t jansson_offset(size_t start, const json_error_t *jerr)
{
	return start + (jerr->position > 0 ? (size_t)jerr->position - 1 : 0);
}

int rm_registry_load_buffer(rm_registry *reg, const char *text, size_t len, const char *source,
			    const char *scope, const char *base, rm_error *err)
{
	const char *p, *end = text + len;
	size_t keep = reg->n, cap = reg->n, index = 0;
	json_t *entry = NULL;
	int ret = -1;

	/* The array is walked here and each entry parsed on its own (jansson stops after one
	 * value with JSON_DISABLE_EOF_CHECK): memory holds one entry's DOM at a time. */
	p = skip_ws(text, end);
	if (p == end || *p != '[') {
		json_error_t jerr;
		json_t *whole = json_loadb(text, len, JSON_DECODE_ANY, &jerr);

		if (!whole)
			syntax_error(err, source, text, jansson_offset(0, &jerr), jerr.text);
		else
			rm_error_set(err, RM_ERR_INPUT,
				     "'%s': the top level must be an array of model objects "
				     "([{\"name\": ...}, ...])",
				     source);
		json_decref(whole);
		goto out;
	}
	p = skip_ws(p + 1, end);
	if (p < end && *p == ']') {
		p++;
		goto tail;
	}
	for (;;) {
		json_error_t jerr;
		struct entry_ref e = {source, NULL, ++index};
		rm_model *m;

		entry = json_loadb(
		    p, (size_t)(end - p),
		    JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
		if (!entry) {
			syntax_error(err, source, text, jansson_offset((size_t)(p - text), &jerr),
				     jerr.text);
			goto out;
		}
		p += jerr.position;
		if (reg->n == cap) {
			cap = cap ? cap * 2 : 16;
			reg->models = rm_xrealloc(reg->models, (cap + 1) * sizeof(*reg->models));
		}
		m = &reg->models[reg->n];
		memset(m, 0, sizeof(*m));
		if (parse_entry(entry, &e, scope, base, m, err)) {
			model_release(m);
			goto out;
		}
		json_decref(entry);
		entry = NULL;
		reg->n++;
		if (check_duplicate(reg, keep, reg->n - 1, err))
			goto out;
		p = skip_ws(p, end);
		if (p < end && *p == ',') {
			p = skip_ws(p + 1, end);
			continue;
		}
		if (p < end && *p == ']') {
			p++;
			break;
		}
		syntax_error(err, source, text, (size_t)(p - text),
			     p < end ? "',' or ']' expected after an entry"
				     : "unexpected end of file: ']' expected");
		goto out;
	}
tail:
	p = skip_ws(p, end);
	if (p < end) {
		syntax_error(err, source, text, (size_t)(p - text),
			     "end of file expected after the closing ']'");
		goto out;
	}
	ret = 0;
out:
	json_decref(entry);
	if (ret)
		registry_truncate(reg, keep);
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
		return rm_error_set(err, RM_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
	}
	if (fstat(fd, &st) != 0) {
		rm_error_set(err, RM_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
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
			rm_error_set(err, RM_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
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

int rm_registry_load_opts(rm_registry *reg, const char *root, const rm_registry_opts *opts,
			  rm_error *err)
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
		char *dyn_rel = rm_xasprintf("%s/get_models_json.py", dir);
		char *dyn = under_root(root, dyn_rel);
		int r = 0, had = found;

		free(path);
		path = under_root(root, rel);
		found = 0;
		r = load_file(reg, path, dirs[i], dir, &found, err);
		if (r == 0 && file_exists(dyn)) {
			if (found) {
				r = rm_error_set(err, RM_ERR_INPUT,
						 "both '%s' and '%s' exist (madengine refuses this "
						 "too); keep one",
						 path, dyn);
			} else if (opts && opts->run_dynamic) {
				found = 1;
				r = rm_dynamic_load(reg, root, dyn, dirs[i], dir,
						    opts->dynamic_timeout, err);
			} else {
				reg->dynamic_skipped = rm_strv_push(
				    reg->dynamic_skipped ? reg->dynamic_skipped
							 : rm_xcalloc(1, sizeof(char *)),
				    &reg->n_dynamic_skipped, dyn_rel);
				rm_warn("'%s' lists models by running Python on this host; it was "
					"not run, so models of scope '%s' cannot be selected (set "
					"RM_DYNAMIC_REGISTRY=run to run it, or write its models to "
					"'%s')",
					dyn, dirs[i], path);
			}
		}
		found = found || had;
		free(dyn);
		free(dyn_rel);
		free(rel);
		free(dir);
		if (r)
			goto out;
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
		registry_truncate(reg, keep);
	if (d)
		closedir(d);
	rm_strv_free(dirs);
	free(scripts);
	free(path);
	return ret;
}

int rm_registry_load(rm_registry *reg, const char *root, rm_error *err)
{
	const char *env = getenv("RM_DYNAMIC_REGISTRY");
	rm_registry_opts opts = {env && strcmp(env, "run") == 0, 0};

	return rm_registry_load_opts(reg, root, &opts, err);
}

void rm_registry_release(rm_registry *reg)
{
	if (!reg)
		return;
	registry_truncate(reg, 0);
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
