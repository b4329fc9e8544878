/*
 * Launchers: where and how a workload runs. The runner knows only this interface; the
 * Engine API (rm/engine.h) is called from src/engine/ and src/launcher/ and nowhere else.
 * Each launcher is one file in src/launcher/ and one row in rm_launchers[] (launcher.c).
 *
 * The life of one workload, as the runner drives it:
 *   prepare   build (or find) its image; build output goes line by line to req->on_line
 *   start     create it: nothing runs yet (or it is queued)
 *   stream    run it and hand its output to spec->on_output until it ends, or until
 *             spec->poll returns non-zero (then RM_LAUNCH_STOPPED)
 *   stop      kill it (a timeout, a signal, a broken stream)
 *   wait      its exit status, within a deadline
 *   fetch     copy a file or folder out of it as a tar (multiple_results, the model dir)
 *   cleanup   remove it, or keep it (--keep-alive); frees the job in both cases
 * Once per run, sweep removes whatever the run left behind (after a failed removal or a
 * signal), and reap, at the start, what runs whose runner is gone left behind (kill -9, a
 * crash, a reboot): every workload is labelled with its run and its runner's host, pid and
 * the pid's start time. describe fills the perf row's deployment_type, launcher, nnodes and
 * gpus_per_node. plan prints, for --dry-run, what prepare and start would do.
 *
 * Batching (optional): a launcher with submit_all (a scheduler that runs many workloads as
 * one submission, e.g. a SLURM job array) gets every workload of the run at once, after
 * every image is prepared and before the first start; start then attaches to what is
 * already submitted (or submits it then, when submit_all left it out), and stream, wait
 * and the rest go on one workload at a time as without it. Without submit_all the runner
 * prepares and runs each workload in turn.
 *
 * Every wait on the back end obeys the process-wide interrupt (rm_interrupt_pending in
 * rm/util.h): it gives up at once, and the clean-up that follows has a short deadline.
 *
 * Errors follow rm/util.h; a launcher never prints errors itself (it may print progress
 * through rm_info). Secrets: whatever a launcher hands to on_line / on_output is raw; the
 * runner masks it. A launcher never puts a secret into an argv, a file name or a label.
 */
#ifndef RM_LAUNCHER_H
#define RM_LAUNCHER_H

#include <stddef.h>
#include <stdio.h>

#include "rm/context.h"
#include "rm/doctor.h"
#include "rm/registry.h"
#include "rm/telemetry.h"
#include "rm/util.h"
#include "rm/workload.h"

typedef struct json_t json_t;

/* stream returned because spec->poll asked it to (the workload may still run). */
#define RM_LAUNCH_STOPPED (-2)
/* wait: the workload ended in a way its back end names (a SLURM job FAILED, TIMEOUT,
 * CANCELLED, NODE_FAIL, ...): err holds the reason for the FAILURE row, and *status the exit
 * code when one is known, else -1. */
#define RM_LAUNCH_FAILED (-3)
/* prepare: the back end went away during the build (the engine died): err names it; the
 * run counts an engine loss (exit 4). */
#define RM_LAUNCH_LOST (-4)
/* wait: the workload's timeout (its rm_workload.timeout from the stream's start) passed and it
 * still runs: the caller stops it and records the timeout. A back end whose wait cannot
 * outlast the timeout never returns it. */
#define RM_LAUNCH_TIMED_OUT (-5)
/* wait: as RM_LAUNCH_FAILED, where the back end says the host failed the workload, not the
 * workload itself (a SLURM node failed or did not boot, a node's pre-flight check refused
 * its GPUs): the runner may try it again (--retries). */
#define RM_LAUNCH_HOST_LOST (-6)

