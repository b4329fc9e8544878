/*
 * The workload (rm/workload.h). Its data part (src/workload/render_data.c through
 * rm_workload_render and rm_workload_cmd): bind mounts, MAD_DATAHOME / MAD_DATANAME before
 * docker_env_vars, and the custom scripts' wrapper (the wrapper itself runs against a real
 * engine in tests/compat: data_custom, data_custom_fail). Its JSON: every field survives
 * to-JSON then from-JSON, and the two render the same request.
 */
#include <jansson.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "rm/context.h"
#include "rm/workload.h"
#include "../../src/workload/workload_internal.h"
#include "rm/util.h"

static rm_model model = {.name = "m",
			 .short_name = "m",
			 .scripts = "scripts/m/run.sh",
			 .args = "--x 1",
			 .n_gpus = 0,
			 .parser = "generic"};

static void context(rm_context *ctx, const char *json)
{
	rm_error err = RM_ERROR_INIT;

	CHECK(rm_context_detect(ctx, "/nonexistent", 0, &err) == 0);
	if (json)
		CHECK(rm_context_apply(ctx, json, "test", &err) == 0);
}

/* A workload of model for ctx, with a plan the caller owns (dropped before release). */
static void workload(rm_workload *w, const rm_context *ctx, const rm_workload_settings *set,
		     const rm_data_plan *plan)
{
	static const rm_workload_settings none = RM_WORKLOAD_SETTINGS_INIT;
	rm_workload_in in = {.model = &model, .ctx = ctx, .set = set ? set : &none, .run_id = "r"};
	rm_error err = RM_ERROR_INIT;

	CHECK(rm_workload_build(w, &in, &err) == 0);
	rm_workload_set_image(w, "img");
	if (plan)
		w->data = *plan;
}

static void unplan(rm_workload *w)
{
	memset(&w->data, 0, sizeof(w->data));
	rm_workload_release(w);
}

static int render(const rm_workload *w, const rm_context *ctx, json_t **body, rm_error *err)
{
	return rm_workload_render(w, ctx, NULL, body, err);
}

/* The value of K in the body's Env, and its index (or -1). */
static const char *env_of(json_t *body, const char *key, long *at)
{
	json_t *env = json_object_get(body, "Env"), *item;
	size_t i, kl = strlen(key);

	*at = -1;
	json_array_foreach (env, i, item) {
		const char *s = json_string_value(item);
		if (s && !strncmp(s, key, kl) && s[kl] == '=') {
			*at = (long)i;
			return s + kl + 1;
		}
	}
	return NULL;
}

static int has_bind(json_t *body, const char *bind)
{
	json_t *b = json_object_get(json_object_get(body, "HostConfig"), "Binds"), *item;
	size_t i;

	json_array_foreach (b, i, item)
		if (!strcmp(json_string_value(item), bind))
			return 1;
	return 0;
}

TEST(local)
{
	rm_data_source src[2] = {
	    {.dataname = "a",
	     .provider = "local",
	     .home = "/data_dlm_0",
	     .host_path = "/srv/a",
	     .read_only = 1},
	    {.dataname = "b", .provider = "local", .home = "/b", .host_path = "/srv/b"}};
	rm_data_plan plan = {src, 2, "/data_dlm_0,/b", "a,b", "local,local"};
	rm_context ctx = {0};
	rm_workload w;
	rm_error err = RM_ERROR_INIT;
	json_t *body = NULL;
	long at_home, at_name, at_id;

	model.data = "a,b";
	context(&ctx, NULL);
	workload(&w, &ctx, NULL, &plan);
	CHECK(render(&w, &ctx, &body, &err) == 0);
	CHECK(has_bind(body, "/srv/a:/data_dlm_0:ro"));
	CHECK(has_bind(body, "/srv/b:/b"));
	CHECK_STR(env_of(body, "MAD_DATAHOME", &at_home), "/data_dlm_0,/b");
	CHECK_STR(env_of(body, "MAD_DATANAME", &at_name), "a,b");
	env_of(body, "MAD_RUN_ID", &at_id);
	CHECK(at_home > at_id && at_name > at_home);
	/* no custom script: the command is the model's own */
	CHECK_STR(json_string_value(json_array_get(json_object_get(body, "Cmd"), 0)), "bash");
	CHECK(rm_workload_data_scripts(&w) == 0);
	json_decref(body);
	unplan(&w);

	/* data no provider serves (an empty plan): MAD_DATANAME is still the model's data
	 * field, MAD_DATAHOME is not set, nothing is mounted (madengine's run without data) */
	workload(&w, &ctx, NULL, NULL);
	CHECK(render(&w, &ctx, &body, &err) == 0);
	CHECK_STR(env_of(body, "MAD_DATANAME", &at_name), "a,b");
	CHECK(env_of(body, "MAD_DATAHOME", &at_home) == NULL);
	CHECK(json_object_get(json_object_get(body, "HostConfig"), "Binds") == NULL);
	json_decref(body);
	rm_workload_release(&w);
	rm_context_release(&ctx);

	/* docker_env_vars come after, and win (as in madengine) */
	context(&ctx, "{\"docker_env_vars\": {\"MAD_DATAHOME\": \"/data\"}}");
	workload(&w, &ctx, NULL, &plan);
	CHECK(render(&w, &ctx, &body, &err) == 0);
	CHECK_STR(env_of(body, "MAD_DATAHOME", &at_home), "/data");
	json_decref(body);

	/* a host path a bind cannot carry */
	src[1].host_path = "/srv/x:y";
	CHECK(render(&w, &ctx, &body, &err) < 0);
	CHECK(strstr(err.msg, "data 'b': host path '/srv/x:y' holds ':'") != NULL);
	unplan(&w);
	rm_context_release(&ctx);
	model.data = NULL;
}

