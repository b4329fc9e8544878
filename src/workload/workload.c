/*
 * A workload built from (model, context, settings): the one place where what reaches a
 * container is decided (rm/workload.h). Rendering is render.c's, the command cmd.c's, the
 * JSON job_doc.c's.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "workload_internal.h"

static char *dup_or_null(const char *s)
{
	return s ? rm_xstrdup(s) : NULL;
}

void rm_workload__settings_copy(rm_workload_settings *dst, const rm_workload_settings *src)
{
	*dst = *src;
#define COPY_STR(kind, name) rm_workload__copy_##kind(&dst->name);
	RM_WORKLOAD_SETTINGS(COPY_STR)
#undef COPY_STR
}

void rm_workload__settings_release(rm_workload_settings *s)
{
#define FREE_ONE(kind, name) rm_workload__free_##kind(&s->name);
	RM_WORKLOAD_SETTINGS(FREE_ONE)
#undef FREE_ONE
}

rm_kv *rm_workload__kv_copy(const rm_kv *src, size_t n)
{
	rm_kv *v = n ? rm_xcalloc(n, sizeof(*v)) : NULL;

	for (size_t i = 0; i < n; i++) {
		v[i].key = rm_xstrdup(src[i].key);
		v[i].value = rm_xstrdup(src[i].value ? src[i].value : "");
	}
	return v;
}

void rm_workload__kv_free(rm_kv *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].key);
		free(v[i].value);
	}
	free(v);
}

void rm_workload__plan_copy(rm_data_plan *dst, const rm_data_plan *src)
{
	memset(dst, 0, sizeof(*dst));
	if (!src || !src->n)
		return;
	dst->n = src->n;
	dst->sources = rm_xcalloc(src->n, sizeof(*dst->sources));
	for (size_t i = 0; i < src->n; i++) {
		const rm_data_source *s = &src->sources[i];
		rm_data_source *d = &dst->sources[i];
		d->dataname = dup_or_null(s->dataname);
		d->provider = dup_or_null(s->provider);
		d->home = dup_or_null(s->home);
		d->host_path = dup_or_null(s->host_path);
		d->read_only = s->read_only;
		d->create_host_path = s->create_host_path;
		d->script = dup_or_null(s->script);
		d->script_args = dup_or_null(s->script_args);
	}
	dst->datahome = dup_or_null(src->datahome);
	dst->dataname = dup_or_null(src->dataname);
	dst->provider_type = dup_or_null(src->provider_type);
}

rm_tunableop rm_tunableop_effective(const rm_model *m, rm_tunableop cli)
{
	const char *p = m->args ? strstr(m->args, "--tunableop") : NULL;
	int v = RM_TUNABLEOP_UNSET;

	if (cli != RM_TUNABLEOP_UNSET)
		return cli;
	if (m->tunableop != RM_TUNABLEOP_UNSET)
		return m->tunableop;
	if (p) {
		char *word;
		p += strlen("--tunableop");
		while (*p == ' ' || *p == '=')
			p++;
		word = rm_xstrndup(p, strcspn(p, " "));
		if (rm_choice_parse(rm_tunableop_words, word, &v) < 0)
			v = RM_TUNABLEOP_UNSET;
		free(word);
	}
	return (rm_tunableop)v;
}

char *rm_workload_tunableop_dir(const char *log_dir, const char *model, int create)
{
	char real[PATH_MAX];
	const char *given = log_dir && *log_dir ? log_dir : ".";
	char *safe = rm_file_safe(model), *dir;
	const char *base = realpath(given, real) ? real : given;

	dir = rm_xasprintf("%s/tunableop/%s", base, safe);
	if (create) {
		char *top = rm_xasprintf("%s/tunableop", base);
		if ((mkdir(top, 0755) != 0 && errno != EEXIST) ||
		    (mkdir(dir, 0755) != 0 && errno != EEXIST))
			rm_warn_sys(errno, "model '%s': cannot create '%s'", model, dir);
		free(top);
	}
	free(safe);
	return dir;
}

long rm_workload_gpus(const rm_workload *w, const rm_context *ctx)
{
	return w->n_gpus < 0 ? ctx->n_gpus : w->n_gpus;
}

/* The value of name in an environ-like vector, or NULL. */
static const char *host_value(const char *const *env, const char *name)
{
	size_t len = strlen(name);

	for (const char *const *e = env; e && *e; e++)
		if (!strncmp(*e, name, len) && (*e)[len] == '=')
			return *e + len + 1;
	return NULL;
}

