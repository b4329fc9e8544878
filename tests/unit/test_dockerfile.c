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

static char *dir;

/* A context without detection: only what the test applies. */
static void context_with(rm_context *ctx, const char *json)
{
	rm_error err = RM_ERROR_INIT;

	memset(ctx, 0, sizeof(*ctx));
	if (json)
		CHECK(rm_context_apply(ctx, json, "test", &err) == 0);
}

static char *prefix(const char *rel)
{
	return rm_xasprintf("%s/%s", dir, rel);
}

SETUP()
{
	char tmpl[] = "/tmp/rm_test_dockerfile_XXXXXX";
	char *sub;

	dir = rm_xstrdup(mkdtemp(tmpl));
	sub = prefix("docker");
	CHECK(mkdir(sub, 0755) == 0);
	free(sub);
	tfs_put(dir, "docker/smoke.ubuntu.amd.Dockerfile",
		"# CONTEXT {'gpu_vendor': 'AMD', 'guest_os': 'UBUNTU'}\n"
		"ARG BASE_DOCKER=rocm/pytorch:latest\n"
		"FROM $BASE_DOCKER\n"
		"RUN echo hi\n");
	tfs_put(dir, "docker/smoke.ubuntu.nvidia.Dockerfile",
		"# syntax=docker/dockerfile:1\n"
		"#CONTEXT{'gpu_vendor':'NVIDIA'}\n"
		"from --platform=linux/amd64 nvcr.io/nvidia/pytorch:24.01-py3 AS base\n"
		"FROM ubuntu:22.04\n");
	tfs_put(dir, "docker/smoke.Dockerfile", "ARG IMG=ubuntu:22.04\nARG TAG\nFROM ${IMG}\n");
	tfs_put(dir, "docker/other.Dockerfile", "FROM scratch\n");
}

TEARDOWN()
{
	rm_dockerfiles_cache_clear();
	tfs_rm_tree(dir);
	free(dir);
}

TEST(select)
{
	rm_context ctx;
	rm_dockerfile *v = NULL;
	size_t n = 0;
	rm_error err = RM_ERROR_INIT;
	char *pre = prefix("docker/smoke");

	context_with(&ctx, "{\"gpu_vendor\": \"AMD\", \"guest_os\": \"UBUNTU\"}");
	CHECK(rm_dockerfiles_select(pre, &ctx, &v, &n, &err) == 0);
	CHECK(n == 3);
	if (n == 3) {
		char *p = prefix("docker/smoke.Dockerfile");
		CHECK_STR(v[0].path, p);
		free(p);
		CHECK_STR(v[0].stem, "smoke");
		CHECK(v[0].kept);
		CHECK(v[0].why_dropped == NULL);
		CHECK(v[0].context_req == NULL);
		CHECK_STR(v[0].base_image, "ubuntu:22.04");

		CHECK_STR(v[1].stem, "smoke.ubuntu.amd");
		CHECK(v[1].kept);
		CHECK_STR(v[1].base_image, "rocm/pytorch:latest");
		CHECK(json_object_size(v[1].context_req) == 2);

		CHECK_STR(v[2].stem, "smoke.ubuntu.nvidia");
		CHECK(!v[2].kept);
		CHECK_STR(v[2].why_dropped,
			  "CONTEXT gpu_vendor is 'NVIDIA', the context has 'AMD'");
		CHECK_STR(v[2].base_image, "nvcr.io/nvidia/pytorch:24.01-py3");
	}
	rm_dockerfiles_free(v, n);
	rm_context_release(&ctx);

	/* Keys absent from the context do not filter: with no GPU detected, all are kept. */
	context_with(&ctx, NULL);
	CHECK(rm_dockerfiles_select(pre, &ctx, &v, &n, &err) == 0);
	CHECK(n == 3 && v[0].kept && v[1].kept && v[2].kept);
	rm_dockerfiles_free(v, n);
	CHECK(rm_dockerfiles_select(pre, NULL, &v, &n, &err) == 0);
	CHECK(n == 3 && v[2].kept);
	rm_dockerfiles_free(v, n);
	rm_context_release(&ctx);
	free(pre);
	rm_dockerfiles_free(NULL, 0);
}

