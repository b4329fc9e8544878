#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rm/util.h"

static void oom(size_t n)
{
	fprintf(stderr, "run_models: fatal: out of memory allocating %zu bytes\n", n);
	abort();
}

void *rm_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *rm_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n * size);
	return p;
}

void *rm_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

char *rm_xstrdup(const char *s)
{
	return s ? rm_xstrndup(s, strlen(s)) : NULL;
}

char *rm_xstrndup(const char *s, size_t n)
{
	size_t len = 0;
	char *p;

	if (!s)
		return NULL;
	while (len < n && s[len])
		len++;
	p = rm_xmalloc(len + 1);
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *rm_xvasprintf(const char *fmt, va_list ap)
{
	va_list cp;
	int n;
	char *p;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		oom(0);
	p = rm_xmalloc((size_t)n + 1);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	return p;
}

char *rm_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;

	va_start(ap, fmt);
	p = rm_xvasprintf(fmt, ap);
	va_end(ap);
	return p;
}

int rm_parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!s)
		return -1;
	while (isspace((unsigned char)*s))
		s++;
	if (!*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s)
		return -1;
	while (isspace((unsigned char)*end))
		end++;
	if (*end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int rm_parse_double(const char *s, double *out)
{
	char *end;
	double v;

	if (!s)
		return -1;
	while (isspace((unsigned char)*s))
		s++;
	if (!*s)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno == ERANGE || end == s || !isfinite(v))
		return -1;
	while (isspace((unsigned char)*end))
		end++;
	if (*end)
		return -1;
	*out = v;
	return 0;
}

char *rm_cell_text(const char *s)
{
	double v;

	if (!s)
		return NULL;
	if (*s && strchr("=+-@\t\r", *s) && rm_parse_double(s, &v) < 0)
		return rm_xasprintf("'%s", s);
	return rm_xstrdup(s);
}

int rm_starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

int rm_ends_with(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);
	return ls >= lx && memcmp(s + ls - lx, suffix, lx) == 0;
}

double rm_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void rm_utc_timestamp(char *buf, size_t size)
{
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* rm_buf */

void rm_buf_init(rm_buf *b, size_t max)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->max = max;
}

