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
#include "testfs.h"
#include "rm/util.h"

/*
 * Whether the process whose pid the script wrote to dir/bg is dead (a zombie or gone),
 * waiting for it up to a minute: SIGKILL takes effect at once, and only a process nobody
 * killed is still sleeping then. The pid file comes first (the shell may have been killed
 * before it wrote it: then there is no such child either).
 */
static int gone(const char *dir)
{
	char *file = rm_xasprintf("%s/bg", dir), *text = NULL;
	long pid = 0;
	int dead = 0;
	rm_error err = RM_ERROR_INIT;

	if (rm_read_file(file, 64, &text, NULL, &err) != 0 || !*rm_trim(text)) {
		dead = 1; /* killed before it started the child */
	} else if (rm_parse_long(rm_trim(text), 1, 1L << 30, &pid) == 0) {
		char *stat = rm_xasprintf("/proc/%ld/stat", pid);
		for (int i = 0; i < 600 && !dead; i++) {
			char *st = NULL;
			const char *paren;
			if (rm_read_file(stat, 4096, &st, NULL, &err) != 0)
				dead = 1; /* reaped */
			else if ((paren = strrchr(st, ')')) && (paren[2] == 'Z' || paren[2] == 'X'))
				dead = 1;
			else
				usleep(100 * 1000);
			free(st);
		}
		free(stat);
	}
	free(text);
	free(file);
	return dead;
}

static int run(const char *script, const char *input, double timeout, size_t max, rm_proc_out *res,
	       rm_error *err)
{
	char *argv[] = {(char *)"sh", (char *)"-c", (char *)script, NULL};
	return rm_proc_run(argv, input, timeout, max, res, err);
}

TEST(proc)
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

	/* The deadline kills the whole group (the sleep child too) and returns promptly: the
	 * script never reached its end, and its child in the background is killed, not left to
	 * sleep out its 300 s. No clock of the test is read. */
	rm_error_clear(&err);
	char *dir = tfs_tmpdir("proc");
	char *script = rm_xasprintf("echo started; sleep 300 & echo $! > %s/bg; sleep 30; "
				    "echo finished",
				    dir);
	CHECK(run(script, NULL, 0.5, 1024, &res, &err) < 0);
	CHECK(res.timed_out);
	CHECK_STR(res.out, "started\n");
	CHECK(strstr(err.msg, "did not finish within 0.5 s") != NULL);
	CHECK(gone(dir));
	rm_proc_out_release(&res);
	rm_proc_out_release(NULL);
	tfs_rm_tree(dir);
	free(dir);
	free(script);
}
