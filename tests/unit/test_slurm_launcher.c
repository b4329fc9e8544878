/*
 * The SLURM launcher's ops without a cluster: stand-in sbatch, squeue, sacct and scancel on
 * PATH (shell scripts answering from files the test writes), the node logs and result
 * files written as node-run would. Covers submit_all (the job file, one array, the comment),
 * start, stream (rank 0's log followed until the task leaves the queue), wait (COMPLETED;
 * FAILED with the rank from the batch log), fetch, stop, sweep and describe. The real
 * cluster is tests/scaleout/cli_slurm.sh; this one runs under valgrind and ASan.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "check.h"
#include "rm/frame.h"
#include "rm/launcher.h"
#include "rm/util.h"

static char tmp[] = "/tmp/rm-test-slurm-launcher-XXXXXX";

static void put(const char *name, const char *text, int mode)
{
	char *p = rm_xasprintf("%s/%s", tmp, name);
	FILE *f = fopen(p, "w");
	fputs(text, f);
	fclose(f);
	chmod(p, (mode_t)mode);
	free(p);
}

static char *slurp(const char *name)
{
	char *p = rm_xasprintf("%s/%s", tmp, name), *text = NULL;
	rm_error err = RM_ERROR_INIT;
	rm_read_file(p, 1 << 20, &text, NULL, &err);
	free(p);
	return text;
}

static void stand_ins(void)
{
	char *d = tmp;
	char *sbatch = rm_xasprintf("#!/bin/sh\ncp \"$2\" %s/submitted.sh\necho 41\n", d);
	char *squeue = rm_xasprintf("#!/bin/sh\ncase \"$*\" in *' -u '*) cat %s/mine.out ;; "
				    "*) cat %s/squeue.out ;; esac\n",
				    d, d);
	char *sacct = rm_xasprintf("#!/bin/sh\ncat %s/sacct.out\n", d);
	char *scancel = rm_xasprintf("#!/bin/sh\necho \"$*\" >>%s/scancel.log\n", d);
	char *path = rm_xasprintf("%s/bin:%s", d, getenv("PATH"));

	put("bin/sbatch", sbatch, 0755);
	put("bin/squeue", squeue, 0755);
	put("bin/sacct", sacct, 0755);
	put("bin/scancel", scancel, 0755);
	put("mine.out", "", 0644);
	put("scancel.log", "", 0644);
	setenv("PATH", path, 1);
	unsetenv("SLURM_JOB_ID");
	free(sbatch);
	free(squeue);
	free(sacct);
	free(scancel);
	free(path);
}

/* What the test sees of a workload's output, and the queue it changes as stream polls. */
struct follow {
	rm_buf out, err;
	int polls;
};

static void on_output(void *ud, int stream, const char *data, size_t len)
{
	struct follow *f = ud;
	rm_buf_add(stream == RM_STREAM_STDOUT ? &f->out : &f->err, data, len);
}

static int poll_queue(void *ud)
{
	struct follow *f = ud;
	if (++f->polls == 2) {
		put("logs/m0.R1.node0.log", "step 1\nperformance: 5 x\n", 0644);
		put("logs/m0.R1.node0.err", "a warning\n", 0644);
	}
	if (f->polls == 4)
		put("squeue.out", "41_1|PENDING|Priority\n", 0644); /* task 0 has left */
	return f->polls > 400;					    /* a stream that never ends */
}

