/*
 * What made each run (rm/provenance.h), into perf.csv's companion PERF.provenance.csv.
 *
 * The host's part (rm/doctor.h rm_doctor_provenance: kernel, CPU, OS, driver, firmware, the
 * GPUs' identities, the models folder's commit) is collected in a thread of its own from
 * the run's start (one nvidia-smi, a git status: tens of milliseconds on a GPU host) and
 * written at its end, so it costs the run nothing while images build. A suite collects it
 * once for all its entries (run.json has it) and the runner leaves it alone.
 *
 * Each model's part, once per Dockerfile in a run, once its first container exists: the
 * image (name, id, its registry digests, the Dockerfile's and the build args' SHA-256, the
 * base image with its id and digests, the *_VERSION variables of the image and the ROCm or
 * CUDA version files in it), the container's environment (secrets masked: a MAD_SECRETS*
 * variable is "***", any secret value in another is masked) and the arguments (the
 * script's, the run's settings). Its cost is a note in the run's log.
 */
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "rm/doctor.h"
#include "rm/provenance.h"
#include "rm/util.h"

extern char **environ;

struct prov_host {
	pthread_t th;
	rm_provenance_opts po;
	json_t *groups;
};

static void *host_main(void *arg)
{
	struct prov_host *h = arg;
	h->groups = rm_doctor_provenance(&h->po);
	return NULL;
}

void rm_runner__provenance_start(struct run *r)
{
	struct prov_host *h;
	sigset_t all, old;

	if (r->o->dry_run || r->o->no_host_provenance)
		return;
	h = rm_xcalloc(1, sizeof(*h));
	h->po = (rm_provenance_opts)RM_PROVENANCE_OPTS_INIT;
	h->po.ctx = &r->ctx;
	if (r->o->sysfs_root)
		h->po.sysfs_root = r->o->sysfs_root;
	h->po.root = r->o->root;
	/* the runner's signal handlers stay in the runner's thread */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&h->th, NULL, host_main, h) != 0) {
		free(h);
		h = NULL;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	r->prov = h;
}

void rm_runner__provenance_finish(struct run *r)
{
	struct prov_host *h = r->prov;
	rm_error err = RM_ERROR_INIT;

	if (!h)
		return;
	pthread_join(h->th, NULL);
	if (h->groups && r->jobs_started &&
	    rm_provenance_append(r->o->output, r->run_id, "", "", h->groups, &err) < 0)
		rm_warn("the run's provenance: %s", rm_error_text(&err));
	json_decref(h->groups);
	free(h);
	r->prov = NULL;
}

static void prov_put(json_t *g, const char *name, const char *value)
{
	if (value && *value)
		json_object_set_new(g, name, json_string(value));
}

/* SHA-256 of a file's bytes, or NULL when it cannot be read. */
static char *file_sha256(const char *path)
{
	char *text = NULL, hex[65];
	size_t len = 0;
	rm_error err = RM_ERROR_INIT;
	rm_hash *h;

	if (rm_read_file(path, (size_t)16 << 20, &text, &len, &err) < 0)
		return NULL;
	h = rm_hash_new();
	rm_hash_update(h, text, len);
	rm_hash_final_hex(h, hex);
	free(text);
	return rm_xasprintf("sha256:%s", hex);
}

/* The engine's facts of an image: id, its registry digests, its *_VERSION variables. */
static void image_facts(struct run *r, json_t *g, const char *image, const char *prefix)
{
	const rm_launcher *L = &r->launcher;
	json_t *facts = NULL, *v;
	rm_error err = RM_ERROR_INIT;
	size_t i;
	char *key;

	if (!L->ops->image_facts || !image || !*image ||
	    L->ops->image_facts(L->state, image, &facts, &err) < 0)
		return;
	key = rm_xasprintf("%sid", prefix);
	prov_put(g, key, json_string_value(json_object_get(facts, "id")));
	free(key);
	json_array_foreach (json_object_get(facts, "repo_digests"), i, v) {
		key =
		    i ? rm_xasprintf("%sdigest.%zu", prefix, i) : rm_xasprintf("%sdigest", prefix);
		prov_put(g, key, json_string_value(v));
		free(key);
	}
	json_array_foreach (*prefix ? NULL : json_object_get(facts, "env"), i, v) {
		const char *kv = json_string_value(v), *eq = kv ? strchr(kv, '=') : NULL;
		if (!eq || eq - kv < 9 || strncmp(eq - 8, "_VERSION", 8))
			continue;
		key = rm_xasprintf("env.%.*s", (int)(eq - kv), kv);
		prov_put(g, key, eq + 1);
		free(key);
	}
	json_decref(facts);
}

