/*
 * Small helpers shared by every module: allocation that cannot return NULL, bounded number
 * parsing, string helpers, and the growable buffer with a size ceiling.
 *
 * Allocation failure aborts the program (as git's xmalloc does): there is no useful recovery
 * for a runner that cannot allocate a few bytes, and it keeps every caller simple.
 */
#ifndef RM_UTIL_H
#define RM_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

struct rm_error;

void *rm_xmalloc(size_t n);
void *rm_xcalloc(size_t n, size_t size);
void *rm_xrealloc(void *p, size_t n);
char *rm_xstrdup(const char *s);	    /* NULL in, NULL out */
char *rm_xstrndup(const char *s, size_t n); /* copies at most n bytes, NUL-terminates */
char *rm_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *rm_xvasprintf(const char *fmt, va_list ap);

/*
 * Parses the whole string s (leading/trailing blanks allowed) as a base-10 integer in
 * [min, max]. Returns 0 and sets *out, or -1 (out untouched) on junk, overflow or range.
 */
int rm_parse_long(const char *s, long min, long max, long *out);
/* Same for a finite double (no nan/inf). */
int rm_parse_double(const char *s, double *out);
/* A size as Docker writes it: "64G", "512m", "1.5g", "1073741824" (k m g t, powers of 1024,
 * an optional trailing b). Returns 0 and sets *bytes, or -1. */
int rm_parse_size(const char *s, long long *bytes);

/* Writes all n bytes (retrying short writes and EINTR); 0 or -1 with errno. */
int rm_write_all(int fd, const void *p, size_t n);
/*
 * Reads a whole file of at most max bytes into *out (NUL-terminated; *len, when not NULL,
 * receives its length). Returns 0; 1 without a message when the file does not exist (the
 * caller decides whether that is an error); -1 with err naming the file otherwise.
 */
int rm_read_file(const char *path, size_t max, char **out, size_t *len, struct rm_error *err);
/* Replaces path with text (a temporary file beside it, synced, renamed over it, never
 * through a symlink), so readers see the old file or the new one, never half of it. mode:
 * the new file's permissions (0600 for files that must stay private). 0 or -1 (err). */
int rm_write_file_atomic(const char *path, const char *text, size_t len, int mode,
			 struct rm_error *err);
/* Strips blanks and line ends from both ends, in place; returns the new start. */
char *rm_trim(char *s);
/* Whether an executable prog is on $PATH (empty entries, the current folder, are skipped). */
int rm_on_path(const char *prog);
/* Creates the folder path and its missing parents (mode 0755); an existing folder is fine.
 * Returns 0, or -1 with err naming what could not be created. */
int rm_mkdirs(const char *path, struct rm_error *err);
/* Creates an empty temporary file under $TMPDIR (default /tmp): returns its fd and hands
 * its path to *path (caller unlinks and frees), or -1 with err naming the folder. */
int rm_make_temp(char **path, struct rm_error *err);
/* The commit checked out in the git work tree at root ("" when none or unreadable), read
 * from .git directly: HEAD, the loose ref or packed-refs; a worktree's .git file is
 * followed. Caller frees. */
char *rm_git_commit(const char *root);

int rm_starts_with(const char *s, const char *prefix);
int rm_ends_with(const char *s, const char *suffix);

/* The start time of process pid (clock ticks after boot, /proc/<pid>/stat), or -1. */
long long rm_process_start(long pid);
/* Whether process pid, started at start (rm_process_start; -1 when unknown), is gone:
 * no such process, or another one that has its pid now. Unknown counts as alive. */
int rm_process_gone(long pid, long long start);

/*
 * The process-wide interrupt: the runner sets it once (its signal flag). Every wait that
 * could last (engine calls, the lock of a CSV file) looks at it, gives up when it is set,
 * and what runs after it (the clean-up) gets a short deadline. fn NULL clears it.
 */
void rm_interrupt_set(int (*fn)(void *ud), void *ud);
int rm_interrupt_pending(void);

/* Monotonic clock in seconds. */
double rm_now(void);
/* UTC time as "YYYY-MM-DDTHH:MM:SSZ" into buf (at least 21 bytes). */
void rm_utc_timestamp(char *buf, size_t size);

/*
 * Growable byte buffer with a ceiling (curl's dynbuf). Invariants: data is NULL or holds
 * len bytes followed by a NUL; len < cap when data != NULL; len never exceeds max. Adding
 * past max fails with -1 and leaves the buffer unchanged, so a runaway log line or response
 * can never exhaust memory.
 */
typedef struct rm_buf {
	char *data;
	size_t len;
	size_t cap;
	size_t max;
} rm_buf;

#define RM_BUF_INIT(maxbytes)                                                                      \
	{                                                                                          \
		NULL, 0, 0, (maxbytes)                                                             \
	}

void rm_buf_init(rm_buf *b, size_t max);
int rm_buf_add(rm_buf *b, const void *p, size_t n);
int rm_buf_addstr(rm_buf *b, const char *s);
int rm_buf_addch(rm_buf *b, char c);
int rm_buf_addf(rm_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Returns the contents as a C string ("" when empty); valid until the next change. */
const char *rm_buf_str(const rm_buf *b);
void rm_buf_reset(rm_buf *b);		  /* len = 0, keeps memory */
void rm_buf_release(rm_buf *b);		  /* frees memory, keeps max */
char *rm_buf_detach(rm_buf *b);		  /* hands the string to the caller (never NULL) */
void rm_buf_consume(rm_buf *b, size_t n); /* drops the first n bytes */

/*
 * Splits a shell-like word list (the models.json `args` string) into an argv vector without
 * any expansion: blanks separate words, single quotes are literal, double quotes allow \" \\
 * \$ \` escapes, a backslash outside quotes escapes the next character. No globbing, no
 * variables, no command substitution: the words go to the container as an argv array.
 * Returns 0 and a NULL-terminated vector (free with rm_strv_free), or -1 on an unterminated
 * quote (err names the problem).
 */
struct rm_error;
int rm_split_words(const char *s, char ***argv, size_t *argc, struct rm_error *err);
void rm_strv_free(char **v);
/* Appends a copy of s to a NULL-terminated vector of n entries; returns the new vector. */
char **rm_strv_push(char **v, size_t *n, const char *s);

#include "rm/banned.h"

#endif
