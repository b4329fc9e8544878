#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "rm/util.h"

TEST(buf)
{
	rm_buf b = RM_BUF_INIT(10);
	CHECK(rm_buf_addstr(&b, "hello") == 0);
	CHECK(rm_buf_addstr(&b, "world") == 0);
	CHECK_STR(rm_buf_str(&b), "helloworld");
	/* The ceiling holds and a failed add leaves the contents as they were. */
	CHECK(rm_buf_addch(&b, '!') == -1);
	CHECK(b.len == 10);
	CHECK_STR(rm_buf_str(&b), "helloworld");
	rm_buf_consume(&b, 5);
	CHECK_STR(rm_buf_str(&b), "world");
	rm_buf_reset(&b);
	CHECK_STR(rm_buf_str(&b), "");
	CHECK(rm_buf_addf(&b, "%d-%s", 42, "x") == 0);
	CHECK_STR(rm_buf_str(&b), "42-x");
	char *s = rm_buf_detach(&b);
	CHECK_STR(s, "42-x");
	free(s);
	CHECK(b.data == NULL);
	rm_buf_release(&b);
}

TEST(numbers)
{
	long v = 0;
	double d = 0;
	CHECK(rm_parse_long(" 42 ", 0, 100, &v) == 0 && v == 42);
	CHECK(rm_parse_long("-1", -1, 100, &v) == 0 && v == -1);
	CHECK(rm_parse_long("101", 0, 100, &v) == -1);
	CHECK(rm_parse_long("4x", 0, 100, &v) == -1);
	CHECK(rm_parse_long("", 0, 100, &v) == -1);
	CHECK(rm_parse_long("99999999999999999999999", 0, 100, &v) == -1);
	CHECK(rm_parse_double("1.5e3", &d) == 0 && d == 1500.0);
	CHECK(rm_parse_double("nan", &d) == -1);
	CHECK(rm_parse_double("inf", &d) == -1);
	CHECK(rm_parse_double("1.5x", &d) == -1);
	long long b = 0;
	CHECK(rm_parse_size("64G", &b) == 0 && b == 64LL << 30);
	CHECK(rm_parse_size("512m", &b) == 0 && b == 512LL << 20);
	CHECK(rm_parse_size("1.5g", &b) == 0 && b == 3LL << 29);
	CHECK(rm_parse_size("1073741824", &b) == 0 && b == 1073741824LL);
	CHECK(rm_parse_size("8GB", &b) == 0 && b == 8LL << 30);
	CHECK(rm_parse_size("8X", &b) == -1);
	CHECK(rm_parse_size("-1G", &b) == -1);
	CHECK(rm_parse_size("", &b) == -1);
}

/* Issue 22 (12): workload text that a spreadsheet would run as a formula gets a leading
 * "'"; numbers and other text are written as they are. */
TEST(cell_text)
{
	const char *cases[][2] = {
	    {"=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"},
	    {"@SUM(A1:A2)", "'@SUM(A1:A2)"},
	    {"+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"},
	    {"-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"},
	    {"\t=1", "'\t=1"},
	    {"-1.5", "-1.5"},
	    {"+0.00", "+0.00"},
	    {"-3e2", "-3e2"},
	    {"samples_per_sec", "samples_per_sec"},
	    {"", ""},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = rm_cell_text(cases[i][0]);
		CHECK_STR(got, cases[i][1]);
		free(got);
	}
	CHECK(rm_cell_text(NULL) == NULL);
}

TEST(split)
{
	char **v = NULL;
	size_t n = 0;
	rm_error err = RM_ERROR_INIT;

	CHECK(rm_split_words("--model_repo mosaicml/mpt-30b  --test_option throughput", &v, &n,
			     &err) == 0);
	CHECK(n == 4);
	CHECK_STR(v[0], "--model_repo");
	CHECK_STR(v[3], "throughput");
	CHECK(v[4] == NULL);
	rm_strv_free(v);

	CHECK(rm_split_words("a 'b c' \"d \\\"e\\\" $HOME\" f\\ g ''", &v, &n, &err) == 0);
	CHECK(n == 5);
	CHECK_STR(v[1], "b c");
	CHECK_STR(v[2], "d \"e\" $HOME");
	CHECK_STR(v[3], "f g");
	CHECK_STR(v[4], "");
	rm_strv_free(v);

	CHECK(rm_split_words("", &v, &n, &err) == 0 && n == 0 && v[0] == NULL);
	rm_strv_free(v);

	/* `$(...)` and globs stay literal: the words go to the container as argv. */
	CHECK(rm_split_words("$(rm -rf /) *", &v, &n, &err) == 0 && n == 4);
	CHECK_STR(v[0], "$(rm");
	CHECK_STR(v[3], "*");
	rm_strv_free(v);

	CHECK(rm_split_words("a 'b", &v, &n, &err) == -1);
	CHECK(strstr(err.msg, "unterminated") != NULL);
}

TEST(error)
{
	rm_error err = RM_ERROR_INIT;
	CHECK(rm_error_set(&err, RM_ERR_DOCKER, "no such image: '%s'", "x") == -1);
	CHECK(rm_error_wrap(&err, "running '%s'", "smoke") == -1);
	CHECK_STR(err.msg, "running 'smoke': no such image: 'x'");
	CHECK(err.kind == RM_ERR_DOCKER);
	CHECK(err.sys_errno == 0);
	/* No errno and no hint: the text is the message. */
	CHECK_STR(rm_error_text(&err), "running 'smoke': no such image: 'x'");
}

/* Issue 26 (1): the errno is data; strerror's text is added only when the error is shown,
 * after the innermost message, and the hint after it. */