/* The ROCm or CUDA version file in the container (its image's), when there is one. */
static void image_versions(struct run *r, rm_job *job, json_t *g)
{
	const char *vendor = r->ctx.gpu_vendor;
	int amd = vendor && !strcmp(vendor, "AMD");
	rm_error err = RM_ERROR_INIT;
	FILE *f;
	char buf[4096];
	size_t n;

	if (!vendor || !job)
		return;
	f = rm_runner__fetch_file(
	    r, job, amd ? "/opt/rocm/.info/version" : "/usr/local/cuda/version.json", &err);
	if (!f)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	if (amd) {
		prov_put(g, "rocm", rm_trim(buf));
	} else {
		json_t *j = json_loads(buf, 0, NULL);
		prov_put(g, "cuda",
			 json_string_value(json_object_get(json_object_get(j, "cuda"), "version")));
		json_decref(j);
	}
}

static json_t *image_group(struct run *r, const rm_model *m, rm_job *job, const struct outcome *oc)
{
	json_t *g = json_object(), *args = rm_runner__build_args(r, m);
	char *dumped = json_dumps(args, JSON_SORT_KEYS | JSON_COMPACT), *masked, hex[65], *v;
	rm_hash *h = rm_hash_new();

	prov_put(g, "name", oc->image);
	prov_put(g, "dockerfile", oc->dockerfile);
	if (oc->dockerfile && oc->dockerfile[0] != '/') {
		char *path = rm_xasprintf("%s/%s", r->o->root ? r->o->root : ".", oc->dockerfile);
		v = file_sha256(path);
		prov_put(g, "dockerfile_sha256", v);
		free(v);
		free(path);
	}
	masked = rm_mask_string(&r->mask, dumped ? dumped : "{}");
	rm_hash_update(h, masked, strlen(masked));
	rm_hash_final_hex(h, hex);
	v = rm_xasprintf("sha256:%s", hex);
	prov_put(g, "build_args_sha256", v);
	free(v);
	prov_put(g, "build_args", masked);
	image_facts(r, g, oc->image_id ? oc->image_id : oc->image, "");
	prov_put(g, "base", oc->base_image);
	if (oc->base_image && strcmp(oc->base_image, "scratch"))
		image_facts(r, g, oc->base_image, "base.");
	image_versions(r, job, g);
	free(masked);
	free(dumped);
	json_decref(args);
	return g;
}

/* Whether a variable's name says it holds a credential: its value is never kept, whatever
 * it is (the context's docker_env_vars are the user's text, which may hold one). */
static int credential_name(const char *name)
{
	static const char *const words[] = {"SECRET",	   "TOKEN",   "PASSWORD",    "PASSWD",
					    "CREDENTIAL",  "API_KEY", "APIKEY",	     "ACCESS_KEY",
					    "PRIVATE_KEY", "AUTH",    "MAD_SECRETS", NULL};
	char *up = rm_xstrdup(name);
	int hit = 0;

	for (char *p = up; *p; p++)
		if (*p >= 'a' && *p <= 'z')
			*p = (char)(*p - 'a' + 'A');
	for (size_t i = 0; words[i] && !hit; i++)
		hit = strstr(up, words[i]) != NULL;
	free(up);
	return hit;
}

/* The container's environment as rendered for this host, secrets masked: the values of the
 * host's MAD_SECRETS* wherever they appear, and whole values of variables named as
 * credentials. */
static json_t *env_group(struct run *r, const rm_workload *w)
{
	json_t *g = json_object(), *body = NULL, *v;
	rm_error err = RM_ERROR_INIT;
	size_t i;

	if (rm_workload_render(w, &r->ctx, (const char *const *)environ, &body, &err) < 0)
		return g;
	json_array_foreach (json_object_get(body, "Env"), i, v) {
		const char *kv = json_string_value(v), *eq = kv ? strchr(kv, '=') : NULL;
		char *name, *value;
		if (!eq || !strncmp(kv, "MAD_RUN_ID=", 11)) /* the run's own id: the key already */
			continue;
		name = rm_xstrndup(kv, (size_t)(eq - kv));
		value =
		    credential_name(name) ? rm_xstrdup("***") : rm_mask_string(&r->mask, eq + 1);
		prov_put(g, name, value);
		free(name);
		free(value);
	}
	json_decref(body);
	return g;
}