TEST(none_kept)
{
	rm_context ctx;
	rm_dockerfile *v = NULL;
	size_t n = 0;
	rm_error err = RM_ERROR_INIT;
	char *pre = prefix("docker/smoke.ubuntu");
	char *expect;

	context_with(&ctx, "{\"gpu_vendor\": \"NVIDIA\", \"guest_os\": \"CENTOS\"}");
	/* The NVIDIA file names no guest_os, so it stays. */
	CHECK(rm_dockerfiles_select(pre, &ctx, &v, &n, &err) == 0);
	CHECK(n == 2 && !v[0].kept && v[1].kept);
	if (n == 2)
		CHECK_STR(v[0].why_dropped,
			  "CONTEXT gpu_vendor is 'AMD', the context has 'NVIDIA'; "
			  "CONTEXT guest_os is 'UBUNTU', the context has 'CENTOS'");
	rm_dockerfiles_free(v, n);
	rm_context_release(&ctx);

	CAPTURE_MESSAGES();
	context_with(&ctx, "{'gpu_vendor': 'INTEL'}");
	CHECK_LOGGED("gpu_vendor 'INTEL' is neither 'AMD' nor 'NVIDIA'");
	CHECK(rm_dockerfiles_select(pre, &ctx, &v, &n, &err) < 0);
	CHECK(err.kind == RM_ERR_INPUT);
	/* *out is still filled so the caller can show every candidate. */
	CHECK(n == 2 && v != NULL);
	expect = rm_xasprintf(
	    "no Dockerfile matching '%s.*Dockerfile' fits the context; "
	    "'%s/docker/smoke.ubuntu.amd.Dockerfile': CONTEXT gpu_vendor is 'AMD', the context "
	    "has 'INTEL'; '%s/docker/smoke.ubuntu.nvidia.Dockerfile': CONTEXT gpu_vendor is "
	    "'NVIDIA', the context has 'INTEL'; change the context with --additional-context "
	    "(e.g. '{\"gpu_vendor\": \"AMD\"}')",
	    pre, dir, dir);
	CHECK_STR(err.msg, expect);
	free(expect);
	rm_dockerfiles_free(v, n);
	rm_context_release(&ctx);
	free(pre);

	/* No candidate at all. */
	pre = prefix("docker/nothing");
	CHECK(rm_dockerfiles_select(pre, NULL, &v, &n, &err) < 0);
	CHECK(v == NULL && n == 0);
	expect = rm_xasprintf("no Dockerfile for '%s' (model field 'dockerfile'): MAD's rule takes "
			      "'%s.Dockerfile' or '%s.<os>.<vendor>.Dockerfile', each part one "
			      "word without dots",
			      pre, pre, pre);
	CHECK_STR(err.msg, expect);
	free(expect);
	free(pre);
}

