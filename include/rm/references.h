/*
 * Pinned references (ReFrame's; src/results/references.c): an expected value per model and
 * metric with a tolerance below and above it, in percent. A value outside on the bad side is a
 * regression whatever the history says; outside on the good side it is reported (time to update the
 * reference). For a metric whose direction is unknown, both sides fail.
 *
 *   {"pyt_resnet50": {"samples_per_second": {"value": 2400, "lower": 5, "upper": 10}}}
 *
 * (YAML or JSON, optionally under a top-level "references" key; lower or upper left out:
 * no bound on that side.)
 */
#ifndef RM_REFERENCES_H
#define RM_REFERENCES_H

#include <stddef.h>

#include "rm/util.h"

typedef struct json_t json_t;

typedef struct rm_reference {
	const char *model, *metric;
	double value;
	double lower_pct, upper_pct; /* NAN: no bound on that side */
} rm_reference;

typedef struct rm_references rm_references;

rm_references *rm_references_new(void);
void rm_references_free(rm_references *t);
/* Adds the references of an object as above; errors name source, model and metric. */
int rm_references_add_json(rm_references *t, const json_t *obj, const char *source, rm_error *err);
/* Reads a YAML or JSON file of references. */
int rm_references_load(rm_references *t, const char *path, rm_error *err);
const rm_reference *rm_references_find(const rm_references *t, const char *model,
				       const char *metric);
size_t rm_references_size(const rm_references *t);
/* The table as an object of the form above (for run.json). */
json_t *rm_references_json(const rm_references *t);

#endif
