/*
 * What collecting a host's provenance costs (rm/doctor.h rm_doctor_provenance, what a run
 * collects once, in a thread of its own, while its images build): wall time, median of
 * RUNS, for an NVIDIA host (the nvidia-smi on PATH: tests/telemetry's stand-in in
 * tools/bench.sh, whose H100 identity it answers) and an AMD host of GPUS GPUs (a fake sysfs
 * tree, tests/telemetry/fake-gpu-sysfs.sh). The models folder is ROOT (its git commit and
 * status). Not a ctest test: a unit test asserts no speed.
 *
 * Usage: bench_provenance RUNS GPUS SYSFS_ROOT ROOT
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "rm/context.h"
#include "rm/doctor.h"
#include "rm/util.h"

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void bench(const char *what, rm_provenance_opts *po, long runs)
{
	double *t = rm_xcalloc((size_t)runs, sizeof(*t));
	size_t n = 0;

	for (long i = 0; i < runs; i++) {
		double t0 = rm_now();
		json_t *p = rm_doctor_provenance(po);
		t[i] = (rm_now() - t0) * 1000;
		n = json_object_size(json_object_get(p, "host")) +
		    json_object_size(json_object_get(p, "driver and firmware"));
		json_decref(p);
	}
	qsort(t, (size_t)runs, sizeof(*t), cmp);
	printf("host provenance, %-6s: %zu values in %.1f ms (median of %ld; min %.1f, max %.1f)\n",
	       what, n, t[runs / 2], runs, t[0], t[runs - 1]);
	free(t);
}

int main(int argc, char **argv)
{
	long runs = 0, gpus = 0;
	rm_error err = RM_ERROR_INIT;
	rm_context amd, nv = {0};
	rm_provenance_opts po = RM_PROVENANCE_OPTS_INIT;

	if (argc != 5 || rm_parse_long(argv[1], 1, 1000, &runs) < 0 ||
	    rm_parse_long(argv[2], 1, 64, &gpus) < 0) {
		fprintf(stderr, "usage: bench_provenance RUNS GPUS SYSFS_ROOT ROOT\n");
		return 2;
	}
	po.root = argv[4];
	nv.gpu_vendor = "NVIDIA";
	nv.n_gpus = 2;
	po.ctx = &nv;
	bench("NVIDIA", &po, runs);
	if (rm_context_detect(&amd, argv[3], 0, &err) < 0) {
		fprintf(stderr, "bench_provenance: %s\n", err.msg);
		return 1;
	}
	po.ctx = &amd;
	po.sysfs_root = argv[3];
	bench("AMD", &po, runs);
	rm_context_release(&amd);
	return 0;
}