TEST(context_lines)
{
	rm_context ctx;
	rm_dockerfile *v = NULL;
	size_t n = 0;
	rm_error err = RM_ERROR_INIT;
	char *pre, *expect;

	/* Numbers compare by their text; the CONTEXT line counts only in the first 5 lines. */
	tfs_put(dir, "docker/num.Dockerfile", "# CONTEXT {'MAD_SYSTEM_NGPUS': 8}\nFROM a\n");
	tfs_put(dir, "docker/num.late.Dockerfile",
		"\n\n\n\n\n# CONTEXT {'gpu_vendor': 'NVIDIA'}\nFROM b\n");
	context_with(&ctx, "{\"gpu_vendor\": \"AMD\", \"MAD_SYSTEM_NGPUS\": 8}");
	pre = prefix("docker/num");
	CHECK(rm_dockerfiles_select(pre, &ctx, &v, &n, &err) == 0);
	CHECK(n == 2 && v[0].kept && v[1].kept);
	if (n == 2) {
		CHECK(v[1].context_req == NULL);
		CHECK_STR(v[1].base_image, "b");
	}
	rm_dockerfiles_free(v, n);
	CHECK(rm_context_apply(&ctx, "{\"MAD_SYSTEM_NGPUS\": \"4\"}", "test", &err) == 0);
	CHECK(rm_dockerfiles_select(pre, &ctx, &v, &n, &err) == 0);
	CHECK(n == 2 && !v[0].kept && v[1].kept);
	if (n == 2)
		CHECK_STR(v[0].why_dropped, "CONTEXT MAD_SYSTEM_NGPUS is '8', the context has '4'");
	rm_dockerfiles_free(v, n);
	rm_context_release(&ctx);
	free(pre);

	/* A malformed CONTEXT line names the file and the line. */
	tfs_put(dir, "docker/broken.Dockerfile", "FROM x\n# CONTEXT {'gpu_vendor': }\n");
	pre = prefix("docker/broken");
	CHECK(rm_dockerfiles_select(pre, NULL, &v, &n, &err) < 0);
	CHECK(v == NULL && n == 0);
	expect =
	    rm_xasprintf("'%s/docker/broken.Dockerfile' line 2: malformed CONTEXT line: python "
			 "dict literal, column ",
			 dir);
	CHECK(rm_starts_with(err.msg, expect));
	free(expect);
	free(pre);

	tfs_put(dir, "docker/nested.Dockerfile", "# CONTEXT {'gpu_vendor': ['AMD']}\n");
	pre = prefix("docker/nested");
	CHECK(rm_dockerfiles_select(pre, NULL, &v, &n, &err) < 0);
	CHECK(strstr(err.msg, "line 1: CONTEXT value of 'gpu_vendor' must be a string") != NULL);
	free(pre);

	/* Base images: ARG default wins, variables with defaults, unresolved ones kept. */
	tfs_put(dir, "docker/base.1.Dockerfile",
		"ARG BASE_DOCKER=\"quoted/img:2\"\nFROM $BASE_DOCKER\nFROM first:1\n");
	tfs_put(dir, "docker/base.2.Dockerfile",
		"ARG BASE_DOCKER\nFROM ${BASE_DOCKER:-fallback:3}\n");
	tfs_put(dir, "docker/base.3.Dockerfile", "ARG BASE_DOCKER\nFROM ${BASE_DOCKER}\n");
	tfs_put(dir, "docker/base.4.Dockerfile", "RUN true\n");
	tfs_put(dir, "docker/base.5.Dockerfile", "ARG R=reg.io\nFROM $R/img:${V:-7} AS x\n");
	pre = prefix("docker/base");
	CHECK(rm_dockerfiles_select(pre, NULL, &v, &n, &err) == 0);
	CHECK(n == 5);
	if (n == 5) {
		CHECK_STR(v[0].base_image, "quoted/img:2");
		CHECK_STR(v[1].base_image, "fallback:3");
		CHECK_STR(v[2].base_image, "${BASE_DOCKER}");
		CHECK(v[3].base_image == NULL);
		CHECK_STR(v[4].base_image, "reg.io/img:7");
		CHECK_STR(v[4].stem, "base.5");
	}
	rm_dockerfiles_free(v, n);

	/* docker_build_arg overrides the ARGs a file declares (madengine's BASE_DOCKER
	 * override), and only those. */
	context_with(&ctx, "{\"docker_build_arg\": {\"BASE_DOCKER\": \"rocm/tensorflow\", \"R\": "
			   "\"other.io\", \"V\": \"9\"}}");
	CHECK(rm_dockerfiles_select(pre, &ctx, &v, &n, &err) == 0);
	CHECK(n == 5);
	if (n == 5) {
		CHECK_STR(v[0].base_image, "rocm/tensorflow");
		CHECK_STR(v[1].base_image, "rocm/tensorflow");
		CHECK_STR(v[2].base_image, "rocm/tensorflow");
		CHECK(v[3].base_image == NULL);
		CHECK_STR(v[4].base_image, "other.io/img:7"); /* V is not declared */
	}
	rm_dockerfiles_free(v, n);
	rm_context_release(&ctx);
	free(pre);
}

