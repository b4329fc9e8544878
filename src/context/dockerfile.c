/*
 * Dockerfile candidates of a model, their "# CONTEXT {...}" filters and base images, and
 * the image names built from them (see include/rm/context.h).
 *
 * A registry of thousands of models shares a few dozen Dockerfiles, and `list` selects the
 * candidates of every model: the glob of each prefix and the scan of each file are cached
 * for the life of the process, and checked against the file system (one stat of the
 * folder, one of each candidate) when last checked more than RECHECK_S ago, so an edited or
 * added Dockerfile is seen by the next model of a run.
 * The program is single-threaded; the cache is not locked.
 */
#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <stdint.h>
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
/* How long a cached glob or scan is trusted without a stat. */
#define RECHECK_S 1.0

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

/* --- the cache ------------------------------------------------------------------------ */

struct entry {
	char *key;
	void *val;
};

struct map {
	struct entry *slots;
	size_t cap, n;
};

struct globbed {
	char *dir; /* the folder whose mtime validates the list */
	struct stat st;
	int have_st;
	double checked; /* rm_now() of the last stat */
	char **paths;	/* NULL-terminated, with GLOB_MARK's '/' on folders */
	size_t n;
	char **others; /* what `<prefix>.*` also takes and MAD's rule leaves to longer prefixes */
	size_t n_others;
};

static struct map glob_cache, scan_cache;

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

static struct entry *map_slot(struct map *m, const char *key)
{
	size_t mask, i;

	if ((m->n + 1) * 2 > m->cap) {
		struct entry *old = m->slots;
		size_t old_cap = m->cap;

		m->cap = old_cap ? old_cap * 2 : 64;
		m->slots = rm_xcalloc(m->cap, sizeof(*m->slots));
		for (size_t k = 0; k < old_cap; k++) {
			if (!old[k].key)
				continue;
			mask = m->cap - 1;
			for (i = (size_t)hash_str(old[k].key) & mask; m->slots[i].key;
			     i = (i + 1) & mask)
				;
			m->slots[i] = old[k];
		}
		free(old);
	}
	mask = m->cap - 1;
	for (i = (size_t)hash_str(key) & mask; m->slots[i].key; i = (i + 1) & mask)
		if (strcmp(m->slots[i].key, key) == 0)
			return &m->slots[i];
	return &m->slots[i];
}

static int same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

static void globbed_release(struct globbed *g)
{
	if (!g)
		return;
	free(g->dir);
	rm_strv_free(g->paths);
	rm_strv_free(g->others);
	free(g);
}

/* The prefix comes from models.json; glob metacharacters in it are meant literally. The
 * candidates are madengine's `ls <prefix>.*` (a literal dot), Dockerfiles only. */
static char *glob_pattern(const char *prefix)
{
	rm_buf b = RM_BUF_INIT((size_t)1 << 16);

	for (const char *p = prefix; *p; p++) {
		if (*p == '*' || *p == '?' || *p == '[' || *p == '\\')
			rm_buf_addch(&b, '\\');
		rm_buf_addch(&b, *p);
	}
	rm_buf_addstr(&b, ".*Dockerfile");
	return rm_buf_detach(&b);
}

/*
 * MAD's documented rule (docs/adding-a-model.md): "<prefix>.Dockerfile" or
 * "<prefix>.<os>.<vendor>.Dockerfile", each part one word of letters, digits, '_' or '-'
 * (no dot); a folder's older "<prefix>.<os>.Dockerfile" is kept too. So the prefix
 * "docker/vllm_disagg_inference" never takes vllm_disagg_inference.dsv4.ubuntu.amd.Dockerfile:
 * that one is the prefix "docker/vllm_disagg_inference.dsv4"'s. path starts with prefix.
 */