int rm_buf_add(rm_buf *b, const void *p, size_t n)
{
	size_t need;

	if (n > b->max || b->len > b->max - n)
		return -1;
	need = b->len + n + 1;
	if (need > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		while (cap < need)
			cap *= 2;
		if (cap > b->max + 1)
			cap = b->max + 1;
		b->data = rm_xrealloc(b->data, cap);
		b->cap = cap;
	}
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int rm_buf_addstr(rm_buf *b, const char *s)
{
	return rm_buf_add(b, s, strlen(s));
}

int rm_buf_addch(rm_buf *b, char c)
{
	return rm_buf_add(b, &c, 1);
}

int rm_buf_addf(rm_buf *b, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int r;

	va_start(ap, fmt);
	s = rm_xvasprintf(fmt, ap);
	va_end(ap);
	r = rm_buf_addstr(b, s);
	free(s);
	return r;
}

const char *rm_buf_str(const rm_buf *b)
{
	return b->data ? b->data : "";
}

void rm_buf_reset(rm_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

void rm_buf_release(rm_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

char *rm_buf_detach(rm_buf *b)
{
	char *p = b->data ? b->data : rm_xstrdup("");
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	return p;
}

void rm_buf_consume(rm_buf *b, size_t n)
{
	if (n >= b->len) {
		rm_buf_reset(b);
		return;
	}
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
	b->data[b->len] = '\0';
}

/* string vectors */

char **rm_strv_push(char **v, size_t *n, const char *s)
{
	v = rm_xrealloc(v, (*n + 2) * sizeof(*v));
	v[*n] = rm_xstrdup(s);
	(*n)++;
	v[*n] = NULL;
	return v;
}

size_t rm_strv_len(char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

int rm_strv_has(char *const *v, const char *s)
{
	for (; v && *v; v++)
		if (!strcmp(*v, s))
			return 1;
	return 0;
}

void rm_strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

/*
 * Hand-written: glibc's wordexp() would also expand variables and globs, and GLib's
 * g_shell_parse_argv (the library that does exactly this) is too heavy a dependency for one
 * function.
 */
int rm_split_words(const char *s, char ***argv, size_t *argc, rm_error *err)
{
	rm_buf word = RM_BUF_INIT((size_t)1 << 20);
	char **v = NULL;
	size_t n = 0;
	int in_word = 0;
	char quote = 0;

	v = rm_xcalloc(1, sizeof(*v));
	for (const char *p = s ? s : ""; *p; p++) {
		char c = *p;
		if (quote == '\'') {
			if (c == '\'')
				quote = 0;
			else
				rm_buf_addch(&word, c);
			continue;
		}
		if (quote == '"') {
			if (c == '"') {
				quote = 0;
			} else if (c == '\\' && p[1] && strchr("\"\\$`", p[1])) {
				rm_buf_addch(&word, *++p);
			} else {
				rm_buf_addch(&word, c);
			}
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\n') {
			if (in_word) {
				v = rm_strv_push(v, &n, rm_buf_str(&word));
				rm_buf_reset(&word);
				in_word = 0;
			}
			continue;
		}
		in_word = 1;
		if (c == '\'' || c == '"') {
			quote = c;
		} else if (c == '\\' && p[1]) {
			rm_buf_addch(&word, *++p);
		} else {
			rm_buf_addch(&word, c);
		}
	}
	if (quote) {
		rm_buf_release(&word);
		rm_strv_free(v);
		return rm_error_set(err, RM_ERR_INPUT, "unterminated %c quote in '%s'", quote, s);
	}
	if (in_word)
		v = rm_strv_push(v, &n, rm_buf_str(&word));
	rm_buf_release(&word);
	*argv = v;
	if (argc)
		*argc = n;
	return 0;
}

int rm_parse_size(const char *s, long long *bytes)
{
	char *end;
	double v;
	long long mul = 1;

	if (!s)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || !isfinite(v) || v < 0)
		return -1;
	switch (tolower((unsigned char)*end)) {
	case 'k':
		mul = 1LL << 10;
		end++;
		break;
	case 'm':
		mul = 1LL << 20;
		end++;
		break;
	case 'g':
		mul = 1LL << 30;
		end++;
		break;
	case 't':
		mul = 1LL << 40;
		end++;
		break;
	default:
		break;
	}
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end || v * (double)mul > 9.0e18)
		return -1;
	*bytes = (long long)(v * (double)mul);
	return 0;
}

int rm_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int rm_read_file(const char *path, size_t max, char **out, size_t *len, rm_error *err)
{
	rm_buf b = RM_BUF_INIT(max);
	char chunk[65536];
	size_t r;
	/* Opened without blocking: a FIFO nobody writes to would hang open() forever (a suite's
	 * include:, -f, --references naming one); read, it then ends at once and says it is
	 * empty. A pipe with a writer (-f <(...)) is read as before, blocking. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC), ret = -1;
	FILE *f = NULL;

	if (fd < 0)
		return rm_error_sys(err, RM_ERR_IO, errno, "cannot open '%s'", path);
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0 || !(f = fdopen(fd, "rb"))) {
		rm_error_sys(err, RM_ERR_IO, errno, "cannot open '%s'", path);
		close(fd);
		return -1;
	}
	while ((r = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (rm_buf_add(&b, chunk, r)) {
			rm_error_set(err, RM_ERR_INPUT, "'%s' is larger than %zu KiB", path,
				     max >> 10);
			goto out;
		}
	}
	if (ferror(f)) {
		rm_error_sys(err, RM_ERR_IO, errno, "cannot read '%s'", path);
		goto out;
	}
	if (len)
		*len = b.len;
	*out = rm_buf_detach(&b);
	ret = 0;
out:
	rm_buf_release(&b);
	fclose(f);
	return ret;
}

char *rm_trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/* An empty PATH entry would mean the current folder: skipped, so that a stray 'rocminfo' or
 * 'amd-smi' in the work folder is never run. */
char *rm_which(const char *prog)
{
	const char *path = getenv("PATH");

	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0 ? rm_xstrdup(prog) : NULL;
	while (path && *path) {
		size_t n = strcspn(path, ":");
		if (n) {
			struct stat st;
			char *full = rm_xasprintf("%.*s/%s", (int)n, path, prog);
			if (stat(full, &st) == 0 && S_ISREG(st.st_mode) && access(full, X_OK) == 0)
				return full;
			free(full);
		}
		path += n;
		if (*path == ':')
			path++;
	}
	return NULL;
}

int rm_on_path(const char *prog)
{
	char *full = rm_which(prog);
	int found = full != NULL;

	free(full);
	return found;
}
