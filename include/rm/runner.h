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
#include "rm/registry.h"
#include "rm/util.h"
#include "rm/workload.h"

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
	/* --engine: Docker or Podman; RM_ENGINE_ANY: the launcher asks the engine */
	rm_engine_kind engine;
	const char *parser; /* overrides every model's parser, or NULL */
	/* What reaches every container as the user gave it (RM_WORKLOAD_SETTINGS in
	 * rm/workload.h). */
	rm_workload_settings wl;
	int live_output;
	int keep_model_dir;
	int clean_docker_cache;
	int no_pull; /* --no-pull: builds do not pull a newer base image (rm_image_req) */
	/* --build-timeout: seconds one image's build may take (0 = none): then it is stopped and
	 * the model is a FAILURE naming the build. The model's timeout covers its run only. */
	double build_timeout;
	int dry_run; /* print the plan; contact no engine */
	long repeat; /* runs per model (>= 1) */
	/* --retries: a run that failed for the machine (the engine refused or lost it, an
	 * image pull failed, a SLURM node was lost, the pre-flight check refused a GPU) is
	 * tried again up to this many times, --retry-wait seconds apart (doubling); a model's
	 * own failure never is. Every attempt keeps its row (perf.csv's attempt). */
	long retries;
	double retry_wait;
	/* the host's provenance is someone else's to write (a suite's, once for its entries);
	 * the models' still are the runner's (rm/provenance.h) */
	int no_host_provenance;
	const char *score; /* NULL or "mlperf" */
	int progress;	   /* 0 off, 1 auto (status line on a terminal, periodic otherwise) */
	double progress_interval;	  /* seconds between plain progress lines */
	int sys_env_details;		  /* write the doctor's findings beside the logs */
	const char *const *context_files; /* --additional-context-file, JSON or YAML */
	size_t n_context_files;
	long warmup;	 /* steps left out of steady-state means; RM_PARSER_WARMUP_AUTO: detected */
	int run_dynamic; /* run scripts/<dir>/get_models_json.py (rm_registry_opts) */
	int skip_model_run;	   /* build the images, run nothing */
	int disable_skip_gpu_arch; /* ignore the models' skip_gpu_arch */
	const char *data_config;   /* data providers; NULL: <root>/data.json */
	/* tool definitions (rm/tools.h); NULL: <root>/scripts/common/tools.json, else built-in */
	const char *tools_config;
	const char *force_mirror_local; /* --force-mirror-local DIR, or NULL */
	const char *run_id; /* NULL: a new one (rm_run_id_new); a suite passes its own to every
			       entry */
	/* relative_change against this baseline (rm/history.h; run --baseline); NULL: the last
	 * SUCCESS row of the same model, metric, Dockerfile, machine and arch in output. */
	const struct rm_baseline *baseline;
	/* run: run the images of this build manifest (rm/runner.h), build nothing; without
	 * tags, every model it names. build: the manifest to write. */
	const char *manifest;
	const char *registry; /* build: push to this HOST:PORT, or NULL (build only) */
	/* A sweep's point (rm/config.h): its parameters lead every row's `config`, and its
	 * logs are named after it ("<model>.<batch_size=8,...>.<run id>.live.log"). NULL: a
	 * run of no sweep, whose configuration is what the run itself sets. */
	const struct rm_config *point;
	const char *precision; /* the point's precision: perf.csv's training_precision; NULL:
				  the model's */
	long n_gpus;	       /* the point's GPU count for every model (-1: all); 0: the
				  model's n_gpus */
} rm_run_opts;

/* Everything off or NULL: the command line fills in what it was given, defaults included. */
/* Three hours: MAD's ROCm images pull and compile for long, a hung RUN step ends. */
#define RM_BUILD_TIMEOUT_DEFAULT 10800.0

#define RM_RUN_OPTS_INIT                                                                           \
	{                                                                                          \
		.root = NULL, .output = NULL, .log_dir = NULL, .repeat = 0, .run_id = NULL,        \
		.build_timeout = RM_BUILD_TIMEOUT_DEFAULT                                          \
	}

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

