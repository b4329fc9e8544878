#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "rm/csv.h"
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

int main(void)
{
	char tmpl[] = "/tmp/rm-test-csv-XXXXXX";
	char *dir = mkdtemp(tmpl);
	test_quote();
	test_read_back(dir);
	test_concurrent(dir);
	rmdir(dir);
	return check_summary();
}
