/*
 * SLURM submission (see slurm_launcher.h): the job file every task reads, the batch scripts
 * kept beside the logs, sbatch (one job per workload, or one array of one-node workloads),
 * and inside an allocation the script run with bash. Stopping is scancel (SIGTERM to the
 * script's srun inside an allocation); each task's node-run then removes its container.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "slurm_launcher.h"
#include "rm/util.h"

#define MAX_ARRAY	   1000 /* SLURM's default MaxArraySize is 1001 */
#define MAX_LINKED_NODES   64
#define CLEANUP_WAIT	   60.0 /* after scancel: KillWait (30 s by default) and more */
#define CLEANUP_WAIT_SHORT 15.0 /* the same once interrupted */

extern char **environ;

void rm_launcher__slurm_sub_release(struct slurm_sub *s)
{
	free(s->name);
	free(s->key);
	free(s->log_base);
	free(s->batch_log);
	free(s->script);
	free(s->steps);
	free(s->image_tar);
	free(s->image_id);
	memset(s, 0, sizeof(*s));
}

static const char *base_name(const char *p)
{
	const char *slash = strrchr(p, '/');
	return slash ? slash + 1 : p;
}

void rm_launcher__slurm_names(const struct slurm_launcher *sl, const rm_job_spec *spec, char **key,
			      char **log_base)
{
	char *prefix = rm_xasprintf("run_models-%s-", sl->cfg.run_id);
	const char *live = spec->log_file ? base_name(spec->log_file) : NULL;

	*key = rm_xstrdup(rm_starts_with(spec->name, prefix) ? spec->name + strlen(prefix)
							     : spec->name);
	if (live && rm_ends_with(live, ".live.log")) {
		*log_base = rm_xasprintf("%s/%.*s", sl->log_dir,
					 (int)(strlen(live) - strlen(".live.log")), live);
	} else {
		char *safe = rm_file_safe(spec->w->model_name);
		*log_base = rm_xasprintf("%s/%s.%s", sl->log_dir, safe, sl->cfg.run_id);
		free(safe);
	}
	free(prefix);
}

/* ---- the job file (rm_job_doc, rm/workload.h) ---- */

static char **strings(const char *const *v, size_t n, int paths)
{
	char **a = rm_xcalloc(1, sizeof(*a));
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		char *abs = NULL;
		/* A file given relative to the submit folder is read on the nodes from --chdir,
		 * the registry folder: make it absolute. */
		if (paths == 1 || (paths == 2 && v[i][0] == '@')) {
			const char *p = paths == 2 ? v[i] + 1 : v[i];
			char *real = realpath(p, NULL);
			abs = rm_xasprintf("%s%s", paths == 2 ? "@" : "", real ? real : p);
			free(real);
		}
		a = rm_strv_push(a, &k, abs ? abs : v[i]);
		free(abs);
	}
	return a;
}

static rm_job_doc *job_doc(struct slurm_launcher *sl)
{
	const rm_launcher_config *c = &sl->cfg;
	rm_job_doc *d = &sl->doc;

	if (d->run_id)
		return d;
	d->schema = RM_WORKLOAD_SCHEMA;
	d->run_id = rm_xstrdup(c->run_id);
	d->root = rm_xstrdup(sl->root);
	d->log_dir = rm_xstrdup(sl->log_dir);
	d->context_files = strings(c->context_files, c->n_context_files, 1);
	d->contexts = strings(c->contexts, c->n_contexts, 2);
	return d;
}

/* The image a node runs: a local build by its id (never pulled: no registry has it), else
 * the reference, pulled when the node's engine lacks it. */
static void add_workload(struct slurm_launcher *sl, const rm_job_spec *spec,
			 const struct slurm_sub *sub)
{
	const char *image = spec->w->image, *id = NULL;
	rm_workload w;

	for (size_t i = 0; i < sl->n_imgs && !id; i++)
		if (!strcmp(sl->img_names[i], image))
			id = sl->img_ids[i];
	rm_workload_copy(&w, spec->w);
	rm_workload_set_image(&w, id ? id : image);
	rm_job_doc_add(job_doc(sl), sub->key, &w, id == NULL, sub->log_base);
	rm_workload_release(&w);
}

