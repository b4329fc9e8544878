/*
 * The workload: everything a launcher needs to run one model once, built in one place
 * (rm_workload_build, from the model, the run's context and the run's settings) and read by
 * every launcher, by dry runs and, through JSON, by the nodes of a SLURM job.
 *
 * Its life:
 *   built      once per model by the runner (or `run_models build`): effective args,
 *              TunableOp and its host folder, timeout, the user's container settings (the
 *              context's docker_env_vars, docker_mounts, docker_gpus, docker_cpus,
 *              model_args), the names of the host's MAD_SECRETS* variables, the data plan,
 *              the tools' plan, the command the container runs; the image is filled in
 *              once it is prepared
 *   rendered   by rm_workload_render into a POST /containers/create body, for the context
 *              of the host that runs it: GPU devices, the run options of its GPU vendor
 *              (madengine's container_runner.py) and the MAD_SYSTEM_* facts (GPU product
 *              name, HIP version), MAD_GUEST_OS are that host's (the runner's locally, the
 *              node's on SLURM); everything else is the workload's, so one workload gives
 *              one request wherever the hosts agree
 *   serialized by rm_job_doc_to_json (a job document of several workloads, schema
 *              RM_WORKLOAD_SCHEMA) and read back by rm_job_doc_from_json on each node
 *
 * Secrets: a workload holds the NAMES of the host's MAD_SECRETS* variables, never their
 * values; rendering reads the values from the environment it is given, into the request
 * body only (never an argv, a file or a label).
 *
 * Ownership: a workload owns its strings and its data plan; model points into a registry
 * the caller keeps (NULL after rm_job_doc_from_json until rm_workload_bind). Errors follow
 * rm/util.h.
 */
#ifndef RM_WORKLOAD_H
#define RM_WORKLOAD_H

#include <stddef.h>

#include "rm/context.h"
#include "rm/data.h"
#include "rm/doctor.h"
#include "rm/registry.h"
#include "rm/telemetry.h"
#include "rm/tools.h"
#include "rm/util.h"

typedef struct json_t json_t;

/*
 * The distributed launchers: a card's or a context's distributed.launcher (madengine's
 * MAD_LAUNCHER), one table for a run on one host and for SLURM jobs
 * (src/workload/dist_launchers.c). `start` says how the processes of one container are
 * started, that is what MAD_MULTI_NODE_RUNNER holds, or that the card's script runs on the
 * SLURM batch host and starts its containers itself (MAD's slurm_multi cards); `slurm` how
 * a SLURM job runs it: one container a node (run_models node-run), or the card's script on
 * the batch host.
 */
typedef enum rm_dist_start {
	RM_DIST_TORCHRUN,  /* torchrun's command: --standalone on one node */
	RM_DIST_DEEPSPEED, /* deepspeed's, one node */
	RM_DIST_OWN,	   /* the workload starts its own workers: the runner is "" */
	RM_DIST_SCRIPT,	   /* never in a container: the card's script on the batch host */
} rm_dist_start;

typedef enum rm_dist_slurm {
	RM_DIST_SLURM_TASKS,  /* one task a node, each running the container (node-run) */
	RM_DIST_SLURM_SCRIPT, /* the card's script on the batch host (the slurm_multi flow) */
} rm_dist_slurm;

typedef struct rm_dist_launcher {
	const char *name;	/* as the docs spell it */
	const char *aliases[2]; /* other spellings, NULL-terminated */
	rm_dist_start start;
	rm_dist_slurm slurm;
} rm_dist_launcher;

/* The launcher named name (case and '-' or '_' do not matter), or NULL. */
const rm_dist_launcher *rm_dist_launcher_find(const char *name);
/* "torchrun, torchtitan, ... or sglang", for messages; only those whose SLURM jobs run one
 * container a node when tasks_only. Caller frees. */
char *rm_dist_launcher_names(int tasks_only);
/* Whether l runs as its card's script on the SLURM batch host: always for slurm_multi, and
 * on SLURM (on_slurm) for the launchers whose jobs take that flow (primus, sglang-disagg). */
int rm_dist_runs_script(const rm_dist_launcher *l, int on_slurm);
/* MAD_MULTI_NODE_RUNNER: the command that starts nproc processes on each of nnodes nodes
 * (port: the rendezvous port across nodes); l NULL (a launcher no row names) is torchrun's,
 * as madengine makes it. Caller frees. */
char *rm_dist_runner(const rm_dist_launcher *l, long nnodes, long nproc, long port);

/* The version of the job document and of the workloads in it; a reader refuses others. */
#define RM_WORKLOAD_SCHEMA 1

