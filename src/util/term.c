/*
 * What the terminal gets: colour (and when not), its width, text clipped to columns, and
 * aligned tables that fit a width.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "rm/util.h"

static enum rm_color_when color_mode = RM_COLOR_WHEN_AUTO;

const rm_choice rm_color_words[] = {{"auto", RM_COLOR_WHEN_AUTO},
				    {"always", RM_COLOR_WHEN_ALWAYS},
				    {"never", RM_COLOR_WHEN_NEVER},
				    {NULL, 0}};

void rm_color_set(enum rm_color_when when)
{
	color_mode = when;
}

int rm_color_on(FILE *f)
{
	const char *no = getenv("NO_COLOR"), *term = getenv("TERM");

	if (color_mode != RM_COLOR_WHEN_AUTO)
		return color_mode == RM_COLOR_WHEN_ALWAYS;
	if (no && *no)
		return 0;
	if (term && !strcmp(term, "dumb"))
		return 0;
	return isatty(fileno(f));
}

const char *rm_color_start(FILE *f, enum rm_color c)
{
	static const char *const codes[] = {"", "\033[32m", "\033[1;31m", "\033[33m", "\033[1m"};

	if (c == RM_COLOR_NONE || (size_t)c >= sizeof(codes) / sizeof(codes[0]) || !rm_color_on(f))
		return "";
	return codes[c];
}

const char *rm_color_end(FILE *f, enum rm_color c)
{
	return c == RM_COLOR_NONE || !rm_color_on(f) ? "" : "\033[0m";
}

enum rm_color rm_status_color(rm_status status)
{
	switch (status) {
	case RM_STATUS_SUCCESS:
		return RM_COLOR_GOOD;
	case RM_STATUS_FAILURE:
		return RM_COLOR_BAD;
	case RM_STATUS_SKIPPED:
		return RM_COLOR_WARN;
	case RM_STATUS_NONE:
		break;
	}
	return RM_COLOR_NONE;
}

int rm_term_width(FILE *f)
{
	struct winsize ws;
	const char *cols = getenv("COLUMNS");
	long n;

	if (!isatty(fileno(f)))
		return 0;
	if (ioctl(fileno(f), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	if (cols && rm_parse_long(cols, 1, 10000, &n) == 0)
		return (int)n;
	return 80;
}

/* A byte that continues a UTF-8 character. */
static int continuation(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

size_t rm_text_width(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += !continuation((unsigned char)*s);
	return n;
}

size_t rm_text_clip(const char *s, size_t cols)
{
	size_t i = 0, used = 0;

	while (s[i]) {
		size_t len = 1;
		while (s[i + len] && continuation((unsigned char)s[i + len]))
			len++;
		if (used + 1 > cols)
			break;
		used++;
		i += len;
	}
	return i;
}

/* ---- tables ---- */

#define GAP 2

void rm_table_init(rm_table *t, size_t ncols, const char *const *header)
{
	memset(t, 0, sizeof(*t));
	t->ncols = ncols;
	t->flags = rm_xcalloc(ncols, sizeof(*t->flags));
	t->min = rm_xcalloc(ncols, sizeof(*t->min));
	t->rank = rm_xcalloc(ncols, sizeof(*t->rank));
	t->cells = rm_xcalloc(ncols, sizeof(*t->cells));
	for (size_t c = 0; c < ncols; c++)
		t->cells[c] = rm_xstrdup(header[c] ? header[c] : "");
}

void rm_table_column(rm_table *t, size_t col, unsigned flags, size_t min_width, unsigned rank)
{
	t->flags[col] = flags;
	t->min[col] = min_width;
	t->rank[col] = rank;
}

void rm_table_add(rm_table *t, const char *const *cells)
{
	size_t base = (t->nrows + 1) * t->ncols;

	t->cells = rm_xrealloc(t->cells, (base + t->ncols) * sizeof(*t->cells));
	for (size_t c = 0; c < t->ncols; c++)
		t->cells[base + c] = rm_xstrdup(cells[c] ? cells[c] : "");
	t->nrows++;
}

void rm_table_release(rm_table *t)
{
	for (size_t i = 0; t->cells && i < (t->nrows + 1) * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t->flags);
	free(t->min);
	free(t->rank);
	memset(t, 0, sizeof(*t));
}

/* One cell in w columns: cut with "~" when longer, padded on the side its alignment says
 * (the last column is not padded on the right). */
static void print_cell(FILE *f, const char *s, size_t w, unsigned flags, int last, int header)
{
	size_t tw = rm_text_width(s), shown = tw, len = strlen(s);
	int cut = tw > w;
	enum rm_color col = header		      ? RM_COLOR_BOLD
			    : flags & RM_TABLE_STATUS ? rm_status_color(rm_status_of(s))
						      : RM_COLOR_NONE;

	if (cut) {
		len = rm_text_clip(s, w ? w - 1 : 0);
		shown = w;
	}
	if (flags & RM_TABLE_RIGHT)
		fprintf(f, "%*s", (int)(w - shown), "");
	fputs(rm_color_start(f, col), f);
	fwrite(s, 1, len, f);
	if (cut && w)
		fputc('~', f);
	fputs(rm_color_end(f, col), f);
	if (!(flags & RM_TABLE_RIGHT) && !last)
		fprintf(f, "%*s", (int)(w - shown), "");
}

void rm_table_print(const rm_table *t, FILE *f, const char *indent, size_t width)
{
	size_t *w = rm_xcalloc(t->ncols, sizeof(*w)), total;

	for (size_t r = 0; r <= t->nrows; r++)
		for (size_t c = 0; c < t->ncols; c++) {
			size_t n = rm_text_width(t->cells[r * t->ncols + c]);
			if (n > w[c])
				w[c] = n;
		}
	total = rm_text_width(indent) + (t->ncols ? (t->ncols - 1) * GAP : 0);
	for (size_t c = 0; c < t->ncols; c++)
		total += w[c];
	/* Narrow a shrinking column by one (the lowest rank, the widest) until it fits or
	 * none can shrink. */
	while (width && total > width) {
		size_t best = t->ncols;
		for (size_t c = 0; c < t->ncols; c++)
			if ((t->flags[c] & RM_TABLE_SHRINK) && w[c] > t->min[c] &&
			    (best == t->ncols || t->rank[c] < t->rank[best] ||
			     (t->rank[c] == t->rank[best] && w[c] > w[best])))
				best = c;
		if (best == t->ncols)
			break;
		w[best]--;
		total--;
	}
	for (size_t r = 0; r <= t->nrows; r++) {
		fputs(indent, f);
		for (size_t c = 0; c < t->ncols; c++) {
			if (c)
				fprintf(f, "%*s", GAP, "");
			print_cell(f, t->cells[r * t->ncols + c], w[c], t->flags[c],
				   c + 1 == t->ncols, r == 0);
		}
		fputc('\n', f);
	}
	free(w);
}
