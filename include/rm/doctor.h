/*
 * System checks before benchmarking (run_models doctor, and --sys-env-details beside each
 * run). Each finding is OK, WARN or FAIL with what was seen and the action to take.
 */
#ifndef RM_DOCTOR_H
#define RM_DOCTOR_H

#include <stddef.h>
#include <stdio.h>

#include "rm/util.h"

/* A finding's verdict; printed and written (run.json, --format json) as its word. */
typedef enum rm_finding_status {
	RM_FINDING_NONE = 0, /* nothing to say (a probe that found nothing) */
	RM_FINDING_OK,
	RM_FINDING_WARN,
	RM_FINDING_FAIL,
} rm_finding_status;
extern const rm_choice rm_finding_words[]; /* "OK", "WARN", "FAIL" */

typedef struct rm_finding {
	rm_finding_status status;
	char *check;  /* short name, e.g. "numa_balancing" */
	char *detail; /* what was seen */
	char *action; /* what to do; NULL for OK */
} rm_finding;

/* Appends a finding to v[0..*n) (the caller's array grows); takes detail and action. */
void rm_findings_add(rm_finding **v, size_t *n, rm_finding_status status, const char *check,
		     char *detail, char *action);

/* The checks of where workloads run (the launchers' back ends: the Docker engine, SLURM),
 * which this module cannot know: the caller passes rm_launcher_probe_all (rm/launcher.h). */
typedef void (*rm_backend_probe)(const char *docker_host, rm_finding **v, size_t *n);

typedef struct rm_doctor_opts {
	const char *proc_root;	   /* "/proc" (tests pass a fake tree) */
	const char *sysfs_root;	   /* "/sys" */
	const char *dev_root;	   /* "/dev" */
	const char *docker_host;   /* NULL: $DOCKER_HOST or the default socket */
	const char *work_dir;	   /* where images' logs and perf files go: free disk is checked */
	int use_tools;		   /* run rocminfo/amd-smi/nvidia-smi/rocm version probes */
	rm_backend_probe backends; /* NULL: none checked */
} rm_doctor_opts;

/* Runs every check; never fails as a whole (a failed probe is a finding). */
void rm_doctor_collect(const rm_doctor_opts *o, rm_finding **out, size_t *n);
/* "OK   numa_balancing  0 (disabled)" lines, actions indented below WARN/FAIL. */
void rm_doctor_print(FILE *f, const rm_finding *v, size_t n);
/* JSON array of {status, check, detail, action}; caller frees. */
char *rm_doctor_json(const rm_finding *v, size_t n);
void rm_findings_free(rm_finding *v, size_t n);
/* Collects and prints the findings into the file at path (--sys-env-details). */
int rm_doctor_write(const rm_doctor_opts *o, const char *path, rm_error *err);

#endif
