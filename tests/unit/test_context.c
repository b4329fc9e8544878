/* nftw() is an XSI function. */
#define _XOPEN_SOURCE 700

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "check.h"
#include "testfs.h"
#include "rm/context.h"
#include "rm/util.h"

/* Writes nodes/<id>/properties under a fake sysfs root. */
static void add_node(const char *root, const char *id, const char *props)
{
	char *dir = rm_xasprintf("%s/class/kfd/kfd/topology/nodes/%s", root, id);
	char *file = rm_xasprintf("%s/properties", dir);
	FILE *f;

	tfs_mkdirs(dir);
	f = fopen(file, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(props, f);
		fclose(f);
	}
	free(file);
	free(dir);
}

static char *make_tmp(void)
{
	char tmpl[] = "/tmp/rm_test_context_XXXXXX";
	char *d = mkdtemp(tmpl);

	CHECK(d != NULL);
	return rm_xstrdup(d);
}

TEST(detect_kfd)
{
	char *root = make_tmp();
	rm_context ctx;
	rm_error err = RM_ERROR_INIT;

	add_node(root, "0", "cpu_cores_count 64\nsimd_count 0\ngfx_target_version 0\n");
	add_node(root, "2",
		 "cpu_cores_count 0\nsimd_count 1216\ngfx_target_version 90402\n"
		 "drm_render_minor 136\nunique_id 1234567890123\n");
	add_node(root, "1",
		 "cpu_cores_count 0\nsimd_count 1216\ngfx_target_version 90402\n"
		 "drm_render_minor 128\n");
	CHECK(rm_context_detect(&ctx, root, 0, &err) == 0);
	CHECK_STR(ctx.gpu_vendor, "AMD");
	CHECK(ctx.n_gpus == 2);
	CHECK_STR(ctx.gpu_arch, "gfx942");
	CHECK_STR(ctx.guest_os, "UBUNTU");
	CHECK(ctx.n_render_nodes == 2);
	if (ctx.n_render_nodes == 2) {
		CHECK(ctx.render_nodes[0] == 128);
		CHECK(ctx.render_nodes[1] == 136);
	}
	CHECK_STR(rm_context_get(&ctx, "gpu_vendor"), "AMD");
	CHECK_STR(rm_context_get(&ctx, "guest_os"), "UBUNTU");
	CHECK_STR(rm_context_get(&ctx, "MAD_SYSTEM_GPU_ARCHITECTURE"), "gfx942");
	CHECK_STR(rm_context_get(&ctx, "MAD_SYSTEM_NGPUS"), "2");
	CHECK(json_integer_value(json_object_get(ctx.obj, "MAD_SYSTEM_NGPUS")) == 2);
	CHECK(rm_context_get(&ctx, "docker_gpus") == NULL);
	rm_context_release(&ctx);
	CHECK(ctx.obj == NULL && ctx.gpu_vendor == NULL);
	rm_context_release(&ctx);
	rm_context_release(NULL);
	tfs_rm_tree(root);
	free(root);

	/* Architecture names from gfx_target_version. */
	struct {
		const char *version, *arch;
	} archs[] = {
	    {"90010", "gfx90a"}, {"110000", "gfx1100"}, {"90008", "gfx908"}, {"120001", "gfx1201"}};
	for (size_t i = 0; i < sizeof(archs) / sizeof(archs[0]); i++) {
		char *props =
		    rm_xasprintf("simd_count 4\ngfx_target_version %s\n", archs[i].version);
		root = make_tmp();
		add_node(root, "0", "simd_count 0\n");
		add_node(root, "1", props);
		CHECK(rm_context_detect(&ctx, root, 0, &err) == 0);
		CHECK_STR(ctx.gpu_arch, archs[i].arch);
		CHECK(ctx.n_gpus == 1);
		/* No drm_render_minor: render nodes unknown. */
		CHECK(ctx.n_render_nodes == 0);
		rm_context_release(&ctx);
		tfs_rm_tree(root);
		free(root);
		free(props);
	}
}

