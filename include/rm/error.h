/*
 * One error convention for the whole program.
 *
 * Every fallible function returns 0 on success or a negative value on failure, and on
 * failure fills the caller's rm_error. Callers that add context wrap the message on the way
 * up ("running 'smoke': POST /containers/create: 404 no such image ..."). The message is
 * printed once, by main(). Only main() exits.
 *
 * The message buffer is fixed-size: setting or wrapping never allocates and never fails;
 * an over-long message is truncated.
 */
#ifndef RM_ERROR_H
#define RM_ERROR_H

#include <stddef.h>

/* Categories; main() maps them to exit codes (see docs/exit-codes.md). */
enum rm_err_kind {
	RM_ERR_NONE = 0,
	RM_ERR_USAGE,	 /* bad command line */
	RM_ERR_INPUT,	 /* bad models.json, context, Dockerfile, tag matching nothing */
	RM_ERR_DOCKER,	 /* engine unreachable or refused a request */
	RM_ERR_IO,	 /* local file or system failure */
	RM_ERR_INTERNAL, /* out of memory, bug */
};

typedef struct rm_error {
	int kind;
	char msg[2048];
} rm_error;

#define RM_ERROR_INIT                                                                              \
	{                                                                                          \
		RM_ERR_NONE,                                                                       \
		{                                                                                  \
			0                                                                          \
		}                                                                                  \
	}

/* Sets the message (lowercase, no final period) and kind; returns -1. err may be NULL. */
int rm_error_set(rm_error *err, int kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefixes "<context>: " to the current message; keeps the kind; returns -1. */
int rm_error_wrap(rm_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Clears the error. */
void rm_error_clear(rm_error *err);

#endif