static int write_job_file(struct slurm_launcher *sl, rm_error *err)
{
	json_t *doc = rm_job_doc_to_json(job_doc(sl));
	char *text = json_dumps(doc, JSON_INDENT(1));
	int ret = rm_write_file_atomic(sl->job_file, text, strlen(text), 0600, err);

	free(text);
	json_decref(doc);
	return ret;
}

/* ---- the batch script ---- */

int rm_launcher__slurm_script_for(struct slurm_launcher *sl, const rm_job_spec *const *specs,
				  const struct slurm_sub *subs, size_t n, const char *batch_log,
				  char **text, rm_error *err)
{
	rm_slurm_task *tasks;
	rm_slurm_conf sc;
	rm_dist_conf dc;
	char *argv[] = {sl->self,     (char *)"node-run",   (char *)"--job",
			sl->job_file, (char *)"--workload", (char *)RM_SLURM_MODEL_WORD,
			NULL};
	char *name = n > 1 ? rm_xasprintf("rm-array-%zu", n)
			   : rm_xasprintf("rm-%s", base_name(subs[0].log_base));
	char *what =
	    n > 1 ? rm_xasprintf("%zu workloads, one array task each", n)
		  : rm_xasprintf("model '%s' (workload %s)", specs[0]->w->model_name, subs[0].key);
	int ret;

	if (rm_launcher__slurm_conf_for(sl, specs[0]->w, &sc, &dc, err) < 0) {
		free(name);
		free(what);
		return -1;
	}
	tasks = rm_xcalloc(n, sizeof(*tasks));
	/* The job name without the run id: what squeue shows. */
	if (n == 1 && strchr(name, '.'))
		*strchr(name, '.') = '\0';
	for (size_t i = 0; i < n; i++)
		tasks[i] = (rm_slurm_task){subs[i].key, base_name(subs[i].log_base)};
	rm_slurm_job job = {.job_name = name,
			    .log_dir = sl->log_dir,
			    .workdir = sl->root,
			    .batch_log = batch_log,
			    .sc = &sc,
			    .dc = &dc,
			    .gpus_per_node = rm_launcher__slurm_gpus_per_node(sl, specs[0]->w),
			    .tasks = tasks,
			    .n_tasks = n,
			    .task_argv = argv,
			    .comment = sl->comment,
			    .what = what};
	ret = rm_slurm_script(&job, text, err);
	rm_slurm_conf_release(&sc);
	rm_dist_conf_release(&dc);
	free(tasks);
	free(name);
	free(what);
	return ret;
}

/* The nodes of w's job (1 when its settings cannot be read: its start then says why). */
static long nodes_of(const struct slurm_launcher *sl, const rm_workload *w)
{
	rm_slurm_conf sc;
	rm_dist_conf dc;
	rm_error err = RM_ERROR_INIT;
	long n = 1;

	if (rm_launcher__slurm_conf_for(sl, w, &sc, &dc, &err) == 0) {
		n = sc.nodes;
		rm_slurm_conf_release(&sc);
		rm_dist_conf_release(&dc);
	}
	return n;
}

/* A workload that can share a job array: one node, and no slurm or distributed settings of
 * its card's own (the array's are the context's). */
static int arrayable(const struct slurm_launcher *sl, const rm_workload *w)
{
	return !(w->model && (w->model->slurm || w->model->distributed)) && nodes_of(sl, w) == 1;
}

