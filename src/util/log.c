#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "rm/util.h"

static int log_level = 1;
static unsigned warn_count;
static void (*before_message)(void);
static rm_buf *captured;

void rm_log_set_level(int level)
{
	log_level = level;
}

int rm_log_level(void)
{
	return log_level;
}

unsigned rm_warn_count(void)
{
	return warn_count;
}

void rm_log_set_before(void (*fn)(void))
{
	before_message = fn;
}

void rm_log_capture(rm_buf *b)
{
	captured = b;
}

/* "run_models: " (stderr only), the kind's word, the message, a line end. */
static void message(const char *kind, enum rm_color c, const char *fmt, va_list ap)
{
	if (captured) {
		char *text = rm_xvasprintf(fmt, ap);
		rm_buf_addf(captured, "%s%s\n", kind, text);
		free(text);
		return;
	}
	if (before_message)
		before_message();
	fprintf(stderr, "run_models: %s%s%s", rm_color_start(stderr, c), kind,
		rm_color_end(stderr, c));
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void rm_warn(const char *fmt, ...)
{
	va_list ap;

	warn_count++;
	va_start(ap, fmt);
	message("warning: ", RM_COLOR_WARN, fmt, ap);
	va_end(ap);
}

void rm_info(const char *fmt, ...)
{
	va_list ap;

	if (log_level < 1)
		return;
	va_start(ap, fmt);
	message("", RM_COLOR_NONE, fmt, ap);
	va_end(ap);
}
