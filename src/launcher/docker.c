/*
 * The local Docker launcher: one container per workload on this host's engine, through the
 * Engine API (rm/engine.h). Images are built by docker_image.c.
 *
 *   start    POST /containers/create (Cmd as an argv array, Env in the body), then the
 *            scripts folder (and the custom data scripts' and the tools' folders) copied
 *            in with PUT /archive: nothing runs yet
 *   stream   attach, then start once the engine has answered: no output is lost
 *   stop     SIGKILL (the container must not outlive its budget by more than one poll)
 *   wait     POST /wait?condition=not-running
 *   fetch    GET /archive
 *   cleanup  DELETE ?force=1&v=1
 *   sweep    every container labelled with this run's id
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "docker_internal.h"
#include "rm/engine.h"
#include "rm/tar.h"
#include "rm/launcher.h"
#include "rm/util.h"

extern char **environ;

struct rm_job {
	char *id;
	char *name;
	const rm_job_spec *spec;
	double started; /* when its stream began: the timeout counts from there */
};

/* How often a wait that has not answered is checked against the container's state: a /wait
 * the engine holds back (or whose connection dropped) must neither outlive the timeout nor
 * be taken for a lost engine. */
#define WAIT_SLICE_S 10.0
/* How many times a stream cut while the workload still runs is attached again. */
#define REATTACH_MAX 3
/* How long a container whose stream ended may take to say it ended: Podman closes the stream
 * as the process exits and reports the container running for a moment after. */
#define SETTLE_S 1.0

static int docker_claims(const rm_context *ctx)
{
	(void)ctx;
	return 1; /* the default: every context runs locally unless another launcher claims it */
}

/* A dry run renders for the engine it would use: the one --engine names, else the one that
 * answers a quick /_ping (read only; nothing is built or run), else Docker. */
static void dry_run_engine(struct docker_launcher *dl)
{
	rm_docker *d = NULL;
	rm_error err = RM_ERROR_INIT;
	char *host = NULL;

	dl->kind = dl->cfg.ctx ? dl->cfg.ctx->engine : RM_ENGINE_ANY;
	if (dl->kind != RM_ENGINE_ANY) {
		dl->where = rm_xasprintf("rendered for %s (--engine); no engine contacted",
					 rm_engine_kind_title(dl->kind));
		return;
	}
	if (rm_engine_open_quick(&d, dl->cfg.docker_host, &err) == 0) {
		dl->kind = rm_engine_get_kind(d);
		dl->where = dl->kind == RM_ENGINE_PODMAN
				? rm_xasprintf("rendered for Podman %s at %s (its /_ping said so)",
					       rm_engine_product_version(d), rm_engine_host(d))
				: rm_xasprintf("rendered for Docker at %s (its /_ping said so)",
					       rm_engine_host(d));
		rm_engine_close(d);
		return;
	}
	host = dl->cfg.docker_host ? rm_xstrdup(dl->cfg.docker_host) : rm_engine_default_host();
	dl->kind = RM_ENGINE_DOCKER;
	dl->where = rm_xasprintf("rendered for Docker: no engine answers at %s (--engine podman "
				 "renders for Podman)",
				 host);
	free(host);
}

static int docker_open(void **state, const rm_launcher_config *cfg, rm_error *err)
{
	struct docker_launcher *dl = rm_xcalloc(1, sizeof(*dl));

	dl->cfg = *cfg;
	if (gethostname(dl->host, sizeof(dl->host)) != 0)
		dl->host[0] = '\0';
	dl->host[sizeof(dl->host) - 1] = '\0';
	snprintf(dl->pid, sizeof(dl->pid), "%ld", (long)getpid());
	snprintf(dl->pid_start, sizeof(dl->pid_start), "%lld", rm_process_start((long)getpid()));
	if (!cfg->dry_run && rm_engine_open(&dl->d, cfg->docker_host, err) < 0) {
		free(dl);
		return -1;
	}
	if (dl->d) {
		dl->kind = rm_engine_get_kind(dl->d);
		if (dl->kind == RM_ENGINE_PODMAN)
			rm_engine_podman_facts(dl->d, &dl->rootless, &dl->cgroup_v1);
		if (dl->kind == RM_ENGINE_PODMAN)
			dl->where = rm_xasprintf(
			    "Podman %s (Docker API %s) at %s", rm_engine_product_version(dl->d),
			    rm_engine_api_version(dl->d), rm_engine_host(dl->d));
		else
			dl->where =
			    rm_xasprintf("Docker API %s at %s", rm_engine_api_version(dl->d),
					 rm_engine_host(dl->d));
	} else {
		dry_run_engine(dl);
	}
	*state = dl;
	return 0;
}

