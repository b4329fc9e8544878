/*
 * Secret masking. The rule, for whole strings and streams alike: scan left to right; at each
 * position the longest secret that starts there becomes "***" and the scan resumes after it;
 * otherwise the byte is kept. A stream gives the same output as the whole text because a
 * position is decided only once enough bytes follow it to rule out every longer secret.
 */
#include <stdlib.h>
#include <string.h>

#include "rm/util.h"

#define MASK "***"

static int by_length_desc(const void *a, const void *b)
{
	size_t la = strlen(*(char *const *)a), lb = strlen(*(char *const *)b);
	return la < lb ? 1 : la > lb ? -1 : strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_secret(rm_mask *m, const char *v, size_t len)
{
	if (!len)
		return;
	for (size_t k = 0; k < m->n; k++)
		if (strlen(m->secrets[k]) == len && !memcmp(m->secrets[k], v, len))
			return;
	m->secrets = rm_xrealloc(m->secrets, (m->n + 2) * sizeof(*m->secrets));
	m->secrets[m->n++] = rm_xstrndup(v, len);
	m->secrets[m->n] = NULL;
	if (len > m->maxlen)
		m->maxlen = len;
}

void rm_mask_init(rm_mask *m, const char *const *values, size_t n)
{
	memset(m, 0, sizeof(*m));
	m->secrets = rm_xcalloc(1, sizeof(*m->secrets));
	for (size_t i = 0; i < n; i++) {
		const char *v = values[i];
		if (!v || !*v)
			continue;
		add_secret(m, v, strlen(v));
		/* A multi-line value (a key file) is also masked line by line: a program may
		 * print its lines apart, or with other line ends. */
		if (!strchr(v, '\n'))
			continue;
		for (const char *p = v; *p;) {
			size_t len = strcspn(p, "\n");
			add_secret(m, p, len && p[len - 1] == '\r' ? len - 1 : len);
			p += len;
			p += *p == '\n';
		}
	}
	qsort(m->secrets, m->n, sizeof(*m->secrets), by_length_desc);
	if (m->n)
		m->hold = rm_xmalloc(m->maxlen);
}

int rm_mask_active(const rm_mask *m)
{
	return m && m->n > 0;
}

void rm_mask_release(rm_mask *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		free(m->secrets[i]);
	free(m->secrets);
	free(m->hold);
	memset(m, 0, sizeof(*m));
}

/*
 * Compares the first n bytes of s with the concatenation a[0..alen) b[...]; the caller
 * guarantees alen + blen >= n.
 */
static int equal2(const char *a, size_t alen, const char *b, const char *s, size_t n)
{
	size_t k = n < alen ? n : alen;
	if (memcmp(a, s, k) != 0)
		return 0;
	return n == k || memcmp(b, s + k, n - k) == 0;
}

/*
 * What starts at a position whose following bytes are a[0..alen) b[0..blen): the length of
 * the longest secret there, 0 for none, or -1 when a longer secret could still match once
 * more data arrives (never when final, i.e. at the end of the stream).
 */
static long match_at(const rm_mask *m, const char *a, size_t alen, const char *b, size_t blen,
		     int final)
{
	size_t avail = alen + blen;
	for (size_t i = 0; i < m->n; i++) {
		const char *s = m->secrets[i];
		size_t sl = strlen(s);
		if (sl <= avail) {
			if (equal2(a, alen, b, s, sl))
				return (long)sl;
		} else if (!final && equal2(a, alen, b, s, avail)) {
			return -1;
		}
	}
	return 0;
}

/* The bytes that can start a secret, so the scan can skip the others quickly. */
struct firsts {
	unsigned char set[256];
	int count;
	unsigned char only; /* the single first byte when count == 1 (memchr) */
};

static void firsts_init(const rm_mask *m, struct firsts *f)
{
	memset(f, 0, sizeof(*f));
	for (size_t i = 0; i < m->n; i++) {
		unsigned char c = (unsigned char)m->secrets[i][0];
		if (!f->set[c]) {
			f->set[c] = 1;
			f->count++;
			f->only = c;
		}
	}
}

static const char *next_candidate(const struct firsts *f, const char *p, const char *end)
{
	if (f->count == 1)
		return memchr(p, f->only, (size_t)(end - p));
	while (p < end && !f->set[(unsigned char)*p])
		p++;
	return p < end ? p : NULL;
}

/*
 * Masks data[0..len) as if nothing preceded it. Returns how many bytes were decided and
 * emitted; the rest (less than maxlen bytes, only when !final) could begin a secret.
 */
static size_t scan(const rm_mask *m, const struct firsts *f, const char *data, size_t len,
		   int final, rm_mask_out out, void *ud)
{
	const char *end = data + len, *run = data, *p = data;

	while (p < end) {
		const char *c = next_candidate(f, p, end);
		if (!c)
			break;
		long l = match_at(m, c, (size_t)(end - c), "", 0, final);
		if (l == 0) {
			p = c + 1;
			continue;
		}
		if (c > run)
			out(ud, run, (size_t)(c - run));
		if (l < 0)
			return (size_t)(c - data);
		out(ud, MASK, 3);
		p = run = c + l;
	}
	if (end > run)
		out(ud, run, (size_t)(end - run));
	return len;
}

void rm_mask_feed(rm_mask *m, const char *data, size_t len, rm_mask_out out, void *ud)
{
	struct firsts f;
	size_t off = 0;

	if (!rm_mask_active(m)) {
		if (len)
			out(ud, data, len);
		return;
	}
	if (!len)
		return;
	firsts_init(m, &f);

	/*
	 * Held bytes are decided against hold + data without joining them in a copy: each
	 * position needs at most maxlen bytes after it, and data may be large.
	 */
	if (m->hold_len) {
		size_t p = 0, run = 0, hl = m->hold_len;
		while (p < hl) {
			long l = match_at(m, m->hold + p, hl - p, data, len, 0);
			if (l == 0) {
				p++;
				continue;
			}
			if (p > run)
				out(ud, m->hold + run, p - run);
			if (l < 0) {
				/* Still undecided: everything from p on stays held (< maxlen). */
				memmove(m->hold, m->hold + p, hl - p);
				memcpy(m->hold + (hl - p), data, len);
				m->hold_len = hl - p + len;
				return;
			}
			out(ud, MASK, 3);
			p += (size_t)l;
			run = p;
		}
		if (hl > run)
			out(ud, m->hold + run, hl - run);
		off = p - hl;
		m->hold_len = 0;
	}
	size_t done = off + scan(m, &f, data + off, len - off, 0, out, ud);
	memcpy(m->hold, data + done, len - done);
	m->hold_len = len - done;
}

void rm_mask_flush(rm_mask *m, rm_mask_out out, void *ud)
{
	struct firsts f;

	if (!rm_mask_active(m) || !m->hold_len)
		return;
	firsts_init(m, &f);
	scan(m, &f, m->hold, m->hold_len, 1, out, ud);
	m->hold_len = 0;
}

static void append(void *ud, const char *p, size_t n)
{
	/* The result is at most 3 times the input, which is already in memory. */
	rm_buf_add(ud, p, n);
}

char *rm_mask_string(const rm_mask *m, const char *s)
{
	rm_buf b = RM_BUF_INIT((size_t)-1 / 2);
	struct firsts f;

	if (!s)
		return NULL;
	if (!rm_mask_active(m))
		return rm_xstrdup(s);
	firsts_init(m, &f);
	scan(m, &f, s, strlen(s), 1, append, &b);
	return rm_buf_detach(&b);
}

char **rm_secrets_from_env(char *const *envp, size_t *n)
{
	char **v = rm_xcalloc(1, sizeof(*v));
	size_t count = 0;

	for (char *const *e = envp; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq || !eq[1])
			continue;
		if (memmem(*e, (size_t)(eq - *e), "MAD_SECRETS", 11))
			v = rm_strv_push(v, &count, eq + 1);
	}
	if (n)
		*n = count;
	return v;
}