/* Given once, when the launcher is opened; everything here outlives the launcher. */
typedef struct rm_launcher_config {
	const char *docker_host; /* NULL: $DOCKER_HOST or the default socket */
	const rm_context *ctx;
	const char *run_id;
	int dry_run; /* contact nothing: only plan is called */
	/* How the user gave the context, for launchers that run the workload through
	 * run_models on other hosts (SLURM's node-run), where the host is detected again and
	 * these are applied on top, in this order: files (JSON or YAML), then texts (JSON or
	 * "@file"). May be empty. */
	const char *const *context_files;
	size_t n_context_files;
	const char *const *contexts;
	size_t n_contexts;
	const char *root;    /* the registry folder (models.json), NULL for "." */
	const char *log_dir; /* where the run's logs go, NULL for "." */
} rm_launcher_config;

/* The image of one Dockerfile of a model, or an image given as it is. */
typedef struct rm_image_req {
	const rm_model *model;
	/* NULL: image is used as it is, nothing is built: the context's MAD_CONTAINER_IMAGE,
	 * or a build manifest's entry ("HOST:PORT/name@sha256:...", run --manifest). prepare
	 * then makes sure the back end has it, pulling it when missing (as `docker run` would),
	 * and returns in *image_id its id (the Docker launcher; SLURM returns the reference,
	 * which each node pulls). */
	const rm_dockerfile *df;
	const char *image; /* the tag to build, e.g. "ci-smoke_busybox_smoke" */
	json_t *buildargs; /* object of strings */
	int nocache;	   /* --clean-docker-cache: build from scratch, never skip */
	/* --no-pull: build on the base image the engine has. Otherwise, as madengine's
	 * `docker build --pull`, a base image the engine got from a registry is pulled again
	 * first (a newer one makes a new fingerprint, so the image is rebuilt); a registry out
	 * of reach is warned about and the build goes on with the engine's copy. */
	int no_pull;
	const char *log; /* the build log's name, for messages */
	void (*on_line)(void *ud, const char *line, size_t len); /* build output, raw */
	int (*poll)(void *ud); /* non-zero: give up (a signal came) */
	void *ud;
} rm_image_req;

/* One run of a workload. */
typedef struct rm_job_spec {
	/* What runs (rm/workload.h); the launcher renders it for the host that runs it. */
	const rm_workload *w;
	const char *name; /* unique per run and workload, e.g. the container name */
	/* The runner's log of this run ("<dir>/<model>.<run id>.live.log", or .r<N>.live.log
	 * with --repeat) and its stable name ("<dir>/<model>.live.log"), or NULL (dry run): a
	 * launcher that keeps logs of its own names them after these (SLURM:
	 * "<dir>/<model>.<run id>.node<R>.log", linked from "<dir>/<model>.node<R>.log"). */
	const char *log_file;
	const char *log_link;
	rm_output_cb on_output; /* stdout and stderr pieces, raw */
	/* Called about every 200 ms and on every piece while streaming; non-zero stops the
	 * stream (stream returns RM_LAUNCH_STOPPED). */
	int (*poll)(void *ud);
	/* Non-zero when the run must end now (a signal): ends wait and any other call that
	 * can block. May be NULL. */
	int (*cancelled)(void *ud);
	/* For launchers whose workloads wait in a queue (SLURM): called with 1 while the
	 * workload is queued, 0 once it runs. The runner's clock (--timeout, the row's
	 * test_duration) stands still while it is queued. May be NULL. */
	void (*queued)(void *ud, int queued);
	void *ud;
} rm_job_spec;

/* The perf row's view of where a workload ran. */
typedef struct rm_launch_desc {
	const char *deployment_type; /* "local", "slurm" */
	const char *launcher;	     /* "docker", ... */
	long nnodes;
	long gpus_per_node;
} rm_launch_desc;

/* What `run_models doctor` reports about a launcher's back end. */
/* Every launcher's probe, as doctor findings named after the launcher, in the table's order
 * (rm_doctor_opts.backends). */
void rm_launcher_probe_all(const char *docker_host, rm_finding **v, size_t *n);