/* Names, script and submission of specs[0..n) as one job (an array when n > 1). */
static int submit_group(struct slurm_launcher *sl, const rm_job_spec *const *specs, size_t n,
			rm_error *err)
{
	struct slurm_sub *subs = rm_xcalloc(n, sizeof(*subs));
	char *text = NULL, *script, *batch_log;
	long job_id = 0;
	int ret = -1;

	for (size_t i = 0; i < n; i++) {
		subs[i].name = rm_xstrdup(specs[i]->name);
		rm_launcher__slurm_names(sl, specs[i], &subs[i].key, &subs[i].log_base);
	}
	if (n == 1) {
		script = rm_xasprintf("%s.sbatch", subs[0].log_base);
		batch_log = rm_xasprintf("%s.batch.log", subs[0].log_base);
	} else {
		script = rm_xasprintf("%s/%s.array%zu.sbatch", sl->log_dir, sl->cfg.run_id,
				      ++sl->n_arrays);
		batch_log = rm_xasprintf("%s/%s.array%zu.task%%a.batch.log", sl->log_dir,
					 sl->cfg.run_id, sl->n_arrays);
	}
	if (rm_launcher__slurm_script_for(sl, specs, subs, n, batch_log, &text, err) < 0 ||
	    rm_write_file_atomic(script, text, strlen(text), 0644, err) < 0 ||
	    rm_slurm_submit(script, &job_id, err) < 0)
		goto out;
	rm_info("submitted slurm job %ld (%zu workload(s)): %s", job_id, n, script);
	sl->subs = rm_xrealloc(sl->subs, (sl->n_subs + n) * sizeof(*sl->subs));
	for (size_t i = 0; i < n; i++) {
		char task[32];
		snprintf(task, sizeof(task), "%zu", i);
		subs[i].job_id = job_id;
		subs[i].task = n > 1 ? (long)i : -1;
		subs[i].nodes = nodes_of(sl, specs[i]->w);
		subs[i].script = rm_xstrdup(script);
		subs[i].batch_log = rm_xstrdup(batch_log);
		if (n > 1) { /* the task's own batch log: %a is its index */
			char *p = strstr(subs[i].batch_log, "%a");
			char *b = rm_xasprintf("%.*s%s%s", (int)(p - subs[i].batch_log),
					       subs[i].batch_log, task, p + 2);
			free(subs[i].batch_log);
			subs[i].batch_log = b;
		}
		sl->subs[sl->n_subs++] = subs[i];
		memset(&subs[i], 0, sizeof(subs[i]));
	}
	ret = 0;
out:
	for (size_t i = 0; i < n; i++)
		rm_launcher__slurm_sub_release(&subs[i]);
	free(subs);
	free(text);
	free(script);
	free(batch_log);
	return ret;
}

static int refuse_keep_alive(const rm_job_spec *spec, rm_error *err)
{
	if (!spec->w->set.keep_alive)
		return 0;
	return rm_error_set(err, RM_ERR_USAGE,
			    "--keep-alive keeps a container on this host; with a \"slurm\" context "
			    "the containers run on the nodes and end with their job");
}

/* Every workload at once: one-node workloads as arrays (one per GPU request, at most
 * MAX_ARRAY tasks each), others as jobs of their own. Inside an allocation nothing is
 * submitted: start runs each in turn. */
int rm_launcher__slurm_submit_all(void *state, const rm_job_spec *const *specs, size_t n,
				  rm_error *err)
{
	struct slurm_launcher *sl = state;
	size_t *done = rm_xcalloc(n + 1, sizeof(*done)), ndone = 0, n_tasks = 0;
	const rm_job_spec **group = rm_xcalloc(n + 1, sizeof(*group));
	int ret = 0;

	if (sl->alloc || !n)
		goto out;
	for (size_t i = 0; i < n && ret == 0; i++) {
		struct slurm_sub sub = {0};
		if (rm_launcher__slurm_runs_card(sl, specs[i]->w)) {
			done[i] = 1; /* its own job, submitted by start (slurm_card.c) */
			continue;
		}
		ret = refuse_keep_alive(specs[i], err);
		rm_launcher__slurm_names(sl, specs[i], &sub.key, &sub.log_base);
		add_workload(sl, specs[i], &sub);
		n_tasks++;
		rm_launcher__slurm_sub_release(&sub);
	}
	if (ret < 0 || (n_tasks && (ret = write_job_file(sl, err)) < 0))
		goto out;
	for (size_t i = 0; i < n && ret == 0; i++) {
		size_t g = 0;
		long gpn = rm_launcher__slurm_gpus_per_node(sl, specs[i]->w);
		if (done[i])
			continue;
		for (size_t j = i; j < n && g < MAX_ARRAY; j++) {
			if (done[j] || rm_launcher__slurm_gpus_per_node(sl, specs[j]->w) != gpn)
				continue;
			if (g && !arrayable(sl, specs[j]->w))
				continue; /* a job of its own, later */
			group[g++] = specs[j];
			done[j] = 1;
			ndone++;
			if (!arrayable(sl, specs[j]->w))
				break; /* a multi-node workload is a job of its own */
		}
		ret = submit_group(sl, group, g, err);
	}
out:
	free(done);
	free(group);
	return ret;
}

