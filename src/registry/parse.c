/*
 * One registry file's text into models (rm_registry_load_buffer, see rm/registry.h).
 *
 * The file is parsed by yajl's event parser (Debian's libyajl): no document tree is built.
 * The events of one entry fill a fixed table of the fields we know (their raw values), and
 * when the entry's object closes it is validated into an rm_model in a fixed field order,
 * so messages name the model whatever the key order. A 130,000-entry registry is parsed in
 * one pass with the memory of the file and the models only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "internal.h"
#include "names.h"
#include "rm/log.h"
#include "rm/registry.h"
#include "rm/util.h"

/* Model timeouts: MAD's -1 means "no override"; anything above a year is a typo. */
#define TIMEOUT_MAX 31536000.0
/* GPUs one model may ask for. */
#define N_GPUS_MAX 65536

/* Fields we read, in the order they are validated. */
enum field {
	F_NAME,
	F_DOCKERFILE,
	F_SCRIPTS,
	F_DOCKERCONTEXT,
	F_MULTIPLE_RESULTS,
	F_N_GPUS,
	F_OWNER,
	F_TAGS,
	F_ARGS,
	F_URL,
	F_DATA,
	F_TRAINING_PRECISION,
	F_SKIP_GPU_ARCH,
	F_ADDITIONAL_DOCKER_RUN_OPTIONS,
	F_ENV_VARS,
	F_BUILD_SECRETS,
	F_PARSER,
	F_TUNABLEOP,
	F_TIMEOUT,
	N_FIELDS,
	F_IGNORED = N_FIELDS, /* a MAD field we do not use: skipped silently */
	F_UNKNOWN,	      /* warned about and skipped */
};

static const char *const field_names[N_FIELDS] = {
    "name",
    "dockerfile",
    "scripts",
    "dockercontext",
    "multiple_results",
    "n_gpus",
    "owner",
    "tags",
    "args",
    "url",
    "data",
    "training_precision",
    "skip_gpu_arch",
    "additional_docker_run_options",
    "env_vars",
    "build_secrets",
    "parser",
    "tunableop",
    "timeout",
};

/* Fields that MAD/madengine registries carry and that we do not use: accepted silently so a
 * MAD checkout loads without a wall of warnings. "cred" names a credential entry of MAD's
 * credential.json; the rest describe multi-node deployments or bookkeeping. */
static const char *const ignored_fields[] = {
    "cred",	"deprecated",	   "nnodes",	  "gpus_per_node", "distributed",      "launcher",
    "pipeline", "deployment_type", "description", "is_deprecated", "metric_direction", NULL,
};

enum vtype { V_NONE, V_NULL, V_BOOL, V_INT, V_REAL, V_STR, V_ARR, V_OBJ };

/* The raw value of one known field in the current entry. */
struct raw {
	int type;
	int bad;      /* an array or object holding something other than strings */
	char *str;    /* V_STR */
	long long i;  /* V_INT */
	double num;   /* V_INT and V_REAL */
	char **items; /* V_ARR elements, V_OBJ values (strings only) */
	char **keys;  /* V_OBJ keys */
	size_t n, n_keys;
};

struct parser {
	rm_registry *reg;
	const char *text, *source, *scope, *base;
	rm_error *err;
	yajl_handle h;
	size_t keep, cap, index;
	int depth;	  /* 0 outside, 1 in the top array, 2 in an entry, 3+ in a field value */
	int field;	  /* the field of the current key at depth 2 */
	int top_is_array; /* the document started with '[' */
	struct raw f[N_FIELDS];
	char **other_keys; /* ignored and unknown keys of the entry, for duplicates */
	size_t n_other;
	char **unknown; /* unknown keys of the entry, warned about once valid */
	size_t n_unknown;
	int failed; /* err is set */
};

static void raw_release(struct raw *r)
{
	free(r->str);
	rm_strv_free(r->items);
	rm_strv_free(r->keys);
	memset(r, 0, sizeof(*r));
}

static void entry_reset(struct parser *p)
{
	for (int i = 0; i < N_FIELDS; i++)
		raw_release(&p->f[i]);
	rm_strv_free(p->other_keys);
	rm_strv_free(p->unknown);
	p->other_keys = p->unknown = NULL;
	p->n_other = p->n_unknown = 0;
	p->field = F_UNKNOWN;
}