typedef struct rm_probe {
	rm_finding_status status; /* RM_FINDING_NONE when there is nothing to say */
	char *detail;
	char *action; /* NULL for OK */
} rm_probe;

typedef struct rm_job rm_job;

typedef struct rm_launcher_ops {
	const char *name;
	/* It runs a card's own script on a batch host (rm_dist_runs_script: MAD's slurm_multi
	 * cards), and a run on another launcher hands those cards to it. */
	int batch_host;
	/* Whether this launcher runs the workloads of ctx (e.g. it has a "slurm" key). The
	 * first row that claims the context is used; the last row claims every context. */
	int (*claims)(const rm_context *ctx);
	/* The context keys that make it claim a context (NULL-terminated, or NULL): what a
	 * build manifest keeps as the deployment (rm_launcher_deployment). */
	const char *const *context_keys;
	int (*open)(void **state, const rm_launcher_config *cfg, rm_error *err);
	void (*close)(void *state);
	/* One line for the run's banner, e.g. "Docker API 1.41 at unix:///run/docker.sock". */
	const char *(*where)(void *state);
	/* *image_id receives the image's id; *cached is set when nothing had to be built (or
	 * pulled). */
	int (*prepare)(void *state, const rm_image_req *req, char **image_id, int *cached,
		       rm_error *err);
	int (*start)(void *state, const rm_job_spec *spec, rm_job **job, rm_error *err);
	/* 0 when the output ended (the workload stopped), RM_LAUNCH_STOPPED, or -1. */
	int (*stream)(void *state, rm_job *job, rm_error *err);
	int (*stop)(void *state, rm_job *job, rm_error *err);
	/* timeout in seconds (0 = none); a poll returning non-zero also ends the wait. 0 with
	 * *status the exit code; RM_LAUNCH_FAILED when the back end says the workload failed
	 * (err: its reason); -1 when no status can be had. */
	int (*wait)(void *state, rm_job *job, double timeout, long *status, rm_error *err);
	/* A tar of path (absolute inside the workload) written to fd, at most max bytes. A
	 * missing path fails with err->kind RM_ERR_INPUT. */
	int (*fetch)(void *state, rm_job *job, const char *path, int fd, size_t max, rm_error *err);
	/* Removes the workload unless keep; frees job either way. */
	int (*cleanup)(void *state, rm_job *job, int keep, rm_error *err);
	int (*sweep)(void *state, rm_error *err);
	/* Removes the workloads of runners on this host that are gone; *n counts them (each is
	 * named with rm_info). */
	int (*reap)(void *state, size_t *n, rm_error *err);
	void (*describe)(void *state, const rm_workload *w, rm_launch_desc *out);
	/* Optional (NULL): -1 with err when w cannot run here (settings that contradict each
	 * other), asked before anything is built or submitted. */
	int (*check)(void *state, const rm_workload *w, rm_error *err);
	void (*plan)(void *state, const rm_image_req *req, const rm_job_spec *spec, FILE *out);
	/* Optional (NULL): a doctor finding about the back end, without a run. */
	void (*probe)(const char *docker_host, rm_probe *out);
	/* Optional (NULL): batching (see the top of this file). specs[0..n) are every workload
	 * of the run whose image is prepared, in the order they will be started (valid during
	 * the call: the launcher copies what it keeps); start later gets a spec of the same
	 * name. A launcher may submit all, some or none of them now (start submits the rest).
	 * -1: nothing was submitted, and err says why; the runner then fails every workload
	 * with it. */
	int (*submit_all)(void *state, const rm_job_spec *const *specs, size_t n, rm_error *err);
	/* Optional (NULL): the GPU telemetry the hosts that ran the workload sampled themselves
	 * (SLURM: every node's node-run), merged over them (rm_telem_summary_merge), once wait
	 * has returned. 0 with *out filled; -1 when no host sampled any. A launcher without it
	 * runs workloads on this host (its describe says "local"), where the runner samples
	 * them. */
	int (*telemetry)(void *state, rm_job *job, rm_telem_summary *out);
	/* Optional (NULL): what the render must know of the container engine its workloads
	 * run on, once open: ctx->engine (Docker or Podman) when it is RM_ENGINE_ANY, and
	 * ctx->engine_no_cgroups. */
	void (*engine)(void *state, rm_context *ctx);
	/* Optional (NULL): what the back end knows of an image (a name, id or reference), for
	 * a run's provenance: *facts = {"id", "repo_digests": [...], "env": ["K=V", ...]}
	 * (the Engine API's image inspection: Id, RepoDigests, Config.Env). -1 when it does
	 * not have it. */
	int (*image_facts)(void *state, const char *image, json_t **facts, rm_error *err);
	/* Optional (NULL): what the hosts that ran the workload are, for its provenance, once
	 * wait has returned (SLURM: each node's rm/doctor.h rm_doctor_provenance, from its
	 * result file): *out = {"node<R> <name>": {group: {name: value}}}. -1 when no host said.
	 * A launcher without it runs workloads on this host, whose provenance the runner has. */
	int (*host_provenance)(void *state, rm_job *job, json_t **out);
} rm_launcher_ops;

