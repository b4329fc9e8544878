/*
 * Golden tests for the log parsers: every tests/parsers/<parser>/<name>.log is a real log
 * excerpt (header lines name its source) and <name>.expected holds the exact CSV that
 * `run_models parse --parser <parser> --format csv` must print for it. Each fixture is also
 * run through "auto", which must pick <parser> and print the same CSV.
 *
 * Usage: parsers_golden DIR   (DIR = tests/parsers)
 * With RM_GOLDEN_SHOW=1 the actual output of every fixture is printed (for review).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rm/parse_file.h"
#include "rm/util.h"

static const char *const parsers[] = {"generic",    "llm_foundry", "megatron",
				      "torchtitan", "mlperf",	   "hf_trainer"};

static int passed, failed;

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = rm_xmalloc((size_t)n + 1);
	if (fread(buf, 1, (size_t)n, f) != (size_t)n)
		n = 0;
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Runs one parser over path into a string; returns the rm_parse_file code. */
static int run(const char *path, const char *parser, char **text, const char **chosen)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	rm_error err = RM_ERROR_INIT;
	int rc = rm_parse_file(path, parser, NULL, mem, RM_PARSE_CSV, chosen, &err);

	fclose(mem);
	if (rc < 0)
		fprintf(stderr, "%s: %s\n", path, err.msg);
	*text = buf;
	return rc;
}

static void check_fixture(const char *dir, const char *parser, const char *name)
{
	char *log = rm_xasprintf("%s/%s/%s", dir, parser, name);
	char *exp_path = rm_xasprintf("%.*s.expected", (int)(strlen(log) - 4), log);
	char *expected = slurp(exp_path), *got = NULL, *got_auto = NULL;
	const char *chosen = NULL;
	int rc = run(log, parser, &got, &chosen);

	if (getenv("RM_GOLDEN_SHOW"))
		printf("== %s (rc %d)\n%s", log, rc, got ? got : "");
	if (!expected) {
		fprintf(stderr, "FAIL %s: missing %s\n", log, exp_path);
		failed++;
	} else if (rc < 0 || strcmp(expected, got)) {
		fprintf(stderr, "FAIL %s --parser %s\n--- expected\n%s--- got\n%s", log, parser,
			expected, got ? got : "");
		failed++;
	} else {
		passed++;
	}
	rc = run(log, "auto", &got_auto, &chosen);
	if (rc < 0 || !chosen || strcmp(chosen, parser)) {
		fprintf(stderr, "FAIL %s: auto chose '%s', expected '%s'\n", log,
			chosen ? chosen : "(none)", parser);
		failed++;
	} else if (expected && strcmp(expected, got_auto)) {
		fprintf(stderr, "FAIL %s --parser auto\n--- expected\n%s--- got\n%s", log, expected,
			got_auto);
		failed++;
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

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	for (size_t p = 0; p < sizeof(parsers) / sizeof(parsers[0]); p++) {
		char *sub = rm_xasprintf("%s/%s", argv[1], parsers[p]);
		DIR *d = opendir(sub);
		struct dirent *e;
		char **names = NULL;
		size_t n = 0, logs = 0;

		while (d && (e = readdir(d))) {
			size_t l = strlen(e->d_name);
			if (l > 4 && !strcmp(e->d_name + l - 4, ".log")) {
				names = rm_strv_push(names, &n, e->d_name);
				logs++;
			}
		}
		if (d)
			closedir(d);
		/* generic: only one public excerpt exists (see docs/parsers.md); at least that. */
		if (logs < (strcmp(parsers[p], "generic") ? 2u : 1u)) {
			fprintf(stderr, "FAIL %s: %zu fixtures, want at least 2 real logs\n", sub,
				logs);
			failed++;
		}
		if (n)
			qsort(names, n, sizeof(*names), cmp);
		for (size_t i = 0; i < n; i++)
			check_fixture(argv[1], parsers[p], names[i]);
		rm_strv_free(names);
		free(sub);
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
