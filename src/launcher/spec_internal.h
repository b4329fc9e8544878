/*
 * Shared by the container spec's files: spec.c (the create body, the command, the
 * environment, GPUs, run options) and spec_data.c (the model's data).
 */
#ifndef RM_LAUNCHER_SPEC_INTERNAL_H
#define RM_LAUNCHER_SPEC_INTERNAL_H

#include <stddef.h>

#include "rm/launcher.h"

/* Adds the bind mounts of the data plan's sources to HostConfig.Binds. */
int rm_launcher__spec_data_binds(const rm_spec_in *in, json_t *hc, rm_error *err);
/* Appends the wrapper that runs the custom data scripts (nothing without any) to the
 * NULL-terminated argv *v of *n words. */
int rm_launcher__spec_data_cmd(const rm_spec_in *in, char ***v, size_t *n, rm_error *err);

#endif
