/*
 * What made each run (issue 27): its provenance, and what differs between two runs.
 *
 * A run's provenance is groups of name -> value text per scope: the run's host (model "":
 * rm/doctor.h's rm_doctor_provenance, "host" and "driver and firmware") and each model's
 * image, environment and arguments (the runner's; groups "image", "environment",
 * "arguments"). Secrets are masked before they get here. For a perf.csv it lives in its
 * companion file PERF.provenance.csv (for nightly.csv, nightly.provenance.csv), appended
 * under the same lock as perf.csv, one row per value: run_id, model, docker_file, group,
 * name, value; for a database in its provenance table (rm/db.h); run.json keeps the run's.
 *
 * As JSON (what the readers return and rm_provenance_diff takes): {"<model>\t<docker_file>"
 * or "": {"model", "docker_file", "groups": {group: {name: value}}}}.
 */
#ifndef RM_PROVENANCE_H
#define RM_PROVENANCE_H

#include <stddef.h>

#include "rm/util.h"

typedef struct json_t json_t;

/* The groups `report compare` shows, in its order (others follow, by name). */
extern const char *const rm_provenance_groups[];

/* The companion file of a perf.csv; caller frees. */
char *rm_provenance_path(const char *perf_csv);

/* Appends one scope's groups ({group: {name: value}}) of run_id to perf_csv's companion
 * file, creating it with its header. model "" is the run's host. */
int rm_provenance_append(const char *perf_csv, const char *run_id, const char *model,
			 const char *docker_file, const json_t *groups, rm_error *err);

/* The provenance of run_id in perf_csv's companion file into *out (the JSON above; empty
 * when the file or the run is not there). */
int rm_provenance_read(const char *perf_csv, const char *run_id, json_t **out, rm_error *err);

/* Adds one value to a provenance object (the JSON above), making its scope and group. */
void rm_provenance_put(json_t *prov, const char *model, const char *docker_file, const char *group,
		       const char *name, const char *value);

/* Every value that differs between a and b (one missing on one side counts), grouped:
 * {group: [{"model", "docker_file", "name", "a", "b"}]} with a or b null where missing; the
 * groups in rm_provenance_groups' order. n: the number of differences. */
json_t *rm_provenance_diff(const json_t *a, const json_t *b, size_t *n);

#endif
