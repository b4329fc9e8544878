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
#include "parse_internal.h"
#include "names.h"
#include "rm/util.h"
#include "rm/registry.h"

const char *const rm_registry__field_names[N_FIELDS] = {
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
    "slurm",
    "distributed",
};

/* Fields that MAD/madengine registries carry and that we do not use: accepted silently so a
 * MAD checkout loads without a wall of warnings. "cred" names a credential entry of MAD's
 * credential.json; the rest describe multi-node deployments or bookkeeping. */
const char *const rm_registry__ignored_fields[] = {
    "cred",	"deprecated",	   "nnodes",	  "gpus_per_node", "launcher",
    "pipeline", "deployment_type", "description", "is_deprecated", "metric_direction",
    NULL,
};

void rm_registry__raw_release(struct raw *r)
{
	free(r->str);
	free(r->kinds);
	rm_strv_free(r->items);
	rm_strv_free(r->keys);
	memset(r, 0, sizeof(*r));
}

void rm_registry__unknown_field(struct parser *p, const char *field, const char *model)
{
	size_t i, n;

	for (i = 0; i < p->n_unknown_fields; i++)
		if (!strcmp(p->unknown_fields[i], field)) {
			p->unknown_count[i]++;
			return;
		}
	n = p->n_unknown_fields;
	p->unknown_fields = rm_strv_push(p->unknown_fields, &p->n_unknown_fields, field);
	p->unknown_first = rm_strv_push(p->unknown_first, &n, model);
	p->unknown_count = rm_xrealloc(p->unknown_count, (n) * sizeof(*p->unknown_count));
	p->unknown_count[n - 1] = 1;
}

/* Once a file: its unknown fields, each with the models that have it. */
static void warn_unknown_fields(struct parser *p)
{
	for (size_t i = 0; i < p->n_unknown_fields; i++) {
		if (p->unknown_count[i] == 1)
			rm_warn("'%s': model '%s': unknown field '%s' ignored", p->source,
				p->unknown_first[i], p->unknown_fields[i]);
		else
			rm_warn("'%s': unknown field '%s' ignored (in %zu models, the first '%s')",
				p->source, p->unknown_fields[i], p->unknown_count[i],
				p->unknown_first[i]);
	}
	rm_strv_free(p->unknown_fields);
	rm_strv_free(p->unknown_first);
	free(p->unknown_count);
}

void rm_registry__entry_reset(struct parser *p)
{
	for (int i = 0; i < N_FIELDS; i++)
		rm_registry__raw_release(&p->f[i]);
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
		if (r->type == V_OBJ && r->n_keys != r->n + 1) {
			r->bad = 1;
			return 1;
		}
		char *copy = rm_xstrndup(s ? s : "", s ? len : 0);
		if (!r->items)
			r->items = rm_xcalloc(1, sizeof(*r->items));
		r->kinds = rm_xrealloc(r->kinds, (r->n + 1) * sizeof(*r->kinds));
		r->kinds[r->n] = type;
		r->nonstr |= type != V_STR;
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
	return on_scalar(ctx, V_NULL, "null", 4);
}

static int cb_boolean(void *ctx, int b)
{
	return on_scalar(ctx, V_BOOL, b ? "true" : "false", b ? 4 : 5);
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
		if (strlen(rm_registry__field_names[i]) == len &&
		    memcmp(rm_registry__field_names[i], s, len) == 0)
			fld = i;
	if (fld < N_FIELDS && p->f[fld].type == V_NONE) {
		p->field = fld;
		return 1;
	}
	key = rm_xstrndup((const char *)s, len);
	if (fld == F_UNKNOWN)
		for (size_t i = 0; rm_registry__ignored_fields[i]; i++)
			if (strcmp(rm_registry__ignored_fields[i], key) == 0)
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
		rm_registry__entry_reset(p);
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
		return rm_registry__entry_end(p);
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
	rm_registry__entry_reset(&p);
	if (ret == 0)
		warn_unknown_fields(&p);
	else {
		rm_strv_free(p.unknown_fields);
		rm_strv_free(p.unknown_first);
		free(p.unknown_count);
	}
	yajl_free(p.h);
	if (ret)
		rm_registry_truncate(reg, p.keep);
	return ret;
}
