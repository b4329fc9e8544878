/*
 * Suite files. Each file is read twice over the same text: rm_yaml_to_json gives the typed
 * values (and refuses aliases, duplicate keys, several documents), libyaml's document loader
 * gives the line and column of every node, so that errors point at the field.
 */
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "rm/db.h"
#include "rm/detect.h"
#include "rm/references.h"
#include "rm/results.h"
#include "rm/suite.h"
#include "rm/util.h"
#include "rm/context.h"
#include "suite_internal.h"

#define MAX_INCLUDE_DEPTH 8
#define SUITE_MAX_BYTES	  ((size_t)4 << 20)

/* Settings as they accumulate: defaults of included files, then this file's, then an
 * entry's own. */
struct fields {
	json_t *context;
	long repeat, retries;
	double timeout;
	double fail;
	int has_repeat, has_retries, has_timeout, has_fail;
};

static void fields_copy(struct fields *dst, const struct fields *src)
{
	*dst = *src;
	dst->context = json_deep_copy(src->context);
}

int rm_suite__fail_at(const struct yfile *f, const yaml_node_t *n, rm_error *err, const char *field,
		      const char *fmt, ...)
{
	char what[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (!n)
		return rm_error_set(err, RM_ERR_INPUT, "'%s': %s%s%s", f->path, field,
				    field[0] ? ": " : "", what);
	return rm_error_set(err, RM_ERR_INPUT, "'%s' line %zu column %zu: %s%s%s", f->path,
			    n->start_mark.line + 1, n->start_mark.column + 1, field,
			    field[0] ? ": " : "", what);
}

/* The pair of key in a mapping node (NULL when absent or not a mapping). */
static yaml_node_pair_t *ypair(struct yfile *f, yaml_node_t *map, const char *key)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(&f->doc, p->key);
		if (k && k->type == YAML_SCALAR_NODE && strlen(key) == k->data.scalar.length &&
		    !memcmp(k->data.scalar.value, key, k->data.scalar.length))
			return p;
	}
	return NULL;
}

/* The value node of key in a mapping node (NULL when absent or not a mapping). */
yaml_node_t *rm_suite__ymap(struct yfile *f, yaml_node_t *map, const char *key)
{
	yaml_node_pair_t *p = ypair(f, map, key);
	return p ? yaml_document_get_node(&f->doc, p->value) : NULL;
}

/* The key node itself (for "unknown field" errors). */
yaml_node_t *rm_suite__ykey(struct yfile *f, yaml_node_t *map, const char *key)
{
	yaml_node_pair_t *p = ypair(f, map, key);
	return p ? yaml_document_get_node(&f->doc, p->key) : NULL;
}

yaml_node_t *rm_suite__yseq(struct yfile *f, yaml_node_t *seq, size_t i)
{
	if (!seq || seq->type != YAML_SEQUENCE_NODE ||
	    i >= (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start))
		return NULL;
	return yaml_document_get_node(&f->doc, seq->data.sequence.items.start[i]);
}

static void yfile_free(struct yfile *f)
{
	if (!f)
		return;
	if (f->have_doc)
		yaml_document_delete(&f->doc);
	json_decref(f->json);
	free(f->path);
	free(f->dir);
	free(f);
}

static int yfile_load(const char *path, struct yfile **out, rm_error *err)
{
	struct yfile *f = rm_xcalloc(1, sizeof(*f));
	yaml_parser_t parser;
	char *text = NULL;
	size_t len = 0;
	int rc;

	f->path = rm_xstrdup(path);
	f->dir = rm_dirname(path);
	rc = rm_read_file(path, SUITE_MAX_BYTES, &text, &len, err);
	if (rc != 0) {
		if (rm_error_missing(err))
			rm_error_set(err, RM_ERR_IO, "suite file '%s' does not exist", path);
		yfile_free(f);
		return -1;
	}
	f->json = rm_yaml_to_json(text, len, path, err);
	if (!f->json) {
		free(text);
		yfile_free(f);
		return -1;
	}
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	/* The text has parsed once already: a failure here can only be memory. */
	f->have_doc = yaml_parser_load(&parser, &f->doc) != 0;
	yaml_parser_delete(&parser);
	free(text);
	if (!f->have_doc) {
		yfile_free(f);
		return rm_error_set(err, RM_ERR_INTERNAL, "'%s': cannot load YAML", path);
	}
	if (!json_is_object(f->json)) {
		rm_error_set(err, RM_ERR_INPUT,
			     "'%s': a suite file is a mapping (suite:, include:, defaults:, "
			     "entries:)",
			     path);
		yfile_free(f);
		return -1;
	}
	*out = f;
	return 0;
}

