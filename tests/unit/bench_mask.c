/*
 * Secret masking throughput: the masker sits on every log stream, so it must keep up with a
 * container that prints fast. SIZE_MB of log lines, each holding a secret and two near
 * misses, fed in 16 KiB pieces (as frames come) through an rm_mask of two secrets; best of
 * REPEAT runs, timed in process CPU time (one core; other work on a shared machine does not
 * count). Goal: >= 100 MB/s. Was a time limit in tests/unit/test_mask.c, where a loaded
 * machine could fail it; the unit test checks what is masked. Not a ctest test:
 * tools/bench-mask.sh drives it.
 *
 * Usage: bench_mask [SIZE_MB] [REPEAT]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rm/util.h"

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void count_out(void *ud, const char *p, size_t n)
{
	(void)p;
	*(size_t *)ud += n;
}

int main(int argc, char **argv)
{
	const char *secrets[] = {"hf_QwErTy0123456789abcdefXYZ", "ghp_0123456789abcdef"};
	const char *line = "step 1234/5000 loss 2.3456 tokens/s 98765.4 hello hf_Qw ghp_ "
			   "hf_QwErTy0123456789abcdefXYZ\n";
	long mb = 200, repeat = 3;
	size_t chunk = 16384, ll = strlen(line);
	double best = -1;

	if ((argc > 1 && rm_parse_long(argv[1], 1, 1L << 14, &mb) < 0) ||
	    (argc > 2 && rm_parse_long(argv[2], 1, 100, &repeat) < 0) || argc > 3) {
		fprintf(stderr, "usage: bench_mask [SIZE_MB] [REPEAT]\n");
		return 2;
	}
	size_t size = (size_t)mb << 20;
	char *text = rm_xmalloc(size);
	for (size_t i = 0; i < size; i++)
		text[i] = line[i % ll];
	for (long r = 0; r < repeat; r++) {
		rm_mask m;
		size_t out = 0;
		double t0 = cpu_now(), secs;

		rm_mask_init(&m, secrets, 2);
		for (size_t off = 0; off < size; off += chunk)
			rm_mask_feed(&m, text + off, size - off < chunk ? size - off : chunk,
				     count_out, &out);
		rm_mask_flush(&m, count_out, &out);
		secs = cpu_now() - t0;
		rm_mask_release(&m);
		/* each full line loses 28 - 3 bytes to the one secret it holds */
		if (out != size - (size / ll) * 25) {
			fprintf(stderr, "bench_mask: %zu bytes out of %zu: the masking is wrong\n",
				out, size);
			free(text);
			return 1;
		}
		if (best < 0 || secs < best)
			best = secs;
	}
	printf("masked %ld MB (two secrets, 16 KiB pieces) in %.3f s of CPU, best of %ld: %.0f "
	       "MB/s (goal >= 100)\n",
	       mb, best, repeat, best > 0 ? (double)mb / best : 0.0);
	free(text);
	return 0;
}