static void docker_close(void *state)
{
	struct docker_launcher *dl = state;

	if (!dl)
		return;
	rm_engine_close(dl->d);
	free(dl->where);
	rm_strv_free(dl->pulled);
	free(dl);
}

static const char *docker_where(void *state)
{
	struct docker_launcher *dl = state;
	return dl->where ? dl->where : "no engine (dry run)";
}

static void docker_engine(void *state, rm_context *ctx)
{
	struct docker_launcher *dl = state;
	if (ctx->engine == RM_ENGINE_ANY)
		ctx->engine = dl->kind;
	ctx->engine_no_cgroups = dl->rootless && dl->cgroup_v1;
}

/* The CLI of the engine, for the commands messages suggest. */
const char *rm_launcher__docker_cli(const struct docker_launcher *dl)
{
	return dl->kind == RM_ENGINE_PODMAN ? "podman" : "docker";
}

/* The tree at host path src, put into the container under prefix (relative to /). */
static int put_tree(struct docker_launcher *dl, const char *id, const char *src, const char *prefix,
		    rm_error *err)
{
	char *tar_path = NULL;
	int fd = rm_make_temp(&tar_path, err), ret = -1;

	if (fd >= 0 && rm_tar_tree(src, prefix, fd, err) == 0 &&
	    rm_engine_put_archive(dl->d, id, "/", tar_path, err) == 0)
		ret = 0;
	if (fd >= 0)
		close(fd);
	if (tar_path)
		unlink(tar_path);
	free(tar_path);
	return ret;
}

/* The scripts folder (or the folder of the script file) goes to /myworkspace/<model dir>
 * (under .run_models/ when a url is cloned there first). */
static int copy_scripts(struct docker_launcher *dl, const rm_model *m, const char *id,
			rm_error *err)
{
	char *src = rm_xstrdup(m->scripts), *dir = rm_model_dir(m), *prefix;
	struct stat st;
	int ret = -1;

	if (stat(src, &st) != 0) {
		rm_error_sys(err, RM_ERR_INPUT, errno,
			     "model '%s': field 'scripts': cannot read '%s'", m->name, src);
		goto out;
	}
	if (!S_ISDIR(st.st_mode)) {
		char *slash = strrchr(src, '/');
		if (slash)
			*slash = '\0';
		else
			src[0] = '.', src[1] = '\0';
	}
	prefix = m->url && *m->url ? rm_xasprintf("%s/.run_models/%s", &RM_WORKSPACE[1], dir)
				   : rm_xasprintf("%s/%s", &RM_WORKSPACE[1], dir);
	ret = put_tree(dl, id, src, prefix, err);
	free(prefix);
out:
	free(src);
	free(dir);
	return ret;
}

/* The folder of each custom data script goes to RM_DATA_SCRIPTS/<k> (render_data.c runs it
 * from there). */
static int copy_data_scripts(struct docker_launcher *dl, const rm_workload *w, const char *id,
			     rm_error *err)
{
	int ret = 0;

	for (size_t k = 0; ret == 0 && k < rm_workload_data_scripts(w); k++) {
		const char *script = rm_workload_data_script(w, k);
		const char *slash = strrchr(script, '/');
		char *src = slash ? rm_xstrndup(script, (size_t)(slash - script)) : rm_xstrdup(".");
		char *prefix = rm_xasprintf("%s/%zu", &RM_DATA_SCRIPTS[1], k);

		if (put_tree(dl, id, src, prefix, err) < 0)
			ret = rm_error_wrap(err, "data script '%s'", script);
		free(prefix);
		free(src);
	}
	return ret;
}

