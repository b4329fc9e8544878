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
 *     regression: {fail_on_regression: 5, baseline: nightly-baseline.csv,
 *                  references: refs.yaml, window: 30}
 *   entries:
 *     - tags: [llm, training]
 *       repeat: 5
 *       regression: {fail_on_regression: 3}
 *     - models: [pyt_mpt30b_training]
 *       additional_context: {MAD_SYSTEM_NGPUS: 8}
 *
 * An included file holds `defaults:` (and may include others); its defaults apply first,
 * then the including file's, then each entry's. additional_context objects merge key by
 * key; the others replace. `baseline`, `references` and `window` are one per suite (under
 * defaults.regression): a relative path is resolved against the file that names it; a
 * database URL is kept; a references file is read and checked at once.
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

#include "rm/util.h"
#include "rm/direction.h"
#include "rm/history.h"
#include "rm/references.h"

typedef struct json_t json_t;
struct rm_config;

/*
 * A sweep (an entry's `sweep:`, docs/nightly.md): named dimensions, each a list of values,
 * crossed (the default) or moving together in `zip` groups, less the points `exclude`
 * names. A dimension binds, by its name, to:
 *   NAME, args.NAME  a model argument: "--NAME VALUE" after the model's args, as the tag
 *                    form name:NAME=VALUE adds it
 *   env.NAME         the container's environment variable NAME (docker_env_vars)
 *   tunableop        the run setting --tunableop (on, off)
 *   n_gpus           the GPUs each model gets, over its n_gpus (a count, or -1: all)
 *   docker_gpus      the GPUs by index ("0-3")
 *   precision        the model argument --precision, and the configuration's precision
 *                    (perf.csv's training_precision)
 *   repeat           the runs of each point (not part of the configuration)
 * Points are in order, the first dimension (group) outermost, and named after the entry:
 * "grid[batch_size=8,precision=bf16]".
 */
typedef enum rm_sweep_bind {
	RM_SWEEP_ARG,
	RM_SWEEP_ENV,
	RM_SWEEP_TUNABLEOP,
	RM_SWEEP_N_GPUS,
	RM_SWEEP_DOCKER_GPUS,
	RM_SWEEP_PRECISION,
	RM_SWEEP_REPEAT,
} rm_sweep_bind;

typedef struct rm_sweep_dim {
	char *name; /* as written */
	rm_sweep_bind bind;
	const char *target; /* the argument or variable (into name) */
	char **values;	    /* as written, distinct */
	size_t n_values;
	size_t group; /* the group it moves with: a zip group, or its own */
} rm_sweep_dim;

/* A point to leave out: dimension dim[i] at its value value[i], for every i. */
typedef struct rm_sweep_exclude {
	size_t *dim, *value;
	size_t n;
} rm_sweep_exclude;

typedef struct rm_sweep {
	rm_sweep_dim *dims; /* in the order written */
	size_t n_dims;
	size_t *group_len; /* values of each group (a zip's dimensions have as many) */
	size_t n_groups;
	rm_sweep_exclude *excludes;
	size_t n_excludes;
	unsigned long long raw; /* the groups' product, before exclusions */
	size_t n_points;	/* after them */
} rm_sweep;

/* Points from which a suite needs --yes, and the most a sweep may have before exclusions. */
#define RM_SWEEP_CONFIRM 100000
#define RM_SWEEP_MAX_RAW 10000000ULL

/* Calls fn with the value index of each dimension, point by point in order, until it returns
 * non-zero; returns the points visited. */
size_t rm_sweep_each(const rm_sweep *s, int (*fn)(void *ctx, const size_t *values), void *ctx);
/* A point's parameters by name (rm/config.h): every dimension but repeat, in order. */
void rm_sweep_params(const rm_sweep *s, const size_t *values, struct rm_config *out);
/* "base[batch_size=8,precision=bf16]". Caller frees. */
char *rm_sweep_point_name(const rm_sweep *s, const size_t *values, const char *base);
void rm_sweep_free(rm_sweep *s);

typedef struct rm_suite_entry {
	char *name;  /* the entry's "name", else its tags/models joined */
	char **tags; /* NULL-terminated tag expressions, as for --tags */
	size_t n_tags;
	char **models; /* NULL-terminated exact model names */
	size_t n_models;
	json_t *context;	   /* merged additional_context (an object, maybe empty) */
	long repeat;		   /* >= 1 */
	long retries;		   /* retries (--retries); < 0 when not set */
	double timeout;		   /* seconds; < 0 when not set; 0 = none */
	double fail_on_regression; /* percent; < 0 when off or not set */
	int fail_set;		   /* regression.fail_on_regression given: a PCT or off */
	rm_sweep *sweep;	   /* its sweep, or NULL */
	char *file;		   /* where the entry is */
	long line;
} rm_suite_entry;

