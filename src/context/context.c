/*
 * Host detection and --additional-context overrides (see include/rm/context.h).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "context_internal.h"
#include "rm/context.h"
#include "rm/util.h"

/* Context files are a few lines; the ceiling keeps "@/dev/zero" from eating memory. */
#define RM_CONTEXT_MAX_BYTES ((size_t)1 << 20)

/* Shared with dockerfile.c so both sides of a CONTEXT comparison render values the same
 * way; deliberately not in the public header. */
char *rm_context_render_scalar(const json_t *v);

/* The text of a JSON scalar (strings as is, numbers in decimal, Python spellings for
 * True/False/None since CONTEXT lines are Python literals), or NULL for objects/arrays. */
char *rm_context_render_scalar(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_STRING:
		return rm_xstrndup(json_string_value(v), json_string_length(v));
	case JSON_INTEGER:
		return rm_xasprintf("%" JSON_INTEGER_FORMAT, json_integer_value(v));
	case JSON_REAL: {
		double d = json_real_value(v);
		char *s = rm_xasprintf("%.15g", d);
		/* Shortest text that reads back the same number. */
		if (strtod(s, NULL) != d) {
			free(s);
			s = rm_xasprintf("%.17g", d);
		}
		return s;
	}
	case JSON_TRUE:
		return rm_xstrdup("True");
	case JSON_FALSE:
		return rm_xstrdup("False");
	case JSON_NULL:
		return rm_xstrdup("None");
	default:
		return NULL;
	}
}

/* ---- obj and the rendered cache ---- */

static void set_or_del_string(json_t *obj, const char *key, const char *value)
{
	if (value)
		json_object_set_new(obj, key, json_string(value));
	else
		json_object_del(obj, key);
}

static void set_or_del_kv(json_t *obj, const char *key, const rm_kv *kv, size_t n)
{
	json_t *o;

	if (!n) {
		json_object_del(obj, key);
		return;
	}
	o = json_object();
	for (size_t i = 0; i < n; i++)
		json_object_set_new(o, kv[i].key, json_string(kv[i].value));
	json_object_set_new(obj, key, o);
}

/* Writes the typed fields back into obj (they are the truth after validation) and rebuilds
 * the text of every non-string scalar, so rm_context_get can hand out stable pointers. */
static void sync_obj(rm_context *ctx)
{
	const char *key;
	json_t *v;

	if (!ctx->obj)
		ctx->obj = json_object();
	set_or_del_string(ctx->obj, "gpu_vendor", ctx->gpu_vendor);
	set_or_del_string(ctx->obj, "guest_os", ctx->guest_os);
	set_or_del_string(ctx->obj, "MAD_SYSTEM_GPU_ARCHITECTURE", ctx->gpu_arch);
	set_or_del_string(ctx->obj, "MAD_SYSTEM_GPU_PRODUCT_NAME", ctx->gpu_product_name);
	set_or_del_string(ctx->obj, "MAD_SYSTEM_HIP_VERSION", ctx->hip_version);
	json_object_set_new(ctx->obj, "MAD_SYSTEM_NGPUS", json_integer(ctx->n_gpus));
	set_or_del_kv(ctx->obj, "docker_env_vars", ctx->docker_env_vars, ctx->n_docker_env_vars);
	set_or_del_kv(ctx->obj, "env_vars", ctx->env_vars, ctx->n_env_vars);
	set_or_del_kv(ctx->obj, "docker_build_arg", ctx->docker_build_arg, ctx->n_docker_build_arg);
	set_or_del_kv(ctx->obj, "docker_mounts", ctx->docker_mounts, ctx->n_docker_mounts);
	set_or_del_string(ctx->obj, "docker_gpus", ctx->docker_gpus);
	set_or_del_string(ctx->obj, "docker_cpus", ctx->docker_cpus);
	set_or_del_string(ctx->obj, "model_args", ctx->model_args);

	json_decref(ctx->rendered);
	ctx->rendered = json_object();
	json_object_foreach (ctx->obj, key, v) {
		char *s;

		if (json_is_string(v))
			continue;
		s = rm_context_render_scalar(v);
		if (s)
			json_object_set_new(ctx->rendered, key, json_string(s));
		free(s);
	}
}

