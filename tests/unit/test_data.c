/* nftw() is an XSI function. */
#define _XOPEN_SOURCE 700

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "check.h"
#include "testfs.h"
#include "rm/data.h"
#include "rm/util.h"

static char *dir;

SETUP()
{
	dir = tfs_tmpdir("data");
}

TEARDOWN()
{
	tfs_rm_tree(dir);
	free(dir);
}

static void load(rm_data_config *cfg, const char *json)
{
	rm_error err = RM_ERROR_INIT;

	tfs_put(dir, "data.json", json);
	char *path = rm_xasprintf("%s/data.json", dir);
	CHECK(rm_data_config_load(cfg, path, &err) == 0);
	free(path);
}

/* madengine's fixture: dummy_data_local serves /tmp at /data_dlm_0, read-only. */
TEST(local)
{
	rm_data_config cfg;
	rm_data_plan plan;
	rm_error err = RM_ERROR_INIT;
	char *why = NULL;

	load(&cfg, "{\"dummy_data_local\": {\"local\": {\"path\": \"/tmp\"}},\n"
		   " \"dummy_data_local_fail\": {\"local\": {\"path\": \"/tmp/nonexistent\"}},\n"
		   " \"rel\": {\"local\": {\"path\": \"sub\", \"home\": \"/data\", \"readwrite\": "
		   "\"true\"}}}\n");
	CHECK(rm_data_resolve(&cfg, "dummy_data_local", dir, &plan, &why, &err) == 0);
	CHECK(plan.n == 1);
	if (plan.n == 1) {
		CHECK_STR(plan.sources[0].provider, "local");
		CHECK_STR(plan.sources[0].host_path, "/tmp");
		CHECK_STR(plan.sources[0].home, "/data_dlm_0");
		CHECK(plan.sources[0].read_only);
		CHECK(plan.sources[0].script == NULL);
	}
	CHECK_STR(plan.datahome, "/data_dlm_0");
	CHECK_STR(plan.dataname, "dummy_data_local");
	CHECK_STR(plan.provider_type, "local");
	rm_data_plan_release(&plan);

	CHECK(why == NULL);

	/* no provider serves it: left out of the plan (the model runs without it, as in
	 * madengine), the message names the data and why the provider could not serve it */
	CHECK(rm_data_resolve(&cfg, "dummy_data_local_fail", dir, &plan, &why, &err) == 0);
	CHECK_STR(why, "data 'dummy_data_local_fail': no provider serves it (local: "
		       "'/tmp/nonexistent' does not exist)");
	CHECK(plan.n == 0 && plan.sources == NULL && plan.datahome == NULL &&
	      plan.dataname == NULL);
	free(why);
	why = NULL;
	/* one of two served: the plan holds it, at the home of its place in the list */
	CHECK(rm_data_resolve(&cfg, "dummy_data_local_fail,dummy_data_local", dir, &plan, &why,
			      &err) == 0);
	CHECK(plan.n == 1 && why != NULL);
	CHECK_STR(plan.datahome, "/data_dlm_1");
	CHECK_STR(plan.dataname, "dummy_data_local");
	rm_data_plan_release(&plan);
	free(why);
	why = NULL;

	/* relative paths are the folder's; home and readwrite are honoured; a list gives
	 * one home each, joined in MAD_DATAHOME */
	char *sub = rm_xasprintf("%s/sub", dir);
	tfs_mkdirs(sub);
	CHECK(rm_data_resolve(&cfg, "dummy_data_local, rel", dir, &plan, &why, &err) == 0);
	CHECK(plan.n == 2);
	if (plan.n == 2) {
		char real[4096];
		CHECK(realpath(sub, real) != NULL);
		CHECK_STR(plan.sources[1].host_path, real);
		CHECK_STR(plan.sources[1].home, "/data");
		CHECK(!plan.sources[1].read_only);
	}
	CHECK_STR(plan.datahome, "/data_dlm_0,/data");
	CHECK_STR(plan.provider_type, "local,local");
	rm_data_plan_release(&plan);
	free(sub);

	CHECK(rm_data_resolve(&cfg, "nope", dir, &plan, &why, &err) < 0);
	CHECK(rm_starts_with(err.msg, "data 'nope' is not in '"));
	CHECK(rm_data_resolve(&cfg, NULL, dir, &plan, &why, &err) == 0 && plan.n == 0);
	rm_data_config_release(&cfg);
}

