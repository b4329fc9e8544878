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
#include "rm/error.h"
#include "rm/registry.h"

typedef struct json_t json_t;

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
	long warmup; /* steps left out of steady-state means; RM_PARSER_WARMUP_AUTO: detected */
	/* run: run the images of this build manifest (rm/manifest.h), build nothing; without
	 * tags, every model it names. build: the manifest to write. */
	const char *manifest;
	const char *registry; /* build: push to this HOST:PORT, or NULL (build only) */
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

/* Runs the selection. Returns 0 when every model ran (res->n_failed counts FAILURE rows,
 * the caller turns it into the exit code), or -1 when the run could not start or was
 * interrupted (err says why; res->interrupted holds the signal number). */
int rm_runner_run(const rm_run_opts *o, rm_run_result *res, rm_error *err);

/* What a build came to. */
typedef struct rm_build_result {
	size_t n_built;	 /* images built (and pushed with a registry) */
	size_t n_reused; /* images the registry (or the engine) had already */
	size_t n_failed; /* images whose build or push failed (the manifest says why) */
	int interrupted; /* the signal that stopped the build, else 0 */
} rm_build_result;

/* `run_models build`: builds the images of the selection (through the Docker launcher's
 * prepare), pushes them to o->registry under their fingerprint when given (skipping those
 * the registry has), and writes o->manifest. One image's failure never stops the others.
 * -1 when the build could not start, or was interrupted (the manifest then holds what was
 * done). */
int rm_runner_build(const rm_run_opts *o, rm_build_result *res, rm_error *err);

/* The per-node runner of a SLURM task (`run_models node-run`): runs one model's container
 * on this node's engine through the Docker launcher, as a local run does, with the
 * variables the batch script named in $RM_SLURM_ENV added to its environment; output to
 * stdout and stderr (srun writes them to the node's log files), secrets masked; the exit
 * status and, on rank 0, the multiple_results file are written beside the logs for the
 * submitter. No perf row. On SIGTERM (scancel, time limit) the container is removed.
 * Returns the process exit code: the script's; 1 when the workload could not run (err says
 * why; it is also in the node's result file); 128 + N after signal N. */
typedef struct rm_node_opts {
	const char *job_file;	/* written by the SLURM launcher: "<log dir>/<run id>.job.json" */
	const char *workload;	/* its key in the job file */
	const char *sysfs_root; /* NULL: "/sys" */
} rm_node_opts;
int rm_node_run(const rm_node_opts *o, rm_error *err);

/* Signals: the command layer's SIGINT/SIGTERM handler calls rm_runner_on_signal; a second
 * signal exits at once. */
void rm_runner_install_signal_handlers(void);
/* The same, except that signals after the first are ignored (node-run: SLURM repeats SIGTERM
 * while a task cleans up, and sends SIGKILL after KillWait anyway). */
void rm_runner_install_patient_signal_handlers(void);
int rm_runner_signal(void);

#endif
