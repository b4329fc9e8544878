/*
 * The multiplexed log stream decoder and line assembly: splitting the input anywhere must
 * not change the output.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rm/engine.h"
#include "rm/util.h"

/* Output as two parallel byte strings: the data and, per byte, its stream. */
struct sink {
	rm_buf data;
	rm_buf tags;
	int calls;
};

static void sink_init(struct sink *s)
{
	rm_buf_init(&s->data, 1 << 24);
	rm_buf_init(&s->tags, 1 << 24);
	s->calls = 0;
}

static void sink_release(struct sink *s)
{
	rm_buf_release(&s->data);
	rm_buf_release(&s->tags);
}

static void on_frame(void *ud, int stream, const char *data, size_t len)
{
	struct sink *s = ud;
	s->calls++;
	CHECK(len > 0);
	rm_buf_add(&s->data, data, len);
	for (size_t i = 0; i < len; i++)
		rm_buf_addch(&s->tags, (char)('0' + stream));
}

static void add_frame(rm_buf *b, int type, const char *payload, size_t len)
{
	unsigned char h[8] = {(unsigned char)type,
			      0,
			      0,
			      0,
			      (unsigned char)(len >> 24),
			      (unsigned char)(len >> 16),
			      (unsigned char)(len >> 8),
			      (unsigned char)len};
	rm_buf_add(b, h, sizeof(h));
	rm_buf_add(b, payload, len);
}

static int same(const struct sink *a, const struct sink *b)
{
	return a->data.len == b->data.len && a->tags.len == b->tags.len &&
	       memcmp(rm_buf_str(&a->data), rm_buf_str(&b->data), a->data.len) == 0 &&
	       memcmp(rm_buf_str(&a->tags), rm_buf_str(&b->tags), a->tags.len) == 0;
}

TEST(multiplexed)
{
	rm_buf in = RM_BUF_INIT(1 << 20);
	char big[20000];
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)('a' + i % 26);
	add_frame(&in, 1, "hello\n", 6);
	add_frame(&in, 2, "oops\n", 5);
	add_frame(&in, 1, "", 0);
	add_frame(&in, 1, big, sizeof(big));
	add_frame(&in, 3, "daemon", 6);
	add_frame(&in, 0, "stdin", 5);
	add_frame(&in, 2, "\0\1\2", 3);

	struct sink ref;
	rm_frame_decoder d;
	sink_init(&ref);
	rm_frame_init(&d, 0);
	CHECK(rm_frame_feed(&d, in.data, in.len, on_frame, &ref) == 0);
	CHECK(!rm_frame_incomplete(&d));
	CHECK(ref.data.len == 6 + 5 + sizeof(big) + 6 + 5 + 3);
	CHECK(memcmp(ref.data.data, "hello\noops\n", 11) == 0);
	CHECK(memcmp(ref.tags.data, "11111122222", 11) == 0);
	CHECK(ref.tags.data[ref.tags.len - 1] == '2');
	CHECK(ref.tags.data[11 + sizeof(big)] == '3');
	CHECK(ref.tags.data[11 + sizeof(big) + 6] == '1'); /* type 0 shown as stdout */

	srand(12345);
	int all_same = 1;
	for (int iter = 0; iter < 500; iter++) {
		struct sink s;
		sink_init(&s);
		rm_frame_init(&d, 0);
		size_t off = 0;
		while (off < in.len) {
			size_t n =
			    (size_t)rand() % (iter % 2 ? 16 : 3000) + (iter % 3 == 0 ? 0 : 1);
			if (n > in.len - off)
				n = in.len - off;
			if (rm_frame_feed(&d, in.data + off, n, on_frame, &s) != 0)
				all_same = 0;
			off += n;
		}
		if (!same(&s, &ref) || rm_frame_incomplete(&d))
			all_same = 0;
		sink_release(&s);
	}
	CHECK(all_same);

	/* Byte by byte. */
	struct sink s;
	sink_init(&s);
	rm_frame_init(&d, 0);
	for (size_t i = 0; i < in.len; i++)
		rm_frame_feed(&d, in.data + i, 1, on_frame, &s);
	CHECK(same(&s, &ref));
	sink_release(&s);

	/* Truncated: inside a payload, inside a header, at a frame boundary. */
	sink_init(&s);
	rm_frame_init(&d, 0);
	rm_frame_feed(&d, in.data, in.len - 1, on_frame, &s);
	CHECK(rm_frame_incomplete(&d));
	sink_release(&s);
	sink_init(&s);
	rm_frame_init(&d, 0);
	rm_frame_feed(&d, in.data, 8 + 6 + 3, on_frame, &s);
	CHECK(rm_frame_incomplete(&d));
	CHECK_STR(rm_buf_str(&s.data), "hello\n");
	rm_frame_feed(&d, in.data + 17, 10, on_frame, &s);
	CHECK(!rm_frame_incomplete(&d));
	CHECK_STR(rm_buf_str(&s.data), "hello\noops\n");
	sink_release(&s);

	sink_release(&ref);
	rm_buf_release(&in);
}