/* The names of the host's MAD_SECRETS* variables, in the environment's order. */
static char **secret_names(const char *const *env, size_t *n)
{
	char **v = rm_xcalloc(1, sizeof(*v));

	*n = 0;
	for (const char *const *e = env; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		if (eq && memmem(*e, (size_t)(eq - *e), "MAD_SECRETS", 11)) {
			char *name = rm_xstrndup(*e, (size_t)(eq - *e));
			v = rm_strv_push(v, n, name);
			free(name);
		}
	}
	return v;
}

/* The card's env_vars, then the context's over them (MAD's layering). */
static void env_vars_of(rm_workload *w, const rm_model *m, const rm_context *ctx)
{
	for (size_t i = 0; i < m->n_env_vars; i++) {
		const char *kv = m->env_vars[i], *eq = strchr(kv, '=');
		char *key = rm_xstrndup(kv, (size_t)(eq - kv));
		rm_kv_set(&w->env_vars, &w->n_env_vars, key, eq + 1);
		free(key);
	}
	for (size_t i = 0; i < ctx->n_env_vars; i++) {
		rm_kv_set(&w->env_vars, &w->n_env_vars, ctx->env_vars[i].key,
			  ctx->env_vars[i].value);
		w->image_name_given |= !strcmp(ctx->env_vars[i].key, "DOCKER_IMAGE_NAME");
	}
}

/* The card's distributed.launcher when its script runs itself (slurm_multi: no context can
 * run it another way), else the context's, else the card's, else the host's MAD_LAUNCHER. */
static char *dist_launcher_of(const rm_model *m, const rm_context *ctx, const char *const *host_env)
{
	const char *card = json_string_value(json_object_get(m->distributed, "launcher"));
	const char *l = json_string_value(
	    json_object_get(json_object_get(ctx->obj, "distributed"), "launcher"));
	const rm_dist_launcher *cl = rm_dist_launcher_find(card);

	if (cl && cl->start == RM_DIST_SCRIPT)
		l = card;
	if (!l || !*l)
		l = card;
	if (!l || !*l)
		l = host_value(host_env, "MAD_LAUNCHER");
	return l && *l ? rm_xstrdup(l) : NULL;
}

int rm_workload_build(rm_workload *w, const rm_workload_in *in, rm_error *err)
{
	const rm_model *m = in->model;
	const rm_context *ctx = in->ctx;
	const char *build_number;

	(void)err;
	memset(w, 0, sizeof(*w));
	rm_workload__settings_copy(&w->set, in->set);
	w->model = m;
	w->model_name = rm_xstrdup(m->name);
	w->run_id = rm_xstrdup(in->run_id);
	w->log_dir = rm_xstrdup(in->log_dir ? in->log_dir : ".");
	w->extra_args = dup_or_null(in->extra_args);
	w->model_args = dup_or_null(ctx->model_args);
	w->n_gpus = in->n_gpus ? in->n_gpus : m->n_gpus;
	w->tunableop = rm_tunableop_effective(m, in->set->tunableop);
	if (w->tunableop == RM_TUNABLEOP_ON)
		w->tunableop_dir = rm_workload_tunableop_dir(w->log_dir, m->name, in->create_dirs);
	/* The command line's (0: none), else the model's (negative: none; 0: not given),
	 * else the default. */
	w->timeout = in->set->timeout >= 0 ? in->set->timeout
		     : m->timeout < 0	   ? 0
		     : m->timeout > 0	   ? m->timeout
					   : RM_DEFAULT_TIMEOUT;
	w->env = rm_workload__kv_copy(ctx->docker_env_vars, ctx->n_docker_env_vars);
	w->n_env = ctx->n_docker_env_vars;
	w->secrets = secret_names(in->host_env, &w->n_secrets);
	w->mounts = rm_workload__kv_copy(ctx->docker_mounts, ctx->n_docker_mounts);
	w->n_mounts = ctx->n_docker_mounts;
	w->gpus = dup_or_null(ctx->docker_gpus);
	w->cpus = dup_or_null(ctx->docker_cpus);
	build_number = host_value(in->host_env, "BUILD_NUMBER");
	w->build_number = build_number && *build_number ? rm_xstrdup(build_number) : NULL;
	env_vars_of(w, m, ctx);
	w->dist_launcher = dist_launcher_of(m, ctx, in->host_env);
	if (w->dist_launcher && !rm_dist_launcher_find(w->dist_launcher)) {
		char *names = rm_dist_launcher_names(0);
		rm_warn("model '%s': launcher '%s' is not one run_models knows (%s): "
			"MAD_MULTI_NODE_RUNNER is torchrun's, as madengine makes it",
			m->name, w->dist_launcher, names);
		free(names);
	}
	if (in->data) {
		w->data = *in->data;
		memset(in->data, 0, sizeof(*in->data));
	}
	if (in->tools)
		rm_tool_plan_copy(&w->tools, in->tools);
	return 0;
}

