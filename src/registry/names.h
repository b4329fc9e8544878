/*
 * Private to src/registry: the hash index of model names (see names.c). The index stores
 * positions into an rm_model array owned by the registry; it never owns the names.
 */
#ifndef RM_REGISTRY_NAMES_H
#define RM_REGISTRY_NAMES_H

#include <stddef.h>

#include "rm/registry.h"

struct rm_names {
	size_t *slots; /* position + 1, 0 = empty */
	size_t cap;    /* a power of two, or 0 */
	size_t n;
};

/* Position of the model called name, or -1. */
long rm_names_find(const struct rm_names *ix, const rm_model *models, const char *name);
/* Adds models[at]; returns -1, or the position of an earlier model with the same name (then
 * nothing is added). */
long rm_names_add(struct rm_names *ix, const rm_model *models, size_t at);
/* Indexes models[0..n) afresh (after models were dropped). */
void rm_names_rebuild(struct rm_names *ix, const rm_model *models, size_t n);
void rm_names_release(struct rm_names *ix);

#endif
