/*
 * The SLURM commands from C (src/launcher/slurm_cmd.c) on the REAL test cluster: submit a
 * generated two-node script, see it queued and running, see rank 0's first line, cancel it,
 * see it leave the queue and end CANCELLED; an array of three ending COMPLETED; sbatch
 * refusing a partition; a job id nobody knows. With SLURM_TEST_DBD=0 (no accounting) the
 * final states must come from scontrol instead of sacct.
 *
 * Run by tests/scaleout/slurm_live.sh (case c_api), which starts the cluster and exports
 * SLURM_CONF. Usage: live_slurm LOG_DIR WORKDIR NODE_TASK IMAGE
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "../../src/launcher/slurm.h"
#include "check.h"
#include "rm/util.h"

static const char *log_dir, *workdir, *task, *image;

static int write_script(const char *ctx_text, const rm_slurm_task *tasks, size_t n,
			const char *steps, const char *path)
{
	rm_error err = RM_ERROR_INIT;
	rm_slurm_conf sc;
	rm_dist_conf dc;
	int present, ret = -1, fd;
	char *s = NULL,
	     *batch_log = rm_xasprintf("%s/%s.%%j.batch.log", log_dir, tasks[0].log_base);
	char *argv[] = {(char *)task, (char *)image, (char *)RM_SLURM_MODEL_WORD, (char *)steps,
			NULL};
	json_t *ctx = json_loads(ctx_text, 0, NULL);

	if (rm_slurm_conf_parse(ctx, &sc, &dc, &present, &err) < 0) {
		fprintf(stderr, "conf: %s\n", err.msg);
		goto out;
	}
	rm_slurm_job job = {.job_name = "rm-live",
			    .log_dir = log_dir,
			    .workdir = workdir,
			    .batch_log = batch_log,
			    .sc = &sc,
			    .dc = &dc,
			    .gpus_per_node = 0,
			    .tasks = tasks,
			    .n_tasks = n,
			    .task_argv = argv};
	if (rm_slurm_script(&job, &s, &err) < 0) {
		fprintf(stderr, "script: %s\n", err.msg);
		goto out;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ret = fd >= 0 && rm_write_all(fd, s, strlen(s)) == 0 ? 0 : -1;
	if (fd >= 0)
		close(fd);
out:
	rm_slurm_conf_release(&sc);
	rm_dist_conf_release(&dc);
	json_decref(ctx);
	free(batch_log);
	free(s);
	return ret;
}

/* Polls rm_slurm_final until n entries are final (at most 20 s). */
static rm_slurm_job_state *final_states(long id, size_t want, size_t *n, const char **source)
{
	rm_error err = RM_ERROR_INIT;
	rm_slurm_job_state *v = NULL;
	double until = rm_now() + 20;

	while (rm_now() < until) {
		size_t done = 0;
		free(v);
		v = NULL;
		if (rm_slurm_final(id, &v, n, source, &err) < 0) {
			fprintf(stderr, "final: %s\n", err.msg);
			return NULL;
		}
		for (size_t i = 0; i < *n; i++)
			done += rm_slurm_state_final(v[i].state);
		if (*n >= want && done == *n)
			return v;
		usleep(200000);
	}
	return v;
}

static int wait_queue_empty(long id, double seconds)
{
	rm_error err = RM_ERROR_INIT;
	rm_slurm_job_state *v = NULL;
	size_t n = 1;
	double until = rm_now() + seconds;

	while (n && rm_now() < until) {
		free(v);
		v = NULL;
		if (rm_slurm_queue(id, &v, &n, &err) < 0) {
			fprintf(stderr, "queue: %s\n", err.msg);
			return -1;
		}
		if (n)
			usleep(100000);
	}
	free(v);
	return n ? -1 : 0;
}

