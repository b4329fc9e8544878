/*
 * One run of a built image through the launcher: start, stream (stream.c), stop on a
 * timeout or a signal, wait for the exit status, read the results back, clean up.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "rm/csv.h"
#include "rm/log.h"
#include "rm/tar.h"
#include "rm/util.h"

#define RESULTS_MAX_BYTES ((size_t)16 << 20)

char *container_name(const struct run *r, const rm_model *m, size_t k)
{
	char *s = rm_xasprintf("run_models-%s-%s-%zu", r->run_id, m->name, k);
	for (char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || *p == '.' || *p == '-'))
			*p = '_';
	return s;
}

/* A file out of the workload (a tar from the launcher), extracted to a temporary file. */
static FILE *fetch_file(struct run *r, rm_job *job, const char *path, rm_error *err)
{
	char *tar_path = NULL, *csv_path = NULL;
	int tfd = rm_make_temp(&tar_path, err), cfd = -1;
	FILE *f = NULL;

	if (tfd < 0)
		goto out;
	if (r->launcher.ops->fetch(r->launcher.state, job, path, tfd, RESULTS_MAX_BYTES * 2, err) <
	    0)
		goto out;
	cfd = rm_make_temp(&csv_path, err);
	if (cfd < 0 || lseek(tfd, 0, SEEK_SET) < 0 ||
	    rm_tar_extract_one(tfd, cfd, RESULTS_MAX_BYTES, err) < 0)
		goto out;
	f = fopen(csv_path, "r");
	if (!f)
		rm_error_set(err, RM_ERR_IO, "cannot read '%s'", csv_path);
out:
	if (tfd >= 0)
		close(tfd);
	if (cfd >= 0)
		close(cfd);
	if (tar_path)
		unlink(tar_path); /* f stays readable: unlinked, not closed */
	if (csv_path)
		unlink(csv_path);
	free(tar_path);
	free(csv_path);
	return f;
}

/* The header's model, performance and metric columns. */
static int results_columns(FILE *f, long col[3], rm_error *err)
{
	static const char *const want[3] = {"model", "performance", "metric"};
	char **rec = NULL;
	size_t n;

	if (rm_csv_read_record(f, &rec, &n, err) != 1)
		return rm_error_set(err, RM_ERR_INPUT, "it is empty");
	col[0] = col[1] = col[2] = -1;
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < 3; k++)
			if (!strcmp(rec[i], want[k]))
				col[k] = (long)i;
	rm_strv_free(rec);
	if (col[0] < 0 || col[1] < 0 || col[2] < 0)
		return rm_error_set(
		    err, RM_ERR_INPUT,
		    "its header must name the columns model, performance and metric");
	return 0;
}

/* Reads the multiple_results CSV out of the workload: one result per row. */
static int read_multiple_results(struct run *r, const rm_model *m, rm_job *job, struct outcome *oc,
				 rm_error *err)
{
	char *dir = rm_model_dir(m), *path;
	FILE *f = NULL;
	char **rec = NULL;
	size_t n, nm = 0, np = 0, nme = 0;
	long col[3] = {-1, -1, -1};
	int got, ret = -1;

	path = m->multiple_results[0] == '/'
		   ? rm_xstrdup(m->multiple_results)
		   : rm_xasprintf("%s/%s/%s", RM_WORKSPACE, dir, m->multiple_results);
	if (!(f = fetch_file(r, job, path, err)) || results_columns(f, col, err) < 0)
		goto out;
	oc->mr_names = rm_xcalloc(1, sizeof(char *));
	oc->mr_perf = rm_xcalloc(1, sizeof(char *));
	oc->mr_metric = rm_xcalloc(1, sizeof(char *));
	while ((got = rm_csv_read_record(f, &rec, &n, err)) == 1) {
		double v;
		if (n == 1 && !rec[0][0]) { /* blank line */
			rm_strv_free(rec);
			continue;
		}
		if ((size_t)col[0] >= n || (size_t)col[1] >= n || (size_t)col[2] >= n ||
		    !rec[col[0]][0]) {
			rm_error_set(err, RM_ERR_INPUT, "row %zu has missing columns", nm + 2);
			goto out;
		}
		oc->mr_names = rm_strv_push(oc->mr_names, &nm, rec[col[0]]);
		/* A row without a finite number keeps an empty performance. */
		oc->mr_perf = rm_strv_push(
		    oc->mr_perf, &np, rm_parse_double(rec[col[1]], &v) == 0 ? rec[col[1]] : "");
		oc->mr_metric = rm_strv_push(oc->mr_metric, &nme, rec[col[2]]);
		rm_strv_free(rec);
		rec = NULL;
	}
	if (got < 0)
		goto out;
	oc->mr_n = nm;
	if (!nm) {
		rm_error_set(err, RM_ERR_INPUT, "it has no rows");
		goto out;
	}
	ret = 0;
out:
	if (ret < 0)
		rm_error_wrap(err, "multiple_results '%s'", path);
	rm_strv_free(rec);
	if (f)
		fclose(f);
	free(path);
	free(dir);
	return ret;
}

