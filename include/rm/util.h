/*
 * The util module, shared by every other: allocation that cannot return NULL, bounded number
 * parsing, string and file helpers, the growable buffer with a size ceiling, line assembly,
 * and (in the sections below) the error convention, the runner's messages, SHA-256, secret
 * masking, running helper programs, and the calls banned at compile time (last).
 *
 * Allocation failure aborts the program (as git's xmalloc does): there is no useful recovery
 * for a runner that cannot allocate a few bytes, and it keeps every caller simple.
 */
#ifndef RM_UTIL_H
#define RM_UTIL_H

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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
/* Text that came from a workload, for a CSV cell (a metric name, a unit): when it starts
 * with '=', '+', '-', '@', a tab or a carriage return and is not a number, a copy with a
 * leading "'", so a spreadsheet that opens the CSV shows it instead of running it as a
 * formula; anything else (and every number: "-1.5", "+0.00") copied as it is. Caller
 * frees. */
char *rm_cell_text(const char *s);
/* A size as Docker writes it: "64G", "512m", "1.5g", "1073741824" (k m g t, powers of 1024,
 * an optional trailing b). Returns 0 and sets *bytes, or -1. */
int rm_parse_size(const char *s, long long *bytes);

/* Writes all n bytes (retrying short writes and EINTR); 0 or -1 with errno. */
int rm_write_all(int fd, const void *p, size_t n);
/*
 * Reads a whole file of at most max bytes into *out (NUL-terminated; *len, when not NULL,
 * receives its length). Returns 0, or -1 with err naming the file; when the file does not
 * exist, rm_error_missing(err) is true (the caller decides whether that is an error).
 */
int rm_read_file(const char *path, size_t max, char **out, size_t *len, struct rm_error *err);
/* Replaces path with text (a temporary file beside it, synced, renamed over it, never
 * through a symlink), so readers see the old file or the new one, never half of it. mode:
 * the new file's permissions (0600 for files that must stay private). 0 or -1 (err). */
int rm_write_file_atomic(const char *path, const char *text, size_t len, int mode,
			 struct rm_error *err);
/*
 * YAML to JSON through libyaml (util/yaml.c), for context files, suites and references (MAD
 * users keep them as JSON or YAML). Mappings become objects, sequences arrays; plain scalars
 * that read as integers, floats, true/false (YAML 1.2 core schema) or null/~ become those
 * JSON types, quoted scalars stay strings. Anchors and aliases are refused (they allow
 * "billion laughs" inputs); so are non-string mapping keys, duplicate keys, and more than one
 * document. Returns a new JSON value, or NULL with err naming `source`, the line and the
 * column.
 */
typedef struct json_t json_t;
json_t *rm_yaml_to_json(const char *text, size_t len, const char *source, struct rm_error *err);

/* A name usable in a file name: '/' and ' ' become '_'. Caller frees. */
char *rm_file_safe(const char *name);
/* Strips blanks and line ends from both ends, in place; returns the new start. */
char *rm_trim(char *s);
/* The full path of the executable file prog on $PATH (empty entries, the current folder, are
 * skipped; a prog with a '/' is taken as it is), or NULL; the caller frees it. */
char *rm_which(const char *prog);
/* Whether rm_which finds prog. */
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

/*
 * A closed set of words and the values they stand for (a flag's choices, the words of a
 * file's column): one table per set, ended by {NULL, 0}, and every parse and every name goes
 * through it, so a set is written once.
 */
typedef struct rm_choice {
	const char *name;
	int value;
} rm_choice;
/* The value of word in set: 0 and *value, or -1 (word NULL or not in it). */
int rm_choice_parse(const rm_choice *set, const char *word, int *value);
/* The word of value in set, or NULL. */
const char *rm_choice_name(const rm_choice *set, int value);
/* The words joined: sep between them, last_sep before the last one ("on|off" with "|" and
 * "|"; "'on' or 'off'" with quote "'"). Caller frees. */
char *rm_choice_list(const rm_choice *set, const char *quote, const char *sep,
		     const char *last_sep);

/*
 * A perf row's status, perf.csv's status column (as madengine writes it): RM_STATUS_NONE
 * for a row that has none yet or a word that is none of them.
 */
typedef enum rm_status {
	RM_STATUS_NONE = 0,
	RM_STATUS_SUCCESS,
	RM_STATUS_FAILURE,
	RM_STATUS_SKIPPED,
} rm_status;
extern const rm_choice rm_status_words[];
/* "SUCCESS", "FAILURE", "SKIPPED"; NULL for RM_STATUS_NONE. */
const char *rm_status_name(rm_status s);
/* The status a cell holds (RM_STATUS_NONE for anything else, NULL included). */
rm_status rm_status_of(const char *word);

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

