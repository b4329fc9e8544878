/*
 * Golden tests for the log parsers, driven by the parser table (rm_parsers[]): for every
 * parser except "auto" there must be a folder DIR/<parser>/ of real log excerpts <name>.log
 * (header lines name the source) with <name>.expected beside each: the exact CSV that
 * `run_models parse --parser <parser> --format csv` prints, followed by a line
 * `# problem: <text>` when the parser reports no figure. Every fixture is also run through
 * "auto", which must pick the folder's parser and print the same. DIR/none/ holds real logs
 * no parser may recognise: auto must pick nothing and say why. A folder that names no parser
 * is an error (a renamed parser leaves none behind).
 *
 * Usage: parsers_golden DIR   (DIR = tests/parsers)
 * RM_GOLDEN_SHOW=1 prints the output of every fixture; RM_GOLDEN_UPDATE=1 rewrites the
 * .expected files from the output (review the diff before committing it).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rm/parser.h"
#include "rm/util.h"

#define NONE_DIR "none"

static int passed, failed;

static void fail(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, fmt, a, b);
	failed++;
}

static void show_diff(const char *log, const char *parser, const char *expected, const char *got)
{
	fprintf(stderr, "FAIL %s --parser %s\n--- expected\n%s--- got\n%s", log, parser, expected,
		got);
	failed++;
}

static char *slurp(const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	rm_error err = RM_ERROR_INIT;

	if (rm_read_file(path, 1 << 24, &buf, &len, &err) < 0)
		return NULL;
	return buf;
}

/* Runs one parser over path; returns the output text (CSV + problem line) and the parser
 * that produced it (NULL for auto choosing none). */
static char *run(const char *path, const char *parser, const char **chosen)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	rm_error err = RM_ERROR_INIT;
	rm_parser p;
	rm_parse_result r = {0};
	const rm_parser_ops *eff;

	*chosen = NULL;
	if (rm_parser_start(&p, parser, NULL) < 0 || rm_parse_path(path, &p, &r, &err) < 0) {
		fprintf(mem, "error: %s\n", err.msg);
	} else {
		rm_parse_result_write_csv(&r, mem);
		if (r.problem)
			fprintf(mem, "# problem: %s\n", r.problem);
		if (r.has_performance == !!r.problem)
			fputs("error: exactly one of performance and problem must be set\n", mem);
		eff = rm_parser_effective(&p);
		*chosen = eff ? eff->name : NULL;
	}
	rm_parse_result_release(&r);
	rm_parser_stop(&p);
	fclose(mem);
	return buf;
}

static void check_fixture(const char *dir, const char *folder, const char *parser, const char *name)
{
	char *log = rm_xasprintf("%s/%s/%s", dir, folder, name);
	char *exp_path = rm_xasprintf("%.*s.expected", (int)(strlen(log) - 4), log);
	char *expected = slurp(exp_path), *got = NULL, *got_auto;
	const char *chosen = NULL, *want = parser ? parser : "(none)";

	if (parser) {
		got = run(log, parser, &chosen);
		if (getenv("RM_GOLDEN_SHOW"))
			printf("== %s\n%s", log, got);
		if (getenv("RM_GOLDEN_UPDATE")) {
			FILE *f = fopen(exp_path, "w");
			if (f) {
				fputs(got, f);
				fclose(f);
			}
			free(expected);
			expected = rm_xstrdup(got);
		}
		if (!expected)
			fail("FAIL %s: missing %s\n", log, exp_path);
		else if (strcmp(expected, got))
			show_diff(log, parser, expected, got);
		else
			passed++;
	}
	got_auto = run(log, "auto", &chosen);
	if (!parser && getenv("RM_GOLDEN_SHOW"))
		printf("== %s\n%s", log, got_auto);
	if (!parser && getenv("RM_GOLDEN_UPDATE")) {
		FILE *f = fopen(exp_path, "w");
		if (f) {
			fputs(got_auto, f);
			fclose(f);
		}
		free(expected);
		expected = rm_xstrdup(got_auto);
	}
	if ((chosen || parser) && (!chosen || !parser || strcmp(chosen, parser))) {
		fprintf(stderr, "FAIL %s: auto chose '%s', expected '%s'\n", log,
			chosen ? chosen : "(none)", want);
		failed++;
	} else if (!expected) {
		fail("FAIL %s: missing %s\n", log, exp_path);
	} else if (strcmp(expected, got_auto)) {
		show_diff(log, "auto", expected, got_auto);
	} else {
		passed++;
	}
	free(log);
	free(exp_path);
	free(expected);
	free(got);
	free(got_auto);
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Checks every *.log of DIR/folder; returns how many there were. */
static size_t check_folder(const char *dir, const char *folder, const char *parser)
{
	char *sub = rm_xasprintf("%s/%s", dir, folder);
	DIR *d = opendir(sub);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0;

	while (d && (e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l > 4 && !strcmp(e->d_name + l - 4, ".log"))
			names = rm_strv_push(names, &n, e->d_name);
	}
	if (d)
		closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp);
	for (size_t i = 0; i < n; i++)
		check_fixture(dir, folder, parser, names[i]);
	rm_strv_free(names);
	free(sub);
	return n;
}

/* Every sub-folder must be a parser of the table or NONE_DIR. */
static void check_folders(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d) {
		fail("FAIL %s: cannot open%s\n", dir, "");
		return;
	}
	while ((e = readdir(d))) {
		char *path;
		struct stat st;
		const rm_parser_ops *ops;
		if (e->d_name[0] == '.')
			continue;
		path = rm_xasprintf("%s/%s", dir, e->d_name);
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode) && strcmp(e->d_name, NONE_DIR) &&
		    (!(ops = rm_parser_find(e->d_name)) || !strcmp(ops->name, "auto")))
			fail("FAIL %s: folder '%s' names no parser of rm_parsers[]\n", dir,
			     e->d_name);
		free(path);
	}
	closedir(d);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	check_folders(argv[1]);
	for (size_t p = 0; rm_parsers[p]; p++) {
		const char *name = rm_parsers[p]->name;
		size_t n;
		if (!strcmp(name, "auto"))
			continue;
		n = check_folder(argv[1], name, name);
		/* generic: only one public excerpt exists (see docs/parsers.md); at least that. */
		if (n < (strcmp(name, "generic") ? 2u : 1u))
			fail("FAIL %s/%s: too few fixtures, want at least 2 real logs\n", argv[1],
			     name);
	}
	if (check_folder(argv[1], NONE_DIR, NULL) == 0)
		fail("FAIL %s/%s: no fixture of a log no parser recognises\n", argv[1], NONE_DIR);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
