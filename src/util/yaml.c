/*
 * YAML to JSON over libyaml's event parser. libyaml resolves no types (it is a YAML 1.1
 * parser that hands out scalar text), so plain scalars are typed here by the YAML 1.2 core
 * schema, which is also what makes JSON input come out unchanged.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "rm/util.h"

/* Deep enough for any context; shallow enough that recursion cannot exhaust the stack. */
#define MAX_DEPTH 64

#define TAG_PREFIX "tag:yaml.org,2002:"

struct yctx {
	yaml_parser_t parser;
	const char *source;
	rm_error *err;
};

static int fail_at(struct yctx *y, yaml_mark_t mark, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail_at(struct yctx *y, yaml_mark_t mark, const char *fmt, ...)
{
	char what[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	/* libyaml's marks are 0-based; editors count from 1. */
	return rm_error_set(y->err, RM_ERR_INPUT, "'%s' line %zu column %zu: %s", y->source,
			    mark.line + 1, mark.column + 1, what);
}

static int next_event(struct yctx *y, yaml_event_t *ev)
{
	yaml_parser_t *p = &y->parser;

	if (yaml_parser_parse(p, ev))
		return 0;
	switch (p->error) {
	case YAML_MEMORY_ERROR:
		return rm_error_set(y->err, RM_ERR_INTERNAL, "'%s': out of memory", y->source);
	case YAML_READER_ERROR:
		/* Encoding errors carry a byte offset, not a line. */
		return rm_error_set(y->err, RM_ERR_INPUT, "'%s' byte %zu: %s", y->source,
				    p->problem_offset, p->problem ? p->problem : "unreadable");
	default:
		if (p->context)
			return rm_error_set(
			    y->err, RM_ERR_INPUT, "'%s' line %zu column %zu: %s (%s, line %zu)",
			    y->source, p->problem_mark.line + 1, p->problem_mark.column + 1,
			    p->problem ? p->problem : "syntax error", p->context,
			    p->context_mark.line + 1);
		return rm_error_set(y->err, RM_ERR_INPUT, "'%s' line %zu column %zu: %s", y->source,
				    p->problem_mark.line + 1, p->problem_mark.column + 1,
				    p->problem ? p->problem : "syntax error");
	}
}

static int is_digits(const char *s, const char *end, const char *set)
{
	if (s >= end)
		return 0;
	for (; s < end; s++)
		if (!*s || !strchr(set, *s))
			return 0;
	return 1;
}

static int one_of(const char *s, const char *const *words)
{
	for (; *words; words++)
		if (!strcmp(s, *words))
			return 1;
	return 0;
}

/* [-+]?[0-9]+ | 0o[0-7]+ | 0x[0-9a-fA-F]+ */
static int is_int(const char *s, size_t n, int *base)
{
	const char *end = s + n;
	if (n > 2 && s[0] == '0' && s[1] == 'o') {
		*base = 8;
		return is_digits(s + 2, end, "01234567");
	}
	if (n > 2 && s[0] == '0' && s[1] == 'x') {
		*base = 16;
		return is_digits(s + 2, end, "0123456789abcdefABCDEF");
	}
	*base = 10;
	if (n && (*s == '-' || *s == '+'))
		s++;
	return is_digits(s, end, "0123456789");
}

/* [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )? */
static int is_float(const char *s, size_t n)
{
	const char *end = s + n, *p = s;
	size_t digits = 0;

	if (p < end && (*p == '-' || *p == '+'))
		p++;
	while (p < end && *p >= '0' && *p <= '9')
		p++, digits++;
	if (p < end && *p == '.') {
		p++;
		size_t frac = 0;
		while (p < end && *p >= '0' && *p <= '9')
			p++, frac++;
		if (!digits && !frac)
			return 0;
	} else if (!digits) {
		return 0;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '-' || *p == '+'))
			p++;
		return is_digits(p, end, "0123456789");
	}
	return p == end;
}

