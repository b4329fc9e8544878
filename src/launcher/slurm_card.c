/*
 * A card whose own script runs on the SLURM batch host (MAD's multi-node cards:
 * distributed.launcher slurm_multi, and primus or sglang-disagg on SLURM; MAD's
 * docs/multinode-overview.md): one batch job from the card's "slurm" under the context's,
 * the card's env_vars (the context's over them) exported, the image on every node before
 * the script starts (pulled, or loaded from a copy saved beside the logs when no registry
 * has it) with every node's image id checked, the script run with bash in its folder; then
 * the job's end and the results the script wrote on shared storage (see slurm.h,
 * rm_slurm_card_script, for the batch script).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "docker_internal.h"
#include "slurm_launcher.h"
#include "rm/report.h"
#include "rm/tar.h"
#include "rm/util.h"

int rm_launcher__slurm_runs_card(const struct slurm_launcher *sl, const rm_workload *w)
{
	(void)sl;
	return rm_dist_runs_script(rm_workload_dist_launcher(w), 1);
}

/* madengine's rule for an image the nodes pull: a reference with a registry or a namespace
 * ('/' or '.'), not one of the run's own local builds ("ci-..."). */
static int from_registry(const char *image)
{
	return !rm_starts_with(image, "ci-") && strpbrk(image, "/.") != NULL;
}

/* The engine of this host, for the image's id and its saved copy (NULL in a dry run). */
static rm_docker *engine(struct slurm_launcher *sl, rm_error *err)
{
	rm_launcher_config dc = {
	    .docker_host = sl->cfg.docker_host, .ctx = sl->cfg.ctx, .run_id = sl->cfg.run_id};

	if (sl->cfg.dry_run)
		return NULL;
	if (!sl->docker.ops && rm_launcher_open_named(&sl->docker, "docker", &dc, err) < 0)
		return NULL;
	return ((struct docker_launcher *)sl->docker.state)->d;
}

/* The image's id on this host's engine, or NULL (the engine lacks it: a manifest's image
 * built elsewhere; the nodes must then agree among themselves). */
static char *card_image_id(struct slurm_launcher *sl, const char *image)
{
	rm_error err = RM_ERROR_INIT;
	rm_docker *d = engine(sl, &err);
	json_t *j = NULL;
	char *id = NULL;

	for (size_t i = 0; i < sl->n_imgs; i++)
		if (!strcmp(sl->img_names[i], image))
			return rm_xstrdup(sl->img_ids[i]);
	if (d && rm_engine_image_inspect(d, image, &j, &err) == 0)
		id = rm_xstrdup(json_string_value(json_object_get(j, "Id")));
	json_decref(j);
	return id;
}

/* `docker save` of image beside the logs, once a run and image: what every node loads. */
static int save_image(struct slurm_launcher *sl, const char *image, const char *path, rm_error *err)
{
	rm_docker *d = engine(sl, err);
	char *tmp = rm_xasprintf("%s.part", path);
	int fd, ret = -1;

	if (access(path, R_OK) == 0) {
		free(tmp);
		return 0;
	}
	if (!d)
		goto out;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		rm_error_sys(err, RM_ERR_IO, errno, "cannot create '%s'", tmp);
		goto out;
	}
	rm_info("saving image '%s' to '%s' for the nodes to load", image, path);
	ret = rm_engine_image_save(d, image, fd, err);
	if (close(fd) != 0 && ret == 0)
		ret = rm_error_sys(err, RM_ERR_IO, errno, "cannot write '%s'", tmp);
	if (ret == 0 && rename(tmp, path) != 0)
		ret = rm_error_sys(err, RM_ERR_IO, errno, "cannot rename '%s'", tmp);
out:
	if (ret < 0)
		unlink(tmp);
	free(tmp);
	return ret < 0 ? rm_error_wrap(err, "image '%s' for the nodes", image) : 0;
}

