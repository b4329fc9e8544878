/*
 * Fuzzes the log stream decoder and line assembly: any input, cut anywhere, must decode to
 * exactly what a single call gives, and must never touch memory it does not own.
 *
 * Input: byte 0 selects raw mode (bit 0) and the line length limit (bits 1-7); bytes 1-4
 * seed the cut points; the rest is the stream.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rm/engine.h"
#include "rm/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct out {
	unsigned char *bytes; /* stream tag and byte, pairwise */
	size_t len, cap;
	size_t lines, line_bytes;
	uint32_t line_hash;
	size_t max_line;
};

static void put(struct out *o, unsigned char tag, const char *p, size_t n)
{
	if (o->len + 2 * n > o->cap)
		abort(); /* the decoder produced more than it was given */
	for (size_t i = 0; i < n; i++) {
		o->bytes[o->len++] = tag;
		o->bytes[o->len++] = (unsigned char)p[i];
	}
}

static void on_frame(void *ud, int stream, const char *p, size_t n)
{
	if (n == 0 || stream < RM_STREAM_STDOUT || stream > RM_STREAM_SYSERR)
		abort();
	put(ud, (unsigned char)stream, p, n);
}

static void on_line(void *ud, const char *line, size_t len, int kind)
{
	struct out *o = ud;
	if (line[len] != '\0' || memchr(line, '\n', len))
		abort();
	if (kind == RM_LINE_PIECE && len != o->max_line)
		abort(); /* a piece is always a full buffer */
	o->lines++;
	o->line_bytes += len;
	for (size_t i = 0; i < len; i++)
		o->line_hash = o->line_hash * 31 + (unsigned char)line[i];
	o->line_hash = o->line_hash * 31 + 0xff + (uint32_t)kind;
}

static uint32_t next(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* Decodes stream (cut into pieces when seed != 0) and assembles the stdout lines. */
static int decode(const uint8_t *stream, size_t len, int raw, size_t max_line, uint32_t seed,
		  struct out *o, int *incomplete)
{
	rm_frame_decoder d;
	rm_lines l;
	int ret = 0;

	rm_frame_init(&d, raw);
	size_t off = 0;
	while (off < len) {
		size_t n = len - off;
		if (seed) {
			size_t cut = next(&seed) % 17;
			n = cut < n ? cut : n;
		}
		if (rm_frame_feed(&d, (const char *)stream + off, n, on_frame, o) < 0)
			ret = -1;
		off += n;
	}
	*incomplete = rm_frame_incomplete(&d);

	/* Lines of stdout, fed in the decoder's output pieces or cut again. */
	o->max_line = max_line;
	rm_lines_init(&l, max_line);
	size_t i = 0;
	while (i < o->len) {
		char piece[64];
		size_t k = 0;
		size_t lim = seed ? 1 + next(&seed) % sizeof(piece) : sizeof(piece);
		while (i < o->len && k < lim) {
			if (o->bytes[i] == RM_STREAM_STDOUT)
				piece[k++] = (char)o->bytes[i + 1];
			i += 2;
		}
		rm_lines_feed(&l, piece, k, on_line, o);
	}
	rm_lines_flush(&l, on_line, o);
	rm_lines_release(&l);
	return ret;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 5)
		return 0;
	int raw = data[0] & 1;
	size_t max_line = (size_t)(data[0] >> 1) + 1;
	uint32_t seed = (uint32_t)data[1] | (uint32_t)data[2] << 8 | (uint32_t)data[3] << 16 |
			(uint32_t)data[4] << 24;
	if (!seed)
		seed = 1;
	const uint8_t *stream = data + 5;
	size_t len = size - 5;

	struct out a = {0}, b = {0};
	a.cap = b.cap = 2 * len + 1;
	a.bytes = malloc(a.cap);
	b.bytes = malloc(b.cap);
	if (!a.bytes || !b.bytes)
		abort();
	int inc_a, inc_b;
	int ra = decode(stream, len, raw, max_line, 0, &a, &inc_a);
	int rb = decode(stream, len, raw, max_line, seed, &b, &inc_b);
	if (ra != rb || inc_a != inc_b || a.len != b.len || memcmp(a.bytes, b.bytes, a.len) != 0)
		abort();
	if (a.lines != b.lines || a.line_bytes != b.line_bytes || a.line_hash != b.line_hash)
		abort();
	if (raw && (ra != 0 || a.len != 2 * len))
		abort();
	free(a.bytes);
	free(b.bytes);
	return 0;
}