void rm_context_host_devices(rm_context *ctx)
{
	const char *root = rm_context_get(ctx, "docker_device_root");
	char *fuse = rm_xasprintf("%s/fuse", root && *root ? root : "/dev");
	struct stat st;

	/* the engine refuses a container whose device is missing ("error gathering device
	 * information while adding custom device"): only a character device counts */
	ctx->no_fuse = stat(fuse, &st) != 0 || !S_ISCHR(st.st_mode);
	free(fuse);
}

int rm_context_detect(rm_context *ctx, const char *sysfs_root, int use_tools, rm_error *err)
{
	(void)err; /* a host we cannot read is a host without GPUs, not an error */
	memset(ctx, 0, sizeof(*ctx));
	ctx->guest_os = rm_xstrdup("UBUNTU");
	ctx->obj = json_object();

	rm_context__detect_kfd(ctx, sysfs_root && *sysfs_root ? sysfs_root : "/sys");
	if (!ctx->gpu_vendor && use_tools)
		rm_context__detect_rocminfo(ctx);
	if (!ctx->gpu_vendor && use_tools)
		rm_context__detect_nvidia_smi(ctx);
	rm_context__detect_facts(ctx, sysfs_root && *sysfs_root ? sysfs_root : "/sys", use_tools);
	rm_context__detect_cdi(ctx);
	sync_obj(ctx);
	return 0;
}

/* ---- overrides ---- */

void rm_kv_set(rm_kv **v, size_t *n, const char *key, const char *value)
{
	for (size_t i = 0; i < *n; i++) {
		if (strcmp((*v)[i].key, key) == 0) {
			free((*v)[i].value);
			(*v)[i].value = rm_xstrdup(value);
			return;
		}
	}
	*v = rm_xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[*n].key = rm_xstrdup(key);
	(*v)[*n].value = rm_xstrdup(value);
	(*n)++;
}

static void kv_free(rm_kv *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].key);
		free(v[i].value);
	}
	free(v);
}

/* "0,2-4": indexes and ascending ranges. */
static int valid_gpu_list(const char *s)
{
	if (!*s)
		return 0;
	for (;;) {
		long a, b;
		char *end;

		if (*s < '0' || *s > '9')
			return 0;
		errno = 0;
		a = strtol(s, &end, 10);
		if (errno)
			return 0;
		s = end;
		if (*s == '-') {
			s++;
			if (*s < '0' || *s > '9')
				return 0;
			errno = 0;
			b = strtol(s, &end, 10);
			if (errno || b < a)
				return 0;
			s = end;
		}
		if (!*s)
			return 1;
		if (*s != ',')
			return 0;
		s++;
	}
}

/* Strings and numbers are accepted where a string is wanted: {"HIP_VISIBLE_DEVICES": 0} is
 * what people write. */
static int stringish(const json_t *v)
{
	return json_is_string(v) || json_is_number(v);
}

static int check_kv_object(const char *what, const char *key, const json_t *v, int mounts,
			   rm_error *err)
{
	const char *k;
	json_t *val;

	if (!json_is_object(v))
		return rm_error_set(
		    err, RM_ERR_INPUT, "%s: '%s' must be an object of %s", what, key,
		    mounts ? "{\"/container/path\": \"/host/path\"}" : "{\"NAME\": \"value\"}");
	json_object_foreach ((json_t *)v, k, val) {
		if (!stringish(val))
			return rm_error_set(err, RM_ERR_INPUT,
					    "%s: '%s' entry '%s' must be a string", what, key, k);
		if (!*k || (!mounts && strchr(k, '=')))
			return rm_error_set(err, RM_ERR_INPUT,
					    "%s: '%s' has a bad name '%s' (empty or with '=')",
					    what, key, k);
		if (mounts && k[0] != '/')
			return rm_error_set(
			    err, RM_ERR_INPUT,
			    "%s: 'docker_mounts' key '%s' must be an absolute "
			    "container path ({\"/container/path\": \"/host/path\"})",
			    what, k);
		if (mounts && json_is_string(val) && json_string_length(val) == 0)
			return rm_error_set(err, RM_ERR_INPUT,
					    "%s: 'docker_mounts' entry '%s' needs a host path",
					    what, k);
	}
	return 0;
}