/* madengine's glob: `ls <prefix>.*`, a literal dot. */
TEST(literal_dot)
{
	rm_dockerfile *v = NULL;
	size_t n = 0;
	rm_error err = RM_ERROR_INIT;
	char *pre, *expect;
	const char *files[] = {"dummy.Dockerfile",
			       "dummy.ubuntu.amd.Dockerfile",
			       "dummy.ubuntu.nvidia.Dockerfile",
			       "dummy2.ubuntu.amd.Dockerfile",
			       "dummy_sglang.ubuntu.amd.Dockerfile",
			       "dummy_sglang_disagg.ubuntu.amd.Dockerfile",
			       "dummyDockerfile",
			       "dummy.md",
			       "dummy.Dockerfile.bak"};

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *rel = rm_xasprintf("dot/%s", files[i]);
		tfs_put(dir, rel, "FROM scratch\n");
		free(rel);
	}
	pre = prefix("dot/dummy");
	CHECK(rm_dockerfiles_select(pre, NULL, &v, &n, &err) == 0);
	CHECK(n == 3);
	if (n == 3) {
		CHECK_STR(v[0].stem, "dummy");
		CHECK_STR(v[1].stem, "dummy.ubuntu.amd");
		CHECK_STR(v[2].stem, "dummy.ubuntu.nvidia");
	}
	rm_dockerfiles_free(v, n);
	free(pre);
	pre = prefix("dot/dummy_sglang");
	CHECK(rm_dockerfiles_select(pre, NULL, &v, &n, &err) == 0);
	CHECK(n == 1 && strcmp(v[0].stem, "dummy_sglang.ubuntu.amd") == 0);
	rm_dockerfiles_free(v, n);
	free(pre);

	/* The cache sees an added file and an edited one (once its second of trust is over). */
	pre = prefix("dot/dummy2");
	CHECK(rm_dockerfiles_select(pre, NULL, &v, &n, &err) == 0);
	CHECK(n == 1 && strcmp(v[0].base_image, "scratch") == 0);
	rm_dockerfiles_free(v, n);
	tfs_put(dir, "dot/dummy2.ubuntu.nvidia.Dockerfile", "FROM nv\n");
	usleep(1100 * 1000);
	tfs_put(dir, "dot/dummy2.ubuntu.amd.Dockerfile",
		"# CONTEXT {'gpu_vendor': 'AMD'}\nFROM amd:2\n");
	CHECK(rm_dockerfiles_select(pre, NULL, &v, &n, &err) == 0);
	CHECK(n == 2);
	if (n == 2) {
		CHECK_STR(v[0].base_image, "amd:2");
		CHECK(v[0].context_req != NULL);
		CHECK_STR(v[1].base_image, "nv");
	}
	rm_dockerfiles_free(v, n);
	free(pre);

	/* A folder among the candidates is an error naming it. */
	expect = rm_xasprintf("%s/dot/dir.x.Dockerfile", dir);
	tfs_mkdirs(expect);
	pre = prefix("dot/dir");
	CHECK(rm_dockerfiles_select(pre, NULL, &v, &n, &err) < 0);
	CHECK(strstr(err.msg, "is a folder") != NULL && strstr(err.msg, expect) != NULL);
	free(expect);
	free(pre);
}

