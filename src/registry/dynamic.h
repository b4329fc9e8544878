/*
 * Private to src/registry: madengine's dynamic registries (scripts/<dir>/get_models_json.py),
 * run with python3 when the caller opted in (see rm_registry_opts in rm/registry.h).
 */
#ifndef RM_REGISTRY_DYNAMIC_H
#define RM_REGISTRY_DYNAMIC_H

#include "rm/util.h"
#include "rm/registry.h"

/*
 * Runs root/<base>/get_models_json.py (path: as messages show it) and appends its models as
 * scope `dir` with paths relative to `base` ("scripts/<dir>"). timeout in seconds (<= 0: 60).
 * On error nothing is appended and err names the file.
 */
int rm_dynamic_load(rm_registry *reg, const char *root, const char *path, const char *dir,
		    const char *base, double timeout, rm_error *err);

#endif
