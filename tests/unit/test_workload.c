/*
 * The workload (rm/workload.h). Its data part (src/workload/render_data.c through
 * rm_workload_render and rm_workload_cmd): bind mounts, MAD_DATAHOME / MAD_DATANAME before
 * docker_env_vars, and the custom scripts' wrapper (the wrapper itself runs against a real
 * engine in tests/compat: data_custom, data_custom_fail). Its JSON: every field survives
 * to-JSON then from-JSON, and the two render the same request.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rm/context.h"
#include "rm/workload.h"
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

static void test_local(void)
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
}

static void test_custom(void)
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

int main(void)
{
	test_local();
	test_custom();
	return check_summary();
}
