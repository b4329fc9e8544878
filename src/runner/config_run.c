/*
 * A row's configuration (rm/config.h): its parameters, what the user or a sweep set, in
 * the order they were set; and its key, over what changes the result. Values go through the
 * run's secret mask, as every cell of perf.csv does.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "rm/config.h"
#include "rm/util.h"
#include "rm/workload.h"

/* " --batch_size 8 --fp16 --k a b" (rm_select's extra args) as parameters: each "--key" and
 * the words up to the next "--key" ("" when none). */
static void tag_args(rm_config *c, const char *extra)
{
	char *copy = rm_xstrdup(extra ? extra : ""), *p = copy, *name = NULL;
	rm_buf value = RM_BUF_INIT((size_t)1 << 20);

	for (;;) {
		char *w;
		p += strspn(p, " \t");
		w = p;
		p += strcspn(p, " \t");
		if (*p)
			*p++ = '\0';
		if (!*w || rm_starts_with(w, "--")) {
			if (name && !rm_config_get(c, name))
				rm_config_set(c, name, rm_buf_str(&value));
			rm_buf_reset(&value);
			name = *w ? w + 2 : NULL;
			if (!*w)
				break;
			continue;
		}
		rm_buf_addf(&value, "%s%s", value.len ? " " : "", w);
	}
	rm_buf_release(&value);
	free(copy);
}

static void set_masked(const struct run *r, rm_config *c, const char *name, const char *value)
{
	char *v = rm_mask_string(&r->mask, value ? value : "");
	rm_config_set(c, name, v);
	free(v);
}

/* Whether a variable's name says it holds a credential (a token rotates; it changes no
 * result, and its value must not reach perf.csv). */
static int credential(const char *name)
{
	static const char *const words[] = {"TOKEN",	  "SECRET",  "PASSWORD", "PASSWD",
					    "CREDENTIAL", "API_KEY", "APIKEY",	 "AUTH"};
	char *up = rm_xstrdup(name);
	int yes = 0;

	for (char *p = up; *p; p++)
		if (*p >= 'a' && *p <= 'z')
			*p = (char)(*p - 'a' + 'A');
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]) && !yes; i++)
		yes = strstr(up, words[i]) != NULL;
	free(up);
	return yes;
}

/* The context's docker_env_vars (a sweep point's among them), as "env.NAME", into an
 * identity; not those that hold credentials. */
static void env_identity(const struct run *r, rm_config *id)
{
	for (size_t i = 0; i < r->ctx.n_docker_env_vars; i++) {
		const rm_kv *kv = &r->ctx.docker_env_vars[i];
		char *name;
		if (credential(kv->key))
			continue;
		name = rm_xasprintf("env.%s", kv->key);
		set_masked(r, id, name, kv->value);
		free(name);
	}
}

void rm_runner__config_base(const struct run *r, const rm_workload *w, const char *args,
			    rm_config *params, rm_config *id)
{
	const rm_run_opts *o = r->o;
	const char *precision = o->precision ? o->precision : w->model->training_precision;
	char n[32];

	/* What was set, by name: the point's first, in its order. */
	for (size_t i = 0; o->point && i < o->point->n; i++)
		set_masked(r, params, o->point->p[i].name, o->point->p[i].value);
	tag_args(params, w->extra_args);
	if (o->wl.tunableop != RM_TUNABLEOP_UNSET && !rm_config_get(params, "tunableop"))
		rm_config_set(params, "tunableop",
			      rm_choice_name(rm_tunableop_words, o->wl.tunableop));
	/* The context's docker_env_vars are in the key (below), not among the parameters: a
	 * suite's common environment would name every row, and a value may be private; a
	 * sweep's env.NAME are parameters (the point's, above). */
	if (w->gpus && !rm_config_get(params, "docker_gpus"))
		rm_config_set(params, "docker_gpus", w->gpus);
	if (w->model_args && !rm_config_get(params, "model_args"))
		set_masked(r, params, "model_args", w->model_args);

	/* What changes the result: the identity the key is made of. */
	rm_config_set(id, "model", w->model->name);
	rm_config_set(id, "args", args);
	rm_config_set(id, "precision", precision ? precision : "");
	rm_config_set(id, "tunableop", rm_choice_name(rm_tunableop_words, w->tunableop));
	snprintf(n, sizeof(n), "%ld", rm_workload_gpus(w, &r->ctx));
	rm_config_set(id, "n_gpus", n);
	rm_config_set(id, "docker_gpus", w->gpus ? w->gpus : "");
	env_identity(r, id);
}

void rm_runner__config_row(const struct run *r, const rm_config *params, const rm_config *id,
			   const rm_config *cell, const char *metric, char **text,
			   char key[RM_CONFIG_KEY_LEN + 1])
{
	rm_config row = RM_CONFIG_INIT, rid = RM_CONFIG_INIT, from_metric = RM_CONFIG_INIT;
	char *raw;

	rm_config_merge(&row, params);
	rm_config_merge(&rid, id);
	/* A row's own cell: MAD's narrow columns, and the cell its metric's text carries. */
	rm_config_from_metric(metric, &from_metric);
	rm_config_merge(&from_metric, cell);
	for (size_t i = 0; i < from_metric.n; i++) {
		char *name = rm_xasprintf("cell.%s", from_metric.p[i].name);
		set_masked(r, &row, from_metric.p[i].name, from_metric.p[i].value);
		set_masked(r, &rid, name, from_metric.p[i].value);
		free(name);
	}
	raw = rm_config_text(&row);
	*text = rm_mask_string(&r->mask, raw);
	rm_config_key(&rid, key);
	free(raw);
	rm_config_release(&row);
	rm_config_release(&rid);
	rm_config_release(&from_metric);
}
