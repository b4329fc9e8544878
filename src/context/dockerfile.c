/*
 * Dockerfile candidates of a model, their "# CONTEXT {...}" filters and base images, and
 * the image names built from them (see include/rm/context.h).
 */
#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "rm/context.h"
#include "rm/util.h"

/* Defined in context.c: renders a CONTEXT value exactly as rm_context_get renders the
 * context's side. */
char *rm_context_render_scalar(const json_t *v);

/* MAD reads the CONTEXT line from the head of the file only. */
#define CONTEXT_LINES 5
#define MAX_ARGS      64

static void dockerfile_release(rm_dockerfile *d)
{
	free(d->path);
	free(d->stem);
	free(d->why_dropped);
	free(d->base_image);
	json_decref(d->context_req);
	memset(d, 0, sizeof(*d));
}

void rm_dockerfiles_free(rm_dockerfile *v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		dockerfile_release(&v[i]);
	free(v);
}

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

struct arg_defaults {
	char *name[MAX_ARGS];
	char *value[MAX_ARGS];
	size_t n;
};

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

/* Reads the CONTEXT filter and the base image of one candidate. */
static int scan_dockerfile(rm_dockerfile *d, rm_error *err)
{
	struct arg_defaults args = {{NULL}, {NULL}, 0};
	char line[8192], *base_docker = NULL, *from = NULL;
	int lineno = 0, ret = -1, truncated = 0;
	FILE *f = fopen(d->path, "r");

	if (!f)
		return rm_error_set(err, RM_ERR_IO, "cannot open '%s': %s", d->path,
				    strerror(errno));
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
		if (lineno <= CONTEXT_LINES && !d->context_req && (dict = context_dict(line))) {
			rm_error perr = RM_ERROR_INIT;
			const char *k;
			json_t *v;

			d->context_req = rm_pydict_parse(dict, &perr);
			if (!d->context_req) {
				rm_error_set(
				    err, RM_ERR_INPUT,
				    "'%s' line %d: malformed CONTEXT line: %s; write it as "
				    "# CONTEXT {'gpu_vendor': 'AMD', 'guest_os': 'UBUNTU'}",
				    d->path, lineno, perr.msg);
				goto out;
			}
			json_object_foreach (d->context_req, k, v) {
				if (json_is_object(v) || json_is_array(v)) {
					rm_error_set(
					    err, RM_ERR_INPUT,
					    "'%s' line %d: CONTEXT value of '%s' must be a "
					    "string or a number",
					    d->path, lineno, k);
					goto out;
				}
			}
			continue;
		}
		s = skip_blanks(line);
		if ((rest = instruction(s, "ARG")))
			record_arg(&args, rest, &base_docker);
		else if (!from && (rest = instruction(s, "FROM"))) {
			char *img = from_image(rest);
			if (img) {
				from = expand_args(img, &args);
				free(img);
			}
		}
	}
	if (ferror(f)) {
		rm_error_set(err, RM_ERR_IO, "cannot read '%s': %s", d->path, strerror(errno));
		goto out;
	}
	d->base_image = base_docker ? base_docker : from;
	if (base_docker)
		free(from);
	base_docker = from = NULL;
	ret = 0;
out:
	free(base_docker);
	free(from);
	for (size_t i = 0; i < args.n; i++) {
		free(args.name[i]);
		free(args.value[i]);
	}
	fclose(f);
	return ret;
}

static char *stem_of(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t n;

	base = base ? base + 1 : path;
	n = strlen(base);
	if (n >= 11 && strcmp(base + n - 11, ".Dockerfile") == 0)
		return rm_xstrndup(base, n - 11);
	if (n >= 10 && strcmp(base + n - 10, "Dockerfile") == 0) {
		n -= 10;
		if (n && base[n - 1] == '.')
			n--;
		return rm_xstrndup(base, n);
	}
	return rm_xstrdup(base);
}

/* Fills kept / why_dropped from the CONTEXT filter. */
static void judge(rm_dockerfile *d, const rm_context *ctx)
{
	rm_buf why = RM_BUF_INIT((size_t)1 << 16);
	const char *k;
	json_t *v;

	d->kept = 1;
	if (!d->context_req)
		return;
	json_object_foreach (d->context_req, k, v) {
		const char *have = ctx ? rm_context_get(ctx, k) : NULL;
		char *want;

		if (!have)
			continue; /* absent from the context: the filter does not apply */
		want = rm_context_render_scalar(v);
		if (want && strcmp(want, have) != 0) {
			rm_buf_addf(&why, "%sCONTEXT %s is '%s', the context has '%s'",
				    why.len ? "; " : "", k, want, have);
			d->kept = 0;
		}
		free(want);
	}
	if (!d->kept)
		d->why_dropped = rm_buf_detach(&why);
	rm_buf_release(&why);
}

/* The prefix comes from models.json; glob metacharacters in it are meant literally. */
static char *glob_pattern(const char *prefix)
{
	rm_buf b = RM_BUF_INIT((size_t)1 << 16);

	for (const char *p = prefix; *p; p++) {
		if (*p == '*' || *p == '?' || *p == '[' || *p == '\\')
			rm_buf_addch(&b, '\\');
		rm_buf_addch(&b, *p);
	}
	rm_buf_addstr(&b, "*Dockerfile");
	return rm_buf_detach(&b);
}

