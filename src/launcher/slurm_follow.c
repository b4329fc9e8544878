/*
 * Following a submitted workload (see slurm_launcher.h): rank 0's .log and .err read as they
 * grow and handed on as the workload's stdout and stderr; the queue asked every second (every
 * quarter second at first) until the job or array task has left it; then the final state
 * (sacct, scontrol without accounting) and rank 0's result file give the verdict.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "slurm_launcher.h"
#include "rm/util.h"

#define READ_CHUNK	  65536
#define QUICK_CHECKS_FOR  3.0	/* seconds after start with frequent queue checks */
#define QUICK_CHECK_EVERY 0.25	/* seconds */
#define CHECK_EVERY	  1.0	/* seconds */
#define QUEUE_LOST_AFTER  120.0 /* seconds of failing squeue calls before giving up */
#define FINAL_WAIT	  30.0	/* seconds for sacct to list a job that has left the queue */
#define RESULT_MAX	  ((size_t)1 << 20)

void rm_launcher__slurm_nap(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	nanosleep(&ts, NULL); /* a signal ends it early */
}

static void id_text(const rm_job *job, char *buf, size_t size)
{
	if (job->pid > 0)
		snprintf(buf, size, "allocation %ld", job->sl->alloc);
	else if (job->sub.task >= 0)
		snprintf(buf, size, "slurm job %ld_%ld", job->sub.job_id, job->sub.task);
	else
		snprintf(buf, size, "slurm job %ld", job->sub.job_id);
}

/* Why the job failed: SLURM's account of it, else what the local command (srun, bash)
 * exited with. */
static void exit_reason(const rm_job *job, const rm_slurm_job_state *js, const char *cmd, char *why,
			size_t size)
{
	char id[64];

	if (js) {
		rm_slurm_reason(js, why, size);
		return;
	}
	id_text(job, id, sizeof(id));
	snprintf(why, size, "%s: %s exited with code %d", id, cmd,
		 WIFEXITED(job->wstatus) ? WEXITSTATUS(job->wstatus) : 128);
}

/* Our entry of a queue listing, or NULL when it is not there (it has left the queue). */
static const rm_slurm_job_state *ours(const rm_job *job, const rm_slurm_job_state *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].array_task == job->sub.task &&
		    (job->sub.task < 0 || v[i].job_id == job->sub.job_id))
			return &v[i];
	return NULL;
}

/* A change of state or pending reason, shown as it happens. */
static int queue_state(rm_job *job, const rm_slurm_job_state *js, rm_error *err)
{
	char id[64];

	id_text(job, id, sizeof(id));
	if (js->state != job->state || strcmp(js->reason, job->reason) != 0) {
		job->state = js->state;
		snprintf(job->reason, sizeof(job->reason), "%s", js->reason);
		if (js->state == RM_SLURM_PENDING && js->reason[0] && strcmp(js->reason, "None"))
			rm_info("%s: PENDING (%s)", id, js->reason);
		else
			rm_info("%s: %s", id, rm_slurm_state_name(js->state));
	}
	if (js->state == RM_SLURM_PENDING && rm_slurm_pending_hopeless(js->reason)) {
		rm_error cerr = RM_ERROR_INIT;
		rm_slurm_cancel(job->sub.job_id, job->sub.task, &cerr);
		job->stopped = 1;
		return rm_error_set(err, RM_ERR_INPUT,
				    "%s stayed PENDING with reason %s, which does not clear by "
				    "itself (the request exceeds what the partition or account "
				    "allows): cancelled",
				    id, js->reason);
	}
	return 0;
}

/* rank R's result file (node-run), or NULL. */
static json_t *result(const rm_job *job, long rank)
{
	char *p = rm_xasprintf("%s.node%ld.result.json", job->sub.log_base, rank), *text = NULL;
	rm_error err = RM_ERROR_INIT;
	json_t *doc = NULL;

	if (rm_read_file(p, RESULT_MAX, &text, NULL, &err) == 0)
		doc = json_loads(text, 0, NULL);
	free(text);
	free(p);
	return doc;
}

int rm_launcher__slurm_telemetry(void *state, rm_job *job, rm_telem_summary *out)
{
	int any = 0;

	(void)state;
	rm_telem_summary_none(out);
	if (job->sub.card)
		return -1; /* no runner of ours on the nodes: nothing sampled there */
	for (long r = 0; r < job->sub.nodes; r++) {
		json_t *res = result(job, r), *t = json_object_get(res, "telemetry");
		rm_telem_summary s;
		if (json_is_object(t)) {
			rm_telem_summary_from_json(t, &s);
			if (any)
				rm_telem_summary_merge(out, &s);
			else
				*out = s;
			any = 1;
		}
		json_decref(res);
	}
	return any ? 0 : -1;
}

