/*
 * The Docker multiplexed stream decoder and bounded line assembly (see rm/frame.h).
 */
#include <stdlib.h>
#include <string.h>

#include "rm/frame.h"
#include "rm/util.h"

#define LINES_DEFAULT_MAX (64 * 1024)

void rm_frame_init(rm_frame_decoder *d, int raw)
{
	memset(d, 0, sizeof(*d));
	d->raw = raw;
}

int rm_frame_feed(rm_frame_decoder *d, const char *data, size_t len, rm_frame_cb cb, void *ud)
{
	if (d->broken)
		return -1;
	if (d->raw) {
		if (len)
			cb(ud, RM_STREAM_STDOUT, data, len);
		return 0;
	}
	while (len) {
		if (d->remaining) {
			size_t n = len < d->remaining ? len : d->remaining;
			cb(ud, d->stream, data, n);
			d->remaining -= (uint32_t)n;
			data += n;
			len -= n;
			continue;
		}
		size_t want = sizeof(d->hdr) - d->hdr_len;
		size_t n = len < want ? len : want;
		memcpy(d->hdr + d->hdr_len, data, n);
		d->hdr_len += n;
		data += n;
		len -= n;
		/* Only the type byte is checked, as Docker's own stdcopy does: the three padding
		 * bytes carry no meaning. It is checked as soon as it arrives: a wrong type
		 * means we are not looking at a multiplexed stream (a tty container, or
		 * garbage), so nothing after it can be trusted. */
		if (d->hdr[0] > RM_STREAM_SYSERR) {
			d->broken = 1;
			d->hdr_len = 0;
			return -1;
		}
		if (d->hdr_len < sizeof(d->hdr))
			break;
		d->hdr_len = 0;
		/* 0 is stdin, only seen with attach: shown as stdout. */
		d->stream = d->hdr[0] ? d->hdr[0] : RM_STREAM_STDOUT;
		d->remaining = (uint32_t)d->hdr[4] << 24 | (uint32_t)d->hdr[5] << 16 |
			       (uint32_t)d->hdr[6] << 8 | (uint32_t)d->hdr[7];
	}
	return 0;
}

int rm_frame_incomplete(const rm_frame_decoder *d)
{
	return !d->raw && !d->broken && (d->hdr_len != 0 || d->remaining != 0);
}

void rm_lines_init(rm_lines *l, size_t max_line)
{
	l->buf = NULL;
	l->len = 0;
	l->max_line = max_line ? max_line : LINES_DEFAULT_MAX;
}

/* Lines are always handed out from the buffer, NUL-terminated, so a parser that calls
 * strtod or sscanf on a line cannot run past its end. */
static void deliver(rm_lines *l, rm_line_cb cb, void *ud)
{
	l->buf[l->len] = '\0';
	cb(ud, l->buf, l->len);
	l->len = 0;
}

void rm_lines_feed(rm_lines *l, const char *data, size_t len, rm_line_cb cb, void *ud)
{
	if (!l->buf && len)
		l->buf = rm_xmalloc(l->max_line + 1);
	while (len) {
		const char *nl = memchr(data, '\n', len);
		size_t seg = nl ? (size_t)(nl - data) : len;
		while (seg) {
			/* A full buffer is emitted as a piece only when more of the same line
			 * follows, so a line of exactly max_line bytes stays one line and no
			 * spurious empty line appears at its '\n'. */
			if (l->len == l->max_line)
				deliver(l, cb, ud);
			size_t room = l->max_line - l->len;
			size_t n = seg < room ? seg : room;
			memcpy(l->buf + l->len, data, n);
			l->len += n;
			data += n;
			len -= n;
			seg -= n;
		}
		if (nl) {
			deliver(l, cb, ud);
			data++;
			len--;
		}
	}
}

void rm_lines_flush(rm_lines *l, rm_line_cb cb, void *ud)
{
	if (l->len)
		deliver(l, cb, ud);
}

void rm_lines_release(rm_lines *l)
{
	if (!l)
		return;
	free(l->buf);
	l->buf = NULL;
	l->len = 0;
}
