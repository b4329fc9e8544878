/*
 * Fuzzes the run context's parsers: --additional-context text (JSON, a Python dict, or
 * "@file"), --additional-context-file (JSON or YAML), rm_context_get and the Python-dict
 * parser, all with the same input. Besides "no crash, no leak", it checks the promises of
 * include/rm/context.h:
 *
 *   - a rejected override fills err and leaves the context exactly as it was;
 *   - an accepted one brings every string value in whole (nothing cut at a NUL);
 *   - after any call the typed fields and obj (what rm_context_get and CONTEXT filters see)
 *     agree, and the validated fields hold only values the validation allows;
 *   - applying the same override twice gives the same context as applying it once;
 *   - a JSON object gives the same context through --additional-context and through a
 *     context file;
 *   - rm_pydict_parse returns an object or fills err.
 *
 * Input: the whole input is the text. A leading '@' is never passed on as a path (the
 * fuzzer would find "@/dev/stdin"): the rest of the input goes into a temp file and
 * "@<that file>" is applied instead. The context file is the same temp file holding the
 * whole input, embedded NULs included.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "rm/context.h"
#include "rm/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What a host detection could have found, so overrides merge into non-empty fields. */
static const char base_context[] =
    "{\"gpu_vendor\": \"AMD\", \"MAD_SYSTEM_GPU_ARCHITECTURE\": \"gfx942\", "
    "\"MAD_SYSTEM_NGPUS\": 8, \"docker_env_vars\": {\"HIP_VISIBLE_DEVICES\": \"0\"}, "
    "\"docker_mounts\": {\"/data\": \"/tmp\"}, \"docker_gpus\": \"0-7\"}";

/* One temp file per process (libFuzzer workers are processes), removed at exit. */
static int tmp_fd = -1;
static char *tmp_path;

static void remove_tmp(void)
{
	if (tmp_path)
		unlink(tmp_path);
	free(tmp_path);
	tmp_path = NULL;
}

