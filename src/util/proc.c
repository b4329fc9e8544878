/*
 * Helper programs run with posix_spawnp and captured through pipes (see rm/util.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rm/util.h"

extern char **environ;

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Appends what is readable on *fd to b (up to its max; the rest is dropped); closes *fd at
 * end of file or on an error. */
static void drain(int *fd, rm_buf *b, int *truncated)
{
	char chunk[4096];
	ssize_t n = read(*fd, chunk, sizeof(chunk));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		close_fd(fd);
		return;
	}
	size_t room = b->max - b->len;
	if ((size_t)n > room)
		*truncated = 1;
	(void)rm_buf_add(b, chunk, (size_t)n < room ? (size_t)n : room);
}

static int spawn(char *const argv[], int in_fd, int out_fd, int err_fd, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t all, none;
	int rc;

	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	posix_spawn_file_actions_adddup2(&fa, in_fd, 0);
	posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
	posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
	sigfillset(&all);
	sigemptyset(&none);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK |
					  POSIX_SPAWN_SETPGROUP);
	rc = posix_spawnp(pid, argv[0], &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	return rc;
}

int rm_proc_run(char *const argv[], const char *input, double timeout, size_t max_out,
		rm_proc_out *res, rm_error *err)
{
	int ret = -1, rc;
	int in[2] = {-1, -1}, out[2] = {-1, -1}, er[2] = {-1, -1};
	rm_buf ob = RM_BUF_INIT(max_out), eb = RM_BUF_INIT(max_out);
	pid_t pid = -1;
	size_t in_len = input ? strlen(input) : 0, in_off = 0;
	double deadline = timeout > 0 ? rm_now() + timeout : 0;
	int status = 0, poll_failed = 0;

	memset(res, 0, sizeof(*res));
	/* Said before spawning: where posix_spawn cannot report a failed exec (valgrind runs
	 * the child as a fork), the child would only exit 127. */
	if (strchr(argv[0], '/') ? access(argv[0], X_OK) != 0 : !rm_on_path(argv[0])) {
		rm_error_set(err, RM_ERR_IO, "cannot run '%s': no such program%s", argv[0],
			     strchr(argv[0], '/') ? "" : " on PATH");
		goto out;
	}
	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(er, O_CLOEXEC) != 0) {
		rm_error_set(err, RM_ERR_IO, "cannot run '%s': pipe: %s", argv[0], strerror(errno));
		goto out;
	}
	rc = spawn(argv, in[0], out[1], er[1], &pid);
	if (rc != 0) {
		pid = -1;
		if (rc == ENOENT)
			rm_error_set(err, RM_ERR_IO, "cannot run '%s': no such program on PATH",
				     argv[0]);
		else
			rm_error_set(err, RM_ERR_IO, "cannot run '%s': %s", argv[0], strerror(rc));
		goto out;
	}
	close_fd(&in[0]);
	close_fd(&out[1]);
	close_fd(&er[1]);
	if (!in_len)
		close_fd(&in[1]);
	else
		(void)fcntl(in[1], F_SETFL, O_NONBLOCK);

	while (out[0] >= 0 || er[0] >= 0) {
		struct pollfd p[3];
		int np = 0, wait_ms = -1;
		if (out[0] >= 0)
			p[np++] = (struct pollfd){.fd = out[0], .events = POLLIN};
		if (er[0] >= 0)
			p[np++] = (struct pollfd){.fd = er[0], .events = POLLIN};
		if (in[1] >= 0)
			p[np++] = (struct pollfd){.fd = in[1], .events = POLLOUT};
		if (deadline > 0) {
			double left = deadline - rm_now();
			if (left <= 0) {
				res->timed_out = 1;
				break;
			}
			wait_ms = (int)(left * 1000) + 1;
		}
		if (poll(p, (nfds_t)np, wait_ms) < 0 && errno != EINTR) {
			rm_error_set(err, RM_ERR_IO, "'%s': poll: %s", argv[0], strerror(errno));
			poll_failed = 1;
			break;
		}
		for (int i = 0; i < np; i++) {
			if (!p[i].revents)
				continue;
			if (p[i].fd == out[0])
				drain(&out[0], &ob, &res->truncated);
			else if (p[i].fd == er[0])
				drain(&er[0], &eb, &res->truncated);
			else if (p[i].fd == in[1]) {
				ssize_t w = write(in[1], input + in_off, in_len - in_off);
				if (w > 0)
					in_off += (size_t)w;
				/* A reader that went away (EPIPE) just gets no more input. */
				if ((w < 0 && errno != EAGAIN && errno != EINTR) ||
				    in_off == in_len)
					close_fd(&in[1]);
			}
		}
	}
	if (res->timed_out || poll_failed)
		kill(-pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status))
		res->status = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		res->status = 128 + WTERMSIG(status);
	if (res->timed_out)
		rm_error_set(err, RM_ERR_IO, "'%s' did not finish within %g s", argv[0], timeout);
	else if (!poll_failed)
		ret = 0;
out:
	close_fd(&in[0]);
	close_fd(&in[1]);
	close_fd(&out[0]);
	close_fd(&out[1]);
	close_fd(&er[0]);
	close_fd(&er[1]);
	res->out_len = ob.len;
	res->out = rm_buf_detach(&ob);
	res->err_len = eb.len;
	res->err = rm_buf_detach(&eb);
	return ret;
}

void rm_proc_out_release(rm_proc_out *res)
{
	if (!res)
		return;
	free(res->out);
	free(res->err);
	res->out = res->err = NULL;
	res->out_len = res->err_len = 0;
}
