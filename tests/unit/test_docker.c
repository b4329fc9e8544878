/*
 * The Docker client against the fake engine of fake_engine.h (always), and against a real
 * engine when DOCKER_HOST is set (build, create, archive copies, logs, wait, kill, remove).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "check.h"
#include "fake_engine.h"
#include "rm/engine.h"
#include "rm/tar.h"
#include "rm/util.h"

static char tmp[64], *live_host;

SETUP()
{
	live_host = getenv("DOCKER_HOST") ? rm_xstrdup(getenv("DOCKER_HOST")) : NULL;
	snprintf(tmp, sizeof(tmp), "/tmp/rm_test_docker_XXXXXX");
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		exit(1);
	}
	signal(SIGPIPE, SIG_IGN);
}

TEARDOWN()
{
	free(live_host);
	char *cmd = rm_xasprintf("rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmp);
	free(cmd);
}

/* A stream frame of the engine's logs: stream type, size, payload. */
static void frame(rm_buf *b, int type, const char *s)
{
	size_t len = strlen(s);
	unsigned char h[8] = {(unsigned char)type, 0, 0, 0, 0, 0, (unsigned char)(len >> 8),
			      (unsigned char)len};
	rm_buf_add(b, h, 8);
	rm_buf_add(b, s, len);
}

struct lines {
	rm_buf all;
};

static void on_line(void *ud, const char *line, size_t len)
{
	struct lines *l = ud;
	rm_buf_add(&l->all, line, len);
	rm_buf_addch(&l->all, '|');
}

static void on_log(void *ud, int stream, const char *data, size_t len)
{
	rm_buf *b = ud;
	rm_buf_addf(b, "%d:", stream);
	rm_buf_add(b, data, len);
	rm_buf_addch(b, '|');
}

static char *slurp(const char *path)
{
	rm_buf b = RM_BUF_INIT(1 << 24);
	char buf[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
		rm_buf_add(&b, buf, (size_t)n);
	if (fd >= 0)
		close(fd);
	return rm_buf_detach(&b);
}

TEST(unreachable)
{
	rm_error err = RM_ERROR_INIT;
	rm_docker *d = NULL;
	char *host = rm_xasprintf("unix://%s/no/docker.sock", tmp);
	CHECK(rm_engine_open(&d, host, &err) < 0);
	CHECK(d == NULL);
	CHECK(strstr(err.msg, host) != NULL);
	CHECK(strstr(rm_error_text(&err), "DOCKER_HOST") != NULL);
	CHECK(strstr(rm_error_text(&err), "dockerd") != NULL);
	CHECK(err.kind == RM_ERR_DOCKER);
	/* The cause is data: no socket there (issue 26). The advice is the hint, not the
	 * message, and the cause's text ends the message. */
	CHECK(err.sys_errno == ENOENT);
	CHECK(strstr(err.msg, "dockerd") == NULL);
	CHECK(strstr(rm_error_text(&err), strerror(ENOENT)) != NULL);
	free(host);

	/* A socket file with nobody listening. */
	char *sock = rm_xasprintf("%s/dead.sock", tmp);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock);
	CHECK(bind(s, (struct sockaddr *)&a, sizeof(a)) == 0);
	host = rm_xasprintf("unix://%s", sock);
	CHECK(rm_engine_open(&d, host, &err) < 0);
	CHECK(strstr(err.msg, "nothing answers") != NULL);
	CHECK(strstr(err.msg, "port 80") == NULL);
	CHECK(err.sys_errno == ECONNREFUSED);
	close(s);
	free(host);
	free(sock);

	CHECK(rm_engine_open(&d, "tcp://127.0.0.1:1", &err) < 0);
	CHECK(strstr(err.msg, "tcp://127.0.0.1:1") != NULL);
	CHECK(rm_engine_open(&d, "ssh://host", &err) < 0);
	CHECK(err.kind == RM_ERR_USAGE);
	CHECK(strstr(err.msg, "ssh://host") != NULL);
	rm_engine_close(NULL);
}