/* The tools' script folders (rm_tool_plan.copies) go to RM_WORKSPACE/<dest>, where their
 * scripts, and the commands that name them (../scripts/common/...), find them. */
static int copy_tool_files(struct docker_launcher *dl, const rm_workload *w, const char *id,
			   rm_error *err)
{
	int ret = 0;

	for (size_t k = 0; ret == 0 && k < w->tools.n_copies; k++) {
		const rm_tool_copy *c = &w->tools.copies[k];
		char *prefix = rm_xasprintf("%s/%s", &RM_WORKSPACE[1], c->dest);

		if (put_tree(dl, id, c->host, prefix, err) < 0)
			ret = rm_error_wrap(err, "the tools' files '%s'", c->host);
		free(prefix);
	}
	return ret;
}

void rm_launcher__docker_label(const struct docker_launcher *dl, json_t *labels)
{
	json_object_set_new(labels, "run_models", json_string("1"));
	json_object_set_new(labels, "run_models.run", json_string(dl->cfg.run_id));
	json_object_set_new(labels, "run_models.host", json_string(dl->host));
	json_object_set_new(labels, "run_models.pid", json_string(dl->pid));
	json_object_set_new(labels, "run_models.pid_start", json_string(dl->pid_start));
}

static int docker_start(void *state, const rm_job_spec *spec, rm_job **out, rm_error *err)
{
	struct docker_launcher *dl = state;
	rm_job *job = rm_xcalloc(1, sizeof(*job));
	json_t *body = NULL;
	int ret = -1;

	job->spec = spec;
	job->name = rm_xstrdup(spec->name);
	if (rm_workload_render(spec->w, dl->cfg.ctx, (const char *const *)environ, &body, err) < 0)
		goto out;
	rm_launcher__docker_label(dl, json_object_get(body, "Labels"));
	if (rm_engine_create(dl->d, spec->name, body, &job->id, err) < 0) {
		/* The engine may have made it and its answer been lost (a dropped connection):
		 * the name is the run's own, so whatever carries it now is removed (a container
		 * that was never made is no error) rather than left for the next run to reap. */
		rm_error rerr = RM_ERROR_INIT;
		if (!rm_interrupt_pending() && rm_engine_remove(dl->d, spec->name, &rerr) < 0)
			rm_warn("a container named '%s' may be left: %s", spec->name,
				rm_error_text(&rerr));
		goto out;
	}
	/* From here on the job exists: the caller cleans it up whatever happens next. */
	*out = job;
	job = NULL;
	ret = copy_scripts(dl, spec->w->model, (*out)->id, err);
	if (ret == 0)
		ret = copy_data_scripts(dl, spec->w, (*out)->id, err);
	if (ret == 0)
		ret = copy_tool_files(dl, spec->w, (*out)->id, err);
out:
	if (job) {
		free(job->name);
		free(job);
	}
	json_decref(body);
	return ret;
}

/*
 * The container's state once it had a moment to settle: a running one is asked again every
 * 50 ms for up to SETTLE_S (an engine that reports the end late: Podman). -1 when the engine
 * cannot say.
 */
static int settled_state(struct docker_launcher *dl, const rm_job *job, rm_container_state *cs)
{
	double until = rm_now() + SETTLE_S;
	rm_error ierr = RM_ERROR_INIT;

	for (;;) {
		if (rm_engine_container_state(dl->d, job->id, cs, &ierr) < 0)
			return -1;
		if (!cs->running || rm_now() > until || rm_interrupt_pending())
			return 0;
		nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
	}
}

/*
 * The output from start to end. An attach stream can end before the workload does (the
 * engine or a proxy closed the connection): the engine is then asked whether the container
 * still runs, and if it does the stream is attached again (what it printed in between is
 * lost, and said so) rather than the run waiting out its timeout with the rest of the output
 * gone. A broken stream of a container that has ended is its end.
 */
