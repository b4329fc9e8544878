/*
 * Hand-written on purpose: libxml2 escapes &, < and > but rejects (rather than repairs) the
 * control characters and broken UTF-8 that container logs are full of, and there is no
 * Debian library that cleans terminal output for XML.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rm/util.h"
#include "rm/results.h"

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when invalid. *cp gets the code
 * point. */
static size_t utf8_seq(const unsigned char *s, size_t n, unsigned *cp)
{
	unsigned c = s[0], v;
	size_t len;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		v = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		v = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		v = c & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates, beyond U+10FFFF. */
	if ((len == 3 && v < 0x800) || (len == 4 && (v < 0x10000 || v > 0x10ffff)) ||
	    (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return len;
}

/* An ANSI escape at s: ESC [ ... final byte, ESC ] ... BEL/ST, or ESC + one char. Returns
 * the bytes to skip. */
static size_t ansi_len(const unsigned char *s, size_t n)
{
	size_t i;
	if (n < 2)
		return 1;
	if (s[1] == '[') {
		for (i = 2; i < n; i++)
			if (s[i] >= 0x40 && s[i] <= 0x7e)
				return i + 1;
		return n;
	}
	if (s[1] == ']') {
		for (i = 2; i < n; i++) {
			if (s[i] == 0x07)
				return i + 1;
			if (s[i] == 0x1b && i + 1 < n && s[i + 1] == '\\')
				return i + 2;
		}
		return n;
	}
	return 2;
}

int rm_text_clean(rm_buf *out, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	while (i < n) {
		unsigned cp;
		size_t len;
		if (s[i] == 0x1b) {
			i += ansi_len(s + i, n - i);
			continue;
		}
		if (s[i] == '\r') {
			if (i + 1 < n && s[i + 1] == '\n') {
				i++;
				continue;
			}
			if (rm_buf_addch(out, '\n'))
				return -1;
			i++;
			continue;
		}
		if (s[i] < 0x20 && s[i] != '\t' && s[i] != '\n') {
			if (rm_buf_addf(out, "\\x%02x", s[i]))
				return -1;
			i++;
			continue;
		}
		len = utf8_seq(s + i, n - i, &cp);
		if (!len || cp == 0xfffe || cp == 0xffff || cp == 0x7f) {
			if (rm_buf_addstr(out, cp == 0x7f && len ? "\\x7f" : "\xef\xbf\xbd"))
				return -1;
			i += len ? len : 1;
			continue;
		}
		if (rm_buf_add(out, s + i, len))
			return -1;
		i += len;
	}
	return 0;
}

int rm_text_html(rm_buf *out, const char *s)
{
	rm_buf clean = RM_BUF_INIT(out->max);
	int ret = 0;

	if (!s)
		return 0;
	if (rm_text_clean(&clean, s, strlen(s)))
		ret = -1;
	for (const char *p = rm_buf_str(&clean); *p && !ret; p++) {
		switch (*p) {
		case '&':
			ret = rm_buf_addstr(out, "&amp;");
			break;
		case '<':
			ret = rm_buf_addstr(out, "&lt;");
			break;
		case '>':
			ret = rm_buf_addstr(out, "&gt;");
			break;
		case '"':
			ret = rm_buf_addstr(out, "&quot;");
			break;
		case '\'':
			ret = rm_buf_addstr(out, "&#39;");
			break;
		default:
			ret = rm_buf_addch(out, *p);
		}
	}
	rm_buf_release(&clean);
	return ret;
}

int rm_text_md_cell(rm_buf *out, const char *s)
{
	rm_buf clean = RM_BUF_INIT(out->max);
	int ret = 0;

	if (!s)
		return 0;
	if (rm_text_clean(&clean, s, strlen(s)))
		ret = -1;
	for (const char *p = rm_buf_str(&clean); *p && !ret; p++) {
		if (*p == '|')
			ret = rm_buf_addstr(out, "\\|");
		else if (*p == '\n' || *p == '\t')
			ret = rm_buf_addch(out, ' ');
		else if (*p == '<')
			ret = rm_buf_addstr(out, "&lt;");
		else if (*p == '\\')
			ret = rm_buf_addstr(out, "\\\\");
		else
			ret = rm_buf_addch(out, *p);
	}
	rm_buf_release(&clean);
	return ret;
}

int rm_tail_lines(const char *path, size_t n_lines, size_t max_bytes, rm_buf *out, rm_error *err)
{
	enum { BLOCK = 8192 };
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	off_t pos, start;
	size_t newlines = 0;
	char block[BLOCK], *tail = NULL;
	int ret = -1;

	if (fd < 0)
		return rm_error_sys(err, RM_ERR_IO, errno, "cannot open '%s'", path);
	if (fstat(fd, &st) != 0) {
		rm_error_sys(err, RM_ERR_IO, errno, "cannot stat '%s'", path);
		goto out;
	}
	pos = st.st_size;
	/* A final newline ends the last line; it does not start an empty one. */
	if (pos > 0 && pread(fd, block, 1, pos - 1) == 1 && block[0] == '\n')
		pos--;
	start = pos;
	while (start > 0 && (size_t)(pos - start) < max_bytes && newlines < n_lines) {
		size_t want = (size_t)(start < BLOCK ? start : BLOCK);
		ssize_t r = pread(fd, block, want, start - (off_t)want);
		if (r != (ssize_t)want) {
			rm_error_sys(err, RM_ERR_IO, r < 0 ? errno : 0, "cannot read '%s'%s", path,
				     r < 0 ? "" : ": short read");
			goto out;
		}
		for (size_t i = want; i-- > 0;) {
			if (block[i] == '\n' && ++newlines == n_lines) {
				start = start - (off_t)want + (off_t)i + 1;
				goto found;
			}
		}
		start -= (off_t)want;
	}
found:
	if ((size_t)(pos - start) > max_bytes)
		start = pos - (off_t)max_bytes;
	/* Read the tail in one piece (at most max_bytes) so that no UTF-8 character or escape
	 * sequence is cut at a block edge. */
	tail = rm_xmalloc((size_t)(pos - start) + 1);
	for (off_t p = start; p < pos;) {
		ssize_t r = pread(fd, tail + (p - start), (size_t)(pos - p), p);
		if (r <= 0) {
			rm_error_sys(err, RM_ERR_IO, r < 0 ? errno : 0, "cannot read '%s'%s", path,
				     r < 0 ? "" : ": short read");
			goto out;
		}
		p += r;
	}
	rm_text_clean(out, tail, (size_t)(pos - start));
	ret = 0;
out:
	free(tail);
	close(fd);
	return ret;
}