/* The card's script: its folder (absolute) and file name. */
static void script_parts(const struct slurm_launcher *sl, const rm_model *m, char **dir,
			 char **file)
{
	const char *slash = strrchr(m->scripts, '/');
	char *rel = slash ? rm_xstrndup(m->scripts, (size_t)(slash - m->scripts)) : rm_xstrdup(".");

	*dir = rel[0] == '/' ? rm_xstrdup(rel) : rm_xasprintf("%s/%s", sl->root, rel);
	*file = rm_xstrdup(slash ? slash + 1 : m->scripts);
	free(rel);
}

int rm_launcher__slurm_card_script(struct slurm_launcher *sl, const rm_job_spec *spec,
				   struct slurm_sub *s, char **text, rm_error *err)
{
	const rm_workload *w = spec->w;
	rm_slurm_conf sc;
	rm_dist_conf dc;
	char *dir = NULL, *file = NULL, *name, *tar = NULL, *id = NULL;
	rm_kv *env;
	size_t n_env;
	int ret;

	if (rm_workload_check_placeholders(w, err) < 0 ||
	    rm_launcher__slurm_conf_for(sl, w, &sc, &dc, err) < 0)
		return -1;
	script_parts(sl, w->model, &dir, &file);
	name = rm_xasprintf("rm-%s", strrchr(s->log_base, '/') + 1);
	if (strchr(name, '.'))
		*strchr(name, '.') = '\0';
	if (!from_registry(w->image)) {
		char *safe = rm_file_safe(w->image);
		for (char *p = safe; *p; p++)
			if (*p == ':')
				*p = '_';
		tar = rm_xasprintf("%s/%s.%s.image.tar", sl->log_dir, sl->cfg.run_id, safe);
		free(safe);
	}
	id = sl->cfg.dry_run ? NULL : card_image_id(sl, w->image);
	env = rm_workload_env_vars(w, &n_env);
	rm_slurm_job job = {.job_name = name,
			    .log_dir = sl->log_dir,
			    .workdir = dir,
			    .batch_log = s->batch_log,
			    .sc = &sc,
			    .dc = &dc,
			    .gpus_per_node =
				rm_slurm_gpus_per_node(&sc, w->n_gpus, sl->cfg.ctx->n_gpus),
			    .comment = sl->comment};
	rm_slurm_card_job cj = {.job = &job,
				.model = w->model_name,
				.launcher = w->dist_launcher,
				.script = file,
				.args = w->model_args ? w->model_args : w->model->args,
				.env = env,
				.n_env = n_env,
				/* a local build by its id: a tag can move (another run's build)
				 * between the save and the nodes' load */
				.image = tar && id ? id : w->image,
				.image_id = id,
				.image_tar = tar,
				.steps = s->steps};
	ret = rm_slurm_card_script(&cj, text, err);
	if (ret == 0 && tar && !sl->cfg.dry_run) {
		ret = save_image(sl, w->image, tar, err);
		s->image_tar = tar;
		tar = NULL;
	}
	s->nodes = sc.nodes;
	free(s->image_id);
	s->image_id = id;
	id = NULL;
	rm_workload_kv_free(env, n_env);
	rm_slurm_conf_release(&sc);
	rm_dist_conf_release(&dc);
	free(dir);
	free(file);
	free(name);
	free(tar);
	free(id);
	return ret;
}

/* ---- after the job ---- */

/* Why the image step failed: the nodes that could not get it or hold another id than want
 * (NULL: the first node's). */
