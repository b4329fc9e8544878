/*
 * Parser throughput, driven by the parser table: for every parser of rm_parsers[] except
 * "auto", the largest golden fixture of DIR/<parser>/ is repeated into a temporary log of
 * about SIZE_MB, which is then parsed (read + split into lines + parse, no output, one core,
 * best of REPEAT runs, timed in process CPU time) by that parser and by "auto". Prints one row per
 * parser and the peak RSS of the process, which must not grow with SIZE_MB (tools/bench-parsers.sh
 * runs two sizes). Not a ctest test.
 *
 * Usage: bench_parsers DIR [SIZE_MB] [REPEAT]
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rm/parser.h"
#include "rm/util.h"

/* CPU time of this process (user + system): the cost on one core, not disturbed by other
 * work on a shared machine the way wall time is. */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The largest *.log of dir, or NULL. */
static char *largest_fixture(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char *best = NULL;
	long long best_size = -1;

	while (d && (e = readdir(d))) {
		size_t l = strlen(e->d_name);
		char *path;
		struct stat st;
		if (l <= 4 || strcmp(e->d_name + l - 4, ".log"))
			continue;
		path = rm_xasprintf("%s/%s", dir, e->d_name);
		if (stat(path, &st) == 0 && (long long)st.st_size > best_size) {
			best_size = (long long)st.st_size;
			free(best);
			best = path;
		} else {
			free(path);
		}
	}
	if (d)
		closedir(d);
	return best;
}

/* Writes src repeated to at least size bytes into a new temporary file; returns its path. */
static char *make_big(const char *src, long long size, rm_error *err)
{
	char *data = NULL, *path = rm_xasprintf("%s/bench_parsers_XXXXXX",
						getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	size_t len = 0;
	long long written = 0;
	int fd;

	if (rm_read_file(src, 1 << 24, &data, &len, err) < 0 || len == 0) {
		free(path);
		free(data);
		return NULL;
	}
	fd = mkstemp(path);
	while (fd >= 0 && written < size) {
		if (rm_write_all(fd, data, len) < 0)
			break;
		written += (long long)len;
	}
	if (fd >= 0)
		close(fd);
	free(data);
	if (fd < 0 || written < size) {
		unlink(path);
		free(path);
		rm_error_set(err, RM_ERR_IO, "cannot write a temporary log");
		return NULL;
	}
	return path;
}

/* Best MB/s of `repeat` runs of parser over path (the file is in the page cache after the
 * first); -1 on error. */
static double measure(const char *parser, const char *path, long long size, long repeat)
{
	double best = 0;
	rm_error err = RM_ERROR_INIT;

	for (long i = 0; i < repeat; i++) {
		double t0 = now(), dt;
		int rc = rm_parse_file(path, parser, NULL, NULL, RM_PARSE_CSV, NULL, &err);
		dt = now() - t0;
		if (rc < 0) {
			fprintf(stderr, "%s\n", err.msg);
			return -1;
		}
		if (rc == 1)
			fprintf(stderr, "warning: %s found no figure in %s\n", parser, path);
		if (dt > 0 && (double)size / dt > best)
			best = (double)size / dt;
	}
	return best / 1e6;
}

int main(int argc, char **argv)
{
	long size_mb = 128, repeat = 3;
	int rc = 0;

	if (argc < 2 || (argc > 2 && rm_parse_long(argv[2], 1, 100000, &size_mb) < 0) ||
	    (argc > 3 && rm_parse_long(argv[3], 1, 100, &repeat) < 0)) {
		fprintf(stderr, "usage: %s DIR [SIZE_MB] [REPEAT]\n", argv[0]);
		return 2;
	}
	printf("%-12s %-52s %8s %9s %9s\n", "parser", "log (repeated fixture)", "MB", "MB/s",
	       "auto MB/s");
	for (size_t i = 0; rm_parsers[i]; i++) {
		const char *name = rm_parsers[i]->name;
		char *dir, *fixture, *big;
		rm_error err = RM_ERROR_INIT;
		struct stat st;
		double mbs, auto_mbs;

		if (!strcmp(name, "auto"))
			continue;
		dir = rm_xasprintf("%s/%s", argv[1], name);
		fixture = largest_fixture(dir);
		big = fixture ? make_big(fixture, (long long)size_mb << 20, &err) : NULL;
		if (!big || stat(big, &st) != 0) {
			fprintf(stderr, "%s: no fixture to repeat in %s %s\n", name, dir, err.msg);
			rc = 1;
		} else {
			mbs = measure(name, big, (long long)st.st_size, repeat);
			auto_mbs = measure("auto", big, (long long)st.st_size, repeat);
			printf("%-12s %-52s %8.1f %9.1f %9.1f\n", name,
			       fixture + strlen(argv[1]) + 1, (double)st.st_size / 1e6, mbs,
			       auto_mbs);
			if (mbs < 0 || auto_mbs < 0)
				rc = 1;
			unlink(big);
		}
		free(big);
		free(fixture);
		free(dir);
	}
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		printf("peak RSS %ld KiB for %ld MB logs\n", ru.ru_maxrss, size_mb);
	return rc;
}