static int docker_stream(void *state, rm_job *job, rm_error *err)
{
	struct docker_launcher *dl = state;
	const rm_job_spec *s = job->spec;
	int rc;

	job->started = rm_now();
	rc = rm_engine_attach_start(dl->d, job->id, 0, s->on_output, s->ud, s->poll, s->ud, err);
	for (int i = 0; i < REATTACH_MAX && rc != RM_ENGINE_CANCELLED; i++) {
		rm_container_state cs;
		if (rm_interrupt_pending() || settled_state(dl, job, &cs) < 0)
			break; /* the engine cannot say: what the stream found stands */
		if (!cs.running) {
			if (rc < 0 && !cs.gone) { /* it ended: its status is what wait reads */
				rm_warn(
				    "container '%s': its output stream broke (%s) after it ended",
				    job->name, rm_error_text(err));
				rm_error_clear(err);
				rc = 0;
			}
			break;
		}
		rm_warn(
		    "container '%s': its output stream ended while it still runs (%s); attaching "
		    "again (what it printed in between is lost)",
		    job->name, rc < 0 ? rm_error_text(err) : "closed by the engine");
		rm_error_clear(err);
		rc = rm_engine_attach(dl->d, job->id, 0, s->on_output, s->ud, s->poll, s->ud, err);
	}
	return rc == RM_ENGINE_CANCELLED ? RM_LAUNCH_STOPPED : rc;
}

static int docker_stop(void *state, rm_job *job, rm_error *err)
{
	struct docker_launcher *dl = state;
	return rm_engine_kill(dl->d, job->id, "SIGKILL", err);
}

struct wait_budget {
	const rm_job_spec *spec;
	double deadline; /* the caller's, or 0 */
	double slice;	 /* this /wait's: then the container's state is asked */
	int cancelled;	 /* the run's cancel said so (a signal) */
};

static int wait_poll(void *ud)
{
	struct wait_budget *w = ud;
	if ((w->deadline > 0 && rm_now() > w->deadline) || rm_now() > w->slice)
		return 1;
	w->cancelled = w->spec->cancelled ? w->spec->cancelled(w->spec->ud) : 0;
	return w->cancelled;
}

/*
 * /wait in slices of WAIT_SLICE_S: when one does not answer in time, or its connection
 * drops, the container's state decides: ended (its State.ExitCode), still running (wait
 * again, or RM_LAUNCH_TIMED_OUT once the workload's timeout has passed), or the engine cannot
 * say (-1: lost, with the /wait's error).
 */
static int wait_sliced(struct docker_launcher *dl, rm_job *job, struct wait_budget *w, long *status,
		       rm_error *err)
{
	double timeout = job->spec->w ? job->spec->w->timeout : 0;

	for (;;) {
		rm_container_state cs;
		rm_error ierr = RM_ERROR_INIT;
		int rc;

		w->slice = rm_now() + WAIT_SLICE_S;
		rm_error_clear(err);
		rc = rm_engine_wait(dl->d, job->id, "not-running", status, wait_poll, w, err);
		if (rc == 0 || w->cancelled || rm_interrupt_pending() ||
		    (w->deadline > 0 && rm_now() > w->deadline))
			return rc;
		if (rm_engine_container_state(dl->d, job->id, &cs, &ierr) < 0)
			return rc < 0 ? rc : -1; /* the engine cannot say: lost */
		if (cs.gone || !cs.running) {
			if (cs.gone)
				return rc < 0 ? rc : -1; /* settled below (removed by someone) */
			rm_error_clear(err);
			*status = cs.exit_code;
			return 0;
		}
		if (timeout > 0 && job->started > 0 && rm_now() > job->started + timeout) {
			rm_error_set(err, RM_ERR_DOCKER, "timed out after %g s", timeout);
			return RM_LAUNCH_TIMED_OUT;
		}
	}
}

/*
 * The exit status, and what the engine knows of an end that is not the script's own: an
 * out-of-memory kill (State.OOMKilled) or a container removed by someone else (the engine
 * no longer knows it) is the row's reason (RM_LAUNCH_FAILED), not "exited with code 137" nor
 * a lost engine.
 */
