/*
 * Options are declared once, in a table, and --help is generated from it (git's
 * parse-options). Each entry writes into a field of the command's option struct.
 */
#ifndef RM_OPTIONS_H
#define RM_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

#include "rm/error.h"

enum opt_type {
	OPT_FLAG,   /* int, set to 1 */
	OPT_STRING, /* const char *, the last one wins */
	OPT_LIST,   /* struct opt_list, every occurrence appended */
	OPT_NUMBER, /* double, >= 0 */
	OPT_INT,    /* long, >= 0 */
};

struct opt_list {
	const char **v;
	size_t n;
};

struct opt {
	const char *name; /* without the leading "--" */
	char short_name;  /* 0 when none */
	enum opt_type type;
	size_t offset;	 /* into the target struct */
	const char *arg; /* value name for --help, NULL for flags */
	const char *help;
};

#define OPT_END                                                                                    \
	{                                                                                          \
		NULL, 0, OPT_FLAG, 0, NULL, NULL                                                   \
	}

/* Parses argv[1..] (argv[0] is the command name). Non-option words go to *positional (a
 * list of pointers into argv). "--" ends the options. Returns 0, 1 when --help was printed,
 * or -1 with err filled (RM_ERR_USAGE). Lists must be freed with opt_list_release. */
int opt_parse(const struct opt *table, void *target, int argc, char **argv,
	      struct opt_list *positional, rm_error *err);
void opt_help(FILE *f, const char *usage, const struct opt *table);
void opt_list_release(struct opt_list *l);

#endif
