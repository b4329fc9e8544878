/*
 * The tools module (rm/tools.h): the tools file, the context's keys, madengine's order
 * (ContainerRunner.apply_tools; test_stackable_design_runs_correctly expects pre B, pre A,
 * cmd_B, cmd_A, post A, post B for tools [A, B]), the built-in table, and the refusals.
 * The container side runs against a real engine in tests/compat (the tools_* cases).
 */
/* nftw() is an XSI function. */
#define _XOPEN_SOURCE 700

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "testfs.h"
#include "rm/tools.h"
#include "rm/util.h"

static char *dir;

/* madengine's fixture tools (tools.json), and two more of ours */
static const char tools_json[] =
    "{\"tools\": {\n"
    " \"test_tools_A\": {\"pre_scripts\": [{\"path\": \"scripts/common/test_echo.sh\", "
    "\"args\": \"pre_script A\"}], \"cmd\": \"echo cmd_A && \", \"env_vars\": {\"A\": \"1\", "
    "\"S\": \"a\"}, \"post_scripts\": [{\"path\": \"scripts/common/test_echo.sh\", \"args\": "
    "\"post_script A\"}]},\n"
    " \"test_tools_B\": {\"pre_scripts\": [{\"path\": \"scripts/common/test_echo.sh\", "
    "\"args\": \"pre_script B\"}], \"cmd\": \"echo cmd_B && \", \"env_vars\": {\"B\": 2, "
    "\"S\": \"b\"}, \"post_scripts\": [{\"path\": \"scripts/common/test_echo.sh\", \"args\": "
    "\"post_script B\"}], \"outputs\": [\"b_out\", \"/tmp/b.csv\"]},\n"
    " \"lib_a\": {\"env_vars\": {\"L\": \"a\"}, \"cmd\": \"python3 trace.py\"},\n"
    " \"lib_b\": {\"env_vars\": {\"M\": \"b\"}, \"cmd\": \"python3 trace.py\"},\n"
    " \"top\": {\"pre_scripts\": [{\"path\": \"setup.sh\"}]}\n"
    "}}\n";

static json_t *ctx(const char *text)
{
	json_error_t je;
	json_t *j = json_loads(text, 0, &je);
	CHECK(j != NULL);
	if (!j)
		fprintf(stderr, "bad test JSON: %s\n", je.text);
	return j;
}

static int resolve(const rm_tools_config *c, const char *ctx_text, rm_tool_plan *p, rm_error *err)
{
	json_t *j = ctx(ctx_text);
	int r = rm_tools_resolve(c, j, dir, p, err);
	json_decref(j);
	return r;
}

static void load(rm_tools_config *c)
{
	rm_error err = RM_ERROR_INIT;
	CHECK(rm_tools_config_load(c, NULL, dir, &err) == 0);
	CHECK(c->source && strstr(c->source, "scripts/common/tools.json"));
	CHECK_STR(c->folder, "scripts/common");
}

SETUP()
{
	dir = tfs_tmpdir("tools");
	tfs_put(dir, "scripts/common/tools.json", tools_json);
	tfs_put(dir, "scripts/common/test_echo.sh", "#!/bin/bash\necho \"$@\"\n");
	tfs_put(dir, "setup.sh", "#!/bin/bash\n");
}

TEARDOWN()
{
	tfs_rm_tree(dir);
	free(dir);
}

