/* nftw() is an XSI function. */
#define _XOPEN_SOURCE 700

#include <ftw.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "testfs.h"
#include "rm/util.h"
#include "rm/registry.h"

/* A complete entry; tests splice in their own fields. */
#define ENTRY(name, extra)                                                                         \
	"{\"name\": \"" name                                                                       \
	"\", \"dockerfile\": \"./docker/x\", \"scripts\": \"scripts/x/run.sh\", "                  \
	"\"n_gpus\": \"-1\", \"owner\": \"me@example.com\", \"tags\": [\"pyt\"], \"args\": "       \
	"\"\"" extra "}"

static int load(rm_registry *reg, const char *text, const char *source, rm_error *err)
{
	return rm_registry_load_buffer(reg, text, strlen(text), source, NULL, ".", err);
}

static void make_dir(const char *dir, const char *rel)
{
	char *path = rm_xasprintf("%s/%s", dir, rel);

	CHECK(mkdir(path, 0755) == 0);
	free(path);
}

TEST(good)
{
	rm_registry reg = {0};
	rm_error err = RM_ERROR_INIT;
	const char *text =
	    "[\n"
	    "  {\"name\": \"pyt_mpt30b_training\", \"dockerfile\": "
	    "\"./docker/pyt_mpt30b_training\",\n"
	    "   \"scripts\": \"scripts/pyt_mpt30b_training/run.sh\", \"n_gpus\": \"-1\",\n"
	    "   \"owner\": \"mad.support@amd.com\", \"tags\": [\"training\", \"pyt\"],\n"
	    "   \"args\": \"--model_repo mosaicml/mpt-30b\", \"url\": \"\", \"timeout\": 7200,\n"
	    "   \"training_precision\": \"fp16\", \"env_vars\": {\"A\": \"1\"},\n"
	    "   \"tunableop\": \"off\", \"cred\": \"x\", \"deprecated\": false,\n"
	    "   \"skip_gpu_arch\": [\"gfx90a\", \"gfx908\"]},\n"
	    "  {\"name\": \"pyt_small_1.0\", \"dockerfile\": \"docker/../docker/small\",\n"
	    "   \"scripts\": \"scripts/small\", \"n_gpus\": 8, \"owner\": \"\", \"tags\": [],\n"
	    "   \"args\": \"\", \"parser\": \"megatron\", \"dockercontext\": \"./ctx/\",\n"
	    "   \"url\": \"https://github.com/x/y\", \"multiple_results\": \"perf.csv\"}\n"
	    "]\n";
	unsigned warns = rm_warn_count();

	CHECK(load(&reg, text, "models.json", &err) == 0);
	CHECK(rm_warn_count() == warns); /* cred and deprecated are known MAD fields */
	CHECK(reg.n == 2);
	if (reg.n != 2)
		goto out;
	const rm_model *m = &reg.models[0];
	CHECK_STR(m->name, "pyt_mpt30b_training");
	CHECK_STR(m->short_name, "pyt_mpt30b_training");
	CHECK(m->scope == NULL);
	CHECK_STR(m->source, "models.json");
	CHECK_STR(m->dockerfile, "docker/pyt_mpt30b_training");
	CHECK_STR(m->scripts, "scripts/pyt_mpt30b_training/run.sh");
	CHECK(m->n_gpus == -1);
	CHECK_STR(m->owner, "mad.support@amd.com");
	CHECK(m->n_tags == 2);
	CHECK_STR(m->tags[0], "training");
	CHECK_STR(m->tags[1], "pyt");
	CHECK(m->tags[2] == NULL);
	CHECK_STR(m->args, "--model_repo mosaicml/mpt-30b");
	CHECK(m->url == NULL); /* "" means no repository */
	CHECK(m->data == NULL);
	CHECK(m->timeout == 7200);
	CHECK_STR(m->training_precision, "fp16");
	CHECK_STR(m->skip_gpu_arch, "gfx90a,gfx908");
	CHECK_STR(m->dockercontext, "docker");
	CHECK(m->n_env_vars == 1);
	CHECK_STR(m->env_vars[0], "A=1");
	CHECK(m->env_vars[1] == NULL);
	CHECK_STR(m->parser, "generic");
	CHECK(m->tunableop == RM_TUNABLEOP_OFF);

	m = &reg.models[1];
	CHECK_STR(m->name, "pyt_small_1.0");
	CHECK_STR(m->dockerfile, "docker/small");
	CHECK_STR(m->scripts, "scripts/small");
	CHECK(m->n_gpus == 8);
	CHECK(m->n_tags == 0 && m->tags && m->tags[0] == NULL);
	CHECK(m->env_vars && m->env_vars[0] == NULL);
	CHECK_STR(m->parser, "megatron");
	CHECK_STR(m->dockercontext, "ctx/");
	CHECK_STR(m->url, "https://github.com/x/y");
	CHECK_STR(m->multiple_results, "perf.csv");
	CHECK(m->tunableop == RM_TUNABLEOP_UNSET);
	CHECK(m->timeout == 0);

	CHECK(rm_registry_find(&reg, "pyt_small_1.0") == &reg.models[1]);
	CHECK(rm_registry_find(&reg, "nope") == NULL);
out:
	rm_registry_release(&reg);
	CHECK(reg.n == 0 && reg.models == NULL);
	rm_registry_release(&reg);
	rm_registry_release(NULL);
}