TEST(providers)
{
	rm_data_config cfg;
	rm_data_plan plan;
	rm_error err = RM_ERROR_INIT;
	char *why = NULL;

	tfs_put(dir, "scripts/common/data/get.sh", "echo fetch\n");
	char *mirror = rm_xasprintf("%s/mirror", dir);
	tfs_mkdirs(mirror);
	load(&cfg,
	     "{\"net\": {\"aws\": {\"path\": \"s3://b/p\"}, \"nas\": {\"path\": \"/n\"}, "
	     "\"minio\": {\"path\": \"minio://b/p\"}},\n"
	     " \"both\": {\"aws\": {\"path\": \"s3://b/p\"}, \"local\": {\"path\": \"/tmp\"}},\n"
	     " \"cust\": {\"local\": {\"path\": \"/tmp\"}, \"custom\": {\"path\": "
	     "\"scripts/common/data/get.sh\", \"args\": \"--x 1\"}},\n"
	     " \"out\": {\"custom\": {\"path\": \"../evil.sh\"}},\n"
	     " \"link\": {\"custom\": {\"path\": \"scripts/evil/sh\"}},\n"
	     " \"mirr\": {\"local\": {\"path\": \"/tmp\", \"mirrorlocal\": \"/tmp\"}},\n"
	     " \"badhome\": {\"local\": {\"path\": \"/tmp\", \"home\": \"rel/x\"}},\n"
	     " \"huggingface\": {}}\n");
	/* network providers are named, with what to do; MAD's {"huggingface": {}} lists none */
	CHECK(rm_data_resolve(&cfg, "net", dir, &plan, &why, &err) == 0 && plan.n == 0);
	CHECK(why && strstr(why, "data 'net': no provider serves it (minio: needs the network "
				 "(MinIO's S3 endpoint)") != NULL);
	CHECK(why && strstr(why, "; nas: needs the network (a NAS over SSH") != NULL);
	CHECK(why && strstr(why, "; aws: needs the network (AWS S3)") != NULL);
	CHECK(why && strstr(why, "mirror the data to a local path") != NULL);
	free(why);
	why = NULL;
	CHECK(rm_data_resolve(&cfg, "huggingface", dir, &plan, &why, &err) == 0 && plan.n == 0);
	CHECK_STR(why, "data 'huggingface': no provider serves it (data.json lists no provider "
		       "for it)");
	free(why);
	why = NULL;
	/* madengine's order: local before aws, whatever the file's order */
	CHECK(rm_data_resolve(&cfg, "both", dir, &plan, &why, &err) == 0);
	CHECK(plan.n == 1 && strcmp(plan.provider_type, "local") == 0);
	rm_data_plan_release(&plan);
	/* custom first; its script runs in the container */
	CHECK(rm_data_resolve(&cfg, "cust", dir, &plan, &why, &err) == 0);
	CHECK(plan.n == 1);
	if (plan.n == 1) {
		CHECK_STR(plan.sources[0].provider, "custom");
		CHECK_STR(plan.sources[0].script, "scripts/common/data/get.sh");
		CHECK_STR(plan.sources[0].script_args, "--x 1");
		CHECK(plan.sources[0].host_path == NULL);
	}
	rm_data_plan_release(&plan);
	/* --force-mirror-local: custom data is kept on the host, read-write */
	rm_data_config_force_mirror_local(&cfg, mirror);
	CHECK(rm_data_resolve(&cfg, "cust", dir, &plan, &why, &err) == 0);
	if (plan.n == 1) {
		char *want = rm_xasprintf("%s/cust", mirror);
		char real[4096];
		CHECK(realpath(mirror, real) != NULL);
		free(want);
		want = rm_xasprintf("%s/cust", real);
		CHECK_STR(plan.sources[0].host_path, want);
		CHECK(plan.sources[0].create_host_path && !plan.sources[0].read_only);
		free(want);
	}
	rm_data_plan_release(&plan);
	/* local never mirrors (madengine's test_local_data_provider_mirrorlocal...) */
	CHECK(rm_data_resolve(&cfg, "both", dir, &plan, &why, &err) == 0);
	CHECK(plan.n == 1 && plan.sources[0].create_host_path == 0);
	rm_data_plan_release(&plan);

	CHECK(rm_data_resolve(&cfg, "out", dir, &plan, &why, &err) < 0);
	CHECK(strstr(err.msg, "'path' ('../evil.sh') leaves the folder") != NULL);
	/* a script reached through a symlink out of the folder (it would be copied into the
	 * container with its folder) */
	char *evil = rm_xasprintf("%s/scripts/evil", dir);
	CHECK(symlink("/bin", evil) == 0);
	CHECK(rm_data_resolve(&cfg, "link", dir, &plan, &why, &err) < 0);
	CHECK(strstr(err.msg, "outside the folder (a symlink)") != NULL);
	unlink(evil);
	free(evil);
	CHECK(rm_data_resolve(&cfg, "mirr", dir, &plan, &why, &err) < 0);
	CHECK(strstr(err.msg, "'mirrorlocal' cannot be given for provider 'local'") != NULL);
	CHECK(rm_data_resolve(&cfg, "badhome", dir, &plan, &why, &err) < 0);
	CHECK(strstr(err.msg, "'home' ('rel/x') must be an absolute container path") != NULL);

	/* the context's "data" replaces an entry */
	json_error_t jerr;
	json_t *over = json_loads("{\"net\": {\"local\": {\"path\": \"/tmp\"}}}", 0, &jerr);
	CHECK(rm_data_config_apply(&cfg, over, "--additional-context", &err) == 0);
	CHECK(rm_data_resolve(&cfg, "net", dir, &plan, &why, &err) == 0);
	rm_data_plan_release(&plan);
	json_decref(over);
	over = json_loads("{\"x\": 1}", 0, &jerr);
	CHECK(rm_data_config_apply(&cfg, over, "--additional-context", &err) < 0);
	CHECK(strstr(err.msg, "data 'x' must be an object of providers") != NULL);
	json_decref(over);
	rm_data_config_release(&cfg);
	free(mirror);
}

