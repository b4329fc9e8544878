/*
 * Which process a runner is, in a form that survives it: host, pid and the pid's start
 * time, so that a later run can tell a dead runner from a live one (or from a new process
 * that got the same pid).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rm/util.h"

long long rm_process_start(long pid)
{
	char path[64], *text = NULL, *p;
	long long start = -1;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if (rm_read_file(path, 1 << 16, &text, NULL, NULL) != 0)
		return -1;
	/* "pid (comm) state ppid ...": comm may hold spaces and ')', so count from the last
	 * ')'; starttime is field 22, the 20th after it. */
	p = strrchr(text, ')');
	for (int field = 2; p && field < 22; field++) {
		p = strchr(p + 1, ' ');
	}
	if (p)
		start = strtoll(p + 1, NULL, 10);
	free(text);
	return start;
}

int rm_process_gone(long pid, long long start)
{
	long long now;

	if (pid <= 0)
		return 0;
	if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
		return 1;
	now = rm_process_start(pid);
	/* Another process got the pid; without /proc we cannot tell, so it counts as alive. */
	return start >= 0 && now >= 0 && now != start;
}

static int (*interrupt_fn)(void *);
static void *interrupt_ud;

void rm_interrupt_set(int (*fn)(void *ud), void *ud)
{
	interrupt_fn = fn;
	interrupt_ud = ud;
}

int rm_interrupt_pending(void)
{
	return interrupt_fn && interrupt_fn(interrupt_ud);
}