TEST(syntax)
{
	rm_registry reg = {0};
	rm_error err = RM_ERROR_INIT;

	CHECK(load(&reg, "[\n  " ENTRY("pyt_a", "") ",\n]\n", "models.json", &err) < 0);
	CHECK(err.kind == RM_ERR_INPUT);
	CHECK(rm_starts_with(err.msg, "'models.json' line 3 column 1: "));
	CHECK(strstr(err.msg, "fix the JSON syntax") != NULL);
	CHECK(reg.n == 0);

	CHECK(load(&reg, "[{\"name\": \"pyt_a\", \"name\": \"pyt_b\"}]", "m.json", &err) < 0);
	CHECK(strstr(err.msg, "duplicate") != NULL);

	CHECK(load(&reg, "{\"name\": \"pyt_a\"}", "m.json", &err) < 0);
	CHECK(strstr(err.msg, "'m.json': the top level must be an array") != NULL);

	CHECK(load(&reg, "[1]", "m.json", &err) < 0);
	CHECK_STR(err.msg, "'m.json': entry 1 must be an object with the model's fields");
	rm_registry_release(&reg);
}

TEST(build_secrets)
{
	rm_registry reg = {0};
	rm_error err = RM_ERROR_INIT;

	CHECK(load(&reg, "[" ENTRY("pyt_a", ", \"build_secrets\": [\"MAD_SECRETS_HF\"]") "]",
		   "models.json", &err) == 0);
	CHECK(reg.n == 1 && reg.models[0].n_build_secrets == 1);
	CHECK_STR(reg.models[0].build_secrets[0], "MAD_SECRETS_HF");
	rm_registry_release(&reg);
	/* only MAD_SECRETS* names: anything else would be a plain build arg in disguise */
	CHECK(load(&reg, "[" ENTRY("pyt_b", ", \"build_secrets\": [\"HOME\"]") "]", "models.json",
		   &err) < 0);
	CHECK(strstr(err.msg, "field 'build_secrets' must be an array of MAD_SECRETS* variable "
			      "names") != NULL);
	rm_registry_release(&reg);
}

TEST(fields)
{
	rm_registry reg = {0};
	rm_error err = RM_ERROR_INIT;

	CHECK(load(&reg,
		   "[{\"name\": \"pyt_a\", \"dockerfile\": \"d\", \"scripts\": \"s\", \"n_gpus\": "
		   "\"1\", \"tags\": [], \"args\": \"\"}]",
		   "models.json", &err) < 0);
	CHECK_STR(err.msg,
		  "'models.json': model 'pyt_a' (entry 1): field 'owner' must be a string");

	CHECK(load(&reg, "[" ENTRY("pyt_a", ", \"tags\": \"pyt\"") "]", "models.json", &err) < 0);
	/* jansson rejects the duplicate "tags" first: build the wrong type another way. */
	CHECK(load(&reg,
		   "[{\"name\": \"pyt_a\", \"dockerfile\": \"d\", \"scripts\": \"s\", \"n_gpus\": "
		   "\"1\", \"owner\": \"o\", \"tags\": \"pyt\", \"args\": \"\"}]",
		   "models.json", &err) < 0);
	CHECK_STR(err.msg,
		  "'models.json': model 'pyt_a' (entry 1): field 'tags' must be an array of "
		  "strings");

	CHECK(load(&reg,
		   "[{\"name\": \"pyt_a\", \"dockerfile\": \"d\", \"scripts\": \"s\", \"n_gpus\": "
		   "\"1\", \"owner\": \"o\", \"tags\": [\"a\", 1], \"args\": \"\"}]",
		   "models.json", &err) < 0);
	CHECK(strstr(err.msg, "field 'tags' must be an array of strings") != NULL);

	CHECK(load(&reg,
		   "[{\"name\": \"pyt_a\", \"dockerfile\": \"\", \"scripts\": \"s\", \"n_gpus\": "
		   "\"1\", \"owner\": \"o\", \"tags\": [], \"args\": \"\"}]",
		   "models.json", &err) < 0);
	CHECK(strstr(err.msg, "field 'dockerfile' must be a non-empty string") != NULL);

	const char *bad_gpus[] = {"\"-2\"", "\"abc\"", "\"\"", "1.5", "-3", "null"};
	for (size_t i = 0; i < sizeof(bad_gpus) / sizeof(bad_gpus[0]); i++) {
		char *t = rm_xasprintf("[{\"name\": \"pyt_a\", \"dockerfile\": \"d\", \"scripts\": "
				       "\"s\", \"n_gpus\": %s, \"owner\": \"o\", \"tags\": [], "
				       "\"args\": \"\"}]",
				       bad_gpus[i]);
		CHECK(load(&reg, t, "models.json", &err) < 0);
		CHECK(strstr(err.msg, "field 'n_gpus' must be \"-1\"") != NULL);
		free(t);
	}

	CHECK(load(&reg, "[" ENTRY("pyt_a", ", \"timeout\": \"60\"") "]", "models.json", &err) < 0);
	CHECK(strstr(err.msg, "field 'timeout' must be a number") != NULL);
	CHECK(load(&reg, "[" ENTRY("pyt_a", ", \"tunableop\": \"maybe\"") "]", "models.json",
		   &err) < 0);
	CHECK(strstr(err.msg, "field 'tunableop' must be \"on\" or \"off\"") != NULL);
	CHECK(load(&reg, "[" ENTRY("pyt_a", ", \"env_vars\": {\"A\": 1}") "]", "models.json",
		   &err) < 0);
	CHECK(strstr(err.msg, "field 'env_vars' must be an object of strings") != NULL);
	CHECK(load(&reg, "[" ENTRY("pyt_a", ", \"url\": 5") "]", "models.json", &err) < 0);
	CHECK_STR(err.msg, "'models.json': model 'pyt_a' (entry 1): field 'url' must be a string");
	CHECK(reg.n == 0);
	rm_registry_release(&reg);
}