TEST(files)
{
	rm_data_config cfg;
	rm_data_plan plan;
	rm_error err = RM_ERROR_INIT;
	char *why = NULL;
	char *path = rm_xasprintf("%s/none.json", dir);

	CHECK(rm_data_config_load(&cfg, path, &err) == 0);
	CHECK(cfg.source == NULL);
	CHECK(rm_data_resolve(&cfg, "x", dir, &plan, &why, &err) < 0);
	CHECK(strstr(err.msg, "there is no data.json in the folder") != NULL);
	rm_data_config_release(&cfg);
	free(path);

	tfs_put(dir, "bad.json", "{\"a\": {\"local\": {\"path\": 1}}}");
	path = rm_xasprintf("%s/bad.json", dir);
	CHECK(rm_data_config_load(&cfg, path, &err) < 0);
	CHECK(strstr(err.msg, "data 'a': provider 'local': 'path' must be a string") != NULL);
	free(path);
	tfs_put(dir, "bad.json", "{\"a\": ");
	path = rm_xasprintf("%s/bad.json", dir);
	CHECK(rm_data_config_load(&cfg, path, &err) < 0);
	CHECK(strstr(err.msg, "fix the JSON syntax") != NULL);
	free(path);

	/* data_size as du -sh prints it */
	char buf[32];
	char *d = rm_xasprintf("%s/sized", dir);
	tfs_mkdirs(d);
	rm_buf big = RM_BUF_INIT((size_t)8 << 20);
	for (int i = 0; i < 3 * 1024 * 1024; i++)
		rm_buf_addch(&big, 'x');
	tfs_put(d, "a.bin", rm_buf_str(&big));
	rm_buf_release(&big);
	CHECK(rm_data_size(d, 1000, 10, buf, sizeof(buf)) == 0);
	CHECK(rm_ends_with(buf, "M") && buf[0] == '3');
	CHECK(rm_data_size(d, 1, 10, buf, sizeof(buf)) < 0 && buf[0] == '\0');
	CHECK(rm_data_size("/nonexistent/x", 10, 10, buf, sizeof(buf)) < 0);
	free(d);
}
