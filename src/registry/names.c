/*
 * The registry's name index: an open-addressing hash table from model name to its position
 * in rm_registry.models, so duplicate detection and rm_registry_find stay O(1) per model
 * (a 130,000-model registry was quadratic before: 62 s).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "rm/util.h"

/* Slot value meaning "empty"; positions are stored plus one. */
#define EMPTY 0

static uint64_t hash_name(const char *s)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

void rm_names_release(struct rm_names *ix)
{
	if (!ix)
		return;
	free(ix->slots);
	ix->slots = NULL;
	ix->cap = ix->n = 0;
}

/* Where name is, or the empty slot where it would go. */
static size_t probe(const struct rm_names *ix, const rm_model *models, const char *name)
{
	size_t mask = ix->cap - 1, i = (size_t)hash_name(name) & mask;

	while (ix->slots[i] != EMPTY && strcmp(models[ix->slots[i] - 1].name, name) != 0)
		i = (i + 1) & mask;
	return i;
}

static void grow(struct rm_names *ix, const rm_model *models)
{
	size_t old_cap = ix->cap, *old = ix->slots;

	ix->cap = old_cap ? old_cap * 2 : 64;
	ix->slots = rm_xcalloc(ix->cap, sizeof(*ix->slots));
	for (size_t i = 0; i < old_cap; i++)
		if (old[i] != EMPTY)
			ix->slots[probe(ix, models, models[old[i] - 1].name)] = old[i];
	free(old);
}

long rm_names_find(const struct rm_names *ix, const rm_model *models, const char *name)
{
	size_t i;

	if (!ix->cap)
		return -1;
	i = probe(ix, models, name);
	return ix->slots[i] == EMPTY ? -1 : (long)(ix->slots[i] - 1);
}

long rm_names_add(struct rm_names *ix, const rm_model *models, size_t at)
{
	size_t i;

	/* Load factor at most 1/2: probes stay short. */
	if ((ix->n + 1) * 2 > ix->cap)
		grow(ix, models);
	i = probe(ix, models, models[at].name);
	if (ix->slots[i] != EMPTY)
		return (long)(ix->slots[i] - 1);
	ix->slots[i] = at + 1;
	ix->n++;
	return -1;
}

void rm_names_rebuild(struct rm_names *ix, const rm_model *models, size_t n)
{
	rm_names_release(ix);
	for (size_t i = 0; i < n; i++)
		rm_names_add(ix, models, i);
}