static int by_mads_rule(const char *path, size_t prefix_len)
{
	size_t len = strlen(path);
	const char *p = path + prefix_len, *end;
	int parts = 0;

	if (len && path[len - 1] == '/') /* a folder (GLOB_MARK): judged as the file it names */
		len--;
	if (len < prefix_len + strlen(".Dockerfile"))
		return 0;
	end = path + len - strlen("Dockerfile");
	if (*p++ != '.')
		return 0;
	while (p < end) {
		size_t w =
		    strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-");
		if (w == 0 || p[w] != '.' || ++parts > 2)
			return 0;
		p += w + 1;
	}
	return p == end;
}

/* The candidate paths of prefix, from the cache when the folder has not changed. */
static const struct globbed *candidates(const char *prefix, rm_error *err)
{
	struct entry *slot = map_slot(&glob_cache, prefix);
	struct globbed *g = slot->val;
	struct stat st;
	const char *slash;
	char *dir, *pattern;
	double now = rm_now();
	int have_st, r;
	glob_t gl;

	if (g && g->have_st && now - g->checked < RECHECK_S)
		return g;
	slash = strrchr(prefix, '/');
	dir = slash ? rm_xstrndup(prefix, (size_t)(slash - prefix) + (slash == prefix))
		    : rm_xstrdup(".");
	have_st = stat(dir, &st) == 0;
	if (g && have_st && g->have_st && same_file(&st, &g->st)) {
		g->checked = now;
		free(dir);
		return g;
	}
	if (!slot->key) {
		slot->key = rm_xstrdup(prefix);
		glob_cache.n++;
	}
	globbed_release(g);
	g = slot->val = rm_xcalloc(1, sizeof(*g));
	g->dir = dir;
	g->st = st;
	g->have_st = have_st;
	g->checked = now;
	g->paths = rm_xcalloc(1, sizeof(*g->paths));
	memset(&gl, 0, sizeof(gl));
	pattern = glob_pattern(prefix);
	/* glob sorts its results, which gives the documented candidate order. */
	r = glob(pattern, GLOB_MARK, NULL, &gl);
	free(pattern);
	if (r != 0 && r != GLOB_NOMATCH) {
		g->have_st = 0; /* do not trust this next time */
		rm_error_set(err, RM_ERR_IO, "cannot list '%s.*Dockerfile'", prefix);
		return NULL;
	}
	for (size_t i = 0; r == 0 && i < gl.gl_pathc; i++) {
		if (by_mads_rule(gl.gl_pathv[i], strlen(prefix)))
			g->paths = rm_strv_push(g->paths, &g->n, gl.gl_pathv[i]);
		else
			g->others = rm_strv_push(g->others, &g->n_others, gl.gl_pathv[i]);
	}
	/* No name follows the rule: madengine's own glob, `<prefix>.*` (its test fixture's
	 * dummy_ctxtest.ctx1.ubuntu.amd.Dockerfile has three parts). */
	if (g->n == 0 && g->n_others) {
		rm_strv_free(g->paths);
		g->paths = g->others;
		g->n = g->n_others;
		g->others = NULL;
		g->n_others = 0;
	}
	if (r == 0)
		globfree(&gl);
	return g;
}

/* The scan of one file, from the cache when the file has not changed. */
static const struct scan *scanned(const char *path, rm_error *err)
{
	struct entry *slot = map_slot(&scan_cache, path);
	struct scan *sc = slot->val;
	double now = rm_now();
	struct stat stb, *st = &stb;

	if (sc && now - sc->checked < RECHECK_S)
		return sc;
	if (stat(path, st) != 0) {
		rm_error_sys(err, RM_ERR_IO, errno, "cannot open '%s'", path);
		return NULL;
	}
	if (sc && same_file(st, &sc->st)) {
		sc->checked = now;
		return sc;
	}
	rm_context__scan_release(sc);
	slot->val = NULL;
	sc = rm_xcalloc(1, sizeof(*sc));
	sc->path = rm_xstrdup(path);
	sc->st = *st;
	sc->checked = now;
	if (rm_context__scan_file(path, sc, err) < 0) {
		rm_context__scan_release(sc);
		return NULL;
	}
	if (!slot->key) {
		slot->key = rm_xstrdup(path);
		scan_cache.n++;
	}
	slot->val = sc;
	return sc;
}