static int keep_model_dir(struct run *r, const rm_model *m, rm_job *job, rm_error *err)
{
	char *dir = rm_model_dir(m), *path = rm_xasprintf("%s/%s", RM_WORKSPACE, dir);
	char *tar_path = NULL;
	int fd = rm_make_temp(&tar_path, err), ret = -1;

	if (fd >= 0 &&
	    r->launcher.ops->fetch(r->launcher.state, job, path, fd, (size_t)8 << 30, err) == 0 &&
	    lseek(fd, 0, SEEK_SET) == 0 && rm_tar_extract_dir(fd, r->o->log_dir, 0, err) == 0) {
		rm_info("kept the model dir as '%s/%s'", r->o->log_dir, dir);
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
static void judge(struct run *r, const rm_model *m, rm_job *job, struct stream *st, long status,
		  struct outcome *oc)
{
	rm_error err = RM_ERROR_INIT;

	if (oc->reason) /* timed out, interrupted, stream broken */
		return;
	if (status != 0) {
		fail(oc, "the script exited with code %ld", status);
	} else if (m->multiple_results) {
		if (read_multiple_results(r, m, job, oc, &err) < 0)
			fail(oc, "%s", err.msg);
		else
			oc->status = "SUCCESS";
	} else if (!oc->pr.has_performance) {
		if (oc->pr.problem)
			fail(oc, "no performance figure (parser '%s'): %s", stream_parser_name(st),
			     oc->pr.problem);
		else
			fail(oc, "no performance found in the output (parser '%s')",
			     stream_parser_name(st));
	} else {
		oc->status = "SUCCESS";
	}
}

/* After the stream ended early: stop the workload and say why. Returns -1 on a signal. */
static int stopped(struct run *r, rm_job *job, struct stream *st, double timeout, int rc,
		   const rm_error *serr, struct outcome *oc)
{
	rm_error kerr = RM_ERROR_INIT;
	/* Kill first: the workload must not outlive its budget by more than one poll of the
	 * stream (100 ms). */
	int stop_failed = r->launcher.ops->stop(r->launcher.state, job, &kerr) < 0;

	if (stop_failed && !rm_runner_signal())
		rm_warn("%s", kerr.msg);
	if (rm_runner_signal()) {
		fail(oc, "interrupted by %s", runner_signal_name());
		return -1;
	}
	if (stream_timed_out(st)) {
		fail(oc, "timed out after %g s (the container was killed)", timeout);
	} else if (rc < 0 && stop_failed) {
		/* The stream broke and the workload cannot be stopped: the engine went away. */
		r->engine_lost = 1;
		fail(oc,
		     "lost the workload's engine while it ran (%s): its exit status is unknown "
		     "and its output may be cut short (the log is kept)",
		     serr->msg);
	} else if (rc < 0) {
		fail(oc, "%s", serr->msg);
	}
	return 0;
}

/* The exit status once the output has ended. */
static void waited(struct run *r, rm_job *job, long *status, struct outcome *oc)
{
	rm_error err = RM_ERROR_INIT;

	int rc = r->launcher.ops->wait(r->launcher.state, job, 0, status, &err);

	if (rc == 0) {
		oc->exit_code = *status;
	} else if (rc == RM_LAUNCH_FAILED) {
		/* The back end's own verdict (a SLURM state): the row's reason. */
		if (*status >= 0)
			oc->exit_code = *status;
		if (!oc->reason)
			fail(oc, "%s", err.msg);
	} else if (!oc->reason && !rm_runner_signal()) {
		/* The output ended and no exit status came: the engine went away. */
		r->engine_lost = 1;
		fail(oc,
		     "lost the workload's engine while it ran (%s): its exit status is unknown "
		     "and its output may be cut short (the log is kept)",
		     err.msg);
	}
}

/* After the run: keep the model dir, then keep or remove the workload. */
static void finish(struct run *r, const rm_model *m, rm_job *job, const char *name, int script_done)
{
	const rm_launcher *L = &r->launcher;
	rm_error err = RM_ERROR_INIT;
	int keep = r->o->keep_alive && !rm_runner_signal();

	if (r->o->keep_model_dir && !rm_runner_signal() && keep_model_dir(r, m, job, &err) < 0)
		rm_warn("model '%s': could not keep the model dir: %s", m->name, err.msg);
	if (keep)
		rm_info("kept container '%s' %s; enter it with 'docker exec -it %s sh', remove "
			"it with 'docker rm -f %s'",
			name, script_done ? "running" : "(stopped)", name, name);
	rm_error_clear(&err);
	if (L->ops->cleanup(L->state, job, keep, &err) < 0) {
		rm_warn("%s", err.msg);
		r->unremoved++;
	}
}

int execute(struct run *r, const rm_spec_in *in, size_t k, struct outcome *oc)
{
	const rm_model *m = in->model;
	const rm_launcher *L = &r->launcher;
	rm_error err = RM_ERROR_INIT;
	char *name = container_name(r, m, k);
	double timeout = r->o->timeout >= 0 ? r->o->timeout
			 : m->timeout > 0   ? m->timeout
					    : RM_DEFAULT_TIMEOUT;
	struct stream *st = stream_open(r, in, timeout, oc);
	rm_job_spec spec = {
	    .in = in, .name = name, .log_file = oc->log_file, .log_link = oc->log_link};
	rm_job *job = NULL;
	long status = -1;
	int rc, ret = 0, done = 0;

	if (!st)
		goto out;
	stream_bind(st, &spec);
	if (L->ops->start(L->state, &spec, &job, &err) < 0) {
		fail(oc, "%s", err.msg);
		goto out;
	}
	stream_begin(st);
	rc = L->ops->stream(L->state, job, &err);
	if ((done = stream_script_done(st, &status))) /* keep-alive: the container lives on */
		oc->exit_code = status;
	else if (rc < 0)
		ret = stopped(r, job, st, timeout, rc, &err, oc);
	if (!done && !rm_runner_signal())
		waited(r, job, &status, oc);
	oc->test_s = rm_now() - stream_started(st);
	stream_end(st, oc);
	judge(r, m, job, st, status, oc);
out:
	if (job)
		finish(r, m, job, name, done);
	stream_close(st);
	free(name);
	return ret;
}
