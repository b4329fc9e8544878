/*
 * What a CI job reads after a run: JUnit XML, a Markdown summary, the run.json manifest,
 * one tar.gz artefact (rm/suite.h's rm_nightly_finish makes them all at the end of a run).
 * Everything works from the run's perf.csv, so it can also be run later on files alone
 * (run_models report ci).
 *
 * Every writer writes to a temporary file beside the target and renames it into place: a
 * failed or interrupted write never leaves a half file for CI to pick up.
 */
#ifndef RM_CI_H
#define RM_CI_H

#include <stddef.h>

#include "rm/doctor.h"
#include "rm/error.h"
#include "rm/gate.h"
#include "rm/results.h"
#include "rm/util.h"

typedef struct json_t json_t;

/* JUnit */

typedef struct rm_junit_opts {
	const char *suite;	   /* testsuite name and testcase classname; NULL: "run_models" */
	const char *hostname;	   /* NULL: this host's name */
	const char *base_dir;	   /* relative log_file paths not found from the current folder are
				      looked up here (the perf.csv's folder); NULL: none */
	size_t log_lines;	   /* lines of the log in a failure; 0: 50 */
	const rm_gate *gate;	   /* changes as properties; with gate->enforce, a testcase per
				      gated metric that fails on a regression. NULL: none */
	const rm_metrics *metrics; /* perf_<model>.csv rows as properties; NULL: none */
} rm_junit_opts;

/*
 * Writes JUnit XML (libxml2's xmlTextWriter) in the form both of the widely used schemas
 * accept (Apache Ant's, as published by windyroad, and Jenkins' junit-10.xsd): <testsuites>
 * holding one <testsuite> (package, id, name, timestamp, hostname, tests, failures, errors,
 * skipped, time) with <properties> first, then one <testcase> per perf.csv row (classname =
 * suite, name = model, time = test_duration) holding at most one <failure> (the reason and
 * the last log lines) or <skipped>, then <system-out> and <system-err>. Neither schema allows
 * properties inside a testcase, so a row's metrics are suite properties named
 * "<testcase name>.<metric>" (see docs/nightly.md).
 */
int rm_junit_write(const char *path, const rm_results *run, const rm_junit_opts *o, rm_error *err);

/* Markdown summary */

/*
 * A GitHub-flavoured Markdown summary: a headline with the counts, then a table of models,
 * status, value, baseline, change and verdict (one line per model and metric; failures with
 * their reason), then the regression rule. Appended to rm_buf out.
 */
int rm_summary_markdown(rm_buf *out, const char *title, const rm_results *run, const rm_gate *gate);

/* Writes text to path, replacing it (append = 0) or appending (append = 1, for
 * $GITHUB_STEP_SUMMARY). */
int rm_write_text_file(const char *path, const char *text, size_t len, int append, rm_error *err);

/* run.json */

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
} rm_manifest;

/* The manifest as JSON: run_id, started_at, git_commit, host, gpu {vendor, arch, count},
 * versions {os, rocm, cuda, gpus, docker} taken from the doctor's findings, doctor (all
 * findings), suite, suite_file, entries, options, run_models version. */
json_t *rm_manifest_json(const rm_manifest *m);
int rm_manifest_write(const char *path, const rm_manifest *m, rm_error *err);
/* Reads a run.json back (NULL with err when missing or not JSON). */
json_t *rm_manifest_read(const char *path, rm_error *err);

/* Archive */

/*
 * Writes a gzip-compressed tar (libarchive) of the given files and folders (folders with
 * everything under them), each stored under top/ by its path when that is relative and has
 * no "..", else by its base name. A path that does not exist is an error naming it.
 */
int rm_archive_write(const char *out_path, const char *top, const char *const *paths, size_t n,
		     rm_error *err);

#endif