/* Tools [A, B] in madengine's order; env merged in order, the last tool winning. */
TEST(order)
{
	rm_tools_config c;
	rm_tool_plan p;
	rm_error err = RM_ERROR_INIT;

	load(&c);
	CHECK(resolve(&c,
		      "{\"tools\": [{\"name\": \"test_tools_A\"}, {\"name\": \"test_tools_B\"}]}",
		      &p, &err) == 0);
	CHECK(p.n_tools == 2 && !strcmp(p.tools[0], "test_tools_A") &&
	      !strcmp(p.tools[1], "test_tools_B"));
	CHECK(p.n_pre == 2 && p.n_post == 2);
	if (p.n_pre == 2 && p.n_post == 2) {
		CHECK_STR(p.pre[0].args, "pre_script B");
		CHECK_STR(p.pre[0].tool, "test_tools_B");
		CHECK_STR(p.pre[1].args, "pre_script A");
		CHECK_STR(p.post[0].args, "post_script A");
		CHECK_STR(p.post[1].args, "post_script B");
		CHECK_STR(p.pre[0].path, "scripts/common/test_echo.sh");
		CHECK(p.pre[0].text == NULL);
	}
	/* cmd_B cmd_A <model>; madengine's blanks kept inside, the trailing ones dropped */
	CHECK_STR(p.wrap, "echo cmd_B &&  echo cmd_A &&");
	CHECK(p.n_env == 3);
	if (p.n_env == 3) {
		CHECK_STR(p.env[0].key, "A");
		CHECK_STR(p.env[1].key, "S");
		CHECK_STR(p.env[1].value, "b"); /* B's, applied after A's */
		CHECK_STR(p.env[2].key, "B");
		CHECK_STR(p.env[2].value, "2"); /* a number, as Python's str() writes it */
	}
	CHECK(p.n_outputs == 2 && !strcmp(p.outputs[0].tool, "test_tools_B") &&
	      !strcmp(p.outputs[1].glob, "/tmp/b.csv"));
	/* the script's folder and the file's folder: one copy, scripts/common */
	CHECK(p.n_copies == 1 && !strcmp(p.copies[0].dest, "scripts/common"));
	CHECK(p.n_copies == 1 && strstr(p.copies[0].host, "/scripts/common") != NULL);
	CHECK_STR(p.sources[0], c.source);
	CHECK(!rm_tool_plan_empty(&p));

	/* a copy is the same plan */
	{
		rm_tool_plan q;
		rm_tool_plan_copy(&q, &p);
		CHECK(q.n_pre == 2 && !strcmp(q.pre[1].args, "pre_script A"));
		CHECK_STR(q.wrap, p.wrap);
		CHECK(q.n_copies == 1 && q.n_outputs == 2 && q.n_env == 3);
		rm_tool_plan_release(&q);
	}
	rm_tool_plan_release(&p);

	/* the context's own scripts and prefix inside the tools' */
	CHECK(resolve(&c,
		      "{\"pre_scripts\": [{\"path\": \"scripts/common/test_echo.sh\", \"args\": "
		      "\"ctx\"}], \"post_scripts\": [{\"path\": \"scripts/common/test_echo.sh\", "
		      "\"args\": \"ctx\"}], \"encapsulate_script\": \"wrap.sh\", \"tools\": "
		      "[{\"name\": \"test_tools_A\"}]}",
		      &p, &err) == 0);
	CHECK(p.n_pre == 2 && p.n_post == 2);
	if (p.n_pre == 2 && p.n_post == 2) {
		CHECK_STR(p.pre[0].args, "pre_script A");
		CHECK(p.pre[1].tool == NULL);
		CHECK_STR(p.pre[1].args, "ctx");
		CHECK_STR(p.post[0].args, "ctx");
		CHECK_STR(p.post[1].args, "post_script A");
	}
	CHECK_STR(p.wrap, "echo cmd_A &&  wrap.sh");
	rm_tool_plan_release(&p);

	/* one cmd shared by two tools is added once (madengine: added_cmds) */
	CHECK(resolve(&c, "{\"tools\": [{\"name\": \"lib_a\"}, {\"name\": \"lib_b\"}]}", &p,
		      &err) == 0);
	CHECK_STR(p.wrap, "python3 trace.py");
	CHECK(p.n_env == 2);
	rm_tool_plan_release(&p);

	/* the context's entry: cmd replaces, env_vars merge over, outputs replace */
	CHECK(resolve(&c,
		      "{\"tools\": [{\"name\": \"test_tools_B\", \"cmd\": \"mine --\", "
		      "\"env_vars\": {\"S\": \"ctx\", \"N\": 0.1}, \"outputs\": [\"x/*.db\"], "
		      "\"_comment\": \"ignored\"}]}",
		      &p, &err) == 0);
	CHECK_STR(p.wrap, "mine --");
	CHECK(p.n_env == 3 && !strcmp(p.env[1].value, "ctx") && !strcmp(p.env[2].value, "0.1"));
	CHECK(p.n_outputs == 1 && !strcmp(p.outputs[0].glob, "x/*.db"));
	rm_tool_plan_release(&p);

	/* nothing selected: an empty plan */
	CHECK(resolve(&c, "{\"gpu_vendor\": \"AMD\"}", &p, &err) == 0);
	CHECK(rm_tool_plan_empty(&p) && p.n_tools == 0);
	rm_tool_plan_release(&p);

	/* a script at the folder's top is copied alone, not the whole folder */
	CHECK(resolve(&c, "{\"tools\": [{\"name\": \"top\"}]}", &p, &err) == 0);
	CHECK(p.n_copies == 2);
	for (size_t i = 0; i < p.n_copies; i++)
		CHECK(!strcmp(p.copies[i].dest, "setup.sh") ||
		      !strcmp(p.copies[i].dest, "scripts/common"));
	rm_tool_plan_release(&p);
	rm_tools_config_release(&c);
}

