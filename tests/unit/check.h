/*
 * A minimal unit-test harness. CHECK records a failure and goes on; check_summary() prints
 * "N passed, N failed" and is non-zero on any failure.
 *
 * A unit test file (tests/unit/test_*.c; CMakeLists.txt defines RM_CHECK_MAIN for them) has
 * no main() and no test list: each test is written
 *
 *     TEST(name)
 *     {
 *             CHECK(...);
 *     }
 *
 * which defines test_name() and registers it before main() runs (a constructor). The main()
 * below runs every registered test in the order of the file, says each name and how its
 * checks went, and the number of tests. A test therefore cannot be written and not run: the
 * only way to write one registers it, a second main() does not compile, and a plain
 * `static void test_x(void)` nobody calls is an unused function (an error here;
 * tests/lint/unit-tests.sh refuses one called from a test too).
 *
 * SETUP() and TEARDOWN(), at most one of each per file, run once before the first test and
 * after the last (a temporary folder the tests share, SIGPIPE ignored).
 *
 *     test_x            every test
 *     test_x NAME...    those tests only (setup and teardown too); an unknown name is an error
 *     test_x --list     the names, one a line
 *
 * Other programs (golden files, the live suites) use CHECK with their own main() and return
 * check_summary().
 */
#ifndef RM_CHECK_H
#define RM_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rm/util.h"

static int check_passed, check_failed;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (cond) {                                                                        \
			check_passed++;                                                            \
		} else {                                                                           \
			check_failed++;                                                            \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
		}                                                                                  \
	} while (0)

#define CHECK_STR(a, b)                                                                            \
	do {                                                                                       \
		const char *check_a_ = (a), *check_b_ = (b);                                       \
		if (check_a_ && check_b_ && strcmp(check_a_, check_b_) == 0) {                     \
			check_passed++;                                                            \
		} else {                                                                           \
			check_failed++;                                                            \
			fprintf(stderr, "%s:%d: check failed: %s == %s ('%s' vs '%s')\n",          \
				__FILE__, __LINE__, #a, #b, check_a_ ? check_a_ : "(null)",        \
				check_b_ ? check_b_ : "(null)");                                   \
		}                                                                                  \
	} while (0)

/*
 * Negative tests: the messages (warnings) of what they call are captured instead of printed,
 * so that the test output holds no warning that reads as a real problem. CAPTURE_MESSAGES()
 * starts; CHECK_LOGGED(text) checks that a captured message holds text, then stops and
 * forgets them.
 */
static rm_buf check_log __attribute__((unused)) = RM_BUF_INIT((size_t)1 << 20);
#define CAPTURE_MESSAGES() rm_log_capture(&check_log)
#define CHECK_LOGGED(text)                                                                         \
	do {                                                                                       \
		if (strstr(rm_buf_str(&check_log), (text))) {                                      \
			check_passed++;                                                            \
		} else {                                                                           \
			check_failed++;                                                            \
			fprintf(stderr, "%s:%d: no message holding '%s' (got '%s')\n", __FILE__,   \
				__LINE__, (text), rm_buf_str(&check_log));                         \
		}                                                                                  \
		rm_log_capture(NULL);                                                              \
		rm_buf_release(&check_log);                                                        \
	} while (0)

static inline int check_summary(void)
{
	printf("%d passed, %d failed\n", check_passed, check_failed);
	return check_failed ? 1 : 0;
}

#ifdef RM_CHECK_MAIN

#define CHECK_MAX_TESTS 256

typedef struct check_test {
	const char *name;
	void (*fn)(void);
	int line;
} check_test;

static check_test check_tests[CHECK_MAX_TESTS];
static size_t check_n_tests;
static void (*check_setup_fn)(void), (*check_teardown_fn)(void);

/* Constructors run in no promised order: the tests are kept in the order of the file. */
static void check_register(const char *name, void (*fn)(void), int line)
{
	size_t i = check_n_tests;

	if (check_n_tests == CHECK_MAX_TESTS) {
		fprintf(stderr, "check.h: more than %d tests in one file\n", CHECK_MAX_TESTS);
		abort();
	}
	for (; i > 0 && check_tests[i - 1].line > line; i--)
		check_tests[i] = check_tests[i - 1];
	check_tests[i].name = name;
	check_tests[i].fn = fn;
	check_tests[i].line = line;
	check_n_tests++;
}

#define TEST(name)                                                                                 \
	static void test_##name(void);                                                             \
	__attribute__((constructor)) static void check_register_##name(void)                       \
	{                                                                                          \
		check_register(#name, test_##name, __LINE__);                                      \
	}                                                                                          \
	static void test_##name(void)

#define SETUP()                                                                                    \
	static void check_setup(void);                                                             \
	__attribute__((constructor)) static void check_register_setup(void)                        \
	{                                                                                          \
		check_setup_fn = check_setup;                                                      \
	}                                                                                          \
	static void check_setup(void)

#define TEARDOWN()                                                                                 \
	static void check_teardown(void);                                                          \
	__attribute__((constructor)) static void check_register_teardown(void)                     \
	{                                                                                          \
		check_teardown_fn = check_teardown;                                                \
	}                                                                                          \
	static void check_teardown(void)

static int check_named(int argc, char **argv, const char *name)
{
	for (int a = 1; a < argc; a++)
		if (strcmp(argv[a], name) == 0)
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	size_t ran = 0, failed = 0;

	if (argc == 2 && strcmp(argv[1], "--list") == 0) {
		for (size_t i = 0; i < check_n_tests; i++)
			printf("%s\n", check_tests[i].name);
		return 0;
	}
	for (int a = 1; a < argc; a++) {
		size_t i = 0;
		while (i < check_n_tests && strcmp(check_tests[i].name, argv[a]) != 0)
			i++;
		if (i == check_n_tests) {
			fprintf(stderr, "%s: no test '%s' ('%s --list' lists them)\n", argv[0],
				argv[a], argv[0]);
			return 2;
		}
	}
	if (check_n_tests == 0) {
		fprintf(stderr, "%s: no test registered (write them with TEST(name))\n", argv[0]);
		return 1;
	}
	if (check_setup_fn)
		check_setup_fn();
	for (size_t i = 0; i < check_n_tests; i++) {
		const check_test *t = &check_tests[i];
		int passed = check_passed, fails = check_failed;

		if (argc > 1 && !check_named(argc, argv, t->name))
			continue;
		printf("-- %s\n", t->name);
		fflush(stdout);
		t->fn();
		fails = check_failed - fails;
		passed = check_passed - passed;
		printf("%s %s: %d passed, %d failed\n", fails ? "FAIL" : "ok  ", t->name, passed,
		       fails);
		fflush(stdout);
		ran++;
		failed += fails != 0;
	}
	if (check_teardown_fn)
		check_teardown_fn();
	printf("%zu of %zu tests run, %zu failed; ", ran, check_n_tests, failed);
	return check_summary();
}

#endif /* RM_CHECK_MAIN */

#endif
