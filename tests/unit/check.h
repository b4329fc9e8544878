/*
 * A minimal unit-test harness: CHECK records a failure and goes on; main returns
 * check_summary(), which prints "N passed, N failed" and is non-zero on any failure.
 */
#ifndef RM_CHECK_H
#define RM_CHECK_H

#include <stdio.h>
#include <string.h>

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

static inline int check_summary(void)
{
	printf("%d passed, %d failed\n", check_passed, check_failed);
	return check_failed ? 1 : 0;
}

#endif