TEST(names)
{
	rm_registry reg = {0};
	rm_error err = RM_ERROR_INIT;
	/* Only what breaks selection or file names is refused. */
	const char *bad[] = {"pyt a_b", "a,b", "a:b", "tab\\tx", "nl\\nx", "del\\u007fx"};
	const char *why[] = {"holds a blank",
			     "holds ','",
			     "holds ':'",
			     "holds a control character",
			     "holds a control character",
			     "holds a control character"};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *t = rm_xasprintf("[" ENTRY("pyt_ok", "") ", {\"name\": \"%s\"}]", bad[i]);
		CHECK(load(&reg, t, "models.json", &err) < 0);
		CHECK(rm_starts_with(err.msg, "'models.json': entry 2: name '"));
		CHECK(strstr(err.msg, why[i]) != NULL);
		CHECK(strstr(err.msg, "model names may hold anything but ',', ':', blanks") !=
		      NULL);
		free(t);
	}
	CHECK(load(&reg, "[{\"tags\": []}]", "models.json", &err) < 0);
	CHECK_STR(err.msg, "'models.json': entry 1: field 'name' must be a non-empty string");
	CHECK(load(&reg, "[{\"name\": \"\"}]", "models.json", &err) < 0);
	CHECK_STR(err.msg, "'models.json': entry 1: field 'name' must be a non-empty string");

	/* Names real MAD and madengine registries hold, and a few odd but harmless ones. */
	const char *good[] = {"dummy",
			      "dummy2",
			      "pyt_huggingface_gpt2",
			      "Pyt_A",
			      "pyt_vllm_llama-3.1-8b_fp8",
			      "_x",
			      "1",
			      "a/b",
			      "ünï"};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		char *t = rm_xasprintf("[{\"name\": \"%s\", \"dockerfile\": \"d\", \"scripts\": "
				       "\"s\", \"n_gpus\": \"0\", \"owner\": \"o\", \"tags\": [], "
				       "\"args\": \"\"}]",
				       good[i]);
		CHECK(load(&reg, t, "models.json", &err) == 0);
		free(t);
	}
	CHECK(reg.n == sizeof(good) / sizeof(good[0]));
	CHECK(rm_registry_find(&reg, "dummy2") == &reg.models[1]);
	CHECK(rm_registry_find(&reg, "a/b") == &reg.models[7]);
	rm_registry_release(&reg);
}

