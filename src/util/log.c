#include <stdarg.h>
#include <stdio.h>

#include "rm/util.h"

static int log_level = 1;
static unsigned warn_count;

void rm_log_set_level(int level)
{
	log_level = level;
}

unsigned rm_warn_count(void)
{
	return warn_count;
}

void rm_warn(const char *fmt, ...)
{
	va_list ap;

	warn_count++;
	fputs("run_models: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void rm_info(const char *fmt, ...)
{
	va_list ap;

	if (log_level < 1)
		return;
	fputs("run_models: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