static int docker_wait(void *state, rm_job *job, double timeout, long *status, rm_error *err)
{
	struct docker_launcher *dl = state;
	struct wait_budget w = {job->spec, timeout > 0 ? rm_now() + timeout : 0, 0, 0};
	rm_error ierr = RM_ERROR_INIT;
	int rc = wait_sliced(dl, job, &w, status, err);
	int gone = 0, oom = 0;

	if ((rc == 0 && *status == 0) || rc == RM_ENGINE_CANCELLED || rc == RM_LAUNCH_TIMED_OUT ||
	    rm_interrupt_pending())
		return rc;
	if (rm_engine_container_end(dl->d, job->id, &gone, &oom, &ierr) < 0)
		return rc; /* the engine cannot say: what wait found stands */
	if (gone) {
		*status = -1; /* what wait said (137) is the removal's kill, not the script's */
		rm_error_set(
		    err, RM_ERR_DOCKER,
		    "the container was removed while the workload ran (by another process: "
		    "'docker rm -f', a clean-up job); its exit status is unknown");
		return RM_LAUNCH_FAILED;
	}
	if (rc == 0 && oom) {
		rm_error_set(err, RM_ERR_DOCKER,
			     "out of memory: the kernel killed the workload (the container's "
			     "State.OOMKilled; exit code %ld); give it more memory or make it use "
			     "less (batch size)",
			     *status);
		return RM_LAUNCH_FAILED;
	}
	return rc;
}

static int docker_fetch(void *state, rm_job *job, const char *path, int fd, size_t max,
			rm_error *err)
{
	struct docker_launcher *dl = state;
	return rm_engine_get_archive(dl->d, job->id, path, fd, max, err);
}

static int docker_cleanup(void *state, rm_job *job, int keep, rm_error *err)
{
	struct docker_launcher *dl = state;
	int ret = 0;

	if (!job)
		return 0;
	if (!keep && job->id && rm_engine_remove(dl->d, job->id, err) < 0)
		ret = rm_error_wrap(err, "could not remove container '%s'", job->name);
	free(job->id);
	free(job->name);
	free(job);
	return ret;
}

static int docker_sweep(void *state, rm_error *err)
{
	struct docker_launcher *dl = state;
	char *label = rm_xasprintf("run_models.run=%s", dl->cfg.run_id);
	char **ids = NULL;
	size_t n = 0;
	int ret = rm_engine_list_by_label(dl->d, label, &ids, &n, err);

	for (size_t i = 0; i < n; i++) { /* n is 0 when the listing failed */
		rm_error rerr = RM_ERROR_INIT;
		if (rm_engine_remove(dl->d, ids[i], &rerr) < 0)
			ret = rm_error_set(err, rerr.kind, "could not remove container %s: %s",
					   ids[i], rm_error_text(&rerr));
	}
	if (ret < 0)
		rm_error_wrap(err,
			      "containers labelled %s may be left: remove them with '%s rm -f "
			      "$(%s ps -aq --filter label=%s)' once the engine answers (the "
			      "next run on this host removes them too)",
			      label, rm_launcher__docker_cli(dl), rm_launcher__docker_cli(dl),
			      label);
	rm_strv_free(ids);
	free(label);
	return ret;
}

/* Whether a container's labels name a runner on this host that is gone. */
static int runner_gone(const struct docker_launcher *dl, json_t *labels)
{
	const char *host = json_string_value(json_object_get(labels, "run_models.host"));
	const char *pid = json_string_value(json_object_get(labels, "run_models.pid"));
	const char *start = json_string_value(json_object_get(labels, "run_models.pid_start"));
	long p;
	long long st = start ? strtoll(start, NULL, 10) : -1;

	/* Kept on purpose (--keep-alive), or another host's runner (a shared engine): its
	 * processes are not ours to judge. */
	if (json_object_get(labels, "run_models.keep") || !host || strcmp(host, dl->host) || !pid ||
	    rm_parse_long(pid, 1, 1L << 30, &p) < 0)
		return 0;
	return p != (long)getpid() && rm_process_gone(p, st);
}

