/*
 * Suite files (run_models run --suite FILE.yaml): a named list of entries, each selecting
 * models by tags or by name, with its own additional context, repeat count, timeout and
 * regression threshold. Shared settings live in a defaults file that several suites
 * include. YAML through libyaml (JSON is YAML too). Format in docs/nightly.md:
 *
 *   suite: nightly                    # default: the file name without .yaml/.yml/.json
 *   include: common.yaml              # or a list; paths relative to this file
 *   defaults:                         # for every entry; an entry's own fields win
 *     repeat: 3
 *     timeout: 3600                   # seconds per model run; 0 = none
 *     additional_context: {gpu_vendor: AMD}
 *     regression: {fail_on_regression: 5, baseline: nightly-baseline.csv}
 *   entries:
 *     - tags: [llm, training]
 *       repeat: 5
 *       regression: {fail_on_regression: 3}
 *     - models: [pyt_mpt30b_training]
 *       additional_context: {MAD_SYSTEM_NGPUS: 8}
 *
 * An included file holds `defaults:` (and may include others); its defaults apply first,
 * then the including file's, then each entry's. additional_context objects merge key by
 * key; the others replace. `baseline` is one per suite (under defaults.regression): a
 * relative path is resolved against the file that names it; a database URL is kept.
 *
 * Errors name the file, the line and column, and the field ("'nightly.yaml' line 12
 * column 14: entries[1].repeat: must be a whole number >= 1, not 'three'"). Unknown fields
 * are errors: a misspelt key in a CI job must not pass silently.
 *
 * Ownership: rm_suite owns everything in it; rm_suite_release frees it.
 */
#ifndef RM_SUITE_H
#define RM_SUITE_H

#include <stddef.h>

#include "rm/error.h"

typedef struct json_t json_t;

typedef struct rm_suite_entry {
	char *name;  /* the entry's "name", else its tags/models joined */
	char **tags; /* NULL-terminated tag expressions, as for --tags */
	size_t n_tags;
	char **models; /* NULL-terminated exact model names */
	size_t n_models;
	json_t *context;	   /* merged additional_context (an object, maybe empty) */
	long repeat;		   /* >= 1 */
	double timeout;		   /* seconds; < 0 when not set; 0 = none */
	double fail_on_regression; /* percent; < 0 when off */
	char *file;		   /* where the entry is */
	long line;
} rm_suite_entry;

typedef struct rm_suite {
	char *name;
	char *description; /* NULL when none */
	char *file;
	char *baseline; /* resolved path or database URL; NULL when none */
	rm_suite_entry *entries;
	size_t n;
	char **files; /* the suite file and every file it included, NULL-terminated */
	size_t n_files;
} rm_suite;

/* Loads path and its includes. Errors are RM_ERR_INPUT (RM_ERR_IO for unreadable files). */
int rm_suite_load(const char *path, rm_suite *s, rm_error *err);
void rm_suite_release(rm_suite *s);

/* {"suite", "file", "description", "baseline", "files", "entries": [{name, tags, models,
 * additional_context, repeat, timeout, fail_on_regression, file, line}]} for run.json. */
json_t *rm_suite_json(const rm_suite *s);

#endif
