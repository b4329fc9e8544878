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

/* Two workloads of the launcher under test, and what the test sees of them. */
struct fx {
	rm_model m[2];
	rm_context ctx;
	char *logs, *lf[2], *ll[2];
	struct follow fw;
	rm_workload w[2];
	rm_job_spec spec[2];
	rm_launcher l;
};

static int fx_open(struct fx *f)
{
	rm_error err = RM_ERROR_INIT;
	rm_launcher_config cfg = {.ctx = &f->ctx, .run_id = "R1", .root = tmp};

	memset(f, 0, sizeof(*f));
	f->logs = rm_xasprintf("%s/logs", tmp);
	cfg.log_dir = f->logs;
	rm_mkdirs(f->logs, &err);
	rm_buf_init(&f->fw.out, 1 << 20);
	rm_buf_init(&f->fw.err, 1 << 20);
	f->ctx.obj =
	    json_pack("{s:{s:i, s:s, s:b}}", "slurm", "nodes", 1, "time", "5", "exclusive", 0);
	for (int i = 0; i < 2; i++) {
		f->m[i].name = i ? "m1" : "m0";
		f->lf[i] = rm_xasprintf("%s/m%d.R1.live.log", f->logs, i);
		f->ll[i] = rm_xasprintf("%s/m%d.live.log", f->logs, i);
		f->w[i] = (rm_workload){.model = &f->m[i],
					.model_name = (char *)f->m[i].name,
					.run_id = (char *)"R1",
					.image = (char *)(i ? "img1" : "img0")};
		f->spec[i] = (rm_job_spec){.w = &f->w[i],
					   .name = i ? "run_models-R1-m1-1" : "run_models-R1-m0-0",
					   .log_file = f->lf[i],
					   .log_link = f->ll[i],
					   .on_output = on_output,
					   .poll = poll_queue,
					   .ud = &f->fw};
	}
	CHECK(rm_launcher_open(&f->l, &cfg, &err) == 0);
	CHECK(f->l.ops && !strcmp(f->l.ops->name, "slurm"));
	return f->l.ops ? 0 : -1;
}

static void fx_close(struct fx *f)
{
	rm_launcher_close(&f->l);
	json_decref(f->ctx.obj);
	rm_buf_release(&f->fw.out);
	rm_buf_release(&f->fw.err);
	for (int i = 0; i < 2; i++) {
		free(f->lf[i]);
		free(f->ll[i]);
	}
	free(f->logs);
}

/* One array of both, the job file naming each workload; the perf row's view. */
static void check_submit(struct fx *f)
{
	rm_error err = RM_ERROR_INIT;
	const rm_job_spec *specs[2] = {&f->spec[0], &f->spec[1]};
	rm_launch_desc d = {0};
	char *text;

	f->l.ops->describe(f->l.state, &f->w[0], &d);
	CHECK_STR(d.deployment_type, "slurm");
	CHECK_STR(d.launcher, "torchrun");
	CHECK(d.nnodes == 1);
	put("squeue.out", "41_0|RUNNING|None\n41_1|PENDING|Priority\n", 0644);
	CHECK(f->l.ops->submit_all(f->l.state, specs, 2, &err) == 0);
	text = slurp("submitted.sh");
	CHECK(text && strstr(text, "#SBATCH --array=0-1\n") != NULL);
	CHECK(text && strstr(text, "#SBATCH --comment=run_models.run=R1,host=") != NULL);
	CHECK(text && strstr(text, "rm_models=(m0-0 m1-1)") != NULL);
	free(text);
	text = slurp("logs/R1.job.json");
	CHECK(text && strstr(text, "\"m1-1\"") && strstr(text, "\"image\": \"img1\""));
	free(text);
}