TEST(custom)
{
	rm_data_source src[2] = {{.dataname = "c",
				  .provider = "custom",
				  .home = "/data_dlm_0",
				  .script = "scripts/common/get.sh",
				  .script_args = "--to 'a b'"},
				 {.dataname = "d",
				  .provider = "custom",
				  .home = "/d",
				  .host_path = "/mirror/d",
				  .script = "get2.sh",
				  .script_args = ""}};
	rm_data_plan plan = {src, 2, "/data_dlm_0,/d", "c,d", "custom,custom"};
	rm_context ctx = {0};
	rm_workload w;
	static const char *const want[] = {"run_models-data",
					   "/data_dlm_0",
					   RM_DATA_SCRIPTS "/0/get.sh",
					   "2",
					   "--to",
					   "a b",
					   "/d",
					   RM_DATA_SCRIPTS "/1/get2.sh",
					   "0",
					   "--",
					   "bash",
					   "run.sh",
					   "--x",
					   "1",
					   NULL};
	rm_error err = RM_ERROR_INIT;
	char **argv = NULL;
	size_t i;

	context(&ctx, NULL);
	workload(&w, &ctx, NULL, &plan);
	CHECK(rm_workload_data_scripts(&w) == 2);
	CHECK_STR(rm_workload_data_script(&w, 0), "scripts/common/get.sh");
	CHECK_STR(rm_workload_data_script(&w, 1), "get2.sh");
	CHECK(rm_workload_data_script(&w, 2) == NULL);
	CHECK(rm_workload_cmd(&w, &argv, &err) == 0);
	CHECK(argv && !strcmp(argv[0], "sh") && !strcmp(argv[1], "-c"));
	/* the shell text is constant: no value of the plan is in it */
	CHECK(argv && !strstr(argv[2], "get.sh") && !strstr(argv[2], "/data_dlm_0"));
	CHECK(argv && strstr(argv[2], RM_DATA_STATUS) != NULL);
	for (i = 0; argv && want[i]; i++)
		CHECK_STR(argv[i + 3], want[i]);
	CHECK(argv && argv[i + 3] == NULL);
	rm_strv_free(argv);

	/* keep-alive: the data scripts run first, then the keep-alive wrapper */
	w.set.keep_alive = 1;
	CHECK(rm_workload_cmd(&w, &argv, &err) == 0);
	for (i = 0; argv && argv[i] && strcmp(argv[i], "--"); i++)
		;
	CHECK(argv && argv[i] && argv[i + 1] && !strcmp(argv[i + 1], "sh"));
	rm_strv_free(argv);
	w.set.keep_alive = 0;

	/* bad args */
	src[0].script_args = "'unterminated";
	CHECK(rm_workload_cmd(&w, &argv, &err) < 0);
	CHECK(strstr(err.msg, "data 'c': provider 'custom': 'args'") != NULL);
	unplan(&w);
	rm_context_release(&ctx);
}

/* Whether the array member key of obj holds the string s. */
static int array_has(json_t *obj, const char *key, const char *s)
{
	json_t *a = json_object_get(obj, key), *item;
	size_t i;

	json_array_foreach (a, i, item)
		if (json_is_string(item) && !strcmp(json_string_value(item), s))
			return 1;
	return 0;
}

static int has_device(json_t *body, const char *host, const char *in_container)
{
	json_t *d = json_object_get(json_object_get(body, "HostConfig"), "Devices"), *item;
	size_t i;

	json_array_foreach (d, i, item)
		if (!strcmp(json_string_value(json_object_get(item, "PathOnHost")), host) &&
		    !strcmp(json_string_value(json_object_get(item, "PathInContainer")),
			    in_container))
			return 1;
	return 0;
}

/* The container as madengine's container_runner.py and core/context.py make it, per
 * vendor: run options and environment, the host's facts overridable by the context. */