/* An engine whose /_ping says API-Version: engine (none when ""): the client uses want. */
static void negotiation(const char *engine, const char *want)
{
	rm_error err = RM_ERROR_INIT;
	rm_docker *d = NULL;
	char *sock = rm_xasprintf("%s/neg%s.sock", tmp, engine);
	char *logp = rm_xasprintf("%s/neg.log", tmp);
	char *host = rm_xasprintf("unix://%s", sock);
	char *version = *engine ? rm_xasprintf("API-Version: %s\r\n", engine) : rm_xstrdup("");
	const fake_route routes[] = {{"GET", "/_ping", 200, "OK", 0, version},
				     {NULL, NULL, 0, NULL, 0, NULL}};
	pid_t pid = fake_start(sock, routes, logp);
	CHECK(rm_engine_open(&d, host, &err) == 0);
	if (d) {
		CHECK_STR(rm_engine_api_version(d), want);
		CHECK_STR(rm_engine_host(d), host);
	}
	rm_engine_close(d);
	fake_stop(pid);
	free(version);
	free(sock);
	free(logp);
	free(host);
}

TEST(negotiation)
{
	negotiation("1.52", "1.47");
	negotiation("1.9", "1.9");
	negotiation("1.41", "1.41");
	negotiation("", "1.24");
}

