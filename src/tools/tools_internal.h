/*
 * Shared by the tools module's files: tools.c (the tools file, the context's keys, the
 * order) and builtin.c (madengine's tools, built in).
 */
#ifndef RM_TOOLS_INTERNAL_H
#define RM_TOOLS_INTERNAL_H

#include <stddef.h>

#include "rm/tools.h"

/* A built-in definition. Scripts are shell text run with bash -c in the model's folder. */
struct rm_tools__builtin {
	const char *name;
	const char *cmd;	    /* or NULL */
	const char *const *env;	    /* "K", "V", ... NULL */
	const char *pre;	    /* or NULL */
	const char *post;	    /* or NULL */
	const char *const *outputs; /* NULL-terminated, or NULL */
};

extern const struct rm_tools__builtin rm_tools__builtins[];
extern const size_t rm_tools__n_builtins;

/* The built-in of that name, or NULL. */
const struct rm_tools__builtin *rm_tools__builtin(const char *name);

#endif