/* Stable names for the nodes' logs: "<model>.node<R>.log" -> this run's. */
static void link_node_logs(struct slurm_launcher *sl, const rm_job_spec *spec,
			   const struct slurm_sub *sub)
{
	const char *ll = spec->log_link;
	size_t stem;

	if (!ll || !rm_ends_with(ll, ".live.log"))
		return;
	stem = strlen(ll) - strlen(".live.log");
	for (long r = 0; r < sub->nodes && r < MAX_LINKED_NODES; r++) {
		char *link = rm_xasprintf("%.*s.node%ld.log", (int)stem, ll, r);
		char *target = rm_xasprintf("%s.node%ld.log", base_name(sub->log_base), r);
		char *tmp = rm_xasprintf("%s.%s.tmp", link, sl->cfg.run_id);
		unlink(tmp);
		if (symlink(target, tmp) != 0 || rename(tmp, link) != 0) {
			rm_warn_sys(errno, "cannot point '%s' at '%s'", link, target);
			unlink(tmp);
		}
		free(link);
		free(target);
		free(tmp);
	}
}

/* Inside an allocation: bash runs the script (its #SBATCH lines are comments there), in a
 * process group of its own, its output in the batch log. */
static int spawn_script(struct slurm_launcher *sl, rm_job *job, rm_error *err)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, dfl;
	char *argv[] = {(char *)"bash", job->sub.script, NULL};
	int rc;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, job->sub.batch_log,
					 O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	posix_spawn_file_actions_addchdir_np(&fa, sl->root);
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGINT);
	sigaddset(&dfl, SIGTERM);
	sigaddset(&dfl, SIGHUP);
	sigaddset(&dfl, SIGPIPE);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &dfl);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
					  POSIX_SPAWN_SETPGROUP);
	rc = posix_spawnp(&job->pid, "bash", &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (rc != 0)
		return rm_error_sys(err, RM_ERR_IO, rc, "cannot run 'bash %s'", job->sub.script);
	rm_info("running %s in allocation %ld (log %s)", job->sub.script, sl->alloc,
		job->sub.batch_log);
	return 0;
}

/* A workload submit_all did not submit: submitted (or, in an allocation, run) now. */
static int start_now(struct slurm_launcher *sl, const rm_job_spec *spec, rm_job *job, rm_error *err)
{
	struct slurm_sub *s = &job->sub;
	char *text = NULL;
	int ret = -1;

	s->name = rm_xstrdup(spec->name);
	s->task = -1;
	rm_launcher__slurm_names(sl, spec, &s->key, &s->log_base);
	s->script = rm_xasprintf("%s.sbatch", s->log_base);
	s->batch_log = rm_xasprintf("%s.batch.log", s->log_base);
	s->card = rm_launcher__slurm_runs_card(sl, spec->w);
	if (s->card) {
		s->steps = rm_xasprintf("%s.steps", s->log_base);
		if (rm_launcher__slurm_card_script(sl, spec, s, &text, err) < 0)
			goto out;
	} else {
		s->nodes = nodes_of(sl, spec->w);
		add_workload(sl, spec, s);
		if (write_job_file(sl, err) < 0 ||
		    rm_launcher__slurm_script_for(sl, &spec, s, 1, s->batch_log, &text, err) < 0)
			goto out;
	}
	if (rm_write_file_atomic(s->script, text, strlen(text), 0644, err) < 0)
		goto out;
	if (sl->alloc)
		ret = spawn_script(sl, job, err);
	else if ((ret = rm_slurm_submit(s->script, &s->job_id, err)) == 0)
		rm_info("submitted slurm job %ld: %s", s->job_id, s->script);
out:
	free(text);
	return ret;
}