static char *suite_resolve(const struct yfile *f, const char *p)
{
	if (p[0] == '/' || rm_db_is_url(p) || !strcmp(f->dir, "."))
		return rm_xstrdup(p);
	return rm_xasprintf("%s/%s", f->dir, p);
}

/* A string or a list of strings; a string is split on commas (like --tags). */
static int string_list(struct yfile *f, yaml_node_t *n, json_t *v, const char *field, char ***out,
		       size_t *nout, rm_error *err)
{
	size_t i;
	json_t *e;

	if (json_is_string(v)) {
		char *s = rm_xstrdup(json_string_value(v)), *p = s;
		while (p) {
			char *comma = strchr(p, ',');
			if (comma)
				*comma = '\0';
			char *t = rm_trim(p);
			if (*t)
				*out = rm_strv_push(*out, nout, t);
			p = comma ? comma + 1 : NULL;
		}
		free(s);
	} else if (json_is_array(v)) {
		json_array_foreach (v, i, e) {
			if (!json_is_string(e) || !json_string_length(e))
				return rm_suite__fail_at(
				    f, rm_suite__yseq(f, n, i) ? rm_suite__yseq(f, n, i) : n, err,
				    field, "item %zu must be a non-empty string", i + 1);
			*out = rm_strv_push(*out, nout, json_string_value(e));
		}
	} else {
		return rm_suite__fail_at(f, n, err, field, "must be a string or a list of strings");
	}
	if (!*nout)
		return rm_suite__fail_at(f, n, err, field, "is empty");
	return 0;
}

static int number(struct yfile *f, yaml_node_t *n, json_t *v, const char *field, double *out,
		  rm_error *err)
{
	if (!json_is_number(v) || json_number_value(v) < 0)
		return rm_suite__fail_at(f, n, err, field, "must be a number >= 0");
	*out = json_number_value(v);
	return 0;
}

/* What a suite sets once, under defaults.regression. */
struct suite_wide {
	char *baseline;
	json_t *references; /* model -> metric -> {value, lower, upper} */
	size_t window;
};

/* references: FILE | {model: {metric: {value, lower, upper}}}, checked and loaded. */
static int suite_references(struct yfile *f, yaml_node_t *n, json_t *x, const char *field,
			    struct suite_wide *w, rm_error *err)
{
	rm_references *t = rm_references_new();
	json_t *obj = NULL;
	int rc = -1;

	if (json_is_string(x) && json_string_length(x)) {
		char *path = suite_resolve(f, json_string_value(x)), *text = NULL;
		size_t len = 0;
		if (rm_read_file(path, (size_t)16 << 20, &text, &len, err) == 0)
			obj = rm_yaml_to_json(text, len, path, err);
		free(text);
		if (obj && rm_references_add_json(t, obj, path, err) == 0)
			rc = 0;
		free(path);
	} else if (json_is_object(x)) {
		obj = json_incref(x);
		rc = rm_references_add_json(t, obj, f->path, err);
	} else {
		rm_error_set(err, RM_ERR_INPUT,
			     "must be a references file or a mapping of model to metric to "
			     "{value, lower, upper}");
	}
	rm_references_free(t);
	if (rc < 0) {
		json_decref(obj);
		return rm_suite__fail_at(f, n, err, field, "%s", rm_error_text(err));
	}
	if (json_object_size(obj) == 1 && json_object_get(obj, "references")) {
		json_t *inner = json_incref(json_object_get(obj, "references"));
		json_decref(obj);
		obj = inner;
	}
	json_decref(w->references);
	w->references = obj;
	return 0;
}

/* regression: {fail_on_regression: PCT | off, baseline: PATH | URL, references: FILE |
 * MAPPING, window: N}; all but fail_on_regression once per suite, under defaults. */
