/*
 * Secret masking: every occurrence of a secret's value becomes "***" in what the runner
 * writes (live stream, log files, CSVs, messages, dry-run output).
 *
 * Streams are masked as they flow: a secret can be split across chunks, so the masker holds
 * back at most (longest secret - 1) bytes until more data or a flush shows they are not
 * the start of a secret. With no secrets the feed is a plain pass-through (no copy).
 * One rm_mask per stream (stdout and stderr frames interleave).
 */
#ifndef RM_MASK_H
#define RM_MASK_H

#include <stddef.h>

typedef void (*rm_mask_out)(void *ud, const char *p, size_t n);

typedef struct rm_mask {
	char **secrets; /* NULL-terminated copies, longest first; empty values are dropped */
	size_t n;
	size_t maxlen;
	char *hold; /* held-back bytes (capacity maxlen) */
	size_t hold_len;
} rm_mask;

/* Copies the values; duplicates and empty strings are ignored. A value of several lines is
 * masked whole and line by line. */
void rm_mask_init(rm_mask *m, const char *const *values, size_t n);
int rm_mask_active(const rm_mask *m);
void rm_mask_feed(rm_mask *m, const char *data, size_t len, rm_mask_out out, void *ud);
/* Emits whatever is held back. */
void rm_mask_flush(rm_mask *m, rm_mask_out out, void *ud);
void rm_mask_release(rm_mask *m);
/* A new string (caller frees) with every secret replaced; NULL in, NULL out. */
char *rm_mask_string(const rm_mask *m, const char *s);

/* The values of the environment variables whose NAME contains "MAD_SECRETS", as a
 * NULL-terminated vector (free with rm_strv_free); *n receives the count. */
char **rm_secrets_from_env(char *const *envp, size_t *n);

#endif
