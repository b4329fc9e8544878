/*
 * JUnit XML of a run (src/results/junit.c), for CI's test reports.
 *
 * One of the outputs a CI job reads after a run (rm/suite.h's rm_nightly_finish makes them
 * all at the end of a run). Everything works from the run's perf.csv, so it can also be run
 * later on files alone (run_models report ci).
 *
 * The writer writes to a temporary file beside the target and renames it into place: a
 * failed or interrupted write never leaves a half file for CI to pick up.
 */
#ifndef RM_JUNIT_H
#define RM_JUNIT_H

#include <stddef.h>

#include "rm/gate.h"
#include "rm/metrics.h"
#include "rm/results.h"
#include "rm/util.h"

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

#define RM_JUNIT_OPTS_INIT                                                                         \
	{                                                                                          \
		.suite = NULL, .hostname = NULL, .base_dir = NULL, .log_lines = 0, .gate = NULL,   \
		.metrics = NULL                                                                    \
	}

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

#endif
