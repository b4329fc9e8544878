/*
 * The suite module's seams: a suite file as loaded (its YAML document for positions, its
 * JSON for values) and the helpers that point errors at a node, shared by the loader
 * (suite.c) and the sweeps (sweep.c).
 */
#ifndef RM_SUITE_INTERNAL_H
#define RM_SUITE_INTERNAL_H

#include <jansson.h>
#include <yaml.h>

#include "rm/suite.h"
#include "rm/util.h"

struct yfile {
	char *path;
	char *dir;
	yaml_document_t doc;
	int have_doc;
	json_t *json;
};

/* "'FILE' line L column C: FIELD: WHAT" (n NULL: without the position); returns -1. */
int rm_suite__fail_at(const struct yfile *f, const yaml_node_t *n, rm_error *err, const char *field,
		      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* The value node of key in a mapping node, the key node itself, item i of a sequence node
 * (NULL when absent or not of that kind). */
yaml_node_t *rm_suite__ymap(struct yfile *f, yaml_node_t *map, const char *key);
yaml_node_t *rm_suite__ykey(struct yfile *f, yaml_node_t *map, const char *key);
yaml_node_t *rm_suite__yseq(struct yfile *f, yaml_node_t *seq, size_t i);

/* An entry's `sweep` (node n, its value v; where: "entries[2].sweep") into *out. */
int rm_suite__sweep_parse(struct yfile *f, yaml_node_t *n, json_t *v, const char *where,
			  rm_sweep **out, rm_error *err);

#endif
