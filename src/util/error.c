#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rm/util.h"

static void set_msg(rm_error *err, int kind, int errnum, const char *fmt, va_list ap)
{
	err->kind = kind;
	err->sys_errno = errnum;
	err->hint = NULL;
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
}

int rm_error_set(rm_error *err, int kind, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	va_start(ap, fmt);
	set_msg(err, kind, 0, fmt, ap);
	va_end(ap);
	return -1;
}

int rm_error_sys(rm_error *err, int kind, int errnum, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	va_start(ap, fmt);
	set_msg(err, kind, errnum, fmt, ap);
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

int rm_error_hint(rm_error *err, const char *hint)
{
	if (err)
		err->hint = hint;
	return -1;
}

/* The one place where strerror's text is made: the messages hold only what failed. GNU's
 * strerror_r (the build defines _GNU_SOURCE), since errors are shown from any thread. */
const char *rm_error_text(rm_error *err)
{
	char buf[256];
	const char *cause = "";

	if (!err->sys_errno && !err->hint)
		return err->msg;
	if (err->sys_errno)
		cause = strerror_r(err->sys_errno, buf, sizeof(buf));
	snprintf(err->text, sizeof(err->text), "%s%s%s%s", err->msg, err->sys_errno ? ": " : "",
		 cause, err->hint ? err->hint : "");
	return err->text;
}

void rm_warn_sys(int errnum, const char *fmt, ...)
{
	rm_error e;
	va_list ap;

	va_start(ap, fmt);
	set_msg(&e, RM_ERR_IO, errnum, fmt, ap);
	va_end(ap);
	rm_warn("%s", rm_error_text(&e));
}

void rm_error_clear(rm_error *err)
{
	if (!err)
		return;
	err->kind = RM_ERR_NONE;
	err->sys_errno = 0;
	err->hint = NULL;
	err->msg[0] = '\0';
	err->text[0] = '\0';
}
