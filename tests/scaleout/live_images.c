/*
 * Images and registries against a REAL dockerd and a REAL registry (Debian's docker-registry):
 * build a tiny image, tag it for the registry, push it (digest), ask the registry for the
 * digest without pulling, remove every local name, pull it back by tag and by digest, and
 * the failures: a tag the registry does not have, a registry nobody listens on.
 *
 * Run by tests/scaleout/registry_live.sh, which starts the registry and passes
 * RM_TEST_REGISTRY=127.0.0.1:PORT and DOCKER_HOST. Usage: live_images BUSYBOX
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "check.h"
#include "rm/engine.h"
#include "rm/tar.h"
#include "rm/util.h"
#include "testfs.h"

static void on_line(void *ud, const char *line, size_t len)
{
	rm_buf *b = ud;
	rm_buf_add(b, line, len);
	rm_buf_addch(b, '\n');
}

static int copy_file(const char *from, const char *to)
{
	char *text = NULL;
	size_t len = 0;
	rm_error err = RM_ERROR_INIT;
	int fd, ok;

	if (rm_read_file(from, 64u << 20, &text, &len, &err) != 0)
		return -1;
	fd = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	ok = fd >= 0 && rm_write_all(fd, text, len) == 0;
	if (fd >= 0)
		close(fd);
	free(text);
	return ok ? 0 : -1;
}

/* Builds FROM scratch + busybox + a file and a label unique to this run; *id receives the
 * image id. */
