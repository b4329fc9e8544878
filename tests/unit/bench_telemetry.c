/*
 * The sampler's rate alone, without a run: rm_telem_start .. rm_telem_stop for SECONDS over
 * GPUS GPUs, AMD through a sysfs tree (tests/telemetry/fake-gpu-sysfs.sh) and NVIDIA through
 * the nvidia-smi on PATH (tests/telemetry's stand-in in tools/bench.sh), then the readings per
 * second per GPU of each. Goal: >= 10 (RM_TELEM_INTERVAL is 100 ms); the stand-in
 * nvidia-smi's own period is 100 ms plus the processes it starts each time, so its figure
 * reads a little under. The unit tests (tests/unit/test_telemetry.c) used to check a rate
 * like this, in wall time on whatever machine ran them; they now wait for the readings they
 * check. Not a ctest test.
 *
 * Usage: bench_telemetry SECONDS GPUS SYSFS_ROOT
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "rm/context.h"
#include "rm/telemetry.h"
#include "rm/util.h"

static void sleep_s(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Samples for seconds; prints the vendor's rate. -1 when it could not sample. */
static int bench(const rm_telem_opts *o, double seconds)
{
	rm_error err = RM_ERROR_INIT;
	rm_telem *t = NULL;
	rm_telem_summary s;

	if (rm_telem_start(&t, o, &err) < 0) {
		fprintf(stderr, "bench_telemetry: %s: %s\n", o->vendor, err.msg);
		return -1;
	}
	sleep_s(seconds);
	if (rm_telem_stop(t, &s, &err) < 0) {
		fprintf(stderr, "bench_telemetry: %s: %s\n", o->vendor, err.msg);
		return -1;
	}
	printf("sampler alone, %-6s: %zu readings of %zu GPUs in %.2f s = %.1f per second per GPU "
	       "(goal >= 10)\n",
	       o->vendor, s.n_samples, s.n_gpus, s.window_s,
	       s.window_s > 0 && s.n_gpus ? (double)s.n_samples / s.window_s / (double)s.n_gpus
					  : 0.0);
	return 0;
}

int main(int argc, char **argv)
{
	long secs = 0, n = 0;
	rm_error err = RM_ERROR_INIT;
	rm_context ctx;
	long gpus[RM_TELEM_MAX_GPUS];
	int ret = 0;

	if (argc != 4 || rm_parse_long(argv[1], 1, 3600, &secs) < 0 ||
	    rm_parse_long(argv[2], 1, RM_TELEM_MAX_GPUS, &n) < 0) {
		fprintf(stderr, "usage: bench_telemetry SECONDS GPUS SYSFS_ROOT\n");
		return 2;
	}
	for (long i = 0; i < n; i++)
		gpus[i] = i;
	if (rm_context_detect(&ctx, argv[3], 0, &err) < 0) {
		fprintf(stderr, "bench_telemetry: %s\n", err.msg);
		return 1;
	}
	rm_telem_opts amd = {
	    .vendor = "AMD", .sysfs_root = argv[3], .ctx = &ctx, .gpus = gpus, .n_gpus = (size_t)n};
	rm_telem_opts nvidia = {.vendor = "NVIDIA", .gpus = gpus, .n_gpus = (size_t)n};
	ret |= bench(&amd, (double)secs);
	ret |= bench(&nvidia, (double)secs);
	rm_context_release(&ctx);
	return ret ? 1 : 0;
}
