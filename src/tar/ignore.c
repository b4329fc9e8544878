/*
 * .dockerignore matching with Docker's semantics (moby/patternmatcher and its ignorefile
 * reader, as used by the docker CLI for the classic builder).
 *
 * This is hand-written because no Debian-packaged C library implements Docker's matcher:
 * fnmatch(3) has no "**", and gitignore rules differ (no anchoring to the context root, a
 * pattern without '/' matches at any depth). Each "**"-free piece of a pattern still goes
 * through fnmatch(FNM_PATHNAME); only "**" itself and the "parent directory matches" rule are
 * coded here.
 *
 * Docker's rules, in the order the code applies them:
 * - reading: a line starting with '#' is a comment (checked before trimming); blanks are
 *   trimmed; "!" marks an exception; the pattern is cleaned like Go's filepath.Clean and a
 *   leading "/" is dropped (so "/a", "./a" and "a" are the same pattern);
 * - a pattern with no wildcard or escape is compared literally; one starting with "**"
 *   and no other wildcard or escape matches by suffix ("**foo" matches "xfoo"); otherwise
 *   it behaves like moby's regular expression: '*' and '?' never cross '/', "**" (with a
 *   following '/' eaten) matches any number of whole folders in the middle and anything
 *   at the end;
 * - a path is matched by a pattern when the path itself or one of its parent directories
 *   is; the last matching pattern decides (an exception re-includes).
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ignore_internal.h"
#include "rm/tar.h"
#include "rm/util.h"

enum { PAT_EXACT, PAT_SUFFIX, PAT_GLOB };

struct ignore_pat {
	char *pat; /* cleaned, without the '!' */
	int exclusion;
	int type;
};

struct rm_ignore {
	struct ignore_pat *v;
	size_t n;
};

char *rm_clean_path(const char *p, size_t len)
{
	if (len == 0)
		return rm_xstrdup(".");
	int rooted = p[0] == '/';
	/* Output is never longer than the input plus a leading "." or "/". */
	char *out = rm_xmalloc(len + 2);
	size_t o = 0;
	size_t dotdot = 0; /* length of the leading ".." run that cannot be removed */
	if (rooted)
		out[o++] = '/';
	size_t base = o;
	dotdot = o;
	size_t i = 0;
	while (i < len) {
		if (p[i] == '/') {
			i++;
			continue;
		}
		size_t j = i;
		while (j < len && p[j] != '/')
			j++;
		size_t seg = j - i;
		if (seg == 1 && p[i] == '.') {
			/* "." adds nothing */
		} else if (seg == 2 && p[i] == '.' && p[i + 1] == '.') {
			if (o > dotdot) {
				/* Drop the last element. */
				while (o > dotdot && out[o - 1] != '/')
					o--;
				if (o > base)
					o--;
			} else if (!rooted) {
				if (o > base)
					out[o++] = '/';
				out[o++] = '.';
				out[o++] = '.';
				dotdot = o;
			}
		} else {
			if (o > base && out[o - 1] != '/')
				out[o++] = '/';
			memcpy(out + o, p + i, seg);
			o += seg;
		}
		i = j;
	}
	if (o == 0)
		out[o++] = '.';
	out[o] = '\0';
	return out;
}

/* Position of the first wildcard, or of an escape ('\' before a character): moby treats
 * both as "needs the pattern matcher", anything else is compared literally. */
static const char *find_meta(const char *s)
{
	for (; *s; s++) {
		if ((*s == '\\' && s[1]) || *s == '*' || *s == '?' || *s == '[' || *s == ']')
			return s;
	}
	return NULL;
}

static const char *find_dstar(const char *s)
{
	for (; *s; s++) {
		if (*s == '\\') {
			if (!s[1])
				break;
			s++;
			continue;
		}
		if (s[0] == '*' && s[1] == '*')
			return s;
	}
	return NULL;
}

/*
 * Does pat match all of s? pat may hold "**": the piece before it must match a prefix of s
 * (fnmatch on that prefix), then "**" followed by more pattern stands for "(.*\/)?" and
 * "**" at the end for ".*", as in moby's regular expression. s is modified temporarily.
 */
static int glob_match(const char *pat, char *s)
{
	const char *ds = find_dstar(pat);
	if (!ds)
		return fnmatch(pat, s, FNM_PATHNAME) == 0;
	char *piece = rm_xstrndup(pat, (size_t)(ds - pat));
	const char *rest = ds + 2;
	if (*rest == '/')
		rest++;
	size_t slen = strlen(s);
	int found = 0;
	for (size_t i = 0; i <= slen && !found; i++) {
		char c = s[i];
		s[i] = '\0';
		int ok = fnmatch(piece, s, FNM_PATHNAME) == 0;
		s[i] = c;
		if (!ok)
			continue;
		if (!*rest) {
			found = 1;
			break;
		}
		if (glob_match(rest, s + i)) {
			found = 1;
			break;
		}
		for (size_t j = i; j < slen; j++) {
			if (s[j] == '/' && glob_match(rest, s + j + 1)) {
				found = 1;
				break;
			}
		}
	}
	free(piece);
	return found;
}

