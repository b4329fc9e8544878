/*
 * Fuzzes secret masking: the stream, cut anywhere, must give exactly what one call gives
 * and what rm_mask_string gives for the whole text, must never hold back maxlen bytes or
 * more, and must never let a secret through.
 *
 * Input: byte 0 gives the number of secrets (bits 0-1, 1 to 4); then each secret as a
 * length byte (1 to 16) and its bytes; then 4 bytes seeding the cut points; the rest is the
 * text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rm/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct out {
	char *bytes;
	size_t len, cap;
};

static void put(void *ud, const char *p, size_t n)
{
	struct out *o = ud;
	if (n == 0 || o->len + n > o->cap)
		abort(); /* empty emission, or more than 3 bytes out per byte in */
	memcpy(o->bytes + o->len, p, n);
	o->len += n;
}

static uint32_t next(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static void run(rm_mask *m, const char *text, size_t len, uint32_t seed, struct out *o)
{
	size_t off = 0;
	while (off < len) {
		size_t n = len - off;
		if (seed) {
			size_t cut = next(&seed) % (2 * m->maxlen + 2);
			n = cut < n ? cut : n;
		}
		rm_mask_feed(m, text + off, n, put, o);
		if (m->hold_len >= m->maxlen && m->maxlen)
			abort();
		off += n;
	}
	rm_mask_flush(m, put, o);
	if (m->hold_len)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *secrets[4] = {0};
	size_t nsec, pos = 1;

	if (size < 1)
		return 0;
	nsec = 1 + (data[0] & 3);
	for (size_t i = 0; i < nsec; i++) {
		if (pos >= size)
			goto out;
		size_t l = 1 + data[pos++] % 16;
		if (pos + l > size)
			goto out;
		/* a secret is a C string: it ends at a NUL */
		secrets[i] = rm_xstrndup((const char *)data + pos, l);
		pos += l;
	}
	if (pos + 4 > size)
		goto out;
	uint32_t seed = (uint32_t)data[pos] | (uint32_t)data[pos + 1] << 8 |
			(uint32_t)data[pos + 2] << 16 | (uint32_t)data[pos + 3] << 24;
	pos += 4;
	if (!seed)
		seed = 1;
	const char *text = (const char *)data + pos;
	size_t len = size - pos;

	rm_mask m;
	rm_mask_init(&m, (const char *const *)secrets, nsec);
	struct out a = {0}, b = {0};
	a.cap = b.cap = 3 * len + 1;
	a.bytes = rm_xmalloc(a.cap);
	b.bytes = rm_xmalloc(b.cap);
	run(&m, text, len, 0, &a);
	run(&m, text, len, seed, &b);
	if (a.len != b.len || memcmp(a.bytes, b.bytes, a.len) != 0)
		abort();
	/* The rule cannot promise anything for a secret made with '*' (the mask itself). */
	for (size_t i = 0; i < m.n; i++)
		if (!strchr(m.secrets[i], '*') &&
		    memmem(a.bytes, a.len, m.secrets[i], strlen(m.secrets[i])))
			abort();
	if (!memchr(text, '\0', len)) {
		char *t = rm_xstrndup(text, len);
		char *s = rm_mask_string(&m, t);
		if (strlen(s) != a.len || memcmp(s, a.bytes, a.len) != 0)
			abort();
		free(s);
		free(t);
	}
	free(a.bytes);
	free(b.bytes);
	rm_mask_release(&m);
out:
	for (size_t i = 0; i < 4; i++)
		free(secrets[i]);
	return 0;
}