/* Task 0: its output as it comes, until it has left the queue; COMPLETED. */
static void check_completed(struct fx *f)
{
	rm_error err = RM_ERROR_INIT;
	rm_job *job = NULL;
	long status = -2;
	char *link = rm_xasprintf("%s/m0.node0.log", f->logs), target[256] = "";
	ssize_t n;

	CHECK(f->l.ops->start(f->l.state, &f->spec[0], &job, &err) == 0);
	if (!job)
		goto out;
	CHECK(f->l.ops->stream(f->l.state, job, &err) == 0);
	CHECK_STR(rm_buf_str(&f->fw.out), "step 1\nperformance: 5 x\n");
	CHECK_STR(rm_buf_str(&f->fw.err), "a warning\n");
	put("sacct.out", "41_0|COMPLETED|0:0\n41_1|FAILED|3:0\n", 0644);
	put("logs/m0.R1.node0.result.json",
	    "{\"rank\":0,\"exit_code\":0,\"telemetry\":{\"n_gpus\":8,\"n_samples\":80,"
	    "\"window_s\":1.0,\"power_avg_w\":5600.5,\"energy_j\":5600.5,\"throttle_gpu\":2}}",
	    0644);
	CHECK(f->l.ops->wait(f->l.state, job, 5, &status, &err) == 0 && status == 0);
	{ /* what the node sampled, for the perf rows */
		rm_telem_summary ts;
		CHECK(f->l.ops->telemetry(f->l.state, job, &ts) == 0);
		CHECK(ts.n_gpus == 8 && ts.power_avg_w == 5600.5 && ts.throttle_gpu == 2);
	}
	CHECK(f->l.ops->fetch(f->l.state, job, "/x.csv", 1, 10, &err) < 0 &&
	      err.kind == RM_ERR_INPUT);
	CHECK(f->l.ops->cleanup(f->l.state, job, 0, &err) == 0);
	n = readlink(link, target, sizeof(target) - 1);
	CHECK(n > 0 && !strcmp(target, "m0.R1.node0.log"));
out:
	free(link);
}

/* Task 1: FAILED; the rank that failed first comes from the batch log. */
static void check_failed_task(struct fx *f)
{
	rm_error err = RM_ERROR_INIT;
	rm_job *job = NULL;
	long status = -2;
	char *text;

	put("squeue.out", "", 0644);
	put("logs/R1.array1.task1.batch.log", "srun: error: n2: task 0: Exited with exit code 3\n",
	    0644);
	put("logs/m1.R1.node0.result.json",
	    "{\"rank\":0,\"exit_code\":null,\"error\":\"cannot pull 'img1'\",\"results_path\":"
	    "\"/r.csv\",\"results_tar\":\"/nonexistent.tar\"}",
	    0644);
	CHECK(f->l.ops->start(f->l.state, &f->spec[1], &job, &err) == 0);
	if (!job)
		return;
	CHECK(f->l.ops->stream(f->l.state, job, &err) == 0);
	CHECK(f->l.ops->wait(f->l.state, job, 5, &status, &err) == RM_LAUNCH_FAILED);
	{ /* the node sampled nothing */
		rm_telem_summary ts;
		CHECK(f->l.ops->telemetry(f->l.state, job, &ts) < 0);
	}
	CHECK_STR(err.msg, "slurm job 41_1: FAILED (rank 0 on n2 exited with code 3): rank 0: "
			   "cannot pull 'img1'");
	CHECK(status == -1);
	CHECK(f->l.ops->fetch(f->l.state, job, "/r.csv", 1, 10, &err) < 0 && err.kind == RM_ERR_IO);
	CHECK(f->l.ops->stop(f->l.state, job, &err) == 0);
	CHECK(f->l.ops->cleanup(f->l.state, job, 0, &err) == 0);
	text = slurp("scancel.log");
	CHECK(text && strstr(text, "41_1\n") != NULL);
	free(text);
}

/* sweep: the jobs whose comment names this run, and no others. */
static void check_sweep(struct fx *f)
{
	rm_error err = RM_ERROR_INIT;
	char *text;

	put("mine.out", "41|run_models.run=R1,host=h,pid=1,start=2\n42|run_models.run=R2,host=h\n",
	    0644);
	CHECK(f->l.ops->sweep(f->l.state, &err) == 0);
	text = slurp("scancel.log");
	CHECK(text && strstr(text, "\n41\n") != NULL && !strstr(text, "42"));
	free(text);
}

SETUP()
{
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		exit(1);
	}
	put("dummy", "", 0644);
	{
		char *bin = rm_xasprintf("%s/bin", tmp);
		rm_error err = RM_ERROR_INIT;
		rm_mkdirs(bin, &err);
		free(bin);
	}
	stand_ins();
}

TEARDOWN()
{
	char *cmd = rm_xasprintf("rm -rf %s", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmp);
	free(cmd);
}

TEST(launcher)
{
	struct fx f;

	if (fx_open(&f) == 0) {
		check_submit(&f);
		check_completed(&f);
		check_failed_task(&f);
		check_sweep(&f);
	}
	fx_close(&f);
}
