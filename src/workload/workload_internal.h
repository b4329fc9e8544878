/*
 * Shared by the workload's files: workload.c (build, copy, release), cmd.c (the command),
 * render.c, render_data.c and render_tools.c (the create body), job_doc.c (JSON).
 */
#ifndef RM_WORKLOAD_INTERNAL_H
#define RM_WORKLOAD_INTERNAL_H

#include <stdlib.h>

#include "rm/util.h"
#include "rm/workload.h"

/* Per kind of RM_WORKLOAD_SETTINGS row: owning copies of strings, nothing for the rest. */
static inline void rm_workload__copy_STR(const char **s)
{
	if (*s)
		*s = rm_xstrdup(*s);
}
static inline void rm_workload__free_STR(const char **s)
{
	free((void *)*s);
	*s = NULL;
}
#define RM_WL_NOTHING(kind)                                                                        \
	static inline void rm_workload__copy_##kind(const void *p)                                 \
	{                                                                                          \
		(void)p;                                                                           \
	}                                                                                          \
	static inline void rm_workload__free_##kind(const void *p)                                 \
	{                                                                                          \
		(void)p;                                                                           \
	}
RM_WL_NOTHING(BOOL)
RM_WL_NOTHING(SIZE)
RM_WL_NOTHING(SECONDS)
RM_WL_NOTHING(TUNABLEOP)
RM_WL_NOTHING(TELEMETRY)
RM_WL_NOTHING(PREFLIGHT)
#undef RM_WL_NOTHING

void rm_workload__settings_copy(rm_workload_settings *dst, const rm_workload_settings *src);
void rm_workload__settings_release(rm_workload_settings *s);
rm_kv *rm_workload__kv_copy(const rm_kv *src, size_t n);
void rm_workload__kv_free(rm_kv *v, size_t n);
void rm_workload__plan_copy(rm_data_plan *dst, const rm_data_plan *src);

/* Why a bind of host_path must not be made for a folder without the user's leave (the host's
 * root, the Docker socket, system folders read-write), or NULL. */
const char *rm_workload__sensitive_bind(const char *host_path, int read_only);

/* render_data.c: the data plan's bind mounts into HostConfig.Binds, and the wrapper that
 * runs the custom data scripts (nothing without any) appended to argv *v of *n words. */
typedef struct json_t json_t;
int rm_workload__data_binds(const rm_workload *w, json_t *hc, rm_error *err);
int rm_workload__data_cmd(const rm_workload *w, char ***v, size_t *n, rm_error *err);

/* render_tools.c: the tools' wrapper around the model's words (model, n_model) appended to
 * argv *v of *n words. */
int rm_workload__tools_cmd(const rm_workload *w, char ***v, size_t *n, char *const *model,
			   size_t n_model, rm_error *err);

#endif