TEST(detect_none)
{
	char *root = make_tmp();
	rm_context ctx;
	rm_error err = RM_ERROR_INIT;

	CHECK(rm_context_detect(&ctx, root, 0, &err) == 0);
	CHECK(ctx.gpu_vendor == NULL);
	CHECK(ctx.n_gpus == 0);
	CHECK(ctx.gpu_arch == NULL);
	CHECK(ctx.n_render_nodes == 0);
	CHECK_STR(ctx.guest_os, "UBUNTU");
	CHECK(rm_context_get(&ctx, "gpu_vendor") == NULL);
	CHECK(rm_context_get(&ctx, "MAD_SYSTEM_GPU_ARCHITECTURE") == NULL);
	CHECK_STR(rm_context_get(&ctx, "MAD_SYSTEM_NGPUS"), "0");
	rm_context_release(&ctx);

	/* A CPU-only topology is no GPU either. */
	add_node(root, "0", "simd_count 0\ngfx_target_version 0\n");
	CHECK(rm_context_detect(&ctx, root, 0, &err) == 0);
	CHECK(ctx.gpu_vendor == NULL && ctx.n_gpus == 0);
	rm_context_release(&ctx);
	tfs_rm_tree(root);
	free(root);
}

static void fresh(rm_context *ctx)
{
	char *root = make_tmp();
	rm_error err = RM_ERROR_INIT;

	CHECK(rm_context_detect(ctx, root, 0, &err) == 0);
	tfs_rm_tree(root);
	free(root);
}

TEST(apply_json)
{
	rm_context ctx;
	rm_error err = RM_ERROR_INIT;

	fresh(&ctx);
	CHECK(
	    rm_context_apply(&ctx,
			     "{\"gpu_vendor\": \"NVIDIA\", \"guest_os\": \"CENTOS\", "
			     "\"MAD_SYSTEM_NGPUS\": \"4\", \"MAD_SYSTEM_GPU_ARCHITECTURE\": "
			     "\"sm_90\", \"docker_env_vars\": {\"A\": \"1\", \"B\": 2}, "
			     "\"docker_build_arg\": {\"BASE_DOCKER\": \"x:1\"}, "
			     "\"docker_gpus\": \"0,2-4\", \"docker_cpus\": \"0-15\", "
			     "\"docker_mounts\": {\"/data\": \"/mnt/data\"}, \"model_args\": "
			     "\"--x 1\", \"custom\": \"v\", \"num\": 5, \"ratio\": 1.5, \"flag\": "
			     "true, \"nested\": {\"a\": 1}}",
			     "--additional-context", &err) == 0);
	CHECK_STR(ctx.gpu_vendor, "NVIDIA");
	CHECK_STR(ctx.guest_os, "CENTOS");
	CHECK(ctx.n_gpus == 4);
	CHECK_STR(ctx.gpu_arch, "sm_90");
	CHECK(ctx.n_docker_env_vars == 2);
	if (ctx.n_docker_env_vars == 2) {
		CHECK_STR(ctx.docker_env_vars[0].key, "A");
		CHECK_STR(ctx.docker_env_vars[0].value, "1");
		CHECK_STR(ctx.docker_env_vars[1].key, "B");
		CHECK_STR(ctx.docker_env_vars[1].value, "2");
	}
	CHECK(ctx.n_docker_build_arg == 1);
	CHECK(ctx.n_docker_mounts == 1);
	if (ctx.n_docker_mounts == 1) {
		CHECK_STR(ctx.docker_mounts[0].key, "/data");
		CHECK_STR(ctx.docker_mounts[0].value, "/mnt/data");
	}
	CHECK_STR(ctx.docker_gpus, "0,2-4");
	CHECK_STR(ctx.docker_cpus, "0-15");
	CHECK_STR(ctx.model_args, "--x 1");
	CHECK_STR(rm_context_get(&ctx, "custom"), "v");
	CHECK_STR(rm_context_get(&ctx, "num"), "5");
	CHECK_STR(rm_context_get(&ctx, "ratio"), "1.5");
	CHECK_STR(rm_context_get(&ctx, "flag"), "True");
	CHECK(rm_context_get(&ctx, "nested") == NULL);
	CHECK_STR(rm_context_get(&ctx, "MAD_SYSTEM_NGPUS"), "4");
	CHECK_STR(rm_context_get(&ctx, "gpu_vendor"), "NVIDIA");
	CHECK_STR(rm_context_get(&ctx, "docker_gpus"), "0,2-4");

	/* Later overrides win, key by key for the docker_* objects. */
	CHECK(rm_context_apply(&ctx,
			       "{\"docker_env_vars\": {\"A\": \"3\"}, \"MAD_SYSTEM_NGPUS\": 2}",
			       "--additional-context", &err) == 0);
	CHECK(ctx.n_docker_env_vars == 2);
	if (ctx.n_docker_env_vars == 2) {
		CHECK_STR(ctx.docker_env_vars[0].value, "3");
		CHECK_STR(ctx.docker_env_vars[1].value, "2");
	}
	CHECK(ctx.n_gpus == 2);
	CHECK_STR(rm_context_get(&ctx, "MAD_SYSTEM_NGPUS"), "2");
	CHECK_STR(rm_context_get(&ctx, "gpu_vendor"), "NVIDIA");
	rm_context_release(&ctx);
}

