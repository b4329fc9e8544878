/*
 * System checks before benchmarking (run_models doctor, and --sys-env-details beside each
 * run). Each finding is OK, WARN or FAIL with what was seen and the action to take.
 */
#ifndef RM_DOCTOR_H
#define RM_DOCTOR_H

#include <stddef.h>
#include <stdio.h>

#include "rm/context.h"
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

/* The host's own trees, the engine DOCKER_HOST names, the current folder, the tools' probes;
 * no back ends (a caller that has the launchers passes rm_launcher_probe_all). */
#define RM_DOCTOR_OPTS_INIT                                                                        \
	{                                                                                          \
		.proc_root = "/proc", .sysfs_root = "/sys", .dev_root = "/dev",                    \
		.docker_host = NULL, .work_dir = ".", .use_tools = 1, .backends = NULL             \
	}

/* Runs every check; never fails as a whole (a failed probe is a finding). */
void rm_doctor_collect(const rm_doctor_opts *o, rm_finding **out, size_t *n);
/* "OK   numa_balancing  0 (disabled)" lines, actions indented below WARN/FAIL. */
void rm_doctor_print(FILE *f, const rm_finding *v, size_t n);
/* JSON array of {status, check, detail, action}; caller frees. */
char *rm_doctor_json(const rm_finding *v, size_t n);
void rm_findings_free(rm_finding *v, size_t n);
/* Collects and prints the findings into the file at path (--sys-env-details). */
int rm_doctor_write(const rm_doctor_opts *o, const char *path, rm_error *err);

/*
 * The pre-flight check of the GPUs a model will get, just before its container starts
 * (run --preflight, on by default for suites and CI runs; doctor --gpus for every GPU).
 * NVIDIA: one nvidia-smi --query-gpu and one --query-compute-apps; AMD: sysfs under each
 * GPU's render node (mem_info_vram_used, ras/, hwmon power1_cap, the performance level,
 * the PCIe link) and the KFD's processes. FAIL findings spoil the number, the run skips the
 * model with them as its reason: memory in use or a process on the GPU, uncorrectable ECC
 * or RAS errors, pages or rows pending retirement (or a failed remap), a power limit under
 * its default, clocks forced low, a GPU that is not there. WARN findings do not: correctable
 * errors, pages already retired, a PCIe link narrower than its maximum, clocks forced to a
 * fixed level that is not low, a check that could not run. docs/doctor.md has the table.
 */
typedef enum rm_preflight_mode {
	RM_PREFLIGHT_AUTO = 0, /* on for suites and runs with CI outputs, off for plain runs */
	RM_PREFLIGHT_ON,
	RM_PREFLIGHT_OFF,
} rm_preflight_mode;
extern const rm_choice rm_preflight_words[]; /* "auto", "on", "off" */

typedef struct rm_preflight_opts {
	const rm_context *ctx;	/* the host's GPUs: vendor, count, render nodes */
	const char *sysfs_root; /* "/sys" */
	const char *proc_root;	/* "/proc": the names of the KFD's processes */
	const long *gpus;	/* the GPUs to check; NULL: every GPU of ctx */
	size_t n_gpus;
} rm_preflight_opts;

#define RM_PREFLIGHT_OPTS_INIT                                                                     \
	{                                                                                          \
		.ctx = NULL, .sysfs_root = "/sys", .proc_root = "/proc", .gpus = NULL, .n_gpus = 0 \
	}

/*
 * What the host of a run is, for its provenance (run.json, the results database, `report
 * compare`): {"host": {run_models, hostname, kernel, kernel_build, arch, os, cpu,
 * models_commit, models_dirty}, "driver and firmware": {driver, cuda or hip, rocm, and per
 * GPU used gpu<N>.product, .uuid, .serial, .vbios, .pci_bus, .firmware.<name>}}: every value
 * a string, what cannot be read left out. NVIDIA's GPUs cost one nvidia-smi (use_tools).
 */
typedef struct rm_provenance_opts {
	const rm_context *ctx;	/* the host's GPUs */
	const char *sysfs_root; /* "/sys" */
	const char *proc_root;	/* "/proc" */
	const char *root;	/* the models folder (its git commit) */
	const long *gpus;	/* the GPUs the run uses; NULL: every GPU of ctx */
	size_t n_gpus;
	int use_tools; /* run nvidia-smi */
} rm_provenance_opts;

#define RM_PROVENANCE_OPTS_INIT                                                                    \
	{                                                                                          \
		.ctx = NULL, .sysfs_root = "/sys", .proc_root = "/proc", .root = ".",              \
		.gpus = NULL, .n_gpus = 0, .use_tools = 1                                          \
	}

typedef struct json_t json_t;
json_t *rm_doctor_provenance(const rm_provenance_opts *o);

/* Appends the findings (each detail begins "GPU N: "); an OK finding "preflight" when
 * nothing is wrong. Returns the number of FAIL findings. */
size_t rm_doctor_preflight(const rm_preflight_opts *o, rm_finding **v, size_t *n);

#endif