/* 1-based line and column of text[off]. */
static void line_col(const char *text, size_t off, int *line, int *col)
{
	const char *nl = NULL;

	*line = 1;
	for (const char *q = text; q < text + off; q++)
		if (*q == '\n') {
			(*line)++;
			nl = q;
		}
	*col = (int)(text + off - (nl ? nl + 1 : text)) + 1;
}

static int syntax_error(struct parser *p, size_t off, const char *what)
{
	int line, col;

	line_col(p->text, off, &line, &col);
	p->failed = 1;
	return rm_error_set(p->err, RM_ERR_INPUT,
			    "'%s' line %d column %d: %s; fix the JSON syntax (a missing or "
			    "trailing comma, or an unquoted string, are the usual causes)",
			    p->source, line, col, what);
}

/* The offset of the last byte yajl read (the end of the offending token), during a callback
 * or after an error of yajl_parse. */
static size_t here(const struct parser *p)
{
	size_t n = yajl_get_bytes_consumed(p->h);

	return n ? n - 1 : 0;
}

/* --- validation of one entry --------------------------------------------------------------- */

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
	for (const unsigned char *q = (const unsigned char *)s; *q; q++)
		if (*q == ',' || *q == ':' || *q == ' ' || *q < 0x20 || *q == 0x7f)
			return *q;
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
	size_t depth = 0;
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
	if (absolute)
		rm_buf_addch(&out, '/');
	for (size_t i = 0; i < depth; i++) {
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

static int absent(const struct raw *r)
{
	return r->type == V_NONE || r->type == V_NULL;
}

/* A path field resolved against base, refused when it leaves the folder. */
static int get_path(const struct raw *r, int fld, int required, const char *base,
		    const struct entry_ref *e, char **out, rm_error *err)
{
	const char *key = field_names[fld];
	char *resolved;

	*out = NULL;
	if (!required && (absent(r) || (r->type == V_STR && !*r->str)))
		return 0;
	if (r->type != V_STR || !*r->str)
		return field_error(err, e, key, required ? "a non-empty string" : "a string");
	resolved = resolve_path(base, r->str);
	if (path_leaves(resolved)) {
		free(resolved);
		return rm_error_set(err, RM_ERR_INPUT,
				    "'%s': model '%s' (entry %zu): field '%s' ('%s') leaves the "
				    "folder that holds models.json; give a path inside it",
				    e->source, e->name ? e->name : "?", e->index, key, r->str);
	}
	*out = resolved;
	return 0;
}

/* A required string (may be ""). */
static int get_required_string(const struct raw *r, int fld, const struct entry_ref *e, char **out,
			       rm_error *err)
{
	if (r->type != V_STR)
		return field_error(err, e, field_names[fld], "a string");
	*out = rm_xstrdup(r->str);
	return 0;
}

/* An optional string: absent, null or "" all mean "not set" (MAD files write "url": "" for
 * no repository), so users of rm_model only need the NULL test. */
static int get_optional_string(const struct raw *r, int fld, const struct entry_ref *e, char **out,
			       rm_error *err)
{
	*out = NULL;
	if (absent(r))
		return 0;
	if (r->type != V_STR)
		return field_error(err, e, field_names[fld], "a string");
	if (*r->str)
		*out = rm_xstrdup(r->str);
	return 0;
}

static int get_n_gpus(const struct raw *r, const struct entry_ref *e, long *out, rm_error *err)
{
	static const char *type = "\"-1\" (all GPUs) or a count from 0 to 65536 such as \"8\"";

	if (r->type == V_INT) {
		if (r->i < -1 || r->i > N_GPUS_MAX)
			return field_error(err, e, "n_gpus", type);
		*out = (long)r->i;
		return 0;
	}
	if (r->type != V_STR || rm_parse_long(r->str, -1, N_GPUS_MAX, out) != 0)
		return field_error(err, e, "n_gpus", type);
	return 0;
}

/* A list of strings into a fresh NULL-terminated vector. */
static char **copy_list(const struct raw *r, size_t *n)
{
	char **v = rm_xcalloc(1, sizeof(*v));

	*n = 0;
	for (size_t i = 0; i < r->n; i++)
		v = rm_strv_push(v, n, r->items[i]);
	return v;
}

static int get_tags(const struct raw *r, const struct entry_ref *e, rm_model *m, rm_error *err)
{
	if (r->type != V_ARR || r->bad)
		return field_error(err, e, "tags", "an array of strings");
	m->tags = copy_list(r, &m->n_tags);
	return 0;
}

/* A comma list; an array of strings is joined, since some hand-written registries use one. */
static int get_skip_gpu_arch(const struct raw *r, const struct entry_ref *e, rm_model *m,
			     rm_error *err)
{
	rm_buf b = RM_BUF_INIT((size_t)1 << 20);

	if (r->type != V_ARR)
		return get_optional_string(r, F_SKIP_GPU_ARCH, e, &m->skip_gpu_arch, err);
	if (r->bad)
		return field_error(err, e, "skip_gpu_arch",
				   "a comma list such as \"gfx90a,gfx942\"");
	for (size_t i = 0; i < r->n; i++) {
		if (b.len)
			rm_buf_addch(&b, ',');
		rm_buf_addstr(&b, r->items[i]);
	}
	if (b.len)
		m->skip_gpu_arch = rm_buf_detach(&b);
	rm_buf_release(&b);
	return 0;
}

/* Names of host MAD_SECRETS* variables the model wants as build args. */
static int get_build_secrets(const struct raw *r, const struct entry_ref *e, rm_model *m,
			     rm_error *err)
{
	const char *what = "an array of MAD_SECRETS* variable names";

	if (absent(r)) {
		m->build_secrets = rm_xcalloc(1, sizeof(*m->build_secrets));
		return 0;
	}
	if (r->type != V_ARR || r->bad)
		return field_error(err, e, "build_secrets", what);
	for (size_t i = 0; i < r->n; i++)
		if (!strstr(r->items[i], "MAD_SECRETS"))
			return field_error(err, e, "build_secrets", what);
	m->build_secrets = copy_list(r, &m->n_build_secrets);
	return 0;
}

static int get_env_vars(const struct raw *r, const struct entry_ref *e, rm_model *m, rm_error *err)
{
	m->env_vars = rm_xcalloc(1, sizeof(*m->env_vars));
	if (absent(r))
		return 0;
	if (r->type != V_OBJ || r->bad)
		return field_error(err, e, "env_vars", "an object of strings");
	for (size_t i = 0; i < r->n_keys; i++) {
		char *kv;

		if (!*r->keys[i] || strchr(r->keys[i], '=')) {
			char what[256];
			snprintf(what, sizeof(what),
				 "an object of strings with names without '=' (see '%.100s')",
				 r->keys[i]);
			return field_error(err, e, "env_vars", what);
		}
		kv = rm_xasprintf("%s=%s", r->keys[i], r->items[i]);
		m->env_vars = rm_strv_push(m->env_vars, &m->n_env_vars, kv);
		free(kv);
	}
	return 0;
}

static int get_timeout(const struct raw *r, const struct entry_ref *e, rm_model *m, rm_error *err)
{
	double t;

	if (absent(r))
		return 0;
	if (r->type != V_INT && r->type != V_REAL)
		return field_error(err, e, "timeout", "a number of seconds");
	t = r->num;
	if (t == -1)
		t = 0; /* MAD's "no model override" */
	if (!(t >= 0 && t <= TIMEOUT_MAX))
		return field_error(err, e, "timeout",
				   "a number of seconds from 0 to 31536000 (0 or -1: no model "
				   "override)");
	m->timeout = t;
	return 0;
}

/* Fills m from the current entry's fields; on error m holds whatever was set so far. */
static int build_model(struct parser *p, rm_model *m)
{
	struct entry_ref ref = {p->source, NULL, p->index}, *e = &ref;
	const struct raw *f = p->f;
	rm_error *err = p->err;
	int c;

	if (f[F_NAME].type != V_STR || !*f[F_NAME].str)
		return field_error(err, e, "name", "a non-empty string");
	if ((c = bad_name_char(f[F_NAME].str)) != 0) {
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
				    e->source, e->index, f[F_NAME].str, what);
	}
	m->short_name = rm_xstrdup(f[F_NAME].str);
	m->name =
	    p->scope ? rm_xasprintf("%s/%s", p->scope, m->short_name) : rm_xstrdup(m->short_name);
	m->scope = rm_xstrdup(p->scope);
	m->source = rm_xstrdup(p->source);
	e->name = m->name;

	/* As madengine: dockerfile and scripts are relative to the registry's folder,
	 * dockercontext and multiple_results are not rebased. */
	if (get_path(&f[F_DOCKERFILE], F_DOCKERFILE, 1, p->base, e, &m->dockerfile, err) ||
	    get_path(&f[F_SCRIPTS], F_SCRIPTS, 1, p->base, e, &m->scripts, err) ||
	    get_path(&f[F_DOCKERCONTEXT], F_DOCKERCONTEXT, 0, ".", e, &m->dockercontext, err) ||
	    get_path(&f[F_MULTIPLE_RESULTS], F_MULTIPLE_RESULTS, 0, ".", e, &m->multiple_results,
		     err))
		return -1;
	if (!m->dockercontext)
		m->dockercontext = rm_xstrdup("docker");
	if (get_n_gpus(&f[F_N_GPUS], e, &m->n_gpus, err) ||
	    get_required_string(&f[F_OWNER], F_OWNER, e, &m->owner, err) ||
	    get_tags(&f[F_TAGS], e, m, err) ||
	    get_required_string(&f[F_ARGS], F_ARGS, e, &m->args, err))
		return -1;
	if (get_optional_string(&f[F_URL], F_URL, e, &m->url, err) ||
	    get_optional_string(&f[F_DATA], F_DATA, e, &m->data, err) ||
	    get_optional_string(&f[F_TRAINING_PRECISION], F_TRAINING_PRECISION, e,
				&m->training_precision, err) ||
	    get_skip_gpu_arch(&f[F_SKIP_GPU_ARCH], e, m, err) ||
	    get_optional_string(&f[F_ADDITIONAL_DOCKER_RUN_OPTIONS],
				F_ADDITIONAL_DOCKER_RUN_OPTIONS, e,
				&m->additional_docker_run_options, err) ||
	    get_env_vars(&f[F_ENV_VARS], e, m, err) ||
	    get_build_secrets(&f[F_BUILD_SECRETS], e, m, err) ||
	    get_optional_string(&f[F_PARSER], F_PARSER, e, &m->parser, err) ||
	    get_optional_string(&f[F_TUNABLEOP], F_TUNABLEOP, e, &m->tunableop, err) ||
	    get_timeout(&f[F_TIMEOUT], e, m, err))
		return -1;
	if (m->data && (m->data[0] == '/' || strstr(m->data, "..") || strchr(m->data, '/')))
		return field_error(err, e, "data",
				   "the name of a data.json entry (or a comma list of names), "
				   "not a path");
	if (m->tunableop && strcmp(m->tunableop, "on") != 0 && strcmp(m->tunableop, "off") != 0)
		return field_error(err, e, "tunableop", "\"on\" or \"off\"");
	if (!m->parser)
		m->parser = rm_xstrdup("generic");
	for (size_t i = 0; i < p->n_unknown; i++)
		rm_warn("'%s': model '%s': unknown field '%s' ignored", e->source, m->name,
			p->unknown[i]);
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

/* The entry's object closed: validate and append it. */
static int end_entry(struct parser *p)
{
	rm_registry *reg = p->reg;
	rm_model *m;

	if (reg->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 16;
		reg->models = rm_xrealloc(reg->models, (p->cap + 1) * sizeof(*reg->models));
	}
	m = &reg->models[reg->n];
	memset(m, 0, sizeof(*m));
	if (build_model(p, m) < 0) {
		rm_model_release(m);
		p->failed = 1;
		return 0;
	}
	reg->n++;
	entry_reset(p);
	if (check_duplicate(reg, p->keep, reg->n - 1, p->err) < 0) {
		p->failed = 1;
		return 0;
	}
	return 1;
}

/* --- yajl callbacks ------------------------------------------------------------------------- */

static int not_array(struct parser *p)
{
	p->failed = 1;
	rm_error_set(p->err, RM_ERR_INPUT,
		     "'%s': the top level must be an array of model objects ([{\"name\": ...}, "
		     "...])",
		     p->source);
	return 0;
}

static int not_object(struct parser *p)
{
	p->failed = 1;
	rm_error_set(p->err, RM_ERR_INPUT,
		     "'%s': entry %zu must be an object with the model's fields", p->source,
		     p->index + 1);
	return 0;
}

/* A scalar value (type, and its text for strings and numbers). */
static int on_scalar(struct parser *p, int type, const char *s, size_t len)
{
	struct raw *r;

	if (p->depth == 0)
		return not_array(p);
	if (p->depth == 1)
		return not_object(p);
	if (type == V_STR && memchr(s, '\0', len)) {
		syntax_error(p, here(p), "a string holds \\u0000");
		return 0;
	}
	if (p->field >= N_FIELDS || p->depth > 3)
		return 1;
	r = &p->f[p->field];
	if (p->depth == 3) {
		/* an element of a field's array, or a value of its object */
		if (type != V_STR) {
			r->bad = 1;
			return 1;
		}
		if (r->type == V_OBJ && r->n_keys != r->n + 1) {
			r->bad = 1;
			return 1;
		}
		char *copy = rm_xstrndup(s, len);
		if (!r->items)
			r->items = rm_xcalloc(1, sizeof(*r->items));
		r->items = rm_strv_push(r->items, &r->n, copy);
		free(copy);
		return 1;
	}
	r->type = type;
	if (type == V_STR) {
		r->str = rm_xstrndup(s, len);
	} else if (type == V_INT || type == V_REAL) {
		char *num = rm_xstrndup(s, len), *end;

		errno = 0;
		if (type == V_INT) {
			r->i = strtoll(num, &end, 10);
			if (errno == ERANGE)
				r->type = V_REAL; /* out of range as an integer */
		}
		r->num = strtod(num, &end);
		free(num);
	}
	return 1;
}

static int cb_null(void *ctx)
{
	return on_scalar(ctx, V_NULL, NULL, 0);
}

static int cb_boolean(void *ctx, int b)
{
	(void)b;
	return on_scalar(ctx, V_BOOL, NULL, 0);
}

static int cb_number(void *ctx, const char *s, size_t len)
{
	int real = memchr(s, '.', len) || memchr(s, 'e', len) || memchr(s, 'E', len);

	return on_scalar(ctx, real ? V_REAL : V_INT, s, len);
}

static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
	return on_scalar(ctx, V_STR, (const char *)s, len);
}