/* Paths that leave the folder and numbers out of range are refused naming the field. */
TEST(hostile)
{
	rm_registry reg = {0};
	rm_error err = RM_ERROR_INIT;
	struct {
		const char *extra, *field;
	} cases[] = {
	    {", \"dockercontext\": \"../../etc\"", "dockercontext"},
	    {", \"dockercontext\": \"/etc\"", "dockercontext"},
	    {", \"multiple_results\": \"/etc/passwd\"", "multiple_results"},
	    {", \"multiple_results\": \"a/../../x.csv\"", "multiple_results"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *t = rm_xasprintf("[" ENTRY("pyt_a", "%s") "]", cases[i].extra);
		char *want = rm_xasprintf("field '%s' (", cases[i].field);
		CHECK(load(&reg, t, "models.json", &err) < 0);
		CHECK(strstr(err.msg, want) != NULL);
		CHECK(strstr(err.msg, "leaves the folder that holds models.json") != NULL);
		free(want);
		free(t);
	}
	const char *paths[][2] = {{"dockerfile", "../docker/x"},
				  {"dockerfile", "/docker/x"},
				  {"scripts", "../../etc/passwd"},
				  {"scripts", "/bin/sh"},
				  {"scripts", "scripts/../../x.sh"}};
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		char *t = rm_xasprintf(
		    "[{\"name\": \"pyt_a\", \"dockerfile\": \"%s\", \"scripts\": \"%s\", "
		    "\"n_gpus\": \"0\", \"owner\": \"o\", \"tags\": [], \"args\": \"\"}]",
		    strcmp(paths[i][0], "dockerfile") ? "docker/x" : paths[i][1],
		    strcmp(paths[i][0], "scripts") ? "s/run.sh" : paths[i][1]);
		char *want = rm_xasprintf("model 'pyt_a' (entry 1): field '%s' ('%s') leaves",
					  paths[i][0], paths[i][1]);
		CHECK(load(&reg, t, "models.json", &err) < 0);
		CHECK(strstr(err.msg, want) != NULL);
		free(want);
		free(t);
	}
	/* A per-folder registry may climb back to the root (madengine's dummy2 does). */
	const char *up = "[{\"name\": \"m\", \"dockerfile\": \"../../docker/dummy\", \"scripts\": "
			 "\"run.sh\", \"n_gpus\": \"1\", \"owner\": \"o\", \"tags\": [], "
			 "\"args\": \"\"}]";
	CHECK(rm_registry_load_buffer(&reg, up, strlen(up), "scripts/d2/models.json", "d2",
				      "scripts/d2", &err) == 0);
	CHECK(reg.n == 1 && strcmp(reg.models[0].dockerfile, "docker/dummy") == 0);
	rm_registry_release(&reg);
	const char *up3 = "[{\"name\": \"m\", \"dockerfile\": \"../../../docker/dummy\", "
			  "\"scripts\": \"run.sh\", \"n_gpus\": \"1\", \"owner\": \"o\", \"tags\": "
			  "[], \"args\": \"\"}]";
	CHECK(rm_registry_load_buffer(&reg, up3, strlen(up3), "scripts/d2/models.json", "d2",
				      "scripts/d2", &err) < 0);
	CHECK(strstr(err.msg, "field 'dockerfile' ('../../../docker/dummy') leaves") != NULL);

	/* Numbers. */
	const char *bad_timeouts[] = {"-31536001", "31536001", "1e300", "-1e300"};
	for (size_t i = 0; i < sizeof(bad_timeouts) / sizeof(bad_timeouts[0]); i++) {
		char *t =
		    rm_xasprintf("[" ENTRY("pyt_a", ", \"timeout\": %s") "]", bad_timeouts[i]);
		CHECK(load(&reg, t, "models.json", &err) < 0);
		CHECK(strstr(err.msg, "field 'timeout' must be a number of seconds up to "
				      "31536000") != NULL);
		free(t);
	}
	/* MAD's -1 (any negative) is no time limit, stored as -1; so is 0, as MAD's docs say
	 * (issue 30). */
	CHECK(
	    load(&reg,
		 "[" ENTRY("pyt_a", ", \"timeout\": -1") "," ENTRY(
		     "pyt_b",
		     ", \"timeout\": 0") "," ENTRY("pyt_c",
						   ", \"timeout\": 0.5") "," ENTRY("pyt_d",
										   ", \"timeout\": "
										   "-2.5") "]",
		 "models.json", &err) == 0);
	CHECK(reg.n == 4 && reg.models[0].timeout == -1 && reg.models[1].timeout == -1 &&
	      reg.models[2].timeout == 0.5 && reg.models[3].timeout == -1);
	rm_registry_release(&reg);
	CHECK(load(&reg,
		   "[{\"name\": \"pyt_a\", \"dockerfile\": \"d\", \"scripts\": \"s\", \"n_gpus\": "
		   "65537, \"owner\": \"o\", \"tags\": [], \"args\": \"\"}]",
		   "models.json", &err) < 0);
	CHECK(strstr(err.msg, "field 'n_gpus' must be") != NULL);
	/* data names a data.json entry. */
	const char *bad_data[] = {"/data/x", "../x", "a/b"};
	for (size_t i = 0; i < sizeof(bad_data) / sizeof(bad_data[0]); i++) {
		char *t = rm_xasprintf("[" ENTRY("pyt_a", ", \"data\": \"%s\"") "]", bad_data[i]);
		CHECK(load(&reg, t, "models.json", &err) < 0);
		CHECK(strstr(err.msg, "field 'data' must be the name of a data.json entry") !=
		      NULL);
		free(t);
	}
	CHECK(load(&reg, "[" ENTRY("pyt_a", ", \"data\": \"imagenet,coco\"") "]", "models.json",
		   &err) == 0);
	rm_registry_release(&reg);
}

/* A large registry with a late duplicate, and the index after a rollback. That the loader
 * is linear (a quadratic one took minutes at this size under sanitizers) is a matter of
 * speed: tools/bench-registry.sh measures it (10,000 and 130,000 models, the cost per model
 * of the two compared). */
TEST(scale)
{
	rm_registry reg = {0};
	rm_error err = RM_ERROR_INIT;
	rm_buf b = RM_BUF_INIT((size_t)64 << 20);
	size_t n = 20000;

	rm_buf_addch(&b, '[');
	for (size_t i = 0; i < n; i++)
		rm_buf_addf(&b,
			    "%s{\"name\": \"m%zu\", \"dockerfile\": \"docker/x\", \"scripts\": "
			    "\"s/run.sh\", \"n_gpus\": \"1\", \"owner\": \"o\", \"tags\": [\"t\"], "
			    "\"args\": \"\"}",
			    i ? ",\n" : "", i);
	rm_buf_addch(&b, ']');
	CHECK(load(&reg, rm_buf_str(&b), "models.json", &err) == 0);
	CHECK(reg.n == n);
	CHECK(rm_registry_find(&reg, "m19999") == &reg.models[19999]);
	CHECK(rm_registry_find(&reg, "m20000") == NULL);
	/* a second file with a duplicate at its end rolls back and keeps the index right */
	const char *more = "[" ENTRY("x1", "") "," ENTRY("m7", "") "]";
	CHECK(load(&reg, more, "two.json", &err) < 0);
	CHECK_STR(err.msg,
		  "model 'm7' is defined in both 'models.json' and 'two.json'; rename one");
	CHECK(reg.n == n);
	CHECK(rm_registry_find(&reg, "x1") == NULL);
	CHECK(rm_registry_find(&reg, "m7") == &reg.models[7]);
	CHECK(load(&reg, "[" ENTRY("x1", "") "]", "three.json", &err) == 0);
	CHECK(rm_registry_find(&reg, "x1") == &reg.models[n]);
	rm_buf_release(&b);
	rm_registry_release(&reg);
}

