/*
 * Shared by the checks of `run_models doctor` (doctor.c, gpu_checks.c).
 */
#ifndef RM_SYSTEM_INTERNAL_H
#define RM_SYSTEM_INTERNAL_H

#include <stddef.h>

#include "rm/doctor.h"

#define GIB ((unsigned long long)1 << 30)

/* The ROCm guides give containers a /dev/shm of 8G to 64G; PyTorch data loaders and
 * RCCL/NCCL put their buffers there. */
#define SHM_WANT (8 * GIB)
/* Seed workload images are 20-60 GB; a run also writes logs and perf files. */
#define DISK_WARN (20 * GIB)
#define DISK_FAIL (2 * GIB)

struct findings {
	rm_finding *v;
	size_t n;
};

/* Takes ownership of detail and action (action NULL for OK). */
void rm_system__doctor_add(struct findings *fs, rm_finding_status status, const char *check,
			   char *detail, char *action);
/* The first line of a small file, trimmed; NULL (errno set) when it cannot be opened. */
char *rm_system__doctor_read_line(const char *path);
/* The first non-empty output line of a fixed command line (stderr dropped), or NULL when
 * it printed nothing. *status receives the exit status as pclose gives it. */
char *rm_system__doctor_tool_line(const char *cmd, int *status);
char *rm_system__doctor_gib(unsigned long long bytes);

void rm_system__check_gpus(struct findings *fs, const rm_doctor_opts *o);
void rm_system__check_rocm(struct findings *fs, const rm_doctor_opts *o);
void rm_system__check_cuda(struct findings *fs, const rm_doctor_opts *o);

#endif