TEST(madengine_container)
{
	rm_context ctx = {0};
	rm_workload w;
	rm_error err = RM_ERROR_INIT;
	json_t *body = NULL, *hc;
	long at;
	const char *host_env[] = {"BUILD_NUMBER=77", NULL};
	rm_workload_in in = {.model = &model, .ctx = &ctx, .run_id = "r", .host_env = host_env};
	static const rm_workload_settings none = RM_WORKLOAD_SETTINGS_INIT;

	in.set = &none;
	model.n_gpus = 2;
	model.multiple_results = "perf_m.csv";
	context(&ctx,
		"{\"gpu_vendor\": \"AMD\", \"MAD_SYSTEM_NGPUS\": 8, "
		"\"MAD_SYSTEM_GPU_ARCHITECTURE\": \"gfx942\", \"MAD_SYSTEM_GPU_PRODUCT_NAME\": "
		"\"AMD Instinct MI300X\", \"MAD_SYSTEM_HIP_VERSION\": \"6.4\", \"guest_os\": "
		"\"centos\", \"docker_device_root\": \"/stand-in\"}");
	CHECK(rm_workload_build(&w, &in, &err) == 0);
	rm_workload_set_image(&w, "img");
	CHECK(render(&w, &ctx, &body, &err) == 0);
	hc = json_object_get(body, "HostConfig");
	CHECK_STR(json_string_value(json_object_get(body, "User")), "root");
	CHECK_STR(json_string_value(json_object_get(hc, "NetworkMode")), "host");
	CHECK_STR(json_string_value(json_object_get(hc, "IpcMode")), "host");
	CHECK(array_has(hc, "GroupAdd", "video"));
	CHECK(array_has(hc, "CapAdd", "SYS_PTRACE") && array_has(hc, "CapAdd", "SYS_ADMIN"));
	CHECK(!array_has(hc, "CapAdd", "SYS_NICE"));
	CHECK(array_has(hc, "SecurityOpt", "seccomp=unconfined"));
	CHECK(array_has(hc, "SecurityOpt", "apparmor=unconfined"));
	CHECK(has_device(body, "/stand-in/fuse", "/dev/fuse"));
	CHECK(has_device(body, "/stand-in/kfd", "/dev/kfd"));
	CHECK_STR(env_of(body, "MAD_MODEL_NAME", &at), "m");
	CHECK_STR(env_of(body, "MAD_SYSTEM_GPU_PRODUCT_NAME", &at), "AMD Instinct MI300X");
	CHECK_STR(env_of(body, "MAD_SYSTEM_HIP_VERSION", &at), "6.4");
	CHECK_STR(env_of(body, "MAD_GUEST_OS", &at), "CENTOS");
	CHECK_STR(env_of(body, "MAD_OUTPUT_CSV", &at), "perf_m.csv");
	CHECK_STR(env_of(body, "JENKINS_BUILD_NUMBER", &at), "77");
	/* madengine sets it on local runs too: torchrun for the GPUs the run gets */
	CHECK_STR(env_of(body, "MAD_MULTI_NODE_RUNNER", &at),
		  "torchrun --standalone --nproc_per_node=2");
	CHECK(env_of(body, "RAY_EXPERIMENTAL_NOSET_HIP_VISIBLE_DEVICES", &at) == NULL);
	json_decref(body);
	rm_workload_release(&w);
	rm_context_release(&ctx);

	/* the context overrides what the host says (docker_env_vars come last, as in
	 * madengine); a self-managed launcher gets an empty MAD_MULTI_NODE_RUNNER; Ray is told
	 * to honour HIP_VISIBLE_DEVICES; no BUILD_NUMBER is "0" */
	in.host_env = NULL;
	context(&ctx, "{\"gpu_vendor\": \"AMD\", \"MAD_SYSTEM_NGPUS\": 8, \"docker_env_vars\": "
		      "{\"MAD_SYSTEM_HIP_VERSION\": \"7.0\", \"HIP_VISIBLE_DEVICES\": \"0,1\"}, "
		      "\"distributed\": {\"launcher\": \"vllm\"}}");
	CHECK(rm_workload_build(&w, &in, &err) == 0);
	rm_workload_set_image(&w, "img");
	CHECK(render(&w, &ctx, &body, &err) == 0);
	CHECK_STR(env_of(body, "MAD_SYSTEM_HIP_VERSION", &at), "7.0");
	CHECK_STR(env_of(body, "MAD_SYSTEM_GPU_PRODUCT_NAME", &at), "");
	CHECK_STR(env_of(body, "MAD_GUEST_OS", &at), "UBUNTU");
	CHECK_STR(env_of(body, "MAD_MULTI_NODE_RUNNER", &at), "");
	CHECK_STR(env_of(body, "RAY_EXPERIMENTAL_NOSET_HIP_VISIBLE_DEVICES", &at), "");
	CHECK_STR(env_of(body, "JENKINS_BUILD_NUMBER", &at), "0");
	CHECK(has_device(body, "/dev/fuse", "/dev/fuse"));
	json_decref(body);
	rm_workload_release(&w);
	rm_context_release(&ctx);

	/* NVIDIA: -u root, SYS_NICE, no video group, /dev/fuse, the GPUs as a device request;
	 * deepspeed's own line */
	context(&ctx, "{\"gpu_vendor\": \"NVIDIA\", \"MAD_SYSTEM_NGPUS\": 4, "
		      "\"MAD_SYSTEM_GPU_PRODUCT_NAME\": \"NVIDIA H100 80GB HBM3\", "
		      "\"distributed\": {\"launcher\": \"deepspeed\"}}");
	CHECK(rm_workload_build(&w, &in, &err) == 0);
	rm_workload_set_image(&w, "img");
	CHECK(render(&w, &ctx, &body, &err) == 0);
	hc = json_object_get(body, "HostConfig");
	CHECK_STR(json_string_value(json_object_get(body, "User")), "root");
	CHECK(array_has(hc, "CapAdd", "SYS_NICE") && array_has(hc, "CapAdd", "SYS_PTRACE"));
	CHECK(!array_has(hc, "GroupAdd", "video"));
	CHECK(array_has(hc, "SecurityOpt", "apparmor=unconfined"));
	CHECK(has_device(body, "/dev/fuse", "/dev/fuse"));
	CHECK(json_array_size(json_object_get(hc, "DeviceRequests")) == 1);
	CHECK_STR(env_of(body, "MAD_SYSTEM_GPU_PRODUCT_NAME", &at), "NVIDIA H100 80GB HBM3");
	CHECK_STR(env_of(body, "MAD_MULTI_NODE_RUNNER", &at), "deepspeed --num_gpus=2");
	json_decref(body);
	rm_workload_release(&w);
	rm_context_release(&ctx);
	model.n_gpus = 0;
	model.multiple_results = NULL;
}

/* A model with a url: its repository is cloned with its submodules (MAD and madengine run
 * `git submodule update --init --recursive` after the clone), the url a positional word. */
TEST(clone)
{
	rm_context ctx = {0};
	rm_workload w;
	rm_error err = RM_ERROR_INIT;
	char **argv = NULL;

	model.url = "https://github.com/huggingface/transformers";
	context(&ctx, NULL);
	workload(&w, &ctx, NULL, NULL);
	CHECK(rm_workload_cmd(&w, &argv, &err) == 0);
	CHECK(argv && !strcmp(argv[0], "bash") && !strcmp(argv[1], "-c"));
	CHECK(argv && strstr(argv[2], "git clone --quiet --recurse-submodules -- \"$1\" \"$2\""));
	CHECK(argv && !strstr(argv[2], "transformers"));
	CHECK_STR(argv ? argv[4] : NULL, "https://github.com/huggingface/transformers");
	CHECK_STR(argv ? argv[5] : NULL, RM_WORKSPACE "/transformers");
	rm_strv_free(argv);
	rm_workload_release(&w);
	rm_context_release(&ctx);
	model.url = NULL;
}

/* Issue 22, item 11: binds the folder asks for must not reach the host's root, its system
 * folders (read-write) or the Docker socket, unless the user allows it. */
