/*
 * run_models doctor [--gpus] [--format text|json]: checks this host before benchmarking
 * (NUMA balancing, the Docker engine, GPUs and their device nodes, /dev/shm, free disk,
 * ROCm and CUDA); with --gpus the pre-flight check of every GPU instead (rm/doctor.h). Exit
 * code 0 when no finding is FAIL, 1 otherwise (docs/doctor.md).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "options.h"
#include "rm/context.h"
#include "rm/doctor.h"
#include "rm/launcher.h"
#include "rm/util.h"

/* The command with its host paths and output stream given, so that tests can point it at
 * fake /proc, /sys and /dev trees. */
static int doctor_main(int argc, char **argv, const rm_doctor_opts *o, FILE *out, rm_error *err)
{
	struct cli cli;
	struct opt_list pos = {0};
	rm_finding *v = NULL;
	size_t n = 0, n_fail = 0, n_warn = 0;
	int rc, md, json, ret = -1;

	cli_init(&cli);
	rc = opt_parse(CMD_DOCTOR, &cli, argc, argv, &pos, &md, err);
	if (rc != 0) {
		if (rc == 1) {
			opt_help(out, CMD_DOCTOR,
				 "usage: run_models doctor [--gpus] [--format text|json]", md);
			ret = RM_EXIT_OK;
		}
		goto out;
	}
	if (pos.n) {
		rm_error_set(err, RM_ERR_USAGE, "unexpected argument '%s'", pos.v[0]);
		goto out;
	}
	json = cli.format == FORMAT_JSON;

	if (cli.gpus) {
		/* the pre-flight check of every GPU, as a run makes it before each model */
		rm_context ctx;
		rm_preflight_opts po = RM_PREFLIGHT_OPTS_INIT;
		if (rm_context_detect(&ctx, o->sysfs_root, o->use_tools, err) < 0)
			goto out;
		po.ctx = &ctx;
		po.sysfs_root = o->sysfs_root;
		po.proc_root = o->proc_root;
		if (!ctx.gpu_vendor)
			rm_findings_add(&v, &n, RM_FINDING_WARN, "preflight",
					rm_xstrdup("no GPU on this host: nothing to check"), NULL);
		else
			rm_doctor_preflight(&po, &v, &n);
		rm_context_release(&ctx);
	} else {
		rm_doctor_collect(o, &v, &n);
	}
	for (size_t i = 0; i < n; i++) {
		n_fail += v[i].status == RM_FINDING_FAIL;
		n_warn += v[i].status == RM_FINDING_WARN;
	}
	if (json) {
		char *s = rm_doctor_json(v, n);
		fprintf(out, "%s\n", s);
		free(s);
	} else {
		rm_doctor_print(out, v, n);
		fprintf(out, "\n%zu FAIL, %zu WARN%s\n", n_fail, n_warn,
			n_fail ? ": fix the FAIL findings before benchmarking" : "");
	}
	fflush(out);
	ret = n_fail ? 1 : RM_EXIT_OK;
out:
	rm_findings_free(v, n);
	cli_release(&cli);
	opt_list_release(&pos);
	return ret;
}

int cmd_doctor(int argc, char **argv, rm_error *err)
{
	rm_doctor_opts o = RM_DOCTOR_OPTS_INIT;
	const char *sysfs = getenv("RM_SYSFS_ROOT"), *dev = getenv("RM_DEV_ROOT");

	/* Same override as run and list, so integration tests can fake a GPU host (and a /dev
	 * without fuse, as docker_device_root does for a run). */
	if (sysfs && *sysfs)
		o.sysfs_root = sysfs;
	if (dev && *dev)
		o.dev_root = dev;
	o.backends = rm_launcher_probe_all;
	/* A Ctrl-C stops a tool that hangs (and every one after it) at once: doctor then prints
	 * what it found and exits 128 + N. */
	rm_signals_install(0);
	int ret = doctor_main(argc, argv, &o, stdout, err);
	return rm_signal_received() ? 128 + rm_signal_received() : ret;
}