static int regression(struct yfile *f, yaml_node_t *n, json_t *v, const char *where,
		      int allow_baseline, struct fields *fl, struct suite_wide *w, rm_error *err)
{
	const char *key;
	json_t *x;
	char field[256];

	if (!json_is_object(v))
		return rm_suite__fail_at(f, n, err, where,
					 "regression must be a mapping {fail_on_regression: PCT, "
					 "baseline: FILE}");
	json_object_foreach (v, key, x) {
		yaml_node_t *xn = rm_suite__ymap(f, n, key);
		snprintf(field, sizeof(field), "%s.regression.%s", where, key);
		if (!strcmp(key, "fail_on_regression")) {
			if ((json_is_boolean(x) && !json_is_true(x)) ||
			    (json_is_string(x) && !strcmp(json_string_value(x), "off"))) {
				fl->fail = -1;
			} else if (number(f, xn, x, field, &fl->fail, err) < 0) {
				return rm_suite__fail_at(f, xn, err, field,
							 "must be a percentage >= 0, or off");
			}
			fl->has_fail = 1;
		} else if (!strcmp(key, "baseline") || !strcmp(key, "references") ||
			   !strcmp(key, "window")) {
			if (!allow_baseline)
				return rm_suite__fail_at(f, rm_suite__ykey(f, n, key), err, field,
							 "the %s is one per suite: set it under "
							 "defaults.regression",
							 key);
			if (!strcmp(key, "references")) {
				if (suite_references(f, xn, x, field, w, err) < 0)
					return -1;
			} else if (!strcmp(key, "window")) {
				if (!json_is_integer(x) || json_integer_value(x) < 2 ||
				    json_integer_value(x) > RM_DETECT_MAX_WINDOW)
					return rm_suite__fail_at(
					    f, xn, err, field,
					    "must be a whole number of runs from 2 "
					    "to %d",
					    RM_DETECT_MAX_WINDOW);
				w->window = (size_t)json_integer_value(x);
			} else {
				if (!json_is_string(x) || !json_string_length(x))
					return rm_suite__fail_at(
					    f, xn, err, field,
					    "must be a perf.csv path or a database "
					    "URL");
				free(w->baseline);
				w->baseline = suite_resolve(f, json_string_value(x));
			}
		} else {
			return rm_suite__fail_at(
			    f, rm_suite__ykey(f, n, key), err, field,
			    "unknown field (fail_on_regression, baseline, references, "
			    "window)");
		}
	}
	return 0;
}

/* The fields an entry or a defaults block may hold. */
static int suite_read_fields(struct yfile *f, yaml_node_t *n, json_t *obj, const char *where,
			     rm_suite_entry *entry, struct fields *fl, struct suite_wide *w,
			     rm_error *err)
{
	const char *key;
	json_t *v;
	char field[256];

	if (!json_is_object(obj))
		return rm_suite__fail_at(f, n, err, where, "must be a mapping");
	json_object_foreach (obj, key, v) {
		yaml_node_t *vn = rm_suite__ymap(f, n, key);
		snprintf(field, sizeof(field), "%s.%s", where, key);
		if (!strcmp(key, "repeat")) {
			if (!json_is_integer(v) || json_integer_value(v) < 1 ||
			    json_integer_value(v) > 1000000) {
				/* say the value as written (2.5, true, a list), not "that" */
				char *txt = json_is_string(v) ? rm_xstrdup(json_string_value(v))
							      : json_dumps(v, JSON_ENCODE_ANY);
				int r = rm_suite__fail_at(
				    f, vn, err, field,
				    "must be a whole number from 1 to 1000000, not "
				    "%s",
				    txt ? txt : "that");
				free(txt);
				return r;
			}
			fl->repeat = (long)json_integer_value(v);
			fl->has_repeat = 1;
		} else if (!strcmp(key, "retries")) {
			if (!json_is_integer(v) || json_integer_value(v) < 0 ||
			    json_integer_value(v) > 100)
				return rm_suite__fail_at(f, vn, err, field,
							 "must be a whole number from 0 to 100");
			fl->retries = (long)json_integer_value(v);
			fl->has_retries = 1;
		} else if (!strcmp(key, "timeout")) {
			if (number(f, vn, v, field, &fl->timeout, err) < 0)
				return -1;
			fl->has_timeout = 1;
		} else if (!strcmp(key, "additional_context")) {
			if (!json_is_object(v))
				return rm_suite__fail_at(
				    f, vn, err, field, "must be a mapping, e.g. {gpu_vendor: AMD}");
			json_object_update(fl->context, v);
		} else if (!strcmp(key, "regression")) {
			if (regression(f, vn, v, where, entry == NULL, fl, w, err) < 0)
				return -1;
		} else if (entry && !strcmp(key, "name")) {
			if (!json_is_string(v) || !json_string_length(v))
				return rm_suite__fail_at(f, vn, err, field,
							 "must be a non-empty string");
			free(entry->name);
			entry->name = rm_xstrdup(json_string_value(v));
		} else if (entry && !strcmp(key, "tags")) {
			if (string_list(f, vn, v, field, &entry->tags, &entry->n_tags, err) < 0)
				return -1;
		} else if (entry && !strcmp(key, "models")) {
			if (string_list(f, vn, v, field, &entry->models, &entry->n_models, err) < 0)
				return -1;
		} else if (entry && !strcmp(key, "sweep")) {
			if (rm_suite__sweep_parse(f, vn, v, field, &entry->sweep, err) < 0)
				return -1;
		} else {
			return rm_suite__fail_at(
			    f, rm_suite__ykey(f, n, key), err, field,
			    "unknown field (%srepeat, retries, timeout, additional_context, "
			    "regression)",
			    entry ? "name, tags, models, sweep, " : "");
		}
	}
	return 0;
}