enum kind { K_STR, K_NULL, K_BOOL, K_INT, K_FLOAT };

/* The core-schema type of a plain scalar; -1 with err set for one JSON cannot hold. */
static int resolve(struct yctx *y, const yaml_event_t *ev, json_t **out, enum kind *kind)
{
	static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
	static const char *const trues[] = {"true", "True", "TRUE", NULL};
	static const char *const falses[] = {"false", "False", "FALSE", NULL};
	static const char *const specials[] = {".inf",	".Inf",	 ".INF",  "+.inf", "+.Inf",
					       "+.INF", "-.inf", "-.Inf", "-.INF", ".nan",
					       ".NaN",	".NAN",	 NULL};
	const char *s = (const char *)ev->data.scalar.value;
	size_t n = ev->data.scalar.length;
	int base;

	*out = NULL;
	if (strlen(s) != n) {
		*kind = K_STR; /* an embedded NUL: only a quoted string can hold one */
		return 0;
	}
	if (one_of(s, nulls)) {
		*kind = K_NULL;
		*out = json_null();
	} else if (one_of(s, trues) || one_of(s, falses)) {
		*kind = K_BOOL;
		*out = json_boolean(one_of(s, trues));
	} else if (is_int(s, n, &base)) {
		const char *digits = base == 10 ? s : s + 2;
		char *end;
		errno = 0;
		long long v = strtoll(digits, &end, base);
		if (errno == ERANGE || *end)
			return fail_at(y, ev->start_mark, "integer '%s' is out of range", s);
		*kind = K_INT;
		*out = json_integer((json_int_t)v);
	} else if (is_float(s, n)) {
		char *end;
		errno = 0;
		double v = strtod(s, &end);
		if (errno == ERANGE || *end || !isfinite(v))
			return fail_at(y, ev->start_mark, "number '%s' is out of range", s);
		*kind = K_FLOAT;
		*out = json_real(v);
	} else if (one_of(s, specials)) {
		return fail_at(y, ev->start_mark,
			       "'%s' has no JSON equivalent (quote it to keep it as text)", s);
	} else {
		*kind = K_STR;
	}
	return 0;
}

static int is_core_tag(const char *tag, const char *name)
{
	return tag && rm_starts_with(tag, TAG_PREFIX) && !strcmp(tag + strlen(TAG_PREFIX), name);
}

static json_t *scalar(struct yctx *y, const yaml_event_t *ev)
{
	static const char *const kinds[] = {"str", "null", "bool", "int", "float"};
	const char *tag = (const char *)ev->data.scalar.tag;
	json_t *v = NULL;
	enum kind kind = K_STR;

	/* libyaml marks "! 5" plain_implicit too, but the "!" tag means a string. */
	if (ev->data.scalar.plain_implicit && !tag) {
		if (resolve(y, ev, &v, &kind) < 0)
			return NULL;
	} else if (!tag || !strcmp(tag, "!") || is_core_tag(tag, "str")) {
		/* quoted, or explicitly a string: text as written */
	} else if (is_core_tag(tag, "null") || is_core_tag(tag, "bool") ||
		   is_core_tag(tag, "int") || is_core_tag(tag, "float")) {
		/* An explicit core tag must agree with the text: "!!int abc" is an error. */
		if (resolve(y, ev, &v, &kind) < 0)
			return NULL;
		const char *want = tag + strlen(TAG_PREFIX);
		if (kind == K_INT && !strcmp(want, "float")) {
			json_t *r = json_real((double)json_integer_value(v));
			json_decref(v);
			v = r;
		} else if (strcmp(want, kinds[kind]) != 0) {
			json_decref(v);
			fail_at(y, ev->start_mark, "value does not match its tag '!!%s'", want);
			return NULL;
		}
	} else {
		fail_at(y, ev->start_mark, "tag '%s' is not supported", tag);
		return NULL;
	}
	if (v)
		return v;
	v = json_stringn((const char *)ev->data.scalar.value, ev->data.scalar.length);
	if (!v)
		fail_at(y, ev->start_mark, "string is not valid UTF-8");
	return v;
}

