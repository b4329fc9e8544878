/*
 * YAML to JSON through libyaml, for --additional-context-file (MAD users keep contexts as
 * JSON or YAML). Mappings become objects, sequences arrays; plain scalars that read as
 * integers, floats, true/false (YAML 1.2 core schema) or null/~ become those JSON types,
 * quoted scalars stay strings. Anchors and aliases are refused (a context has no use for
 * them and they allow "billion laughs" inputs); so are non-string mapping keys, duplicate
 * keys, and more than one document.
 */
#ifndef RM_YAML_H
#define RM_YAML_H

#include <stddef.h>

#include "rm/error.h"

typedef struct json_t json_t;

/* Returns a new JSON value, or NULL with err naming `source`, the line and the column. */
json_t *rm_yaml_to_json(const char *text, size_t len, const char *source, rm_error *err);

#endif