TEST(error_errno)
{
	rm_error err = RM_ERROR_INIT;
	char want[512];

	CHECK(err.kind == RM_ERR_NONE && err.sys_errno == 0 && err.hint == NULL);
	CHECK_STR(rm_error_text(&err), "");
	CHECK(rm_error_sys(&err, RM_ERR_IO, ENOENT, "cannot open '%s'", "models.json") == -1);
	CHECK(err.kind == RM_ERR_IO);
	CHECK(err.sys_errno == ENOENT);
	CHECK(rm_error_missing(&err));
	CHECK_STR(err.msg, "cannot open 'models.json'");
	snprintf(want, sizeof(want), "cannot open 'models.json': %s", strerror(ENOENT));
	CHECK_STR(rm_error_text(&err), want);

	/* Wrapping keeps the errno, the kind and the hint; the context goes in front. */
	CHECK(rm_error_hint(&err, "; create it first") == -1);
	CHECK(rm_error_wrap(&err, "registry") == -1);
	CHECK(err.sys_errno == ENOENT && err.kind == RM_ERR_IO);
	CHECK_STR(err.msg, "registry: cannot open 'models.json'");
	snprintf(want, sizeof(want), "registry: cannot open 'models.json': %s; create it first",
		 strerror(ENOENT));
	CHECK_STR(rm_error_text(&err), want);
	/* A caller with advice of its own drops the hint. */
	rm_error_hint(&err, NULL);
	snprintf(want, sizeof(want), "registry: cannot open 'models.json': %s", strerror(ENOENT));
	CHECK_STR(rm_error_text(&err), want);

	/* ENOTDIR is a missing file too; EACCES is not. */
	rm_error_sys(&err, RM_ERR_IO, ENOTDIR, "cannot open 'a/b'");
	CHECK(rm_error_missing(&err));
	rm_error_sys(&err, RM_ERR_IO, EACCES, "cannot open 'a'");
	CHECK(!rm_error_missing(&err));
	CHECK(!rm_error_missing(NULL));

	/* A plain set starts over: no errno, no hint. */
	rm_error_hint(&err, " (see the log)");
	rm_error_set(&err, RM_ERR_INPUT, "bad");
	CHECK(err.sys_errno == 0 && err.hint == NULL);
	CHECK_STR(rm_error_text(&err), "bad");
	/* A hint without an errno follows the message directly. */
	rm_error_hint(&err, " (see the log)");
	CHECK_STR(rm_error_text(&err), "bad (see the log)");
	rm_error_clear(&err);
	CHECK(err.kind == RM_ERR_NONE && err.sys_errno == 0 && err.hint == NULL);
	CHECK_STR(rm_error_text(&err), "");

	/* An errno of 0 adds nothing; a NULL error is accepted. */
	rm_error_sys(&err, RM_ERR_IO, 0, "short read");
	CHECK_STR(rm_error_text(&err), "short read");
	CHECK(rm_error_sys(NULL, RM_ERR_IO, EIO, "x") == -1);
	CHECK(rm_error_hint(NULL, "x") == -1);

	/* An over-long message is cut, and the text still ends with the cause. */
	char long_name[3000];
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	rm_error_sys(&err, RM_ERR_IO, EACCES, "cannot open '%s'", long_name);
	CHECK(strlen(err.msg) == sizeof(err.msg) - 1);
	CHECK(rm_ends_with(rm_error_text(&err), strerror(EACCES)));
}

/* rm_read_file: a missing file is an error with ENOENT and the file's name, no side
 * channel; the caller decides whether that matters. */
TEST(read_file)
{
	char dir[] = "/tmp/rm_test_util_XXXXXX";
	rm_error err = RM_ERROR_INIT;
	char *text = NULL, *path, *sub;
	size_t len = 0;

	CHECK(mkdtemp(dir) != NULL);
	path = rm_xasprintf("%s/missing.json", dir);
	CHECK(rm_read_file(path, 1024, &text, &len, &err) == -1);
	CHECK(text == NULL);
	CHECK(err.sys_errno == ENOENT);
	CHECK(rm_error_missing(&err));
	CHECK(err.kind == RM_ERR_IO);
	CHECK(strstr(err.msg, path) != NULL);
	CHECK(strstr(err.msg, strerror(ENOENT)) == NULL); /* only in the text */
	CHECK(strstr(rm_error_text(&err), strerror(ENOENT)) != NULL);
	/* Without an error object the failure is still -1. */
	CHECK(rm_read_file(path, 1024, &text, &len, NULL) == -1);

	/* A part of the path is a file: missing as well (ENOTDIR). */
	CHECK(rm_write_file_atomic(path, "{}", 2, 0644, &err) == 0);
	sub = rm_xasprintf("%s/x", path);
	rm_error_clear(&err);
	CHECK(rm_read_file(sub, 1024, &text, &len, &err) == -1);
	CHECK(err.sys_errno == ENOTDIR && rm_error_missing(&err));

	/* A file there: read, no error. */
	rm_error_clear(&err);
	CHECK(rm_read_file(path, 1024, &text, &len, &err) == 0);
	CHECK_STR(text, "{}");
	CHECK(len == 2);
	free(text);
	text = NULL;

	/* Too big: an error that is not a missing file. */
	CHECK(rm_read_file(path, 1, &text, &len, &err) == -1);
	CHECK(!rm_error_missing(&err));
	CHECK(err.kind == RM_ERR_INPUT);

	/* A folder cannot be read, and is not missing. */
	rm_error_clear(&err);
	CHECK(rm_read_file(dir, 1024, &text, &len, &err) == -1);
	CHECK(err.sys_errno != 0 && !rm_error_missing(&err));

	unlink(path);
	rmdir(dir);
	free(sub);
	free(path);
}
