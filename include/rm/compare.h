/*
 * What differs between two runs (run_models report compare A B): each metric of B against
 * A, with the regression gate's verdict on B (its noise measured from the history up to A,
 * rm/gate.h), then every difference in what made them (rm/provenance.h), grouped: image,
 * driver and firmware, environment, arguments, host. As text, Markdown or JSON.
 *
 * Runs without provenance (older files) are compared by their perf.csv columns: a model's
 * docker_sha, docker_image and base_docker (image), args, tunableop, n_gpus and
 * additional_docker_run_options (arguments), machine_name, gpu_architecture and git_commit
 * (host), named "perf.csv:<column>".
 */
#ifndef RM_COMPARE_H
#define RM_COMPARE_H

#include <stddef.h>
#include <stdio.h>

#include "rm/gate.h"
#include "rm/history.h"
#include "rm/results.h"
#include "rm/util.h"

typedef struct json_t json_t;

typedef enum rm_compare_format {
	RM_COMPARE_TEXT = 0,
	RM_COMPARE_MARKDOWN,
	RM_COMPARE_JSON,
} rm_compare_format;
extern const rm_choice rm_compare_formats[]; /* "text", "markdown", "json" */

typedef struct rm_compare_opts {
	const char *a_id, *b_id;       /* the runs */
	const char *source;	       /* where they were read, for the heading */
	const rm_results *a, *b;       /* their rows */
	const json_t *prov_a, *prov_b; /* their provenance (rm/provenance.h), or NULL */
	const rm_baseline *history;    /* what B is judged against: the runs up to A */
	const rm_gate_opts *gate;      /* NULL: the gate's defaults */
	rm_compare_format format;
} rm_compare_opts;

#define RM_COMPARE_OPTS_INIT                                                                       \
	{                                                                                          \
		.a_id = NULL, .b_id = NULL, .source = NULL, .a = NULL, .b = NULL, .prov_a = NULL,  \
		.prov_b = NULL, .history = NULL, .gate = NULL, .format = RM_COMPARE_TEXT           \
	}

typedef struct rm_compare_result {
	size_t n_metrics, n_regressions, n_differences;
} rm_compare_result;

/* Writes the comparison to out. */
int rm_compare_write(FILE *out, const rm_compare_opts *o, rm_compare_result *res, rm_error *err);

#endif
