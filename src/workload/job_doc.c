/*
 * The job document and the workloads in it, to JSON and back (rm/workload.h): the one file
 * that knows their keys. The reader takes untrusted text (a file on a shared folder): every
 * value is type-checked, every error names the key, and nothing it reads can make a
 * secret's value appear (only names are stored).
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "workload_internal.h"

/* ---- writing ---- */

static json_t *json_str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *kv_pairs(const rm_kv *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a,
				      json_pack("[s, s]", v[i].key, v[i].value ? v[i].value : ""));
	return a;
}

static json_t *json_strv(char *const *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; v && i < n; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

static json_t *plan_json(const rm_data_plan *p)
{
	json_t *sources = json_array();

	for (size_t i = 0; i < p->n; i++) {
		const rm_data_source *s = &p->sources[i];
		json_array_append_new(
		    sources,
		    json_pack("{s:o, s:o, s:o, s:o, s:b, s:b, s:o, s:o}", "dataname",
			      json_str_or_null(s->dataname), "provider",
			      json_str_or_null(s->provider), "home", json_str_or_null(s->home),
			      "host_path", json_str_or_null(s->host_path), "read_only",
			      s->read_only, "create_host_path", s->create_host_path, "script",
			      json_str_or_null(s->script), "script_args",
			      json_str_or_null(s->script_args)));
	}
	return json_pack("{s:o, s:o, s:o, s:o}", "sources", sources, "datahome",
			 json_str_or_null(p->datahome), "dataname", json_str_or_null(p->dataname),
			 "provider_type", json_str_or_null(p->provider_type));
}

static json_t *scripts_json(const rm_tool_script *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(
		    a, json_pack("{s:o, s:o, s:o, s:o}", "tool", json_str_or_null(v[i].tool),
				 "path", json_str_or_null(v[i].path), "text",
				 json_str_or_null(v[i].text), "args", json_str_or_null(v[i].args)));
	return a;
}

static json_t *tools_json(const rm_tool_plan *p)
{
	json_t *outputs = json_array(), *copies = json_array();

	for (size_t i = 0; i < p->n_outputs; i++)
		json_array_append_new(outputs,
				      json_pack("[s, s]", p->outputs[i].tool, p->outputs[i].glob));
	for (size_t i = 0; i < p->n_copies; i++)
		json_array_append_new(copies,
				      json_pack("[s, s]", p->copies[i].host, p->copies[i].dest));
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "tools",
			 json_strv(p->tools, p->n_tools), "sources",
			 json_strv(p->sources, p->sources ? p->n_tools : 0), "pre",
			 scripts_json(p->pre, p->n_pre), "post", scripts_json(p->post, p->n_post),
			 "wrap", json_str_or_null(p->wrap), "env", kv_pairs(p->env, p->n_env),
			 "outputs", outputs, "copies", copies);
}

/* Per kind of RM_WORKLOAD_SETTINGS row: its JSON value (STR: no row today). */
__attribute__((unused)) static json_t *set_STR(const char *v)
{
	return json_str_or_null(v);
}
static json_t *set_BOOL(int v)
{
	return json_boolean(v);
}
static json_t *set_SIZE(long long v)
{
	return json_integer((json_int_t)v);
}
static json_t *set_SECONDS(double v)
{
	return json_real(v);
}
static json_t *set_TUNABLEOP(rm_tunableop v)
{
	return json_str_or_null(rm_choice_name(rm_tunableop_words, (int)v));
}
static json_t *set_TELEMETRY(rm_telemetry_mode v)
{
	return json_str_or_null(rm_choice_name(rm_telemetry_words, (int)v));
}
static json_t *set_PREFLIGHT(rm_preflight_mode v)
{
	return json_str_or_null(rm_choice_name(rm_preflight_words, (int)v));
}

static json_t *settings_json(const rm_workload_settings *s)
{
	json_t *o = json_object();
#define SET_ONE(kind, name) json_object_set_new(o, #name, set_##kind(s->name));
	RM_WORKLOAD_SETTINGS(SET_ONE)
#undef SET_ONE
	return o;
}