struct loader {
	rm_suite *s;
	char *stack[MAX_INCLUDE_DEPTH + 1];
	size_t depth;
	struct fields def;
	struct suite_wide wide;
};

static int suite_load_file(struct loader *L, const char *path, int top, rm_error *err);

static int include(struct loader *L, struct yfile *f, yaml_node_t *n, json_t *v, rm_error *err)
{
	size_t i;
	json_t *e;

	if (json_is_string(v)) {
		char *p = suite_resolve(f, json_string_value(v));
		int rc = suite_load_file(L, p, 0, err);
		free(p);
		return rc < 0 ? rm_suite__fail_at(f, n, err, "include", "%s", rm_error_text(err))
			      : 0;
	}
	if (!json_is_array(v))
		return rm_suite__fail_at(f, n, err, "include",
					 "must be a file name or a list of them");
	json_array_foreach (v, i, e) {
		if (!json_is_string(e))
			return rm_suite__fail_at(f, rm_suite__yseq(f, n, i), err, "include",
						 "item %zu must be a file name", i + 1);
		char *p = suite_resolve(f, json_string_value(e));
		int rc = suite_load_file(L, p, 0, err);
		free(p);
		if (rc < 0)
			return rm_suite__fail_at(f, rm_suite__yseq(f, n, i), err, "include", "%s",
						 rm_error_text(err));
	}
	return 0;
}

static int entries(struct loader *L, struct yfile *f, yaml_node_t *n, json_t *v, rm_error *err)
{
	size_t i;
	json_t *e;

	if (!json_is_array(v) || !json_array_size(v))
		return rm_suite__fail_at(f, n, err, "entries",
					 "must be a non-empty list of entries");
	L->s->entries = rm_xcalloc(json_array_size(v), sizeof(*L->s->entries));
	json_array_foreach (v, i, e) {
		rm_suite_entry *en = &L->s->entries[L->s->n++];
		yaml_node_t *en_node = rm_suite__yseq(f, n, i);
		struct fields fl;
		char where[64];

		snprintf(where, sizeof(where), "entries[%zu]", i);
		fields_copy(&fl, &L->def);
		en->file = rm_xstrdup(f->path);
		en->line = en_node ? (long)en_node->start_mark.line + 1 : 0;
		en->context = fl.context; /* owned by the entry from here */
		if (suite_read_fields(f, en_node, e, where, en, &fl, NULL, err) < 0)
			return -1;
		if (!en->n_tags && !en->n_models)
			return rm_suite__fail_at(
			    f, en_node, err, where,
			    "needs tags or models (or both) to select what to run");
		en->repeat = fl.has_repeat ? fl.repeat : 1;
		en->retries = fl.has_retries ? fl.retries : -1;
		en->timeout = fl.has_timeout ? fl.timeout : -1;
		en->fail_on_regression = fl.has_fail ? fl.fail : -1;
		en->fail_set = fl.has_fail;
		if (!en->name) {
			rm_buf b = RM_BUF_INIT((size_t)1 << 16);
			for (size_t k = 0; k < en->n_tags; k++)
				rm_buf_addf(&b, "%s%s", b.len ? "," : "", en->tags[k]);
			for (size_t k = 0; k < en->n_models; k++)
				rm_buf_addf(&b, "%s%s", b.len ? "," : "", en->models[k]);
			en->name = rm_buf_detach(&b);
		}
	}
	return 0;
}

