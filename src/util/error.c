#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rm/util.h"

int rm_error_set(rm_error *err, int kind, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	err->kind = kind;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

int rm_error_wrap(rm_error *err, const char *fmt, ...)
{
	char prefix[512];
	char old[sizeof(err->msg)];
	va_list ap;

	if (!err)
		return -1;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	/* Truncation of an over-long chain of context is accepted (see rm/util.h, "Errors"). */
	size_t n = strlen(prefix);
	if (n > sizeof(err->msg) - 3)
		n = sizeof(err->msg) - 3;
	memcpy(err->msg, prefix, n);
	memcpy(err->msg + n, ": ", 2);
	size_t rest = sizeof(err->msg) - n - 3;
	size_t ol = strnlen(old, sizeof(old));
	if (ol > rest)
		ol = rest;
	memcpy(err->msg + n + 2, old, ol);
	err->msg[n + 2 + ol] = '\0';
	if (err->kind == RM_ERR_NONE)
		err->kind = RM_ERR_INTERNAL;
	return -1;
}

void rm_error_clear(rm_error *err)
{
	if (!err)
		return;
	err->kind = RM_ERR_NONE;
	err->msg[0] = '\0';
}