int rm_launcher__slurm_provenance(void *state, rm_job *job, json_t **out)
{
	(void)state;
	*out = json_object();
	for (long r = 0; r < job->sl->sc.nodes && r < 1024; r++) {
		json_t *res = result(job, r), *p = json_object_get(res, "provenance");
		if (json_is_object(p)) {
			const char *node = json_string_value(json_object_get(res, "node"));
			char *key = rm_xasprintf("node%ld %s", r, node ? node : "?");
			json_object_set(*out, key, p);
			free(key);
		}
		json_decref(res);
	}
	if (json_object_size(*out))
		return 0;
	json_decref(*out);
	*out = NULL;
	return -1;
}

/* Whether every rank's runner has written its result file (they write it last). */
static int all_results(const rm_job *job)
{
	for (long r = 0; r < job->sub.nodes; r++) {
		char *p = rm_xasprintf("%s.node%ld.result.json", job->sub.log_base, r);
		int there = access(p, F_OK) == 0;
		free(p);
		if (!there)
			return 0;
	}
	return 1;
}

int rm_launcher__slurm_check(rm_job *job, rm_error *err)
{
	rm_slurm_job_state *v = NULL;
	size_t n = 0;
	const rm_slurm_job_state *js;
	int ret = 0;

	if (job->pid > 0) {
		if (!job->reaped && waitpid(job->pid, &job->wstatus, WNOHANG) == job->pid)
			job->reaped = 1;
		job->queued = !job->reaped;
		return 0;
	}
	if (!job->sub.job_id) {
		job->queued = 0;
		return 0;
	}
	if (rm_slurm_queue(job->sub.job_id, &v, &n, err) < 0) {
		/* slurmctld may be restarting (a failing squeue takes ~10 s): meanwhile every
		 * rank's result file says the job has ended. */
		if (!job->queue_lost)
			job->queue_lost = rm_now();
		if (all_results(job)) {
			job->queued = 0;
			job->no_controller = 1;
			return 0;
		}
		return rm_now() - job->queue_lost > QUEUE_LOST_AFTER ? -1 : 0;
	}
	job->queue_lost = 0;
	js = ours(job, v, n);
	job->queued = js != NULL;
	if (js)
		ret = queue_state(job, js, err);
	free(v);
	return ret;
}

/* Reads what rank 0's files hold beyond what was read; the number of bytes read. */
static size_t drain(rm_job *job)
{
	static const char *const ext[2] = {"log", "err"};
	const rm_job_spec *s = job->spec;
	char buf[READ_CHUNK];
	size_t total = 0;

	for (int i = 0; i < (job->sub.card ? 1 : 2); i++) {
		ssize_t got;
		if (job->fd[i] < 0) {
			/* a card's script: its batch log (stdout and stderr together) */
			char *p = job->sub.card
				      ? rm_xstrdup(job->sub.batch_log)
				      : rm_xasprintf("%s.node0.%s", job->sub.log_base, ext[i]);
			job->fd[i] = open(p, O_RDONLY | O_CLOEXEC);
			free(p);
			if (job->fd[i] < 0)
				continue; /* not yet: the task has not started */
		}
		while ((got = read(job->fd[i], buf, sizeof(buf))) > 0) {
			if (s->on_output)
				s->on_output(s->ud, i == 0 ? RM_STREAM_STDOUT : RM_STREAM_STDERR,
					     buf, (size_t)got);
			total += (size_t)got;
		}
	}
	return total;
}

/* The runner's clock runs from when the job leaves PENDING (or shows output). */
static void tell_running(rm_job *job, size_t got)
{
	const rm_job_spec *s = job->spec;
	int runs = got || !job->queued || job->pid > 0 ||
		   (job->state != RM_SLURM_UNKNOWN && job->state != RM_SLURM_PENDING &&
		    job->state != RM_SLURM_CONFIGURING && job->state != RM_SLURM_REQUEUED);

	if (runs && !job->running) {
		job->running = 1;
		if (s->queued)
			s->queued(s->ud, 0);
	}
}

int rm_launcher__slurm_stream(void *state, rm_job *job, rm_error *err)
{
	const rm_job_spec *s = job->spec;

	(void)state;
	if (!job->running && s->queued)
		s->queued(s->ud, 1);
	for (;;) {
		size_t got = drain(job);
		double now = rm_now();
		tell_running(job, got);
		if (now >= job->next_check) {
			if (rm_launcher__slurm_check(job, err) < 0)
				return -1;
			tell_running(job, 0);
			job->next_check =
			    now + (now - job->started < QUICK_CHECKS_FOR ? QUICK_CHECK_EVERY
									 : CHECK_EVERY);
			if (!job->queued) {
				while (drain(job) > 0)
					;
				return 0;
			}
		}
		if (s->poll && s->poll(s->ud))
			return RM_LAUNCH_STOPPED;
		if (!got)
			rm_launcher__slurm_nap(0.1);
	}
}