/*
 * The run's settings that reach its containers as the user gave them (the command line).
 * One row each: X(kind, name). The field of rm_workload_settings, its key in the job document
 * and its round trip through JSON all come from this list, so a new container-bound flag is
 * a row here, its option row and copy in src/cmd/, and its one use in the render.
 * Kinds: STR (const char *, NULL = not given), BOOL (int), SIZE (long long), SECONDS
 * (double), TUNABLEOP (rm_tunableop), TELEMETRY (rm_telemetry_mode): the closed sets travel
 * as their words (rm_tunableop_words, rm_telemetry_words).
 */
#define RM_WORKLOAD_SETTINGS(X)                                                                    \
	X(TUNABLEOP, tunableop) /* --tunableop; UNSET: the model's own setting */                  \
	X(SIZE, shm_size)	/* --shm-size in bytes; 0: the engine's default */                 \
	X(BOOL, keep_alive)	/* --keep-alive: the container outlives the script */              \
	X(SECONDS, timeout)	/* --timeout: < 0 not given, 0 none */                             \
	X(TELEMETRY, telemetry) /* --telemetry */                                                  \
	X(PREFLIGHT, preflight) /* --preflight: the GPUs checked before the container starts */    \
	/* --allow-sensitive-mounts: the folder may bind the host's root, its system folders or    \
	 * the Docker socket (additional_docker_run_options, data.json) */                         \
	X(BOOL, allow_sensitive_mounts)

#define RM_WL_TYPE_STR	     const char *
#define RM_WL_TYPE_BOOL	     int
#define RM_WL_TYPE_SIZE	     long long
#define RM_WL_TYPE_SECONDS   double
#define RM_WL_TYPE_TUNABLEOP rm_tunableop
#define RM_WL_TYPE_TELEMETRY rm_telemetry_mode
#define RM_WL_TYPE_PREFLIGHT rm_preflight_mode

typedef struct rm_workload_settings {
#define RM_WL_FIELD(kind, name) RM_WL_TYPE_##kind name;
	RM_WORKLOAD_SETTINGS(RM_WL_FIELD)
#undef RM_WL_FIELD
} rm_workload_settings;

/* Settings as when no option is given. */
#define RM_WORKLOAD_SETTINGS_INIT                                                                  \
	{                                                                                          \
		.timeout = -1                                                                      \
	}

/* Default timeout when neither the command line nor the model gives one. */
#define RM_DEFAULT_TIMEOUT 7200.0

/* Paths inside the container. */
#define RM_TUNABLEOP_DIR "/run_models/tunableop"
#define RM_EXIT_MARKER	 "run_models-exit-"
#define RM_WORKSPACE	 "/myworkspace"
/* The CDI kind of NVIDIA's GPUs (NVIDIA Container Toolkit): devices "nvidia.com/gpu=0". */
#define RM_CDI_NVIDIA "nvidia.com/gpu"
/* The folder of the script of custom data source i is copied to RM_DATA_SCRIPTS/<i>; the
 * scripts' run writes "<seconds> <exit code>" to RM_DATA_STATUS before the model starts. */
#define RM_DATA_SCRIPTS RM_WORKSPACE "/.run_models/data"
#define RM_DATA_STATUS	RM_WORKSPACE "/.run_models/data.status"
/* The tools' wrapper (cmd.c) writes what failed, one line each, to RM_TOOLS_STATUS ("pre K
 * RC", "model RC", "post K RC": K the script's index in the plan's pre or post list), and
 * copies what the outputs globs match to RM_TOOLS_OUTPUTS/<tool>/<path>. */
#define RM_TOOLS_STATUS	 RM_WORKSPACE "/.run_models/tools.status"
#define RM_TOOLS_OUTPUTS RM_WORKSPACE "/.run_models/tool_outputs"
/* The line the wrapper prints (stdout) once the model and the post scripts are done and the
 * outputs are gathered: the run's clock stops there (its timeout and test_duration cover the
 * model, not the copying; the gathering has RM_TOOLS_GATHER_S of its own). */
#define RM_TOOLS_GATHER_LINE "run_models: gathering the tools' outputs"
#define RM_TOOLS_GATHER_S    600.0

