/*
 * Parser throughput: runs rm_parse_file (read, split into lines, parse, no output) over a
 * file and prints MB/s on one core. Not a ctest test; tools/bench-parsers.sh drives it.
 * Usage: bench_parsers PARSER FILE [REPEAT]   (prints "PARSER MB/s seconds bytes")
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include "rm/parse_file.h"
#include "rm/util.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct stat st;
	rm_error err = RM_ERROR_INIT;
	double best = 0;
	long repeat = 3;

	if (argc < 3 || stat(argv[2], &st) != 0) {
		fprintf(stderr, "usage: %s PARSER FILE [REPEAT]\n", argv[0]);
		return 2;
	}
	if (argc > 3 && rm_parse_long(argv[3], 1, 100, &repeat) < 0)
		return 2;
	/* Best of `repeat` runs: the file is in the page cache after the first. */
	for (long i = 0; i < repeat; i++) {
		double t0 = now(), dt;
		int rc = rm_parse_file(argv[2], argv[1], NULL, NULL, RM_PARSE_CSV, NULL, &err);
		dt = now() - t0;
		if (rc < 0) {
			fprintf(stderr, "%s\n", err.msg);
			return 1;
		}
		if (rc == 1)
			fprintf(stderr, "warning: %s found nothing in %s\n", argv[1], argv[2]);
		if (dt > 0 && (double)st.st_size / dt > best)
			best = (double)st.st_size / dt;
	}
	printf("%s %.1f %.3f %lld\n", argv[1], best / 1e6, (double)st.st_size / best,
	       (long long)st.st_size);
	return 0;
}