/*
 * Signals (src/util/signals.c): rm_signals_install catches SIGINT, SIGTERM and SIGHUP and
 * ignores SIGPIPE. The first signal is recorded; a second one exits at once (128 + N), or,
 * when patient (SLURM's per-node runner, which SLURM signals repeatedly while it cleans up),
 * is ignored. Only the command layer installs them.
 */
void rm_signals_install(int patient);
int rm_signal_received(void);	   /* the signal number, 0 when none came */
const char *rm_signal_name(void);  /* "SIGINT", "SIGTERM" or "SIGHUP" */
int rm_signal_cancelled(void *ud); /* non-zero once a signal came: an rm_interrupt_set fn */

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
/* The number of entries of a NULL-terminated vector (0 for NULL). */
size_t rm_strv_len(char *const *v);
/* Whether the NULL-terminated v (may be NULL) holds s. */
int rm_strv_has(char *const *v, const char *s);

/* A workload's output: pieces of stdout or stderr as they come. */
enum { RM_STREAM_STDOUT = 1, RM_STREAM_STDERR = 2 };
typedef void (*rm_output_cb)(void *ud, int stream, const char *data, size_t len);

/*
 * Line assembly for one stream: bytes in, whole lines out (without the '\n'; a trailing
 * '\r' is kept for the parser to decide). Lines longer than max_line are delivered in
 * max_line pieces, so memory stays bounded whatever the container prints. Each line handed
 * to the callback is also NUL-terminated (line[len] == '\0'), with what it is:
 *   RM_LINE_WHOLE  a line that ended with '\n' (or the last piece of a longer one), whatever
 *                  its length: a line of exactly max_line bytes is one whole line
 *   RM_LINE_PIECE  max_line bytes of a longer line: more of the same line follows
 *   RM_LINE_END    the bytes after the last '\n' when the data ended (rm_lines_flush): a
 *                  last line without a line end, whole or cut, as the caller knows
 */
enum { RM_LINE_WHOLE = 0, RM_LINE_PIECE = 1, RM_LINE_END = 2 };
typedef void (*rm_line_cb)(void *ud, const char *line, size_t len, int kind);

typedef struct rm_lines {
	char *buf;
	size_t len;
	size_t max_line;
} rm_lines;

void rm_lines_init(rm_lines *l, size_t max_line);
void rm_lines_feed(rm_lines *l, const char *data, size_t len, rm_line_cb cb, void *ud);
/* Delivers a last unterminated line, if any, as RM_LINE_END. */
void rm_lines_flush(rm_lines *l, rm_line_cb cb, void *ud);
void rm_lines_release(rm_lines *l);

/*
 * One error convention for the whole program.
 *
 * Every fallible function returns 0 on success or a negative value on failure, and on
 * failure fills the caller's rm_error. Callers that add context wrap the message on the way
 * up ("running 'smoke': POST /containers/create: 404 no such image ..."). The error is
 * shown once, by main(). Only main() exits.
 *
 * The cause is kept as data, not only as text (crun's libcrun_error_s): a failed system
 * call's errno goes into sys_errno (rm_error_sys), and callers that decide by the cause test
 * it (rm_error_missing(err), err->sys_errno == EACCES) or the kind, never the message. The
 * message itself holds no strerror text: rm_error_text() adds it, after the innermost
 * message, when the error is shown, so everything that shows an error to the user (main,
 * warnings, a row's reason) goes through rm_error_text(), not msg. Advice that belongs
 * after the cause ("; fix the path in the registry") is the hint: a string literal that
 * rm_error_text() shows last and that a caller with advice of its own may drop.
 *
 * The buffers are fixed-size: setting or wrapping never allocates and never fails; an
 * over-long message is truncated.
 */
/* Categories; main() maps them to exit codes (see docs/exit-codes.md). */
enum rm_err_kind {
	RM_ERR_NONE = 0,
	RM_ERR_USAGE,	 /* bad command line */
	RM_ERR_INPUT,	 /* bad models.json, context, Dockerfile, tag matching nothing */
	RM_ERR_DOCKER,	 /* engine unreachable or refused a request */
	RM_ERR_IO,	 /* local file or system failure */
	RM_ERR_INTERNAL, /* out of memory, bug */
};

typedef struct rm_error {
	int kind;
	int sys_errno;	  /* errno of the failed system call; 0 when none */
	const char *hint; /* a string literal shown after the cause, begun with its separator
			     ("; create it first"), or NULL */
	char msg[2048];	  /* the message with its context, without strerror's text */
	char text[2400];  /* rm_error_text's buffer: read it through rm_error_text */
} rm_error;