static int seen_other(struct parser *p, const char *key)
{
	for (size_t i = 0; i < p->n_other; i++)
		if (strcmp(p->other_keys[i], key) == 0)
			return 1;
	return 0;
}

static int cb_map_key(void *ctx, const unsigned char *s, size_t len)
{
	struct parser *p = ctx;
	char *key;
	int fld = F_UNKNOWN;

	if (memchr(s, '\0', len)) {
		syntax_error(p, here(p), "a key holds \\u0000");
		return 0;
	}
	if (p->depth == 3 && p->field < N_FIELDS && p->f[p->field].type == V_OBJ) {
		struct raw *r = &p->f[p->field];
		char *k = rm_xstrndup((const char *)s, len);

		for (size_t i = 0; i < r->n_keys; i++)
			if (strcmp(r->keys[i], k) == 0) {
				free(k);
				syntax_error(p, here(p), "duplicate object key");
				return 0;
			}
		if (r->n_keys != r->n)
			r->bad = 1; /* the previous key's value was not a string */
		if (!r->keys)
			r->keys = rm_xcalloc(1, sizeof(*r->keys));
		r->keys = rm_strv_push(r->keys, &r->n_keys, k);
		free(k);
		return 1;
	}
	if (p->depth != 2)
		return 1;
	/* The key table is tiny; comparing lengths first keeps this cheap for 100,000
	 * entries of a dozen keys each. */
	for (int i = 0; i < N_FIELDS && fld == F_UNKNOWN; i++)
		if (strlen(field_names[i]) == len && memcmp(field_names[i], s, len) == 0)
			fld = i;
	if (fld < N_FIELDS && p->f[fld].type == V_NONE) {
		p->field = fld;
		return 1;
	}
	key = rm_xstrndup((const char *)s, len);
	if (fld == F_UNKNOWN)
		for (size_t i = 0; ignored_fields[i]; i++)
			if (strcmp(ignored_fields[i], key) == 0)
				fld = F_IGNORED;
	if ((fld < N_FIELDS && p->f[fld].type != V_NONE) ||
	    (fld >= N_FIELDS && seen_other(p, key))) {
		char what[160];
		snprintf(what, sizeof(what), "duplicate object key '%.100s'", key);
		free(key);
		syntax_error(p, here(p), what);
		return 0;
	}
	if (fld >= N_FIELDS) {
		if (!p->other_keys)
			p->other_keys = rm_xcalloc(1, sizeof(char *));
		p->other_keys = rm_strv_push(p->other_keys, &p->n_other, key);
	}
	if (fld == F_UNKNOWN) {
		if (!p->unknown)
			p->unknown = rm_xcalloc(1, sizeof(char *));
		p->unknown = rm_strv_push(p->unknown, &p->n_unknown, key);
	}
	free(key);
	p->field = fld;
	return 1;
}