json_t *rm_workload_to_json(const rm_workload *w)
{
	json_t *o = json_object();

	json_object_set_new(o, "model", json_str_or_null(w->model_name));
	json_object_set_new(o, "image", json_str_or_null(w->image));
	json_object_set_new(o, "run_id", json_str_or_null(w->run_id));
	json_object_set_new(o, "log_dir", json_str_or_null(w->log_dir));
	json_object_set_new(o, "extra_args", json_str_or_null(w->extra_args));
	json_object_set_new(o, "model_args", json_str_or_null(w->model_args));
	json_object_set_new(o, "n_gpus", json_integer(w->n_gpus));
	json_object_set_new(o, "tunableop", set_TUNABLEOP(w->tunableop));
	json_object_set_new(o, "tunableop_dir", json_str_or_null(w->tunableop_dir));
	json_object_set_new(o, "timeout", json_real(w->timeout));
	json_object_set_new(o, "env", kv_pairs(w->env, w->n_env));
	json_object_set_new(o, "env_vars", kv_pairs(w->env_vars, w->n_env_vars));
	json_object_set_new(o, "image_name_given", json_boolean(w->image_name_given));
	json_object_set_new(o, "secrets", json_strv(w->secrets, w->n_secrets));
	json_object_set_new(o, "mounts", kv_pairs(w->mounts, w->n_mounts));
	json_object_set_new(o, "gpus", json_str_or_null(w->gpus));
	json_object_set_new(o, "cpus", json_str_or_null(w->cpus));
	json_object_set_new(o, "data", plan_json(&w->data));
	json_object_set_new(o, "tools", tools_json(&w->tools));
	json_object_set_new(o, "build_number", json_str_or_null(w->build_number));
	json_object_set_new(o, "launcher", json_str_or_null(w->dist_launcher));
	json_object_set_new(o, "settings", settings_json(&w->set));
	return o;
}

json_t *rm_job_doc_to_json(const rm_job_doc *d)
{
	json_t *ws = json_object();

	for (size_t i = 0; i < d->n; i++) {
		const rm_job_entry *e = &d->entries[i];
		json_t *w = rm_workload_to_json(&e->w);
		json_object_set_new(w, "pull", json_boolean(e->pull));
		json_object_set_new(w, "log_base", json_str_or_null(e->log_base));
		json_object_set_new(ws, e->key, w);
	}
	return json_pack("{s:i, s:o, s:o, s:o, s:o, s:o, s:o}", "schema", RM_WORKLOAD_SCHEMA,
			 "run_id", json_str_or_null(d->run_id), "root", json_str_or_null(d->root),
			 "log_dir", json_str_or_null(d->log_dir), "context_files",
			 json_strv(d->context_files, rm_strv_len(d->context_files)), "contexts",
			 json_strv(d->contexts, rm_strv_len(d->contexts)), "workloads", ws);
}

/* ---- reading ---- */

/* A string or null member into *out (owned); a missing member is null. */
static int member_str(json_t *o, const char *key, char **out, rm_error *err)
{
	json_t *v = json_object_get(o, key);

	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return rm_error_set(err, RM_ERR_INPUT, "'%s' is not a string", key);
	if (strlen(json_string_value(v)) != json_string_length(v))
		return rm_error_set(err, RM_ERR_INPUT, "'%s' holds a NUL character", key);
	*out = rm_xstrdup(json_string_value(v));
	return 0;
}

static int member_need_str(json_t *o, const char *key, char **out, rm_error *err)
{
	if (member_str(o, key, out, err) < 0)
		return -1;
	if (!*out)
		return rm_error_set(err, RM_ERR_INPUT, "'%s' is missing", key);
	return 0;
}

