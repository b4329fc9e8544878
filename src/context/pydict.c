/*
 * Python dict literals to JSON: Dockerfile "# CONTEXT {'gpu_vendor': 'AMD'}" lines and the
 * single-quoted --additional-context values MAD users are used to.
 *
 * Hand-written: no Debian-packaged C library parses Python literals (jansson, json-c and
 * yajl all reject single quotes and True/None), and the grammar needed here is small:
 * dicts, lists, tuples, strings ('...' or "...", backslash escapes, adjacent literals
 * concatenated), ints, floats, True/False/None, '#' comments, trailing commas.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "rm/context.h"
#include "rm/util.h"

/* Nesting limit: the inputs are one-line dicts, and the parser recurses. */
#define PYDICT_MAX_DEPTH 32

struct pyparser {
	const char *s;
	const char *start;
	rm_error *err;
};

static int py_error(struct pyparser *p, const char *what)
{
	return rm_error_set(p->err, RM_ERR_INPUT, "python dict literal, column %zu: %s",
			    (size_t)(p->s - p->start) + 1, what);
}

static void skip_space(struct pyparser *p)
{
	for (;;) {
		char c = *p->s;

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
			p->s++;
		} else if (c == '\\' && (p->s[1] == '\n' || (p->s[1] == '\r' && p->s[2] == '\n'))) {
			p->s += p->s[1] == '\n' ? 2 : 3; /* explicit line joining */
		} else if (c == '#') {
			while (*p->s && *p->s != '\n')
				p->s++;
		} else {
			return;
		}
	}
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static void put_utf8(rm_buf *b, uint32_t cp)
{
	char u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xC0 | (cp >> 6));
		u[1] = (char)(0x80 | (cp & 0x3F));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xE0 | (cp >> 12));
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		u[2] = (char)(0x80 | (cp & 0x3F));
		n = 3;
	} else {
		u[0] = (char)(0xF0 | (cp >> 18));
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
		u[3] = (char)(0x80 | (cp & 0x3F));
		n = 4;
	}
	rm_buf_add(b, u, n);
}

/* \xHH, \uHHHH, \UHHHHHHHH: `digits` hex digits after the letter. */
static int parse_hex_escape(struct pyparser *p, int digits, rm_buf *b)
{
	uint32_t cp = 0;

	for (int i = 0; i < digits; i++) {
		int h = hexval(p->s[i]);
		if (h < 0)
			return py_error(p, "bad hexadecimal escape in string");
		cp = cp * 16 + (uint32_t)h;
	}
	if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return py_error(p, "escape is not a valid unicode character");
	p->s += digits;
	put_utf8(b, cp);
	return 0;
}

/* One quoted literal appended to b; p->s is on the opening quote. */
static int parse_one_string(struct pyparser *p, rm_buf *b)
{
	char q = *p->s++;
	int triple = p->s[0] == q && p->s[1] == q;

	if (triple)
		p->s += 2;
	for (;;) {
		char c = *p->s;

		if (!c)
			return py_error(p, "unterminated string");
		if (c == q && (!triple || (p->s[1] == q && p->s[2] == q))) {
			p->s += triple ? 3 : 1;
			return 0;
		}
		if (c == '\n' && !triple)
			return py_error(p, "end of line inside a string");
		p->s++;
		if (c != '\\') {
			if (rm_buf_addch(b, c))
				return py_error(p, "string too long");
			continue;
		}
		c = *p->s++;
		switch (c) {
		case '\0':
			p->s--;
			return py_error(p, "unterminated string");
		case '\n':
			break; /* line continuation inside the literal */
		case 'n':
			rm_buf_addch(b, '\n');
			break;
		case 't':
			rm_buf_addch(b, '\t');
			break;
		case 'r':
			rm_buf_addch(b, '\r');
			break;
		case 'a':
			rm_buf_addch(b, '\a');
			break;
		case 'b':
			rm_buf_addch(b, '\b');
			break;
		case 'f':
			rm_buf_addch(b, '\f');
			break;
		case 'v':
			rm_buf_addch(b, '\v');
			break;
		case '0':
			rm_buf_addch(b, '\0');
			break;
		case '\\':
		case '\'':
		case '"':
			rm_buf_addch(b, c);
			break;
		case 'x':
			if (parse_hex_escape(p, 2, b))
				return -1;
			break;
		case 'u':
			if (parse_hex_escape(p, 4, b))
				return -1;
			break;
		case 'U':
			if (parse_hex_escape(p, 8, b))
				return -1;
			break;
		default:
			/* Python keeps unknown escapes as written. */
			rm_buf_addch(b, '\\');
			rm_buf_addch(b, c);
			break;
		}
	}
}

/* A string, with adjacent literals joined ('a' 'b' == 'ab') as Python does. */
static json_t *parse_string(struct pyparser *p)
{
	rm_buf b = RM_BUF_INIT((size_t)1 << 20);
	json_t *v = NULL;

	do {
		if (parse_one_string(p, &b))
			goto out;
		skip_space(p);
	} while (*p->s == '\'' || *p->s == '"');
	v = json_stringn(b.data ? b.data : "", b.len);
	if (!v)
		py_error(p, "string is not valid UTF-8");
out:
	rm_buf_release(&b);
	return v;
}

