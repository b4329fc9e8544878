/*
 * Private to src/registry: what registry.c (files and folders) and parse.c (one file's text)
 * share.
 */
#ifndef RM_REGISTRY_INTERNAL_H
#define RM_REGISTRY_INTERNAL_H

#include <stddef.h>

#include "rm/registry.h"

/* Frees every string of m and zeroes it. */
void rm_model_release(rm_model *m);
/* Drops models appended after `keep` (and re-indexes), so a failed file leaves the registry
 * as it was. */
void rm_registry_truncate(rm_registry *reg, size_t keep);

#endif