static int member_bool(json_t *o, const char *key, int *out, rm_error *err)
{
	json_t *v = json_object_get(o, key);

	*out = 0;
	if (!v)
		return 0;
	if (!json_is_boolean(v))
		return rm_error_set(err, RM_ERR_INPUT, "'%s' is not true or false", key);
	*out = json_is_true(v);
	return 0;
}

static int member_number(json_t *o, const char *key, double *out, rm_error *err)
{
	json_t *v = json_object_get(o, key);

	if (!v)
		return 0;
	if (!json_is_number(v))
		return rm_error_set(err, RM_ERR_INPUT, "'%s' is not a number", key);
	*out = json_number_value(v);
	return 0;
}

static int member_integer(json_t *o, const char *key, long long lo, long long hi, long long *out,
			  rm_error *err)
{
	json_t *v = json_object_get(o, key);

	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
		return rm_error_set(err, RM_ERR_INPUT, "'%s' is not an integer from %lld to %lld",
				    key, lo, hi);
	*out = json_integer_value(v);
	return 0;
}

static int member_strv(json_t *o, const char *key, char ***out, size_t *n, rm_error *err)
{
	json_t *a = json_object_get(o, key), *v;
	size_t i;

	*n = 0;
	*out = rm_xcalloc(1, sizeof(**out));
	if (!a || json_is_null(a))
		return 0;
	if (!json_is_array(a))
		return rm_error_set(err, RM_ERR_INPUT, "'%s' is not an array", key);
	json_array_foreach (a, i, v) {
		if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v))
			return rm_error_set(err, RM_ERR_INPUT, "'%s' item %zu is not a string", key,
					    i);
		*out = rm_strv_push(*out, n, json_string_value(v));
	}
	return 0;
}

static int member_pairs(json_t *o, const char *key, rm_kv **out, size_t *n, rm_error *err)
{
	json_t *a = json_object_get(o, key), *p;
	size_t i;

	*out = NULL;
	*n = 0;
	if (!a || json_is_null(a))
		return 0;
	if (!json_is_array(a))
		return rm_error_set(err, RM_ERR_INPUT, "'%s' is not an array", key);
	*out = rm_xcalloc(json_array_size(a) + 1, sizeof(**out));
	json_array_foreach (a, i, p) {
		const char *k = json_string_value(json_array_get(p, 0));
		const char *v = json_string_value(json_array_get(p, 1));
		if (json_array_size(p) != 2 || !k || !v ||
		    strlen(k) != json_string_length(json_array_get(p, 0)) ||
		    strlen(v) != json_string_length(json_array_get(p, 1)))
			return rm_error_set(err, RM_ERR_INPUT,
					    "'%s' item %zu is not a pair of strings", key, i);
		(*out)[i].key = rm_xstrdup(k);
		(*out)[i].value = rm_xstrdup(v);
		(*n)++;
	}
	return 0;
}

static int source_from(json_t *s, rm_data_source *d, rm_error *err)
{
	if (!json_is_object(s))
		return rm_error_set(err, RM_ERR_INPUT, "not an object");
	if (member_need_str(s, "dataname", &d->dataname, err) < 0 ||
	    member_need_str(s, "provider", &d->provider, err) < 0 ||
	    member_need_str(s, "home", &d->home, err) < 0 ||
	    member_str(s, "host_path", &d->host_path, err) < 0 ||
	    member_bool(s, "read_only", &d->read_only, err) < 0 ||
	    member_bool(s, "create_host_path", &d->create_host_path, err) < 0 ||
	    member_str(s, "script", &d->script, err) < 0 ||
	    member_str(s, "script_args", &d->script_args, err) < 0)
		return -1;
	return 0;
}