static int is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

static json_t *parse_number(struct pyparser *p)
{
	const char *s = p->s, *digits;
	int is_float = 0;
	char *end, *copy;
	json_t *v = NULL;

	if (*s == '+' || *s == '-')
		s++;
	digits = s;
	while (*s >= '0' && *s <= '9')
		s++;
	if (*s == '.') {
		is_float = 1;
		s++;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	if (s == digits || (s == digits + 1 && *digits == '.')) {
		py_error(p, "expected a value (a string, a number, True, False or None)");
		return NULL;
	}
	if (*s == 'e' || *s == 'E') {
		const char *e = s + 1;
		if (*e == '+' || *e == '-')
			e++;
		if (*e >= '0' && *e <= '9') {
			is_float = 1;
			s = e;
			while (*s >= '0' && *s <= '9')
				s++;
		}
	}
	if (is_ident(*s)) {
		py_error(p, "malformed number");
		return NULL;
	}
	copy = rm_xstrndup(p->s, (size_t)(s - p->s));
	errno = 0;
	if (is_float) {
		double d = strtod(copy, &end);
		if (*end || !isfinite(d))
			py_error(p, "number out of range");
		else
			v = json_real(d);
	} else {
		long long i = strtoll(copy, &end, 10);
		if (*end || errno == ERANGE)
			py_error(p, "integer out of range");
		else
			v = json_integer((json_int_t)i);
	}
	free(copy);
	if (v)
		p->s = s;
	return v;
}

static json_t *parse_value(struct pyparser *p, int depth);

/* Dict, list or tuple: p->s is on the opener. */
static json_t *parse_container(struct pyparser *p, int depth)
{
	char open = *p->s, close = open == '{' ? '}' : open == '[' ? ']' : ')';
	json_t *c = open == '{' ? json_object() : json_array();

	if (depth >= PYDICT_MAX_DEPTH) {
		py_error(p, "nested too deeply");
		goto fail;
	}
	p->s++;
	for (;;) {
		json_t *key = NULL, *val;

		skip_space(p);
		if (*p->s == close) {
			p->s++;
			return c;
		}
		if (open == '{') {
			if (*p->s != '\'' && *p->s != '"') {
				py_error(p, "expected a quoted key or '}'");
				goto fail;
			}
			key = parse_string(p);
			if (!key)
				goto fail;
			if (memchr(json_string_value(key), '\0', json_string_length(key))) {
				json_decref(key);
				py_error(p, "key contains a NUL character");
				goto fail;
			}
			skip_space(p);
			if (*p->s != ':') {
				json_decref(key);
				py_error(p, "expected ':' after the key");
				goto fail;
			}
			p->s++;
		}
		val = parse_value(p, depth + 1);
		if (!val) {
			json_decref(key);
			goto fail;
		}
		if (key) {
			/* A repeated key keeps the last value, as in Python. */
			json_object_set_new(c, json_string_value(key), val);
			json_decref(key);
		} else {
			json_array_append_new(c, val);
		}
		skip_space(p);
		if (*p->s == ',') {
			p->s++;
			continue;
		}
		if (*p->s != close) {
			char what[64];
			snprintf(what, sizeof(what), "expected ',' or '%c'", close);
			py_error(p, what);
			goto fail;
		}
	}
fail:
	json_decref(c);
	return NULL;
}

static json_t *parse_value(struct pyparser *p, int depth)
{
	static const struct {
		const char *word;
		int type;
	} words[] = {{"True", JSON_TRUE}, {"False", JSON_FALSE}, {"None", JSON_NULL}};

	skip_space(p);
	switch (*p->s) {
	case '{':
	case '[':
	case '(':
		return parse_container(p, depth);
	case '\'':
	case '"':
		return parse_string(p);
	default:
		break;
	}
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		size_t n = strlen(words[i].word);
		if (strncmp(p->s, words[i].word, n) == 0 && !is_ident(p->s[n])) {
			p->s += n;
			return words[i].type == JSON_TRUE    ? json_true()
			       : words[i].type == JSON_FALSE ? json_false()
							     : json_null();
		}
	}
	return parse_number(p);
}

json_t *rm_pydict_parse(const char *text, rm_error *err)
{
	struct pyparser p = {text, text, err};
	json_t *v;

	if (!text) {
		rm_error_set(err, RM_ERR_INPUT, "python dict literal: no text");
		return NULL;
	}
	skip_space(&p);
	if (*p.s != '{') {
		py_error(&p, "expected '{' (a dict such as {'gpu_vendor': 'AMD'})");
		return NULL;
	}
	v = parse_value(&p, 0);
	if (!v)
		return NULL;
	skip_space(&p);
	if (*p.s) {
		py_error(&p, "unexpected text after the closing '}'");
		json_decref(v);
		return NULL;
	}
	return v;
}