TEST(apply_file_and_pydict)
{
	char *dir = make_tmp();
	char *file = rm_xasprintf("%s/ctx.json", dir);
	char *arg = rm_xasprintf("@%s", file);
	rm_context ctx;
	rm_error err = RM_ERROR_INIT;
	FILE *f;

	f = fopen(file, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("{\n  \"guest_os\": \"CENTOS\",\n  \"docker_gpus\": \"1\"\n}\n", f);
		fclose(f);
	}
	fresh(&ctx);
	CHECK(rm_context_apply(&ctx, arg, "--additional-context-file", &err) == 0);
	CHECK_STR(ctx.guest_os, "CENTOS");
	CHECK_STR(ctx.docker_gpus, "1");

	/* MAD users write Python dicts. */
	CHECK(rm_context_apply(&ctx,
			       "{'gpu_vendor': 'AMD', \"guest_os\": 'UBUNTU', 'docker_gpus': 3, "
			       "'flag': False, 'n': None,}",
			       "--additional-context", &err) == 0);
	CHECK_STR(ctx.gpu_vendor, "AMD");
	CHECK_STR(ctx.guest_os, "UBUNTU");
	CHECK_STR(ctx.docker_gpus, "3");
	CHECK_STR(rm_context_get(&ctx, "flag"), "False");
	CHECK_STR(rm_context_get(&ctx, "n"), "None");

	/* A syntax error in the file names the file and the line. */
	f = fopen(file, "w");
	if (f) {
		fputs("{\n  \"guest_os\": \"CENTOS\"\n  \"x\": 1\n}\n", f);
		fclose(f);
	}
	CHECK(rm_context_apply(&ctx, arg, "--additional-context-file", &err) < 0);
	char *expect = rm_xasprintf("--additional-context-file '%s': not valid JSON (line 3", file);
	CHECK(rm_starts_with(err.msg, expect));
	free(expect);

	remove(file);
	CHECK(rm_context_apply(&ctx, arg, "--additional-context-file", &err) < 0);
	expect = rm_xasprintf("--additional-context-file: cannot open '%s'", file);
	CHECK(rm_starts_with(err.msg, expect));
	free(expect);
	rm_context_release(&ctx);
	rmdir(dir);
	free(arg);
	free(file);
	free(dir);
}