TEST(sensitive_mounts)
{
	static const struct {
		const char *opts;
		int ok;
	} cases[] = {
	    {"-v /:/host", 0},
	    {"-v /:/host:ro", 0},
	    {"--volume=/etc/../:/h", 0},
	    {"-v /etc:/e", 0},
	    {"-v /etc/ssl:/ssl:ro", 1},
	    {"-v /usr/lib:/l:rw", 0},
	    {"-v /var/run/docker.sock:/var/run/docker.sock:ro", 0},
	    {"-v /run:/r:ro", 0},
	    {"-v /home:/home", 0},
	    {"-v /home/me/data:/data", 1},
	    {"-v /data/llama:/models", 1},
	    {"-v hf_cache:/root/.cache", 1},
	    {"--shm-size 16G -v /tmp:/scratch", 1},
	};
	rm_data_source src[1] = {
	    {.dataname = "d", .provider = "local", .home = "/data_dlm_0", .host_path = "/"}};
	rm_data_plan plan = {src, 1, "/data_dlm_0", "d", "local"};
	rm_context ctx = {0};
	rm_workload w;
	rm_error err = RM_ERROR_INIT;
	json_t *body = NULL;

	context(&ctx, NULL);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r;
		model.additional_docker_run_options = (char *)cases[i].opts;
		workload(&w, &ctx, NULL, NULL);
		r = render(&w, &ctx, &body, &err);
		CHECK(cases[i].ok ? r == 0 : r < 0);
		if (!cases[i].ok)
			CHECK(strstr(err.msg, "model 'm': field 'additional_docker_run_options'") &&
			      strstr(err.msg, "--allow-sensitive-mounts"));
		if ((cases[i].ok ? r != 0 : r == 0))
			fprintf(stderr, "case '%s': %s\n", cases[i].opts, r ? err.msg : "accepted");
		json_decref(body);
		body = NULL;
		/* the user's leave */
		w.set.allow_sensitive_mounts = 1;
		CHECK(render(&w, &ctx, &body, &err) == 0);
		json_decref(body);
		body = NULL;
		rm_workload_release(&w);
	}
	model.additional_docker_run_options = "-v /:/host";
	workload(&w, &ctx, NULL, NULL);
	CHECK(render(&w, &ctx, &body, &err) < 0);
	CHECK_STR(err.msg,
		  "model 'm': field 'additional_docker_run_options': option '-v' '/:/host' "
		  "binds the host's root folder into the container; remove it, or give "
		  "--allow-sensitive-mounts if you trust this folder");
	rm_workload_release(&w);
	model.additional_docker_run_options = NULL;

	/* data.json's local path: the host's root, even read-only; a system folder read-write */
	workload(&w, &ctx, NULL, &plan);
	src[0].read_only = 1;
	CHECK(render(&w, &ctx, &body, &err) < 0);
	CHECK_STR(err.msg, "data 'd': provider 'local': path '/' is the host's root folder; point "
			   "it at the data itself, or give --allow-sensitive-mounts if you trust "
			   "this folder");
	src[0].host_path = "/etc";
	CHECK(render(&w, &ctx, &body, &err) == 0);
	json_decref(body);
	body = NULL;
	src[0].read_only = 0;
	CHECK(render(&w, &ctx, &body, &err) < 0);
	CHECK(strstr(err.msg, "path '/etc' is a host system folder, read-write") != NULL);
	w.set.allow_sensitive_mounts = 1;
	CHECK(render(&w, &ctx, &body, &err) == 0);
	json_decref(body);
	unplan(&w);
	rm_context_release(&ctx);
}

/* A plan of two tools and the context's scripts (what rm_tools_resolve makes). */
static rm_tool_script plan_pre[2] = {
    {.tool = "prof", .path = "scripts/common/pre.sh", .args = "--out 'a b' -v"},
    {.tool = "rpd", .text = "echo built-in pre \"$@\""}};
static rm_tool_script plan_post[1] = {{.path = "scripts/common/post.sh", .args = "x"}};
static rm_kv plan_env[2] = {{"PROF", "on"}, {"SHARED", "tool"}};
static rm_tool_output plan_out[2] = {{"prof", "prof_out"}, {"rpd", "/tmp/*.rpd"}};
static rm_tool_copy plan_copies[1] = {{"./scripts/common", "scripts/common"}};
static char *plan_tools[] = {"prof", "rpd", NULL};
static char *plan_sources[] = {"scripts/common/tools.json", "built in", NULL};
static const rm_tool_plan tool_plan = {plan_tools, 2, plan_sources, plan_pre, 2,
				       plan_post,  1, "wrap.sh --", plan_env, 2,
				       plan_out,   2, plan_copies,  1};

/* The tools around the model: constant shell text, every value a positional parameter; the
 * tools' env_vars before the context's docker_env_vars, which win (as in madengine). */