static int pat_match(const struct ignore_pat *p, const char *path, size_t len)
{
	switch (p->type) {
	case PAT_EXACT:
		return strlen(p->pat) == len && memcmp(p->pat, path, len) == 0;
	case PAT_SUFFIX: {
		const char *suf = p->pat + 2;
		size_t sl = strlen(suf);
		if (sl <= len && memcmp(path + len - sl, suf, sl) == 0)
			return 1;
		/* "**\/foo" also matches "foo" at the top. */
		return suf[0] == '/' && sl - 1 == len && memcmp(suf + 1, path, len) == 0;
	}
	default: {
		char *s = rm_xstrndup(path, len);
		int m = glob_match(p->pat, s);
		free(s);
		return m;
	}
	}
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

/* Adds one line; 0 = added or nothing to add, -1 = the illegal lone "!". */
static int add_line(rm_ignore *ig, const char *line, size_t len)
{
	if (len && line[0] == '#')
		return 0;
	while (len && is_blank(line[0])) {
		line++;
		len--;
	}
	while (len && is_blank(line[len - 1]))
		len--;
	if (!len)
		return 0;
	int exclusion = line[0] == '!';
	if (exclusion) {
		line++;
		len--;
		while (len && is_blank(line[0])) {
			line++;
			len--;
		}
		if (!len)
			return -1;
	}
	char *pat = rm_clean_path(line, len);
	if (pat[0] == '/' && pat[1]) {
		size_t l = strlen(pat);
		memmove(pat, pat + 1, l);
	}
	int type = PAT_GLOB;
	if (!find_meta(pat))
		type = PAT_EXACT;
	else if (pat[0] == '*' && pat[1] == '*' && !find_meta(pat + 2))
		type = PAT_SUFFIX;
	ig->v = rm_xrealloc(ig->v, (ig->n + 1) * sizeof(*ig->v));
	ig->v[ig->n].pat = pat;
	ig->v[ig->n].exclusion = exclusion;
	ig->v[ig->n].type = type;
	ig->n++;
	return 0;
}

int rm_ignore_add(rm_ignore *ig, const char *line)
{
	return add_line(ig, line, strlen(line));
}

rm_ignore *rm_ignore_from_lines(const char *const *lines, size_t n)
{
	rm_ignore *ig = rm_xcalloc(1, sizeof(*ig));
	for (size_t i = 0; i < n; i++)
		if (lines[i])
			(void)add_line(ig, lines[i], strlen(lines[i]));
	return ig;
}

int rm_ignore_load(rm_ignore **out, const char *dockerignore_path, rm_error *err)
{
	int ret = -1;
	rm_ignore *ig = rm_xcalloc(1, sizeof(*ig));
	char *line = NULL;
	size_t cap = 0;
	FILE *f = fopen(dockerignore_path, "re");
	if (!f) {
		if (errno == ENOENT || errno == ENOTDIR) {
			*out = ig;
			return 0;
		}
		rm_error_sys(err, RM_ERR_IO, errno, "cannot open '%s'", dockerignore_path);
		goto out;
	}
	ssize_t len;
	long lineno = 0;
	while ((len = getline(&line, &cap, f)) >= 0) {
		const char *p = line;
		size_t l = (size_t)len;
		lineno++;
		if (lineno == 1 && l >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) {
			p += 3;
			l -= 3;
		}
		if (add_line(ig, p, l) < 0) {
			rm_error_set(
			    err, RM_ERR_INPUT,
			    "'%s' line %ld: illegal exclusion pattern '!' (it needs a path)",
			    dockerignore_path, lineno);
			goto out;
		}
	}
	if (ferror(f)) {
		rm_error_sys(err, RM_ERR_IO, errno, "cannot read '%s'", dockerignore_path);
		goto out;
	}
	*out = ig;
	ig = NULL;
	ret = 0;
out:
	if (f)
		fclose(f);
	free(line);
	rm_ignore_free(ig);
	return ret;
}

int rm_ignore_match(const rm_ignore *ig, const char *relpath)
{
	if (!ig || !ig->n)
		return 0;
	char *path = rm_clean_path(relpath, strlen(relpath));
	const char *p = path;
	while (*p == '/')
		p++;
	size_t len = strlen(p);
	int matched = 0;
	for (size_t k = 0; k < ig->n; k++) {
		const struct ignore_pat *pat = &ig->v[k];
		/* An exclusion can only change a match, an inclusion only a non-match. */
		if (pat->exclusion != matched)
			continue;
		int m = pat_match(pat, p, len);
		for (size_t i = 0; !m && i < len; i++)
			if (p[i] == '/')
				m = pat_match(pat, p, i);
		if (m)
			matched = !pat->exclusion;
	}
	free(path);
	return matched;
}

int rm_ignore_may_reinclude(const rm_ignore *ig, const char *dir_relpath)
{
	if (!ig)
		return 0;
	size_t dl = strlen(dir_relpath);
	for (size_t k = 0; k < ig->n; k++) {
		const struct ignore_pat *pat = &ig->v[k];
		if (!pat->exclusion)
			continue;
		/* The literal part of the exception (up to its first wildcard or escape) must
		 * agree with "dir/" as far as both go. Docker only checks that the exception
		 * starts with "dir/"; walking a little more never changes which files match. */
		size_t lp = strcspn(pat->pat, "*?[]\\");
		size_t n = lp < dl ? lp : dl;
		if (memcmp(pat->pat, dir_relpath, n) != 0)
			continue;
		if (lp > dl ? pat->pat[dl] == '/' : pat->pat[lp] != '\0')
			return 1;
	}
	return 0;
}

void rm_ignore_free(rm_ignore *ig)
{
	if (!ig)
		return;
	for (size_t i = 0; i < ig->n; i++)
		free(ig->v[i].pat);
	free(ig->v);
	free(ig);
}
