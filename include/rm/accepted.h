/*
 * Accepted changes (src/results/accepted.c), recorded by `run_models accept`: "this model's
 * metric changed on purpose from run X on". For a perf.csv they live in its companion file
 * beside it, PERF.accepted.csv (perf.csv -> perf.accepted.csv), a CSV of
 * rm_accepted_header's columns appended under the same lock as perf.csv; for a database, in
 * its `accepted` table. Empty key fields match any value. The history takes them through
 * rm_history_accept (rm/history.h): the gate then judges a series only from its latest
 * acceptance on.
 */
#ifndef RM_ACCEPTED_H
#define RM_ACCEPTED_H

#include <stddef.h>

#include "rm/history.h"
#include "rm/util.h"

typedef struct rm_acceptance {
	const char *model, *metric, *docker_file, *arch, *n_gpus, *machine;
	const char *since_run, *since_start, *accepted_at, *reason;
	const char *config_key; /* a configuration (rm/config.h); "" or NULL: any */
} rm_acceptance;

/* The companion file's columns; one written before configurations has the first ten (its
 * acceptances cover every configuration; it gets the column when one that names a
 * configuration is added). */
#define RM_ACCEPTED_COLS 11
extern const char *const rm_accepted_header[RM_ACCEPTED_COLS];

/* The companion file of a perf.csv; caller frees. */
char *rm_accepted_path(const char *perf_csv);

/* Reads the acceptances of perf_csv's companion file into b (none when it is missing). */
int rm_accepted_read(rm_baseline *b, const char *perf_csv, rm_error *err);

/* Appends acceptances to perf_csv's companion file, creating it with its header. */
int rm_accepted_append(const char *perf_csv, const rm_acceptance *a, size_t n, rm_error *err);

#endif