int rm_launcher__slurm_start(void *state, const rm_job_spec *spec, rm_job **out, rm_error *err)
{
	struct slurm_launcher *sl = state;
	rm_job *job;

	if (refuse_keep_alive(spec, err) < 0)
		return -1;
	job = rm_xcalloc(1, sizeof(*job));
	job->sl = sl;
	job->spec = spec;
	job->fd[0] = job->fd[1] = -1;
	job->queued = 1;
	job->started = rm_now();
	for (size_t i = 0; i < sl->n_subs && !job->sub.name; i++)
		if (!strcmp(sl->subs[i].name, spec->name)) {
			job->sub = sl->subs[i];
			sl->subs[i] = sl->subs[--sl->n_subs];
		}
	if (!job->sub.name && start_now(sl, spec, job, err) < 0) {
		rm_launcher__slurm_sub_release(&job->sub);
		free(job);
		return -1;
	}
	if (!job->sub.card)
		link_node_logs(sl, spec, &job->sub);
	*out = job;
	return 0;
}

int rm_launcher__slurm_stop(void *state, rm_job *job, rm_error *err)
{
	(void)state;
	job->stopped = 1;
	if (job->pid > 0 && !job->reaped) {
		/* The tasks get SIGTERM and remove their containers; srun then ends. Before the
		 * step exists, SIGTERM to the script (srun kills a step it is starting). */
		int r =
		    rm_slurm_signal_step(job->sl->alloc, base_name(job->sub.log_base), "TERM", err);
		if (r <= 0)
			return r;
		return kill(-job->pid, SIGTERM) == 0 || errno == ESRCH
			   ? 0
			   : rm_error_sys(err, RM_ERR_IO, errno, "cannot stop 'bash %s'",
					  job->sub.script);
	}
	if (!job->sub.job_id)
		return 0;
	return rm_slurm_cancel(job->sub.job_id, job->sub.task, err);
}

/* After a stop: until the job has left the queue (its tasks have removed their containers
 * by then), within a deadline. */
static int wait_gone(rm_job *job, rm_error *err)
{
	double deadline = rm_now() + (rm_interrupt_pending() ? CLEANUP_WAIT_SHORT : CLEANUP_WAIT);
	rm_error qerr = RM_ERROR_INIT;

	while (job->queued && rm_now() < deadline) {
		rm_error_clear(&qerr);
		rm_launcher__slurm_check(job, &qerr);
		if (job->queued)
			rm_launcher__slurm_nap(0.2);
	}
	if (!job->queued)
		return 0;
	if (job->pid > 0) {
		kill(-job->pid, SIGKILL);
		return rm_error_set(err, RM_ERR_IO,
				    "'bash %s' did not end after SIGTERM: killed; its tasks may be "
				    "left on the allocation's nodes",
				    job->sub.script);
	}
	return rm_error_set(err, RM_ERR_IO,
			    "slurm job %ld is still in the queue after scancel; its tasks remove "
			    "their containers once SLURM stops them (check with squeue -j %ld)",
			    job->sub.job_id, job->sub.job_id);
}

int rm_launcher__slurm_cleanup(void *state, rm_job *job, int keep, rm_error *err)
{
	int ret = 0;

	(void)state;
	(void)keep; /* refused at start */
	if (!job)
		return 0;
	if (job->stopped && job->queued)
		ret = wait_gone(job, err);
	if (job->pid > 0 && !job->reaped)
		waitpid(job->pid, &job->wstatus, WNOHANG);
	for (int i = 0; i < 2; i++)
		if (job->fd[i] >= 0)
			close(job->fd[i]);
	if (job->sub.image_tar && !job->queued) /* every node has loaded it by now */
		unlink(job->sub.image_tar);
	rm_launcher__slurm_sub_release(&job->sub);
	free(job);
	return ret;
}