TEST(tools)
{
	rm_context ctx = {0};
	rm_workload w;
	rm_workload_in in = {.model = &model, .set = NULL, .run_id = "r", .tools = &tool_plan};
	static const rm_workload_settings none = RM_WORKLOAD_SETTINGS_INIT;
	static const char *const want[] = {
	    "run_models-tools",
	    "2",
	    "tool 'prof': pre script 'scripts/common/pre.sh --out 'a b' -v'",
	    "f",
	    RM_WORKSPACE "/scripts/common/pre.sh",
	    "3",
	    "--out",
	    "a b",
	    "-v",
	    "tool 'rpd': pre script (built in)",
	    "t",
	    "echo built-in pre \"$@\"",
	    "0",
	    "wrap.sh --",
	    "4",
	    "bash",
	    "run.sh",
	    "--x",
	    "1",
	    "1",
	    "the context's post_scripts: 'scripts/common/post.sh x'",
	    "f",
	    RM_WORKSPACE "/scripts/common/post.sh",
	    "1",
	    "x",
	    "2",
	    "prof",
	    "prof_out",
	    "rpd",
	    "/tmp/*.rpd",
	    NULL};
	rm_error err = RM_ERROR_INIT;
	char **argv = NULL, *text;
	json_t *body = NULL;
	long at_tool, at_ctx, at_shared;
	size_t i;

	context(&ctx, "{\"docker_env_vars\": {\"SHARED\": \"ctx\"}}");
	in.ctx = &ctx;
	in.set = &none;
	CHECK(rm_workload_build(&w, &in, &err) == 0);
	rm_workload_set_image(&w, "img");
	CHECK(rm_workload_cmd(&w, &argv, &err) == 0);
	CHECK(argv && !strcmp(argv[0], "bash") && !strcmp(argv[1], "-c"));
	/* no value of the plan in the shell text */
	CHECK(argv && !strstr(argv[2], "pre.sh") && !strstr(argv[2], "wrap.sh") &&
	      !strstr(argv[2], "prof") && !strstr(argv[2], "run.sh"));
	CHECK(argv && strstr(argv[2], RM_TOOLS_STATUS) && strstr(argv[2], RM_TOOLS_OUTPUTS));
	for (i = 0; argv && want[i]; i++) {
		CHECK(argv[i + 3] != NULL);
		if (!argv[i + 3])
			break;
		CHECK_STR(argv[i + 3], want[i]);
	}
	CHECK(argv && argv[i + 3] == NULL);
	rm_strv_free(argv);

	text = rm_workload_command_text(&w);
	CHECK_STR(text, "wrap.sh -- bash run.sh --x 1");
	free(text);

	CHECK(render(&w, &ctx, &body, &err) == 0);
	CHECK_STR(env_of(body, "PROF", &at_tool), "on");
	CHECK_STR(env_of(body, "SHARED", &at_shared), "ctx");
	env_of(body, "MAD_RUN_ID", &at_ctx);
	/* after MAD's own, in the plan's order; SHARED replaced in place by the context's */
	CHECK(at_tool > at_ctx && at_shared == at_tool + 1);
	json_decref(body);

	/* keep-alive wraps the tools: their post scripts run before the exit marker */
	w.set.keep_alive = 1;
	CHECK(rm_workload_cmd(&w, &argv, &err) == 0);
	CHECK(argv && !strcmp(argv[0], "sh") && argv[4] && !strcmp(argv[4], "bash") && argv[7] &&
	      !strcmp(argv[7], "run_models-tools"));
	rm_strv_free(argv);
	w.set.keep_alive = 0;

	/* bad args name the script */
	free(w.tools.pre[0].args);
	w.tools.pre[0].args = rm_xstrdup("'unterminated");
	CHECK(rm_workload_cmd(&w, &argv, &err) < 0);
	CHECK(strstr(err.msg, "tool 'prof': pre script") && strstr(err.msg, "'args'"));
	rm_workload_release(&w);

	/* no tools: the model's command alone */
	in.tools = NULL;
	CHECK(rm_workload_build(&w, &in, &err) == 0);
	CHECK(rm_workload_cmd(&w, &argv, &err) == 0);
	CHECK(argv && !strcmp(argv[0], "bash") && !strcmp(argv[1], "run.sh"));
	rm_strv_free(argv);
	rm_workload_release(&w);
	rm_context_release(&ctx);
}

/* Every field of a workload, none at its default, survives to-JSON then from-JSON, and both
 * render the same request. */
TEST(round_trip)
{
	rm_data_source src[1] = {{.dataname = "c",
				  .provider = "custom",
				  .home = "/data_dlm_0",
				  .host_path = "/mirror/c",
				  .read_only = 1,
				  .create_host_path = 1,
				  .script = "scripts/common/get.sh",
				  .script_args = "--to 'a b'"}};
	rm_data_plan plan = {src, 1, "/data_dlm_0", "c", "custom"};
	rm_workload_settings set = {.tunableop = RM_TUNABLEOP_ON,
				    .shm_size = 1 << 30,
				    .keep_alive = 1,
				    .timeout = 42,
				    .telemetry = RM_TELEMETRY_ON,
				    .allow_sensitive_mounts = 1};
	const char *env[] = {"PATH=/bin", "MAD_SECRETS_HF=tok", "X_MAD_SECRETS=y",
			     "BUILD_NUMBER=1234", NULL};
	rm_context ctx = {0};
	rm_workload w, back;
	rm_workload_in in = {.model = &model,
			     .ctx = &ctx,
			     .set = &set,
			     .run_id = "r1",
			     .log_dir = "/nonexistent/logs",
			     .extra_args = " --k v",
			     .host_env = env,
			     .tools = &tool_plan};
	rm_error err = RM_ERROR_INIT;
	json_t *j, *j2, *b1 = NULL, *b2 = NULL;
	char *text;

	context(&ctx, "{\"docker_env_vars\": {\"A\": \"1\", \"B\": \"two words\"}, "
		      "\"docker_mounts\": {\"/in\": \"/out\"}, \"docker_gpus\": \"0,2-3\", "
		      "\"docker_cpus\": \"0-3\", \"model_args\": \"--m 1\", \"distributed\": "
		      "{\"launcher\": \"deepspeed\"}}");
	CHECK(rm_workload_build(&w, &in, &err) == 0);
	rm_workload_set_image(&w, "sha256:abc");
	rm_workload__plan_copy(&w.data, &plan);
	j = rm_workload_to_json(&w);
	text = json_dumps(j, JSON_COMPACT);
	CHECK(text && !strstr(text, "tok")); /* a secret by name only */
	free(text);
	CHECK(rm_workload_from_json(&back, j, &err) == 0);
	CHECK(back.model == NULL);
	back.model = &model;
	CHECK_STR(back.model_name, "m");
	CHECK_STR(back.image, "sha256:abc");
	CHECK_STR(back.run_id, "r1");
	CHECK_STR(back.log_dir, "/nonexistent/logs");
	CHECK_STR(back.extra_args, " --k v");
	CHECK_STR(back.model_args, "--m 1");
	CHECK(back.n_gpus == 0);
	CHECK(back.tunableop == RM_TUNABLEOP_ON);
	CHECK_STR(back.tunableop_dir, "/nonexistent/logs/tunableop/m");
	CHECK(back.timeout == 42);
	CHECK(back.n_env == 2 && !strcmp(back.env[1].key, "B") &&
	      !strcmp(back.env[1].value, "two words"));
	CHECK(back.n_secrets == 2 && !strcmp(back.secrets[0], "MAD_SECRETS_HF") &&
	      !strcmp(back.secrets[1], "X_MAD_SECRETS"));
	CHECK(back.n_mounts == 1 && !strcmp(back.mounts[0].key, "/in") &&
	      !strcmp(back.mounts[0].value, "/out"));
	CHECK_STR(back.gpus, "0,2-3");
	CHECK_STR(back.cpus, "0-3");
	CHECK(back.data.n == 1 && back.data.sources[0].read_only &&
	      back.data.sources[0].create_host_path);
	CHECK_STR(back.data.sources[0].script_args, "--to 'a b'");
	CHECK_STR(back.data.sources[0].host_path, "/mirror/c");
	CHECK_STR(back.data.provider_type, "custom");
	CHECK(back.tools.n_tools == 2 && !strcmp(back.tools.tools[1], "rpd") &&
	      !strcmp(back.tools.sources[1], "built in"));
	CHECK(back.tools.n_pre == 2 && !strcmp(back.tools.pre[0].args, "--out 'a b' -v") &&
	      back.tools.pre[1].path == NULL && back.tools.pre[1].text != NULL);
	CHECK(back.tools.n_post == 1 && back.tools.post[0].tool == NULL);
	CHECK_STR(back.tools.wrap, "wrap.sh --");
	CHECK(back.tools.n_env == 2 && !strcmp(back.tools.env[1].value, "tool"));
	CHECK(back.tools.n_outputs == 2 && !strcmp(back.tools.outputs[1].glob, "/tmp/*.rpd"));
	CHECK(back.tools.n_copies == 1 && !strcmp(back.tools.copies[0].host, "./scripts/common"));
	CHECK(back.set.tunableop == RM_TUNABLEOP_ON);
	CHECK(back.set.shm_size == 1 << 30 && back.set.keep_alive && back.set.timeout == 42 &&
	      back.set.allow_sensitive_mounts);
	CHECK_STR(back.build_number, "1234");
	CHECK_STR(back.dist_launcher, "deepspeed");
	CHECK(back.set.telemetry == RM_TELEMETRY_ON);
	j2 = rm_workload_to_json(&back);
	CHECK(json_equal(j, j2));
	CHECK(rm_workload_render(&w, &ctx, env, &b1, &err) == 0);
	CHECK(rm_workload_render(&back, &ctx, env, &b2, &err) == 0);
	CHECK(b1 && b2 && json_equal(b1, b2));
	json_decref(b1);
	json_decref(b2);
	json_decref(j);
	json_decref(j2);
	rm_workload_release(&back);
	rm_workload_release(&w);
	rm_context_release(&ctx);
}

