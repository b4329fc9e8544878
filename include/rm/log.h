/*
 * The runner's own messages to the user: stderr, prefixed, never mixed into model logs or
 * perf files. Warnings ("warning: ...") do not stop anything; errors are printed by main().
 */
#ifndef RM_LOG_H
#define RM_LOG_H

void rm_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void rm_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* 0 = quiet (warnings only), 1 = normal, 2 = verbose. */
void rm_log_set_level(int level);
/* Number of warnings printed so far (tests use it). */
unsigned rm_warn_count(void);

#endif