/* The first error a node's runner wrote (the image could not be pulled, ...), or NULL. */
static char *node_error(const rm_job *job)
{
	char *msg = NULL;

	for (long r = 0; r < job->sub.nodes && r < 1024 && !msg; r++) {
		json_t *res = result(job, r);
		const char *e = json_string_value(json_object_get(res, "error"));
		if (e)
			msg = rm_xasprintf("rank %ld: %s", r, e);
		json_decref(res);
	}
	return msg;
}

/* Whether the job failed for its hosts, not its workload: a node failed or did not boot,
 * or a node's pre-flight check refused its GPUs (its result file says "preflight"). */
static int host_lost(const rm_job *job, const rm_slurm_job_state *js)
{
	int lost = js && (js->state == RM_SLURM_NODE_FAIL || js->state == RM_SLURM_BOOT_FAIL);

	for (long r = 0; r < job->sl->sc.nodes && r < 1024 && !lost; r++) {
		json_t *res = result(job, r);
		lost = json_is_true(json_object_get(res, "preflight"));
		json_decref(res);
	}
	return lost;
}

/* The reason of a job that did not complete, with the rank that failed first (srun's own
 * line in the batch log: sacct's ExitCode is the highest of all tasks) and a node's error. */
static void failure_reason(const rm_job *job, const rm_slurm_job_state *js, rm_error *err)
{
	char why[512], node[128], *log = NULL, *nerr = node_error(job);
	long task;
	int code;
	rm_error rerr = RM_ERROR_INIT;

	exit_reason(job, js, "srun", why, sizeof(why));
	if (rm_read_file(job->sub.batch_log, (size_t)16 << 20, &log, NULL, &rerr) == 0 &&
	    (!js || js->state == RM_SLURM_FAILED) &&
	    rm_slurm_first_failed_task(log, &task, &code, node, sizeof(node)) == 0) {
		char *paren = js ? strstr(why, " (") : NULL;
		if (paren)
			*paren = '\0';
		rm_error_set(err, RM_ERR_INPUT, "%s (rank %ld on %s exited with code %d)%s%s", why,
			     task, node, code, nerr ? ": " : "", nerr ? nerr : "");
	} else {
		rm_error_set(err, RM_ERR_INPUT, "%s%s%s", why, nerr ? ": " : "", nerr ? nerr : "");
	}
	free(log);
	free(nerr);
}

/* Our entry of the launcher's last final states, when it is final there. */
static const rm_slurm_job_state *cached_final(const rm_job *job)
{
	const struct slurm_launcher *sl = job->sl;
	const rm_slurm_job_state *js;

	if (sl->final_job != job->sub.job_id)
		return NULL;
	js = ours(job, sl->finals, sl->n_finals);
	return js && rm_slurm_state_final(js->state) ? js : NULL;
}

/* The final state of our job or task (sacct lags the queue for arrays: polled). One call
 * lists every task of an array: kept for the tasks followed next. */
static int final_state(rm_job *job, double timeout, rm_slurm_job_state *out, rm_error *err)
{
	struct slurm_launcher *sl = job->sl;
	double deadline = rm_now() + (timeout > 0 ? timeout : FINAL_WAIT);
	const char *source = "sacct";

	for (;;) {
		const rm_slurm_job_state *js = cached_final(job);
		if (js) {
			*out = *js;
			return 0;
		}
		free(sl->finals);
		sl->finals = NULL;
		sl->n_finals = 0;
		sl->final_job = job->sub.job_id;
		if (rm_slurm_final(job->sub.job_id, &sl->finals, &sl->n_finals, &source, err) < 0)
			return -1;
		if ((js = cached_final(job))) {
			*out = *js;
			return 0;
		}
		if (rm_now() > deadline || rm_interrupt_pending()) {
			char id[64];
			id_text(job, id, sizeof(id));
			return rm_error_set(err, RM_ERR_IO,
					    "%s left the queue but %s gives no final state for it",
					    id, source);
		}
		rm_launcher__slurm_nap(0.5);
	}
}