void rm_workload_copy(rm_workload *dst, const rm_workload *src)
{
	memset(dst, 0, sizeof(*dst));
	rm_workload__settings_copy(&dst->set, &src->set);
	dst->model = src->model;
	dst->model_name = dup_or_null(src->model_name);
	dst->image = dup_or_null(src->image);
	dst->run_id = dup_or_null(src->run_id);
	dst->log_dir = dup_or_null(src->log_dir);
	dst->extra_args = dup_or_null(src->extra_args);
	dst->model_args = dup_or_null(src->model_args);
	dst->n_gpus = src->n_gpus;
	dst->tunableop = src->tunableop;
	dst->tunableop_dir = dup_or_null(src->tunableop_dir);
	dst->timeout = src->timeout;
	dst->env = rm_workload__kv_copy(src->env, src->n_env);
	dst->n_env = src->n_env;
	dst->secrets = rm_xcalloc(1, sizeof(*dst->secrets));
	for (size_t i = 0; i < src->n_secrets; i++)
		dst->secrets = rm_strv_push(dst->secrets, &dst->n_secrets, src->secrets[i]);
	dst->mounts = rm_workload__kv_copy(src->mounts, src->n_mounts);
	dst->n_mounts = src->n_mounts;
	dst->gpus = dup_or_null(src->gpus);
	dst->cpus = dup_or_null(src->cpus);
	rm_workload__plan_copy(&dst->data, &src->data);
	dst->build_number = dup_or_null(src->build_number);
	dst->dist_launcher = dup_or_null(src->dist_launcher);
	dst->env_vars = rm_workload__kv_copy(src->env_vars, src->n_env_vars);
	dst->n_env_vars = src->n_env_vars;
	dst->image_name_given = src->image_name_given;
	rm_tool_plan_copy(&dst->tools, &src->tools);
}

void rm_workload_release(rm_workload *w)
{
	if (!w)
		return;
	rm_workload__settings_release(&w->set);
	free(w->model_name);
	free(w->image);
	free(w->run_id);
	free(w->log_dir);
	free(w->extra_args);
	free(w->model_args);
	free(w->tunableop_dir);
	rm_workload__kv_free(w->env, w->n_env);
	rm_strv_free(w->secrets);
	rm_workload__kv_free(w->mounts, w->n_mounts);
	free(w->gpus);
	free(w->cpus);
	rm_data_plan_release(&w->data);
	free(w->build_number);
	free(w->dist_launcher);
	rm_workload__kv_free(w->env_vars, w->n_env_vars);
	rm_tool_plan_release(&w->tools);
	memset(w, 0, sizeof(*w));
}

void rm_workload_set_image(rm_workload *w, const char *image)
{
	free(w->image);
	w->image = dup_or_null(image);
}

int rm_workload_bind(rm_workload *w, const rm_registry *reg, rm_error *err)
{
	w->model = w->model_name ? rm_registry_find(reg, w->model_name) : NULL;
	if (!w->model)
		return rm_error_set(err, RM_ERR_INPUT, "model '%s' is not in the registry",
				    w->model_name ? w->model_name : "");
	return 0;
}

rm_kv *rm_workload_env_vars(const rm_workload *w, size_t *n)
{
	rm_kv *v = rm_workload__kv_copy(w->env_vars, w->n_env_vars);

	*n = w->n_env_vars;
	for (size_t i = 0; i < *n && !w->image_name_given && w->image; i++)
		if (!strcmp(v[i].key, "DOCKER_IMAGE_NAME")) {
			free(v[i].value);
			v[i].value = rm_xstrdup(w->image);
		}
	return v;
}

void rm_workload_kv_free(rm_kv *v, size_t n)
{
	rm_workload__kv_free(v, n);
}

int rm_workload_check_placeholders(const rm_workload *w, rm_error *err)
{
	for (size_t i = 0; i < w->n_env_vars; i++) {
		const char *k = w->env_vars[i].key, *v = w->env_vars[i].value;
		size_t len = strlen(v);

		if (!strcmp(k, "DOCKER_IMAGE_NAME") && !w->image_name_given)
			continue; /* the run's image fills it */
		if (len > 2 && v[0] == '<' && v[len - 1] == '>' && strcspn(v + 1, "<>") == len - 2)
			return rm_error_set(
			    err, RM_ERR_INPUT,
			    "model '%s': env_vars '%s' is '%s', a placeholder for you to fill: "
			    "give "
			    "it in --additional-context '{\"env_vars\": {\"%s\": \"...\"}}'",
			    w->model_name, k, v, k);
	}
	return 0;
}

const rm_dist_launcher *rm_workload_dist_launcher(const rm_workload *w)
{
	return rm_dist_launcher_find(w->dist_launcher);
}
