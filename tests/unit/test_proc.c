/*
 * rm_proc_run: captured stdout and stderr, stdin, exit statuses and signals, a missing
 * program, the deadline, the output ceiling, and a process group of its own.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "rm/util.h"

static int run(const char *script, const char *input, double timeout, size_t max, rm_proc_out *res,
	       rm_error *err)
{
	char *argv[] = {(char *)"sh", (char *)"-c", (char *)script, NULL};
	return rm_proc_run(argv, input, timeout, max, res, err);
}

int main(void)
{
	rm_error err = RM_ERROR_INIT;
	rm_proc_out res;

	/* stdin reaches the program; stdout and stderr come back apart; the exit code. */
	CHECK(run("cat; echo oops >&2; exit 3", "hello\n", 10, 1024, &res, &err) == 0);
	CHECK_STR(res.out, "hello\n");
	CHECK_STR(res.err, "oops\n");
	CHECK(res.status == 3 && !res.timed_out && !res.truncated);
	rm_proc_out_release(&res);

	/* No input: an empty pipe of its own on stdin, not the test's stdin. */
	CHECK(run("wc -c; readlink /proc/$$/fd/0", NULL, 10, 1024, &res, &err) == 0);
	CHECK(rm_starts_with(res.out, "0\npipe:["));
	rm_proc_out_release(&res);

	/* An input far larger than a pipe buffer while the program also writes a lot: no
	 * deadlock between feeding stdin and draining stdout. */
	{
		size_t n = 1 << 20;
		char *big = rm_xmalloc(n + 1);
		memset(big, 'x', n);
		big[n] = '\0';
		CHECK(run("cat", big, 30, 2 * n, &res, &err) == 0);
		CHECK(res.out_len == n && res.status == 0);
		rm_proc_out_release(&res);
		/* The ceiling: output past max_out is dropped and said so. */
		CHECK(run("cat", big, 30, 100, &res, &err) == 0);
		CHECK(res.out_len == 100 && res.truncated);
		rm_proc_out_release(&res);
		free(big);
	}

	/* Killed by a signal: 128 + N. Default dispositions even though we ignore SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	CHECK(run("kill -TERM $$", NULL, 10, 1024, &res, &err) == 0);
	CHECK(res.status == 143);
	rm_proc_out_release(&res);

	/* Its own process group: the child's pgid is its pid, not ours. */
	CHECK(run("ps -o pgid= -p $$ | tr -d ' '; echo $$", NULL, 10, 1024, &res, &err) == 0);
	{
		char *nl = strchr(res.out, '\n');
		CHECK(nl && strcmp(nl + 1, "") != 0);
		if (nl) {
			*nl = '\0';
			char *pid = rm_trim(nl + 1);
			CHECK_STR(res.out, pid);
			long pg = 0;
			CHECK(rm_parse_long(res.out, 1, 1L << 30, &pg) == 0 && pg != getpgrp());
		}
	}
	rm_proc_out_release(&res);

	/* A missing program says so, with its name. */
	char *argv[] = {(char *)"rm-no-such-program-xyz", NULL};
	CHECK(rm_proc_run(argv, NULL, 10, 1024, &res, &err) < 0);
	CHECK(strstr(err.msg, "'rm-no-such-program-xyz'") && strstr(err.msg, "PATH"));
	rm_proc_out_release(&res);

	/* The deadline kills the whole group (the sleep child too) and returns promptly. */
	rm_error_clear(&err);
	double t0 = rm_now();
	CHECK(run("echo started; sleep 30 & sleep 30", NULL, 0.5, 1024, &res, &err) < 0);
	CHECK(res.timed_out);
	CHECK(rm_now() - t0 < 5);
	CHECK_STR(res.out, "started\n");
	CHECK(strstr(err.msg, "did not finish within 0.5 s") != NULL);
	rm_proc_out_release(&res);
	rm_proc_out_release(NULL);
	return check_summary();
}