static char *stem_of(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t n;

	base = base ? base + 1 : path;
	n = strlen(base);
	/* every candidate ends with ".Dockerfile" (by_mads_rule) */
	return rm_xstrndup(base, n >= 11 ? n - 11 : n);
}

/* Fills kept / why_dropped from the CONTEXT filter. */
static void dockerfile_judge(rm_dockerfile *d, const rm_context *ctx)
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

int rm_dockerfiles_select(const char *prefix, const rm_context *ctx, rm_dockerfile **out, size_t *n,
			  rm_error *err)
{
	const struct globbed *g = candidates(prefix, err);
	rm_dockerfile *v = NULL;
	size_t count = 0, kept = 0;
	int ret = -1;
	rm_buf msg = RM_BUF_INIT((size_t)1 << 16);

	*out = NULL;
	*n = 0;
	if (!g)
		goto out;
	v = rm_xcalloc(g->n + g->n_others + 1, sizeof(*v));
	for (size_t i = 0; i < g->n; i++) {
		const char *p = g->paths[i];
		const struct scan *sc;
		rm_dockerfile *d = &v[count];

		if (p[0] && p[strlen(p) - 1] == '/') {
			rm_error_set(err, RM_ERR_INPUT,
				     "'%.*s' is a folder; the candidates of '%s' (model field "
				     "'dockerfile') must be files: rename the folder",
				     (int)strlen(p) - 1, p, prefix);
			goto out;
		}
		if (!(sc = scanned(p, err)))
			goto out;
		if (sc->error) {
			rm_error_set(err, RM_ERR_INPUT, "%s", sc->error);
			goto out;
		}
		d->path = rm_xstrdup(p);
		d->stem = stem_of(p);
		d->context_req = sc->context_req ? json_deep_copy(sc->context_req) : NULL;
		d->base_image = rm_context__effective_base(sc, ctx);
		count++;
		dockerfile_judge(d, ctx);
		kept += d->kept;
	}
	/* What `<prefix>.*` would also build, shown as not this model's (the dry run, list). */
	for (size_t i = 0; count && i < g->n_others; i++) {
		rm_dockerfile *d = &v[count++];
		d->path = rm_xstrdup(g->others[i]);
		d->stem = stem_of(g->others[i]);
		d->why_dropped = rm_xstrdup("by MAD's rule (<prefix>.<os>.<vendor>.Dockerfile, one "
					    "word each) it belongs to a longer prefix");
	}
	if (count == 0) {
		rm_error_set(err, RM_ERR_INPUT,
			     "no Dockerfile for '%s' (model field 'dockerfile'): MAD's rule takes "
			     "'%s.Dockerfile' or '%s.<os>.<vendor>.Dockerfile', each part one word "
			     "without dots",
			     prefix, prefix, prefix);
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
		    "no Dockerfile matching '%s.*Dockerfile' fits the context%s; change the "
		    "context with --additional-context (e.g. '{\"gpu_vendor\": \"AMD\"}')",
		    prefix, rm_buf_str(&msg));
		goto out;
	}
	ret = 0;
out:
	rm_dockerfiles_free(v, count);
	rm_buf_release(&msg);
	return ret;
}

void rm_dockerfiles_cache_clear(void)
{
	for (size_t i = 0; i < glob_cache.cap; i++) {
		free(glob_cache.slots[i].key);
		globbed_release(glob_cache.slots[i].val);
	}
	for (size_t i = 0; i < scan_cache.cap; i++) {
		free(scan_cache.slots[i].key);
		rm_context__scan_release(scan_cache.slots[i].val);
	}
	free(glob_cache.slots);
	free(scan_cache.slots);
	memset(&glob_cache, 0, sizeof(glob_cache));
	memset(&scan_cache, 0, sizeof(scan_cache));
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

	/* madengine: name.replace("/", "_").lower() + "_" + stem; a per-folder model never
	 * becomes a repository path. */
	for (char *q = raw; *q; q++)
		if (*q == '/')
			*q = '_';
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
