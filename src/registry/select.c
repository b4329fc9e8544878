/*
 * Tag selection (see include/rm/registry.h: scopes, name:key=value arguments, "all").
 */
#include <stdlib.h>
#include <string.h>

#include "rm/registry.h"
#include "rm/util.h"

/* One comma-separated piece of a --tags value, split at ':' into the tag and its
 * key=value options. */
struct tag_piece {
	char *text; /* the whole trimmed piece, for messages */
	char *tag;
	char *args; /* " --key value ..." or NULL */
	int matched;
};

static int select_is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* Copy of s[0..n) without leading and trailing blanks. */
static char *trimmed(const char *s, size_t n)
{
	while (n && select_is_blank(*s)) {
		s++;
		n--;
	}
	while (n && select_is_blank(s[n - 1]))
		n--;
	return rm_xstrndup(s, n);
}

/* "tag:key=value:k2=v2" -> tag and " --key value --k2 v2"; a bare "key" gives " --key" (a
 * flag), empty options are skipped as madengine does. */
static void split_piece(char *text, struct tag_piece *p)
{
	rm_buf args = RM_BUF_INIT((size_t)1 << 20);
	const char *s = text, *colon = strchr(s, ':');

	p->text = text;
	p->tag = trimmed(s, colon ? (size_t)(colon - s) : strlen(s));
	while (colon) {
		const char *opt = colon + 1, *eq;
		char *o;

		colon = strchr(opt, ':');
		o = trimmed(opt, colon ? (size_t)(colon - opt) : strlen(opt));
		if (*o) {
			eq = strchr(o, '=');
			if (eq) {
				char *k = trimmed(o, (size_t)(eq - o)),
				     *v = trimmed(eq + 1, strlen(eq + 1));
				rm_buf_addf(&args, " --%s %s", k, v);
				free(k);
				free(v);
			} else {
				rm_buf_addf(&args, " --%s", o);
			}
		}
		free(o);
	}
	p->args = args.len ? rm_buf_detach(&args) : NULL;
	rm_buf_release(&args);
}

static int has_tag(const rm_model *m, const char *tag)
{
	for (size_t i = 0; i < m->n_tags; i++)
		if (strcmp(m->tags[i], tag) == 0)
			return 1;
	return 0;
}

/* madengine's rule: a tag with exactly one '/' and text on both sides is "scope/filter" and
 * matches only models named "scope/..." (by filter "all", a tag, or the short name). */
static int split_scope(const char *tag, size_t *scope_len)
{
	const char *slash = strchr(tag, '/');

	if (!slash || slash == tag || !slash[1] || strchr(slash + 1, '/'))
		return 0;
	*scope_len = (size_t)(slash - tag);
	return 1;
}

static int tag_matches(const rm_model *m, const char *tag)
{
	size_t n;

	if (split_scope(tag, &n)) {
		const char *filter = tag + n + 1;

		if (strncmp(m->name, tag, n + 1) != 0)
			return 0;
		return strcmp(filter, "all") == 0 || strcmp(filter, m->name + n + 1) == 0 ||
		       has_tag(m, filter);
	}
	/* madengine's rule: an unscoped name is the whole name, so "model2" never selects
	 * "dummy2/model2" (its tags still match anywhere). */
	return strcmp(tag, "all") == 0 || strcmp(tag, m->name) == 0 || has_tag(m, tag);
}

/* The first scoped model whose short name is tag, or NULL: for the hint of a tag that
 * matched nothing. */
static const rm_model *scoped_short_name(const rm_registry *reg, const char *tag)
{
	for (size_t i = 0; i < reg->n; i++)
		if (reg->models[i].scope && !strcmp(reg->models[i].short_name, tag))
			return &reg->models[i];
	return NULL;
}

/* Whether args (" --k v") already ends extra or stands in it as a whole piece. */
static int has_args(const char *extra, const char *args)
{
	size_t n = strlen(args);

	for (const char *p = extra; p && (p = strstr(p, args)); p++)
		if (p[n] == '\0' || strncmp(p + n, " --", 3) == 0)
			return 1;
	return 0;
}

/* The comma-separated pieces of every --tags value, blanks trimmed, empty ones dropped. */
static struct tag_piece *split_exprs(const char *const *tag_exprs, size_t n_exprs, size_t *n)
{
	struct tag_piece *pieces = NULL;

	*n = 0;
	for (size_t i = 0; i < n_exprs; i++) {
		const char *s = tag_exprs[i];

		while (s) {
			const char *comma = strchr(s, ',');
			char *text = trimmed(s, comma ? (size_t)(comma - s) : strlen(s));

			s = comma ? comma + 1 : NULL;
			if (!*text) {
				free(text);
				continue;
			}
			pieces = rm_xrealloc(pieces, (*n + 1) * sizeof(*pieces));
			memset(&pieces[*n], 0, sizeof(*pieces));
			split_piece(text, &pieces[(*n)++]);
		}
	}
	return pieces;
}