static int plan_from(json_t *o, rm_data_plan *p, rm_error *err)
{
	json_t *data = json_object_get(o, "data"), *sources, *s;
	size_t i;

	if (!data || json_is_null(data))
		return 0;
	if (!json_is_object(data))
		return rm_error_set(err, RM_ERR_INPUT, "'data' is not an object");
	sources = json_object_get(data, "sources");
	if (sources && !json_is_array(sources))
		return rm_error_set(err, RM_ERR_INPUT, "'data': 'sources' is not an array");
	if (json_array_size(sources))
		p->sources = rm_xcalloc(json_array_size(sources), sizeof(*p->sources));
	json_array_foreach (sources, i, s) {
		p->n++;
		if (source_from(s, &p->sources[i], err) < 0)
			return rm_error_wrap(err, "'data': source %zu", i);
	}
	if (member_str(data, "datahome", &p->datahome, err) < 0 ||
	    member_str(data, "dataname", &p->dataname, err) < 0 ||
	    member_str(data, "provider_type", &p->provider_type, err) < 0)
		return rm_error_wrap(err, "'data'");
	if (p->n && (!p->datahome || !p->dataname || !p->provider_type))
		return rm_error_set(
		    err, RM_ERR_INPUT,
		    "'data' has sources but no datahome, dataname or provider_type");
	return 0;
}

static int scripts_from(json_t *o, const char *key, rm_tool_script **v, size_t *n, rm_error *err)
{
	json_t *a = json_object_get(o, key), *s;
	size_t i;

	*v = NULL;
	*n = 0;
	if (!a || json_is_null(a))
		return 0;
	if (!json_is_array(a))
		return rm_error_set(err, RM_ERR_INPUT, "'%s' is not an array", key);
	*v = rm_xcalloc(json_array_size(a) + 1, sizeof(**v));
	json_array_foreach (a, i, s) {
		rm_tool_script *t = &(*v)[i];
		(*n)++;
		if (!json_is_object(s))
			return rm_error_set(err, RM_ERR_INPUT, "'%s' item %zu is not an object",
					    key, i);
		if (member_str(s, "tool", &t->tool, err) < 0 ||
		    member_str(s, "path", &t->path, err) < 0 ||
		    member_str(s, "text", &t->text, err) < 0 ||
		    member_str(s, "args", &t->args, err) < 0)
			return rm_error_wrap(err, "'%s' item %zu", key, i);
		if (!t->path == !t->text)
			return rm_error_set(err, RM_ERR_INPUT,
					    "'%s' item %zu has no 'path' or 'text', or both", key,
					    i);
	}
	return 0;
}

/* [[a, b], ...] into pairs of the plan's own types. */
static int pairs_from(json_t *o, const char *key, char ***a, char ***b, size_t *n, rm_error *err)
{
	rm_kv *kv = NULL;
	size_t k = 0;

	if (member_pairs(o, key, &kv, &k, err) < 0) {
		rm_workload__kv_free(kv, k);
		return -1;
	}
	*n = k;
	*a = rm_xcalloc(k + 1, sizeof(**a));
	*b = rm_xcalloc(k + 1, sizeof(**b));
	for (size_t i = 0; i < k; i++) {
		(*a)[i] = kv[i].key;
		(*b)[i] = kv[i].value;
	}
	free(kv);
	return 0;
}