TEST(duplicates_and_rollback)
{
	rm_registry reg = {0};
	rm_error err = RM_ERROR_INIT;

	CHECK(load(&reg, "[" ENTRY("pyt_a", "") "," ENTRY("pyt_b", "") "," ENTRY("pyt_a", "") "]",
		   "models.json", &err) < 0);
	CHECK_STR(err.msg,
		  "'models.json': model 'pyt_a' is defined twice (entries 1 and 3); remove "
		  "or rename one");
	CHECK(reg.n == 0);

	CHECK(load(&reg, "[" ENTRY("pyt_a", "") "]", "one/models.json", &err) == 0);
	CHECK(load(&reg, "[" ENTRY("pyt_b", "") "," ENTRY("pyt_a", "") "]", "two/models.json",
		   &err) < 0);
	CHECK_STR(err.msg, "model 'pyt_a' is defined in both 'one/models.json' and "
			   "'two/models.json'; rename one");
	/* The failed file leaves the registry as it was. */
	CHECK(reg.n == 1);
	CHECK_STR(reg.models[0].source, "one/models.json");

	/* The same short name in another scope is a different model. */
	CHECK(rm_registry_load_buffer(&reg, "[" ENTRY("pyt_a", "") "]",
				      strlen("[" ENTRY("pyt_a", "") "]"), "scripts/llm/models.json",
				      "llm", "scripts/llm", &err) == 0);
	CHECK(reg.n == 2);
	CHECK_STR(reg.models[1].name, "llm/pyt_a");
	rm_registry_release(&reg);
}

TEST(unknown_field)
{
	rm_registry reg = {0};
	rm_error err = RM_ERROR_INIT;
	unsigned warns = rm_warn_count();

	CAPTURE_MESSAGES();
	CHECK(load(&reg, "[" ENTRY("pyt_a", ", \"colour\": \"red\", \"nnodes\": 2") "]",
		   "models.json", &err) == 0);
	CHECK(rm_warn_count() == warns + 1);
	CHECK_LOGGED("warning: 'models.json': model 'pyt_a': unknown field 'colour' ignored");
	CHECK(reg.n == 1);
	rm_registry_release(&reg);
}

TEST(per_folder)
{
	char tmpl[] = "/tmp/rm_test_registry_XXXXXX";
	char *dir = mkdtemp(tmpl);
	rm_registry reg = {0};
	rm_error err = RM_ERROR_INIT;
	char *expect;

	CHECK(dir != NULL);
	if (!dir)
		return;

	/* Nothing there yet: an error naming the folder. */
	CHECK(rm_registry_load(&reg, dir, &err) < 0);
	CHECK(strstr(err.msg, "no models.json in '") != NULL);
	CHECK(strstr(err.msg, dir) != NULL);

	make_dir(dir, "scripts");
	make_dir(dir, "scripts/llm");
	make_dir(dir, "scripts/aaa");
	make_dir(dir, "scripts/empty");
	tfs_put(dir, "scripts/notes.txt", "not a folder\n");
	tfs_put(dir, "scripts/llm/models.json",
		"[{\"name\": \"pyt_llm_a\", \"dockerfile\": \"docker/llm\", \"scripts\": "
		"\"run.sh\", \"n_gpus\": \"8\", \"owner\": \"o\", \"tags\": [\"training\"], "
		"\"args\": \"\"},\n"
		" {\"name\": \"pyt_llm_b\", \"dockerfile\": \"../../docker/shared\", \"scripts\": "
		"\"./b/\", \"n_gpus\": \"1\", \"owner\": \"o\", \"tags\": [], \"args\": \"\", "
		"\"dockercontext\": \"./docker/shared\"}]\n");
	tfs_put(dir, "scripts/aaa/models.json", "[" ENTRY("pyt_aaa", "") "]");

	/* Only per-folder registries: fine. */
	CHECK(rm_registry_load(&reg, dir, &err) == 0);
	CHECK(reg.n == 3);
	rm_registry_release(&reg);

	tfs_put(dir, "models.json", "[" ENTRY("pyt_top", "") "]");
	CHECK(rm_registry_load(&reg, dir, &err) == 0);
	CHECK(reg.n == 4);
	if (reg.n == 4) {
		CHECK_STR(reg.models[0].name, "pyt_top");
		CHECK(reg.models[0].scope == NULL);
		CHECK_STR(reg.models[1].name, "aaa/pyt_aaa");
		CHECK_STR(reg.models[1].dockerfile, "scripts/aaa/docker/x");
		CHECK_STR(reg.models[1].scripts, "scripts/aaa/scripts/x/run.sh");
		const rm_model *m = &reg.models[2];
		CHECK_STR(m->name, "llm/pyt_llm_a");
		CHECK_STR(m->short_name, "pyt_llm_a");
		CHECK_STR(m->scope, "llm");
		expect = rm_xasprintf("%s/scripts/llm/models.json", dir);
		CHECK_STR(m->source, expect);
		free(expect);
		CHECK_STR(m->dockerfile, "scripts/llm/docker/llm");
		CHECK_STR(m->scripts, "scripts/llm/run.sh");
		/* madengine: dockercontext is not rebased; default ./docker of the root */
		CHECK_STR(m->dockercontext, "docker");
		CHECK(m->n_gpus == 8);
		m = &reg.models[3];
		CHECK_STR(m->dockerfile, "docker/shared");
		CHECK_STR(m->scripts, "scripts/llm/b/");
		CHECK_STR(m->dockercontext, "docker/shared");
		CHECK(rm_registry_find(&reg, "llm/pyt_llm_b") == m);
	}
	rm_registry_release(&reg);

	/* An error in a per-folder file names it and leaves nothing loaded. */
	tfs_put(dir, "scripts/llm/models.json", "[{\"name\": \"pyt_x\",}]");
	CHECK(rm_registry_load(&reg, dir, &err) < 0);
	expect = rm_xasprintf("'%s/scripts/llm/models.json' line 1", dir);
	CHECK(rm_starts_with(err.msg, expect));
	free(expect);
	CHECK(reg.n == 0);

	/* An unreadable models.json (here a folder) is an error naming it. */
	tfs_put(dir, "scripts/llm/models.json", "[]");
	char *top = rm_xasprintf("%s/models.json", dir);
	remove(top);
	CHECK(mkdir(top, 0755) == 0);
	CHECK(rm_registry_load(&reg, dir, &err) < 0);
	expect = rm_xasprintf("cannot read '%s'", top);
	CHECK(rm_starts_with(err.msg, expect));
	free(expect);
	free(top);
	rm_registry_release(&reg);

	tfs_rm_tree(dir);
}

