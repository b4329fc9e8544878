/*
 * One registry entry's raw fields validated into an rm_model, in a fixed field order so that
 * messages name the model whatever the key order (see parse.c for the events).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "internal.h"
#include "names.h"
#include "parse_internal.h"
#include "rm/util.h"
#include "rm/registry.h"

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
	const char *key = rm_registry__field_names[fld];
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
		return field_error(err, e, rm_registry__field_names[fld], "a string");
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
		return field_error(err, e, rm_registry__field_names[fld], "a string");
	if (*r->str)
		*out = rm_xstrdup(r->str);
	return 0;
}

const rm_choice rm_tunableop_words[] = {
    {"on", RM_TUNABLEOP_ON}, {"off", RM_TUNABLEOP_OFF}, {NULL, 0}};

static int get_tunableop(const struct raw *r, const struct entry_ref *e, rm_model *m, rm_error *err)
{
	int v;

	m->tunableop = RM_TUNABLEOP_UNSET;
	if (absent(r) || (r->type == V_STR && !*r->str))
		return 0;
	if (r->type != V_STR || rm_choice_parse(rm_tunableop_words, r->str, &v) < 0) {
		char *words = rm_choice_list(rm_tunableop_words, "\"", ", ", " or ");
		field_error(err, e, "tunableop", words);
		free(words);
		return -1;
	}
	m->tunableop = (rm_tunableop)v;
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
	if (r->type != V_ARR || r->bad || r->nonstr)
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
	if (r->bad || r->nonstr)
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
	if (r->type != V_ARR || r->bad || r->nonstr)
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
	if (r->type != V_OBJ || r->bad || r->nonstr)
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

/* A card's "slurm" or "distributed": an object of strings, numbers and booleans, kept as
 * JSON for the launcher that reads it (rm/registry.h). */
static int get_object(const struct raw *r, int fld, const struct entry_ref *e, json_t **out,
		      rm_error *err)
{
	const char *name = rm_registry__field_names[fld];

	*out = NULL;
	if (absent(r))
		return 0;
	if (r->type != V_OBJ || r->bad || r->n != r->n_keys)
		return field_error(err, e, name, "an object of strings, numbers and booleans");
	*out = json_object();
	for (size_t i = 0; i < r->n; i++) {
		json_t *v;
		switch (r->kinds[i]) {
		case V_INT:
			v = json_integer(strtoll(r->items[i], NULL, 10));
			break;
		case V_REAL:
			v = json_real(strtod(r->items[i], NULL));
			break;
		case V_BOOL:
			v = json_boolean(!strcmp(r->items[i], "true"));
			break;
		case V_NULL:
			v = json_null();
			break;
		default:
			v = json_string(r->items[i]);
			break;
		}
		json_object_set_new(*out, r->keys[i], v ? v : json_null());
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
	if (t <= 0 && t >= -TIMEOUT_MAX)
		t = -1; /* MAD's -1, and 0 as MAD's docs say: no time limit */
	if (!(t >= -1 && t <= TIMEOUT_MAX))
		return field_error(err, e, "timeout",
				   "a number of seconds up to 31536000 (0 or negative, as MAD's "
				   "-1: no time limit)");
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
	    get_tunableop(&f[F_TUNABLEOP], e, m, err) || get_timeout(&f[F_TIMEOUT], e, m, err) ||
	    get_object(&f[F_SLURM], F_SLURM, e, &m->slurm, err) ||
	    get_object(&f[F_DISTRIBUTED], F_DISTRIBUTED, e, &m->distributed, err))
		return -1;
	if (m->data && (m->data[0] == '/' || strstr(m->data, "..") || strchr(m->data, '/')))
		return field_error(err, e, "data",
				   "the name of a data.json entry (or a comma list of names), "
				   "not a path");
	if (!m->parser)
		m->parser = rm_xstrdup("generic");
	for (size_t i = 0; i < p->n_unknown; i++)
		rm_registry__unknown_field(p, p->unknown[i], m->name);
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
int rm_registry__entry_end(struct parser *p)
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
	rm_registry__entry_reset(p);
	if (check_duplicate(reg, p->keep, reg->n - 1, p->err) < 0) {
		p->failed = 1;
		return 0;
	}
	return 1;
}

rm_script_kind rm_script_kind_of(const char *scripts)
{
	size_t len = strlen(scripts);

	while (len > 1 && scripts[len - 1] == '/')
		len--;
	if (len > 3 && !memcmp(scripts + len - 3, ".py", 3))
		return RM_SCRIPT_PYTHON;
	if ((len > 3 && !memcmp(scripts + len - 3, ".sh", 3)) ||
	    (len > 6 && !memcmp(scripts + len - 6, ".slurm", 6)) ||
	    (len > 7 && !memcmp(scripts + len - 7, ".sbatch", 7)))
		return RM_SCRIPT_BASH;
	return RM_SCRIPT_FOLDER;
}
