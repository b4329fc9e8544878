/*
 * Replays a libFuzzer corpus through LLVMFuzzerTestOneInput without libFuzzer, so the normal
 * test run (gcc or clang, with or without sanitizers) exercises every saved input.
 * Usage: replay_<name> DIR|FILE...
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rm/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	size_t cap = 1 << 16, len = 0;
	uint8_t *buf = malloc(cap);
	size_t r;
	while (buf && (r = fread(buf + len, 1, cap - len, f)) > 0) {
		len += r;
		if (len == cap) {
			uint8_t *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	fclose(f);
	if (!buf)
		return -1;
	/* What the code says of a bad input (warnings) is expected: kept from the test output. */
	rm_buf said = RM_BUF_INIT((size_t)1 << 20);
	rm_log_capture(&said);
	LLVMFuzzerTestOneInput(buf, len);
	rm_log_capture(NULL);
	rm_buf_release(&said);
	free(buf);
	return 0;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	int count = 0, bad = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			perror(argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			bad += replay_file(argv[i]) != 0;
			count++;
			continue;
		}
		DIR *d = opendir(argv[i]);
		struct dirent *e;
		char **names = NULL;
		size_t n = 0;
		while (d && (e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			names = realloc(names, (n + 1) * sizeof(*names));
			size_t l = strlen(argv[i]) + strlen(e->d_name) + 2;
			names[n] = malloc(l);
			snprintf(names[n], l, "%s/%s", argv[i], e->d_name);
			n++;
		}
		if (d)
			closedir(d);
		if (n)
			qsort(names, n, sizeof(*names), cmp);
		for (size_t k = 0; k < n; k++) {
			bad += replay_file(names[k]) != 0;
			count++;
			free(names[k]);
		}
		free(names);
	}
	printf("%d passed, %d failed\n", count - bad, bad);
	return count == 0 || bad ? 1 : 0;
}