TEST(skip_gpu_arch)
{
	const char *list = "gfx908, gfx90a, gfx1100, gfx940, gfx941, gfx942, gfx950, A100, H100";

	CHECK(rm_skip_gpu_arch_match(list, "gfx942", NULL));
	CHECK(rm_skip_gpu_arch_match(list, "gfx942:sramecc+:xnack-", NULL));
	CHECK(rm_skip_gpu_arch_match(list, "GFX90A", NULL));
	CHECK(!rm_skip_gpu_arch_match(list, "gfx1201", NULL));
	CHECK(!rm_skip_gpu_arch_match(list, "gfx94", NULL));
	/* what nvidia-smi -L prints (madengine's MAD_SYSTEM_GPU_ARCHITECTURE for NVIDIA) */
	CHECK(rm_skip_gpu_arch_match(list, "NVIDIA A100-SXM4-80GB", NULL));
	CHECK(rm_skip_gpu_arch_match(list, "NVIDIA H100 80GB HBM3", NULL));
	CHECK(rm_skip_gpu_arch_match(list, "A100", NULL));
	CHECK(!rm_skip_gpu_arch_match(list, "NVIDIA L40S", NULL));
	CHECK(rm_skip_gpu_arch_match("L40S", "NVIDIA L40S", NULL));
	CHECK(rm_skip_gpu_arch_match("A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB", NULL));
	CHECK(rm_skip_gpu_arch_match("GeForce RTX 4090", "NVIDIA GeForce RTX 4090", NULL));
	CHECK(!rm_skip_gpu_arch_match("A100-PCIE-40GB", "NVIDIA A100-SXM4-80GB", NULL));
	CHECK(!rm_skip_gpu_arch_match(NULL, "gfx942", NULL));
	CHECK(!rm_skip_gpu_arch_match(list, NULL, NULL));
	/* the architecture nvidia-smi's compute capability gives (sm_80) names no product: the
	 * product name is compared too, as madengine compares what nvidia-smi -L prints */
	CHECK(!rm_skip_gpu_arch_match(list, "sm_80", NULL));
	CHECK(rm_skip_gpu_arch_match(list, "sm_80", "NVIDIA A100-SXM4-80GB"));
	CHECK(rm_skip_gpu_arch_match(list, "sm_90", "NVIDIA H100 80GB HBM3"));
	CHECK(!rm_skip_gpu_arch_match(list, "sm_89", "NVIDIA L40S"));
	CHECK(rm_skip_gpu_arch_match("MI300X", "gfx942", "AMD Instinct MI300X"));
	CHECK(rm_skip_gpu_arch_match("sm_80", "sm_80", "NVIDIA A100-SXM4-80GB"));
	CHECK(!rm_skip_gpu_arch_match(list, NULL, ""));
	CHECK(!rm_skip_gpu_arch_match(list, " ", NULL));
	CHECK(!rm_skip_gpu_arch_match(" , ,", "gfx942", NULL));
}

