/*
 * run.json (src/results/manifest.c): what a run was, written once at its start beside
 * perf.csv: its id, start, models commit, host, GPU, the doctor's findings, the suite and
 * the options. rm_nightly_finish reads it back for the suite's settings.
 *
 * One of the outputs a CI job reads after a run (rm/suite.h's rm_nightly_finish makes them
 * all at the end of a run). Everything works from the run's perf.csv, so it can also be run
 * later on files alone (run_models report ci).
 *
 * The writer writes to a temporary file beside the target and renames it into place: a
 * failed or interrupted write never leaves a half file for CI to pick up.
 *
 * Each run keeps its own: run.<run id>.json (rm_manifest_path), and run.json is a symbolic link
 * to the latest run's, so two runs in one folder never read or archive each other's.
 */
#ifndef RM_MANIFEST_H
#define RM_MANIFEST_H

#include <stddef.h>

#include "rm/doctor.h"
#include "rm/util.h"

typedef struct json_t json_t;

typedef struct rm_manifest {
	const char *run_id;
	const char *started_at; /* "YYYY-MM-DDTHH:MM:SSZ"; NULL: now */
	const char *git_commit; /* of the models folder */
	const char *models_root;
	const char *host; /* NULL: this host's name */
	const char *suite;
	const char *suite_file;
	const json_t *suite_entries; /* rm_suite_json()'s "entries", or NULL */
	const json_t *options;	     /* the run's options as an object, or NULL */
	const char *gpu_vendor, *gpu_arch;
	long n_gpus;
	const rm_finding *findings; /* the doctor's (GPU, driver, ROCm, CUDA, OS, docker) */
	size_t n_findings;
	const rm_mask *mask; /* the run's secrets: every string (and key) masked; NULL: none */
	/* what made the run (rm/provenance.h's JSON: the host's, and each model's once the
	 * run has ended), or NULL */
	const json_t *provenance;
} rm_manifest;

/* The manifest as JSON: run_id, started_at, git_commit, host, gpu {vendor, arch, count},
 * versions {os, rocm, cuda, gpus, docker} taken from the doctor's findings, doctor (all
 * findings), suite, suite_file, entries, options, run_models version, provenance. */
json_t *rm_manifest_json(const rm_manifest *m);
int rm_manifest_write(const char *path, const rm_manifest *m, rm_error *err);
/*
 * A run.json read back: the writer's fields in m (strings and JSON pointing into json;
 * findings owned, their strings too; m.mask NULL), and the whole document in json (for the
 * database's environment rows, which keep every flat field). A field the file lacks or holds
 * with another type is NULL (n_gpus -1).
 */
typedef struct rm_manifest_file {
	rm_manifest m;
	rm_finding *findings;
	json_t *json;
} rm_manifest_file;

/* Reads path into *out (released with rm_manifest_file_release): -1 with err when it is
 * missing (sys_errno ENOENT) or not a JSON object. */
int rm_manifest_load(const char *path, rm_manifest_file *out, rm_error *err);
void rm_manifest_file_release(rm_manifest_file *f);

/* The manifest of run run_id in dir ("<dir>/run.<run id>.json"), or with run_id NULL the
 * link to the latest one ("<dir>/run.json"). Caller frees. */
char *rm_manifest_path(const char *dir, const char *run_id);
/* Points run.json beside path at path: a temporary link renamed over it, so a regular run.json
 * of an older version (or anything planted there) is replaced, never followed. A failure is
 * warned about (the run's own manifest is there all the same). */
void rm_manifest_link_latest(const char *path);

#endif