static int check_node(struct yctx *y, const yaml_event_t *ev, const yaml_char_t *anchor,
		      const yaml_char_t *tag, const char *own_tag)
{
	if (anchor)
		return fail_at(y, ev->start_mark,
			       "anchor '&%s' is not supported (anchors and aliases are refused)",
			       (const char *)anchor);
	if (tag && strcmp((const char *)tag, own_tag) != 0 && strcmp((const char *)tag, "!") != 0)
		return fail_at(y, ev->start_mark, "tag '%s' is not supported", (const char *)tag);
	return 0;
}

static json_t *node(struct yctx *y, yaml_event_t *ev, int depth);

static json_t *sequence(struct yctx *y, int depth)
{
	json_t *a = json_array();
	yaml_event_t ev;

	for (;;) {
		if (next_event(y, &ev) < 0)
			goto fail;
		if (ev.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&ev);
			return a;
		}
		json_t *v = node(y, &ev, depth + 1);
		if (!v)
			goto fail;
		json_array_append_new(a, v);
	}
fail:
	json_decref(a);
	return NULL;
}

static json_t *mapping(struct yctx *y, int depth)
{
	json_t *o = json_object();
	yaml_event_t ev;
	char *key = NULL;

	for (;;) {
		if (next_event(y, &ev) < 0)
			goto fail;
		if (ev.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&ev);
			return o;
		}
		if (ev.type == YAML_ALIAS_EVENT) {
			fail_at(y, ev.start_mark, "alias '*%s' is not supported",
				(const char *)ev.data.alias.anchor);
			yaml_event_delete(&ev);
			goto fail;
		}
		if (ev.type != YAML_SCALAR_EVENT) {
			fail_at(y, ev.start_mark, "mapping keys must be scalars");
			yaml_event_delete(&ev);
			goto fail;
		}
		/* Keys are taken as text: JSON object keys are strings anyway. */
		const char *k = (const char *)ev.data.scalar.value;
		int bad =
		    check_node(y, &ev, ev.data.scalar.anchor, ev.data.scalar.tag, TAG_PREFIX "str");
		if (!bad && strlen(k) != ev.data.scalar.length)
			bad = fail_at(y, ev.start_mark, "mapping key contains a NUL byte");
		if (bad) {
			yaml_event_delete(&ev);
			goto fail;
		}
		if (json_object_get(o, k)) {
			fail_at(y, ev.start_mark, "duplicate key '%s'", k);
			yaml_event_delete(&ev);
			goto fail;
		}
		key = rm_xstrdup(k);
		yaml_event_delete(&ev);
		if (next_event(y, &ev) < 0)
			goto fail;
		json_t *v = node(y, &ev, depth + 1);
		if (!v)
			goto fail;
		if (json_object_set_new(o, key, v) < 0) {
			/* jansson refuses keys that are not valid UTF-8. */
			rm_error_set(y->err, RM_ERR_INPUT, "'%s': key is not valid UTF-8",
				     y->source);
			goto fail;
		}
		free(key);
		key = NULL;
	}
fail:
	free(key);
	json_decref(o);
	return NULL;
}

