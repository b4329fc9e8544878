/*
 * Images built elsewhere: the build manifest (written, read back, madengine's entries,
 * refusals) and the Docker launcher's prepare of an image given as it is (found, pulled, refused)
 * against the scripted fake engine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "check.h"
#include "fake_engine.h"
#include "rm/launcher.h"
#include "rm/runner.h"
#include "rm/util.h"

static char tmp[] = "/tmp/rm-test-prebuilt-XXXXXX";

static char *put(const char *name, const char *text)
{
	char *p = rm_xasprintf("%s/%s", tmp, name);
	FILE *f = fopen(p, "w");
	fputs(text, f);
	fclose(f);
	return p;
}

SETUP()
{
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		exit(1);
	}
	setenv("DOCKER_CONFIG", tmp, 1); /* no credentials from this host's config */
	unsetenv("RM_REGISTRY_USER");
	unsetenv("RM_REGISTRY_PASSWORD");
}

TEARDOWN()
{
	char *cmd = rm_xasprintf("rm -rf %s", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmp);
	free(cmd);
}

TEST(manifest_roundtrip)
{
	rm_error err = RM_ERROR_INIT;
	json_t *ctx = json_pack("{s:s}", "gpu_vendor", "AMD");
	json_t *doc = rm_build_manifest_new("127.0.0.1:5000", ctx, NULL);
	rm_built_image ok = {.key = "ci-a_smoke",
			     .dockerfile = "docker/smoke.Dockerfile",
			     .base_image = "scratch",
			     .registry_image = "127.0.0.1:5000/ci-a_smoke:0123456789abcdef",
			     .digest = "sha256:d1",
			     .image_id = "sha256:i1"};
	rm_built_image bad = {.key = "ci-b_smoke", .failed = 1, .reason = "build failed: x"};
	rm_built_image local = {.key = "ci-c_smoke", .image_id = "sha256:i3"};
	char *path = rm_xasprintf("%s/man.json", tmp), *ref;
	rm_build_manifest m;

	rm_build_manifest_add(doc, &ok, json_pack("{s:s}", "name", "a"), "0123456789abcdef00", 1.5,
			      0.25, 0);
	rm_build_manifest_add(doc, &bad, json_pack("{s:s}", "name", "b"), NULL, 0, 0, 0);
	rm_build_manifest_add(doc, &local, json_pack("{s:s}", "name", "c/d"), NULL, 0.5, 0, 1);
	CHECK(rm_build_manifest_write(doc, path, &err) == 0);
	CHECK(access(path, F_OK) == 0);
	CHECK(rm_build_manifest_load(&m, path, &err) == 0);
	CHECK(m.n == 3);
	if (m.n == 3) {
		/* the file's order: keys sorted */
		CHECK_STR(m.images[0].model, "a");
		CHECK_STR(m.images[0].digest, "sha256:d1");
		CHECK(!m.images[0].failed);
		ref = rm_built_image_ref(&m.images[0]);
		CHECK_STR(ref, "127.0.0.1:5000/ci-a_smoke@sha256:d1"); /* pinned by digest */
		free(ref);
		CHECK(m.images[1].failed);
		CHECK_STR(m.images[1].reason, "build failed: x");
		ref = rm_built_image_ref(&m.images[2]);
		CHECK_STR(ref, "ci-c_smoke"); /* built without a registry: the local name */
		free(ref);
		CHECK(rm_build_manifest_has_model(&m, "c/d"));
		CHECK(!rm_build_manifest_has_model(&m, "e"));
	}
	rm_build_manifest_release(&m);
	/* what tools read: madengine's keys */
	json_t *back = json_load_file(path, 0, NULL);
	json_t *e = json_object_get(json_object_get(back, "built_images"), "ci-a_smoke");
	CHECK_STR(json_string_value(json_object_get(e, "docker_image")), "ci-a_smoke");
	CHECK_STR(json_string_value(json_object_get(e, "status")), "SUCCESS");
	CHECK(json_real_value(json_object_get(e, "build_duration")) == 1.5);
	CHECK_STR(
	    json_string_value(json_object_get(json_object_get(back, "context"), "gpu_vendor")),
	    "AMD");
	CHECK_STR(json_string_value(json_object_get(back, "registry")), "127.0.0.1:5000");
	json_decref(back);
	json_decref(doc);
	json_decref(ctx);
	free(path);
}

TEST(manifest_refusals)
{
	rm_error err = RM_ERROR_INIT;
	rm_build_manifest m;
	char *p;

	/* madengine's entries: no status (built), registry_image without a digest */
	p = put("mad.json", "{\"built_images\": {\"ci-x\": {\"docker_image\": \"ci-x\", "
			    "\"registry_image\": \"reg:5000/ci-x:latest\"}}, \"built_models\": "
			    "{\"ci-x\": {\"name\": \"x\", \"n_gpus\": \"1\"}}}");
	CHECK(rm_build_manifest_load(&m, p, &err) == 0);
	if (m.n == 1) {
		char *ref = rm_built_image_ref(&m.images[0]);
		CHECK(!m.images[0].failed);
		CHECK_STR(ref, "reg:5000/ci-x:latest");
		free(ref);
	}
	rm_build_manifest_release(&m);
	free(p);
	p = put("no.json", "{\"models\": []}");
	CHECK(rm_build_manifest_load(&m, p, &err) < 0 && strstr(err.msg, "not a build manifest"));
	free(p);
	p = put("nomodel.json", "{\"built_images\": {\"ci-x\": {}}, \"built_models\": {}}");
	CHECK(rm_build_manifest_load(&m, p, &err) < 0 && strstr(err.msg, "built_models.ci-x.name"));
	free(p);
	p = put("broken.json", "{\"built_images\": {\n,}");
	CHECK(rm_build_manifest_load(&m, p, &err) < 0 && strstr(err.msg, "line 2"));
	free(p);
	CHECK(rm_build_manifest_load(&m, "/nonexistent/man.json", &err) < 0 &&
	      err.kind == RM_ERR_INPUT && strstr(err.msg, "no such file"));
}