int main(int argc, char **argv)
{
	rm_error err = RM_ERROR_INIT;
	const char *want_source = getenv("SLURM_TEST_DBD") && !strcmp(getenv("SLURM_TEST_DBD"), "0")
				      ? "scontrol"
				      : "sacct";
	const char *source = NULL;
	rm_slurm_job_state *v = NULL;
	size_t n = 0;
	long id = 0;
	char reason[256];

	if (argc != 5) {
		fprintf(stderr, "usage: %s LOG_DIR WORKDIR NODE_TASK IMAGE\n", argv[0]);
		return 2;
	}
	log_dir = argv[1];
	workdir = argv[2];
	task = argv[3];
	image = argv[4];
	char *script = rm_xasprintf("%s/live.sbatch", log_dir);
	char *log0 = rm_xasprintf("%s/live_two.node0.log", log_dir);

	/* A two-node job: queued, running, rank 0 prints, cancelled, gone, CANCELLED. */
	rm_slurm_task two[] = {{"live_two", "live_two"}};
	CHECK(write_script("{\"slurm\": {\"nodes\": 2, \"exclusive\": false, \"time\": \"5\"}}",
			   two, 1, "60", script) == 0);
	double t0 = rm_now(), t_run = 0, t_line = 0;
	if (rm_slurm_submit(script, &id, &err) < 0) {
		fprintf(stderr, "submit: %s\n", err.msg);
		CHECK(0);
		goto out;
	}
	double t_sub = rm_now() - t0;
	while (rm_now() - t0 < 30 && (!t_run || !t_line)) {
		if (!t_run) {
			CHECK(rm_slurm_queue(id, &v, &n, &err) == 0);
			if (n == 1 && v[0].state == RM_SLURM_RUNNING)
				t_run = rm_now() - t0;
			CHECK(n == 1 && v[0].job_id == id && v[0].array_task == -1);
			free(v);
			v = NULL;
		}
		if (!t_line && access(log0, R_OK) == 0) {
			char *text = NULL;
			if (rm_read_file(log0, 1 << 20, &text, NULL, &err) == 0 &&
			    strchr(text, '\n'))
				t_line = rm_now() - t0;
			free(text);
		}
		usleep(20000);
	}
	CHECK(t_run > 0 && t_line > 0);
	printf("submitted in %.2f s; RUNNING at %.2f s; rank 0's first line at %.2f s\n", t_sub,
	       t_run, t_line);
	double tc = rm_now();
	CHECK(rm_slurm_cancel(id, -1, &err) == 0);
	CHECK(wait_queue_empty(id, 30) == 0);
	printf("cancelled: out of the queue %.2f s after scancel\n", rm_now() - tc);
	v = final_states(id, 1, &n, &source);
	CHECK(v && n == 1 && v[0].state == RM_SLURM_CANCELLED);
	CHECK_STR(source, want_source);
	if (v && n) {
		rm_slurm_reason(&v[0], reason, sizeof(reason));
		printf("final (%s): %s\n", source, reason);
	}
	free(v);
	v = NULL;
	CHECK(rm_slurm_cancel(id, -1, &err) == 0); /* gone already: fine */

	/* An array of three: every task COMPLETED. */
	rm_slurm_task three[] = {{"live_a", "live_a"}, {"live_b", "live_b"}, {"live_c", "live_c"}};
	CHECK(write_script("{\"slurm\": {\"exclusive\": false, \"time\": \"5\"}}", three, 3, "1",
			   script) == 0);
	t0 = rm_now();
	CHECK(rm_slurm_submit(script, &id, &err) == 0);
	CHECK(wait_queue_empty(id, 60) == 0);
	v = final_states(id, 3, &n, &source);
	printf("array of 3: out of the queue and final in %.2f s\n", rm_now() - t0);
	CHECK(v && n == 3);
	int seen[3] = {0, 0, 0};
	for (size_t i = 0; v && i < n; i++) {
		/* In the command's order: sacct's ascending, scontrol's not. */
		CHECK(v[i].job_id == id && v[i].array_task >= 0 && v[i].array_task < 3);
		if (v[i].array_task >= 0 && v[i].array_task < 3)
			seen[v[i].array_task]++;
		CHECK(v[i].state == RM_SLURM_COMPLETED);
	}
	CHECK(seen[0] == 1 && seen[1] == 1 && seen[2] == 1);
	free(v);
	v = NULL;

	/* sbatch refuses: its own words reach the message. */
	CHECK(
	    write_script("{\"slurm\": {\"partition\": \"rm-no-such-partition\", \"time\": \"5\"}}",
			 two, 1, "1", script) == 0);
	CHECK(rm_slurm_submit(script, &id, &err) < 0);
	CHECK(err.kind == RM_ERR_INPUT && strstr(err.msg, "sbatch '") &&
	      strstr(err.msg, "partition"));
	printf("refused: %s\n", err.msg);

	/* A job id nobody knows: not queued. */
	CHECK(rm_slurm_queue(987654, &v, &n, &err) == 0 && n == 0 && v == NULL);
out:
	free(script);
	free(log0);
	return check_summary();
}
