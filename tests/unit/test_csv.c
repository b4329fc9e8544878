#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "rm/report.h"
#include "rm/util.h"

static void test_quote(void)
{
	rm_buf b = RM_BUF_INIT(1024);
	const char *f[] = {"plain", "a,b", "say \"hi\"", "two\nlines", NULL, ""};
	CHECK(rm_csv_record(&b, f, 6) == 0);
	CHECK_STR(rm_buf_str(&b), "plain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",,\n");
	rm_buf_release(&b);
}

static void test_read_back(const char *dir)
{
	char *path = rm_xasprintf("%s/rt.csv", dir);
	const char *hdr[] = {"a", "b", "c"};
	const char *rows[] = {"1", "x,y", "q\"uote", "2", "multi\nline", ""};
	rm_error err = RM_ERROR_INIT;
	char **v;
	size_t n;

	CHECK(rm_csv_append(path, hdr, 3, rows, 2, &err) == 0);
	FILE *f = fopen(path, "r");
	CHECK(f != NULL);
	CHECK(rm_csv_read_record(f, &v, &n, &err) == 1 && n == 3);
	CHECK_STR(v[0], "a");
	rm_strv_free(v);
	CHECK(rm_csv_read_record(f, &v, &n, &err) == 1 && n == 3);
	CHECK_STR(v[1], "x,y");
	CHECK_STR(v[2], "q\"uote");
	rm_strv_free(v);
	CHECK(rm_csv_read_record(f, &v, &n, &err) == 1 && n == 3);
	CHECK_STR(v[1], "multi\nline");
	CHECK_STR(v[2], "");
	rm_strv_free(v);
	CHECK(rm_csv_read_record(f, &v, &n, &err) == 0);
	fclose(f);

	/* A different header is refused and the file is left alone. */
	const char *other[] = {"a", "b", "d"};
	CHECK(rm_csv_append(path, other, 3, rows, 1, &err) == -1);
	CHECK(strstr(err.msg, "different header") != NULL);

	/* A foreign writer's torn last row gets a newline before ours. */
	f = fopen(path, "a");
	fputs("3,torn", f);
	fclose(f);
	CHECK(rm_csv_append(path, hdr, 3, rows, 1, &err) == 0);
	f = fopen(path, "r");
	int records = 0;
	while (rm_csv_read_record(f, &v, &n, &err) == 1) {
		records++;
		if (records == 5)
			CHECK_STR(v[0], "1");
		rm_strv_free(v);
	}
	fclose(f);
	CHECK(records == 5);
	unlink(path);
	free(path);
}

/* Several processes append at once: every row must come out whole, the header once. */
static void test_concurrent(const char *dir)
{
	enum { PROCS = 6, ROWS = 150 };
	char *path = rm_xasprintf("%s/conc.csv", dir);
	const char *hdr[] = {"proc", "row", "payload"};

	for (int p = 0; p < PROCS; p++) {
		pid_t pid = fork();
		if (pid == 0) {
			char pb[16], payload[600];
			memset(payload, 'a' + p, sizeof(payload) - 1);
			payload[sizeof(payload) - 1] = '\0';
			snprintf(pb, sizeof(pb), "%d", p);
			for (int r = 0; r < ROWS; r++) {
				char rb[16];
				rm_error err = RM_ERROR_INIT;
				snprintf(rb, sizeof(rb), "%d", r);
				const char *row[] = {pb, rb, payload};
				if (rm_csv_append(path, hdr, 3, row, 1, &err) != 0)
					_exit(1);
			}
			_exit(0);
		}
	}
	int ok = 1, status;
	while (wait(&status) > 0)
		ok &= WIFEXITED(status) && WEXITSTATUS(status) == 0;
	CHECK(ok);

	FILE *f = fopen(path, "r");
	char **v;
	size_t n;
	int records = 0, good = 0, headers = 0;
	rm_error err = RM_ERROR_INIT;
	while (rm_csv_read_record(f, &v, &n, &err) == 1) {
		records++;
		if (n == 3 && !strcmp(v[0], "proc"))
			headers++;
		else if (n == 3 && strlen(v[2]) == 599 && v[2][0] == 'a' + (v[0][0] - '0'))
			good++;
		rm_strv_free(v);
	}
	fclose(f);
	CHECK(headers == 1);
	CHECK(good == PROCS * ROWS);
	CHECK(records == PROCS * ROWS + 1);
	unlink(path);
	free(path);
}

static int always(void *ud)
{
	(void)ud;
	return 1;
}

/* A lock held by a process that hangs: the append gives up (at once-ish after an
 * interrupt) with a message naming the file, and writes nothing. */
static void test_lock_held(const char *dir)
{
	char *path = rm_xasprintf("%s/locked.csv", dir);
	const char *hdr[] = {"a"}, *row[] = {"1"};
	int fds[2];
	char c;
	pid_t pid;

	CHECK(pipe(fds) == 0);
	pid = fork();
	if (pid == 0) {
		int fd = open(path, O_WRONLY | O_CREAT, 0644);
		close(fds[0]);
		if (fd < 0 || flock(fd, LOCK_EX) != 0)
			_exit(1);
		if (write(fds[1], "x", 1) != 1)
			_exit(1);
		pause(); /* hung, holding the lock */
		_exit(0);
	}
	close(fds[1]);
	CHECK(read(fds[0], &c, 1) == 1);
	rm_interrupt_set(always, NULL);
	double t = rm_now();
	rm_error err = RM_ERROR_INIT;
	CHECK(rm_csv_append(path, hdr, 1, row, 1, &err) < 0);
	CHECK(rm_now() - t < 3.0);
	CHECK(strstr(err.msg, "stayed locked") != NULL);
	CHECK(strstr(err.msg, path) != NULL);
	rm_interrupt_set(NULL, NULL);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(fds[0]);
	struct stat st;
	CHECK(stat(path, &st) == 0 && st.st_size == 0);
	unlink(path);
	free(path);
}

/* Issue 22 (8): a dangling perf.csv symlink is refused by the check and by the append, and
 * its target is never created; a symlink to an existing file is still appended to. */
static void test_dangling_symlink(const char *dir)
{
	char *path = rm_xasprintf("%s/perf.csv", dir), *target = rm_xasprintf("%s/elsewhere", dir);
	const char *hdr[] = {"a"};
	const char *rows[] = {"1"};
	rm_error err = RM_ERROR_INIT;
	struct stat st;

	CHECK(symlink(target, path) == 0);
	CHECK(rm_csv_check(path, hdr, 1, &err) == -1);
	CHECK(strstr(err.msg, "is a symbolic link to") && strstr(err.msg, "not followed"));
	rm_error_clear(&err);
	CHECK(rm_csv_append(path, hdr, 1, rows, 1, &err) == -1);
	CHECK(strstr(err.msg, "does not exist: it is not followed"));
	CHECK(lstat(target, &st) != 0);
	/* pointing at a file that exists is the user's choice: appended there */
	CHECK(close(open(target, O_CREAT | O_WRONLY, 0644)) == 0);
	rm_error_clear(&err);
	CHECK(rm_csv_check(path, hdr, 1, &err) == 0);
	CHECK(rm_csv_append(path, hdr, 1, rows, 1, &err) == 0);
	CHECK(stat(target, &st) == 0 && st.st_size == 4);
	unlink(path);
	unlink(target);
	free(path);
	free(target);
}

int main(void)
{
	char tmpl[] = "/tmp/rm-test-csv-XXXXXX";
	char *dir = mkdtemp(tmpl);
	test_quote();
	test_read_back(dir);
	test_concurrent(dir);
	test_lock_held(dir);
	test_dangling_symlink(dir);
	rmdir(dir);
	return check_summary();
}