TEST(apply_errors)
{
	rm_context ctx;
	rm_error err = RM_ERROR_INIT;
	struct {
		const char *text, *msg;
	} bad[] = {
	    {"{\"gpu_vendor\": 5}", "ctx: 'gpu_vendor' must be a non-empty string"},
	    {"{\"guest_os\": \"\"}", "ctx: 'guest_os' must be a non-empty string"},
	    {"{\"MAD_SYSTEM_NGPUS\": \"x\"}",
	     "ctx: 'MAD_SYSTEM_NGPUS' must be a non-negative GPU count"},
	    {"{\"MAD_SYSTEM_NGPUS\": -1}",
	     "ctx: 'MAD_SYSTEM_NGPUS' must be a non-negative GPU count"},
	    {"{\"docker_gpus\": \"0,a\"}",
	     "ctx: 'docker_gpus' must list GPU indexes and ranges such as \"0,2-4\""},
	    {"{\"docker_gpus\": \"3-1\"}",
	     "ctx: 'docker_gpus' must list GPU indexes and ranges such as \"0,2-4\""},
	    {"{\"docker_gpus\": \"\"}",
	     "ctx: 'docker_gpus' must list GPU indexes and ranges such as \"0,2-4\""},
	    {"{\"docker_gpus\": \"1,\"}",
	     "ctx: 'docker_gpus' must list GPU indexes and ranges such as \"0,2-4\""},
	    {"{\"docker_env_vars\": [\"A=1\"]}",
	     "ctx: 'docker_env_vars' must be an object of {\"NAME\": \"value\"}"},
	    {"{\"docker_env_vars\": {\"A\": [1]}}",
	     "ctx: 'docker_env_vars' entry 'A' must be a string"},
	    {"{\"docker_build_arg\": {\"A=B\": \"1\"}}",
	     "ctx: 'docker_build_arg' has a bad name 'A=B' (empty or with '=')"},
	    {"{\"docker_mounts\": {\"rel\": \"/x\"}}",
	     "ctx: 'docker_mounts' key 'rel' must be an absolute container path "
	     "({\"/container/path\": \"/host/path\"})"},
	    {"{\"model_args\": 1}", "ctx: 'model_args' must be a string"},
	    {"[1]", "ctx: must be an object such as '{\"gpu_vendor\": \"AMD\"}'"},
	    {"{\"a\": 1, \"a\": 2}", "ctx: line 1 column 12: duplicate object key near '\"a\"'"},
	};

	fresh(&ctx);
	CHECK(rm_context_apply(&ctx, "{\"gpu_vendor\": \"AMD\"}", "ctx", &err) == 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(rm_context_apply(&ctx, bad[i].text, "ctx", &err) < 0);
		CHECK_STR(err.msg, bad[i].msg);
		CHECK(err.kind == RM_ERR_INPUT);
	}
	/* A bad override changes nothing, even when an earlier key was fine. */
	CHECK(rm_context_apply(&ctx, "{\"gpu_vendor\": \"NVIDIA\", \"docker_gpus\": \"x\"}", "ctx",
			       &err) < 0);
	CHECK_STR(ctx.gpu_vendor, "AMD");
	CHECK_STR(rm_context_get(&ctx, "gpu_vendor"), "AMD");

	CHECK(rm_context_apply(&ctx, "{oops", "ctx", &err) < 0);
	CHECK(rm_starts_with(err.msg, "ctx: not valid JSON (line 1 column"));
	CHECK(strstr(err.msg, "nor a Python dict (python dict literal, column 2:") != NULL);
	rm_context_release(&ctx);
}