static int build_image(rm_docker *d, const char *busybox, const char *dir, const char *tag,
		       char **id)
{
	rm_error err = RM_ERROR_INIT;
	char *bb = rm_xasprintf("%s/ctx/busybox", dir), *tar = rm_xasprintf("%s/ctx.tar", dir);
	char *ctx = rm_xasprintf("%s/ctx", dir), *name = NULL, *label = NULL;
	json_t *labels = NULL;
	int fd = -1, ret = -1;

	/* a layer of its own (the busybox layer is shared with every other test image on the
	 * engine, so its pull would say "Already exists", not "Pull complete") */
	label = rm_xasprintf("%ld-%.0f", (long)getpid(), rm_now() * 1000);
	tfs_put(dir, "ctx/unique", label);
	tfs_put(dir, "ctx/Dockerfile",
		"FROM scratch\nCOPY busybox /bin/busybox\nCOPY unique /unique\n"
		"CMD [\"/bin/busybox\", \"true\"]\n");
	if (copy_file(busybox, bb) < 0) {
		fprintf(stderr, "cannot copy %s\n", busybox);
		goto out;
	}
	fd = open(tar, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || rm_tar_build_context(ctx, NULL, fd, &name, &err) < 0) {
		fprintf(stderr, "context: %s\n", err.msg);
		goto out;
	}
	labels = json_pack("{s:s}", "run_models.test.images", label);
	rm_build_opts bo = {.context_tar = tar, .dockerfile = name, .tag = tag, .labels = labels};
	if (rm_engine_build(d, &bo, id, &err) < 0) {
		fprintf(stderr, "build: %s\n", err.msg);
		goto out;
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	json_decref(labels);
	free(label);
	free(name);
	free(bb);
	free(tar);
	free(ctx);
	return ret;
}

int main(int argc, char **argv)
{
	rm_error err = RM_ERROR_INIT;
	rm_docker *d = NULL;
	const char *reg = getenv("RM_TEST_REGISTRY");
	char *dir = tfs_tmpdir("live-images"), *id = NULL, *digest = NULL, *dist = NULL;
	char *pulled = NULL, *auth = NULL, *local = NULL, *ref = NULL, *missing = NULL;
	char *dead = NULL, *by_digest = NULL;
	const char *src = NULL;
	rm_buf lines = RM_BUF_INIT(1 << 20);
	json_t *j = NULL;

	if (argc != 2 || !reg || !*reg) {
		fprintf(stderr, "usage: RM_TEST_REGISTRY=127.0.0.1:PORT %s BUSYBOX\n", argv[0]);
		return 2;
	}
	if (rm_engine_open(&d, NULL, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	local = rm_xasprintf("rm-test-images:%ld", (long)getpid());
	ref = rm_xasprintf("%s/rm-test-images:fp%ld", reg, (long)getpid());
	missing = rm_xasprintf("%s/rm-test-images:never-pushed", reg);
	if (build_image(d, argv[1], dir, local, &id) < 0) {
		CHECK(0);
		goto out;
	}

	/* The registry has no credentials configured: {} goes along, as the CLI does. */
	CHECK(rm_engine_auth(reg, &auth, &src, &err) == 0);
	rm_image_xfer_opts xo = {.auth = auth, .on_line = on_line, .ud = &lines};

	/* Not there yet. */
	CHECK(rm_engine_distribution_digest(d, ref, auth, &dist, &err) == 1);
	CHECK(dist == NULL);

	CHECK(rm_engine_image_tag(d, local, ref, &err) == 0);
	double t0 = rm_now();
	if (rm_engine_image_push(d, ref, &xo, &digest, &err) < 0) {
		fprintf(stderr, "push: %s\n", err.msg);
		CHECK(0);
		goto out;
	}
	printf("push %.2f s: %s\n", rm_now() - t0, digest);
	CHECK(rm_starts_with(digest, "sha256:"));
	CHECK(strstr(rm_buf_str(&lines), "Pushed") != NULL);

	/* The registry's digest, without pulling, equals what the push reported. */
	t0 = rm_now();
	CHECK(rm_engine_distribution_digest(d, ref, auth, &dist, &err) == 0);
	printf("distribution lookup %.3f s\n", rm_now() - t0);
	CHECK_STR(dist, digest);
	CHECK(rm_engine_distribution_digest(d, missing, auth, &pulled, &err) == 1);

	/* Remove every local name (and so the image), then pull it back. */
	CHECK(rm_engine_image_remove(d, ref, 0, &err) == 0);
	CHECK(rm_engine_image_remove(d, local, 0, &err) == 0);
	CHECK(rm_engine_image_inspect(d, id, &j, &err) < 0);
	CHECK(strstr(err.msg, "no such image") != NULL);
	rm_buf_reset(&lines);
	t0 = rm_now();
	if (rm_engine_image_pull(d, ref, &xo, &pulled, &err) < 0) {
		fprintf(stderr, "pull: %s\n", err.msg);
		CHECK(0);
		goto out;
	}
	printf("pull %.2f s\n", rm_now() - t0);
	CHECK_STR(pulled, digest);
	CHECK(strstr(rm_buf_str(&lines), "Pull complete") != NULL);
	CHECK(rm_engine_image_inspect(d, ref, &j, &err) == 0);
	CHECK_STR(json_string_value(json_object_get(j, "Id")), id);
	json_decref(j);
	j = NULL;
	/* Again: already there, nothing downloaded. */
	rm_buf_reset(&lines);
	free(pulled);
	pulled = NULL;
	CHECK(rm_engine_image_pull(d, ref, &xo, &pulled, &err) == 0);
	CHECK(strstr(rm_buf_str(&lines), "Image is up to date") != NULL);
	/* By digest. */
	by_digest = rm_xasprintf("%s/rm-test-images@%s", reg, digest);
	free(pulled);
	pulled = NULL;
	CHECK(rm_engine_image_pull(d, by_digest, NULL, &pulled, &err) == 0);

	/* Failures: a tag the registry lacks; a registry nobody listens on (inside the stream). */
	CHECK(rm_engine_image_pull(d, missing, &xo, NULL, &err) < 0);
	CHECK(err.kind == RM_ERR_INPUT);
	printf("pull of a missing tag: %s\n", err.msg);
	dead = rm_xasprintf("127.0.0.1:1/rm-test-images:fp%ld", (long)getpid());
	CHECK(rm_engine_image_tag(d, ref, dead, &err) == 0);
	free(digest);
	digest = NULL;
	CHECK(rm_engine_image_push(d, dead, NULL, &digest, &err) < 0);
	CHECK(strstr(err.msg, "connection refused") != NULL);
	printf("push to a dead registry: %s\n", err.msg);
	free(dist);
	dist = NULL;
	CHECK(rm_engine_distribution_digest(d, dead, NULL, &dist, &err) < 0);
	printf("distribution on a dead registry: %s\n", err.msg);
	CHECK(rm_engine_image_remove(d, dead, 0, &err) == 0);
out:
	if (d && ref) {
		(void)rm_engine_image_remove(d, ref, 0, &err);
		(void)rm_engine_image_remove(d, by_digest ? by_digest : ref, 1, &err);
		(void)rm_engine_image_remove(d, local, 1, &err);
	}
	rm_engine_auth_free(auth);
	rm_buf_release(&lines);
	rm_engine_close(d);
	tfs_rm_tree(dir);
	free(dir);
	free(id);
	free(digest);
	free(dist);
	free(pulled);
	free(local);
	free(ref);
	free(missing);
	free(dead);
	free(by_digest);
	return check_summary();
}