static void put_tmp(const uint8_t *p, size_t n)
{
	if (tmp_fd < 0) {
		rm_error err = RM_ERROR_INIT;
		tmp_fd = rm_make_temp(&tmp_path, &err);
		if (tmp_fd < 0) {
			fprintf(stderr, "fuzz_context: %s\n", err.msg);
			abort();
		}
		atexit(remove_tmp);
	}
	if (ftruncate(tmp_fd, 0) != 0)
		abort();
	size_t off = 0;
	while (off < n) {
		ssize_t w = pwrite(tmp_fd, p + off, n - off, (off_t)off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			abort();
		off += (size_t)w;
	}
}

static int same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* The kv array and obj[key] hold the same pairs. */
static void check_kv(const rm_context *ctx, const char *key, const rm_kv *kv, size_t n, int mounts)
{
	json_t *o = json_object_get(ctx->obj, key);

	if (n == 0) {
		if (o)
			abort();
		return;
	}
	if (!json_is_object(o) || json_object_size(o) != n)
		abort();
	for (size_t i = 0; i < n; i++) {
		json_t *v = json_object_get(o, kv[i].key);
		if (!json_is_string(v) || strcmp(json_string_value(v), kv[i].value) != 0)
			abort();
		if (!kv[i].key[0] || (mounts && kv[i].key[0] != '/') ||
		    (!mounts && strchr(kv[i].key, '=')))
			abort(); /* validation let a bad name through */
	}
}

/* "0,2-4" (the syntax valid_gpu_list in context.c accepts), checked independently. */
static int gpu_list_ok(const char *s)
{
	for (;;) {
		unsigned long a, b;
		char *end;
		if (*s < '0' || *s > '9')
			return 0;
		a = strtoul(s, &end, 10);
		s = end;
		if (*s == '-') {
			if (s[1] < '0' || s[1] > '9')
				return 0;
			b = strtoul(s + 1, &end, 10);
			if (b < a)
				return 0;
			s = end;
		}
		if (!*s)
			return 1;
		if (*s++ != ',')
			return 0;
	}
}

/* The typed fields and obj agree, and rm_context_get answers for every scalar key. */
static void check_consistent(const rm_context *ctx)
{
	const char *key;
	json_t *v;
	char n[32];

	if (!ctx->obj || !json_is_object(ctx->obj))
		abort();
	if (!same_str(rm_context_get(ctx, "gpu_vendor"), ctx->gpu_vendor) ||
	    !same_str(rm_context_get(ctx, "guest_os"), ctx->guest_os) ||
	    !same_str(rm_context_get(ctx, "MAD_SYSTEM_GPU_ARCHITECTURE"), ctx->gpu_arch) ||
	    !same_str(rm_context_get(ctx, "docker_gpus"), ctx->docker_gpus) ||
	    !same_str(rm_context_get(ctx, "docker_cpus"), ctx->docker_cpus) ||
	    !same_str(rm_context_get(ctx, "model_args"), ctx->model_args))
		abort();
	if (ctx->n_gpus < 0 || ctx->n_gpus > 1000000)
		abort();
	snprintf(n, sizeof(n), "%ld", ctx->n_gpus);
	if (!same_str(rm_context_get(ctx, "MAD_SYSTEM_NGPUS"), n))
		abort();
	if (ctx->docker_gpus && !gpu_list_ok(ctx->docker_gpus))
		abort();
	if ((ctx->gpu_vendor && !*ctx->gpu_vendor) || (ctx->gpu_arch && !*ctx->gpu_arch) ||
	    !ctx->guest_os || !*ctx->guest_os)
		abort();
	check_kv(ctx, "docker_env_vars", ctx->docker_env_vars, ctx->n_docker_env_vars, 0);
	check_kv(ctx, "docker_build_arg", ctx->docker_build_arg, ctx->n_docker_build_arg, 0);
	check_kv(ctx, "docker_mounts", ctx->docker_mounts, ctx->n_docker_mounts, 1);
	json_object_foreach (ctx->obj, key, v) {
		const char *s = rm_context_get(ctx, key);
		int scalar = !json_is_object(v) && !json_is_array(v);
		if (scalar != (s != NULL))
			abort();
		if (json_is_string(v) && s != json_string_value(v))
			abort();
	}
	if (rm_context_get(ctx, NULL) || rm_context_get(NULL, "gpu_vendor"))
		abort();
}

static int same_bytes(const char *field, const json_t *v)
{
	return field && strlen(field) == json_string_length(v) &&
	       memcmp(field, json_string_value(v), json_string_length(v)) == 0;
}

/* After a successful apply of root: every string value given arrived whole (a string is
 * never cut short or changed on its way into the context). */
static void check_arrived(const rm_context *ctx, json_t *root)
{
	static const char *const scalars[] = {
	    "gpu_vendor",  "guest_os",	  "MAD_SYSTEM_GPU_ARCHITECTURE",
	    "docker_gpus", "docker_cpus", "model_args"};
	static const char *const kvs[] = {"docker_env_vars", "docker_build_arg", "docker_mounts"};
	const char *k;
	json_t *v;

	for (size_t i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++) {
		v = json_object_get(root, scalars[i]);
		if (json_is_string(v) && !same_bytes(rm_context_get(ctx, scalars[i]), v))
			abort();
	}
	for (size_t i = 0; i < sizeof(kvs) / sizeof(kvs[0]); i++) {
		json_t *given = json_object_get(root, kvs[i]);
		json_t *now = json_object_get(ctx->obj, kvs[i]);
		json_object_foreach (given, k, v) {
			json_t *got = json_object_get(now, k);
			if (json_is_string(v) && !same_bytes(json_string_value(got), v))
				abort();
		}
	}
}

/* A fresh detected-like context: no GPU found (the sysfs root does not exist, no tools),
 * then the base overrides. */
static void fresh(rm_context *ctx)
{
	rm_error err = RM_ERROR_INIT;

	if (rm_context_detect(ctx, "/nonexistent/run_models-fuzz-sysfs", 0, &err) != 0)
		abort();
	if (ctx->gpu_vendor || ctx->n_gpus != 0 || !same_str(ctx->guest_os, "UBUNTU"))
		abort();
	check_consistent(ctx);
	if (rm_context_apply(ctx, base_context, "base", &err) != 0)
		abort();
	check_consistent(ctx);
}

/* rm_context_apply with its contract checked; returns its result. */
static int apply_checked(rm_context *ctx, const char *arg)
{
	rm_error err = RM_ERROR_INIT;
	json_t *before = json_deep_copy(ctx->obj);
	int r = rm_context_apply(ctx, arg, "--additional-context", &err);

	if (r != 0) {
		if (r > 0 || err.kind != RM_ERR_INPUT ||
		    strncmp(err.msg, "--additional-context", 20) != 0)
			abort();
		if (!json_equal(before, ctx->obj))
			abort(); /* a rejected override changed the context */
	} else if (err.kind != RM_ERR_NONE) {
		abort();
	}
	check_consistent(ctx);
	json_decref(before);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = rm_xmalloc(size + 2);
	char *arg = text;
	rm_context a, b;
	rm_error err = RM_ERROR_INIT;
	json_t *j;
	int ra, rb, is_json = 0;

	memcpy(text, data, size);
	text[size] = '\0';

	/* --additional-context: the text, or "@file" through the temp file. */
	fresh(&a);
	if (text[0] == '@') {
		put_tmp(data + 1, size - 1);
		arg = rm_xasprintf("@%s", tmp_path);
	}
	ra = apply_checked(&a, arg);
	if (ra == 0 && arg == text) {
		/* What rm_context_apply parsed: JSON first, else a Python dict. */
		j = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
		if (!j)
			j = rm_pydict_parse(text, &err);
		if (!j)
			abort(); /* applied, yet neither parser takes it */
		check_arrived(&a, j);
		json_decref(j);
		rm_error_clear(&err);
	}
	if (ra == 0) {
		json_t *once = json_deep_copy(a.obj);
		if (apply_checked(&a, arg) != 0 || !json_equal(once, a.obj))
			abort(); /* the same override twice is not the same as once */
		json_decref(once);
	}
	/* Any key, even garbage, may be asked for. */
	(void)rm_context_get(&a, text);

	/* --additional-context-file with the whole input. */
	put_tmp(data, size);
	fresh(&b);
	{
		json_t *before = json_deep_copy(b.obj);
		rb = rm_context_apply_file(&b, tmp_path, &err);
		if (rb != 0 &&
		    (err.kind == RM_ERR_NONE || !err.msg[0] || !json_equal(before, b.obj)))
			abort();
		json_decref(before);
	}
	check_consistent(&b);

	/* A JSON object is the same context whichever way it comes in. */
	if (text[0] != '@' && !memchr(data, '\0', size)) {
		j = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
		is_json = j != NULL;
		json_decref(j);
	}
	if (is_json && (ra != rb || (ra == 0 && !json_equal(a.obj, b.obj))))
		abort();

	/* The Python-dict parser on its own. */
	rm_error_clear(&err);
	j = rm_pydict_parse(text, &err);
	if (j ? !json_is_object(j) : err.kind == RM_ERR_NONE)
		abort();
	json_decref(j);

	rm_context_release(&a);
	rm_context_release(&b);
	rm_context_release(NULL);
	if (arg != text)
		free(arg);
	free(text);
	return 0;
}