TEST(raw_and_broken)
{
	struct sink s;
	rm_frame_decoder d;
	const char raw[] = "\1\0\0\0\0\0\0\5abc\n\7def";

	sink_init(&s);
	rm_frame_init(&d, 1);
	CHECK(rm_frame_feed(&d, raw, sizeof(raw) - 1, on_frame, &s) == 0);
	CHECK(rm_frame_feed(&d, "", 0, on_frame, &s) == 0);
	CHECK(s.data.len == sizeof(raw) - 1);
	CHECK(memcmp(s.data.data, raw, sizeof(raw) - 1) == 0);
	CHECK(strspn(rm_buf_str(&s.tags), "1") == sizeof(raw) - 1);
	CHECK(!rm_frame_incomplete(&d));
	sink_release(&s);

	/* A tty stream read as multiplexed: 'h' is no frame type. */
	sink_init(&s);
	rm_frame_init(&d, 0);
	CHECK(rm_frame_feed(&d, "hello world\n", 12, on_frame, &s) == -1);
	CHECK(d.broken);
	CHECK(s.calls == 0);
	CHECK(rm_frame_feed(&d, "\1\0\0\0\0\0\0\1x", 9, on_frame, &s) == -1);
	CHECK(s.calls == 0);
	sink_release(&s);

	/* A good frame, then an unknown type in a later chunk. */
	sink_init(&s);
	rm_frame_init(&d, 0);
	CHECK(rm_frame_feed(&d, "\2\0\0\0\0\0\0\2ok\x09\0\0", 13, on_frame, &s) == -1);
	CHECK_STR(rm_buf_str(&s.data), "ok");
	sink_release(&s);
}

struct lines {
	rm_buf all;   /* lines joined with '|' */
	rm_buf kinds; /* one letter a line: w whole, p piece, e end */
	int n;
	int nul_ok;
};

static void on_line(void *ud, const char *line, size_t len, int kind)
{
	struct lines *l = ud;
	if (line[len] != '\0')
		l->nul_ok = 0;
	if (l->n++)
		rm_buf_addch(&l->all, '|');
	rm_buf_add(&l->all, line, len);
	rm_buf_addch(&l->kinds, kind == RM_LINE_WHOLE ? 'w' : kind == RM_LINE_PIECE ? 'p' : 'e');
}

static void run_lines(const char *in, size_t max, size_t step, const char *want, int want_n,
		      const char *want_kinds)
{
	struct lines out = {RM_BUF_INIT(1 << 20), RM_BUF_INIT(1 << 20), 0, 1};
	rm_lines l;
	size_t len = strlen(in);

	rm_lines_init(&l, max);
	for (size_t off = 0; off < len; off += step)
		rm_lines_feed(&l, in + off, len - off < step ? len - off : step, on_line, &out);
	rm_lines_flush(&l, on_line, &out);
	rm_lines_flush(&l, on_line, &out); /* a second flush adds nothing */
	CHECK_STR(rm_buf_str(&out.all), want);
	CHECK(out.n == want_n);
	CHECK_STR(rm_buf_str(&out.kinds), want_kinds);
	CHECK(out.nul_ok);
	rm_lines_release(&l);
	rm_lines_release(&l);
	rm_buf_release(&out.all);
	rm_buf_release(&out.kinds);
}

TEST(lines)
{
	for (size_t step = 1; step <= 9; step++) {
		run_lines("a\nbb\n\nccc", 100, step, "a|bb||ccc", 4, "wwwe");
		run_lines("one\r\ntwo\r\n", 100, step, "one\r|two\r", 2, "ww");
		/* Long lines come in max_line pieces; exactly max_line stays whole, and says so:
		 * the line after it is a line of its own (issue 22). */
		run_lines("abcdefghij\nxy\n", 4, step, "abcd|efgh|ij|xy", 4, "ppww");
		run_lines("abcd\nefgh", 4, step, "abcd|efgh", 2, "we");
		run_lines("abcd\nxy\n", 4, step, "abcd|xy", 2, "ww");
		run_lines("abcdefgh\n", 4, step, "abcd|efgh", 2, "pw");
		run_lines("abcdefgh", 4, step, "abcd|efgh", 2, "pe");
		run_lines("", 4, step, "", 0, "");
		run_lines("\n", 4, step, "", 1, "w");
	}
	rm_lines l;
	rm_lines_init(&l, 0); /* 0 picks a default */
	CHECK(l.max_line > 0);
	rm_lines_release(&l);
	rm_lines_release(NULL);
}