/* NULL-terminated, in the order launchers are asked to claim a context. */
extern const rm_launcher_ops *const rm_launchers[];

/* An open launcher: its ops and its state. */
typedef struct rm_launcher {
	const rm_launcher_ops *ops;
	void *state;
} rm_launcher;

/* Opens the first launcher that runs a card's own script on a batch host (batch_host), for
 * the cards of a run whose own launcher does not (rm_workload_runs_here). */
int rm_launcher_open_batch_host(rm_launcher *l, const rm_launcher_config *cfg, rm_error *err);

/* Opens the launcher that claims cfg->ctx. */
int rm_launcher_open(rm_launcher *l, const rm_launcher_config *cfg, rm_error *err);
/* Opens the launcher called name ("docker", "slurm"), whatever the context says: the
 * build command and SLURM's per-node runner use the Docker launcher directly. */
int rm_launcher_open_named(rm_launcher *l, const char *name, const rm_launcher_config *cfg,
			   rm_error *err);
void rm_launcher_close(rm_launcher *l); /* safe on a zeroed or closed launcher */
/* Fills ctx's engine facts from an open launcher (its engine op; nothing without one). */
void rm_launcher_engine_facts(const rm_launcher *l, rm_context *ctx);
/* The members of ctx that some launcher claims contexts by (e.g. "slurm",
 * "distributed"), as a new object: the deployment a build manifest records. */
json_t *rm_launcher_deployment(const rm_context *ctx);

/*
 * `run_models build --registry HOST:PORT` (the Docker launcher only, else an error): the
 * image of req is named "<registry>/<req->image>:<first 16 hex digits of its fingerprint>"
 * (the fingerprint of the skip-build check: build context, Dockerfile, build args, base
 * image). When the registry already has that tag nothing is built or pushed (reused);
 * otherwise it is built as prepare builds it, tagged and pushed, with the credentials of
 * rm_engine_auth (rm/engine.h). Build output and push progress go to req->on_line.
 */
typedef struct rm_published {
	char *ref;	   /* "<registry>/<image>:<fingerprint16>" */
	char *digest;	   /* "sha256:..." of the manifest in the registry */
	char *fingerprint; /* 64 hex digits */
	char *image_id;	   /* the local image id; NULL when reused */
	int reused;	   /* the registry had it: nothing built or pushed */
	int cached;	   /* not reused, but the local image was up to date: only pushed */
	double build_s;	   /* seconds building (0 when reused) */
	double push_s;	   /* seconds tagging and pushing (0 when reused) */
} rm_published;
int rm_launcher_publish(rm_launcher *l, const rm_image_req *req, const char *registry,
			rm_published *out, rm_error *err);