static char *image_trouble(const char *steps, const char *want)
{
	FILE *f = fopen(steps, "r");
	rm_buf b = RM_BUF_INIT((size_t)1 << 16);
	char line[512], node[256], id[256], first[256] = "";

	while (f && fgets(line, sizeof(line), f)) {
		id[0] = '\0';
		if (!strncmp(line, "image-check ", 12)) {
			continue;
		} else if (sscanf(line, "image-failed %255s", node) == 1) {
			rm_buf_addf(&b, "%snode %s could not pull or load it", b.len ? "; " : "",
				    node);
		} else if (!strncmp(line, "image ", 6) &&
			   sscanf(line + 6, "%255s %255s", node, id) >= 1) {
			if (!want && !first[0] && id[0])
				snprintf(first, sizeof(first), "%s", id);
			if (!id[0] || strcmp(id, want ? want : first))
				rm_buf_addf(&b, "%snode %s holds %s, not %s", b.len ? "; " : "",
					    node, id[0] ? id : "no such image",
					    want ? want : first);
		}
	}
	if (f)
		fclose(f);
	if (!b.len) {
		rm_buf_release(&b);
		return NULL;
	}
	return rm_buf_detach(&b);
}

/* The script's exit code from the steps file, or -1 when it never ran. */
long rm_launcher__slurm_card_status(const rm_job *job)
{
	FILE *f = fopen(job->sub.steps, "r");
	char line[256];
	long code = -1, c;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "script %ld", &c) == 1)
			code = c;
	if (f)
		fclose(f);
	return code;
}

void rm_launcher__slurm_card_reason(const rm_job *job, const char *why, rm_error *err)
{
	char *trouble = image_trouble(job->sub.steps, job->sub.image_id), *log = NULL, node[128];
	long code = rm_launcher__slurm_card_status(job), task;
	int tcode;
	rm_error rerr = RM_ERROR_INIT;

	if (trouble) {
		rm_error_set(err, RM_ERR_INPUT, "%s: the image is not on every node: %s (see '%s')",
			     why, trouble, job->sub.batch_log);
	} else if (code > 0 &&
		   rm_read_file(job->sub.batch_log, (size_t)16 << 20, &log, NULL, &rerr) == 0 &&
		   rm_slurm_first_failed_task(log, &task, &tcode, node, sizeof(node)) == 0) {
		rm_error_set(err, RM_ERR_INPUT,
			     "%s: the card's script exited with code %ld (its step's rank %ld on "
			     "node %s exited with code %d; see '%s')",
			     why, code, task, node, tcode, job->sub.batch_log);
	} else if (code > 0) {
		rm_error_set(err, RM_ERR_INPUT,
			     "%s: the card's script exited with code %ld (see '%s')", why, code,
			     job->sub.batch_log);
	} else {
		rm_error_set(err, RM_ERR_INPUT, "%s (see '%s')", why, job->sub.batch_log);
	}
	free(trouble);
	free(log);
}

/* ---- the results (fetch) ---- */

/* The number of rows of a CSV whose performance cell is not empty (-1: unreadable). */
static long results_in(const char *path)
{
	FILE *f = fopen(path, "r");
	char **rec = NULL;
	size_t nf;
	long col = -1, n = 0;
	rm_error err = RM_ERROR_INIT;

	if (!f)
		return -1;
	if (rm_csv_read_record(f, &rec, &nf, &err) == 1)
		for (size_t i = 0; i < nf; i++)
			if (!strcmp(rm_trim(rec[i]), "performance"))
				col = (long)i;
	rm_strv_free(rec);
	rec = NULL;
	while (col >= 0 && rm_csv_read_record(f, &rec, &nf, &err) == 1) {
		n += (size_t)col < nf && *rm_trim(rec[col]);
		rm_strv_free(rec);
		rec = NULL;
	}
	fclose(f);
	return col < 0 ? -1 : n;
}

/* One candidate: kept when it has more results than the best so far (MAD: the one with the
 * most non-empty performance values; the first of equals). */
static void consider(char **best, long *most, const char *path, rm_buf *looked)
{
	long n = results_in(path);

	rm_buf_addf(looked, "%s'%s'", looked->len ? ", " : "", path);
	if (n > *most) {
		free(*best);
		*best = rm_xstrdup(path);
		*most = n;
	}
}

