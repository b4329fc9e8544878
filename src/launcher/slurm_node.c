/*
 * run_models node-run: what each task of a SLURM job runs on its node (rm_slurm_node_run in
 * rm/launcher.h). The workload comes from the job document the submitter wrote (read back
 * through rm_job_doc_from_json, rm/workload.h); the context is detected on this node and the
 * user's overrides applied on top, as the submitting run did; the container runs through the
 * Docker launcher, rendered from the same workload for this node, with the job-wide
 * variables of the batch script ($RM_SLURM_ENV) added to its environment. Output goes to
 * stdout/stderr masked (srun writes them to the node's files); the verdict is left to the
 * submitter, which reads this node's result file.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "rm/launcher.h"
#include "rm/doctor.h"
#include "rm/telemetry.h"
#include "rm/util.h"
#include "rm/workload.h"

extern char **environ;

#define JOB_FILE_MAX ((size_t)16 << 20)

struct node {
	const rm_slurm_node_opts *o;
	rm_job_doc doc;	       /* the job file */
	const rm_job_entry *e; /* this workload's entry */
	rm_workload w;	       /* its workload, bound to the model, with this node's image */
	rm_registry reg;
	rm_context ctx;
	rm_launcher l;
	const rm_model *m;
	long rank;
	char **secrets;
	size_t n_secrets;
	rm_mask masks[2];
	/* for the result file */
	long exit_code;
	char *error;
	char *image_id;
	char *results_path, *results_tar;
	rm_telem_summary telem; /* this node's GPU telemetry */
	int have_telem;
	int preflight_failed; /* the pre-flight check refused this node's GPUs */
	json_t *provenance;   /* this node's (rm/doctor.h), masked */
};

static int load_job(struct node *n, rm_error *err)
{
	char *text = NULL;
	json_error_t je;
	json_t *doc;
	int r = rm_read_file(n->o->job_file, JOB_FILE_MAX, &text, NULL, err);

	if (r < 0 && rm_error_missing(err))
		rm_error_set(err, RM_ERR_INPUT,
			     "no job file '%s' (is the log folder shared with "
			     "this node?)",
			     n->o->job_file);
	if (r != 0)
		return -1;
	doc = json_loads(text, 0, &je);
	free(text);
	if (!doc)
		return rm_error_set(err, RM_ERR_INPUT, "job file '%s': %s", n->o->job_file,
				    je.text);
	r = rm_job_doc_from_json(&n->doc, doc, n->o->job_file, err);
	json_decref(doc);
	if (r < 0)
		return -1;
	if (!(n->e = rm_job_doc_find(&n->doc, n->o->workload)))
		return rm_error_set(err, RM_ERR_INPUT, "job file '%s' has no workload '%s'",
				    n->o->job_file, n->o->workload);
	return 0;
}

/* This node's context: detected here, then the user's files and texts. */
static int node_context(struct node *n, rm_error *err)
{
	const char *sysfs = n->o->sysfs_root ? n->o->sysfs_root : "/sys";

	if (rm_context_detect(&n->ctx, sysfs, 1, err) < 0)
		return -1;
	for (char **f = n->doc.context_files; f && *f; f++)
		if (rm_context_apply_file(&n->ctx, *f, err) < 0)
			return -1;
	for (char **t = n->doc.contexts; t && *t; t++)
		if (rm_context_apply(&n->ctx, *t, "--additional-context", err) < 0)
			return -1;
	rm_context_host_devices(&n->ctx);
	return 0;
}

/* The batch script's job-wide variables ($RM_SLURM_ENV names them) join the workload's
 * environment, after the user's docker_env_vars. */