int rm_dockerfiles_select(const char *prefix, const rm_context *ctx, rm_dockerfile **out, size_t *n,
			  rm_error *err)
{
	glob_t g;
	char *pattern = glob_pattern(prefix);
	rm_dockerfile *v = NULL;
	size_t count = 0, kept = 0;
	int r, ret = -1;
	rm_buf msg = RM_BUF_INIT((size_t)1 << 16);

	*out = NULL;
	*n = 0;
	memset(&g, 0, sizeof(g));
	/* glob sorts its results, which gives the documented candidate order. */
	r = glob(pattern, GLOB_MARK, NULL, &g);
	if (r != 0 && r != GLOB_NOMATCH) {
		rm_error_set(err, RM_ERR_IO, "cannot list '%s%s'", prefix, "*Dockerfile");
		goto out;
	}
	v = rm_xcalloc(g.gl_pathc + 1, sizeof(*v));
	for (size_t i = 0; r == 0 && i < g.gl_pathc; i++) {
		const char *p = g.gl_pathv[i];
		rm_dockerfile *d = &v[count];

		if (p[0] && p[strlen(p) - 1] == '/')
			continue; /* a folder named like a Dockerfile */
		d->path = rm_xstrdup(p);
		d->stem = stem_of(p);
		count++;
		if (scan_dockerfile(d, err))
			goto out;
		judge(d, ctx);
		kept += d->kept;
	}
	if (count == 0) {
		rm_error_set(err, RM_ERR_INPUT,
			     "no Dockerfile matches '%s*Dockerfile' (model field 'dockerfile')",
			     prefix);
		goto out;
	}
	*out = v;
	*n = count;
	v = NULL;
	if (kept == 0) {
		for (size_t i = 0; i < count; i++)
			rm_buf_addf(&msg, "; '%s': %s", (*out)[i].path, (*out)[i].why_dropped);
		rm_error_set(
		    err, RM_ERR_INPUT,
		    "no Dockerfile matching '%s*Dockerfile' fits the context%s; change the "
		    "context with --additional-context (e.g. '{\"gpu_vendor\": \"AMD\"}')",
		    prefix, rm_buf_str(&msg));
		goto out;
	}
	ret = 0;
out:
	rm_dockerfiles_free(v, count);
	if (r == 0 || r == GLOB_NOMATCH)
		globfree(&g);
	free(pattern);
	rm_buf_release(&msg);
	return ret;
}

static int is_sep(char c)
{
	return c == '.' || c == '_' || c == '-';
}

/* Appends one path component of a Docker repository name: [a-z0-9]+ joined by ".", "_",
 * "__" or runs of "-"; anything else between two alphanumerics becomes "_", and separators
 * at either end go. */
static void add_component(rm_buf *out, const char *s, size_t n)
{
	size_t start = out->len, run_start = 0, run_len = 0;

	for (size_t i = 0; i < n; i++) {
		if (is_sep(s[i])) {
			if (!run_len)
				run_start = i;
			run_len++;
			continue;
		}
		if (run_len && out->len > start) {
			const char *run = s + run_start;
			int dashes = strspn(run, "-") >= run_len;

			if (dashes || (run_len == 1) ||
			    (run_len == 2 && run[0] == '_' && run[1] == '_'))
				rm_buf_add(out, run, run_len);
			else
				rm_buf_addch(out, '_');
		}
		run_len = 0;
		rm_buf_addch(out, s[i]);
	}
}

char *rm_image_name(const char *model_name, const char *stem)
{
	char *raw = rm_xasprintf("ci-%s_%s", model_name ? model_name : "", stem ? stem : "");
	rm_buf out = RM_BUF_INIT((size_t)1 << 16);
	char *p, *slash;

	for (p = raw; *p; p++) {
		*p = (char)tolower((unsigned char)*p);
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '/' ||
		      is_sep(*p)))
			*p = '_';
	}
	/* Empty components ("a//b", leading or trailing '/') are dropped. */
	for (p = raw; *p;) {
		size_t n = strcspn(p, "/"), before = out.len, body;

		if (out.len)
			rm_buf_addch(&out, '/');
		body = out.len;
		add_component(&out, p, n);
		if (out.len == body) {
			out.len = before; /* nothing alphanumeric in it */
			if (out.data)
				out.data[out.len] = '\0';
		}
		p += n;
		if (*p == '/')
			p++;
	}
	/* Docker takes a first component with a '.' for a registry host ("ci-my.dir/x" would
	 * be pulled from my.dir), so dots go there. */
	slash = out.data ? strchr(out.data, '/') : NULL;
	for (p = out.data; slash && p < slash; p++)
		if (*p == '.')
			*p = '_';
	/* Docker's limit for a repository name is 255 characters. */
	if (out.len > 255) {
		out.len = 255;
		while (out.len && (is_sep(out.data[out.len - 1]) || out.data[out.len - 1] == '/'))
			out.len--;
		out.data[out.len] = '\0';
	}
	free(raw);
	return rm_buf_detach(&out);
}