/* Whether a string anywhere in v holds a NUL (YAML and Python-dict text can spell one):
 * the context is C strings, which would end there. */
static int has_nul(const json_t *v)
{
	const char *k;
	json_t *x;
	size_t i;

	if (json_is_string(v))
		return memchr(json_string_value(v), '\0', json_string_length(v)) != NULL;
	if (json_is_object(v)) {
		json_object_foreach ((json_t *)v, k, x)
			if (has_nul(x))
				return 1;
	} else if (json_is_array(v)) {
		json_array_foreach (v, i, x)
			if (has_nul(x))
				return 1;
	}
	return 0;
}

/* Validates one key without changing anything, so a bad override leaves ctx untouched. */
static int check_key(const char *what, const char *key, const json_t *v, rm_error *err)
{
	if (has_nul(v))
		return rm_error_set(err, RM_ERR_INPUT, "%s: '%s' holds a NUL character", what, key);
	if (strcmp(key, "gpu_vendor") == 0 || strcmp(key, "guest_os") == 0 ||
	    strcmp(key, "MAD_SYSTEM_GPU_ARCHITECTURE") == 0 ||
	    strcmp(key, "MAD_SYSTEM_GPU_PRODUCT_NAME") == 0 ||
	    strcmp(key, "MAD_SYSTEM_HIP_VERSION") == 0) {
		if (!json_is_string(v) || json_string_length(v) == 0)
			return rm_error_set(err, RM_ERR_INPUT,
					    "%s: '%s' must be a non-empty string", what, key);
		if (strcmp(key, "gpu_vendor") == 0 && strcmp(json_string_value(v), "AMD") != 0 &&
		    strcmp(json_string_value(v), "NVIDIA") != 0)
			rm_warn("%s: gpu_vendor '%s' is neither 'AMD' nor 'NVIDIA'; Dockerfile "
				"CONTEXT filters compare it exactly",
				what, json_string_value(v));
		return 0;
	}
	if (strcmp(key, "MAD_SYSTEM_NGPUS") == 0) {
		long n;
		if ((json_is_integer(v) && json_integer_value(v) >= 0 &&
		     json_integer_value(v) <= 1000000) ||
		    (json_is_string(v) && rm_parse_long(json_string_value(v), 0, 1000000, &n) == 0))
			return 0;
		return rm_error_set(err, RM_ERR_INPUT,
				    "%s: 'MAD_SYSTEM_NGPUS' must be a non-negative GPU count",
				    what);
	}
	if (strcmp(key, "docker_env_vars") == 0 || strcmp(key, "docker_build_arg") == 0 ||
	    strcmp(key, "env_vars") == 0)
		return check_kv_object(what, key, v, 0, err);
	if (strcmp(key, "docker_mounts") == 0)
		return check_kv_object(what, key, v, 1, err);
	if (strcmp(key, "docker_gpus") == 0) {
		char *s = stringish(v) ? rm_context_render_scalar(v) : NULL;
		int ok = s && valid_gpu_list(s);

		free(s);
		if (!ok)
			return rm_error_set(
			    err, RM_ERR_INPUT,
			    "%s: 'docker_gpus' must list GPU indexes and ranges such "
			    "as \"0,2-4\"",
			    what);
		return 0;
	}
	if (strcmp(key, "docker_cpus") == 0) {
		if (!stringish(v))
			return rm_error_set(err, RM_ERR_INPUT,
					    "%s: 'docker_cpus' must be a string such as \"0-15\"",
					    what);
		return 0;
	}
	if (strcmp(key, "model_args") == 0) {
		if (!json_is_string(v))
			return rm_error_set(err, RM_ERR_INPUT, "%s: 'model_args' must be a string",
					    what);
		return 0;
	}
	return 0;
}

