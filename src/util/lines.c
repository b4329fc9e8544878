/*
 * Bounded line assembly (see rm_lines in rm/util.h): the live stream and `run_models parse`
 * split lines the same way.
 */
#include <stdlib.h>
#include <string.h>

#include "rm/util.h"

#define LINES_DEFAULT_MAX (64 * 1024)

void rm_lines_init(rm_lines *l, size_t max_line)
{
	l->buf = NULL;
	l->len = 0;
	l->max_line = max_line ? max_line : LINES_DEFAULT_MAX;
}

/* Lines are always handed out from the buffer, NUL-terminated, so a parser that calls
 * strtod or sscanf on a line cannot run past its end. */
static void deliver(rm_lines *l, rm_line_cb cb, void *ud, int kind)
{
	l->buf[l->len] = '\0';
	cb(ud, l->buf, l->len, kind);
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
			 * follows, so a line of exactly max_line bytes stays one whole line
			 * (and says so) and no spurious empty line appears at its '\n'. */
			if (l->len == l->max_line)
				deliver(l, cb, ud, RM_LINE_PIECE);
			size_t room = l->max_line - l->len;
			size_t n = seg < room ? seg : room;
			memcpy(l->buf + l->len, data, n);
			l->len += n;
			data += n;
			len -= n;
			seg -= n;
		}
		if (nl) {
			deliver(l, cb, ud, RM_LINE_WHOLE);
			data++;
			len--;
		}
	}
}

void rm_lines_flush(rm_lines *l, rm_line_cb cb, void *ud)
{
	if (l->len)
		deliver(l, cb, ud, RM_LINE_END);
}

void rm_lines_release(rm_lines *l)
{
	if (!l)
		return;
	free(l->buf);
	l->buf = NULL;
	l->len = 0;
}
