/*
 * Shared by the telemetry files: the AMD sysfs source (amd.c), the nvidia-smi process
 * (nvsmi.c), the sampler thread (sampler.c) and doctor's probe (probe.c).
 */
#ifndef RM_TELEMETRY_INTERNAL_H
#define RM_TELEMETRY_INTERNAL_H

#include <stddef.h>
#include <sys/types.h>

#include "rm/telemetry.h"

/* The nvidia-smi query; its field order is what rm_telem_parse_nvsmi reads. Drivers before
 * 535 know the clock event reasons as clocks_throttle_reasons (the second query). */
#define RM_TELEM_NVSMI_FIELDS                                                                      \
	"--query-gpu=index,power.draw,temperature.gpu,memory.used,utilization.gpu,clocks.sm,"      \
	"enforced.power.limit,"
#define RM_TELEM_NVSMI_QUERY	 RM_TELEM_NVSMI_FIELDS "clocks_event_reasons.active"
#define RM_TELEM_NVSMI_QUERY_OLD RM_TELEM_NVSMI_FIELDS "clocks_throttle_reasons.active"

/* amd.c: the sysfs files of each GPU, opened once. */
struct rm_telem__amd;
/* Opens the files of GPUs gpus[0..n) (indexes into ctx's render nodes). -1 with err when a
 * GPU has no render node or no readable file at all. */
int rm_telem__amd_open(struct rm_telem__amd **out, const char *sysfs_root, const rm_context *ctx,
		       const long *gpus, size_t n, rm_error *err);
/* One reading of GPU slot i (NAN for what cannot be read now). */
void rm_telem__amd_read(struct rm_telem__amd *a, size_t i, rm_telem_sample *s);
/* What slot i has: which of power, temperature, VRAM, busy, clock opened; power's file
 * name ("power1_average", "power1_input" or NULL). */
void rm_telem__amd_has(const struct rm_telem__amd *a, size_t i, int has[5], const char **power);
void rm_telem__amd_close(struct rm_telem__amd *a);

/* nvsmi.c: the argv of the long-lived query (NULL-terminated, rm_strv_free); old: the
 * field names of drivers before 535. */
char **rm_telem__nvsmi_argv(const char *path, const long *gpus, size_t n, double interval, int old);
/* Starts argv[0] with stdout and stderr into a pipe (*fd, the read end), stdin from
 * /dev/null, default signals, no other descriptor, killed when the calling THREAD ends
 * (PR_SET_PDEATHSIG). Called from the sampler thread. -1 with errno. */
int rm_telem__spawn(char *const argv[], pid_t *pid, int *fd);
/* Ends it: SIGTERM, then SIGKILL after a second; returns its wait status or -1. */
int rm_telem__reap(pid_t pid);

#endif
