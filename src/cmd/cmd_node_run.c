/*
 * run_models node-run --job FILE --workload KEY (hidden): what each task of a SLURM job runs
 * on its node; see rm_slurm_node_run in rm/launcher.h and docs/scale-out.md. Its exit status is the
 * script's, which srun and sacct report.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "options.h"
#include "rm/launcher.h"

int cmd_node_run(int argc, char **argv, rm_error *err)
{
	struct cli cli;
	struct opt_list pos = {0};
	rm_slurm_node_opts o = {0};
	int rc, md, ret = -1;

	cli_init(&cli);
	rc = opt_parse(CMD_NODE_RUN, &cli, argc, argv, &pos, &md, err);
	if (rc != 0) {
		if (rc == 1) {
			opt_help(stdout, CMD_NODE_RUN,
				 "usage: run_models node-run --job FILE --workload KEY\n"
				 "(run by the batch scripts of a SLURM run, on each node)",
				 md);
			ret = RM_EXIT_OK;
		}
		goto out;
	}
	if (pos.n || !cli.job || !cli.workload) {
		rm_error_set(err, RM_ERR_USAGE, "node-run takes --job FILE --workload KEY");
		goto out;
	}
	o.job_file = cli.job;
	o.workload = cli.workload;
	o.sysfs_root = getenv("RM_SYSFS_ROOT");
	o.dry_run = cli.dry_run;
	rm_signals_install(1);
	ret = rm_slurm_node_run(&o, err);
	if (err->msg[0])
		fprintf(stderr, "run_models: node-run: %s\n", rm_error_text(err));
out:
	cli_release(&cli);
	opt_list_release(&pos);
	return ret;
}