typedef struct rm_suite {
	char *name;
	char *description; /* NULL when none */
	char *file;
	char *baseline;	    /* resolved path or database URL; NULL when none */
	json_t *references; /* pinned references (loaded from their file); NULL: none */
	size_t window;	    /* the detector's window; 0: not set */
	rm_suite_entry *entries;
	size_t n;
	char **files; /* the suite file and every file it included, NULL-terminated */
	size_t n_files;
} rm_suite;

/* Loads path and its includes, each sweep checked and counted. Errors are RM_ERR_INPUT
 * (RM_ERR_IO for unreadable files). */
int rm_suite_load(const char *path, rm_suite *s, rm_error *err);
/* A suite whose sweeps have RM_SWEEP_CONFIRM points or more needs yes: an error naming the
 * file, the entry and its points otherwise. */
int rm_suite_check_size(const rm_suite *s, int yes, rm_error *err);
void rm_suite_release(rm_suite *s);

/* {"suite", "file", "description", "baseline", "files", "entries": [{name, tags, models,
 * additional_context, repeat, timeout, fail_on_regression (PCT, "off" or null), file, line,
 * and for a sweep "points": [{name, params: {NAME: VALUE}, repeat}]}]} for run.json. */
json_t *rm_suite_json(const rm_suite *s);

/* The end of a run */

typedef struct rm_nightly_opts {
	const char *perf_csv;	 /* the run's perf.csv; perf_<model>.csv are read beside it */
	const char *run_id;	 /* NULL: the last run in perf_csv */
	const char *suite;	 /* suite name for JUnit and the summary; NULL: "run_models" */
	const char *models_root; /* models.json folder for metric_direction; NULL: none */
	/* Baseline: the history to judge against, a perf.csv or a database URL. NULL: the
	 * manifest's (options.baseline), else the earlier runs in perf_csv itself. */
	const char *baseline;
	rm_baseline *baseline_open; /* already open (run): used instead of opening one */
	/* Pinned references: a YAML/JSON file; NULL: the manifest's (options.references). */
	const char *references;
	const rm_references *references_open; /* already loaded (run): used instead */
	/* Runs of each series the detector reads; 0: the manifest's (options.history_window),
	 * else RM_DETECT_WINDOW. */
	size_t window;
	/* Percent; < 0: the manifest's "regression.fail_on_regression", else gate off (the
	 * report still judges at 5). The manifest's suite entries add per-model thresholds
	 * (rm_gate_opts.thresholds). */
	double fail_on_regression;
	const char *junit;	       /* paths, NULL when not wanted */
	const char *summary_markdown;  /* also appended to $GITHUB_STEP_SUMMARY when set */
	const char *html;	       /* the HTML trend report over perf_csv's history */
	const char *archive;	       /* tar.gz of logs, CSVs, run.json, JUnit, summary, report */
	const char *const *export_dbs; /* database URLs, each gets the run after the gate */
	size_t n_export_dbs;
	const char *manifest;		/* run.json written at the start (archived, exported) */
	const char *const *extra_files; /* more files or folders for the archive */
	size_t n_extra_files;
	int no_step_summary; /* do not touch $GITHUB_STEP_SUMMARY */
} rm_nightly_opts;

/* No outputs, the gate as run.json says (or off), every setting from run.json or its
 * default. */
#define RM_NIGHTLY_OPTS_INIT                                                                       \
	{                                                                                          \
		.perf_csv = NULL, .run_id = NULL, .baseline = NULL, .references = NULL,            \
		.window = 0, .fail_on_regression = -1                                              \
	}

typedef struct rm_nightly_result {
	size_t n_rows, n_failed, n_skipped; /* rows and (model, metric) groups failed/skipped */
	size_t n_compared, n_regressions, n_better, n_unstable;
	int gate_enforced;
} rm_nightly_result;

/*
 * Reads the run's rows and its history (streamed: memory grows with the number of series,
 * not of rows), the accepted changes (the perf.csv's companion file, and the baseline's:
 * rm_accepted_read, rm_db_accepted), the pinned references, judges the run (rm_gate_eval),
 * then writes, in this
 * order, JUnit, the Markdown summary (and $GITHUB_STEP_SUMMARY), the HTML report, the
 * database export and the archive (last, so it holds the others). Returns 0 with *res
 * filled; the caller turns it into the exit code (model failed, regression found). -1 when
 * something could not be read or written (err says which); outputs written before that
 * stay.
 */