/* The perf*.csv files of a folder, or those whose name holds needle. */
static void consider_dir(char **best, long *most, const char *dir, const char *prefix,
			 const char *needle, rm_buf *looked)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	rm_buf_addf(looked, "%s'%s/%s*.csv'", looked->len ? ", " : "", dir, prefix);
	while (d && (e = readdir(d))) {
		char *p;
		long n;
		if (!rm_starts_with(e->d_name, prefix) || !rm_ends_with(e->d_name, ".csv") ||
		    (needle && !strstr(e->d_name, needle)))
			continue;
		p = rm_xasprintf("%s/%s", dir, e->d_name);
		if ((n = results_in(p)) > *most) {
			free(*best);
			*best = p;
			*most = n;
		} else {
			free(p);
		}
	}
	if (d)
		closedir(d);
}

static const char *env_of(const rm_kv *env, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(env[i].key, key))
			return env[i].value;
	return NULL;
}

/* Where MAD's launchers and madengine look for a card's results, best first kept. */
static char *best_results(struct slurm_launcher *sl, const rm_job *job, rm_buf *looked)
{
	const rm_workload *w = job->spec->w;
	size_t n_env;
	rm_kv *env = rm_workload_env_vars(w, &n_env);
	const char *model = env_of(env, n_env, "MODEL_NAME"),
		   *log_path = env_of(env, n_env, "LOG_PATH");
	const char *user = getenv("USER");
	json_t *rd = json_object_get(json_object_get(sl->cfg.ctx->obj, "slurm"), "results_dir");
	char *dir = NULL, *file = NULL, *best = NULL, *p, jid[32];
	long most = 0;

	snprintf(jid, sizeof(jid), "%ld", job->sub.job_id);
	script_parts(sl, w->model, &dir, &file);
	/* the card's multiple_results, then perf_<MODEL_NAME>.csv, in the script's folder */
	if (w->model->multiple_results) {
		p = rm_xasprintf("%s/%s", dir, w->model->multiple_results);
		consider(&best, &most, p, looked);
		free(p);
	}
	if (model) {
		p = rm_xasprintf("%s/perf_%s.csv", dir, model);
		consider(&best, &most, p, looked);
		free(p);
	}
	if (json_is_string(rd))
		consider_dir(&best, &most, json_string_value(rd), "perf", NULL, looked);
	/* a perf.csv the script wrote on shared storage: $LOG_PATH/<job>/ */
	p = log_path ? rm_xasprintf("%s/%s/perf.csv", log_path, jid)
		     : rm_xasprintf("/shared_inference/%s/model_blog_logs/%s/perf.csv",
				    user ? user : "root", jid);
	consider(&best, &most, p, looked);
	free(p);
	p = rm_xasprintf("%s/slurm_output/perf_csv", sl->submit_dir);
	consider_dir(&best, &most, p, "", jid, looked);
	free(p);
	rm_workload_kv_free(env, n_env);
	free(dir);
	free(file);
	return best;
}

int rm_launcher__slurm_card_fetch(struct slurm_launcher *sl, rm_job *job, int fd, size_t max,
				  rm_error *err)
{
	rm_buf looked = RM_BUF_INIT((size_t)1 << 16);
	char *best = best_results(sl, job, &looked);
	struct stat st;
	int ret;

	if (!best) {
		ret = rm_error_set(err, RM_ERR_INPUT,
				   "no results: the card's script wrote no CSV with a performance "
				   "column where MAD's launchers write one (looked at %s)",
				   rm_buf_str(&looked));
	} else if (stat(best, &st) == 0 && (size_t)st.st_size > max) {
		ret = rm_error_set(err, RM_ERR_IO, "'%s' is over %zu bytes", best, max);
	} else {
		rm_info("results of slurm job %ld: '%s'", job->sub.job_id, best);
		ret = rm_tar_tree(best, "results.csv", fd, err);
	}
	rm_buf_release(&looked);
	free(best);
	return ret;
}
