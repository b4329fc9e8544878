/*
 * A minimal unit-test harness: CHECK records a failure and goes on; main returns
 * check_summary(), which prints "N passed, N failed" and is non-zero on any failure.
 */
#ifndef RM_CHECK_H
#define RM_CHECK_H

#include <stdio.h>
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

#endif
