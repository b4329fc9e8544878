/*
 * The runner: for each selected model, choose its Dockerfiles, have the launcher build each
 * image and run the workload, stream and parse the output, and append the rows to perf.csv.
 * It knows launchers only through rm/launcher.h.
 *
 * Every container of a run carries the labels run_models=1, run_models.run=<run id> and
 * run_models.model=<model>; whatever happens (a failure, a timeout, Ctrl-C), the runner
 * removes the workloads it made unless --keep-alive asked it to keep them.
 */
#ifndef RM_RUNNER_H
#define RM_RUNNER_H

#include <stddef.h>

#include "rm/context.h"
#include "rm/util.h"
#include "rm/registry.h"

typedef struct json_t json_t;
struct rm_baseline;

typedef struct rm_run_opts {
	const char *root;	 /* registry root (default ".") */
	const char *const *tags; /* --tags values, as given */
	size_t n_tags;
	const char *const *contexts; /* --additional-context values (JSON or @file), in order */
	size_t n_contexts;
	const char *output;	 /* perf.csv path (default "perf.csv") */
	const char *log_dir;	 /* where <model>.live.log and .build.log go (default ".") */
	const char *sysfs_root;	 /* default "/sys" */
	const char *docker_host; /* NULL: $DOCKER_HOST or the default socket */
	const char *parser;	 /* overrides every model's parser, or NULL */
	double timeout;		 /* seconds; < 0 when not given; 0 = none */
	int live_output;
	int keep_alive;
	int keep_model_dir;
	int clean_docker_cache;
	const char *tunableop; /* "on", "off" or NULL */
	long long shm_size;    /* bytes, 0 = default */
	int dry_run;	       /* print the plan; contact no engine */
	long repeat;	       /* runs per model (>= 1) */
	const char *score;     /* NULL or "mlperf" */
	int progress;	       /* 0 off, 1 auto (status line on a terminal, periodic otherwise) */
	double progress_interval;	  /* seconds between plain progress lines */
	int sys_env_details;		  /* write the doctor's findings beside the logs */
	const char *const *context_files; /* --additional-context-file, JSON or YAML */
	size_t n_context_files;
	long warmup;	 /* steps left out of steady-state means; RM_PARSER_WARMUP_AUTO: detected */
	int run_dynamic; /* run scripts/<dir>/get_models_json.py (rm_registry_opts) */
	int skip_model_run;		/* build the images, run nothing */
	int disable_skip_gpu_arch;	/* ignore the models' skip_gpu_arch */
	const char *data_config;	/* data providers; NULL: <root>/data.json */
	const char *force_mirror_local; /* --force-mirror-local DIR, or NULL */
	const char *run_id; /* NULL: a new one (rm_run_id_new); a suite passes its own to every
			       entry */
	/* relative_change against this baseline (rm/results.h; run --baseline); NULL: the last
	 * SUCCESS row of the same model, metric, Dockerfile, machine and arch in output. */
	const struct rm_baseline *baseline;
} rm_run_opts;

/* Default timeout when neither the CLI nor the model gives one. */
#define RM_DEFAULT_TIMEOUT 7200.0

/* What a run came to, for the exit code. */
typedef struct rm_run_result {
	char run_id[64];
	size_t n_failed; /* FAILURE rows */
	int interrupted; /* the signal that stopped the run, else 0 */
	int engine_lost; /* a workload lost its engine (the back end died or hung) */
} rm_run_result;

/* A new run id: UTC time, pid and randomness ("20240105T010203Z-4242-1a2b"). */
void rm_run_id_new(char *out, size_t size);

/* Runs the selection. Returns 0 when every model ran (res->n_failed counts FAILURE rows,
 * the caller turns it into the exit code), or -1 when the run could not start or was
 * interrupted (err says why; res->interrupted holds the signal number). */
int rm_runner_run(const rm_run_opts *o, rm_run_result *res, rm_error *err);

/* Signals: the command layer's SIGINT/SIGTERM handler calls rm_runner_on_signal; a second
 * signal exits at once. */
void rm_runner_install_signal_handlers(void);
int rm_runner_signal(void);

#endif
