/*
 * What one Dockerfile says, independent of the context: its "# CONTEXT {...}" line (in the
 * first lines, as MAD reads it), the ARG defaults before the first FROM, and that FROM's
 * image, with ARG references expanded as Docker expands them.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <jansson.h>

#include "context_internal.h"
#include "rm/context.h"
#include "rm/util.h"

/* Defined in context.c: renders a CONTEXT value exactly as rm_context_get renders the
 * context's side. */
char *rm_context_render_scalar(const json_t *v);

/* MAD reads the CONTEXT line from the head of the file only. */
#define CONTEXT_LINES 5

static char *skip_blanks(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

static void chomp(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
}

/* "KEYWORD<blank>..." with Dockerfile's case-insensitive instructions; returns the rest. */
static char *instruction(char *line, const char *kw)
{
	size_t n = strlen(kw);

	if (strncasecmp(line, kw, n) != 0 || (line[n] != ' ' && line[n] != '\t'))
		return NULL;
	return skip_blanks(line + n);
}

static char *unquote(const char *s)
{
	size_t n = strlen(s);

	if (n >= 2 && (s[0] == '"' || s[0] == '\'') && s[n - 1] == s[0])
		return rm_xstrndup(s + 1, n - 2);
	return rm_xstrdup(s);
}

static const char *arg_lookup(const struct arg_defaults *a, const char *name, size_t len)
{
	for (size_t i = 0; i < a->n; i++)
		if (strlen(a->name[i]) == len && strncmp(a->name[i], name, len) == 0)
			return a->value[i];
	return NULL;
}

static int is_var_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* Expands $NAME, ${NAME} and ${NAME:-default} from the ARG defaults seen so far; a variable
 * without a default stays as written, so the report still shows where the image came from. */
static char *expand_args(const char *s, const struct arg_defaults *a)
{
	rm_buf b = RM_BUF_INIT((size_t)1 << 16);

	while (*s) {
		const char *name, *end, *val, *dflt = NULL;
		size_t len, dlen = 0;

		if (*s != '$') {
			rm_buf_addch(&b, *s++);
			continue;
		}
		if (s[1] == '{') {
			name = s + 2;
			end = strchr(name, '}');
			if (!end) {
				rm_buf_addstr(&b, s);
				break;
			}
			len = 0;
			while (name + len < end && is_var_char(name[len]))
				len++;
			if (name + len + 1 < end && name[len] == ':' && name[len + 1] == '-') {
				dflt = name + len + 2;
				dlen = (size_t)(end - dflt);
			} else if (name + len != end) {
				rm_buf_add(&b, s, (size_t)(end + 1 - s));
				s = end + 1;
				continue;
			}
			end++;
		} else {
			name = s + 1;
			len = 0;
			while (is_var_char(name[len]))
				len++;
			end = name + len;
		}
		val = len ? arg_lookup(a, name, len) : NULL;
		if (val && *val)
			rm_buf_addstr(&b, val);
		else if (dflt)
			rm_buf_add(&b, dflt, dlen);
		else
			rm_buf_add(&b, s, (size_t)(end - s));
		s = end;
	}
	return rm_buf_detach(&b);
}

/* "ARG NAME=default" or "ARG NAME". */
static void record_arg(struct arg_defaults *a, char *rest, char **base_docker)
{
	char *eq, *name, *value;
	size_t i;

	rest = skip_blanks(rest);
	eq = strchr(rest, '=');
	name = eq ? rm_xstrndup(rest, (size_t)(eq - rest)) : rm_xstrdup(rest);
	value = eq ? unquote(skip_blanks(eq + 1)) : rm_xstrdup("");
	chomp(name);
	if (strcmp(name, "BASE_DOCKER") == 0 && eq && *value && !*base_docker)
		*base_docker = rm_xstrdup(value);
	for (i = 0; i < a->n; i++)
		if (strcmp(a->name[i], name) == 0)
			break;
	if (i < a->n) {
		/* A later "ARG NAME" without a default keeps the earlier default. */
		if (eq) {
			free(a->value[i]);
			a->value[i] = value;
			value = NULL;
		}
		free(name);
		free(value);
		return;
	}
	if (a->n == MAX_ARGS) {
		free(name);
		free(value);
		return;
	}
	a->name[a->n] = name;
	a->value[a->n++] = value;
}

/* "FROM [--platform=...] image [AS name]" -> image. */
static char *from_image(char *rest)
{
	char *tok = rest;

	for (;;) {
		size_t n;

		tok = skip_blanks(tok);
		n = strcspn(tok, " \t");
		if (n == 0)
			return NULL;
		if (strncmp(tok, "--", 2) != 0)
			return rm_xstrndup(tok, n);
		tok += n;
	}
}

/* The CONTEXT comment, if line is one: "# CONTEXT {...}" with any blanks. */
static const char *context_dict(char *line)
{
	char *s = skip_blanks(line);

	if (*s != '#')
		return NULL;
	s = skip_blanks(s + 1);
	if (strncmp(s, "CONTEXT", 7) != 0)
		return NULL;
	s += 7;
	if (*s != ' ' && *s != '\t' && *s != '{')
		return NULL;
	return skip_blanks(s);
}

void rm_context__scan_release(struct scan *sc)
{
	if (!sc)
		return;
	free(sc->path);
	json_decref(sc->context_req);
	for (size_t i = 0; i < sc->args.n; i++) {
		free(sc->args.name[i]);
		free(sc->args.value[i]);
	}
	free(sc->from_raw);
	free(sc->error);
	free(sc);
}

/* Reads the CONTEXT filter, the ARG defaults and the first FROM of one candidate. */
int rm_context__scan_file(const char *path, struct scan *sc, rm_error *err)
{
	char line[8192], *unused = NULL;
	int lineno = 0, truncated = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return rm_error_sys(err, RM_ERR_IO, errno, "cannot open '%s'", path);
	while (fgets(line, sizeof(line), f)) {
		int was_truncated = truncated;
		const char *dict;
		char *s, *rest;

		/* A line longer than the buffer arrives in pieces; only its start counts. */
		truncated = !strchr(line, '\n') && !feof(f);
		if (was_truncated)
			continue;
		lineno++;
		chomp(line);
		if (lineno <= CONTEXT_LINES && !sc->context_req && !sc->error &&
		    (dict = context_dict(line))) {
			rm_error perr = RM_ERROR_INIT;
			const char *k;
			json_t *v;

			sc->context_req = rm_pydict_parse(dict, &perr);
			if (!sc->context_req) {
				sc->error = rm_xasprintf(
				    "'%s' line %d: malformed CONTEXT line: %s; write it as "
				    "# CONTEXT {'gpu_vendor': 'AMD', 'guest_os': 'UBUNTU'}",
				    path, lineno, rm_error_text(&perr));
				continue;
			}
			json_object_foreach (sc->context_req, k, v) {
				if (json_is_object(v) || json_is_array(v)) {
					sc->error = rm_xasprintf(
					    "'%s' line %d: CONTEXT value of '%s' must be a "
					    "string or a number",
					    path, lineno, k);
					break;
				}
			}
			continue;
		}
		if (sc->from_raw)
			continue; /* only the first stage's FROM and the ARGs before it matter */
		s = skip_blanks(line);
		if ((rest = instruction(s, "ARG"))) {
			record_arg(&sc->args, rest, &unused);
			free(unused);
			unused = NULL;
		} else if ((rest = instruction(s, "FROM"))) {
			sc->from_raw = from_image(rest);
			if (!sc->from_raw)
				sc->from_raw = rm_xstrdup("");
		}
	}
	if (ferror(f)) {
		fclose(f);
		return rm_error_sys(err, RM_ERR_IO, errno, "cannot read '%s'", path);
	}
	fclose(f);
	for (size_t i = 0; i < sc->args.n; i++)
		if (strcmp(sc->args.name[i], "BASE_DOCKER") == 0)
			sc->declares_base = 1;
	return 0;
}

/*
 * The base image as the build will see it: ARG defaults before the first FROM, overridden
 * by the context's docker_build_arg for the ARGs the file declares (Docker ignores build
 * args a file does not declare). BASE_DOCKER, MAD's convention, wins when declared, as
 * madengine records it; otherwise the expanded FROM.
 */
char *rm_context__effective_base(const struct scan *sc, const rm_context *ctx)
{
	struct arg_defaults a = {{NULL}, {NULL}, 0};
	char *out = NULL;

	for (size_t i = 0; i < sc->args.n; i++) {
		const char *v = sc->args.value[i];

		for (size_t k = 0; ctx && k < ctx->n_docker_build_arg; k++)
			if (strcmp(ctx->docker_build_arg[k].key, sc->args.name[i]) == 0)
				v = ctx->docker_build_arg[k].value;
		a.name[a.n] = sc->args.name[i];
		a.value[a.n++] = (char *)v;
	}
	if (sc->declares_base) {
		const char *b = arg_lookup(&a, "BASE_DOCKER", strlen("BASE_DOCKER"));
		if (b && *b)
			out = rm_xstrdup(b);
	}
	if (!out && sc->from_raw && *sc->from_raw)
		out = expand_args(sc->from_raw, &a);
	return out; /* a's strings are borrowed */
}
