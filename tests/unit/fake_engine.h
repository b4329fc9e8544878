/*
 * A table-driven fake Docker engine for unit tests: a forked process serving canned answers
 * on a unix socket. Each request is matched against the routes in order (method, and the path
 * after the /v1.NN prefix: exactly, or as a prefix when the route's path ends in '*'); the
 * first match answers, in 7-byte pieces so the client sees JSON lines and frames split
 * anywhere. A route with status 0 never answers (the client must give up or cancel). Every
 * request head (and its body size) is appended to a log file so tests can check what the
 * client sent. /_ping always answers with API-Version 1.41; unmatched requests get a 500.
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

static void fake_respond(int fd, int status, const char *extra, const char *body)
{
	char head[512];
	size_t len = strlen(body);
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: "
			 "%zu\r\nConnection: close\r\n%s\r\n",
			 status, len, extra ? extra : "");
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
	if (strcmp(p, "/_ping") == 0) {
		fake_respond(fd, 200, "API-Version: 1.41\r\n", "OK");
		return;
	}
	for (const fake_route *r = routes; r->method; r++) {
		size_t pl = strlen(r->path);
		int prefix = pl && r->path[pl - 1] == '*';
		if (strcmp(r->method, method) != 0)
			continue;
		if (prefix ? strncmp(p, r->path, pl - 1) != 0 : strcmp(p, r->path) != 0)
			continue;
		if (r->status == 0) {
			alarm(10); /* a safety net: the client is expected to close first */
			while (read(fd, buf, sizeof(buf)) > 0)
				;
			return;
		}
		fake_respond(fd, r->status, NULL, r->body);
		return;
	}
	fake_respond(fd, 500, NULL, "{\"message\":\"no route in the fake engine\"}");
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

#endif
