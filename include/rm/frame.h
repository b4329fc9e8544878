/*
 * Incremental decoder for the Docker attach/logs stream.
 *
 * With Tty false the engine multiplexes stdout and stderr: each frame is an 8-byte header
 * {type, 0, 0, 0, size as big-endian uint32} followed by `size` bytes; type 1 stdout,
 * 2 stderr, 3 daemon error text (0 = stdin, treated as stdout). Headers and payloads arrive
 * split at arbitrary points; the decoder keeps at most 8 bytes of state and hands payload
 * pieces to the callback as they come (a frame's payload may arrive in several calls). With
 * raw = 1 (Tty true) every byte is stdout.
 *
 * The decoder has no side effects besides calling cb; it allocates nothing.
 */
#ifndef RM_FRAME_H
#define RM_FRAME_H

#include <stddef.h>
#include <stdint.h>

enum { RM_STREAM_STDOUT = 1, RM_STREAM_STDERR = 2, RM_STREAM_SYSERR = 3 };

typedef void (*rm_frame_cb)(void *ud, int stream, const char *data, size_t len);

typedef struct rm_frame_decoder {
	unsigned char hdr[8];
	size_t hdr_len;
	uint32_t remaining;
	int stream;
	int raw;
	int broken; /* set after a header with an unknown type; everything else is dropped */
} rm_frame_decoder;

void rm_frame_init(rm_frame_decoder *d, int raw);
/* Returns 0, or -1 once the stream is broken (unknown frame type). */
int rm_frame_feed(rm_frame_decoder *d, const char *data, size_t len, rm_frame_cb cb, void *ud);
/* Non-zero when the stream ended in the middle of a frame header or payload. */
int rm_frame_incomplete(const rm_frame_decoder *d);

/*
 * Line assembly for one stream: bytes in, whole lines out (without the '\n'; a trailing
 * '\r' is kept for the parser to decide). Lines longer than max_line are delivered in
 * max_line pieces, so memory stays bounded whatever the container prints. Each line handed
 * to the callback is also NUL-terminated (line[len] == '\0').
 */
typedef void (*rm_line_cb)(void *ud, const char *line, size_t len);

typedef struct rm_lines {
	char *buf;
	size_t len;
	size_t max_line;
} rm_lines;

void rm_lines_init(rm_lines *l, size_t max_line);
void rm_lines_feed(rm_lines *l, const char *data, size_t len, rm_line_cb cb, void *ud);
/* Delivers a last unterminated line, if any. */
void rm_lines_flush(rm_lines *l, rm_line_cb cb, void *ud);
void rm_lines_release(rm_lines *l);

#endif
