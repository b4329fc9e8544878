/*
 * One run of a built image through the launcher: start, stream (stream.c), stop on a
 * timeout or a signal, wait for the exit status, read the results back, clean up.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "rm/util.h"
#include "rm/tar.h"

char *rm_runner__container_name(const struct run *r, const rm_model *m, size_t k, long attempt)
{
	char *s = rm_xasprintf("run_models-%s-%s%s%s-%zu", r->run_id, m->name,
			       r->point_tag[0] ? "-" : "", r->point_tag, k),
	     *a;

	if (attempt > 1) {
		a = rm_xasprintf("%s-a%ld", s, attempt);
		free(s);
		s = a;
	}
	for (char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || *p == '.' || *p == '-'))
			*p = '_';
	return s;
}

static int keep_model_dir(struct run *r, const rm_model *m, rm_job *job, rm_error *err)
{
	char *dir = rm_model_dir(m), *path = rm_xasprintf("%s/%s", RM_WORKSPACE, dir);
	char *tar_path = NULL;
	int fd = rm_make_temp(&tar_path, err), ret = -1;
	size_t skipped = 0;

	if (fd >= 0 &&
	    r->active->ops->fetch(r->active->state, job, path, fd, (size_t)8 << 30, err) == 0 &&
	    lseek(fd, 0, SEEK_SET) == 0 &&
	    rm_tar_extract_dir(fd, r->o->log_dir, 0, &skipped, err) == 0) {
		rm_info("kept the model dir as '%s/%s'", r->o->log_dir, dir);
		if (skipped)
			rm_info("model '%s': left out %zu device node(s), FIFO(s) or socket(s) of "
				"its model dir: they are never made on this host",
				m->name, skipped);
		ret = 0;
	}
	if (fd >= 0)
		close(fd);
	if (tar_path)
		unlink(tar_path);
	free(tar_path);
	free(path);
	free(dir);
	return ret;
}

/* The verdict once the output has ended: exit status, results, performance. */
static void execute_judge(struct run *r, const rm_workload *w, rm_job *job, struct stream *st,
			  long status, struct outcome *oc)
{
	const rm_model *m = w->model;
	rm_error err = RM_ERROR_INIT;
	/* a card whose own script ran on the batch host: its results are what it wrote */
	int card =
	    r->active->ops->batch_host && rm_dist_runs_script(rm_workload_dist_launcher(w), 1);

	if (oc->reason) /* timed out, interrupted, stream broken */
		return;
	if (status != 0) {
		rm_runner__fail(oc, "the script exited with code %ld", status);
	} else if (m->multiple_results || card) {
		if (rm_runner__read_multiple_results(r, m, card, job, oc, &err) < 0)
			rm_runner__fail(oc, "%s", rm_error_text(&err));
		else
			oc->status = RM_STATUS_SUCCESS;
	} else if (!oc->pr.has_performance) {
		if (oc->pr.problem)
			rm_runner__fail(oc, "no performance figure (parser '%s'): %s",
					rm_runner__stream_parser_name(st), oc->pr.problem);
		else
			rm_runner__fail(oc, "no performance found in the output (parser '%s')",
					rm_runner__stream_parser_name(st));
	} else {
		oc->status = RM_STATUS_SUCCESS;
	}
}

/* After the stream ended early: stop the workload and say why. Returns -1 on a signal. */
static int stopped(struct run *r, rm_job *job, struct stream *st, double timeout, int rc,
		   rm_error *serr, struct outcome *oc)
{
	rm_error kerr = RM_ERROR_INIT;
	/* Kill first: the workload must not outlive its budget by more than one poll of the
	 * stream (100 ms). */
	int stop_failed = r->active->ops->stop(r->active->state, job, &kerr) < 0;

	if (stop_failed && !rm_signal_received())
		rm_warn("%s", rm_error_text(&kerr));
	if (rm_signal_received()) {
		rm_runner__fail(oc, "interrupted by %s", rm_signal_name());
		return -1;
	}
	if (rm_runner__stream_gather_timed_out(st)) {
		rm_runner__fail(oc,
				"the tools' outputs took longer than %g s to gather (the container "
				"was killed; the model's own run had ended)",
				RM_TOOLS_GATHER_S);
	} else if (rm_runner__stream_timed_out(st)) {
		rm_runner__fail(oc, "timeout: timed out after %g s (the container was killed)",
				timeout);
	} else if (rc < 0 && stop_failed) {
		/* The stream broke and the workload cannot be stopped: the engine went away. */
		r->engine_lost = 1;
		oc->machine = 1;
		rm_runner__fail(
		    oc,
		    "lost the workload's engine while it ran (%s): its exit status is unknown "
		    "and its output may be cut short (the log is kept)",
		    rm_error_text(serr));
	} else if (rc < 0) {
		rm_runner__fail(oc, "%s", rm_error_text(serr));
	}
	return 0;
}