/* The reader refuses what a node cannot trust, naming the key. */
/* The GPUs a workload uses on a host: what the render gives it and telemetry samples. */
TEST(gpu_indexes)
{
	rm_context ctx = {0};
	rm_workload w;
	rm_error err = RM_ERROR_INIT;
	long *g = NULL;
	size_t n = 9;

	context(&ctx, "{\"gpu_vendor\": \"AMD\", \"MAD_SYSTEM_NGPUS\": 8}");
	ctx.n_gpus = 8;
	workload(&w, &ctx, NULL, NULL);
	w.n_gpus = 2; /* the first two */
	CHECK(rm_workload_gpu_indexes(&w, &ctx, &g, &n, &err) == 0);
	CHECK(n == 2 && g && g[0] == 0 && g[1] == 1);
	free(g);
	w.n_gpus = -1; /* all of the host's */
	CHECK(rm_workload_gpu_indexes(&w, &ctx, &g, &n, &err) == 0 && n == 8 && g[7] == 7);
	free(g);
	w.gpus = rm_xstrdup("1,4-5"); /* docker_gpus picks them */
	CHECK(rm_workload_gpu_indexes(&w, &ctx, &g, &n, &err) == 0);
	CHECK(n == 3 && g[0] == 1 && g[1] == 4 && g[2] == 5);
	free(g);
	free(w.gpus);
	w.gpus = rm_xstrdup("1,x");
	CHECK(rm_workload_gpu_indexes(&w, &ctx, &g, &n, &err) < 0 && g == NULL);
	CHECK(strstr(err.msg, "docker_gpus '1,x'") != NULL);
	w.n_gpus = 0; /* a GPU-less model: none */
	CHECK(rm_workload_gpu_indexes(&w, &ctx, &g, &n, &err) == 0 && n == 0 && g == NULL);
	rm_workload_release(&w);
	rm_context_release(&ctx);
	/* a host without GPUs: none */
	context(&ctx, NULL);
	workload(&w, &ctx, NULL, NULL);
	w.n_gpus = -1;
	CHECK(rm_workload_gpu_indexes(&w, &ctx, &g, &n, &err) == 0 && n == 0);
	rm_workload_release(&w);
	rm_context_release(&ctx);
}