/* Without SLURM's word (the controller does not answer): the ranks' own result files. */
static int by_results(rm_job *job, long *status, rm_error *err)
{
	char id[64], *why = NULL;
	long bad = -1;
	json_int_t code = 0;

	id_text(job, id, sizeof(id));
	rm_warn("%s: no final state from SLURM (%s); judged by its ranks' result files", id,
		rm_error_text(err));
	for (long r = 0; r < job->sub.nodes && bad < 0; r++) {
		json_t *res = result(job, r);
		json_t *c = json_object_get(res, "exit_code");
		if (!json_is_integer(c) || json_integer_value(c) != 0) {
			bad = r;
			code = json_is_integer(c) ? json_integer_value(c) : -1;
			why = rm_xstrdup(json_string_value(json_object_get(res, "error")));
		}
		if (r == 0)
			*status = json_is_integer(c) ? (long)json_integer_value(c) : -1;
		json_decref(res);
	}
	if (bad < 0)
		return 0;
	if (why)
		rm_error_set(err, RM_ERR_INPUT,
			     "%s: rank %ld could not run: %s (SLURM's controller did not answer)",
			     id, bad, why);
	else
		rm_error_set(
		    err, RM_ERR_INPUT,
		    "%s: rank %ld exited with code %lld (SLURM's controller did not answer)", id,
		    bad, (long long)code);
	free(why);
	return RM_LAUNCH_FAILED;
}

/* A card's script's end: its exit code from the steps file; the reason names the node that
 * lacked the image or the step that failed. */
static int card_end(rm_job *job, int completed, const rm_slurm_job_state *js, long *status,
		    rm_error *err)
{
	char why[512];

	*status = rm_launcher__slurm_card_status(job);
	if (completed && *status == 0)
		return 0;
	exit_reason(job, js, "bash", why, sizeof(why));
	rm_launcher__slurm_card_reason(job, why, err);
	return RM_LAUNCH_FAILED;
}

int rm_launcher__slurm_wait(void *state, rm_job *job, double timeout, long *status, rm_error *err)
{
	rm_slurm_job_state js;
	json_t *r0;
	json_int_t code = -1;
	int completed;

	(void)state;
	*status = -1;
	while (job->queued && !rm_interrupt_pending()) { /* normally gone after stream */
		if (rm_launcher__slurm_check(job, err) < 0)
			return -1;
		if (job->queued)
			rm_launcher__slurm_nap(0.2);
	}
	if (job->queued)
		return rm_error_set(err, RM_ERR_IO, "interrupted");
	if (job->pid > 0)
		completed = WIFEXITED(job->wstatus) && WEXITSTATUS(job->wstatus) == 0;
	else if (final_state(job, timeout, &js, err) < 0)
		return job->no_controller && !job->sub.card ? by_results(job, status, err) : -1;
	else
		completed = js.state == RM_SLURM_COMPLETED;
	if (job->sub.card)
		return card_end(job, completed, job->pid > 0 ? NULL : &js, status, err);
	r0 = result(job, 0);
	if (json_is_integer(json_object_get(r0, "exit_code")))
		code = json_integer_value(json_object_get(r0, "exit_code"));
	json_decref(r0);
	*status = code >= 0 ? (long)code : completed ? 0 : -1;
	if (completed)
		return 0;
	failure_reason(job, job->pid > 0 ? NULL : &js, err);
	return host_lost(job, job->pid > 0 ? NULL : &js) ? RM_LAUNCH_HOST_LOST : RM_LAUNCH_FAILED;
}

/* Only what rank 0's runner copied out of its container: the multiple_results file. A
 * card's script: the results it wrote, wherever path says (slurm_card.c). */
int rm_launcher__slurm_fetch(void *state, rm_job *job, const char *path, int fd, size_t max,
			     rm_error *err)
{
	if (job->sub.card)
		return rm_launcher__slurm_card_fetch(state, job, fd, max, err);

	json_t *r0 = result(job, 0);
	const char *have = json_string_value(json_object_get(r0, "results_path"));
	const char *tar = json_string_value(json_object_get(r0, "results_tar"));
	char buf[READ_CHUNK];
	ssize_t got;
	size_t total = 0;
	int in = -1, ret = -1;

	(void)state;
	if (!have || !tar || strcmp(have, path) != 0) {
		rm_error_set(err, RM_ERR_INPUT,
			     "'%s' was not copied off the node: only rank 0's multiple_results "
			     "file comes back from a SLURM job",
			     path);
		goto out;
	}
	in = open(tar, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		rm_error_sys(err, RM_ERR_IO, errno, "cannot read '%s'", tar);
		goto out;
	}
	while ((got = read(in, buf, sizeof(buf))) > 0) {
		total += (size_t)got;
		if (total > max || rm_write_all(fd, buf, (size_t)got) < 0) {
			rm_error_set(err, RM_ERR_IO, "cannot copy '%s' (more than %zu bytes?)", tar,
				     max);
			goto out;
		}
	}
	ret = got < 0 ? rm_error_set(err, RM_ERR_IO, "cannot read '%s'", tar) : 0;
out:
	if (in >= 0)
		close(in);
	json_decref(r0);
	return ret;
}
