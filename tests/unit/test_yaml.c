#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rm/util.h"
#include "rm/context.h"

static json_t *parse(const char *text, rm_error *err)
{
	rm_error_clear(err);
	return rm_yaml_to_json(text, strlen(text), "ctx.yaml", err);
}

/* Parses text and compares it with the JSON `want` (types included: 1 is not 1.0). */
static void check_same(const char *text, const char *want)
{
	rm_error err = RM_ERROR_INIT;
	json_t *got = parse(text, &err);
	json_t *exp = json_loads(want, JSON_DECODE_ANY, NULL);
	int ok = got && exp && json_equal(got, exp);
	if (!ok) {
		char *g = got ? json_dumps(got, JSON_ENCODE_ANY | JSON_SORT_KEYS) : NULL;
		fprintf(stderr, "yaml: %s\n  got:  %s\n  want: %s\n", text, g ? g : err.msg, want);
		free(g);
	}
	CHECK(ok);
	json_decref(got);
	json_decref(exp);
}

/* Parsing text must fail with a message containing `want`. */
static void check_error(const char *text, const char *want)
{
	rm_error err = RM_ERROR_INIT;
	json_t *got = parse(text, &err);
	int ok = !got && err.kind == RM_ERR_INPUT && strstr(err.msg, want);
	if (!ok)
		fprintf(stderr, "yaml: %s\n  error: '%s' (kind %d)\n  want: '%s'\n", text, err.msg,
			err.kind, want);
	CHECK(ok);
	json_decref(got);
}

TEST(context)
{
	const char *ctx = "# an MI300X host\n"
			  "gpu_vendor: AMD\n"
			  "guest_os: UBUNTU\n"
			  "MAD_SYSTEM_GPU_ARCHITECTURE: gfx942\n"
			  "MAD_SYSTEM_NGPUS: 8\n"
			  "docker_env_vars:\n"
			  "  HSA_ENABLE_SDMA: \"1\"\n"
			  "  NCCL_DEBUG: INFO\n"
			  "docker_mounts:\n"
			  "  /data: /mnt/data\n"
			  "docker_gpus: 0,2-4\n"
			  "model_args: \"--batch-size 8 --prompt 'hello world'\"\n"
			  "other_args: '--say \"hi\" it''s'\n"
			  "timeout: 7200\n"
			  "lr: 3.0e-4\n"
			  "tags: [pyt, llm]\n"
			  "notes: >\n"
			  "  folded\n"
			  "  text\n"
			  "skip: ~\n";
	check_same(ctx,
		   "{\"gpu_vendor\": \"AMD\", \"guest_os\": \"UBUNTU\","
		   "\"MAD_SYSTEM_GPU_ARCHITECTURE\": \"gfx942\", \"MAD_SYSTEM_NGPUS\": 8,"
		   "\"docker_env_vars\": {\"HSA_ENABLE_SDMA\": \"1\", \"NCCL_DEBUG\": "
		   "\"INFO\"},"
		   "\"docker_mounts\": {\"/data\": \"/mnt/data\"}, \"docker_gpus\": \"0,2-4\","
		   "\"model_args\": \"--batch-size 8 --prompt 'hello world'\","
		   "\"other_args\": \"--say \\\"hi\\\" it's\", \"timeout\": 7200,"
		   "\"lr\": 0.0003, \"tags\": [\"pyt\", \"llm\"], \"notes\": \"folded text\\n\","
		   "\"skip\": null}");

	/* key order is kept, so merged contexts print as written */
	rm_error err = RM_ERROR_INIT;
	json_t *v = parse(ctx, &err);
	CHECK(v != NULL);
	if (v) {
		void *it = json_object_iter(v);
		CHECK_STR(json_object_iter_key(it), "gpu_vendor");
		CHECK(json_is_integer(json_object_get(v, "MAD_SYSTEM_NGPUS")));
	}
	json_decref(v);

	/* Windows line endings and a byte order mark */
	check_same("\xef\xbb\xbf"
		   "a: 1\r\nb: x\r\n",
		   "{\"a\": 1, \"b\": \"x\"}");
}

TEST(scalars)
{
	check_same("[1, -42, +7, 007, 0x1F, 0o17, 0]", "[1, -42, 7, 7, 31, 15, 0]");
	check_same("[1.5, 1e3, .5, -.5, 5., 1E-2, -0.0, 6.02e+23]",
		   "[1.5, 1000.0, 0.5, -0.5, 5.0, 0.01, -0.0, 6.02e23]");
	check_same("[true, True, TRUE, false, False, FALSE]",
		   "[true, true, true, false, false, false]");
	check_same("[null, Null, NULL, ~, ]", "[null, null, null, null]");
	check_same("a:\nb: ''\nc: \"\"", "{\"a\": null, \"b\": \"\", \"c\": \"\"}");
	/* YAML 1.1 words and near-numbers stay text under the 1.2 core schema */
	check_same("[yes, no, on, off, 1_000, 0b101, 1.2.3, ., 1e, e3, nul, 0x, 12abc, TrUe]",
		   "[\"yes\", \"no\", \"on\", \"off\", \"1_000\", \"0b101\", \"1.2.3\", \".\","
		   "\"1e\", \"e3\", \"nul\", \"0x\", \"12abc\", \"TrUe\"]");
	/* quoted scalars are strings whatever they look like */
	check_same("['1', \"true\", 'null', \"~\", '.inf']",
		   "[\"1\", \"true\", \"null\", \"~\", \".inf\"]");
	check_same("a: \"caf\\u00e9 \\t\"", "{\"a\": \"caf\\u00e9 \\t\"}");
	check_same("[9223372036854775807, -9223372036854775808]",
		   "[9223372036854775807, -9223372036854775808]");
	/* explicit core tags */
	check_same("[!!str 123, !!int 12, !!float 1, !!bool true, !!null '', ! 5]",
		   "[\"123\", 12, 1.0, true, null, \"5\"]");
	check_same("a: !!str\nb: !!null\n", "{\"a\": \"\", \"b\": null}");
	check_same("!!map {a: !!seq [1]}", "{\"a\": [1]}");
	check_same("1: one\ntrue: yes\n", "{\"1\": \"one\", \"true\": \"yes\"}");

	/* an embedded NUL survives in a string value */
	rm_error err = RM_ERROR_INIT;
	json_t *v = parse("a: \"x\\0y\"", &err);
	CHECK(v && json_string_length(json_object_get(v, "a")) == 3);
	json_decref(v);
}