TEST(image_name)
{
	struct {
		const char *model, *stem, *want;
	} cases[] = {
	    {"pyt_mpt30b_training", "pyt_mpt30b_training.ubuntu.amd",
	     "ci-pyt_mpt30b_training_pyt_mpt30b_training.ubuntu.amd"},
	    {"llm/Pyt_X", "a b", "ci-llm_pyt_x_a_b"},
	    {"my.dir/pyt_a", "s", "ci-my.dir_pyt_a_s"},
	    {"dummy2/model2", "dummy.ubuntu.amd", "ci-dummy2_model2_dummy.ubuntu.amd"},
	    {"dummy", "dummy.ubuntu.amd", "ci-dummy_dummy.ubuntu.amd"},
	    {"pyt_a", "..weird--", "ci-pyt_a_weird"},
	    {"a___b", "x", "ci-a_b_x"},
	    {"a__b", "x", "ci-a__b_x"},
	    {"a--b", "X:Y@Z", "ci-a--b_x_y_z"},
	    {"", "", "ci"},
	    {"é", "", "ci"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = rm_image_name(cases[i].model, cases[i].stem);
		CHECK_STR(got, cases[i].want);
		free(got);
	}
	char *got = rm_image_name("/x//y/", "");
	CHECK(strchr(got, '/') == NULL);
	CHECK_STR(got, "ci_x__y");
	free(got);

	rm_buf long_name = RM_BUF_INIT(1 << 16);
	for (int i = 0; i < 300; i++)
		rm_buf_addstr(&long_name, "a.");
	got = rm_image_name(rm_buf_str(&long_name), "stem");
	CHECK(strlen(got) <= 255);
	CHECK(got[strlen(got) - 1] != '.');
	free(got);
	rm_buf_release(&long_name);
}

/* MAD's documented rule (issue 30): <prefix>.Dockerfile or <prefix>.<os>.<vendor>.Dockerfile
 * (an older <prefix>.<os>.Dockerfile too), each part one word; a name with more parts belongs
 * to the prefix that names them. The names are today's ROCm/MAD docker/ folder's. */
static size_t kept_count(const rm_dockerfile *v, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += v[i].kept != 0;
	return k;
}

TEST(mads_rule)
{
	rm_dockerfile *v = NULL;
	size_t n = 0;
	rm_error err = RM_ERROR_INIT;
	char *pre;

	tfs_put(dir, "docker/vllm_disagg_inference.ubuntu.amd.Dockerfile", "FROM a\n");
	tfs_put(dir, "docker/vllm_disagg_inference.dsv4.ubuntu.amd.Dockerfile", "FROM a\n");
	tfs_put(dir, "docker/vllm_disagg_inference.glm53flash.overlay.amd.Dockerfile", "FROM a\n");
	tfs_put(dir, "docker/vllm_disagg_inference.glmv5.1.ubuntu.amd.Dockerfile", "FROM a\n");
	tfs_put(dir, "docker/sgl_overlay.ubuntu.amd.Dockerfile", "FROM a\n");
	tfs_put(dir, "docker/sgl_overlay.oci-rdma62.ubuntu.amd.Dockerfile", "FROM a\n");
	tfs_put(dir, "docker/old.centos.Dockerfile", "FROM a\n");
	tfs_put(dir, "docker/old.Dockerfile", "FROM a\n");
	tfs_put(dir, "docker/old.x.y.z.Dockerfile", "FROM a\n");

	pre = prefix("docker/vllm_disagg_inference");
	CHECK(rm_dockerfiles_select(pre, NULL, &v, &n, &err) == 0);
	/* the one it builds, then the three the loose glob would add, dropped with why */
	CHECK(n == 4 && rm_ends_with(v[0].path, "/vllm_disagg_inference.ubuntu.amd.Dockerfile") &&
	      v[0].kept);
	CHECK(kept_count(v, n) == 1);
	CHECK(n == 4 && !v[1].kept && strstr(v[1].why_dropped, "by MAD's rule"));
	rm_dockerfiles_free(v, n);
	free(pre);
	/* the prefix with dots in it takes its own */
	pre = prefix("docker/vllm_disagg_inference.glmv5.1");
	CHECK(rm_dockerfiles_select(pre, NULL, &v, &n, &err) == 0);
	CHECK(n == 1 &&
	      rm_ends_with(v[0].path, "/vllm_disagg_inference.glmv5.1.ubuntu.amd.Dockerfile"));
	rm_dockerfiles_free(v, n);
	free(pre);
	pre = prefix("docker/sgl_overlay");
	CHECK(rm_dockerfiles_select(pre, NULL, &v, &n, &err) == 0);
	CHECK(kept_count(v, n) == 1 &&
	      rm_ends_with(v[0].path, "/sgl_overlay.ubuntu.amd.Dockerfile"));
	rm_dockerfiles_free(v, n);
	free(pre);
	pre = prefix("docker/old");
	CHECK(rm_dockerfiles_select(pre, NULL, &v, &n, &err) == 0);
	CHECK(kept_count(v, n) == 2 && rm_ends_with(v[0].path, "/old.Dockerfile") &&
	      rm_ends_with(v[1].path, "/old.centos.Dockerfile"));
	rm_dockerfiles_free(v, n);
	free(pre);
	/* none follows the rule: madengine's glob (its fixture's dummy_ctxtest.ctx1.ubuntu.amd) */
	tfs_put(dir, "docker/ctx3.ctx1.ubuntu.amd.Dockerfile", "FROM a\n");
	tfs_put(dir, "docker/ctx3.ctx2.ubuntu.amd.Dockerfile", "FROM a\n");
	pre = prefix("docker/ctx3");
	CHECK(rm_dockerfiles_select(pre, NULL, &v, &n, &err) == 0);
	CHECK(n == 2 && kept_count(v, n) == 2);
	rm_dockerfiles_free(v, n);
	free(pre);
}
