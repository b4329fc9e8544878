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
static void proc_drain(int *fd, rm_buf *b, int *truncated)
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

/* The child's three pipes, seen from here: its stdin's write end, its stdout's and stderr's
 * read ends (-1 once closed). */
struct pump {
	const char *name;
	int in, out, er;
	const char *input;
	size_t in_len, in_off;
	rm_buf ob, eb;
	int truncated;
};

static void feed(struct pump *pp)
{
	ssize_t w = write(pp->in, pp->input + pp->in_off, pp->in_len - pp->in_off);
	if (w > 0)
		pp->in_off += (size_t)w;
	/* A reader that went away (EPIPE) just gets no more input. */
	if ((w < 0 && errno != EAGAIN && errno != EINTR) || pp->in_off == pp->in_len)
		close_fd(&pp->in);
}

/* Whether a signal came or the process-wide interrupt is set (rm_proc_capture gives up then). */
static int proc_cancelled(void)
{
	return rm_signal_received() || rm_interrupt_pending();
}

/* Feeds the input and reads both outputs until they close: 0; 1 when the deadline passed;
 * 2 when cancellable and a signal came; -1 when poll failed (err). */
static int pump_all(struct pump *pp, double deadline, int cancellable, rm_error *err)
{
	while (pp->out >= 0 || pp->er >= 0) {
		struct pollfd p[3];
		int np = 0, wait_ms = -1;
		if (cancellable && proc_cancelled())
			return 2;
		if (pp->out >= 0)
			p[np++] = (struct pollfd){.fd = pp->out, .events = POLLIN};
		if (pp->er >= 0)
			p[np++] = (struct pollfd){.fd = pp->er, .events = POLLIN};
		if (pp->in >= 0)
			p[np++] = (struct pollfd){.fd = pp->in, .events = POLLOUT};
		if (deadline > 0) {
			double left = deadline - rm_now();
			if (left <= 0)
				return 1;
			wait_ms = (int)(left * 1000) + 1;
		}
		if (cancellable && (wait_ms < 0 || wait_ms > 100))
			wait_ms = 100; /* looks at the signal flag 10 times a second */
		if (poll(p, (nfds_t)np, wait_ms) < 0 && errno != EINTR)
			return rm_error_sys(err, RM_ERR_IO, errno, "'%s': poll", pp->name);
		for (int i = 0; i < np; i++) {
			if (!p[i].revents)
				continue;
			if (p[i].fd == pp->out)
				proc_drain(&pp->out, &pp->ob, &pp->truncated);
			else if (p[i].fd == pp->er)
				proc_drain(&pp->er, &pp->eb, &pp->truncated);
			else if (p[i].fd == pp->in)
				feed(pp);
		}
	}
	return 0;
}

/* Spawns argv with the pipes; the child's ends are closed here once it has them. */
static int start(char *const argv[], int in[2], int out[2], int er[2], pid_t *pid, rm_error *err)
{
	int rc;

	/* Said before spawning: where posix_spawn cannot report a failed exec (valgrind runs
	 * the child as a fork), the child would only exit 127. */
	if (strchr(argv[0], '/') ? access(argv[0], X_OK) != 0 : !rm_on_path(argv[0]))
		return rm_error_set(err, RM_ERR_IO, "cannot run '%s': no such program%s", argv[0],
				    strchr(argv[0], '/') ? "" : " on PATH");
	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(er, O_CLOEXEC) != 0)
		return rm_error_sys(err, RM_ERR_IO, errno, "cannot run '%s': pipe", argv[0]);
	rc = spawn(argv, in[0], out[1], er[1], pid);
	if (rc != 0) {
		*pid = -1;
		if (rc == ENOENT)
			return rm_error_set(err, RM_ERR_IO,
					    "cannot run '%s': no such program on PATH", argv[0]);
		return rm_error_sys(err, RM_ERR_IO, rc, "cannot run '%s'", argv[0]);
	}
	close_fd(&in[0]);
	close_fd(&out[1]);
	close_fd(&er[1]);
	return 0;
}

static int proc_run(char *const argv[], const char *input, double timeout, size_t max_out,
		    int cancellable, rm_proc_out *res, rm_error *err)
{
	int in[2] = {-1, -1}, out[2] = {-1, -1}, er[2] = {-1, -1};
	struct pump pp = {argv[0],
			  -1,
			  -1,
			  -1,
			  input,
			  input ? strlen(input) : 0,
			  0,
			  RM_BUF_INIT(max_out),
			  RM_BUF_INIT(max_out),
			  0};
	pid_t pid = -1;
	int status = 0, r = -1, ret = -1;

	memset(res, 0, sizeof(*res));
	if (start(argv, in, out, er, &pid, err) < 0)
		goto out;
	pp.in = in[1];
	pp.out = out[0];
	pp.er = er[0];
	in[1] = out[0] = er[0] = -1;
	if (!pp.in_len)
		close_fd(&pp.in);
	else
		(void)fcntl(pp.in, F_SETFL, O_NONBLOCK);
	r = pump_all(&pp, timeout > 0 ? rm_now() + timeout : 0, cancellable, err);
	res->timed_out = r == 1;
	if (r != 0)
		kill(-pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status))
		res->status = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		res->status = 128 + WTERMSIG(status);
	if (res->timed_out)
		rm_error_set(err, RM_ERR_IO, "'%s' did not finish within %g s", argv[0], timeout);
	else if (r == 2)
		rm_error_sys(err, RM_ERR_IO, EINTR, "'%s' was stopped", argv[0]);
	else if (r == 0)
		ret = 0;
out:
	for (int i = 0; i < 2; i++) {
		close_fd(&in[i]);
		close_fd(&out[i]);
		close_fd(&er[i]);
	}
	close_fd(&pp.in);
	close_fd(&pp.out);
	close_fd(&pp.er);
	res->truncated = pp.truncated;
	res->out_len = pp.ob.len;
	res->out = rm_buf_detach(&pp.ob);
	res->err_len = pp.eb.len;
	res->err = rm_buf_detach(&pp.eb);
	return ret;
}

int rm_proc_run(char *const argv[], const char *input, double timeout, size_t max_out,
		rm_proc_out *res, rm_error *err)
{
	return proc_run(argv, input, timeout, max_out, 0, res, err);
}

int rm_proc_capture(char *const argv[], double timeout, size_t max_out, rm_proc_out *res,
		    rm_error *err)
{
	return proc_run(argv, NULL, timeout, max_out, 1, res, err);
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
