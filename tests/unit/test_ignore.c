/*
 * .dockerignore matching against Docker's rules (moby/patternmatcher): cases taken from
 * Docker's documentation and patternmatcher's tests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "rm/engine.h"
#include "rm/tar.h"
#include "rm/util.h"

#include "../../src/tar/ignore_internal.h"

static int failures;

/* lines: patterns separated by '\n'. */
static int excluded(const char *lines, const char *path)
{
	char *copy = rm_xstrdup(lines);
	const char *v[32];
	size_t n = 0;
	for (char *p = copy, *nl; p && n < 32; p = nl) {
		nl = strchr(p, '\n');
		if (nl)
			*nl++ = '\0';
		v[n++] = p;
	}
	rm_ignore *ig = rm_ignore_from_lines(v, n);
	int r = rm_ignore_match(ig, path);
	rm_ignore_free(ig);
	free(copy);
	return r;
}

#define EXCL(pats, path)                                                                           \
	do {                                                                                       \
		int r_ = excluded(pats, path);                                                     \
		CHECK(r_ == 1);                                                                    \
		if (r_ != 1)                                                                       \
			fprintf(stderr, "  '%s' should exclude '%s'\n", pats, path), failures++;   \
	} while (0)
#define INCL(pats, path)                                                                           \
	do {                                                                                       \
		int r_ = excluded(pats, path);                                                     \
		CHECK(r_ == 0);                                                                    \
		if (r_ != 0)                                                                       \
			fprintf(stderr, "  '%s' should keep '%s'\n", pats, path), failures++;      \
	} while (0)

TEST(basics)
{
	INCL("", "a");
	/* No pattern crosses '/' unless it says so: "*.o" is for the top only. */
	EXCL("*.o", "a.o");
	INCL("*.o", "dir/a.o");
	INCL("*.o", "a.oo");
	/* A pattern naming a folder excludes everything below it. */
	EXCL("build", "build");
	EXCL("build", "build/x/y.c");
	INCL("build", "builder");
	INCL("build", "src/build");
	/* Leading "/" and "./", trailing "/", and ".." are cleaned away. */
	EXCL("/build", "build/x");
	EXCL("./build/", "build/x");
	EXCL("x/../build", "build");
	EXCL("build//sub/", "build/sub/f");
	INCL("build/sub", "build/other");
	/* "*" and "?" stay within one name. */
	EXCL("*/temp*", "a/temporary");
	EXCL("*/temp*", "a/temp/f");
	INCL("*/temp*", "temp");
	INCL("*/temp*", "a/b/temp");
	EXCL("*/*/temp*", "a/b/temp.txt");
	EXCL("temp?", "tempa");
	INCL("temp?", "temp");
	INCL("temp?", "tempab");
	INCL("a?b", "a/b");
	EXCL("[ab].c", "a.c");
	INCL("[ab].c", "c.c");
	EXCL("[^a].c", "b.c");
	INCL("[^a].c", "a.c");
	EXCL("\\*.c", "*.c");
	INCL("\\*.c", "x.c");
	EXCL("file with space", "file with space");
	/* Comments only at the very start of a line; blanks trimmed. */
	INCL("#a", "#a");
	EXCL(" #a", "#a");
	EXCL("  spaced  \t", "spaced");
	INCL("\n\n", "x");
}

TEST(double_star)
{
	EXCL("**/*.go", "a.go");
	EXCL("**/*.go", "x/y/z.go");
	INCL("**/*.go", "x/y/z.gox");
	EXCL("a/**/b", "a/b");
	EXCL("a/**/b", "a/x/b");
	EXCL("a/**/b", "a/x/y/b");
	EXCL("a/**/b", "a/x/y/b/c");
	INCL("a/**/b", "a/xb");
	INCL("a/**/b", "b");
	EXCL("foo/**", "foo/x");
	EXCL("foo/**", "foo/x/y");
	INCL("foo/**", "foo");
	INCL("foo/**", "foobar/x");
	EXCL("**", "anything/at/all");
	EXCL("**/foo", "foo");
	EXCL("**/foo", "a/b/foo");
	EXCL("**/foo", "a/b/foo/c");
	INCL("**/foo", "a/bfoo");
	/* "**" with more text and no other wildcard matches by suffix, as Docker does. */
	EXCL("**foo", "xfoo");
	EXCL("**foo", "a/bfoo");
	EXCL("**/dir/*.txt", "x/dir/a.txt");
	INCL("**/dir/*.txt", "x/dir/a/b.txt");
	EXCL("a/**/*.txt", "a/b/c/d.txt");
	EXCL("a/**/*.txt", "a/d.txt");
	INCL("a/**/*.txt", "b/d.txt");
	EXCL("*/**/x", "a/x");
	EXCL("*/**/x", "a/b/c/x");
	INCL("*/**/x", "x");
}