static void replace_str(char **dst, const json_t *v)
{
	free(*dst);
	*dst = rm_context_render_scalar(v);
}

static void apply_kv(rm_kv **arr, size_t *n, const json_t *obj)
{
	const char *k;
	json_t *val;

	json_object_foreach ((json_t *)obj, k, val) {
		char *s = rm_context_render_scalar(val);
		rm_kv_set(arr, n, k, s);
		free(s);
	}
}

static void apply_key(rm_context *ctx, const char *key, json_t *v)
{
	if (strcmp(key, "gpu_vendor") == 0) {
		replace_str(&ctx->gpu_vendor, v);
	} else if (strcmp(key, "guest_os") == 0) {
		replace_str(&ctx->guest_os, v);
	} else if (strcmp(key, "MAD_SYSTEM_GPU_ARCHITECTURE") == 0) {
		replace_str(&ctx->gpu_arch, v);
	} else if (strcmp(key, "MAD_SYSTEM_GPU_PRODUCT_NAME") == 0) {
		replace_str(&ctx->gpu_product_name, v);
	} else if (strcmp(key, "MAD_SYSTEM_HIP_VERSION") == 0) {
		replace_str(&ctx->hip_version, v);
	} else if (strcmp(key, "MAD_SYSTEM_NGPUS") == 0) {
		long n = 0;
		if (json_is_integer(v))
			n = (long)json_integer_value(v);
		else
			rm_parse_long(json_string_value(v), 0, 1000000, &n);
		ctx->n_gpus = n;
	} else if (strcmp(key, "docker_env_vars") == 0) {
		apply_kv(&ctx->docker_env_vars, &ctx->n_docker_env_vars, v);
	} else if (strcmp(key, "env_vars") == 0) {
		apply_kv(&ctx->env_vars, &ctx->n_env_vars, v);
	} else if (strcmp(key, "docker_build_arg") == 0) {
		apply_kv(&ctx->docker_build_arg, &ctx->n_docker_build_arg, v);
	} else if (strcmp(key, "docker_mounts") == 0) {
		apply_kv(&ctx->docker_mounts, &ctx->n_docker_mounts, v);
	} else if (strcmp(key, "docker_gpus") == 0) {
		replace_str(&ctx->docker_gpus, v);
	} else if (strcmp(key, "docker_cpus") == 0) {
		replace_str(&ctx->docker_cpus, v);
	} else if (strcmp(key, "model_args") == 0) {
		replace_str(&ctx->model_args, v);
	} else {
		json_object_set(ctx->obj, key, v);
	}
}

static int read_context_file(const char *what, const char *path, char **out, rm_error *err)
{
	int r = rm_read_file(path, RM_CONTEXT_MAX_BYTES, out, NULL, err);
	if (r < 0 && rm_error_missing(err))
		rm_error_set(err, RM_ERR_INPUT, "cannot open '%s': no such file", path);
	if (r != 0) {
		err->kind = RM_ERR_INPUT;
		return rm_error_wrap(err, "%s", what);
	}
	return 0;
}