/* Builds the value that starts with ev, consuming ev and the events of its content. */
static json_t *node(struct yctx *y, yaml_event_t *ev, int depth)
{
	json_t *v = NULL;

	if (depth > MAX_DEPTH &&
	    (ev->type == YAML_SEQUENCE_START_EVENT || ev->type == YAML_MAPPING_START_EVENT)) {
		rm_error_set(y->err, RM_ERR_INPUT,
			     "'%s' line %zu column %zu: nested deeper than %d levels", y->source,
			     ev->start_mark.line + 1, ev->start_mark.column + 1, MAX_DEPTH);
		yaml_event_delete(ev);
		return NULL;
	}
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		if (!ev->data.scalar.anchor)
			v = scalar(y, ev);
		else
			check_node(y, ev, ev->data.scalar.anchor, NULL, "");
		yaml_event_delete(ev);
		return v;
	case YAML_SEQUENCE_START_EVENT:
		if (check_node(y, ev, ev->data.sequence_start.anchor, ev->data.sequence_start.tag,
			       TAG_PREFIX "seq") < 0) {
			yaml_event_delete(ev);
			return NULL;
		}
		yaml_event_delete(ev);
		return sequence(y, depth);
	case YAML_MAPPING_START_EVENT:
		if (check_node(y, ev, ev->data.mapping_start.anchor, ev->data.mapping_start.tag,
			       TAG_PREFIX "map") < 0) {
			yaml_event_delete(ev);
			return NULL;
		}
		yaml_event_delete(ev);
		return mapping(y, depth);
	case YAML_ALIAS_EVENT:
		fail_at(y, ev->start_mark, "alias '*%s' is not supported",
			(const char *)ev->data.alias.anchor);
		yaml_event_delete(ev);
		return NULL;
	default:
		fail_at(y, ev->start_mark, "unexpected YAML event");
		yaml_event_delete(ev);
		return NULL;
	}
}

static json_t *document(struct yctx *y)
{
	yaml_event_t ev;
	json_t *root = NULL;

	if (next_event(y, &ev) < 0)
		return NULL;
	if (ev.type != YAML_STREAM_START_EVENT) {
		yaml_event_delete(&ev);
		rm_error_set(y->err, RM_ERR_INTERNAL, "'%s': no YAML stream", y->source);
		return NULL;
	}
	yaml_event_delete(&ev);
	if (next_event(y, &ev) < 0)
		return NULL;
	if (ev.type == YAML_STREAM_END_EVENT) {
		yaml_event_delete(&ev);
		rm_error_set(y->err, RM_ERR_INPUT, "'%s' is empty", y->source);
		return NULL;
	}
	yaml_event_delete(&ev); /* DOCUMENT-START */

	if (next_event(y, &ev) < 0)
		return NULL;
	/* "---" alone: a document with nothing in it, not a deliberate null. */
	if (ev.type == YAML_SCALAR_EVENT && ev.data.scalar.length == 0 &&
	    ev.data.scalar.plain_implicit && !ev.data.scalar.tag && !ev.data.scalar.anchor) {
		yaml_event_delete(&ev);
		rm_error_set(y->err, RM_ERR_INPUT, "'%s' is empty", y->source);
		return NULL;
	}
	if (!(root = node(y, &ev, 1)))
		return NULL;

	if (next_event(y, &ev) < 0)
		goto fail;
	yaml_event_delete(&ev); /* DOCUMENT-END */
	if (next_event(y, &ev) < 0)
		goto fail;
	if (ev.type != YAML_STREAM_END_EVENT) {
		fail_at(y, ev.start_mark, "more than one document (a context file holds one)");
		yaml_event_delete(&ev);
		goto fail;
	}
	yaml_event_delete(&ev);
	return root;
fail:
	json_decref(root);
	return NULL;
}

json_t *rm_yaml_to_json(const char *text, size_t len, const char *source, rm_error *err)
{
	struct yctx y = {.source = source ? source : "input", .err = err};
	json_t *v;

	if (!yaml_parser_initialize(&y.parser)) {
		rm_error_set(err, RM_ERR_INTERNAL, "'%s': out of memory", y.source);
		return NULL;
	}
	yaml_parser_set_input_string(&y.parser, (const unsigned char *)(text ? text : ""),
				     text ? len : 0);
	v = document(&y);
	yaml_parser_delete(&y.parser);
	return v;
}