static int cb_start_map(void *ctx)
{
	struct parser *p = ctx;

	if (p->depth == 0)
		return not_array(p);
	if (p->depth == 1) {
		p->index++;
		entry_reset(p);
	} else if (p->depth == 2 && p->field < N_FIELDS) {
		p->f[p->field].type = V_OBJ;
	} else if (p->depth >= 3 && p->field < N_FIELDS) {
		p->f[p->field].bad = 1; /* nested deeper than our fields go */
	}
	p->depth++;
	return 1;
}

static int cb_end_map(void *ctx)
{
	struct parser *p = ctx;

	p->depth--;
	if (p->depth == 1)
		return end_entry(p);
	if (p->depth == 2 && p->field < N_FIELDS) {
		/* a field's object closed: every key must have had a string value */
		struct raw *r = &p->f[p->field];
		if (r->type == V_OBJ && r->n_keys != r->n)
			r->bad = 1;
	}
	return 1;
}

static int cb_start_array(void *ctx)
{
	struct parser *p = ctx;

	if (p->depth == 0) {
		p->top_is_array = 1;
	} else if (p->depth == 1) {
		return not_object(p);
	} else if (p->depth == 2 && p->field < N_FIELDS) {
		p->f[p->field].type = V_ARR;
		p->f[p->field].items = rm_xcalloc(1, sizeof(char *));
	} else if (p->depth >= 3 && p->field < N_FIELDS) {
		p->f[p->field].bad = 1;
	}
	p->depth++;
	return 1;
}