#define RM_ERROR_INIT                                                                              \
	{                                                                                          \
		.kind = RM_ERR_NONE, .sys_errno = 0, .hint = NULL, .msg = "", .text = ""           \
	}

/* Sets the message (lowercase, no final period) and kind, with no errno and no hint;
 * returns -1. err may be NULL. */
int rm_error_set(rm_error *err, int kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The same for a failed system call: errnum (errno, or what a pthread or posix_spawn call
 * returned) is kept in sys_errno and shown as strerror's text after the message, so the
 * message names what failed and stops there: rm_error_sys(err, RM_ERR_IO, errno,
 * "cannot open '%s'", path). Returns -1. err may be NULL. */
int rm_error_sys(rm_error *err, int kind, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Prefixes "<context>: " to the current message; keeps the kind, the errno and the hint;
 * returns -1. */
int rm_error_wrap(rm_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Sets the hint (a string literal, or NULL); returns -1. err may be NULL. */
int rm_error_hint(rm_error *err, const char *hint);

/* The error as the user reads it: "<msg>[: <strerror(sys_errno)>][<hint>]". The text lives
 * in err and stays valid until err changes. */
const char *rm_error_text(rm_error *err);

/* Whether the error is a file that does not exist: ENOENT, or ENOTDIR (a part of its path
 * is a file), as rm_read_file reports it. NULL: no. */
static inline int rm_error_missing(const rm_error *err)
{
	return err && (err->sys_errno == ENOENT || err->sys_errno == ENOTDIR);
}

/* Clears the error. */
void rm_error_clear(rm_error *err);

/*
 * The runner's own messages to the user: stderr, prefixed, never mixed into model logs or
 * perf files. Warnings ("warning: ...") do not stop anything; errors are printed by main().
 */
void rm_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void rm_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A warning about a failed system call: the message, then strerror(errnum)'s text, as
 * rm_error_text shows an error (so that warnings, too, never format strerror themselves). */
void rm_warn_sys(int errnum, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* 0 = quiet (warnings only), 1 = normal, 2 = verbose. */
void rm_log_set_level(int level);
int rm_log_level(void);
/* Number of warnings printed so far (tests use it). */
unsigned rm_warn_count(void);
/* Called before each message is printed (the status line clears itself there); NULL: none. */
void rm_log_set_before(void (*fn)(void));
/* Tests: messages go into b (one line each, "warning: " before a warning) instead of stderr,
 * so that a negative test checks the warning it expects and prints nothing. NULL: stderr. */
void rm_log_capture(rm_buf *b);

/*
 * ---- the terminal (util/term.c): colour, width, tables ----
 *
 * Colour is on for a stream when --color always; off when --color never; otherwise (auto,
 * the default) when the stream is a terminal, NO_COLOR is unset or empty and TERM is not
 * "dumb" (https://no-color.org).
 */
enum rm_color { RM_COLOR_NONE, RM_COLOR_GOOD, RM_COLOR_BAD, RM_COLOR_WARN, RM_COLOR_BOLD };
/* --color: when colour is on. */
enum rm_color_when { RM_COLOR_WHEN_AUTO = 1, RM_COLOR_WHEN_ALWAYS, RM_COLOR_WHEN_NEVER };
extern const rm_choice rm_color_words[]; /* "auto", "always", "never" */
void rm_color_set(enum rm_color_when when);
int rm_color_on(FILE *f);
/* The escape that starts colour c on f, and the one that ends it ("" when f gets none). */
const char *rm_color_start(FILE *f, enum rm_color c);
const char *rm_color_end(FILE *f, enum rm_color c);
/* The colour of a perf row status: SUCCESS good, FAILURE bad, SKIPPED warn, else none. */
enum rm_color rm_status_color(rm_status status);
/* The columns of the terminal f writes to ($COLUMNS when the size is unknown), or 0 when f
 * is not a terminal. */
int rm_term_width(FILE *f);
/* Columns s takes on a terminal (UTF-8: one per character; escapes are not expected). */
size_t rm_text_width(const char *s);
/* The longest start of s that takes at most cols columns, in bytes (never splits a UTF-8
 * character). */
size_t rm_text_clip(const char *s, size_t cols);

/*
 * A table of text: a header, aligned columns two spaces apart, and, when it would be wider
 * than the width given, the columns marked RM_TABLE_SHRINK cut (with "~" at the cut) down to
 * their minimum: those of the lowest rank first, the widest of a rank first. RM_TABLE_RIGHT aligns
 * right (numbers); RM_TABLE_STATUS colours its cells with rm_status_color. The table copies what it
 * is given.
 */
enum { RM_TABLE_RIGHT = 1, RM_TABLE_SHRINK = 2, RM_TABLE_STATUS = 4 };
typedef struct rm_table {
	size_t ncols, nrows;
	char **cells; /* nrows + 1 rows (the header first) of ncols */
	unsigned *flags;
	size_t *min;	/* the narrowest a shrinking column gets */
	unsigned *rank; /* shrinking columns of a lower rank are cut first */
} rm_table;
void rm_table_init(rm_table *t, size_t ncols, const char *const *header);
void rm_table_column(rm_table *t, size_t col, unsigned flags, size_t min_width, unsigned rank);
void rm_table_add(rm_table *t, const char *const *cells); /* NULL cells print empty */
/* Prints it to f, each line after indent, within width columns (0: no limit). */
void rm_table_print(const rm_table *t, FILE *f, const char *indent, size_t width);
void rm_table_release(rm_table *t);

/*
 * SHA-256 through OpenSSL's libcrypto, for build-context fingerprints (an image whose
 * fingerprint label matches is up to date and needs no build).
 */
typedef struct rm_hash rm_hash;

rm_hash *rm_hash_new(void); /* aborts on allocation failure */
void rm_hash_update(rm_hash *h, const void *p, size_t n);
/* Writes 64 hex digits and a NUL into out, and frees h. */
void rm_hash_final_hex(rm_hash *h, char out[65]);

/*
 * Secret masking: every occurrence of a secret's value becomes "***" in what the runner
 * writes (live stream, log files, CSVs, messages, dry-run output).
 *
 * Streams are masked as they flow: a secret can be split across chunks, so the masker holds
 * back at most (longest secret - 1) bytes until more data or a flush shows they are not
 * the start of a secret. With no secrets the feed is a plain pass-through (no copy).
 * One rm_mask per stream (stdout and stderr frames interleave).
 */
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

/*
 * Running a helper program and capturing what it prints: SLURM's commands (sbatch, squeue,
 * sacct, scontrol, scancel) and Docker credential helpers (docker-credential-<name> get).
 *
 * No shell is involved: argv goes to posix_spawnp as it is (argv[0] is searched on PATH). The
 * child gets `input` on stdin (or an empty stdin), default signal dispositions, an empty
 * signal mask, and a process group of its own, so a Ctrl-C meant for run_models does not
 * also kill the scancel it runs in answer. stdout and stderr are captured separately, each
 * up to max_out bytes (the rest is read and dropped, `truncated` says so). A program that
 * outlives `timeout` seconds is killed (its whole process group, SIGKILL).
 *
 * Ownership: rm_proc_out_release frees the captured texts.
 */
typedef struct rm_proc_out {
	char *out; /* stdout, NUL-terminated ("" when nothing) */
	size_t out_len;
	char *err; /* stderr, NUL-terminated */
	size_t err_len;
	int status;    /* exit code; 128 + N when killed by signal N */
	int timed_out; /* killed after `timeout` seconds */
	int truncated; /* some output beyond max_out was dropped */
} rm_proc_out;

/*
 * Runs argv and waits for it (at most timeout seconds; 0 = no limit). Returns 0 when the
 * program ran to its end, whatever its exit status (read res->status); -1 when it could not
 * be started (err: "cannot run 'sbatch': no such program on PATH") or when it timed out
 * (err: "'squeue' did not finish within 30 s"; res->timed_out set). res is filled in both
 * cases and must be released.
 */
int rm_proc_run(char *const argv[], const char *input, double timeout, size_t max_out,
		rm_proc_out *res, rm_error *err);
/*
 * The same for a program that only informs (GPU detection's rocminfo, nvidia-smi, amd-smi):
 * no input, and it is also stopped (its process group, SIGKILL) as soon as a signal came or
 * the process-wide interrupt is set, looked at 10 times a second; then -1 with err's
 * sys_errno EINTR. A tool that hangs never holds the run past timeout or past a Ctrl-C.
 */
int rm_proc_capture(char *const argv[], double timeout, size_t max_out, rm_proc_out *res,
		    rm_error *err);
void rm_proc_out_release(rm_proc_out *res);

/*
 * Unsafe calls banned at compile time (git's banned.h). Include last, after system headers.
 */
#define RM_BANNED(func) sorry_##func##_is_a_banned_function

#undef strcpy
#define strcpy(x, y) RM_BANNED(strcpy)
#undef strcat
#define strcat(x, y) RM_BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) RM_BANNED(strncpy)
#undef sprintf
#define sprintf(...) RM_BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) RM_BANNED(vsprintf)
#undef strtok
#define strtok(x, y) RM_BANNED(strtok)
#undef atoi
#define atoi(x) RM_BANNED(atoi)
#undef atol
#define atol(x) RM_BANNED(atol)
#undef gets
#define gets(x) RM_BANNED(gets)

#endif