TEST(pydict)
{
	rm_error err = RM_ERROR_INIT;
	json_t *v;

	v = rm_pydict_parse("  {'a': 'b', \"c\": -12, 'd': True, 'e': None, 'f': 2.5e1, "
			    "'g': [1, 'x', (2, 3)], 'h': {'i': {}}, 'j': 'it\\'s\\n\\x41\\u00e9', "
			    "'k': 'con' \"cat\", } # trailing comment",
			    &err);
	CHECK(v != NULL);
	if (v) {
		CHECK_STR(json_string_value(json_object_get(v, "a")), "b");
		CHECK(json_integer_value(json_object_get(v, "c")) == -12);
		CHECK(json_is_true(json_object_get(v, "d")));
		CHECK(json_is_null(json_object_get(v, "e")));
		CHECK(json_real_value(json_object_get(v, "f")) == 25.0);
		CHECK(json_array_size(json_object_get(v, "g")) == 3);
		CHECK(json_array_size(json_array_get(json_object_get(v, "g"), 2)) == 2);
		CHECK(json_is_object(json_object_get(json_object_get(v, "h"), "i")));
		CHECK_STR(json_string_value(json_object_get(v, "j")), "it's\nA\xc3\xa9");
		CHECK_STR(json_string_value(json_object_get(v, "k")), "concat");
		json_decref(v);
	}
	v = rm_pydict_parse("{}", &err);
	CHECK(v && json_object_size(v) == 0);
	json_decref(v);

	struct {
		const char *text, *msg;
	} bad[] = {
	    {"{'a': }", "python dict literal, column 7: expected a value (a string, a number, "
			"True, False or None)"},
	    {"{'a' 1}", "python dict literal, column 6: expected ':' after the key"},
	    {"{1: 2}", "python dict literal, column 2: expected a quoted key or '}'"},
	    {"'a'", "python dict literal, column 1: expected '{' (a dict such as {'gpu_vendor': "
		    "'AMD'})"},
	    {"{'a': 'b'} x",
	     "python dict literal, column 12: unexpected text after the closing '}'"},
	    {"{'a': 'b", "python dict literal, column 9: unterminated string"},
	    {"{'a': 'b' 'c': 1}", "python dict literal, column 14: expected ',' or '}'"},
	    {"{'a': true}", "python dict literal, column 7: expected a value (a string, a number, "
			    "True, False or None)"},
	    {"{'a': 1x}", "python dict literal, column 7: malformed number"},
	    {"{'a': 99999999999999999999}", "python dict literal, column 7: integer out of range"},
	    {"{'a': '\\xZZ'}", "python dict literal, column 10: bad hexadecimal escape in string"},
	    {"{'a': '\\ud800'}",
	     "python dict literal, column 10: escape is not a valid unicode character"},
	    {"{'\\x00': 1}", "python dict literal, column 8: key contains a NUL character"},
	    {"{'a': '\xff'}", "python dict literal, column 10: string is not valid UTF-8"},
	    {"{,}", "python dict literal, column 2: expected a quoted key or '}'"},
	    {"", "python dict literal, column 1: expected '{' (a dict such as {'gpu_vendor': "
		 "'AMD'})"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rm_error_clear(&err);
		v = rm_pydict_parse(bad[i].text, &err);
		CHECK(v == NULL);
		CHECK_STR(err.msg, bad[i].msg);
		json_decref(v);
	}

	/* Deep nesting is refused, not a stack overflow. */
	rm_buf deep = RM_BUF_INIT(1 << 20);
	rm_buf_addstr(&deep, "{'a': ");
	for (int i = 0; i < 10000; i++)
		rm_buf_addch(&deep, '[');
	v = rm_pydict_parse(rm_buf_str(&deep), &err);
	CHECK(v == NULL);
	CHECK(strstr(err.msg, "nested too deeply") != NULL);
	rm_buf_release(&deep);
	CHECK(rm_pydict_parse(NULL, &err) == NULL);
}

/* madengine's get_ctx_test: the folder's ctx_test file, stripped, else None. */
TEST(ctx_test)
{
	char *root = make_tmp(), *file = rm_xasprintf("%s/ctx_test", root);
	rm_context ctx;
	rm_error err = RM_ERROR_INIT;
	FILE *f;

	fresh(&ctx);
	CHECK(rm_context_ctx_test(&ctx, root, &err) == 0);
	CHECK_STR(rm_context_get(&ctx, "ctx_test"), "None");
	rm_context_release(&ctx);

	f = fopen(file, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("  2\n", f);
		fclose(f);
	}
	fresh(&ctx);
	CHECK(rm_context_ctx_test(&ctx, root, &err) == 0);
	CHECK_STR(rm_context_get(&ctx, "ctx_test"), "2");
	/* --additional-context comes later and wins */
	CHECK(rm_context_apply(&ctx, "{'ctx_test': '1'}", "test", &err) == 0);
	CHECK_STR(rm_context_get(&ctx, "ctx_test"), "1");
	rm_context_release(&ctx);

	/* a symlink is not followed (it could point anywhere): None */
	unlink(file);
	CHECK(symlink("/etc/hostname", file) == 0);
	fresh(&ctx);
	CAPTURE_MESSAGES();
	CHECK(rm_context_ctx_test(&ctx, root, &err) == 0);
	CHECK_LOGGED("ctx_test' is not a readable file: ctx_test is None");
	CHECK_STR(rm_context_get(&ctx, "ctx_test"), "None");
	rm_context_release(&ctx);
	tfs_rm_tree(root);
	free(file);
	free(root);
}

/* The GPU's product name from its DRM device in sysfs, the HIP version from ROCm's version
 * file (madengine's MAD_SYSTEM_GPU_PRODUCT_NAME and MAD_SYSTEM_HIP_VERSION). */
TEST(detect_facts)
{
	char *root = make_tmp(), *rocm = make_tmp();
	const char *old = getenv("ROCM_PATH");
	char *saved = old ? rm_xstrdup(old) : NULL;
	rm_context ctx;
	rm_error err = RM_ERROR_INIT;

	add_node(root, "1", "simd_count 304\ngfx_target_version 90402\ndrm_render_minor 128\n");
	add_node(root, "2", "simd_count 304\ngfx_target_version 90402\ndrm_render_minor 129\n");
	tfs_put(root, "class/drm/renderD128/device/product_name", "AMD Instinct MI300X OAM\n");
	tfs_put(rocm, ".info/version", "6.4.1-120\n");
	setenv("ROCM_PATH", rocm, 1);
	CHECK(rm_context_detect(&ctx, root, 0, &err) == 0);
	CHECK_STR(ctx.gpu_product_name, "AMD Instinct MI300X OAM");
	CHECK_STR(ctx.hip_version, "6.4");
	CHECK_STR(rm_context_get(&ctx, "MAD_SYSTEM_GPU_PRODUCT_NAME"), "AMD Instinct MI300X OAM");
	CHECK_STR(rm_context_get(&ctx, "MAD_SYSTEM_HIP_VERSION"), "6.4");
	/* overridable, as MAD_SYSTEM_GPU_ARCHITECTURE is */
	CHECK(rm_context_apply(&ctx,
			       "{\"MAD_SYSTEM_GPU_PRODUCT_NAME\": \"AMD Instinct MI325X\", "
			       "\"MAD_SYSTEM_HIP_VERSION\": \"7.0\"}",
			       "ctx", &err) == 0);
	CHECK_STR(ctx.gpu_product_name, "AMD Instinct MI325X");
	CHECK_STR(ctx.hip_version, "7.0");
	CHECK(rm_context_apply(&ctx, "{\"MAD_SYSTEM_HIP_VERSION\": 7}", "ctx", &err) < 0);
	CHECK(strstr(err.msg, "'MAD_SYSTEM_HIP_VERSION' must be a non-empty string") != NULL);
	rm_context_release(&ctx);
	/* without the files: unknown */
	setenv("ROCM_PATH", "/nonexistent", 1);
	tfs_rm_tree(root);
	add_node(root, "1", "simd_count 304\ngfx_target_version 90402\ndrm_render_minor 128\n");
	CHECK(rm_context_detect(&ctx, root, 0, &err) == 0);
	CHECK(ctx.gpu_product_name == NULL && ctx.hip_version == NULL);
	CHECK(rm_context_get(&ctx, "MAD_SYSTEM_HIP_VERSION") == NULL);
	rm_context_release(&ctx);
	if (saved)
		setenv("ROCM_PATH", saved, 1);
	else
		unsetenv("ROCM_PATH");
	free(saved);
	tfs_rm_tree(root);
	tfs_rm_tree(rocm);
	free(root);
	free(rocm);
}

/* The messages rm_context_check_keys gives for a context (captured, not printed), and its
 * return value. */
static int check_keys(const char *json, const char *const *known, const char *const *also,
		      char **printed, rm_error *err)
{
	rm_buf log = RM_BUF_INIT((size_t)1 << 20);
	rm_context ctx;
	int ret;

	CHECK(rm_context_detect(&ctx, "/nonexistent", 0, err) == 0);
	CHECK(rm_context_apply(&ctx, json, "ctx", err) == 0);
	rm_log_capture(&log);
	ret = rm_context_check_keys(&ctx, known, also, err);
	rm_log_capture(NULL);
	*printed = rm_xstrdup(rm_buf_str(&log));
	rm_buf_release(&log);
	rm_context_release(&ctx);
	return ret;
}

/* Unknown keys are named (with the closest known one), madengine's own keys say what they
 * did there, k8s is refused pointing at SLURM; known, launcher and CONTEXT keys pass. */
TEST(check_keys)
{
	static const char *const launchers[] = {"slurm",       "distributed",  "tools",
						"pre_scripts", "post_scripts", "encapsulate_script",
						NULL};
	static const char *const context_lines[] = {"mi_variant", NULL};
	rm_error err = RM_ERROR_INIT;
	char *out = NULL;

	CHECK(
	    check_keys("{\"gpu_vendor\": \"AMD\", \"docker_env_vars\": {}, \"ctx_test\": \"1\", "
		       "\"slurm\": {}, \"mi_variant\": \"x\", \"tools\": [], \"pre_scripts\": [], "
		       "\"post_scripts\": [], \"encapsulate_script\": \"\", "
		       "\"MAD_CONTAINER_IMAGE\": \"i\", \"data\": {}}",
		       launchers, context_lines, &out, &err) == 0);
	CHECK_STR(out, "");
	free(out);
	CHECK(check_keys("{\"gpu_vendr\": \"AMD\", \"docker_env_var\": {}, \"zzz\": 1, "
			 "\"rocenv_mode\": \"full\", \"slrum\": {}}",
			 launchers, NULL, &out, &err) == 0);
	CHECK(out && strstr(out, "context key 'gpu_vendr' is not one run_models knows") &&
	      strstr(out, "(did you mean 'gpu_vendor'?)"));
	CHECK(out && strstr(out, "(did you mean 'docker_env_vars'?)"));
	CHECK(out && strstr(out, "(did you mean 'slurm'?)"));
	CHECK(out && strstr(out, "context key 'zzz' is not one run_models knows"));
	CHECK(out && strstr(out, "context key 'rocenv_mode' has no effect in run_models (the depth "
				 "of madengine's rocEnvTool report"));
	free(out);
	CHECK(check_keys("{\"k8s\": {\"namespace\": \"x\"}}", launchers, NULL, &out, &err) < 0);
	CHECK(strstr(err.msg, "context key 'k8s': run_models does not deploy to Kubernetes") &&
	      strstr(err.msg, "'slurm' key"));
	free(out);
	CHECK(check_keys("{\"kubernetes\": {}}", NULL, NULL, &out, &err) < 0);
	free(out);
}