typedef struct rm_workload {
	rm_workload_settings set; /* the run's, strings owned */
	const rm_model *model;	  /* not owned */
	char *model_name;
	char *image; /* what runs: a name, an id or a reference (rm_workload_set_image) */
	char *run_id;
	char *log_dir;	  /* where the run's logs go, as given */
	char *extra_args; /* " --k v" from name:k=v tags, or NULL */
	char *model_args; /* the context's model_args (replaces the model's args), or NULL */
	long n_gpus;	  /* the model's n_gpus: -1 = all of the host's */
	/* effective TunableOp: the command line's, else the model's tunableop field, else a
	 * "--tunableop on|off" in its args; UNSET leaves the model alone */
	rm_tunableop tunableop;
	char *tunableop_dir; /* with "on": the host folder mounted at RM_TUNABLEOP_DIR */
	double timeout;	     /* effective seconds; 0 = none */
	/* Environment after the MAD_* variables: the context's docker_env_vars, then what a
	 * launcher adds (a SLURM node: the batch script's job-wide variables). */
	rm_kv *env;
	size_t n_env;
	/* The card's env_vars with the context's env_vars over them (MAD's layering): after
	 * env in a container; the exports of a card whose script runs on the batch host.
	 * DOCKER_IMAGE_NAME, when there and not the context's, is the run's image
	 * (rm_workload_env_vars). */
	rm_kv *env_vars;
	size_t n_env_vars;
	int image_name_given; /* the context's env_vars set DOCKER_IMAGE_NAME */
	char **secrets;	      /* names of the host variables passed through (MAD_SECRETS*) */
	size_t n_secrets;
	rm_kv *mounts; /* the context's docker_mounts: key the container path, value the host's */
	size_t n_mounts;
	char *gpus;	   /* docker_gpus ("0,2-4"), or NULL */
	char *cpus;	   /* docker_cpus, or NULL */
	rm_data_plan data; /* the model's data; n == 0 without */
	/* the run's tools and the context's pre/post scripts and encapsulate_script (rm/tools.h);
	 * empty without */
	rm_tool_plan tools;
	/* the submitting host's BUILD_NUMBER (CI's), read once here: perf.csv's build_number
	 * and the container's JENKINS_BUILD_NUMBER ("0" when NULL, as madengine sets it) */
	char *build_number;
	/* the distributed launcher MAD_MULTI_NODE_RUNNER is made for on one node: the
	 * context's distributed.launcher, else the submitting host's MAD_LAUNCHER; NULL:
	 * torchrun (madengine's default) */
	char *dist_launcher;
} rm_workload;

/* What a workload is built from; everything is copied. */
typedef struct rm_workload_in {
	const rm_model *model;
	const rm_context *ctx; /* the run's: container settings, and GPUs for the defaults */
	const rm_workload_settings *set;
	const char *run_id;
	const char *log_dir;	     /* NULL: "." */
	const char *extra_args;	     /* or NULL */
	const char *const *host_env; /* environ-like: the MAD_SECRETS* names are taken from it */
	/* taken over (moved, left empty), or NULL */
	rm_data_plan *data;
	/* the run's tools, copied; or NULL */
	const rm_tool_plan *tools;
	/* create the TunableOp folder (not in a dry run) */
	int create_dirs;
	/* GPUs over the model's n_gpus (-1: all of the host's); 0: the model's */
	long n_gpus;
} rm_workload_in;

int rm_workload_build(rm_workload *w, const rm_workload_in *in, rm_error *err);
void rm_workload_release(rm_workload *w); /* safe on a zeroed workload */
/* A deep copy (model shared). */
void rm_workload_copy(rm_workload *dst, const rm_workload *src);
void rm_workload_set_image(rm_workload *w, const char *image);
/* Points w at its model in reg (by model_name), after rm_job_doc_from_json. */
int rm_workload_bind(rm_workload *w, const rm_registry *reg, rm_error *err);

/* The workload's env_vars as they are used: DOCKER_IMAGE_NAME filled with w->image unless the
 * context gave it (MAD: the image the run built or pushed). *n receives the count; free with
 * rm_workload_kv_free. */
rm_kv *rm_workload_env_vars(const rm_workload *w, size_t *n);
void rm_workload_kv_free(rm_kv *v, size_t n);
/* 0, or -1 with err naming the model and the variable when one of its env_vars is still a
 * "<...>" placeholder (MAD's cards carry DOCKER_IMAGE_NAME "<supply-your-image>"): the run's
 * image fills DOCKER_IMAGE_NAME; any other is the user's to give in the context's env_vars. */
int rm_workload_check_placeholders(const rm_workload *w, rm_error *err);
/* The launcher of the workload's card (its distributed.launcher), its context's, or the
 * host's MAD_LAUNCHER: the table's row, or NULL (none, or one the table lacks). */
const rm_dist_launcher *rm_workload_dist_launcher(const rm_workload *w);

/* The effective TunableOp setting: cli, else the model's field, else its args. */
rm_tunableop rm_tunableop_effective(const rm_model *m, rm_tunableop cli);
/* Where tuned TunableOp results live between runs: "<log dir, real path>/tunableop/<model>",
 * created when create is set (a failure is warned about: the run goes on without). The one
 * rule for local runs and SLURM nodes alike. */
