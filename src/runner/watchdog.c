/*
 * The watchdog: a process of its own that outlives a runner killed with SIGKILL (or by the
 * OOM killer) and removes what its run left. It holds the read end of a pipe whose write
 * end only the runner has: a byte means the run ended as it should (nothing to do), end of
 * file without a byte means the runner died. It is a grandchild in a session of its own, so
 * Ctrl-C on the terminal does not reach it and no zombie is left; fork happens before any
 * thread exists, and the engine client keeps no connection open between calls, so the
 * child can use the launcher it inherits.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "rm/util.h"

static void watch(struct run *r, int fd)
{
	char c;
	ssize_t n;
	rm_error err = RM_ERROR_INIT;

	do
		n = read(fd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1)
		return; /* the run ended: its own clean-up has run */
	if (r->launcher.ops->sweep(r->launcher.state, &err) < 0)
		rm_warn("watchdog of run %s: the runner died and what it started could not be "
			"removed: %s",
			r->run_id, rm_error_text(&err));
	else
		rm_warn("watchdog of run %s: the runner died; what its run started was "
			"removed",
			r->run_id);
}

int rm_runner__watchdog_start(struct run *r)
{
	int fds[2];
	pid_t child;

	if (pipe2(fds, O_CLOEXEC) != 0)
		return -1;
	fflush(NULL); /* the children must not write out the parent's buffers again */
	child = fork();
	if (child < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (child == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		close(fds[1]);
		/* A pipe on stdin or stdout (run_models | tee) must not stay open for the
		 * watchdog's sake; stderr stays for its one message. */
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
			close(null);
		}
		setsid();
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		signal(SIGPIPE, SIG_IGN);
		if (fork() == 0)
			watch(r, fds[0]);
		_exit(0); /* no atexit handlers, no stdio flush: the runner owns those */
	}
	close(fds[0]);
	while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
		;
	r->watchdog_fd = fds[1];
	return 0;
}

void rm_runner__watchdog_done(struct run *r)
{
	if (r->watchdog_fd <= 0)
		return;
	if (write(r->watchdog_fd, "x", 1) != 1)
		rm_warn("cannot tell the watchdog of run %s that the run ended: %s", r->run_id,
			"write failed");
	close(r->watchdog_fd);
	r->watchdog_fd = -1;
}
