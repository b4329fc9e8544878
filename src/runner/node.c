/*
 * run_models node-run: what each task of a SLURM job runs on its node (rm_node_run in
 * rm/runner.h). The workload comes from the job file the submitter wrote; the context is
 * detected on this node and the user's overrides applied on top, as a local run would; the
 * container runs through the Docker launcher (same spec, devices, scripts, labels), with the
 * job-wide variables of the batch script ($RM_SLURM_ENV) in its environment. Output goes to
 * stdout/stderr masked (srun writes them to the node's files); the verdict is left to the
 * submitter, which reads this node's result file.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "internal.h"
#include "rm/report.h"
#include "rm/util.h"

extern char **environ;

#define JOB_FILE_MAX ((size_t)16 << 20)

struct node {
	const rm_node_opts *o;
	json_t *doc, *w; /* the job file, this workload's entry */
	rm_registry reg;
	rm_context ctx;
	rm_launcher l;
	const rm_model *m;
	long rank;
	char *log_base;
	char **secrets;
	size_t n_secrets;
	rm_mask masks[2];
	/* for the result file */
	long exit_code;
	char *error;
	char *image_id;
	char *results_path, *results_tar;
};

static const char *jstr(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static int load_job(struct node *n, rm_error *err)
{
	char *text = NULL;
	json_error_t je;
	int r = rm_read_file(n->o->job_file, JOB_FILE_MAX, &text, NULL, err);

	if (r == 1)
		rm_error_set(err, RM_ERR_INPUT,
			     "no job file '%s' (is the log folder shared with "
			     "this node?)",
			     n->o->job_file);
	if (r != 0)
		return -1;
	n->doc = json_loads(text, 0, &je);
	free(text);
	if (!n->doc)
		return rm_error_set(err, RM_ERR_INPUT, "job file '%s': %s", n->o->job_file,
				    je.text);
	n->w = json_object_get(json_object_get(n->doc, "workloads"), n->o->workload);
	if (!jstr(n->w, "model") || !jstr(n->w, "image") || !jstr(n->w, "log_base") ||
	    !jstr(n->doc, "root") || !jstr(n->doc, "run_id"))
		return rm_error_set(err, RM_ERR_INPUT,
				    "job file '%s' has no complete workload '%s'", n->o->job_file,
				    n->o->workload);
	return 0;
}

/* This node's context: detected here, then the user's files and texts, then the batch
 * script's variables for the container. */
static int node_context(struct node *n, rm_error *err)
{
	json_t *files = json_object_get(n->doc, "context_files"), *texts, *v, *env = json_object();
	const char *names = getenv("RM_SLURM_ENV");
	char *copy = rm_xstrdup(names ? names : ""), *js;
	json_t *wrap;
	size_t i;
	int ret = -1;

	if (rm_context_detect(&n->ctx, n->o->sysfs_root ? n->o->sysfs_root : "/sys", 1, err) < 0)
		goto out;
	json_array_foreach (files, i, v)
		if (rm_context_apply_file(&n->ctx, json_string_value(v), err) < 0)
			goto out;
	texts = json_object_get(n->doc, "contexts");
	json_array_foreach (texts, i, v)
		if (rm_context_apply(&n->ctx, json_string_value(v), "--additional-context", err) <
		    0)
			goto out;
	for (char *w = copy, *end; *w; w = end) {
		end = w + strcspn(w, " ");
		if (*end)
			*end++ = '\0';
		if (*w && getenv(w))
			json_object_set_new(env, w, json_string(getenv(w)));
	}
	wrap = json_pack("{s:O}", "docker_env_vars", env);
	js = json_dumps(wrap, JSON_COMPACT);
	ret = rm_context_apply(&n->ctx, js, "RM_SLURM_ENV", err);
	json_decref(wrap);
	free(js);
out:
	json_decref(env);
	free(copy);
	return ret;
}

static void to_fd(void *ud, const char *data, size_t len)
{
	fflush(NULL);
	rm_write_all(*(int *)ud, data, len);
}

static void on_output(void *ud, int stream, const char *data, size_t len)
{
	struct node *n = ud;
	static int fds[2] = {STDOUT_FILENO, STDERR_FILENO};
	int i = stream == RM_STREAM_STDOUT ? 0 : 1;
	rm_mask_feed(&n->masks[i], data, len, to_fd, &fds[i]);
}

static int node_poll(void *ud)
{
	(void)ud;
	return rm_runner_signal() != 0;
}

/* rank 0: the multiple_results file copied off the container for the submitter. */
static void keep_results(struct node *n, rm_job *job)
{
	char *dir = rm_model_dir(n->m);
	rm_error err = RM_ERROR_INIT;
	FILE *f;

	n->results_path = n->m->multiple_results[0] == '/'
			      ? rm_xstrdup(n->m->multiple_results)
			      : rm_xasprintf("%s/%s/%s", RM_WORKSPACE, dir, n->m->multiple_results);
	n->results_tar = rm_xasprintf("%s.node0.results.tar", n->log_base);
	f = fopen(n->results_tar, "w");
	if (!f || n->l.ops->fetch(n->l.state, job, n->results_path, fileno(f), (size_t)32 << 20,
				  &err) < 0) {
		rm_warn("cannot copy '%s' out of the container: %s", n->results_path,
			f ? err.msg : "cannot create the file");
		free(n->results_tar);
		n->results_tar = NULL;
	}
	if (f)
		fclose(f);
	free(dir);
}

/* The container: start, stream, wait; stopped and removed on a signal. */
static int run_container(struct node *n, rm_spec_in *in, rm_error *err)
{
	/* Unique on an engine that several clusters (or "nodes") share: job ids repeat
	 * across clusters, run ids do not. */
	const char *jid = getenv("SLURM_JOB_ID");
	char *name = rm_xasprintf("run_models-%s-%s-%s-n%ld", jstr(n->doc, "run_id"),
				  jid ? jid : "0", n->o->workload, n->rank);
	rm_job_spec spec = {.in = in,
			    .name = name,
			    .on_output = on_output,
			    .poll = node_poll,
			    .cancelled = node_poll,
			    .ud = n};
	rm_job *job = NULL;
	rm_error cerr = RM_ERROR_INIT;
	long status = -1;
	int ret = -1;

	if (n->l.ops->start(n->l.state, &spec, &job, err) < 0)
		goto out;
	if (n->l.ops->stream(n->l.state, job, err) == RM_LAUNCH_STOPPED || rm_runner_signal()) {
		rm_warn("%s on rank %ld: stopping and removing container %s",
			rm_runner__signal_name(), n->rank, name);
		n->l.ops->stop(n->l.state, job, &cerr);
		rm_error_set(err, RM_ERR_NONE, "interrupted by %s", rm_runner__signal_name());
		goto out;
	}
	int wrc = n->l.ops->wait(n->l.state, job, 0, &status, err);
	if (wrc == RM_LAUNCH_FAILED && status >= 0) { /* an OOM kill: its code, and why */
		rm_warn("rank %ld: %s", n->rank, err->msg);
		rm_error_clear(err);
	} else if (wrc < 0) {
		goto out;
	}
	n->exit_code = status;
	if (n->rank == 0 && n->m->multiple_results && status == 0)
		keep_results(n, job);
	ret = 0;
out:
	for (int i = 0; i < 2; i++)
		rm_mask_flush(&n->masks[i], to_fd,
			      i ? &(int){STDERR_FILENO} : &(int){STDOUT_FILENO});
	if (job && n->l.ops->cleanup(n->l.state, job, 0, &cerr) < 0)
		rm_warn("%s", cerr.msg);
	free(name);
	return ret;
}

static int prepare_image(struct node *n, rm_error *err)
{
	const char *image = jstr(n->w, "image");
	rm_image_req req = {.model = n->m, .image = image}; /* df NULL: run it as it is */
	int cached = 0;

	if (n->l.ops->prepare(n->l.state, &req, &n->image_id, &cached, err) < 0) {
		if (!json_is_true(json_object_get(n->w, "pull")))
			rm_error_wrap(err, "the image was built on the submit host and is not on "
					   "this node's engine (build and push it with run_models "
					   "build --registry, then run --manifest)");
		return -1;
	}
	return 0;
}

static int node_main(struct node *n, rm_error *err)
{
	const char *run_id = jstr(n->doc, "run_id");
	rm_launcher_config lc = {.ctx = &n->ctx, .run_id = run_id};
	const char *cli_tunableop = jstr(n->doc, "tunableop"), *tunableop;
	char *tdir = NULL;
	size_t reaped = 0;
	int ret = -1;

	if (rm_registry_load(&n->reg, jstr(n->doc, "root"), err) < 0)
		return -1;
	if (!(n->m = rm_registry_find(&n->reg, jstr(n->w, "model"))))
		return rm_error_set(err, RM_ERR_INPUT, "model '%s' is not in '%s/models.json'",
				    jstr(n->w, "model"), jstr(n->doc, "root"));
	if (node_context(n, err) < 0 || rm_launcher_open_named(&n->l, "docker", &lc, err) < 0)
		return -1;
	if (n->l.ops->reap(n->l.state, &reaped, err) < 0)
		rm_warn("%s", err->msg);
	rm_error_clear(err);
	if (n->m->n_gpus > 0 && n->m->n_gpus > n->ctx.n_gpus)
		return rm_error_set(
		    err, RM_ERR_INPUT, "model '%s' needs %ld GPUs and node %s has %ld", n->m->name,
		    n->m->n_gpus, getenv("SLURMD_NODENAME") ? getenv("SLURMD_NODENAME") : "?",
		    n->ctx.n_gpus);
	if (prepare_image(n, err) < 0)
		return -1;
	tunableop = rm_tunableop_effective(n->m, cli_tunableop);
	if (tunableop && !strcmp(tunableop, "on")) {
		char *safe = rm_file_safe(n->m->name);
		tdir = rm_xasprintf("%s/tunableop/%s", jstr(n->doc, "log_dir"), safe);
		free(safe);
		if (rm_mkdirs(tdir, err) < 0)
			goto out;
	}
	rm_spec_in in = {n->m,
			 &n->ctx,
			 jstr(n->w, "extra_args"),
			 n->image_id,
			 run_id,
			 (const char *const *)environ,
			 n->m->n_gpus < 0 ? n->ctx.n_gpus : n->m->n_gpus,
			 tunableop,
			 tdir,
			 (long long)json_integer_value(json_object_get(n->doc, "shm_size")),
			 0,
			 NULL};
	if (n->m->data && *n->m->data)
		rm_warn("model '%s' names data '%s': data providers are not set up on SLURM nodes "
			"yet; the container gets none",
			n->m->name, n->m->data);
	ret = run_container(n, &in, err);
out:
	free(tdir);
	return ret;
}

static void write_result(struct node *n)
{
	char *path = rm_xasprintf("%s.node%ld.result.json", n->log_base, n->rank);
	const char *node = getenv("SLURMD_NODENAME");
	json_t *doc = json_pack("{s:I, s:s?, s:s?, s:s?, s:s?, s:s?}", "rank", (json_int_t)n->rank,
				"node", node, "error", n->error, "image_id", n->image_id,
				"results_path", n->results_path, "results_tar", n->results_tar);
	char *text;
	rm_error err = RM_ERROR_INIT;

	json_object_set_new(doc, "exit_code",
			    n->exit_code >= 0 ? json_integer(n->exit_code) : json_null());
	text = json_dumps(doc, JSON_COMPACT);
	if (rm_write_file_atomic(path, text, strlen(text), 0644, &err) < 0)
		rm_warn("%s", err.msg);
	free(text);
	json_decref(doc);
	free(path);
}

int rm_node_run(const rm_node_opts *o, rm_error *err)
{
	struct node n;
	const char *rank = getenv("NODE_RANK") ? getenv("NODE_RANK") : getenv("SLURM_NODEID");
	int rc = 1;

	memset(&n, 0, sizeof(n));
	n.o = o;
	n.exit_code = -1;
	if (!rank || rm_parse_long(rank, 0, 1L << 30, &n.rank) < 0)
		n.rank = 0;
	n.secrets = rm_secrets_from_env(environ, &n.n_secrets);
	for (int i = 0; i < 2; i++)
		rm_mask_init(&n.masks[i], (const char *const *)n.secrets, n.n_secrets);
	rm_interrupt_set(rm_runner__cancelled, NULL);
	if (load_job(&n, err) < 0)
		goto done; /* nowhere to write a result: the message goes to the node's .err */
	n.log_base = rm_xstrdup(jstr(n.w, "log_base"));
	if (node_main(&n, err) == 0) {
		rc = (int)(n.exit_code >= 0 && n.exit_code < 256 ? n.exit_code : 1);
	} else if (rm_runner_signal()) {
		rc = 128 + rm_runner_signal(); /* the job was stopped: SLURM's state says so */
	} else {
		rm_mask m;
		rm_mask_init(&m, (const char *const *)n.secrets, n.n_secrets);
		n.error = rm_mask_string(&m, err->msg);
		rm_mask_release(&m);
		rc = 1;
	}
	write_result(&n);
	if (rc == 0 || n.exit_code >= 0)
		err->msg[0] = '\0'; /* the script's own failure: its output said it all */
done:
	rm_interrupt_set(NULL, NULL);
	rm_launcher_close(&n.l);
	for (int i = 0; i < 2; i++)
		rm_mask_release(&n.masks[i]);
	rm_strv_free(n.secrets);
	rm_context_release(&n.ctx);
	rm_registry_release(&n.reg);
	json_decref(n.doc);
	free(n.log_base);
	free(n.error);
	free(n.image_id);
	free(n.results_path);
	free(n.results_tar);
	return rc;
}