char *rm_workload_tunableop_dir(const char *log_dir, const char *model, int create);
/* Model dir: the last path part of url (without ".git"), else the model's short name. */
char *rm_model_dir(const rm_model *m);
/* GPUs the workload gets on a host whose context is ctx. */
long rm_workload_gpus(const rm_workload *w, const rm_context *ctx);
/* Which ones, as GPU indexes of that host (docker_gpus, else the first
 * rm_workload_gpus): what the render gives the container, and what telemetry samples.
 * *out (caller frees) is NULL and *n 0 without GPUs; -1 on a malformed docker_gpus. */
int rm_workload_gpu_indexes(const rm_workload *w, const rm_context *ctx, long **out, size_t *n,
			    rm_error *err);
/* The pre-flight check (rm/doctor.h) of those GPUs, the host's sysfs at sysfs_root (NULL:
 * "/sys"): the findings in *v, *n (rm_findings_free); returns how many are FAIL. Nothing is
 * checked (*n 0) when w has the check off, gets no GPU or names GPUs that do not parse. */
size_t rm_workload_preflight(const rm_workload *w, const rm_context *ctx, const char *sysfs_root,
			     rm_finding **v, size_t *n);

/* The argv the container runs (NULL-terminated), with extra args and model_args applied. */
int rm_workload_cmd(const rm_workload *w, char ***argv, rm_error *err);
/* The model's command as madengine writes it, under the tools' prefix (encapsulate_script):
 * "<prefix> bash run.sh <args>", for people to read (dry runs). */
char *rm_workload_command_text(const rm_workload *w);
/* The effective args recorded in perf.csv: the context's model_args or the model's args, then
 * the name:key=value tags. TunableOp is a setting, in its own column: with it set, the args
 * have no "--tunableop" words, and the script gets "--tunableop on|off" after the model's
 * args in its command (MAD's run.sh takes it) instead. */
char *rm_workload_args(const rm_workload *w);
/* The POST /containers/create body for a host: host its context, host_env its environment
 * (the secrets' values come from there). Labels: run_models, run_models.run,
 * run_models.model (and run_models.keep with keep_alive); a launcher adds its own. */
int rm_workload_render(const rm_workload *w, const rm_context *host, const char *const *host_env,
		       json_t **body, rm_error *err);
/* The custom data scripts: how many sources have one, and the k-th of them (relative to the
 * registry root), whose folder a launcher copies to RM_DATA_SCRIPTS/<k>. */
size_t rm_workload_data_scripts(const rm_workload *w);
const char *rm_workload_data_script(const rm_workload *w, size_t k);
/* How a tool's (or the context's) script k of the pre (post 0) or post (post 1) list is
 * named in the log and in a failure's reason (caller frees). */
char *rm_workload_tool_script_label(const rm_tool_plan *p, int post, size_t k);
/* The folder under a run's tools folder that tool's outputs go to (caller frees). */
char *rm_workload_tool_dir(const char *tool);

/*
 * ---- the job document: workloads for other hosts (src/workload/job_doc.c) ----
 *
 *   {"schema": 1, "run_id": ..., "root": <registry folder>, "log_dir": ...,
 *    "context_files": [...], "contexts": [...], "workloads": {"<key>": {<workload>}}}
 *
 * context_files and contexts are how the user gave the context: a node detects its own and
 * applies them on top, as the submitting run did. Each workload holds every field of
 * rm_workload but model (its name is there) and the settings under "settings". The image is
 * what the node runs ("pull": whether its engine may pull it). The file holds no secret
 * value: MAD_SECRETS* appear by name only.
 */
typedef struct rm_job_entry {
	char *key;
	rm_workload w;
	int pull;	/* the node's engine may pull w.image (else it is a local build's id) */
	char *log_base; /* "<log dir>/<model>.<run id>": the node's logs and result file */
} rm_job_entry;

typedef struct rm_job_doc {
	int schema;
	char *run_id;
	char *root;
	char *log_dir;
	char **context_files; /* NULL-terminated */
	char **contexts;      /* NULL-terminated */
	rm_job_entry *entries;
	size_t n;
} rm_job_doc;

/* Adds (or replaces) the entry of key; w is copied. */
void rm_job_doc_add(rm_job_doc *d, const char *key, const rm_workload *w, int pull,
		    const char *log_base);
json_t *rm_job_doc_to_json(const rm_job_doc *d);
/* Reads a document; what names its source in messages. Workloads are left unbound. */
int rm_job_doc_from_json(rm_job_doc *d, json_t *doc, const char *what, rm_error *err);
/* The entry of key, or NULL. */
const rm_job_entry *rm_job_doc_find(const rm_job_doc *d, const char *key);
void rm_job_doc_release(rm_job_doc *d);

/* One workload alone, as it appears in a job document (tests, fuzzing). */
json_t *rm_workload_to_json(const rm_workload *w);
int rm_workload_from_json(rm_workload *w, json_t *j, rm_error *err);

#endif