static int tools_from(json_t *o, rm_tool_plan *p, rm_error *err)
{
	json_t *t = json_object_get(o, "tools");
	char **a = NULL, **b = NULL;
	size_t n = 0, ns = 0;
	int ret = -1;

	if (!t || json_is_null(t))
		return 0;
	if (!json_is_object(t))
		return rm_error_set(err, RM_ERR_INPUT, "'tools' is not an object");
	if (member_strv(t, "tools", &p->tools, &p->n_tools, err) < 0 ||
	    member_strv(t, "sources", &p->sources, &ns, err) < 0 ||
	    scripts_from(t, "pre", &p->pre, &p->n_pre, err) < 0 ||
	    scripts_from(t, "post", &p->post, &p->n_post, err) < 0 ||
	    member_str(t, "wrap", &p->wrap, err) < 0 ||
	    member_pairs(t, "env", &p->env, &p->n_env, err) < 0)
		goto out;
	if (ns != p->n_tools) {
		rm_error_set(err, RM_ERR_INPUT, "'sources' has %zu items and 'tools' %zu", ns,
			     p->n_tools);
		goto out;
	}
	if (pairs_from(t, "outputs", &a, &b, &n, err) < 0)
		goto out;
	p->outputs = n ? rm_xcalloc(n, sizeof(*p->outputs)) : NULL;
	for (size_t i = 0; i < n; i++)
		p->outputs[i] = (rm_tool_output){a[i], b[i]};
	p->n_outputs = n;
	free(a);
	free(b);
	a = b = NULL;
	if (pairs_from(t, "copies", &a, &b, &n, err) < 0)
		goto out;
	p->copies = n ? rm_xcalloc(n, sizeof(*p->copies)) : NULL;
	for (size_t i = 0; i < n; i++)
		p->copies[i] = (rm_tool_copy){a[i], b[i]};
	p->n_copies = n;
	ret = 0;
out:
	free(a);
	free(b);
	return ret < 0 ? rm_error_wrap(err, "'tools'") : 0;
}

/* Per kind of RM_WORKLOAD_SETTINGS row: its value from JSON. */
__attribute__((unused)) static int read_STR(json_t *o, const char *key, const char **out,
					    rm_error *err)
{
	char *s = NULL;
	int r = member_str(o, key, &s, err);
	*out = s;
	return r;
}
static int read_BOOL(json_t *o, const char *key, int *out, rm_error *err)
{
	return member_bool(o, key, out, err);
}
static int read_SIZE(json_t *o, const char *key, long long *out, rm_error *err)
{
	return member_integer(o, key, 0, (long long)1 << 50, out, err);
}
static int read_SECONDS(json_t *o, const char *key, double *out, rm_error *err)
{
	return member_number(o, key, out, err);
}
/* A closed set's word (NULL or absent: unset, 0), through its table. */
static int read_choice(json_t *o, const char *key, const rm_choice *words, int *out, rm_error *err)
{
	char *s = NULL;
	int r = member_str(o, key, &s, err);

	*out = 0;
	if (r == 0 && s && rm_choice_parse(words, s, out) < 0) {
		char *list = rm_choice_list(words, "", ", ", " or ");
		r = rm_error_set(err, RM_ERR_INPUT, "'%s' is '%s', not %s", key, s, list);
		free(list);
	}
	free(s);
	return r;
}
static int read_TUNABLEOP(json_t *o, const char *key, rm_tunableop *out, rm_error *err)
{
	int v;
	int r = read_choice(o, key, rm_tunableop_words, &v, err);
	*out = (rm_tunableop)v;
	return r;
}
static int read_TELEMETRY(json_t *o, const char *key, rm_telemetry_mode *out, rm_error *err)
{
	int v;
	int r = read_choice(o, key, rm_telemetry_words, &v, err);
	*out = (rm_telemetry_mode)v;
	return r;
}
static int read_PREFLIGHT(json_t *o, const char *key, rm_preflight_mode *out, rm_error *err)
{
	int v;
	int r = read_choice(o, key, rm_preflight_words, &v, err);
	*out = (rm_preflight_mode)v;
	return r;
}