TEST(fake)
{
	rm_error err = RM_ERROR_INIT;
	rm_docker *d = NULL;
	char *sock = rm_xasprintf("%s/fake.sock", tmp);
	char *logp = rm_xasprintf("%s/fake.log", tmp);
	char big[10000];
	rm_buf frames = RM_BUF_INIT(1 << 20);

	memset(big, 'x', sizeof(big));
	frame(&frames, 1, "line one\nline ");
	frame(&frames, 2, "warning\n");
	frame(&frames, 1, "two\n");
	const fake_route routes[] = {
	    {"GET", "/version", 200, "{\"ApiVersion\":\"1.41\",\"Os\":\"linux\"}", 0, NULL},
	    {"POST", "/containers/create?name=ok", 201, "{\"Id\":\"abc123\",\"Warnings\":[]}", 0,
	     NULL},
	    {"POST", "/containers/create?name=dup", 409,
	     "{\"message\":\"Conflict. The container name \\\"/dup\\\" is already in use\"}", 0,
	     NULL},
	    {"POST", "/containers/abc123/start", 204, "", 0, NULL},
	    {"POST", "/containers/gone/kill?signal=SIGKILL", 409,
	     "{\"message\":\"Container gone is not running\"}", 0, NULL},
	    {"POST", "/containers/paused/kill?signal=SIGTERM", 409,
	     "{\"message\":\"Container paused is paused\"}", 0, NULL},
	    {"DELETE", "/containers/gone?force=1&v=1", 404,
	     "{\"message\":\"No such container: gone\"}", 0, NULL},
	    {"GET", "/images/missing/json", 404, "{\"message\":\"No such image: missing:latest\"}",
	     0, NULL},
	    {"GET", "/containers/whatever/json", 500, "boom\n", 0, "Content-Type: text/plain\r\n"},
	    {"POST", "/build?version=1&rm=1&forcerm=1&t=good&*", 200,
	     "{\"stream\":\"Step 1/2 : FROM scratch\\n\"}\r\n"
	     "{\"stream\":\" ---> Running\"}\r\n{\"stream\":\" in x\\nStep 2/2\"}\r\n"
	     "{\"aux\":{\"ID\":\"sha256:111\"}}\r\n"
	     "{\"stream\":\" : CMD\\n\"}\r\n{\"aux\":{\"ID\":\"sha256:222\"}}\r\n"
	     "{\"stream\":\"Successfully built 222\\n\"}\r\n",
	     0, NULL},
	    {"POST", "/build?version=1&rm=1&forcerm=1&t=bad&*", 200,
	     "{\"stream\":\"Step 1/1 : RUN false\\n\"}\r\n"
	     "{\"errorDetail\":{\"code\":1,\"message\":\"The command '/bin/sh -c "
	     "false' returned a non-zero code: 1\"},\"error\":\"The command\"}\r\n",
	     0, NULL},
	    {"POST", "/build?version=1&rm=1&forcerm=1&t=noid&*", 200, "{\"stream\":\"done\"}", 0,
	     NULL},
	    {"GET", "/containers/abc123/logs?follow=1&stdout=1&stderr=1", 200, frames.data,
	     frames.len, NULL},
	    {"GET", "/containers/cut/logs?follow=1&stdout=1&stderr=1", 200,
	     "\1\0\0\0\0\0\0\x10short", 13, NULL},
	    {"POST", "/containers/abc123/wait?condition=next-exit", 200,
	     "{\"StatusCode\":3,\"Error\":null}", 0, NULL},
	    {"POST", "/containers/err/wait", 200,
	     "{\"StatusCode\":137,\"Error\":{\"Message\":\"oom\"}}", 0, NULL},
	    /* no answer until the client gives up */
	    {"POST", "/containers/slow/*", 0, "", 0, NULL},
	    {"GET", "/containers/slow/*", 0, "", 0, NULL},
	    {"GET", "/containers/abc123/archive?path=%2Fbig", 200, big, sizeof(big), NULL},
	    {"PUT", "/containers/abc123/archive?path=*", 200, "", 0, NULL},
	    {"GET", "/containers/abc123/archive?path=*", 404,
	     "{\"message\":\"Could not find the file /none in container abc123\"}", 0, NULL},
	    {"GET", "/containers/json?all=1&filters=*", 200, "[{\"Id\":\"aaa\"},{\"Id\":\"bbb\"}]",
	     0, NULL},
	    {NULL, NULL, 0, NULL, 0, NULL},
	};
	pid_t pid = fake_start(sock, routes, logp);
	char *host = rm_xasprintf("unix://%s", sock);
	CHECK(setenv("DOCKER_HOST", host, 1) == 0);
	if (rm_engine_open(&d, NULL, &err) != 0) {
		fprintf(stderr, "fake engine: %s\n", err.msg);
		CHECK(0);
		goto out;
	}
	CHECK_STR(rm_engine_api_version(d), "1.41");

	json_t *j = NULL;
	CHECK(rm_engine_version(d, &j, &err) == 0);
	CHECK_STR(json_string_value(json_object_get(j, "Os")), "linux");
	json_decref(j);

	/* create: JSON body, id back; an engine error keeps status and message. */
	json_t *body = json_pack("{s:s, s:[s,s]}", "Image", "img", "Cmd", "echo", "hi");
	char *id = NULL;
	CHECK(rm_engine_create(d, "ok", body, &id, &err) == 0);
	CHECK_STR(id, "abc123");
	free(id);
	CHECK(rm_engine_create(d, "dup", body, &id, &err) < 0);
	CHECK(strstr(err.msg, "POST /containers/create: 409 conflict. The container name") != NULL);
	CHECK(strstr(err.msg, "name=dup") == NULL);
	CHECK(err.kind == RM_ERR_DOCKER);
	json_decref(body);

	CHECK(rm_engine_start(d, "abc123", &err) == 0);
	CHECK(rm_engine_kill(d, "gone", NULL, &err) == 0);
	CHECK(rm_engine_kill(d, "paused", "SIGTERM", &err) < 0);
	CHECK(strstr(err.msg, "409 container paused is paused") != NULL);
	CHECK(rm_engine_remove(d, "gone", &err) == 0);
	CHECK(rm_engine_image_inspect(d, "missing", &j, &err) < 0);
	CHECK(strstr(err.msg, "no such image") != NULL);
	CHECK(rm_engine_inspect(d, "whatever", &j, &err) < 0);
	CHECK(strstr(err.msg, "GET /containers/whatever/json: 500 boom") != NULL);

	/* build: lines across objects, the last aux ID, errors inside the 200 stream. */
	char *ctx = rm_xasprintf("%s/ctx.tar", tmp);
	int fd = open(ctx, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(write(fd, "0123456789", 10) == 10);
	close(fd);
	struct lines lines = {RM_BUF_INIT(1 << 20)};
	json_t *args = json_pack("{s:s}", "A", "x y&z");
	rm_build_opts bo = {.context_tar = ctx,
			    .dockerfile = "docker/x.Dockerfile",
			    .tag = "good",
			    .buildargs = args,
			    .nocache = 1,
			    .networkmode = "host",
			    .on_line = on_line,
			    .ud = &lines};
	char *image = NULL;
	CHECK(rm_engine_build(d, &bo, &image, &err) == 0);
	CHECK_STR(image, "sha256:222");
	CHECK_STR(rm_buf_str(&lines.all),
		  "Step 1/2 : FROM scratch| ---> Running in x|Step 2/2 : CMD|Successfully built "
		  "222|");
	free(image);
	image = NULL;
	bo.tag = "bad";
	CHECK(rm_engine_build(d, &bo, &image, &err) < 0);
	CHECK(strstr(err.msg, "returned a non-zero code: 1") != NULL);
	CHECK(image == NULL);
	bo.tag = "noid";
	CHECK(rm_engine_build(d, &bo, &image, &err) < 0);
	CHECK(strstr(err.msg, "no image id") != NULL);
	bo.context_tar = "/nonexistent/ctx.tar";
	CHECK(rm_engine_build(d, &bo, &image, &err) < 0);
	CHECK(strstr(err.msg, "/nonexistent/ctx.tar") != NULL);
	json_decref(args);
	rm_buf_release(&lines.all);

	/* logs, wait, cancellation. */
	rm_buf logs = RM_BUF_INIT(1 << 20);
	CHECK(rm_engine_logs(d, "abc123", 0, on_log, &logs, NULL, NULL, &err) == 0);
	/* Pieces may be split anywhere; compare the per-stream concatenation. */
	{
		rm_buf out = RM_BUF_INIT(1 << 20), errs = RM_BUF_INIT(1 << 20);
		const char *p = rm_buf_str(&logs);
		while (*p) {
			int stream = *p - '0';
			const char *bar = strchr(p + 2, '|');
			rm_buf_add(stream == 1 ? &out : &errs, p + 2, (size_t)(bar - p - 2));
			p = bar + 1;
		}
		CHECK_STR(rm_buf_str(&out), "line one\nline two\n");
		CHECK_STR(rm_buf_str(&errs), "warning\n");
		rm_buf_release(&out);
		rm_buf_release(&errs);
	}
	rm_buf_reset(&logs);
	CHECK(rm_engine_logs(d, "cut", 0, on_log, &logs, NULL, NULL, &err) < 0);
	CHECK(strstr(err.msg, "inside a frame") != NULL);
	long status = -1;
	CHECK(rm_engine_wait(d, "abc123", "next-exit", &status, NULL, NULL, &err) == 0);
	CHECK(status == 3);
	CHECK(rm_engine_wait(d, "err", NULL, &status, NULL, NULL, &err) < 0);
	CHECK(status == 137);
	CHECK(strstr(err.msg, "oom") != NULL);
	/* Cancelled once the engine has the request, which it never answers: the client hangs up
	 * itself (the engine's log says so), it does not wait for the engine. */
	fake_cancel slow_wait = {logp, "POST /v1.41/containers/slow/wait"};
	CHECK(rm_engine_wait(d, "slow", NULL, &status, fake_cancel_once_logged, &slow_wait, &err) ==
	      RM_ENGINE_CANCELLED);
	CHECK_STR(err.msg, "cancelled");
	CHECK(fake_wait_logged(logp, "closed by the client: POST /v1.41/containers/slow/wait") ==
	      0);
	fake_cancel slow_logs = {logp, "GET /v1.41/containers/slow/logs"};
	CHECK(rm_engine_logs(d, "slow", 1, on_log, &logs, fake_cancel_once_logged, &slow_logs,
			     &err) == RM_ENGINE_CANCELLED);
	rm_buf_release(&logs);

	/* archives */
	char *out = rm_xasprintf("%s/got.tar", tmp);
	fd = open(out, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(rm_engine_get_archive(d, "abc123", "/big", fd, 20000, &err) == 0);
	CHECK(lseek(fd, 0, SEEK_END) == 10000);
	CHECK(rm_engine_get_archive(d, "abc123", "/big", fd, 100, &err) < 0);
	CHECK(strstr(err.msg, "100 bytes") != NULL);
	CHECK(rm_engine_get_archive(d, "abc123", "/none", fd, 100, &err) < 0);
	CHECK(err.kind == RM_ERR_INPUT);
	CHECK(strstr(err.msg, "no such file") != NULL);
	close(fd);
	CHECK(rm_engine_put_archive(d, "abc123", "/", ctx, &err) == 0);

	char **ids = NULL;
	size_t n = 0;
	CHECK(rm_engine_list_by_label(d, "rm.run=1 2", &ids, &n, &err) == 0);
	CHECK(n == 2 && ids && ids[2] == NULL);
	if (n == 2) {
		CHECK_STR(ids[0], "aaa");
		CHECK_STR(ids[1], "bbb");
	}
	rm_strv_free(ids);

	/* What the client sent. */
	char *log = slurp(logp);
	CHECK(strstr(log, "GET /_ping HTTP/1.1") != NULL);
	CHECK(strstr(log, "POST /v1.41/containers/abc123/start HTTP/1.1") != NULL);
	const char *start = strstr(log, "/containers/abc123/start");
	CHECK(start && strstr(start, "Content-Length: 0\r\n") &&
	      strstr(start, "Content-Length: 0\r\n") < strstr(start, "body="));
	CHECK(strstr(log, "Expect:") == NULL);
	CHECK(strstr(log, "Content-Type: application/x-tar") != NULL);
	CHECK(strstr(log, "POST /v1.41/build?version=1&rm=1&forcerm=1&t=good&dockerfile=docker%"
			  "2Fx.Dockerfile&buildargs=%7B%22A%22%3A%22x%20y%26z%22%7D&nocache=1&"
			  "networkmode=host HTTP/1.1") != NULL);
	CHECK(strstr(log, "PUT /v1.41/containers/abc123/archive?path=%2F HTTP/1.1") != NULL);
	CHECK(strstr(log, "filters=%7B%22label%22%3A%5B%22rm.run%3D1%202%22%5D%7D") != NULL);
	CHECK(strstr(log, "DELETE /v1.41/containers/gone?force=1&v=1") != NULL);
	CHECK(strstr(log, "body=10\n") != NULL); /* the context file, streamed */
	free(log);

	free(out);
	free(ctx);
out:
	rm_engine_close(d);
	unsetenv("DOCKER_HOST");
	fake_stop(pid);
	rm_buf_release(&frames);
	free(host);
	free(sock);
	free(logp);
}

/* ---- real engine ---- */

static void copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	char buf[65536];
	ssize_t n;
	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		CHECK(write(out, buf, (size_t)n) == n);
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static char *tar_of_context(const char *ctx)
{
	rm_error err = RM_ERROR_INIT;
	char *tar = rm_xasprintf("%s/live.tar", tmp);
	char *name = NULL;
	int fd = open(tar, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(rm_tar_build_context(ctx, NULL, fd, &name, &err) == 0);
	close(fd);
	free(name);
	return tar;
}

static void live(void)
{
	const char *busybox = "/bin/busybox";
	rm_error err = RM_ERROR_INIT;
	rm_docker *d = NULL;
	char *ctx = rm_xasprintf("%s/live", tmp), *p;

	if (access(busybox, X_OK) != 0) {
		printf("live engine tests skipped: no %s\n", busybox);
		free(ctx);
		return;
	}
	if (rm_engine_open(&d, NULL, &err) < 0) {
		fprintf(stderr, "DOCKER_HOST is set but: %s\n", err.msg);
		CHECK(0);
		free(ctx);
		return;
	}
	mkdir(ctx, 0755);
	copy_file(busybox, p = rm_xasprintf("%s/busybox", ctx));
	free(p);
	write_text(p = rm_xasprintf("%s/Dockerfile", ctx),
		   "FROM scratch\nARG GREETING\nCOPY busybox /bin/busybox\n"
		   "RUN [\"/bin/busybox\", \"--install\", \"-s\", \"/bin\"]\n"
		   "RUN echo \"greeting=$GREETING\"\n");
	free(p);
	char *tar = tar_of_context(ctx);
	struct lines lines = {RM_BUF_INIT(1 << 20)};
	json_t *args = json_pack("{s:s}", "GREETING", "hello there");
	rm_build_opts bo = {.context_tar = tar,
			    .dockerfile = "Dockerfile",
			    .tag = "rm-test-docker:latest",
			    .buildargs = args,
			    .networkmode = "host",
			    .on_line = on_line,
			    .ud = &lines};
	char *image = NULL, *id = NULL;
	if (rm_engine_build(d, &bo, &image, &err) < 0) {
		fprintf(stderr, "live build: %s\n", err.msg);
		CHECK(0);
		goto out;
	}
	CHECK(rm_starts_with(image, "sha256:"));
	CHECK(strstr(rm_buf_str(&lines.all), "Step 1/5 : FROM scratch|") != NULL);
	CHECK(strstr(rm_buf_str(&lines.all), "greeting=hello there|") != NULL ||
	      strstr(rm_buf_str(&lines.all), "Using cache") != NULL);

	json_t *j = NULL;
	CHECK(rm_engine_image_inspect(d, "rm-test-docker:latest", &j, &err) == 0);
	CHECK_STR(json_string_value(json_object_get(j, "Id")), image);
	json_decref(j);

	/* A failing step is an error inside the 200 stream. */
	write_text(p = rm_xasprintf("%s/Dockerfile", ctx),
		   "FROM rm-test-docker:latest\nRUN [\"/bin/false\"]\n");
	free(p);
	free(tar);
	tar = tar_of_context(ctx);
	bo.context_tar = tar;
	bo.tag = "rm-test-docker:broken";
	char *bad = NULL;
	CHECK(rm_engine_build(d, &bo, &bad, &err) < 0);
	CHECK(strstr(err.msg, "non-zero code") != NULL);

	/* A container running a script copied in with put_archive. */
	char *label = rm_xasprintf("rm.test.docker=%ld", (long)getpid());
	json_t *body =
	    json_pack("{s:s, s:[s,s], s:{s:s}, s:{s:s}}", "Image", image, "Cmd", "sh", "/work/s.sh",
		      "Labels", "rm.test.docker", label + 15, "HostConfig", "NetworkMode", "none");
	if (rm_engine_create(d, NULL, body, &id, &err) < 0) {
		fprintf(stderr, "live create: %s\n", err.msg);
		CHECK(0);
		json_decref(body);
		free(label);
		goto out;
	}
	json_decref(body);
	write_text(p = rm_xasprintf("%s/s.sh", tmp),
		   "echo out; echo err >&2; echo hello > /work/r.txt; exit 3\n");
	char *star = rm_xasprintf("%s/s.tar", tmp);
	int fd = open(star, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(rm_tar_tree(p, "work/s.sh", fd, &err) == 0);
	close(fd);
	free(p);
	CHECK(rm_engine_put_archive(d, id, "/", star, &err) == 0);
	free(star);

	char **ids = NULL;
	size_t n = 0;
	CHECK(rm_engine_list_by_label(d, label, &ids, &n, &err) == 0);
	CHECK(n == 1 && ids && strcmp(ids[0], id) == 0);
	rm_strv_free(ids);
	free(label);

	CHECK(rm_engine_start(d, id, &err) == 0);
	rm_buf logs = RM_BUF_INIT(1 << 20);
	CHECK(rm_engine_logs(d, id, 0, on_log, &logs, NULL, NULL, &err) == 0);
	CHECK(strstr(rm_buf_str(&logs), "1:out\n|") != NULL);
	CHECK(strstr(rm_buf_str(&logs), "2:err\n|") != NULL);
	rm_buf_release(&logs);
	long status = -1;
	CHECK(rm_engine_wait(d, id, "not-running", &status, NULL, NULL, &err) == 0);
	CHECK(status == 3);

	char *rt = rm_xasprintf("%s/r.tar", tmp), *rf = rm_xasprintf("%s/r.txt", tmp);
	fd = open(rt, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(rm_engine_get_archive(d, id, "/work/r.txt", fd, 1 << 20, &err) == 0);
	lseek(fd, 0, SEEK_SET);
	int out = open(rf, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(rm_tar_extract_one(fd, out, 100, &err) == 0);
	close(out);
	close(fd);
	char *got = slurp(rf);
	CHECK_STR(got, "hello\n");
	free(got);
	fd = open(rt, O_RDWR | O_TRUNC | O_CLOEXEC);
	CHECK(rm_engine_get_archive(d, id, "/work/r.txt", fd, 100, &err) < 0);
	CHECK(rm_engine_get_archive(d, id, "/nope", fd, 1 << 20, &err) < 0);
	CHECK(err.kind == RM_ERR_INPUT && strstr(err.msg, "no such file"));
	close(fd);
	free(rt);
	free(rf);

	CHECK(rm_engine_kill(d, id, NULL, &err) == 0); /* not running: fine */
out:
	if (id) {
		CHECK(rm_engine_remove(d, id, &err) == 0);
		CHECK(rm_engine_remove(d, id, &err) == 0); /* gone: fine */
		json_t *gone = NULL;
		CHECK(rm_engine_inspect(d, id, &gone, &err) < 0);
		CHECK(strstr(err.msg, "404") != NULL);
	}
	free(id);
	free(image);
	free(tar);
	json_decref(args);
	rm_buf_release(&lines.all);
	rm_engine_close(d);
	free(ctx);
}

TEST(live)
{
	if (live_host && *live_host) {
		setenv("DOCKER_HOST", live_host, 1);
		live();
	} else {
		printf("live engine tests skipped: DOCKER_HOST is not set\n");
	}
}
