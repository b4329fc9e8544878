/*
 * The fake Docker engine of the unit tests, table-driven: a forked process serving canned
 * answers on a unix socket. Each request is matched against the routes in order (method, and
 * the path after the /v1.NN prefix: exactly, or as a prefix when the route's path ends in
 * '*'); the first match answers, in 7-byte pieces so the client sees JSON lines and frames
 * split anywhere. A route with status 0 never answers (the client must give up or cancel);
 * when the client closes the connection the log says so ("closed by the client: GET /v1.41/
 * containers/x/wait"). Every request head (and its body size) is appended to a log file so
 * tests can check what the client sent. /_ping answers with API-Version 1.41 unless a route
 * answers it; unmatched requests get a 500.
 */
#ifndef RM_FAKE_ENGINE_H
#define RM_FAKE_ENGINE_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rm/util.h"

typedef struct fake_route {
	const char *method;
	const char *path;
	int status;
	const char *body;
	size_t len;	     /* of body; 0: strlen(body) (a body with NUL bytes: stream frames) */
	const char *headers; /* header lines ("Name: value\r\n"); NULL: a JSON Content-Type */
} fake_route;

static void fake_send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

static void fake_respond(int fd, int status, const char *headers, const char *body, size_t len)
{
	char head[512];
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %d X\r\nContent-Length: %zu\r\nConnection: close\r\n%s\r\n",
			 status, len, headers ? headers : "Content-Type: application/json\r\n");
	fake_send_all(fd, head, (size_t)n);
	for (size_t off = 0; off < len; off += 7) {
		fake_send_all(fd, body + off, len - off < 7 ? len - off : 7);
		usleep(100);
	}
}

static void fake_serve_one(int fd, const fake_route *routes, const char *logpath)
{
	char req[65536], buf[65536];
	size_t len = 0, head, body;
	char *end = NULL;
	long clen = 0;

	while (len < sizeof(req) - 1 && !end) {
		ssize_t n = read(fd, req + len, sizeof(req) - 1 - len);
		if (n <= 0)
			return;
		len += (size_t)n;
		req[len] = '\0';
		end = strstr(req, "\r\n\r\n");
	}
	if (!end)
		return;
	head = (size_t)(end - req) + 4;
	const char *cl = strstr(req, "Content-Length: ");
	if (cl && cl < end) {
		char *num = rm_xstrndup(cl + 16, strcspn(cl + 16, "\r"));
		rm_parse_long(num, 0, 1L << 40, &clen);
		free(num);
	}
	body = len - head;
	while ((long)body < clen) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		body += (size_t)n;
	}
	FILE *log = fopen(logpath, "a");
	if (log) {
		fprintf(log, "%.*sbody=%zu\n\n", (int)(head - 2), req, body);
		fclose(log);
	}

	char method[16], path[4096];
	const char *sp = strchr(req, ' ');
	if (!sp)
		return;
	snprintf(method, sizeof(method), "%.*s", (int)(sp - req), req);
	snprintf(path, sizeof(path), "%.*s", (int)strcspn(sp + 1, " "), sp + 1);
	const char *p = path;
	if (strncmp(p, "/v1.", 4) == 0)
		p = strchr(p + 1, '/');
	for (const fake_route *r = routes; r->method; r++) {
		size_t pl = strlen(r->path);
		int prefix = pl && r->path[pl - 1] == '*';
		if (strcmp(r->method, method) != 0)
			continue;
		if (prefix ? strncmp(p, r->path, pl - 1) != 0 : strcmp(p, r->path) != 0)
			continue;
		if (r->status == 0) {
			alarm(60); /* a safety net for a client that hangs: it is to close first */
			while (read(fd, buf, sizeof(buf)) > 0)
				;
			log = fopen(logpath, "a");
			if (log) {
				fprintf(log, "closed by the client: %s %s\n\n", method, path);
				fclose(log);
			}
			return;
		}
		fake_respond(fd, r->status, r->headers, r->body, r->len ? r->len : strlen(r->body));
		return;
	}
	if (strcmp(p, "/_ping") == 0) {
		fake_respond(fd, 200, "API-Version: 1.41\r\n", "OK", 2);
		return;
	}
	const char *none = "{\"message\":\"no route in the fake engine\"}";
	fake_respond(fd, 500, NULL, none, strlen(none));
}

/* Starts the fake on socket path sock; returns its pid (stop it with fake_stop). */
static pid_t fake_start(const char *sock, const fake_route *routes, const char *logpath)
{
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock);
	unlink(sock);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(s, 16) != 0) {
		perror("fake engine");
		exit(1);
	}
	pid_t pid = fork();
	if (pid != 0) {
		close(s);
		return pid;
	}
	signal(SIGCHLD, SIG_IGN); /* handlers reap themselves */
	for (;;) {
		int c = accept(s, NULL, NULL);
		if (c < 0)
			continue;
		if (fork() == 0) {
			fake_serve_one(c, routes, logpath);
			close(c);
			_exit(0);
		}
		close(c);
	}
}

static void fake_stop(pid_t pid)
{
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
}

/* Whether the log at logpath holds text (read whole: a test's log is small). */
static inline int fake_logged(const char *logpath, const char *text)
{
	char *log = NULL;
	int found;

	if (rm_read_file(logpath, (size_t)16 << 20, &log, NULL, NULL) != 0)
		return 0; /* not there yet */
	found = strstr(log, text) != NULL;
	free(log);
	return found;
}

/* Waits until the log holds text: 0 then, -1 after a minute (a limit for hangs only). */
static inline int fake_wait_logged(const char *logpath, const char *text)
{
	for (int i = 0; i < 6000; i++) {
		if (fake_logged(logpath, text))
			return 0;
		usleep(10 * 1000);
	}
	fprintf(stderr, "the fake engine's log holds no '%s' after a minute\n", text);
	return -1;
}

/* A cancel function (rm_engine_*'s cancel) that cancels once the fake engine has logged a
 * request holding `what`: the request reached the engine, whatever this machine's speed. */
typedef struct fake_cancel {
	const char *logpath;
	const char *what;
} fake_cancel;

static inline int fake_cancel_once_logged(void *ud)
{
	const fake_cancel *c = ud;

	return fake_logged(c->logpath, c->what);
}

#endif