/* A name the file does not define falls back to the built-in one. */
TEST(builtin)
{
	rm_tools_config c;
	rm_tool_plan p;
	rm_error err = RM_ERROR_INIT;
	const char *const *names = rm_tools_builtin_names();
	size_t n = 0;

	for (; names[n]; n++)
		;
	/* madengine's names */
	static const char *const want[] = {"rocprof",
					   "rocprofv3",
					   "rocprofv3_compute",
					   "rocprofv3_memory",
					   "rocprofv3_full",
					   "rpd",
					   "rocm_trace_lite",
					   "rocblas_trace",
					   "hipblaslt_trace",
					   "miopen_trace",
					   "tensile_trace",
					   "rccl_trace",
					   "gpu_info_power_profiler",
					   "gpu_info_vram_profiler",
					   NULL};
	for (const char *const *w = want; *w; w++) {
		int found = 0;
		for (size_t i = 0; i < n; i++)
			found |= !strcmp(names[i], *w);
		CHECK(found);
		if (!found)
			fprintf(stderr, "no built-in %s\n", *w);
	}

	load(&c);
	CHECK(resolve(&c, "{\"tools\": [{\"name\": \"test_tools_A\"}, {\"name\": \"rocprofv3\"}]}",
		      &p, &err) == 0);
	CHECK_STR(p.sources[1], "built in");
	CHECK_STR(p.wrap, "rocprofv3 --runtime-trace -d ./rocprof_output -- echo cmd_A &&");
	CHECK(p.n_outputs == 1 && !strcmp(p.outputs[0].glob, "rocprof_output"));
	rm_tool_plan_release(&p);

	/* a built-in with scripts: shell text, no file, nothing copied */
	CHECK(resolve(NULL, "{\"tools\": [{\"name\": \"rpd\"}]}", &p, &err) == 0);
	CHECK(p.n_pre == 1 && p.pre[0].path == NULL && p.pre[0].text != NULL);
	CHECK(p.n_post == 1 && p.post[0].text != NULL);
	CHECK(p.n_copies == 0);
	CHECK_STR(p.wrap, "./rocmProfileData/rpd_tracer/runTracer.sh");
	rm_tool_plan_release(&p);

	/* library traces: the libraries' own variables (madengine's get_library_trace.py) */
	CHECK(resolve(NULL,
		      "{\"tools\": [{\"name\": \"rocblas_trace\"}, {\"name\": \"rccl_trace\"}]}",
		      &p, &err) == 0);
	CHECK(p.wrap == NULL);
	CHECK(p.n_env >= 4 && !strcmp(p.env[0].key, "ROCBLAS_LAYER") &&
	      !strcmp(p.env[0].value, "6"));
	rm_tool_plan_release(&p);

	/* the file's definition wins over the built-in of the same name */
	tfs_put(dir, "other.json", "{\"tools\": {\"rocprofv3\": {\"cmd\": \"my-rocprofv3 --\"}}}");
	{
		rm_tools_config o;
		char *path = rm_xasprintf("%s/other.json", dir);
		CHECK(rm_tools_config_load(&o, path, dir, &err) == 0);
		CHECK(resolve(&o, "{\"tools\": [{\"name\": \"rocprofv3\"}]}", &p, &err) == 0);
		CHECK_STR(p.wrap, "my-rocprofv3 --");
		CHECK(p.n_outputs == 0); /* the file's definition has none */
		CHECK_STR(o.folder, "");
		CHECK(p.n_copies == 0); /* not the whole folder */
		rm_tool_plan_release(&p);
		rm_tools_config_release(&o);
		free(path);
	}
	rm_tools_config_release(&c);
}

static void want_error(const rm_tools_config *c, const char *ctx_text, const char *want)
{
	rm_tool_plan p;
	rm_error err = RM_ERROR_INIT;

	CHECK(resolve(c, ctx_text, &p, &err) < 0);
	CHECK(err.kind == RM_ERR_INPUT);
	CHECK(strstr(rm_error_text(&err), want) != NULL);
	if (!strstr(rm_error_text(&err), want))
		fprintf(stderr, "got: %s\nwant: %s\n", rm_error_text(&err), want);
	CHECK(p.n_tools == 0 && p.pre == NULL); /* released */
}