int rm_nightly_finish(const rm_nightly_opts *o, rm_nightly_result *res, rm_error *err);

/*
 * The HTML trend report (rm/html.h) over perf.csv files and databases: `report html`, and
 * rm_nightly_finish's html over the run's perf.csv. Every row of every source is streamed
 * into the history (files first, then databases, in the order given), with each source's
 * accepted changes and, for a file, the GPU power of the perf_<model>.csv files beside it;
 * the latest run is read again by its id when the sources were not in time order.
 */
typedef struct rm_nightly_html_opts {
	const char *path;	  /* the report to write */
	const char *const *files; /* perf.csv files */
	size_t n_files;
	const char *const *dbs; /* database URLs */
	size_t n_dbs;
	const char *title;    /* NULL: "run_models results" */
	double threshold_pct; /* change colouring and verdicts; < 0: 5 */
	size_t window;	      /* the detector's; 0: RM_DETECT_WINDOW */
	/* The metrics' directions: a table already loaded, else one read from models_root
	 * after the sources (both NULL: the metric table only). */
	const rm_direction_table *directions;
	const char *models_root;
} rm_nightly_html_opts;

#define RM_NIGHTLY_HTML_OPTS_INIT                                                                  \
	{                                                                                          \
		.path = NULL, .files = NULL, .n_files = 0, .dbs = NULL, .n_dbs = 0, .title = NULL, \
		.threshold_pct = -1, .window = 0, .directions = NULL, .models_root = NULL          \
	}

typedef struct rm_nightly_html_result {
	size_t rows, series, runs; /* rows read, and the history's series and runs */
} rm_nightly_html_result;

/* Returns 0 with *res (may be NULL) filled, or -1 with err naming the source or the
 * report that failed. */
int rm_nightly_html(const rm_nightly_html_opts *o, rm_nightly_html_result *res, rm_error *err);

/* The run of a suite (run --suite FILE), or of --tags with CI outputs */

struct rm_run_opts;

typedef struct rm_suite_run_opts {
	const struct rm_run_opts *run; /* the command line's; its tags when there is no suite */
	const char *suite_file;	       /* NULL: one entry, run->tags */
	int repeat_given;	       /* run->repeat was given: it wins over the entries' */
	int retries_given;	       /* run->retries was given: it wins over the entries' */
	int yes;		       /* --yes: a sweep of RM_SWEEP_CONFIRM points or more runs */
	/* Outputs and gate (ci.perf_csv, run_id, manifest, suite, models_root and
	 * baseline_open are filled in here); ci.baseline NULL: the suite's baseline. */
	rm_nightly_opts ci;
	const char *const *context_files; /* for run.json: the context files' names */
	size_t n_context_files;
} rm_suite_run_opts;

#define RM_SUITE_RUN_OPTS_INIT                                                                     \
	{                                                                                          \
		.run = NULL, .suite_file = NULL, .repeat_given = 0, .retries_given = 0, .yes = 0,  \
		.ci = RM_NIGHTLY_OPTS_INIT, .context_files = NULL, .n_context_files = 0            \
	}

typedef struct rm_suite_run_result {
	char run_id[64];
	size_t n_failed; /* FAILURE rows over every entry */
	int interrupted; /* the signal that stopped the run, else 0 */
	int engine_lost; /* an entry lost its engine */
	int finished;	 /* rm_nightly_finish ran: ci holds its counts */
	rm_nightly_result ci;
} rm_suite_run_result;

/*
 * One run id for the whole suite: loads the suite, checks every entry's selection against
 * the registry (a tag that matches nothing, or a `models` name that is no model's, fails
 * before anything runs), opens the baseline once, writes run.json beside perf.csv (run id,
 * start time, models commit, host, GPU, doctor's findings, the entries with the models each
 * selected, the options), runs each entry through rm_runner_run with its tags and models,
 * context (the command line's applied after the entry's), repeat and timeout (the command
 * line's win when given), then rm_nightly_finish. An interrupted or failed entry ends the
 * run: JUnit, the summary and the archive are still written (not the report, the export or
 * the gate), and rm_suite_run returns -1 with err. With run->dry_run, only the entries'
 * plans are printed.
 */
int rm_suite_run(const rm_suite_run_opts *o, rm_suite_run_result *res, rm_error *err);

#endif