int rm_context_apply(rm_context *ctx, const char *json_or_file, const char *what, rm_error *err)
{
	char *file_text = NULL, *label = NULL;
	const char *text = json_or_file;
	json_t *root = NULL, *v;
	json_error_t jerr;
	const char *key;
	int ret = -1;

	if (!what)
		what = "context";
	if (!text)
		text = "";
	if (text[0] == '@') {
		if (read_context_file(what, text + 1, &file_text, err))
			goto out;
		label = rm_xasprintf("%s '%s'", what, text + 1);
		text = file_text;
	} else {
		label = rm_xstrdup(what);
	}

	root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
	if (!root && json_error_code(&jerr) == json_error_duplicate_key) {
		rm_error_set(err, RM_ERR_INPUT, "%s: line %d column %d: %s", label, jerr.line,
			     jerr.column, jerr.text);
		goto out;
	}
	if (!root) {
		/* MAD users pass Python dicts ({'gpu_vendor': 'AMD'}); accept them too. */
		rm_error pyerr = RM_ERROR_INIT;
		root = rm_pydict_parse(text, &pyerr);
		if (!root) {
			rm_error_set(
			    err, RM_ERR_INPUT,
			    "%s: not valid JSON (line %d column %d: %s), nor a Python dict "
			    "(%s); pass an object such as '{\"gpu_vendor\": \"AMD\"}'",
			    label, jerr.line, jerr.column, jerr.text, rm_error_text(&pyerr));
			goto out;
		}
	}
	if (!json_is_object(root)) {
		rm_error_set(err, RM_ERR_INPUT,
			     "%s: must be an object such as '{\"gpu_vendor\": \"AMD\"}'", label);
		goto out;
	}
	json_object_foreach (root, key, v) {
		if (check_key(label, key, v, err))
			goto out;
	}
	if (!ctx->obj)
		ctx->obj = json_object();
	json_object_foreach (root, key, v)
		apply_key(ctx, key, v);
	sync_obj(ctx);
	ret = 0;
out:
	json_decref(root);
	free(file_text);
	free(label);
	return ret;
}

const char *rm_context_get(const rm_context *ctx, const char *key)
{
	json_t *v;

	if (!ctx || !ctx->obj || !key)
		return NULL;
	v = json_object_get(ctx->obj, key);
	if (!v)
		return NULL;
	if (json_is_string(v))
		return json_string_value(v);
	return json_string_value(json_object_get(ctx->rendered, key));
}

void rm_context_release(rm_context *ctx)
{
	if (!ctx)
		return;
	free(ctx->gpu_vendor);
	free(ctx->guest_os);
	free(ctx->gpu_arch);
	free(ctx->gpu_product_name);
	free(ctx->hip_version);
	free(ctx->render_nodes);
	kv_free(ctx->docker_env_vars, ctx->n_docker_env_vars);
	kv_free(ctx->env_vars, ctx->n_env_vars);
	kv_free(ctx->docker_build_arg, ctx->n_docker_build_arg);
	kv_free(ctx->docker_mounts, ctx->n_docker_mounts);
	free(ctx->docker_gpus);
	free(ctx->docker_cpus);
	free(ctx->model_args);
	rm_strv_free(ctx->cdi_specs);
	rm_strv_free(ctx->cdi_devices);
	json_decref(ctx->obj);
	json_decref(ctx->rendered);
	memset(ctx, 0, sizeof(*ctx));
}

int rm_context_apply_file(rm_context *ctx, const char *path, rm_error *err)
{
	json_t *j = NULL;
	json_error_t je;
	char *text = NULL, *what = NULL, *dumped = NULL;
	size_t len = 0;
	int ret = -1;
	int r = rm_read_file(path, (size_t)16 << 20, &text, &len, err);

	if (r != 0) {
		if (rm_error_missing(err))
			rm_error_set(err, RM_ERR_INPUT, "cannot open '%s': no such file", path);
		err->kind = RM_ERR_INPUT;
		return rm_error_wrap(err, "--additional-context-file");
	}
	j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!j && !(j = rm_yaml_to_json(text, len, path, err)))
		goto out;
	if (!json_is_object(j)) {
		rm_error_set(err, RM_ERR_INPUT, "'%s' must hold a mapping of context keys", path);
		goto out;
	}
	dumped = json_dumps(j, JSON_COMPACT);
	what = rm_xasprintf("--additional-context-file '%s'", path);
	ret = rm_context_apply(ctx, dumped, what, err);
out:
	free(text);
	json_decref(j);
	free(dumped);
	free(what);
	return ret;
}