static int suite_load_file(struct loader *L, const char *path, int top, rm_error *err)
{
	char real[PATH_MAX];
	struct yfile *f = NULL;
	yaml_node_t *root;
	const char *key;
	json_t *v;
	int ret = -1;

	if (!realpath(path, real))
		return rm_error_set(err, RM_ERR_IO, "cannot open suite file '%s': %m", path);
	for (size_t i = 0; i < L->depth; i++)
		if (!strcmp(L->stack[i], real))
			return rm_error_set(err, RM_ERR_INPUT, "'%s' includes itself (a cycle)",
					    path);
	if (L->depth == MAX_INCLUDE_DEPTH)
		return rm_error_set(err, RM_ERR_INPUT, "'%s': includes nest deeper than %d", path,
				    MAX_INCLUDE_DEPTH);
	if (yfile_load(path, &f, err) < 0)
		return -1;
	L->stack[L->depth++] = rm_xstrdup(real);
	L->s->files = rm_strv_push(L->s->files, &L->s->n_files, path);
	root = yaml_document_get_root_node(&f->doc);

	/* include first (its defaults apply first), then defaults, then the rest. */
	if ((v = json_object_get(f->json, "include")) &&
	    include(L, f, rm_suite__ymap(f, root, "include"), v, err) < 0)
		goto out;
	if ((v = json_object_get(f->json, "defaults")) &&
	    suite_read_fields(f, rm_suite__ymap(f, root, "defaults"), v, "defaults", NULL, &L->def,
			      &L->wide, err) < 0)
		goto out;
	json_object_foreach (f->json, key, v) {
		yaml_node_t *n = rm_suite__ymap(f, root, key);
		if (!strcmp(key, "include") || !strcmp(key, "defaults"))
			continue;
		if (!strcmp(key, "description") && json_is_string(v)) {
			if (top) {
				free(L->s->description);
				L->s->description = rm_xstrdup(json_string_value(v));
			}
		} else if (top && !strcmp(key, "suite")) {
			if (!json_is_string(v) || !json_string_length(v)) {
				rm_suite__fail_at(f, n, err, "suite", "must be a non-empty name");
				goto out;
			}
			free(L->s->name);
			L->s->name = rm_xstrdup(json_string_value(v));
		} else if (top && !strcmp(key, "entries")) {
			/* after everything else: the defaults must be complete */
		} else {
			rm_suite__fail_at(
			    f, rm_suite__ykey(f, root, key), err, key,
			    top ? "unknown field (suite, description, include, defaults, "
				  "entries)"
				: "unknown field in an included file (include, defaults, "
				  "description)");
			goto out;
		}
	}
	if (top) {
		if (!(v = json_object_get(f->json, "entries"))) {
			rm_suite__fail_at(f, root, err, "entries",
					  "missing: a suite needs entries");
			goto out;
		}
		if (entries(L, f, rm_suite__ymap(f, root, "entries"), v, err) < 0)
			goto out;
	}
	ret = 0;
out:
	L->depth--;
	free(L->stack[L->depth]);
	yfile_free(f);
	return ret;
}

int rm_suite_load(const char *path, rm_suite *s, rm_error *err)
{
	struct loader L = {0};

	memset(s, 0, sizeof(*s));
	L.s = s;
	L.def.context = json_object();
	L.def.fail = -1;
	s->file = rm_xstrdup(path);
	if (suite_load_file(&L, path, 1, err) < 0) {
		json_decref(L.def.context);
		free(L.wide.baseline);
		json_decref(L.wide.references);
		rm_suite_release(s);
		return -1;
	}
	json_decref(L.def.context);
	s->baseline = L.wide.baseline;
	s->references = L.wide.references;
	s->window = L.wide.window;
	if (!s->name) {
		const char *base = strrchr(path, '/');
		char *n = rm_xstrdup(base ? base + 1 : path), *dot = strrchr(n, '.');
		if (dot && dot != n)
			*dot = '\0';
		s->name = n;
	}
	return 0;
}

