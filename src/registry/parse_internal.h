/*
 * Private to parse.c (yajl events into raw fields) and entry.c (one entry's raw fields
 * validated into an rm_model).
 */
#ifndef RM_REGISTRY_PARSE_INTERNAL_H
#define RM_REGISTRY_PARSE_INTERNAL_H

#include <stddef.h>

#include <yajl/yajl_parse.h>

#include "rm/registry.h"

/* Model timeouts: MAD's -1 means "no override"; anything above a year is a typo. */
#define TIMEOUT_MAX 31536000.0
/* GPUs one model may ask for. */
#define N_GPUS_MAX 65536

/* Fields we read, in the order they are validated. */
enum field {
	F_NAME,
	F_DOCKERFILE,
	F_SCRIPTS,
	F_DOCKERCONTEXT,
	F_MULTIPLE_RESULTS,
	F_N_GPUS,
	F_OWNER,
	F_TAGS,
	F_ARGS,
	F_URL,
	F_DATA,
	F_TRAINING_PRECISION,
	F_SKIP_GPU_ARCH,
	F_ADDITIONAL_DOCKER_RUN_OPTIONS,
	F_ENV_VARS,
	F_BUILD_SECRETS,
	F_PARSER,
	F_TUNABLEOP,
	F_TIMEOUT,
	F_SLURM,
	F_DISTRIBUTED,
	N_FIELDS,
	F_IGNORED = N_FIELDS, /* a MAD field we do not use: skipped silently */
	F_UNKNOWN,	      /* warned about and skipped */
};

enum vtype { V_NONE, V_NULL, V_BOOL, V_INT, V_REAL, V_STR, V_ARR, V_OBJ };

/* The raw value of one known field in the current entry. */
struct raw {
	int type;
	int bad;      /* an array or object holding an array or an object */
	int nonstr;   /* ... or a number, a boolean or null (kinds says which) */
	char *str;    /* V_STR */
	long long i;  /* V_INT */
	double num;   /* V_INT and V_REAL */
	char **items; /* V_ARR elements, V_OBJ values: the text of each scalar */
	int *kinds;   /* the vtype of each of items */
	char **keys;  /* V_OBJ keys */
	size_t n, n_keys;
};

struct parser {
	rm_registry *reg;
	const char *text, *source, *scope, *base;
	rm_error *err;
	yajl_handle h;
	size_t keep, cap, index;
	int depth;	  /* 0 outside, 1 in the top array, 2 in an entry, 3+ in a field value */
	int field;	  /* the field of the current key at depth 2 */
	int top_is_array; /* the document started with '[' */
	struct raw f[N_FIELDS];
	char **other_keys; /* ignored and unknown keys of the entry, for duplicates */
	size_t n_other;
	char **unknown; /* unknown keys of the entry, warned about once valid */
	size_t n_unknown;
	/* the file's unknown fields, warned about once a file at its end: each field, the
	 * first model that has it and how many do */
	char **unknown_fields, **unknown_first;
	size_t n_unknown_fields, *unknown_count;
	int failed; /* err is set */
};

extern const char *const rm_registry__field_names[N_FIELDS];
/* MAD fields we accept without using them (NULL-terminated). */
extern const char *const rm_registry__ignored_fields[];

/* The entry whose object just closed: validated into a model appended to p->reg (entry.c).
 * Returns 0, or -1 with p->err set. */
int rm_registry__entry_end(struct parser *p);
/* An unknown field of a valid entry: counted, warned about once at the end of the file. */
void rm_registry__unknown_field(struct parser *p, const char *field, const char *model);
/* Clears the fields of the entry just handled, for the next one. */
void rm_registry__entry_reset(struct parser *p);
/* Frees a raw value and zeroes it. */
void rm_registry__raw_release(struct raw *r);

#endif