static int settings_from(json_t *o, rm_workload_settings *s, rm_error *err)
{
	json_t *set = json_object_get(o, "settings");

	*s = (rm_workload_settings)RM_WORKLOAD_SETTINGS_INIT;
	if (!set)
		return 0;
	if (!json_is_object(set))
		return rm_error_set(err, RM_ERR_INPUT, "'settings' is not an object");
#define READ_ONE(kind, name)                                                                       \
	if (read_##kind(set, #name, &s->name, err) < 0)                                            \
		return rm_error_wrap(err, "'settings'");
	RM_WORKLOAD_SETTINGS(READ_ONE)
#undef READ_ONE
	return 0;
}

/* A variable name: [A-Za-z_][A-Za-z0-9_]* (no '=', which would set another variable). */
static int var_name(const char *s)
{
	if (!s || !((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return 1;
}

/*
 * What a node takes from a job document it did not write is checked (issue 29): a document
 * could otherwise name any host variable a secret (the node copies its value into the
 * container and, not being a MAD_SECRETS one, prints it unmasked), or set a variable through
 * a name with '='.
 */
static int doc_names_ok(const rm_workload *w, rm_error *err)
{
	for (size_t i = 0; i < w->n_secrets; i++)
		if (!var_name(w->secrets[i]) || !strstr(w->secrets[i], "MAD_SECRETS"))
			return rm_error_set(err, RM_ERR_INPUT,
					    "'secrets' names '%s', which is no MAD_SECRETS "
					    "variable: a job document carries only the names of "
					    "the run's secrets",
					    w->secrets[i]);
	for (size_t i = 0; i < w->n_env; i++)
		if (!var_name(w->env[i].key))
			return rm_error_set(err, RM_ERR_INPUT,
					    "'env' has '%s', which is not a variable name",
					    w->env[i].key);
	return 0;
}

static int workload_fields(json_t *j, rm_workload *w, rm_error *err)
{
	long long n_gpus = -1;

	if (!json_is_object(j))
		return rm_error_set(err, RM_ERR_INPUT, "not an object");
	if (settings_from(j, &w->set, err) < 0 ||
	    member_need_str(j, "model", &w->model_name, err) < 0 ||
	    member_str(j, "image", &w->image, err) < 0 ||
	    member_need_str(j, "run_id", &w->run_id, err) < 0 ||
	    member_str(j, "log_dir", &w->log_dir, err) < 0 ||
	    member_str(j, "extra_args", &w->extra_args, err) < 0 ||
	    member_str(j, "model_args", &w->model_args, err) < 0 ||
	    member_integer(j, "n_gpus", -1, 1 << 20, &n_gpus, err) < 0 ||
	    read_TUNABLEOP(j, "tunableop", &w->tunableop, err) < 0 ||
	    member_str(j, "tunableop_dir", &w->tunableop_dir, err) < 0 ||
	    member_number(j, "timeout", &w->timeout, err) < 0 ||
	    member_pairs(j, "env", &w->env, &w->n_env, err) < 0 ||
	    member_pairs(j, "env_vars", &w->env_vars, &w->n_env_vars, err) < 0 ||
	    member_bool(j, "image_name_given", &w->image_name_given, err) < 0 ||
	    member_strv(j, "secrets", &w->secrets, &w->n_secrets, err) < 0 ||
	    member_pairs(j, "mounts", &w->mounts, &w->n_mounts, err) < 0 ||
	    member_str(j, "gpus", &w->gpus, err) < 0 || member_str(j, "cpus", &w->cpus, err) < 0 ||
	    plan_from(j, &w->data, err) < 0 || tools_from(j, &w->tools, err) < 0 ||
	    member_str(j, "build_number", &w->build_number, err) < 0 ||
	    member_str(j, "launcher", &w->dist_launcher, err) < 0)
		return -1;
	w->n_gpus = (long)n_gpus;
	if (!(w->timeout >= 0))
		return rm_error_set(err, RM_ERR_INPUT, "'timeout' is negative");
	if (doc_names_ok(w, err) < 0)
		return -1;
	if (!w->log_dir)
		w->log_dir = rm_xstrdup(".");
	return 0;
}

int rm_workload_from_json(rm_workload *w, json_t *j, rm_error *err)
{
	memset(w, 0, sizeof(*w));
	w->set = (rm_workload_settings)RM_WORKLOAD_SETTINGS_INIT;
	w->timeout = RM_DEFAULT_TIMEOUT;
	if (workload_fields(j, w, err) < 0) {
		rm_workload_release(w);
		return -1;
	}
	return 0;
}

static int schema_of(json_t *doc, int *schema, rm_error *err)
{
	long long v = 0;

	if (member_integer(doc, "schema", 0, 1 << 20, &v, err) < 0)
		return -1;
	if (v != RM_WORKLOAD_SCHEMA)
		return rm_error_set(err, RM_ERR_INPUT,
				    v ? "schema %lld is not this run_models' (%d): submit and run "
					"with the same version"
				      : "no 'schema' (%lld): not a job document of this "
					"run_models (%d)",
				    v, RM_WORKLOAD_SCHEMA);
	*schema = (int)v;
	return 0;
}

int rm_job_doc_from_json(rm_job_doc *d, json_t *doc, const char *what, rm_error *err)
{
	json_t *ws, *w;
	const char *key;
	size_t n = 0;
	int ret = -1;

	memset(d, 0, sizeof(*d));
	if (!json_is_object(doc)) {
		rm_error_set(err, RM_ERR_INPUT, "not a JSON object");
		goto out;
	}
	if (schema_of(doc, &d->schema, err) < 0 ||
	    member_need_str(doc, "run_id", &d->run_id, err) < 0 ||
	    member_need_str(doc, "root", &d->root, err) < 0 ||
	    member_str(doc, "log_dir", &d->log_dir, err) < 0 ||
	    member_strv(doc, "context_files", &d->context_files, &n, err) < 0 ||
	    member_strv(doc, "contexts", &d->contexts, &n, err) < 0)
		goto out;
	ws = json_object_get(doc, "workloads");
	if (!json_is_object(ws)) {
		rm_error_set(err, RM_ERR_INPUT, "'workloads' is not an object");
		goto out;
	}
	d->entries = rm_xcalloc(json_object_size(ws) + 1, sizeof(*d->entries));
	json_object_foreach (ws, key, w) {
		rm_job_entry *e = &d->entries[d->n];
		if (rm_workload_from_json(&e->w, w, err) < 0 ||
		    member_bool(w, "pull", &e->pull, err) < 0 ||
		    member_need_str(w, "log_base", &e->log_base, err) < 0 ||
		    (e->log_base[0] != '/' &&
		     rm_error_set(err, RM_ERR_INPUT,
				  "'log_base' '%s' is not an absolute path (the submitting run "
				  "writes one)",
				  e->log_base) < 0)) {
			rm_workload_release(&e->w);
			free(e->log_base);
			rm_error_wrap(err, "workload '%s'", key);
			goto out;
		}
		e->key = rm_xstrdup(key);
		d->n++;
	}
	ret = 0;
out:
	if (ret < 0) {
		rm_error_wrap(err, "job document '%s'", what);
		rm_job_doc_release(d);
	}
	return ret;
}

/* ---- the document in memory ---- */

void rm_job_doc_add(rm_job_doc *d, const char *key, const rm_workload *w, int pull,
		    const char *log_base)
{
	rm_job_entry *e = NULL;

	for (size_t i = 0; i < d->n && !e; i++)
		if (!strcmp(d->entries[i].key, key))
			e = &d->entries[i];
	if (e) {
		rm_workload_release(&e->w);
		free(e->log_base);
	} else {
		d->entries = rm_xrealloc(d->entries, (d->n + 1) * sizeof(*d->entries));
		e = &d->entries[d->n++];
		e->key = rm_xstrdup(key);
	}
	rm_workload_copy(&e->w, w);
	e->pull = pull;
	e->log_base = log_base ? rm_xstrdup(log_base) : NULL;
}

const rm_job_entry *rm_job_doc_find(const rm_job_doc *d, const char *key)
{
	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->entries[i].key, key))
			return &d->entries[i];
	return NULL;
}

void rm_job_doc_release(rm_job_doc *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++) {
		free(d->entries[i].key);
		free(d->entries[i].log_base);
		rm_workload_release(&d->entries[i].w);
	}
	free(d->entries);
	free(d->run_id);
	free(d->root);
	free(d->log_dir);
	rm_strv_free(d->context_files);
	rm_strv_free(d->contexts);
	memset(d, 0, sizeof(*d));
}