static json_t *args_group(struct run *r, const rm_workload *w)
{
	json_t *g = json_object();
	const rm_model *m = w->model;
	char *args = rm_workload_args(w), *masked = rm_mask_string(&r->mask, args), num[64];
	long *gpus = NULL;
	size_t n = 0;
	rm_error err = RM_ERROR_INIT;
	rm_buf ids = RM_BUF_INIT(1 << 14);

	prov_put(g, "args", masked);
	prov_put(g, "model_args", m->args);
	prov_put(g, "additional_docker_run_options", m->additional_docker_run_options);
	prov_put(g, "tunableop", rm_choice_name(rm_tunableop_words, (int)w->tunableop));
	snprintf(num, sizeof(num), "%g", w->timeout);
	prov_put(g, "timeout", num);
	snprintf(num, sizeof(num), "%ld", rm_workload_gpus(w, &r->ctx));
	prov_put(g, "n_gpus", num);
	if (rm_workload_gpu_indexes(w, &r->ctx, &gpus, &n, &err) == 0)
		for (size_t i = 0; i < n; i++)
			rm_buf_addf(&ids, "%s%ld", i ? "," : "", gpus[i]);
	prov_put(g, "gpus", rm_buf_str(&ids));
	if (w->set.shm_size > 0) {
		snprintf(num, sizeof(num), "%lld", w->set.shm_size);
		prov_put(g, "shm_size", num);
	}
	snprintf(num, sizeof(num), "%ld", r->o->repeat);
	prov_put(g, "repeat", num);
	prov_put(g, "parser", r->o->parser);
	prov_put(g, "telemetry", rm_choice_name(rm_telemetry_words, (int)w->set.telemetry));
	free(gpus);
	free(args);
	free(masked);
	rm_buf_release(&ids);
	return g;
}

void rm_runner__provenance_hosts(struct run *r, const rm_workload *w, rm_job *job,
				 const struct outcome *oc)
{
	const rm_launcher *L = &r->launcher;
	json_t *hosts = NULL, *groups = json_object(), *host, *vals, *v;
	const char *key, *g, *name;
	rm_error err = RM_ERROR_INIT;

	if (!job || !L->ops->host_provenance ||
	    L->ops->host_provenance(L->state, job, &hosts) < 0) {
		json_decref(groups);
		return;
	}
	/* each host's values under its name: "node0 n1.kernel" */
	json_object_foreach (hosts, key, host)
		json_object_foreach (host, g, vals)
			json_object_foreach (vals, name, v) {
				json_t *dst = json_object_get(groups, g);
				char *k = rm_xasprintf("%s.%s", key, name);
				if (!dst) {
					dst = json_object();
					json_object_set_new(groups, g, dst);
				}
				json_object_set(dst, k, v);
				free(k);
			}
	if (rm_provenance_append(r->o->output, r->run_id, w->model->name, oc->dockerfile, groups,
				 &err) < 0)
		rm_warn("model '%s': the provenance of its hosts: %s", w->model->name,
			rm_error_text(&err));
	json_decref(groups);
	json_decref(hosts);
}

void rm_runner__provenance_model(struct run *r, const rm_workload *w, rm_job *job,
				 struct stream *st, const struct outcome *oc)
{
	const rm_model *m = w->model;
	char *key = rm_xasprintf("%s\t%s", m->name, oc->dockerfile ? oc->dockerfile : "");
	double t0 = rm_now();
	json_t *groups;
	rm_error err = RM_ERROR_INIT;
	size_t n = 0;
	const char *g;
	json_t *vals;

	for (size_t i = 0; i < r->n_prov_done; i++)
		if (!strcmp(r->prov_done[i], key)) {
			free(key);
			return;
		}
	r->prov_done = rm_strv_push(r->prov_done, &r->n_prov_done, key);
	free(key);
	groups = json_pack("{s:o, s:o, s:o}", "image", image_group(r, m, job, oc), "environment",
			   env_group(r, w), "arguments", args_group(r, w));
	json_object_foreach (groups, g, vals)
		n += json_object_size(vals);
	if (rm_provenance_append(r->o->output, r->run_id, m->name, oc->dockerfile, groups, &err) <
	    0)
		rm_warn("model '%s': provenance: %s", m->name, rm_error_text(&err));
	else
		rm_runner__stream_note(
		    st,
		    "run_models: provenance: %zu values of the image, environment "
		    "and arguments in %.1f ms",
		    n, (rm_now() - t0) * 1000);
	json_decref(groups);
}