/* Checks that need the file system: symlinks out of the folder, folders for files. */
TEST(check_paths)
{
	char *d = tfs_tmpdir("paths");
	rm_registry reg = {0};
	rm_error err = RM_ERROR_INIT;
	char *link;

	tfs_put(d, "docker/x.ubuntu.amd.Dockerfile", "FROM scratch\n");
	tfs_put(d, "scripts/x/run.sh", "echo\n");
	tfs_put(
	    d, "models.json",
	    "[" ENTRY(
		"ok",
		"") ","
		    "{\"name\": \"evil\", \"dockerfile\": \"docker/x\", \"scripts\": "
		    "\"scripts/out/passwd\", \"n_gpus\": \"0\", \"owner\": \"o\", \"tags\": [], "
		    "\"args\": \"\"},"
		    "{\"name\": \"dir\", \"dockerfile\": \"docker/x\", \"scripts\": "
		    "\"scripts/x\", \"n_gpus\": \"0\", \"owner\": \"o\", \"tags\": [], "
		    "\"args\": \"\"},"
		    "{\"name\": \"dirsh\", \"dockerfile\": \"docker/x\", \"scripts\": "
		    "\"scripts/d.sh\", \"n_gpus\": \"0\", \"owner\": \"o\", \"tags\": [], "
		    "\"args\": \"\"},"
		    "{\"name\": \"ctx\", \"dockerfile\": \"docker/x\", \"scripts\": "
		    "\"scripts/x/run.sh\", \"dockercontext\": \"scripts/x/run.sh\", \"n_gpus\": "
		    "\"0\", "
		    "\"owner\": \"o\", \"tags\": [], \"args\": \"\"},"
		    "{\"name\": \"dfl\", \"dockerfile\": \"docker/y\", \"scripts\": "
		    "\"scripts/x/run.sh\", \"n_gpus\": \"0\", \"owner\": \"o\", \"tags\": [], "
		    "\"args\": \"\"}]");
	link = rm_xasprintf("%s/scripts/out", d);
	CHECK(symlink("/etc", link) == 0);
	free(link);
	link = rm_xasprintf("%s/docker/y.Dockerfile", d);
	CHECK(symlink("/etc/hostname", link) == 0);
	free(link);
	link = rm_xasprintf("%s/scripts/d.sh", d);
	tfs_mkdirs(link);
	free(link);

	tfs_put(d, "scripts/gone.sh", "");
	CHECK(rm_registry_load(&reg, d, &err) == 0);
	CHECK(reg.n == 6);
	if (reg.n == 6) {
		CHECK(rm_model_check_paths(&reg.models[0], d, &err) == 0);
		CHECK(rm_model_check_paths(&reg.models[1], d, &err) < 0);
		CHECK(strstr(err.msg, "field 'scripts': 'scripts/out/passwd' resolves to") != NULL);
		CHECK(strstr(err.msg, "outside the folder") != NULL);
		CHECK(rm_model_check_paths(&reg.models[2], d, &err) == 0); /* a folder: run.sh */
		CHECK(rm_model_check_paths(&reg.models[3], d, &err) < 0);
		CHECK(strstr(err.msg, "'scripts/d.sh' is a folder, and it must be a file") != NULL);
		CHECK(rm_model_check_paths(&reg.models[4], d, &err) < 0);
		CHECK(strstr(err.msg, "field 'dockercontext': 'scripts/x/run.sh' is a file") !=
		      NULL);
		CHECK(rm_model_check_paths(&reg.models[5], d, &err) < 0);
		CHECK(strstr(err.msg, "field 'dockerfile': 'docker/y.Dockerfile' resolves to") !=
		      NULL);
	}
	rm_registry_release(&reg);
	tfs_rm_tree(d);
	free(d);
}

/* madengine's dynamic registry, run with a stand-in CustomModel when opted in. */
TEST(dynamic)
{
	char *d = tfs_tmpdir("dynamic");
	rm_registry reg = {0};
	rm_error err = RM_ERROR_INIT;
	rm_registry_opts run = RM_REGISTRY_OPTS_INIT;
	unsigned warns = rm_warn_count();

	run.run_dynamic = 1;
	run.dynamic_timeout = 20;
	tfs_put(d, "models.json", "[" ENTRY("top", "") "]");
	tfs_put(d, "scripts/dyn/get_models_json.py",
		"from madengine.utils.discover_models import CustomModel\n"
		"class M(CustomModel):\n"
		"    def update_model(self):\n"
		"        self.dockerfile = 'docker/dummy'\n"
		"        self.scripts = 'run.sh'\n"
		"print('chatter on stdout does not break the listing')\n"
		"def list_models():\n"
		"    return [CustomModel(name='m3', dockerfile='../../docker/dummy', "
		"scripts='run.sh', tags=['g3']), M(name='m4', tags=['g3'])]\n");
	/* not run by default: recorded and warned about */
	CAPTURE_MESSAGES();
	CHECK(rm_registry_load_opts(&reg, d, NULL, &err) == 0);
	CHECK_LOGGED("get_models_json.py' lists models by running Python on this host; it was "
		     "not run");
	CHECK(reg.n == 1 && reg.n_dynamic_skipped == 1);
	CHECK(reg.n_dynamic_skipped == 1 &&
	      strcmp(reg.dynamic_skipped[0], "scripts/dyn/get_models_json.py") == 0);
	CHECK(rm_warn_count() == warns + 1);
	const char *tag[] = {"dyn/m4"};
	rm_selection sel;
	CHECK(rm_select(&reg, tag, 1, &sel, &err) < 0);
	CHECK(strstr(err.msg, "'scripts/dyn/get_models_json.py' were not run") != NULL);
	rm_registry_release(&reg);

	if (!rm_on_path("python3")) {
		fprintf(stderr, "test_dynamic: no python3, the rest skipped\n");
		goto out;
	}
	CHECK(rm_registry_load_opts(&reg, d, &run, &err) == 0);
	CHECK(reg.n == 3);
	if (reg.n == 3) {
		const rm_model *m = rm_registry_find(&reg, "dyn/m3");
		CHECK(m != NULL);
		if (m) {
			CHECK_STR(m->dockerfile, "docker/dummy");
			CHECK_STR(m->scripts, "scripts/dyn/run.sh");
			CHECK(m->n_gpus == -1 && m->timeout == 7200 && m->dynamic);
			CHECK_STR(m->dockercontext, "docker");
			CHECK(m->n_tags == 1 && strcmp(m->tags[0], "g3") == 0);
		}
		m = rm_registry_find(&reg, "dyn/m4");
		CHECK(m && strcmp(m->dockerfile, "scripts/dyn/docker/dummy") == 0);
	}
	rm_registry_release(&reg);

	/* failures name the file */
	tfs_put(d, "scripts/dyn/get_models_json.py", "raise SystemExit(3)\n");
	CHECK(rm_registry_load_opts(&reg, d, &run, &err) < 0);
	CHECK(strstr(err.msg, "get_models_json.py' failed (python3 exit code 3") != NULL);
	CHECK(reg.n == 0);
	tfs_put(d, "scripts/dyn/get_models_json.py", "def list_models():\n    return [1]\n");
	CHECK(rm_registry_load_opts(&reg, d, &run, &err) < 0);
	/* past the deadline it is stopped, not waited for: it never gets to its last line */
	char *py = rm_xasprintf("import time\ntime.sleep(30)\nopen('%s/finished', 'w')\n", d);
	char *finished = rm_xasprintf("%s/finished", d);
	tfs_put(d, "scripts/dyn/get_models_json.py", py);
	rm_registry_opts quick = run;
	quick.dynamic_timeout = 0.5;
	CHECK(rm_registry_load_opts(&reg, d, &quick, &err) < 0);
	CHECK(access(finished, F_OK) != 0);
	CHECK(strstr(err.msg, "did not list its models within 0.5 s") != NULL);
	free(py);
	free(finished);
	/* both kinds in one folder: madengine refuses it too */
	tfs_put(d, "scripts/dyn/models.json", "[]");
	CHECK(rm_registry_load_opts(&reg, d, &run, &err) < 0);
	CHECK(strstr(err.msg, "keep one") != NULL);
	rm_registry_release(&reg);
out:
	tfs_rm_tree(d);
	free(d);
}