/* A file a run writes besides perf.csv, its perf_<model>.csv and its logs (run.json, the CI
 * outputs); what names it in messages ("--html"). A NULL path is skipped. */
typedef struct rm_run_output {
	const char *path;
	const char *what;
} rm_run_output;

/*
 * Before the first build (src/runner/outputs.c): the files the run will write, each
 * resolved (the current folder, "..", symlinks of the parts that exist), must be distinct:
 * perf.csv (o->output), perf_summary.csv beside it when repeat > 1, perf_<model>.csv of each
 * of the models, the extra outputs; none may be named like a model's log link in o->log_dir.
 * A perf_<model>.csv or perf_summary.csv that exists must have our header; an extra output
 * must not be a folder and its folder must be writable. The error names the file and both
 * of its uses. rm_runner_run checks its own selection; a suite run checks every entry's
 * models and its CI outputs before it writes run.json.
 */
int rm_runner_check_outputs(const rm_run_opts *o, const char *const *models, size_t n_models,
			    long repeat, const rm_run_output *extra, size_t n_extra, rm_error *err);

/*
 * ---- the build manifest (src/runner/build_manifest.c) ----
 *
 * What `run_models build` built (and pushed), read by `run_models run
 * --manifest`, which then builds nothing. The layout is madengine's build_manifest.json, so
 * tools reading one read the other:
 *
 *   {"built_images": {"<image>": {"docker_image", "registry_image", "digest", "dockerfile",
 *                                 "base_docker", "docker_sha", "fingerprint",
 *                                 "build_duration", "push_duration", "reused", "status",
 *                                 "reason"}},
 *    "built_models": {"<image>": {"name": "<model>", ...the models.json entry}},
 *    "context": {...}, "deployment_config": {...}, "registry": "HOST:PORT",
 *    "run_models_version": "..."}
 *
 * where <image> is the local image name (rm_image_name: "ci-<model>_<stem>"). Entries
 * madengine wrote have no "status" and count as built. Credentials are never written.
 *
 * Ownership: the manifest owns its strings; rm_build_manifest_release frees them.
 */

typedef struct rm_built_image {
	char *key;	      /* the local image name, "ci-smoke_busybox_smoke" */
	char *model;	      /* the model's name (built_models[key].name) */
	char *dockerfile;     /* or NULL */
	char *base_image;     /* base_docker, or NULL */
	char *registry_image; /* "HOST:PORT/ci-...:<fingerprint>", or NULL when not pushed */
	char *digest;	      /* "sha256:...", or NULL */
	char *image_id;	      /* docker_sha: the id on the build host, or NULL */
	int failed;	      /* status FAILURE: its build or push failed */
	char *reason;	      /* why, or NULL */
} rm_built_image;

typedef struct rm_build_manifest {
	char *path;
	rm_built_image *images; /* in the file's order */
	size_t n;
} rm_build_manifest;

/* Reads path; a file that is not a manifest (no built_images object, an entry without
 * its model) is an error naming the file and the entry. */
int rm_build_manifest_load(rm_build_manifest *m, const char *path, rm_error *err);
void rm_build_manifest_release(rm_build_manifest *m);

/* What to run for an entry (caller frees): "<registry repo>@<digest>" when it was pushed
 * (a digest pins what runs even if the tag moves), else its registry_image, else the local
 * image name. */
char *rm_built_image_ref(const rm_built_image *mi);

/* Whether the manifest names model (any entry, built or failed). */
int rm_build_manifest_has_model(const rm_build_manifest *m, const char *model);

/* ---- writing (run_models build) ---- */

/* A new manifest document; registry may be NULL. context and deployment are copied (NULL:
 * empty objects). */
json_t *rm_build_manifest_new(const char *registry, json_t *context, json_t *deployment);
/* Adds (or replaces) the entry of mi->key: image facts from mi, the model entry from
 * model_json (an object, taken), the figures given. */
void rm_build_manifest_add(json_t *doc, const rm_built_image *mi, json_t *model_json,
			   const char *fingerprint, double build_s, double push_s, int reused);
/* Writes doc to path atomically (a temporary file renamed over it). */
int rm_build_manifest_write(json_t *doc, const char *path, rm_error *err);

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

#endif