static int cb_end_array(void *ctx)
{
	struct parser *p = ctx;

	p->depth--;
	return 1;
}

static const yajl_callbacks callbacks = {
    cb_null,	  cb_boolean, NULL,	  NULL,		  cb_number,	cb_string,
    cb_start_map, cb_map_key, cb_end_map, cb_start_array, cb_end_array,
};

int rm_registry_load_buffer(rm_registry *reg, const char *text, size_t len, const char *source,
			    const char *scope, const char *base, rm_error *err)
{
	struct parser p;
	yajl_status st;
	int ret = -1;

	memset(&p, 0, sizeof(p));
	p.reg = reg;
	p.text = text;
	p.source = source;
	p.scope = scope;
	p.base = base;
	p.err = err;
	p.keep = p.cap = reg->n;
	p.field = F_UNKNOWN;
	p.h = yajl_alloc(&callbacks, NULL, &p);
	st = yajl_parse(p.h, (const unsigned char *)text, len);
	int at_end = 0;
	if (st == yajl_status_ok) {
		st = yajl_complete_parse(p.h);
		at_end = 1; /* an error now is about the end of the text */
	}
	if (st == yajl_status_error && !p.failed) {
		unsigned char *msg = yajl_get_error(p.h, 0, NULL, 0);
		char *m = rm_xstrdup((const char *)msg);
		size_t off = at_end ? len : here(&p);

		yajl_free_error(p.h, msg);
		rm_trim(m);
		/* yajl's messages start "parse error: " or "lexical error: " */
		syntax_error(&p, off < len ? off : len,
			     strchr(m, ':') ? rm_trim(strchr(m, ':') + 1) : m);
		free(m);
		goto out;
	}
	if (p.failed)
		goto out;
	if (!p.top_is_array) {
		not_array(&p);
		goto out;
	}
	ret = 0;
out:
	entry_reset(&p);
	yajl_free(p.h);
	if (ret)
		rm_registry_truncate(reg, p.keep);
	return ret;
}