TEST(job_doc_errors)
{
	static const struct {
		const char *json, *want;
	} cases[] = {
	    {"[]", "not a JSON object"},
	    {"{\"run_id\": \"r\", \"root\": \"/\", \"workloads\": {}}", "no 'schema'"},
	    {"{\"schema\": 9, \"run_id\": \"r\", \"root\": \"/\", \"workloads\": {}}",
	     "schema 9 is not"},
	    {"{\"schema\": 1, \"root\": \"/\", \"workloads\": {}}", "'run_id' is missing"},
	    {"{\"schema\": 1, \"run_id\": \"r\", \"root\": \"/\", \"workloads\": {\"k\": "
	     "{\"model\": \"m\", \"run_id\": \"r\", \"log_base\": \"l\", \"env\": [[\"A\"]]}}}",
	     "workload 'k': 'env' item 0 is not a pair of strings"},
	    {"{\"schema\": 1, \"run_id\": \"r\", \"root\": \"/\", \"workloads\": {\"k\": "
	     "{\"model\": \"m\", \"run_id\": \"r\", \"log_base\": \"l\", \"timeout\": -1}}}",
	     "'timeout' is negative"},
	    {"{\"schema\": 1, \"run_id\": \"r\", \"root\": \"/\", \"workloads\": {\"k\": "
	     "{\"model\": \"m\", \"run_id\": \"r\", \"log_base\": \"l\", \"settings\": "
	     "{\"shm_size\": \"1G\"}}}}",
	     "'settings': 'shm_size' is not an integer"},
	    {"{\"schema\": 1, \"run_id\": \"r\", \"root\": \"/\", \"workloads\": {\"k\": "
	     "{\"model\": \"m\", \"run_id\": \"r\", \"log_base\": \"l\", \"tools\": "
	     "{\"pre\": [{\"tool\": \"t\"}]}}}}",
	     "'tools': 'pre' item 0 has no 'path' or 'text', or both"},
	    {"{\"schema\": 1, \"run_id\": \"r\", \"root\": \"/\", \"workloads\": {\"k\": "
	     "{\"model\": \"m\", \"run_id\": \"r\", \"log_base\": \"l\", \"tools\": "
	     "{\"tools\": [\"a\"], \"sources\": []}}}}",
	     "'tools': 'sources' has 0 items and 'tools' 1"},
	    {"{\"schema\": 1, \"run_id\": \"r\", \"root\": \"/\", \"workloads\": {\"k\": "
	     "{\"model\": \"m\", \"run_id\": \"r\", \"log_base\": \"l\", \"tools\": "
	     "{\"outputs\": [[\"a\"]]}}}}",
	     "'tools': 'outputs' item 0 is not a pair of strings"},
	    /* issue 29: what a node takes from a document it did not write */
	    {"{\"schema\": 1, \"run_id\": \"r\", \"root\": \"/\", \"workloads\": {\"k\": "
	     "{\"model\": \"m\", \"run_id\": \"r\", \"log_base\": \"/l\", \"secrets\": "
	     "[\"HOME\"]}}}",
	     "'secrets' names 'HOME', which is no MAD_SECRETS variable"},
	    {"{\"schema\": 1, \"run_id\": \"r\", \"root\": \"/\", \"workloads\": {\"k\": "
	     "{\"model\": \"m\", \"run_id\": \"r\", \"log_base\": \"/l\", \"env\": "
	     "[[\"A=B\", \"x\"]]}}}",
	     "'env' has 'A=B', which is not a variable name"},
	    {"{\"schema\": 1, \"run_id\": \"r\", \"root\": \"/\", \"workloads\": {\"k\": "
	     "{\"model\": \"m\", \"run_id\": \"r\", \"log_base\": \"logs/l\"}}}",
	     "'log_base' 'logs/l' is not an absolute path"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		rm_error err = RM_ERROR_INIT;
		rm_job_doc d;
		json_t *doc = json_loads(cases[i].json, JSON_DECODE_ANY, NULL);
		CHECK(doc && rm_job_doc_from_json(&d, doc, "f.json", &err) < 0);
		CHECK(strstr(err.msg, cases[i].want) && strstr(err.msg, "job document 'f.json'"));
		if (!strstr(err.msg, cases[i].want))
			fprintf(stderr, "case %zu: %s\n", i, err.msg);
		json_decref(doc);
	}
}

/* Podman: NVIDIA GPUs are CDI devices the host's specs must name (refused before anything
 * is built otherwise); rootless Podman on cgroup v1 cannot take docker_cpus; Docker's
 * request is unchanged. */
static void set_cdi(rm_context *ctx, const char *const *names)
{
	rm_strv_free(ctx->cdi_specs);
	rm_strv_free(ctx->cdi_devices);
	ctx->cdi_specs = ctx->cdi_devices = NULL;
	ctx->n_cdi_specs = ctx->n_cdi_devices = 0;
	if (!names)
		return;
	ctx->cdi_specs = rm_xcalloc(1, sizeof(char *));
	ctx->cdi_specs = rm_strv_push(ctx->cdi_specs, &ctx->n_cdi_specs, "/etc/cdi/nvidia.yaml");
	ctx->cdi_devices = rm_xcalloc(1, sizeof(char *));
	for (; *names; names++)
		ctx->cdi_devices = rm_strv_push(ctx->cdi_devices, &ctx->n_cdi_devices, *names);
}

static json_t *cdi_ids(json_t *body)
{
	json_t *req = json_array_get(
	    json_object_get(json_object_get(body, "HostConfig"), "DeviceRequests"), 0);
	CHECK_STR(json_string_value(json_object_get(req, "Driver")), "cdi");
	return json_object_get(req, "DeviceIDs");
}

TEST(podman)
{
	static const char *const names[] = {"nvidia.com/gpu=all", "nvidia.com/gpu=0",
					    "nvidia.com/gpu=1", NULL};
	static const rm_workload_settings none = RM_WORKLOAD_SETTINGS_INIT;
	rm_context ctx = {0};
	rm_workload w;
	rm_error err = RM_ERROR_INIT;
	json_t *body = NULL, *req;
	rm_workload_in in = {.model = &model, .ctx = &ctx, .run_id = "r", .set = &none};

	model.n_gpus = -1;
	context(&ctx, "{\"gpu_vendor\": \"NVIDIA\", \"MAD_SYSTEM_NGPUS\": 2}");
	CHECK(rm_workload_build(&w, &in, &err) == 0);
	rm_workload_set_image(&w, "img");
	/* Docker: the NVIDIA runtime's request, as before */
	CHECK(render(&w, &ctx, &body, &err) == 0);
	req = json_array_get(json_object_get(json_object_get(body, "HostConfig"), "DeviceRequests"),
			     0);
	CHECK_STR(json_string_value(json_object_get(req, "Driver")), "");
	CHECK(json_integer_value(json_object_get(req, "Count")) == -1);
	json_decref(body);
	body = NULL;
	/* Podman without a CDI spec: refused, saying how to make one */
	ctx.engine = RM_ENGINE_PODMAN;
	set_cdi(&ctx, NULL);
	CHECK(render(&w, &ctx, &body, &err) < 0 && !body);
	CHECK(strstr(rm_error_text(&err), "no CDI spec") &&
	      strstr(rm_error_text(&err), "nvidia-ctk cdi generate"));
	rm_error_clear(&err);
	/* all of the host's GPUs: nvidia.com/gpu=all */
	set_cdi(&ctx, names);
	CHECK(render(&w, &ctx, &body, &err) == 0);
	CHECK(json_array_size(cdi_ids(body)) == 1);
	CHECK_STR(json_string_value(json_array_get(cdi_ids(body), 0)), "nvidia.com/gpu=all");
	json_decref(body);
	body = NULL;
	rm_workload_release(&w);
	/* some: one device each */
	model.n_gpus = 2;
	free(ctx.docker_gpus);
	ctx.docker_gpus = rm_xstrdup("0,1");
	CHECK(rm_workload_build(&w, &in, &err) == 0);
	rm_workload_set_image(&w, "img");
	CHECK(render(&w, &ctx, &body, &err) == 0);
	CHECK(json_array_size(cdi_ids(body)) == 2);
	CHECK_STR(json_string_value(json_array_get(cdi_ids(body), 1)), "nvidia.com/gpu=1");
	json_decref(body);
	body = NULL;
	rm_workload_release(&w);
	/* one the specs lack */
	free(ctx.docker_gpus);
	ctx.docker_gpus = rm_xstrdup("3");
	model.n_gpus = 1;
	CHECK(rm_workload_build(&w, &in, &err) == 0);
	rm_workload_set_image(&w, "img");
	CHECK(render(&w, &ctx, &body, &err) < 0);
	CHECK(strstr(rm_error_text(&err), "have no 'nvidia.com/gpu=3'") != NULL);
	rm_error_clear(&err);
	rm_workload_release(&w);
	/* rootless Podman on cgroup v1: docker_cpus refused */
	free(ctx.docker_gpus);
	ctx.docker_gpus = NULL;
	ctx.docker_cpus = rm_xstrdup("0-3");
	ctx.engine_no_cgroups = 1;
	CHECK(rm_workload_build(&w, &in, &err) == 0);
	rm_workload_set_image(&w, "img");
	CHECK(render(&w, &ctx, &body, &err) < 0);
	CHECK(strstr(rm_error_text(&err), "rootless Podman on cgroup v1") != NULL);
	rm_error_clear(&err);
	ctx.engine_no_cgroups = 0;
	CHECK(render(&w, &ctx, &body, &err) == 0);
	CHECK_STR(
	    json_string_value(json_object_get(json_object_get(body, "HostConfig"), "CpusetCpus")),
	    "0-3");
	json_decref(body);
	rm_workload_release(&w);
	rm_context_release(&ctx);
	model.n_gpus = 0;
}

/* Today's MAD cards (issue 30): the card's env_vars with the context's over them; the run's
 * image fills DOCKER_IMAGE_NAME unless the context gives it; any other "<...>" placeholder is
 * refused naming the card and the variable; a slurm_multi card's launcher is its own. */
TEST(card_env_vars)
{
	static char *card_env[] = {"DOCKER_IMAGE_NAME=<supply-your-image>", "xP=1", "yD=1", NULL};
	rm_model saved = model;
	rm_context ctx;
	rm_workload w, back;
	rm_error err = RM_ERROR_INIT;
	json_t *body = NULL, *j;
	long at;
	rm_kv *kv;
	size_t n;

	model.env_vars = card_env;
	model.n_env_vars = 3;
	model.distributed = json_pack("{s:s, s:i}", "launcher", "slurm_multi", "nnodes", 2);
	context(&ctx,
		"{\"env_vars\": {\"yD\": \"2\"}, \"distributed\": {\"launcher\": \"torchrun\"}}");
	workload(&w, &ctx, NULL, NULL);
	CHECK(render(&w, &ctx, &body, &err) == 0);
	CHECK_STR(env_of(body, "DOCKER_IMAGE_NAME", &at), "img");
	CHECK_STR(env_of(body, "xP", &at), "1");
	CHECK_STR(env_of(body, "yD", &at), "2"); /* the context's wins */
	json_decref(body);
	kv = rm_workload_env_vars(&w, &n);
	CHECK(n == 3 && !strcmp(kv[0].key, "DOCKER_IMAGE_NAME") && !strcmp(kv[0].value, "img"));
	rm_workload_kv_free(kv, n);
	/* the card's slurm_multi wins over the context's torchrun: its script runs itself */
	CHECK(rm_workload_dist_launcher(&w) &&
	      rm_workload_dist_launcher(&w)->start == RM_DIST_SCRIPT);
	CHECK(rm_dist_runs_script(rm_workload_dist_launcher(&w), 0));
	/* through the job document and back */
	j = rm_workload_to_json(&w);
	CHECK(rm_workload_from_json(&back, j, &err) == 0);
	CHECK(back.n_env_vars == 3 && !strcmp(back.env_vars[2].value, "2") &&
	      !back.image_name_given);
	json_decref(j);
	rm_workload_release(&back);
	rm_workload_release(&w);
	rm_context_release(&ctx);

	/* the context names the image: it stays; a placeholder it leaves is refused */
	card_env[1] = "xP=<set-me>";
	context(&ctx, "{\"env_vars\": {\"DOCKER_IMAGE_NAME\": \"reg.io/vllm:1\"}}");
	workload(&w, &ctx, NULL, NULL);
	CHECK(w.image_name_given);
	body = NULL;
	CHECK(render(&w, &ctx, &body, &err) < 0 && body == NULL);
	CHECK(strstr(err.msg, "model 'm': env_vars 'xP' is '<set-me>', a placeholder"));
	kv = rm_workload_env_vars(&w, &n);
	CHECK(!strcmp(kv[0].value, "reg.io/vllm:1"));
	rm_workload_kv_free(kv, n);
	rm_workload_release(&w);
	rm_context_release(&ctx);
	card_env[1] = "xP=1";

	/* the context's DOCKER_IMAGE_NAME placeholder is the user's: refused */
	context(&ctx, "{\"env_vars\": {\"DOCKER_IMAGE_NAME\": \"<supply-your-image>\"}}");
	workload(&w, &ctx, NULL, NULL);
	CHECK(rm_workload_check_placeholders(&w, &err) < 0 &&
	      strstr(err.msg, "'DOCKER_IMAGE_NAME' is '<supply-your-image>'"));
	rm_workload_release(&w);
	rm_context_release(&ctx);

	json_decref(model.distributed);
	model = saved;
}
