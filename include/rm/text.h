/*
 * Text for reports (src/results/text.c, files.c): untrusted text (container logs, failure
 * reasons, model names) made safe for the formats reports are written in, a log's last
 * lines, and a report file written in place. The rm_text_* functions append to an rm_buf
 * and return 0, or -1 when the buffer's ceiling is reached (the buffer keeps what fit).
 */
#ifndef RM_TEXT_H
#define RM_TEXT_H

#include <stddef.h>

#include "rm/util.h"

/*
 * Text that is valid UTF-8 and allowed in XML 1.0: ANSI escape sequences (colours, cursor
 * moves) are dropped, other control characters except tab and newline become "\xNN" (a CR
 * before a newline is dropped, a lone CR becomes a newline: progress bars), invalid UTF-8
 * bytes and the non-characters U+FFFE/U+FFFF become U+FFFD.
 */
int rm_text_clean(rm_buf *out, const char *s, size_t n);

/* rm_text_clean, then &, <, >, " and ' as entities: for HTML text and attributes. */
int rm_text_html(rm_buf *out, const char *s);

/* rm_text_clean, then a Markdown table cell: '|' escaped, newlines as spaces, backticks and
 * the characters that start inline markup left alone but '<' as &lt; (GitHub renders
 * HTML). */
int rm_text_md_cell(rm_buf *out, const char *s);

/*
 * The last n_lines lines of a file, at most max_bytes (read backwards from the end, never
 * the whole file), into out as cleaned text. Returns 0, or -1 with err naming the file.
 */
int rm_tail_lines(const char *path, size_t n_lines, size_t max_bytes, rm_buf *out, rm_error *err);

/*
 * Writes text to path, replacing it (append = 0: through a temporary file beside it,
 * renamed into place) or appending (append = 1, for $GITHUB_STEP_SUMMARY).
 */
int rm_write_text_file(const char *path, const char *text, size_t len, int append, rm_error *err);

#endif