TEST(errors)
{
	rm_tools_config c;
	rm_error err = RM_ERROR_INIT;
	char *path;

	load(&c);
	want_error(&c, "{\"tools\": [{\"name\": \"rocprof_v9\"}]}",
		   "context key 'tools': unknown tool 'rocprof_v9': '");
	want_error(&c, "{\"tools\": [{\"name\": \"rocprof_v9\"}]}",
		   "known tools: test_tools_A, test_tools_B, lib_a, lib_b, top, rocprof, ");
	want_error(NULL, "{\"tools\": [{\"name\": \"x\"}]}",
		   "the folder's scripts/common/tools.json does not define it and it is not built "
		   "in; known tools: rocprof, ");
	want_error(&c, "{\"tools\": {\"name\": \"rpd\"}}", "context key 'tools' is not a list");
	want_error(&c, "{\"tools\": [\"rpd\"]}",
		   "'tools': item 1 must be an object with a \"name\"");
	want_error(&c, "{\"tools\": [{\"name\": \"rpd\", \"cmds\": \"x\"}]}",
		   "tool 'rpd': unknown key 'cmds' (known: name, cmd, env_vars, outputs)");
	want_error(&c, "{\"tools\": [{\"name\": \"rpd\", \"cmd\": 3}]}",
		   "tool 'rpd': 'cmd' is not a string");
	want_error(&c, "{\"tools\": [{\"name\": \"rpd\", \"env_vars\": {\"A\": [1]}}]}",
		   "tool 'rpd': 'env_vars': 'A' must be a variable name");
	want_error(&c, "{\"tools\": [{\"name\": \"rpd\", \"outputs\": [\"a/../../b\"]}]}",
		   "'outputs' item 1 must be a glob with no '..' part");
	want_error(&c, "{\"encapsulate_script\": [1]}", "'encapsulate_script' is not a string");
	want_error(&c, "{\"pre_scripts\": [{\"path\": \"/etc/passwd\"}]}",
		   "context key 'pre_scripts': 'pre_scripts' item 1: 'path' must be a path inside "
		   "the MAD folder");
	want_error(&c, "{\"post_scripts\": [{\"path\": \"missing.sh\"}]}",
		   "script 'missing.sh': No such file or directory (paths are relative to the MAD "
		   "folder)");
	want_error(&c, "{\"post_scripts\": [{\"path\": \"scripts\"}]}",
		   "script 'scripts' is not a file");
	/* a symlink out of the folder */
	path = rm_xasprintf("%s/scripts/evil.sh", dir);
	CHECK(symlink("/etc/passwd", path) == 0);
	want_error(&c, "{\"pre_scripts\": [{\"path\": \"scripts/evil.sh\"}]}",
		   "outside the folder");
	free(path);
	rm_tools_config_release(&c);

	/* the file itself */
	static const struct {
		const char *json, *want;
	} files[] = {
	    {"{\"tools\": [}", "line 1, column 12"},
	    {"{\"tool\": {}}", "has no \"tools\" object"},
	    {"{\"tools\": {\"a\": []}}", "tool 'a' is not an object"},
	    {"{\"tools\": {\"a\": {\"pre_scripts\": {}}}}",
	     "tool 'a': 'pre_scripts' is not a list"},
	    {"{\"tools\": {\"a\": {\"post_scripts\": [{\"args\": \"x\"}]}}}",
	     "tool 'a': 'post_scripts' item 1: 'path' must be a path inside the MAD folder"},
	    {"{\"tools\": {\"a\": {\"pre_scripts\": [{\"path\": \"x.sh\", \"args\": 1}]}}}",
	     "'pre_scripts' item 1: 'args' is not a string"},
	    {"{\"tools\": {\"a\": {\"cmd\": {}}}}", "tool 'a': 'cmd' is not a string"},
	};
	path = rm_xasprintf("%s/bad.json", dir);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		rm_tools_config b;
		tfs_put(dir, "bad.json", files[i].json);
		rm_error_clear(&err);
		CHECK(rm_tools_config_load(&b, path, dir, &err) < 0);
		CHECK(strstr(err.msg, files[i].want) && strstr(err.msg, "bad.json"));
		if (!strstr(err.msg, files[i].want))
			fprintf(stderr, "file %zu: %s\n", i, err.msg);
		CHECK(b.tools == NULL);
	}
	free(path);
	{
		rm_tools_config b;
		CHECK(rm_tools_config_load(&b, "/nonexistent/tools.json", dir, &err) < 0);
		CHECK(strstr(err.msg, "--tools-config '/nonexistent/tools.json': no such file"));
		/* no file of the folder: the built-ins only */
		CHECK(rm_tools_config_load(&b, NULL, "/nonexistent", &err) == 0);
		CHECK(b.source == NULL && json_object_size(b.tools) == 0);
		rm_tools_config_release(&b);
	}
}