void rm_published_release(rm_published *p);

/*
 * The per-node runner of a SLURM task (`run_models node-run`, src/launcher/slurm_node.c):
 * runs one workload of the job document on this node's engine through the Docker launcher,
 * rendered for this node's context (detected, then the user's context files and texts the
 * document carries), with the variables the batch script named in $RM_SLURM_ENV added to
 * its environment; output to stdout and stderr (srun writes them to the node's log files),
 * secrets masked; the exit status and, on rank 0, the multiple_results file are written
 * beside the logs for the submitter. No perf row. On SIGTERM (scancel, time limit) the
 * container is removed. With dry_run it prints the plan of the container (as `run
 * --dry-run` does) and contacts nothing. Returns the process exit code: the script's; 1
 * when the workload could not run (err says why; it is also in the node's result file);
 * 128 + N after signal N.
 */
typedef struct rm_slurm_node_opts {
	const char *job_file;	/* written by the SLURM launcher: "<log dir>/<run id>.job.json" */
	const char *workload;	/* its key in the job file */
	const char *sysfs_root; /* NULL: "/sys" */
	int dry_run;
} rm_slurm_node_opts;

#define RM_SLURM_NODE_OPTS_INIT                                                                    \
	{                                                                                          \
		.job_file = NULL, .workload = NULL, .sysfs_root = NULL, .dry_run = 0               \
	}
int rm_slurm_node_run(const rm_slurm_node_opts *o, rm_error *err);

/*
 * A workload's tools after its run (src/launcher/tools_collect.c), for the local runner and
 * SLURM's per-node runner alike: the tools' status file read back through the launcher's
 * fetch, and what their outputs globs matched extracted into dest (a folder beside the run's
 * log, created when there is something to put in it). A launcher whose fetch cannot reach
 * the workload's files (SLURM's, from the submit host) gives an empty verdict, quietly.
 */
typedef struct rm_tools_verdict {
	int ran;       /* the tools' wrapper wrote its status (it ran to its end) */
	long model_rc; /* the model's exit code; -1 when it did not run */
	char *failure; /* "tool 'x': pre script P exited with code N ...", or NULL */
	int post;      /* failure is a post script's (the model ran) */
	char *outputs; /* dest when outputs were copied there, else NULL */
	int gathered;  /* the wrapper finished gathering the outputs (not cut by a timeout) */
} rm_tools_verdict;
int rm_launcher_tools_collect(const rm_launcher *l, rm_job *job, const rm_workload *w,
			      const char *dest, rm_tools_verdict *v, rm_error *err);
void rm_tools_verdict_release(rm_tools_verdict *v);

/* The docker CLI command lines equivalent to what the Docker launcher sends to the Engine
 * API, for --dry-run: a user can read them, or paste them on a host with the docker CLI.
 * Every word is shell-quoted when it needs it (single quotes, ' as '\''). */
char *rm_shell_quote(const char *s);
/* "docker build --network=host [--no-cache] [--pull] -t TAG -f DOCKERFILE [--build-arg K=V
 * ...] [--label K=V ...] CONTEXT". buildargs and labels are objects of strings or NULL. */
char *rm_build_cmdline(const char *tag, const char *dockerfile, const char *context,
		       json_t *buildargs, json_t *labels, int nocache, int pull);
/* "docker run --rm --name NAME ..." from a POST /containers/create body; CDI devices (a
 * DeviceRequests entry of driver "cdi") as --device NAME. */
char *rm_run_cmdline(json_t *create_body, const char *name);
/* The same for the CLI cli ("docker" or "podman", whose options are the same). */
char *rm_build_cmdline_for(const char *cli, const char *tag, const char *dockerfile,
			   const char *context, json_t *buildargs, json_t *labels, int nocache,
			   int pull);
char *rm_run_cmdline_for(const char *cli, json_t *create_body, const char *name);

#endif