/* Host names in the build mark: letters, digits, '-' and '.' (the rest becomes '-'). */
static void mark_host(const struct docker_launcher *dl, char *out, size_t size)
{
	size_t i;
	for (i = 0; dl->host[i] && i + 1 < size; i++) {
		char c = dl->host[i];
		out[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
				 (c >= '0' && c <= '9') || c == '.' || c == '-'
			     ? c
			     : '-';
	}
	out[i] = '\0';
}

char *rm_launcher__docker_build_mark(const struct docker_launcher *dl)
{
	char host[256];
	mark_host(dl, host, sizeof(host));
	return rm_xasprintf(RM_DOCKER_BUILD_MARK "%s.%s.%s", dl->pid, dl->pid_start, host);
}

/* The runner pid of a build container whose mark names a runner on this host that is gone,
 * else 0. */
static long build_runner_gone(const struct docker_launcher *dl, json_t *extra_hosts)
{
	char host[256];
	size_t i;
	json_t *h;

	mark_host(dl, host, sizeof(host));
	json_array_foreach (extra_hosts, i, h) {
		const char *v = json_string_value(h), *p;
		char *end;
		long pid;
		long long start;
		size_t hl = strlen(host);
		if (!v || !rm_starts_with(v, RM_DOCKER_BUILD_MARK))
			continue;
		p = v + strlen(RM_DOCKER_BUILD_MARK);
		pid = strtol(p, &end, 10);
		if (end == p || *end != '.')
			continue;
		p = end + 1;
		start = strtoll(p, &end, 10);
		if (end == p || *end != '.' || strncmp(end + 1, host, hl) || end[1 + hl] != ':')
			continue; /* another host's build: not ours to judge */
		if (pid > 0 && pid != (long)getpid() && rm_process_gone(pid, start))
			return pid;
	}
	return 0;
}

/* Build containers the engine kept when it died mid-build (it finds a RUN step's container
 * again when it comes back, and nothing removes it): marked by our builds in /etc/hosts,
 * removed once their runner is gone. Only containers on the host network without our
 * workload label are inspected (our builds use the host network). */
static int reap_builds(struct docker_launcher *dl, size_t *n, rm_error *err)
{
	json_t *list = NULL, *c;
	size_t i;
	int ret = 0;

	if (rm_engine_list_containers(dl->d, NULL, &list, err) < 0)
		return -1;
	json_array_foreach (list, i, c) {
		const char *id = json_string_value(json_object_get(c, "Id"));
		const char *net = json_string_value(
		    json_object_get(json_object_get(c, "HostConfig"), "NetworkMode"));
		json_t *info = NULL;
		rm_error rerr = RM_ERROR_INIT;
		long pid;

		if (!id || json_object_get(json_object_get(c, "Labels"), "run_models") || !net ||
		    strcmp(net, "host") || rm_engine_inspect(dl->d, id, &info, &rerr) < 0)
			continue;
		pid = build_runner_gone(
		    dl, json_object_get(json_object_get(info, "HostConfig"), "ExtraHosts"));
		json_decref(info);
		if (!pid)
			continue;
		if (rm_engine_remove(dl->d, id, &rerr) < 0) {
			ret = rm_error_set(err, rerr.kind,
					   "could not remove leftover build container %.12s: %s",
					   id, rm_error_text(&rerr));
			continue;
		}
		(*n)++;
		rm_info("removed leftover build container %.12s of a build whose runner (pid %ld) "
			"is gone",
			id, pid);
	}
	json_decref(list);
	return ret;
}

static int docker_reap(void *state, size_t *n, rm_error *err)
{
	struct docker_launcher *dl = state;
	json_t *list = NULL, *c;
	size_t i;
	int ret = 0;

	*n = 0;
	if (rm_engine_list_containers(dl->d, "run_models=1", &list, err) < 0)
		return -1;
	json_array_foreach (list, i, c) {
		json_t *labels = json_object_get(c, "Labels");
		const char *id = json_string_value(json_object_get(c, "Id"));
		const char *run = json_string_value(json_object_get(labels, "run_models.run"));
		const char *name =
		    json_string_value(json_array_get(json_object_get(c, "Names"), 0));
		rm_error rerr = RM_ERROR_INIT;
		if (!id || !runner_gone(dl, labels))
			continue;
		if (rm_engine_remove(dl->d, id, &rerr) < 0) {
			ret = rm_error_set(err, rerr.kind,
					   "could not remove leftover container %s: %s",
					   name ? name : id, rm_error_text(&rerr));
			continue;
		}
		(*n)++;
		rm_info("removed leftover container %s of run %s: its runner (pid %s) is gone",
			name ? name + (name[0] == '/') : id, run ? run : "?",
			json_string_value(json_object_get(labels, "run_models.pid")));
	}
	json_decref(list);
	if (reap_builds(dl, n, ret < 0 ? NULL : err) < 0)
		ret = -1;
	return ret;
}

static void docker_describe(void *state, const rm_workload *w, rm_launch_desc *out)
{
	struct docker_launcher *dl = state;

	out->deployment_type = "local";
	out->launcher = "docker";
	out->nnodes = 1;
	out->gpus_per_node = rm_workload_gpus(w, dl->cfg.ctx);
}

static void docker_plan(void *state, const rm_image_req *req, const rm_job_spec *spec, FILE *out)
{
	struct docker_launcher *dl = state;
	rm_launcher__docker_plan(dl->cfg.ctx, req, spec, out);
}

/* Whether this host has NVIDIA GPUs (the driver lists them), without running nvidia-smi. */
static int host_has_nvidia(void)
{
	DIR *dir = opendir("/proc/driver/nvidia/gpus");
	struct dirent *e;
	int n = 0;

	while (dir && (e = readdir(dir)))
		n += e->d_name[0] != '.';
	if (dir)
		closedir(dir);
	return n > 0;
}

/*
 * Podman: its own version (/version's Version is Podman's, never Docker's), rootful or
 * rootless, and what differs from Docker there (docs/engines.md); a WARN when this host's
 * NVIDIA GPUs have no CDI spec, which Podman needs to hand them to a container.
 */
static void podman_probe(rm_docker *d, json_t *ver, rm_probe *out)
{
	const char *api = json_string_value(json_object_get(ver, "ApiVersion"));
	int rootless = 0, cgroup_v1 = 0, nvidia = host_has_nvidia();
	size_t n_nv = 0;
	char *cdi;
	rm_context ctx;
	rm_error err = RM_ERROR_INIT;

	rm_engine_podman_facts(d, &rootless, &cgroup_v1);
	rm_context_detect(&ctx, "/sys", 0, &err); /* the CDI specs; no tool is run */
	for (size_t i = 0; i < ctx.n_cdi_devices; i++)
		n_nv += rm_starts_with(ctx.cdi_devices[i], RM_CDI_NVIDIA "=");
	out->status = nvidia && !n_nv ? RM_FINDING_WARN : RM_FINDING_OK;
	cdi = ctx.n_cdi_specs ? rm_xasprintf("%zu " RM_CDI_NVIDIA " device(s) in %zu CDI spec(s)",
					     n_nv, ctx.n_cdi_specs)
			      : rm_xstrdup("no CDI spec in /etc/cdi or /var/run/cdi");
	out->detail = rm_xasprintf(
	    "Podman %s, %s%s (Docker API %s) at %s; run_models speaks API %s; NVIDIA GPUs go to "
	    "containers as CDI devices: %s%s; not on Podman: Docker's NVIDIA runtime (--gpus), "
	    "removing build containers left by a dead engine%s (docs/engines.md)",
	    rm_engine_product_version(d), rootless ? "rootless" : "rootful",
	    rootless && cgroup_v1 ? " on cgroup v1" : "", api ? api : "unknown", rm_engine_host(d),
	    rm_engine_api_version(d), nvidia && !n_nv ? "this host's NVIDIA GPUs have none, " : "",
	    cdi,
	    rootless ? (cgroup_v1 ? ", --privileged host devices, docker_cpus (no cgroup of the "
				    "user's own)"
				  : ", --privileged host devices")
		     : "");
	free(cdi);
	if (out->status == RM_FINDING_WARN)
		out->action =
		    rm_xstrdup("sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml "
			       "(NVIDIA Container Toolkit), then 'nvidia-ctk cdi list'");
	rm_context_release(&ctx);
}

static void docker_probe(const char *host, rm_probe *out)
{
	rm_error err = RM_ERROR_INIT;
	rm_docker *d = NULL;
	json_t *ver = NULL;

	if (rm_engine_open(&d, host, &err) < 0) {
		/* The action says what to do, more concretely than the client's hint. */
		rm_error_hint(&err, NULL);
		out->status = RM_FINDING_FAIL;
		out->detail = rm_xstrdup(rm_error_text(&err));
		/* The socket is there but not ours; anything else: no engine answers there. */
		if (err.sys_errno == EACCES || err.sys_errno == EPERM)
			out->action = rm_xstrdup("add your user to the docker group (sudo usermod "
						 "-aG docker $USER, then log in again), or run as "
						 "root");
		else if (err.kind == RM_ERR_USAGE)
			out->action = rm_xstrdup(
			    "set DOCKER_HOST to unix:///path/to/docker.sock or tcp://host:port");
		else
			out->action =
			    rm_xstrdup("start the engine (sudo systemctl start docker, or "
				       "dockerd), or set DOCKER_HOST to the address of a "
				       "running one");
		return;
	}
	if (rm_engine_version(d, &ver, &err) < 0) {
		out->status = RM_FINDING_WARN;
		out->detail =
		    rm_xasprintf("the engine at %s answers /_ping (API %s) but not /version: %s",
				 rm_engine_host(d), rm_engine_api_version(d), rm_error_text(&err));
		out->action = rm_xstrdup("check the engine's log (journalctl -u docker)");
	} else if (rm_engine_get_kind(d) == RM_ENGINE_PODMAN) {
		podman_probe(d, ver, out);
	} else {
		const char *v = json_string_value(json_object_get(ver, "Version"));
		const char *api = json_string_value(json_object_get(ver, "ApiVersion"));

		out->status = RM_FINDING_OK;
		out->detail = rm_xasprintf("engine %s (API %s) at %s; run_models speaks API %s",
					   v ? v : "unknown", api ? api : "unknown",
					   rm_engine_host(d), rm_engine_api_version(d));
	}
	json_decref(ver);
	rm_engine_close(d);
}

static int docker_image_facts(void *state, const char *image, json_t **facts, rm_error *err)
{
	struct docker_launcher *dl = state;
	json_t *in = NULL;

	*facts = NULL;
	if (!dl->d)
		return rm_error_set(err, RM_ERR_DOCKER, "no engine (a dry run)");
	if (rm_engine_image_inspect(dl->d, image, &in, err) < 0)
		return -1;
	*facts = json_pack("{s:O?, s:O?, s:O?}", "id", json_object_get(in, "Id"), "repo_digests",
			   json_object_get(in, "RepoDigests"), "env",
			   json_object_get(json_object_get(in, "Config"), "Env"));
	json_decref(in);
	return 0;
}

const rm_launcher_ops rm_launcher_docker = {
    .name = "docker",
    .claims = docker_claims,
    .open = docker_open,
    .close = docker_close,
    .where = docker_where,
    .prepare = rm_launcher__docker_prepare,
    .start = docker_start,
    .stream = docker_stream,
    .stop = docker_stop,
    .wait = docker_wait,
    .fetch = docker_fetch,
    .cleanup = docker_cleanup,
    .sweep = docker_sweep,
    .reap = docker_reap,
    .describe = docker_describe,
    .plan = docker_plan,
    .probe = docker_probe,
    .engine = docker_engine,
    .image_facts = docker_image_facts,
};