TEST(json)
{
	check_same("{\"a\": [1, 2]}", "{\"a\": [1, 2]}");
	check_same("{\"a\":[1,2],\"b\":{\"c\":\"d\\u00e9\"},\"e\":null,\"f\":true,\"g\":-1.5e-3}",
		   "{\"a\":[1,2],\"b\":{\"c\":\"d\\u00e9\"},\"e\":null,\"f\":true,\"g\":-1.5e-3}");
	check_same("{a: 1}", "{\"a\": 1}");
	check_same("{a: 1, b: [x, {c: d}], 'e f': \"g\"}",
		   "{\"a\": 1, \"b\": [\"x\", {\"c\": \"d\"}], \"e f\": \"g\"}");
	check_same("[]", "[]");
	check_same("{}", "{}");
	check_same("42", "42");
	check_same("null", "null");
}

TEST(errors)
{
	rm_error err = RM_ERROR_INIT;

	check_error("", "'ctx.yaml' is empty");
	check_error("# nothing but a comment\n\n", "'ctx.yaml' is empty");
	check_error("---\n", "'ctx.yaml' is empty");
	check_error("---\n...\n", "'ctx.yaml' is empty");

	/* syntax errors point at the line, counted from 1 */
	check_error("a: 1\nb: [1, 2\n", "'ctx.yaml' line 3 column 1: did not find expected");
	check_error("a: 1\n  b: 2\n", "'ctx.yaml' line 2 column 4: mapping values are not allowed");
	check_error("a: \"open\n", "'ctx.yaml' line 2 column 1:");
	check_error("a: 1\nb:\n  c: 2\n  c: 3\n", "'ctx.yaml' line 4 column 3: duplicate key 'c'");
	check_error("{a: 1, a: 2}", "'ctx.yaml' line 1 column 8: duplicate key 'a'");

	check_error("base: &b 1\nother: *b\n", "'ctx.yaml' line 1 column 7: anchor '&b'");
	check_error("a: *b\n", "'ctx.yaml' line 1 column 4: alias '*b' is not supported");
	check_error("*b : 1\n", "alias '*b' is not supported");
	check_error("list: &l [1]\n", "anchor '&l' is not supported");
	check_error("? [a, b]\n: 1\n", "'ctx.yaml' line 1 column 3: mapping keys must be scalars");
	check_error("? {a: b}\n: 1\n", "mapping keys must be scalars");
	check_error("\"k\\0\": 1\n", "NUL byte");
	check_error("a: 1\n---\nb: 2\n", "'ctx.yaml' line 2 column 1: more than one document");
	check_error("a: 1\n...\n---\n", "more than one document");

	check_error("x: .inf\n", "'.inf' has no JSON equivalent");
	check_error("x: -.Inf\n", "has no JSON equivalent");
	check_error("x: .nan\n", "has no JSON equivalent");
	check_error("x: 99999999999999999999\n", "integer '99999999999999999999' is out of range");
	check_error("x: 1e999\n", "number '1e999' is out of range");
	check_error("x: !!int abc\n", "value does not match its tag '!!int'");
	check_error("x: !!bool 1\n", "value does not match its tag '!!bool'");
	check_error("x: !custom 1\n", "tag '!custom' is not supported");
	check_error("x: !!set {a}\n", "tag 'tag:yaml.org,2002:set' is not supported");
	check_error("x: !!binary aGk=\n", "tag 'tag:yaml.org,2002:binary' is not supported");

	/* bytes that are not UTF-8 are located by offset */
	check_error("a: \xff\n", "'ctx.yaml' byte 3: invalid leading UTF-8 octet");

	/* nesting: 64 levels are fine, 65 are not */
	char deep[512];
	size_t k = 0;
	for (int i = 0; i < 64; i++)
		deep[k++] = '[';
	for (int i = 0; i < 64; i++)
		deep[k++] = ']';
	deep[k] = '\0';
	json_t *v = parse(deep, &err);
	CHECK(v != NULL);
	json_decref(v);
	k = 0;
	for (int i = 0; i < 65; i++)
		deep[k++] = '[';
	for (int i = 0; i < 65; i++)
		deep[k++] = ']';
	deep[k] = '\0';
	check_error(deep, "'ctx.yaml' line 1 column 65: nested deeper than 64 levels");

	/* billion laughs never gets past the first anchor */
	check_error("a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n", "anchor '&a'");

	/* the source name defaults, and text need not be NUL-terminated */
	v = rm_yaml_to_json("a: 1zzz", 4, NULL, &err);
	CHECK(v && json_integer_value(json_object_get(v, "a")) == 1);
	json_decref(v);
	v = rm_yaml_to_json("", 0, NULL, &err);
	CHECK(!v);
	CHECK_STR(err.msg, "'input' is empty");
	v = rm_yaml_to_json(NULL, 0, "x", &err);
	CHECK(!v);
}