void rm_suite_release(rm_suite *s)
{
	for (size_t i = 0; i < s->n; i++) {
		rm_suite_entry *e = &s->entries[i];
		free(e->name);
		rm_strv_free(e->tags);
		rm_strv_free(e->models);
		json_decref(e->context);
		rm_sweep_free(e->sweep);
		free(e->file);
	}
	free(s->entries);
	free(s->name);
	free(s->description);
	free(s->file);
	free(s->baseline);
	json_decref(s->references);
	rm_strv_free(s->files);
	memset(s, 0, sizeof(*s));
}

static json_t *strv_json(char **v)
{
	json_t *a = json_array();
	for (size_t i = 0; v && v[i]; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

struct points {
	const rm_suite_entry *e;
	json_t *a;
};

static int point_json(void *ctx, const size_t *values)
{
	struct points *p = ctx;
	const rm_sweep *sw = p->e->sweep;
	json_t *o = json_object(), *params = json_object();
	char *name = rm_sweep_point_name(sw, values, p->e->name);
	long repeat = p->e->repeat;

	for (size_t d = 0; d < sw->n_dims; d++) {
		const char *v = sw->dims[d].values[values[d]];
		if (sw->dims[d].bind == RM_SWEEP_REPEAT)
			rm_parse_long(v, 1, 1000000, &repeat);
		else
			json_object_set_new(params, sw->dims[d].name, json_string(v));
	}
	json_object_set_new(o, "name", json_string(name));
	json_object_set_new(o, "params", params);
	json_object_set_new(o, "repeat", json_integer(repeat));
	json_array_append_new(p->a, o);
	free(name);
	return 0;
}

/* An entry's points: [{name, params: {NAME: VALUE}, repeat}] in order. */
static json_t *points_json(const rm_suite_entry *e)
{
	struct points p = {e, json_array()};
	rm_sweep_each(e->sweep, point_json, &p);
	return p.a;
}

int rm_suite_check_size(const rm_suite *s, int yes, rm_error *err)
{
	for (size_t i = 0; i < s->n && !yes; i++) {
		const rm_suite_entry *e = &s->entries[i];
		if (e->sweep && e->sweep->n_points >= RM_SWEEP_CONFIRM)
			return rm_error_set(
			    err, RM_ERR_INPUT,
			    "'%s' line %ld: entry '%s': its sweep has %zu points "
			    "(%d or more): give --yes to run them all, or narrow it",
			    e->file, e->line, e->name, e->sweep->n_points, RM_SWEEP_CONFIRM);
	}
	return 0;
}

json_t *rm_suite_json(const rm_suite *s)
{
	json_t *o = json_object(), *entries = json_array();

	json_object_set_new(o, "suite", json_string(s->name));
	json_object_set_new(o, "file", json_string(s->file));
	json_object_set_new(o, "description",
			    s->description ? json_string(s->description) : json_null());
	json_object_set_new(o, "baseline", s->baseline ? json_string(s->baseline) : json_null());
	json_object_set_new(o, "references",
			    s->references ? json_incref(s->references) : json_null());
	json_object_set_new(o, "window",
			    s->window ? json_integer((json_int_t)s->window) : json_null());
	json_object_set_new(o, "files", strv_json(s->files));
	for (size_t i = 0; i < s->n; i++) {
		const rm_suite_entry *e = &s->entries[i];
		json_t *je = json_object();
		json_object_set_new(je, "name", json_string(e->name));
		json_object_set_new(je, "tags", strv_json(e->tags));
		json_object_set_new(je, "models", strv_json(e->models));
		json_object_set(je, "additional_context", e->context);
		json_object_set_new(je, "repeat", json_integer(e->repeat));
		json_object_set_new(je, "retries",
				    e->retries >= 0 ? json_integer(e->retries) : json_null());
		json_object_set_new(je, "timeout",
				    e->timeout >= 0 ? json_real(e->timeout) : json_null());
		json_object_set_new(je, "fail_on_regression",
				    e->fail_on_regression >= 0 ? json_real(e->fail_on_regression)
				    : e->fail_set	       ? json_string("off")
							       : json_null());
		json_object_set_new(je, "file", json_string(e->file));
		json_object_set_new(je, "line", json_integer(e->line));
		if (e->sweep)
			json_object_set_new(je, "points", points_json(e));
		json_array_append_new(entries, je);
	}
	json_object_set_new(o, "entries", entries);
	return o;
}