static void test_launcher(void)
{
	rm_error err = RM_ERROR_INIT;
	rm_model m0 = {.name = "m0"}, m1 = {.name = "m1"};
	rm_context ctx = {0};
	char *logs = rm_xasprintf("%s/logs", tmp), *text;
	char *lf[2] = {rm_xasprintf("%s/m0.R1.live.log", logs),
		       rm_xasprintf("%s/m1.R1.live.log", logs)};
	char *ll[2] = {rm_xasprintf("%s/m0.live.log", logs), rm_xasprintf("%s/m1.live.log", logs)};
	struct follow fw = {RM_BUF_INIT(1 << 20), RM_BUF_INIT(1 << 20), 0};
	rm_spec_in in[2] = {{.model = &m0, .ctx = &ctx, .image = "img0", .run_id = "R1"},
			    {.model = &m1, .ctx = &ctx, .image = "img1", .run_id = "R1"}};
	rm_job_spec spec[2] = {{.in = &in[0],
				.name = "run_models-R1-m0-0",
				.log_file = lf[0],
				.log_link = ll[0],
				.on_output = on_output,
				.poll = poll_queue,
				.ud = &fw},
			       {.in = &in[1],
				.name = "run_models-R1-m1-1",
				.log_file = lf[1],
				.log_link = ll[1],
				.on_output = on_output,
				.poll = poll_queue,
				.ud = &fw}};
	const rm_job_spec *specs[2] = {&spec[0], &spec[1]};
	rm_launcher_config cfg = {.ctx = &ctx, .run_id = "R1", .root = tmp, .log_dir = logs};
	rm_launcher l = {0};
	rm_launch_desc d = {0};
	rm_job *job = NULL;
	long status = -2;

	ctx.obj =
	    json_pack("{s:{s:i, s:s, s:b}}", "slurm", "nodes", 1, "time", "5", "exclusive", 0);
	rm_mkdirs(logs, &err);
	CHECK(rm_launcher_open(&l, &cfg, &err) == 0);
	CHECK(l.ops && !strcmp(l.ops->name, "slurm"));
	if (!l.ops)
		goto out;
	l.ops->describe(l.state, &in[0], &d);
	CHECK_STR(d.deployment_type, "slurm");
	CHECK_STR(d.launcher, "torchrun");
	CHECK(d.nnodes == 1);

	/* one array of both, the job file naming each workload */
	put("squeue.out", "41_0|RUNNING|None\n41_1|PENDING|Priority\n", 0644);
	CHECK(l.ops->submit_all(l.state, specs, 2, &err) == 0);
	text = slurp("submitted.sh");
	CHECK(text && strstr(text, "#SBATCH --array=0-1\n") != NULL);
	CHECK(text && strstr(text, "#SBATCH --comment=run_models.run=R1,host=") != NULL);
	CHECK(text && strstr(text, "rm_models=(m0-0 m1-1)") != NULL);
	free(text);
	text = slurp("logs/R1.job.json");
	CHECK(text && strstr(text, "\"m1-1\"") && strstr(text, "\"image\": \"img1\""));
	free(text);

	/* task 0: its output as it comes, until it has left the queue; COMPLETED */
	CHECK(l.ops->start(l.state, &spec[0], &job, &err) == 0);
	CHECK(l.ops->stream(l.state, job, &err) == 0);
	CHECK_STR(rm_buf_str(&fw.out), "step 1\nperformance: 5 x\n");
	CHECK_STR(rm_buf_str(&fw.err), "a warning\n");
	put("sacct.out", "41_0|COMPLETED|0:0\n41_1|FAILED|3:0\n", 0644);
	put("logs/m0.R1.node0.result.json", "{\"rank\":0,\"exit_code\":0}", 0644);
	CHECK(l.ops->wait(l.state, job, 5, &status, &err) == 0 && status == 0);
	CHECK(l.ops->fetch(l.state, job, "/x.csv", 1, 10, &err) < 0 && err.kind == RM_ERR_INPUT);
	CHECK(l.ops->cleanup(l.state, job, 0, &err) == 0);
	char *link = rm_xasprintf("%s/m0.node0.log", logs), target[256] = "";
	ssize_t n = readlink(link, target, sizeof(target) - 1);
	CHECK(n > 0 && !strcmp(target, "m0.R1.node0.log"));
	free(link);

	/* task 1: FAILED; the rank that failed first comes from the batch log */
	put("squeue.out", "", 0644);
	put("logs/R1.array1.task1.batch.log", "srun: error: n2: task 0: Exited with exit code 3\n",
	    0644);
	put("logs/m1.R1.node0.result.json",
	    "{\"rank\":0,\"exit_code\":null,\"error\":\"cannot pull 'img1'\",\"results_path\":"
	    "\"/r.csv\",\"results_tar\":\"/nonexistent.tar\"}",
	    0644);
	CHECK(l.ops->start(l.state, &spec[1], &job, &err) == 0);
	CHECK(l.ops->stream(l.state, job, &err) == 0);
	CHECK(l.ops->wait(l.state, job, 5, &status, &err) == RM_LAUNCH_FAILED);
	CHECK_STR(err.msg, "slurm job 41_1: FAILED (rank 0 on n2 exited with code 3): rank 0: "
			   "cannot pull 'img1'");
	CHECK(status == -1);
	CHECK(l.ops->fetch(l.state, job, "/r.csv", 1, 10, &err) < 0 && err.kind == RM_ERR_IO);
	CHECK(l.ops->stop(l.state, job, &err) == 0);
	CHECK(l.ops->cleanup(l.state, job, 0, &err) == 0);
	text = slurp("scancel.log");
	CHECK(text && strstr(text, "41_1\n") != NULL);
	free(text);

	/* sweep: the jobs whose comment names this run */
	put("mine.out", "41|run_models.run=R1,host=h,pid=1,start=2\n42|run_models.run=R2,host=h\n",
	    0644);
	CHECK(l.ops->sweep(l.state, &err) == 0);
	text = slurp("scancel.log");
	CHECK(text && strstr(text, "\n41\n") != NULL && !strstr(text, "42"));
	free(text);
out:
	rm_launcher_close(&l);
	json_decref(ctx.obj);
	rm_buf_release(&fw.out);
	rm_buf_release(&fw.err);
	for (int i = 0; i < 2; i++) {
		free(lf[i]);
		free(ll[i]);
	}
	free(logs);
}

int main(void)
{
	if (!mkdtemp(tmp))
		return 1;
	put("dummy", "", 0644);
	{
		char *bin = rm_xasprintf("%s/bin", tmp);
		rm_error err = RM_ERROR_INIT;
		rm_mkdirs(bin, &err);
		free(bin);
	}
	stand_ins();
	test_launcher();
	char *cmd = rm_xasprintf("rm -rf %s", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmp);
	free(cmd);
	return check_summary();
}