/* Marks the models each piece picks, and appends its extra args to theirs once. */
static void match_pieces(const rm_registry *reg, struct tag_piece *pieces, size_t n_pieces,
			 unsigned char *picked, char **extra)
{
	for (size_t k = 0; k < n_pieces; k++) {
		struct tag_piece *p = &pieces[k];

		/* ":key=value" with no tag before it selects nothing and must not select all. */
		if (!*p->tag)
			continue;
		for (size_t i = 0; i < reg->n; i++) {
			if (!tag_matches(&reg->models[i], p->tag))
				continue;
			p->matched = 1;
			picked[i] = 1;
			if (p->args && !has_args(extra[i], p->args)) {
				char *joined =
				    rm_xasprintf("%s%s", extra[i] ? extra[i] : "", p->args);
				free(extra[i]);
				extra[i] = joined;
			}
		}
	}
}

/* An error naming every tag that matched nothing (each once), and the dynamic registries
 * that were not run; 0 when every tag matched. */
static int unmatched(const rm_registry *reg, const struct tag_piece *pieces, size_t n_pieces,
		     rm_error *err)
{
	rm_buf msg = RM_BUF_INIT((size_t)1 << 16), dyn = RM_BUF_INIT((size_t)1 << 16);
	size_t n = 0;
	int ret = 0;

	for (size_t k = 0; k < n_pieces; k++) {
		const rm_model *scoped;
		int seen = 0;

		for (size_t j = 0; j < k && !pieces[k].matched; j++)
			seen |= !pieces[j].matched && strcmp(pieces[j].text, pieces[k].text) == 0;
		if (pieces[k].matched || seen)
			continue;
		rm_buf_addf(&msg, "%s'%s'", n ? ", " : "", pieces[k].text);
		scoped = scoped_short_name(reg, pieces[k].tag);
		if (scoped)
			rm_buf_addf(&msg,
				    " (names are whole, as in madengine: the model is '%s', "
				    "give --tags %s)",
				    scoped->name, scoped->name);
		n++;
	}
	for (size_t i = 0; n && i < reg->n_dynamic_skipped; i++)
		rm_buf_addf(&dyn, "%s'%s'", i ? ", " : "", reg->dynamic_skipped[i]);
	if (n)
		ret =
		    rm_error_set(err, RM_ERR_INPUT,
				 "no model matches %s %s; run 'run_models list' to see the models "
				 "and their tags%s%s%s",
				 n == 1 ? "tag" : "tags", rm_buf_str(&msg),
				 dyn.len ? " (the dynamic registries " : "", rm_buf_str(&dyn),
				 dyn.len ? " were not run: give --dynamic-registry run, or set "
					   "RM_DYNAMIC_REGISTRY=run, to run them)"
					 : "");
	rm_buf_release(&dyn);
	rm_buf_release(&msg);
	return ret;
}

int rm_select(const rm_registry *reg, const char *const *tag_exprs, size_t n_exprs,
	      rm_selection *sel, rm_error *err)
{
	size_t n_pieces = 0;
	struct tag_piece *pieces = split_exprs(tag_exprs, n_exprs, &n_pieces);
	char **extra = NULL;
	unsigned char *picked = NULL;
	int ret = -1;

	sel->items = NULL;
	sel->n = 0;
	if (n_pieces == 0) {
		rm_error_set(err, RM_ERR_USAGE,
			     "no tags given; pass --tags <tag> (run 'run_models list' to see the "
			     "models and their tags)");
		goto out;
	}
	picked = rm_xcalloc(reg->n + 1, 1);
	extra = rm_xcalloc(reg->n + 1, sizeof(*extra));
	match_pieces(reg, pieces, n_pieces, picked, extra);
	if (unmatched(reg, pieces, n_pieces, err) < 0)
		goto out;
	sel->items = rm_xcalloc(reg->n + 1, sizeof(*sel->items));
	for (size_t i = 0; i < reg->n; i++) {
		if (!picked[i])
			continue;
		sel->items[sel->n].model = &reg->models[i];
		sel->items[sel->n].extra_args = extra[i];
		extra[i] = NULL;
		sel->n++;
	}
	ret = 0;
out:
	for (size_t k = 0; k < n_pieces; k++) {
		free(pieces[k].text);
		free(pieces[k].tag);
		free(pieces[k].args);
	}
	free(pieces);
	if (extra)
		for (size_t i = 0; i < reg->n; i++)
			free(extra[i]);
	free(extra);
	free(picked);
	return ret;
}

void rm_selection_release(rm_selection *sel)
{
	if (!sel)
		return;
	for (size_t i = 0; i < sel->n; i++)
		free(sel->items[i].extra_args);
	free(sel->items);
	sel->items = NULL;
	sel->n = 0;
}