/* Today's MAD cards (issue 30): "slurm" and "distributed" objects are read as given, with
 * numbers and booleans; an array in them, or a number in env_vars, is refused naming the
 * field; .slurm and .sbatch scripts run with bash. */
TEST(card_slurm_distributed)
{
	rm_registry reg = {0};
	rm_error err = RM_ERROR_INIT;
	const rm_model *m;

	CHECK(load(&reg,
		   "[" ENTRY("pyt_x", ", \"distributed\": {\"launcher\": \"slurm_multi\", "
				      "\"nnodes\": 2}, \"slurm\": {\"nodes\": 2, "
				      "\"gpus_per_node\": 8, \"time\": \"24:00:00\", "
				      "\"exclusive\": true}, \"env_vars\": {\"xP\": \"1\"}") "]",
		   "models.json", &err) == 0);
	m = &reg.models[0];
	CHECK(m->slurm && m->distributed);
	CHECK(json_integer_value(json_object_get(m->slurm, "nodes")) == 2);
	CHECK(json_is_true(json_object_get(m->slurm, "exclusive")));
	CHECK_STR(json_string_value(json_object_get(m->slurm, "time")), "24:00:00");
	CHECK_STR(json_string_value(json_object_get(m->distributed, "launcher")), "slurm_multi");
	CHECK(json_integer_value(json_object_get(m->distributed, "nnodes")) == 2);
	rm_registry_release(&reg);

	CHECK(load(&reg, "[" ENTRY("pyt_x", ", \"slurm\": {\"modules\": [\"a\"]}") "]",
		   "models.json", &err) < 0);
	CHECK(strstr(err.msg, "field 'slurm' must be an object of strings, numbers and booleans"));
	CHECK(load(&reg, "[" ENTRY("pyt_x", ", \"env_vars\": {\"xP\": 1}") "]", "models.json",
		   &err) < 0);
	CHECK(strstr(err.msg, "field 'env_vars' must be an object of strings"));
	rm_registry_release(&reg);

	CHECK(rm_script_kind_of("scripts/x/run_xPyD_models.slurm") == RM_SCRIPT_BASH);
	CHECK(rm_script_kind_of("scripts/x/run_benchmark.sbatch") == RM_SCRIPT_BASH);
	CHECK(rm_script_kind_of("scripts/x/run.sh") == RM_SCRIPT_BASH);
	CHECK(rm_script_kind_of("scripts/x/bench.py") == RM_SCRIPT_PYTHON);
	CHECK(rm_script_kind_of("scripts/x") == RM_SCRIPT_FOLDER);
	CHECK(rm_script_kind_of("scripts/x.slurm.d/") == RM_SCRIPT_FOLDER);
}

/* Load-time warnings come once a file (issue 30: today's MAD repeated one a card). */
TEST(unknown_fields_once)
{
	rm_registry reg = {0};
	rm_error err = RM_ERROR_INIT;
	rm_buf log = RM_BUF_INIT((size_t)1 << 16);

	rm_log_capture(&log);
	CHECK(load(&reg,
		   "[" ENTRY("pyt_a", ", \"zz\": 1") "," ENTRY("pyt_b", ", \"zz\": 2") "," ENTRY(
		       "pyt_c", ", \"zz\": 3, \"yy\": 0") "]",
		   "models.json", &err) == 0);
	rm_log_capture(NULL);
	CHECK(strstr(rm_buf_str(&log),
		     "'models.json': unknown field 'zz' ignored (in 3 models, the first 'pyt_a')"));
	CHECK(strstr(rm_buf_str(&log), "'models.json': model 'pyt_c': unknown field 'yy' ignored"));
	CHECK(strstr(strstr(rm_buf_str(&log), "'zz'") + 1, "'zz'") == NULL); /* once */
	rm_registry_release(&reg);
	rm_buf_release(&log);
}
