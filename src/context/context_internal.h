/*
 * Shared by context.c (overrides) and detect.c (the host's GPUs).
 */
#ifndef RM_CONTEXT_INTERNAL_H
#define RM_CONTEXT_INTERNAL_H

#include "rm/context.h"

/* Each fills vendor, count, architecture and render nodes when it finds GPUs. */
void detect_kfd(rm_context *ctx, const char *sysfs_root);
void detect_rocminfo(rm_context *ctx);
void detect_nvidia_smi(rm_context *ctx);

#endif