static const fake_route routes[] = {
    {"GET", "/images/127.0.0.1:5000/ci-x@sha256:d1/json", 200,
     "{\"Id\":\"sha256:local1\",\"Config\":{}}", 0, NULL},
    {"GET", "/images/127.0.0.1:5000/ci-x@sha256:d2/json", 404, "{\"message\":\"No such image\"}", 0,
     NULL},
    {"POST", "/images/create?fromImage=127.0.0.1%3A5000%2Fci-x&tag=sha256%3Ad2", 404,
     "{\"message\":\"manifest for 127.0.0.1:5000/ci-x@sha256:d2 not found: manifest unknown\"}", 0,
     NULL},
    {"GET", "/images/sha256:gone/json", 404, "{\"message\":\"No such image\"}", 0, NULL},
    {"GET", "/images/127.0.0.1:5000/untagged/json", 404, "{\"message\":\"No such image\"}", 0,
     NULL},
    {"GET", "/images/127.0.0.1:5000/untagged:latest/json", 404, "{\"message\":\"No such image\"}",
     0, NULL},
    {"POST", "/images/create?fromImage=127.0.0.1%3A5000%2Funtagged&tag=latest", 200,
     "{\"status\":\"Digest: sha256:d3\"}\r\n", 0, NULL},
    {NULL, NULL, 0, NULL, 0, NULL},
};

static void line(void *ud, const char *l, size_t len)
{
	rm_buf_add(ud, l, len);
	rm_buf_addch(ud, '|');
}

/* prepare of the Docker launcher for ref: 0 or -1, id, cached and what it said. */
static int prepare(rm_launcher *l, const char *ref, char **id, int *cached, rm_buf *said,
		   rm_error *err)
{
	rm_model m = {.name = "x"};
	rm_image_req req = {.model = &m, .image = ref, .on_line = line, .ud = said};
	*id = NULL;
	rm_buf_reset(said);
	return l->ops->prepare(l->state, &req, id, cached, err);
}

TEST(prepare_ref)
{
	rm_error err = RM_ERROR_INIT;
	char *sock = rm_xasprintf("%s/fake.sock", tmp), *logp = rm_xasprintf("%s/fake.log", tmp);
	char *host = rm_xasprintf("unix://%s", sock), *id = NULL, *log = NULL;
	pid_t pid = fake_start(sock, routes, logp);
	rm_context ctx = {0};
	rm_launcher_config cfg = {.docker_host = host, .ctx = &ctx, .run_id = "r1"};
	rm_launcher l = {0};
	rm_buf said = RM_BUF_INIT(1 << 20);
	int cached = 0;

	CHECK(rm_launcher_open_named(&l, "docker", &cfg, &err) == 0);
	if (!l.ops)
		goto out;
	/* on the engine already: its id, nothing pulled */
	CHECK(prepare(&l, "127.0.0.1:5000/ci-x@sha256:d1", &id, &cached, &said, &err) == 0);
	CHECK_STR(id, "sha256:local1");
	CHECK(cached == 1);
	CHECK(strstr(rm_buf_str(&said), "is on this engine") != NULL);
	free(id);
	/* not there, and the registry lacks it */
	CHECK(prepare(&l, "127.0.0.1:5000/ci-x@sha256:d2", &id, &cached, &said, &err) < 0);
	CHECK(strstr(err.msg, "cannot pull '127.0.0.1:5000/ci-x@sha256:d2': the registry does not "
			      "have it") != NULL);
	CHECK(strstr(err.msg, "pulling it failed") != NULL); /* what the user can do */
	CHECK(strstr(err.msg, "cannot pull") &&
	      !strstr(strstr(err.msg, "cannot pull") + 1, "cannot pull")); /* said once */
	/* an id that is not here cannot be pulled */
	CHECK(prepare(&l, "sha256:gone", &id, &cached, &said, &err) < 0);
	CHECK(strstr(err.msg, "'sha256:gone' cannot be pulled by that name") != NULL);
	/* no tag: pulled as :latest (the engine would pull every tag otherwise); it then
	 * does not list it here, which is said */
	CHECK(prepare(&l, "127.0.0.1:5000/untagged", &id, &cached, &said, &err) < 0);
	CHECK(strstr(err.msg, "pulled '127.0.0.1:5000/untagged:latest' but the engine does not "
			      "list it") != NULL);
	CHECK(rm_read_file(logp, 1 << 20, &log, NULL, &err) == 0);
	CHECK(log && strstr(log, "fromImage=127.0.0.1%3A5000%2Funtagged&tag=latest") != NULL);
	CHECK(log && strstr(log, "X-Registry-Auth: e30=") != NULL); /* no credentials: {} */
	CHECK(log && !strstr(log, "fromImage=127.0.0.1%3A5000%2Fci-x&tag=sha256%3Ad1"));
out:
	rm_launcher_close(&l);
	fake_stop(pid);
	rm_buf_release(&said);
	free(log);
	free(sock);
	free(logp);
	free(host);
}