TEST(exceptions)
{
	EXCL("*.md\n!README.md", "a.md");
	INCL("*.md\n!README.md", "README.md");
	/* The last matching pattern wins. */
	EXCL("!README.md\n*.md", "README.md");
	EXCL("*.md\n!README*.md\nREADME-secret.md", "README-secret.md");
	INCL("*.md\n!README*.md\nREADME-secret.md", "README-public.md");
	/* An exception below an excluded folder re-includes just that file. */
	EXCL("docs\n!docs/keep.txt", "docs/drop.txt");
	INCL("docs\n!docs/keep.txt", "docs/keep.txt");
	INCL("docs\n!docs/keep", "docs/keep/deeper");
	EXCL("**\n!src\nsrc/*.o", "src/a.o");
	INCL("**\n!src\nsrc/*.o", "src/a.c");
	EXCL("**\n!src\nsrc/*.o", "Makefile");
	INCL("src\n!**/*.go", "src/x/y.go");
	/* A lone "!" is illegal and skipped here (rm_ignore_load reports it). */
	EXCL("a\n!", "a");
	/* Paths given to match are cleaned too. */
	EXCL("build", "./build/x");
	EXCL("build", "/build");
}

TEST(reinclude)
{
	const char *v[] = {"docs", "!docs/keep.txt", "node_modules", "!*/important", "x"};
	rm_ignore *ig = rm_ignore_from_lines(v, 5);
	CHECK(rm_ignore_may_reinclude(ig, "docs") == 1);
	CHECK(rm_ignore_may_reinclude(ig, "node_modules") == 1); /* through "*\/important" */
	rm_ignore_free(ig);
	const char *w[] = {"docs", "!docs/keep.txt", "!do"};
	ig = rm_ignore_from_lines(w, 3);
	CHECK(rm_ignore_may_reinclude(ig, "docs") == 1);
	CHECK(rm_ignore_may_reinclude(ig, "doc") == 0);
	CHECK(rm_ignore_may_reinclude(ig, "docsx") == 0);
	CHECK(rm_ignore_may_reinclude(ig, "docs/keep.txt") == 0);
	CHECK(rm_ignore_may_reinclude(ig, "other") == 0);
	rm_ignore_free(ig);
	const char *u[] = {"docs"};
	ig = rm_ignore_from_lines(u, 1);
	CHECK(rm_ignore_may_reinclude(ig, "docs") == 0);
	rm_ignore_free(ig);
}

TEST(clean)
{
	const char *cases[][2] = {
	    {"", "."},		{".", "."},	   {"a/b/", "a/b"},    {"a//b", "a/b"},
	    {"./a", "a"},	{"a/../b", "b"},   {"../a", "../a"},   {"../../a/..", "../.."},
	    {"/..", "/"},	{"/../a/", "/a"},  {"a/b/../..", "."}, {"/", "/"},
	    {"a/./b/.", "a/b"}, {"..a/b", "..a/b"}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *c = rm_clean_path(cases[i][0], strlen(cases[i][0]));
		CHECK_STR(c, cases[i][1]);
		free(c);
	}
}

TEST(load)
{
	rm_error err = RM_ERROR_INIT;
	rm_ignore *ig = NULL;
	char dir[] = "/tmp/rm_test_ignore_XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char *path = rm_xasprintf("%s/.dockerignore", dir);

	/* A missing file excludes nothing. */
	CHECK(rm_ignore_load(&ig, path, &err) == 0);
	CHECK(ig && rm_ignore_match(ig, "x") == 0);
	rm_ignore_free(ig);
	ig = NULL;

	FILE *f = fopen(path, "w");
	fputs("\xEF\xBB\xBF*.log\r\n# comment\r\n\r\n!keep.log\r\nbuild/", f);
	fclose(f);
	CHECK(rm_ignore_load(&ig, path, &err) == 0);
	CHECK(rm_ignore_match(ig, "a.log") == 1);
	CHECK(rm_ignore_match(ig, "keep.log") == 0);
	CHECK(rm_ignore_match(ig, "build/x") == 1);
	CHECK(rm_ignore_match(ig, "# comment") == 0);
	rm_ignore_free(ig);
	ig = NULL;

	f = fopen(path, "w");
	fputs("a\n  !  \n", f);
	fclose(f);
	CHECK(rm_ignore_load(&ig, path, &err) < 0);
	CHECK(ig == NULL);
	CHECK(strstr(err.msg, "line 2") != NULL);
	CHECK(err.kind == RM_ERR_INPUT);

	unlink(path);
	rmdir(dir);
	free(path);
	rm_ignore_free(NULL);
}