/* The exit status once the output has ended. */
static void waited(struct run *r, rm_job *job, double timeout, long *status, struct outcome *oc)
{
	rm_error err = RM_ERROR_INIT;

	int rc = r->active->ops->wait(r->active->state, job, 0, status, &err);

	if (rc == 0) {
		oc->exit_code = *status;
	} else if (rc == RM_LAUNCH_TIMED_OUT) {
		/* the output ended but the workload did not, and its time is up (a /wait the
		 * engine held back, a stream closed early): stopped as a timeout is */
		rm_error kerr = RM_ERROR_INIT;
		if (r->launcher.ops->stop(r->launcher.state, job, &kerr) < 0)
			rm_warn("%s", rm_error_text(&kerr));
		*status = -1;
		if (!oc->reason)
			rm_runner__fail(oc,
					"timeout: timed out after %g s (the container was killed)",
					timeout);
	} else if (rc == RM_LAUNCH_FAILED) {
		/* The back end's own verdict (a SLURM state): the row's reason. */
		if (*status >= 0)
			oc->exit_code = *status;
		if (!oc->reason)
			rm_runner__fail(oc, "%s", rm_error_text(&err));
	} else if (rc == RM_LAUNCH_HOST_LOST) {
		/* The back end lost the host it ran on (a SLURM node failed): the machine's. */
		if (!oc->reason)
			rm_runner__fail(oc, "%s", rm_error_text(&err));
		oc->machine = 1;
	} else if (!oc->reason && !rm_signal_received()) {
		/* The output ended and no exit status came: the engine went away. */
		r->engine_lost = 1;
		oc->machine = 1;
		rm_runner__fail(
		    oc,
		    "lost the workload's engine while it ran (%s): its exit status is unknown "
		    "and its output may be cut short (the log is kept)",
		    rm_error_text(&err));
	}
}

/* After the run: keep the model dir, then keep or remove the workload. */
static void finish(struct run *r, const rm_model *m, rm_job *job, const char *name, int script_done)
{
	const rm_launcher *L = r->active;
	rm_error err = RM_ERROR_INIT;
	int keep = r->o->wl.keep_alive && !rm_signal_received();
	const char *cli = r->ctx.engine == RM_ENGINE_PODMAN ? "podman" : "docker";

	if (r->o->keep_model_dir && !rm_signal_received() && keep_model_dir(r, m, job, &err) < 0)
		rm_warn("model '%s': could not keep the model dir: %s", m->name,
			rm_error_text(&err));
	if (keep)
		rm_info("kept container '%s' %s; enter it with '%s exec -it %s sh', remove "
			"it with '%s rm -f %s'",
			name, script_done ? "running" : "(stopped)", cli, name, cli, name);
	rm_error_clear(&err);
	if (L->ops->cleanup(L->state, job, keep, &err) < 0) {
		rm_warn("%s", rm_error_text(&err));
		r->unremoved++;
	}
}

int rm_runner__execute(struct run *r, const rm_workload *w, size_t k, struct outcome *oc)
{
	const rm_model *m = w->model;
	rm_error err = RM_ERROR_INIT;
	const rm_launcher *L = r->active = rm_runner__launcher(r, w, &err);
	char *name = rm_runner__container_name(r, m, k, oc->attempt);
	double timeout = w->timeout;
	struct stream *st = rm_runner__stream_open(r, w, timeout, oc);
	rm_job_spec spec = {
	    .w = w, .name = name, .log_file = oc->log_file, .log_link = oc->log_link};
	rm_job *job = NULL;
	struct telem_run *tm = NULL;
	long status = -1;
	int rc, ret = 0, done = 0;

	if (!st)
		goto out;
	if (!L) {
		rm_runner__fail(oc, "%s", rm_error_text(&err));
		goto out;
	}
	/* madengine's line, where its timeout tests look for it. */
	rm_runner__stream_note(st, "Setting timeout to %.15g seconds.%s", timeout,
			       timeout > 0 ? "" : " (none: the run is never stopped)");
	rm_runner__data_log(st, w);
	rm_runner__tools_log(st, w);
	if (rm_runner__preflight(r, w, st, oc) < 0)
		goto out;
	rm_runner__stream_bind(st, &spec);
	r->jobs_started++;
	if (L->ops->start(L->state, &spec, &job, &err) < 0) {
		rm_runner__fail(oc, "%s", rm_error_text(&err));
		/* the engine refused or failed the request (not the model's script) */
		oc->machine = err.kind == RM_ERR_DOCKER && !rm_signal_received();
		goto out;
	}
	rm_runner__provenance_model(r, w, job, st, oc);
	rm_runner__stream_begin(st);
	tm = rm_runner__telemetry_start(r, w, st, oc);
	rc = L->ops->stream(L->state, job, &err);
	if ((done = rm_runner__stream_script_done(
		 st, &status))) /* keep-alive: the container lives on */
		oc->exit_code = status;
	else if (rc < 0)
		ret = stopped(r, job, st, timeout, rc, &err, oc);
	if (!done && !rm_signal_received())
		waited(r, job, timeout, &status, oc);
	/* the model's time: the tools' gathering after it is not the model's */
	oc->test_s = rm_runner__stream_model_end(st) - rm_runner__stream_started(st);
	rm_runner__stream_end(st, oc);
	rm_runner__telemetry_finish(r, tm, w, job, st, oc);
	rm_runner__provenance_hosts(r, w, job, oc);
	rm_runner__data_after_run(r, w, job, oc);
	rm_runner__tools_after_run(r, w, job, st, oc);
	execute_judge(r, w, job, st, status, oc);
out:
	if (job)
		finish(r, m, job, name, done);
	rm_runner__stream_close(st);
	free(name);
	return ret;
}
