#include <stdlib.h>
#include <string.h>

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
}