static void job_env(struct node *n)
{
	const char *names = getenv("RM_SLURM_ENV");
	char *copy = rm_xstrdup(names ? names : "");

	for (char *w = copy, *end; *w; w = end) {
		end = w + strcspn(w, " ");
		if (*end)
			*end++ = '\0';
		if (!*w || !getenv(w))
			continue;
		size_t i = 0;
		while (i < n->w.n_env && strcmp(n->w.env[i].key, w))
			i++;
		if (i == n->w.n_env) {
			n->w.env = rm_xrealloc(n->w.env, (n->w.n_env + 1) * sizeof(*n->w.env));
			n->w.env[n->w.n_env++].key = rm_xstrdup(w);
		} else {
			free(n->w.env[i].value);
		}
		n->w.env[i].value = rm_xstrdup(getenv(w));
	}
	free(copy);
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

/* rank 0: the multiple_results file copied off the container for the submitter. */
static void keep_results(struct node *n, rm_job *job)
{
	char *dir = rm_model_dir(n->m);
	rm_error err = RM_ERROR_INIT;
	FILE *f;

	n->results_path = n->m->multiple_results[0] == '/'
			      ? rm_xstrdup(n->m->multiple_results)
			      : rm_xasprintf("%s/%s/%s", RM_WORKSPACE, dir, n->m->multiple_results);
	n->results_tar = rm_xasprintf("%s.node0.results.tar", n->e->log_base);
	f = fopen(n->results_tar, "w");
	if (!f || n->l.ops->fetch(n->l.state, job, n->results_path, fileno(f), (size_t)32 << 20,
				  &err) < 0) {
		rm_warn("cannot copy '%s' out of the container: %s", n->results_path,
			f ? rm_error_text(&err) : "cannot create the file");
		free(n->results_tar);
		n->results_tar = NULL;
	}
	if (f)
		fclose(f);
	free(dir);
}

/* Every rank: the tools' outputs beside this rank's log ("<log base>.node<R>.tools"), and a
 * failed tool script as this rank's error, which the submitter's reason quotes. */
static void collect_tools(struct node *n, rm_job *job)
{
	char *dest = rm_xasprintf("%s.node%ld.tools", n->e->log_base, n->rank);
	rm_tools_verdict v;
	rm_error err = RM_ERROR_INIT;

	if (rm_launcher_tools_collect(&n->l, job, &n->w, dest, &v, &err) < 0)
		rm_warn("rank %ld: %s", n->rank, rm_error_text(&err));
	if (v.outputs) {
		printf("run_models: rank %ld: the tools' outputs are in %s\n", n->rank, v.outputs);
		fflush(stdout);
	}
	if (v.failure && (!v.post || v.model_rc == 0) && !n->error) {
		rm_mask m;
		rm_mask_init(&m, (const char *const *)n->secrets, n->n_secrets);
		n->error = rm_mask_string(&m, v.failure);
		rm_mask_release(&m);
	}
	rm_tools_verdict_release(&v);
	free(dest);
}

/* The container's name: unique on an engine that several clusters (or "nodes") share: job
 * ids repeat across clusters, run ids do not. */
static char *container_name(struct node *n)
{
	const char *jid = getenv("SLURM_JOB_ID");

	return rm_xasprintf("run_models-%s-%s-%s-n%ld", n->doc.run_id, jid ? jid : "0",
			    n->o->workload, n->rank);
}

/* This node's GPUs of the workload, sampled while its container runs (rm/telemetry.h),
 * into "<log base>.node<R>.telemetry.csv"; the figures go to the result file, where the
 * submitter merges every node's. NULL when nothing is sampled (stderr says why). */
static rm_telem *node_telemetry(struct node *n)
{
	int wanted = n->w.set.telemetry == RM_TELEMETRY_ON;
	rm_error err = RM_ERROR_INIT;
	long *gpus = NULL;
	size_t ng = 0;
	rm_telem *t = NULL;
	char *path;
	int fd;

	if (n->w.set.telemetry == RM_TELEMETRY_OFF)
		return NULL;
	if (rm_workload_gpu_indexes(&n->w, &n->ctx, &gpus, &ng, &err) < 0 || !ng) {
		if (wanted)
			rm_warn("--telemetry on, but nothing is sampled on rank %ld: %s", n->rank,
				ng ? rm_error_text(&err) : "no GPU");
		free(gpus);
		return NULL;
	}
	path = rm_xasprintf("%s.node%ld.telemetry.csv", n->e->log_base, n->rank);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	rm_telem_opts to = {.vendor = n->ctx.gpu_vendor,
			    .sysfs_root = n->o->sysfs_root,
			    .ctx = &n->ctx,
			    .gpus = gpus,
			    .n_gpus = ng,
			    .series = fd >= 0 ? fdopen(fd, "w") : NULL};
	if (fd >= 0 && !to.series)
		close(fd);
	if (rm_telem_start(&t, &to, &err) < 0) {
		unlink(path);
		if (wanted)
			rm_warn("--telemetry on, but nothing is sampled on rank %ld: %s", n->rank,
				rm_error_text(&err));
		t = NULL;
	}
	free(path);
	free(gpus);
	return t;
}

static void node_telemetry_stop(struct node *n, rm_telem *t)
{
	rm_error err = RM_ERROR_INIT;

	if (!t)
		return;
	if (rm_telem_stop(t, &n->telem, &err) < 0)
		rm_warn("telemetry on rank %ld: %s", n->rank, rm_error_text(&err));
	n->have_telem = 1;
}

/* The container: start, stream, wait; stopped and removed on a signal. */
static int run_container(struct node *n, rm_error *err)
{
	char *name = container_name(n);
	rm_job_spec spec = {.w = &n->w,
			    .name = name,
			    .on_output = on_output,
			    .poll = rm_signal_cancelled,
			    .cancelled = rm_signal_cancelled,
			    .ud = n};
	rm_job *job = NULL;
	rm_error cerr = RM_ERROR_INIT;
	rm_telem *telem = NULL;
	long status = -1;
	int ret = -1;

	if (n->l.ops->start(n->l.state, &spec, &job, err) < 0)
		goto out;
	telem = node_telemetry(n);
	if (n->l.ops->stream(n->l.state, job, err) == RM_LAUNCH_STOPPED || rm_signal_received()) {
		rm_warn("%s on rank %ld: stopping and removing container %s", rm_signal_name(),
			n->rank, name);
		n->l.ops->stop(n->l.state, job, &cerr);
		rm_error_set(err, RM_ERR_NONE, "interrupted by %s", rm_signal_name());
		goto out;
	}
	int wrc = n->l.ops->wait(n->l.state, job, 0, &status, err);
	if (wrc == RM_LAUNCH_FAILED && status >= 0) { /* an OOM kill: its code, and why */
		rm_warn("rank %ld: %s", n->rank, rm_error_text(err));
		rm_error_clear(err);
	} else if (wrc < 0) {
		goto out;
	}
	node_telemetry_stop(n, telem);
	telem = NULL;
	n->exit_code = status;
	if (n->rank == 0 && n->m->multiple_results && status == 0)
		keep_results(n, job);
	collect_tools(n, job);
	ret = 0;
out:
	node_telemetry_stop(n, telem);
	for (int i = 0; i < 2; i++)
		rm_mask_flush(&n->masks[i], to_fd,
			      i ? &(int){STDERR_FILENO} : &(int){STDOUT_FILENO});
	if (job && n->l.ops->cleanup(n->l.state, job, 0, &cerr) < 0)
		rm_warn("%s", rm_error_text(&cerr));
	free(name);
	return ret;
}

/* With --preflight on, this node's GPUs of the workload checked before its container
 * starts (rm/doctor.h): a finding that would spoil the number fails the node, named, and
 * the result file says "preflight" (the submitter may try the job again: --retries). */
static int node_preflight(struct node *n, rm_error *err)
{
	const char *where = getenv("SLURMD_NODENAME");
	rm_finding *v = NULL;
	size_t nv = 0;
	rm_buf why = RM_BUF_INIT(1 << 14);
	int ret = 0;

	rm_workload_preflight(&n->w, &n->ctx, n->o->sysfs_root, &v, &nv);
	for (size_t i = 0; i < nv; i++)
		if (v[i].status == RM_FINDING_FAIL)
			rm_buf_addf(&why, "%s%s (%s)", why.len ? "; " : "", v[i].detail,
				    v[i].check);
		else if (v[i].status == RM_FINDING_WARN)
			rm_warn("pre-flight on rank %ld: %s", n->rank, v[i].detail);
	if (why.len) {
		n->preflight_failed = 1;
		ret = rm_error_set(err, RM_ERR_IO, "pre-flight on node %s: %s", where ? where : "?",
				   rm_buf_str(&why));
	}
	rm_findings_free(v, nv);
	rm_buf_release(&why);
	return ret;
}

/* What this node is, for the run's provenance: its host and its GPUs of the workload. */
static void node_provenance(struct node *n)
{
	rm_provenance_opts po = RM_PROVENANCE_OPTS_INIT;
	long *gpus = NULL;
	size_t n_gpus = 0;
	rm_error err = RM_ERROR_INIT;
	rm_mask m;
	char *text, *masked;

	po.ctx = &n->ctx;
	if (n->o->sysfs_root)
		po.sysfs_root = n->o->sysfs_root;
	po.root = n->doc.root;
	if (rm_workload_gpu_indexes(&n->w, &n->ctx, &gpus, &n_gpus, &err) == 0 && n_gpus) {
		po.gpus = gpus;
		po.n_gpus = n_gpus;
	}
	n->provenance = rm_doctor_provenance(&po);
	/* a secret's value in a path or a name: masked as every file the run writes */
	text = json_dumps(n->provenance, JSON_COMPACT);
	rm_mask_init(&m, (const char *const *)n->secrets, n->n_secrets);
	masked = rm_mask_string(&m, text ? text : "{}");
	json_decref(n->provenance);
	n->provenance = json_loads(masked, 0, NULL);
	rm_mask_release(&m);
	free(masked);
	free(text);
	free(gpus);
}

static int prepare_image(struct node *n, rm_error *err)
{
	rm_image_req req = {.model = n->m, .image = n->w.image}; /* df NULL: run it as it is */
	int cached = 0;

	if (n->l.ops->prepare(n->l.state, &req, &n->image_id, &cached, err) < 0) {
		if (!n->e->pull)
			rm_error_wrap(err, "the image was built on the submit host and is not on "
					   "this node's engine (build and push it with run_models "
					   "build --registry, then run --manifest)");
		return -1;
	}
	rm_workload_set_image(&n->w, n->image_id);
	return 0;
}

/* --dry-run: what this node would run, as the local dry run prints it (secrets masked);
 * nothing contacted. */
static void plan(struct node *n)
{
	char *name = container_name(n), *text = NULL, *masked;
	size_t len = 0;
	rm_image_req req = {.model = n->m, .image = n->w.image};
	rm_job_spec spec = {.w = &n->w, .name = name};
	FILE *f = open_memstream(&text, &len);
	rm_mask m;

	if (f) {
		n->l.ops->plan(n->l.state, &req, &spec, f);
		fclose(f);
		rm_mask_init(&m, (const char *const *)n->secrets, n->n_secrets);
		masked = rm_mask_string(&m, text);
		fputs(masked, stdout);
		free(masked);
		rm_mask_release(&m);
	}
	free(text);
	free(name);
}

static int node_main(struct node *n, rm_error *err)
{
	rm_launcher_config lc = {.ctx = &n->ctx, .run_id = n->doc.run_id, .dry_run = n->o->dry_run};
	const char *where = getenv("SLURMD_NODENAME");
	size_t reaped = 0;

	if (rm_registry_load(&n->reg, n->doc.root, err) < 0)
		return -1;
	rm_workload_copy(&n->w, &n->e->w);
	if (rm_workload_bind(&n->w, &n->reg, err) < 0)
		return rm_error_wrap(err, "'%s/models.json'", n->doc.root);
	n->m = n->w.model;
	if (node_context(n, err) < 0 || rm_launcher_open_named(&n->l, "docker", &lc, err) < 0)
		return -1;
	rm_launcher_engine_facts(&n->l, &n->ctx); /* this node's engine */
	job_env(n);
	if (n->m->data && *n->m->data) {
		rm_warn("model '%s' names data '%s': data providers are not set up on SLURM nodes "
			"yet; the container gets none",
			n->m->name, n->m->data);
		rm_data_plan_release(&n->w.data);
	}
	if (n->o->dry_run) {
		plan(n);
		return 0;
	}
	if (n->l.ops->reap(n->l.state, &reaped, err) < 0)
		rm_warn("%s", rm_error_text(err));
	rm_error_clear(err);
	if (n->m->n_gpus > 0 && n->m->n_gpus > n->ctx.n_gpus)
		return rm_error_set(err, RM_ERR_INPUT,
				    "model '%s' needs %ld GPUs and node %s has %ld", n->m->name,
				    n->m->n_gpus, where ? where : "?", n->ctx.n_gpus);
	node_provenance(n);
	if (node_preflight(n, err) < 0 || prepare_image(n, err) < 0)
		return -1;
	return run_container(n, err);
}

static void write_result(struct node *n)
{
	char *path = rm_xasprintf("%s.node%ld.result.json", n->e->log_base, n->rank);
	const char *node = getenv("SLURMD_NODENAME");
	json_t *doc = json_pack("{s:I, s:s?, s:s?, s:s?, s:s?, s:s?}", "rank", (json_int_t)n->rank,
				"node", node, "error", n->error, "image_id", n->image_id,
				"results_path", n->results_path, "results_tar", n->results_tar);
	char *text;
	rm_error err = RM_ERROR_INIT;

	json_object_set_new(doc, "exit_code",
			    n->exit_code >= 0 ? json_integer(n->exit_code) : json_null());
	if (n->have_telem)
		json_object_set_new(doc, "telemetry", rm_telem_summary_to_json(&n->telem));
	if (n->preflight_failed)
		json_object_set_new(doc, "preflight", json_true());
	if (n->provenance)
		json_object_set(doc, "provenance", n->provenance);
	text = json_dumps(doc, JSON_COMPACT);
	if (rm_write_file_atomic(path, text, strlen(text), 0644, &err) < 0)
		rm_warn("%s", rm_error_text(&err));
	free(text);
	json_decref(doc);
	free(path);
}

int rm_slurm_node_run(const rm_slurm_node_opts *o, rm_error *err)
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
	rm_interrupt_set(rm_signal_cancelled, NULL);
	if (load_job(&n, err) < 0)
		goto done; /* nowhere to write a result: the message goes to the node's .err */
	if (node_main(&n, err) == 0) {
		rc =
		    o->dry_run ? 0 : (int)(n.exit_code >= 0 && n.exit_code < 256 ? n.exit_code : 1);
	} else if (rm_signal_received()) {
		rc = 128 + rm_signal_received(); /* the job was stopped: SLURM's state says so */
	} else {
		rm_mask m;
		rm_mask_init(&m, (const char *const *)n.secrets, n.n_secrets);
		n.error = rm_mask_string(&m, rm_error_text(err));
		rm_mask_release(&m);
		rc = 1;
	}
	if (!o->dry_run)
		write_result(&n);
	if (rc == 0 || n.exit_code >= 0)
		rm_error_clear(err); /* the script's own failure: its output said it all */
done:
	rm_interrupt_set(NULL, NULL);
	rm_launcher_close(&n.l);
	for (int i = 0; i < 2; i++)
		rm_mask_release(&n.masks[i]);
	rm_strv_free(n.secrets);
	rm_context_release(&n.ctx);
	rm_workload_release(&n.w);
	rm_registry_release(&n.reg);
	rm_job_doc_release(&n.doc);
	json_decref(n.provenance);
	free(n.error);
	free(n.image_id);
	free(n.results_path);
	free(n.results_tar);
	return rc;
}
