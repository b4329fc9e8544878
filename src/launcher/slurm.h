/*
 * The SLURM launcher's pure pieces (internal to src/launcher): the `slurm` and `distributed`
 * keys of the additional context as madengine names them, the sbatch batch script, and the
 * parsers of what sbatch, squeue, sacct and scontrol print. Nothing here runs a program or
 * touches a file, so all of it is unit-tested on literal text (tests/unit/test_slurm.c).
 *
 * What runs where (docs/scale-out.md): the submitting run_models writes the batch script
 * beside the logs and submits it; the script (on the allocation's first node) works out
 * MASTER_ADDR and exports the job-wide variables, then `srun` starts one task per node; each
 * task sets NODE_RANK and MAD_MULTI_NODE_RUNNER from SLURM_NODEID and execs the task command
 * (run_models' per-node mode), whose stdout and stderr srun writes to
 * <log_dir>/<log_base>.node<R>.log and .err. A job array runs several one-node models, one
 * array task each, the model picked by SLURM_ARRAY_TASK_ID.
 *
 * Errors follow rm/util.h; messages name the context key or the command whose output did
 * not parse. Ownership: *_release frees what a struct owns; returned strings are the
 * caller's.
 */
#ifndef RM_LAUNCHER_SLURM_H
#define RM_LAUNCHER_SLURM_H

#include <stddef.h>

#include "rm/context.h"
#include "rm/util.h"

typedef struct json_t json_t;

/* ---- the context keys ---- */

/* madengine's defaults where it has one (deployment/slurm.py, presets/slurm/defaults.json). */
#define RM_SLURM_DEFAULT_TIME	   "24:00:00"
#define RM_SLURM_DEFAULT_PORT	   29500
#define RM_SLURM_DEFAULT_LAUNCHER  "torchrun"
#define RM_SLURM_DEFAULT_EXCLUSIVE 1

/* "slurm": {...} */
typedef struct rm_slurm_conf {
	char *partition;    /* NULL: the cluster's default partition (madengine: "gpu") */
	long nodes;	    /* >= 1; default 1, or distributed.nnodes when only that is set */
	long gpus_per_node; /* >= 0, or -1 when not given (see rm_slurm_gpus_per_node) */
	char *time;	    /* sbatch --time; default RM_SLURM_DEFAULT_TIME */
	long time_seconds;  /* the same in seconds; 0 = no limit ("UNLIMITED", "infinite") */
	int exclusive;	    /* --exclusive; default RM_SLURM_DEFAULT_EXCLUSIVE */
	char *account, *qos, *constraint, *nodelist, *exclude, *reservation; /* or NULL */
	char **modules;		 /* "module load" lines; NULL-terminated, may be NULL */
	char *network_interface; /* NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME, or NULL */
	/* Keys given that run_models does not use (madengine's shared_workspace, ...) and
	 * unknown keys: one line each, for the caller to warn about. NULL-terminated or NULL. */
	char **notes;
} rm_slurm_conf;

/* "distributed": {...} */
typedef struct rm_dist_conf {
	char *launcher; /* torchrun (default), torchtitan, megatron-lm, deepspeed, vllm, sglang */
	long nnodes;	/* slurm.nodes */
	long nnodes_given;   /* distributed.nnodes as given, or -1 */
	long nproc_per_node; /* -1: not given (then the resolved GPUs per node) */
	long port;	     /* MASTER_PORT; default RM_SLURM_DEFAULT_PORT */
	char *backend;	     /* DISTRIBUTED_BACKEND when given, or NULL */
} rm_dist_conf;

/*
 * Reads ctx_obj's "slurm" and "distributed" objects (numbers may be JSON numbers or numeric
 * strings, as madengine's int() takes them). *present is 1 when "slurm" is there: the run is
 * then submitted instead of run locally. slurm.nodes sizes the job (else distributed.nnodes,
 * else 1); rm_slurm_nodes_check refuses the two when they differ. Values that would
 * break a #SBATCH line (blanks, quotes, control characters) are refused, naming the key.
 */
int rm_slurm_conf_parse(json_t *ctx_obj, rm_slurm_conf *sc, rm_dist_conf *dc, int *present,
			rm_error *err);
void rm_slurm_conf_release(rm_slurm_conf *sc);
/* slurm.nodes and distributed.nnodes, when both are given, must agree: -1 naming both and
 * where each came from (nodes_from, nnodes_from: "the context", "card 'x'"). */
int rm_slurm_nodes_check(const rm_slurm_conf *sc, const rm_dist_conf *dc, const char *nodes_from,
			 const char *nnodes_from, rm_error *err);
void rm_dist_conf_release(rm_dist_conf *dc);

/* GPUs per node, as madengine resolves it: slurm.gpus_per_node, else the model's n_gpus when
 * it is a count (>= 0), else the GPUs of the submitting host's context. */
long rm_slurm_gpus_per_node(const rm_slurm_conf *sc, long model_n_gpus, long context_n_gpus);

/* An sbatch --time value in seconds: "M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S";
 * "UNLIMITED" / "infinite" are 0. -1 when it is none of those. */
long rm_slurm_time_seconds(const char *s);

/* ---- the batch script ---- */

/* Whether s can stand as a #SBATCH value: not empty, no blanks, quotes, backslashes or
 * control characters (sbatch splits those lines into words). */
int rm_slurm_word_ok(const char *s);

/* The word of a task command replaced by the model's name (in an array, the array task's). */
#define RM_SLURM_MODEL_WORD "{model}"

typedef struct rm_slurm_task {
	const char *model;    /* the model's name, for RM_SLURM_MODEL_WORD */
	const char *log_base; /* file-safe: [A-Za-z0-9._-]+; logs <log_base>.node<R>.log/.err */
} rm_slurm_task;

typedef struct rm_slurm_job {
	const char *job_name;  /* --job-name */
	const char *log_dir;   /* absolute; the per-node logs and the batch log go there */
	const char *workdir;   /* absolute; --chdir (the MAD folder) */
	const char *batch_log; /* --output of the batch script itself (may hold %j, %A, %a) */
	const rm_slurm_conf *sc;
	const rm_dist_conf *dc;
	long gpus_per_node; /* resolved (rm_slurm_gpus_per_node); 0 sends no GPU option */
	/* One task: one job over sc->nodes nodes. Several: a job array, one node each (then
	 * sc->nodes must be 1), at most max_parallel running at once (0: no limit). */
	const rm_slurm_task *tasks;
	size_t n_tasks;
	long max_parallel;
	char *const *task_argv; /* NULL-terminated: what each node runs */
	/* --comment, or NULL: the submitter's marks ("run_models.run=ID,host=H,pid=P,..."),
	 * by which squeue finds the jobs of a run (sweep) or of a runner that is gone (reap). */
	const char *comment;
	/* The header comment's subject, e.g. "model 'x'"; NULL: the one task's model name, or
	 * the number of tasks. */
	const char *what;
} rm_slurm_job;

/* The batch script exports the job-wide variables (MASTER_ADDR, MASTER_PORT, NNODES,
 * WORLD_SIZE, GPUS_PER_NODE, NPROC_PER_NODE, and NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME,
 * DISTRIBUTED_BACKEND when configured); each task sets NODE_RANK and MAD_MULTI_NODE_RUNNER.
 * RM_SLURM_ENV lists all their names, separated by blanks, so the per-node runner knows which
 * of its variables to hand to the container. */
/* The batch script (caller frees). Inside an existing allocation (salloc, or an sbatch of
 * the user's own) the same text runs as it is with bash: its #SBATCH lines are comments
 * there, and its srun uses the allocation. */
int rm_slurm_script(const rm_slurm_job *job, char **script, rm_error *err);

/*
 * A card whose script runs on the batch host (MAD's slurm_multi cards, and primus or
 * sglang-disagg on SLURM): the batch script exports the card's env_vars (the context's over
 * them, shell-quoted) and DOCKER_IMAGE_NAME, puts the image on every node (one task a node:
 * `docker pull`, or `docker load` of the copy saved beside the logs when no registry has
 * it) and checks every node's image id against image_id, then runs the card's script with
 * bash in its folder (job->workdir) with the card's args. The steps file gets a line per node
 * ("image <node> <id>" or "image-failed <node>"), "image-check failed" (exit 97) when a node
 * lacks the image, and "script <exit code>".
 */
typedef struct rm_slurm_card_job {
	const rm_slurm_job *job; /* name, sc, dc, batch_log, workdir (the script's folder), ... */
	const char *model;
	const char *launcher; /* as the card names it */
	const char *script;   /* the script's file name, in job->workdir */
	const char *args;     /* the card's args (split into words, each quoted) */
	const rm_kv *env;     /* the exports */
	size_t n_env;
	const char *image;     /* DOCKER_IMAGE_NAME */
	const char *image_id;  /* what every node must hold, or NULL (not checked) */
	const char *image_tar; /* a `docker save` file every node loads, or NULL: pull */
	const char *steps;     /* the steps file */
} rm_slurm_card_job;
/* the batch script's exit when a node lacks the image */
#define RM_SLURM_IMAGE_MISSING	    97
#define RM_SLURM_IMAGE_MISSING_TEXT "97"
int rm_slurm_card_script(const rm_slurm_card_job *c, char **script, rm_error *err);

/* The MAD_MULTI_NODE_RUNNER value for a launcher, as madengine builds it, with the literal
 * texts $NODE_RANK and $MASTER_ADDR left for the task's shell to expand; NULL when the
 * launcher sets none (vllm, sglang). -1 for a launcher run_models does not support. */
int rm_slurm_runner(const rm_dist_conf *dc, long nproc_per_node, char **runner, rm_error *err);

/* ---- what the SLURM commands print ---- */

typedef enum rm_slurm_state {
	RM_SLURM_UNKNOWN = 0,
	RM_SLURM_PENDING,
	RM_SLURM_CONFIGURING,
	RM_SLURM_RUNNING,
	RM_SLURM_COMPLETING,
	RM_SLURM_SUSPENDED,
	RM_SLURM_REQUEUED,
	RM_SLURM_COMPLETED, /* the final states from here on */
	RM_SLURM_FAILED,
	RM_SLURM_TIMEOUT,
	RM_SLURM_CANCELLED,
	RM_SLURM_NODE_FAIL,
	RM_SLURM_OUT_OF_MEMORY,
	RM_SLURM_PREEMPTED,
	RM_SLURM_BOOT_FAIL,
	RM_SLURM_DEADLINE,
} rm_slurm_state;

/* "RUNNING", "CANCELLED by 0", "CANCELLED+", "R", "CA", ... -> the state (long and squeue's
 * short names). */
rm_slurm_state rm_slurm_state_parse(const char *s);
const char *rm_slurm_state_name(rm_slurm_state st);
int rm_slurm_state_final(rm_slurm_state st);

/* One job, or one task of an array, as a SLURM command reported it. */
typedef struct rm_slurm_job_state {
	long job_id;	 /* the job's id; for an array task the array's (ArrayJobId) */
	long array_task; /* -1 when not an array task */
	rm_slurm_state state;
	char reason[64];    /* squeue %r / scontrol Reason ("None" when none), or "" */
	int exit_code;	    /* ExitCode "3:0" -> 3 */
	int exit_signal;    /* ExitCode "0:15" -> 15 */
	char nodelist[256]; /* scontrol NodeList, or "" */
} rm_slurm_job_state;

/* `sbatch --parsable`: "123" or "123;cluster". */
int rm_slurm_parse_sbatch(const char *out, long *job_id, rm_error *err);
/* `squeue -h -j ID --states=all -o '%i|%T|%r'`: pending array ranges ("123_[2-5,7%2]")
 * expand to one entry per task (at most 100000 in all, else refused). *v (caller frees) may
 * be empty. */
int rm_slurm_parse_squeue(const char *out, rm_slurm_job_state **v, size_t *n, rm_error *err);
/* `sacct -j ID -X -n -P -o JobID,State,ExitCode`. */
int rm_slurm_parse_sacct(const char *out, rm_slurm_job_state **v, size_t *n, rm_error *err);
/* `scontrol -o show job ID`: one line per job or array task. */
int rm_slurm_parse_scontrol(const char *out, rm_slurm_job_state **v, size_t *n, rm_error *err);

/* The FAILURE row's reason for a job that ended in a final state other than COMPLETED, e.g.
 * "slurm job 123_4: TIMEOUT (it reached its time limit)". */
void rm_slurm_reason(const rm_slurm_job_state *js, char *buf, size_t size);
/*
 * The first task that failed, from the batch script's own log: srun prints "srun: error: n2:
 * task 1: Exited with exit code 3" as each task fails. Needed because sacct's ExitCode is the
 * highest of all tasks: once --kill-on-bad-exit has stopped the other ranks, their 143
 * (SIGTERM) shows as 15 and hides the rank that failed. Returns 0 and fills *task, *code
 * and node; 1 when the log has no such line.
 */
int rm_slurm_first_failed_task(const char *batch_log, long *task, int *code, char *node,
			       size_t node_size);

/* Whether a pending reason can never clear by itself (PartitionNodeLimit, BadConstraints,
 * ...): the follower gives up instead of waiting forever. */
int rm_slurm_pending_hopeless(const char *reason);

/* ---- running the SLURM commands (slurm_cmd.c) ----
 *
 * Each runs the command with rm_proc_run (no shell, a deadline of RM_SLURM_CMD_TIMEOUT s, or
 * RM_SLURM_CMD_SHORT once the process-wide interrupt is pending: the clean-up after Ctrl-C)
 * on the cluster of $SLURM_CONF (or the system's), and turns its failure into a message that
 * quotes the command's own words. */

#define RM_SLURM_CMD_TIMEOUT 60.0
#define RM_SLURM_CMD_SHORT   5.0

/* sbatch --parsable SCRIPT: *job_id. */
int rm_slurm_submit(const char *script_path, long *job_id, rm_error *err);
/* squeue: the job's (or every array task's) queue state; *n = 0 once it has left the queue
 * (including when slurmctld no longer knows the id). */
int rm_slurm_queue(long job_id, rm_slurm_job_state **v, size_t *n, rm_error *err);
/* The final states: sacct -X when accounting answers (*source "sacct"), else scontrol
 * (*source "scontrol"; it forgets a job MinJobAge seconds after its end). Entries come in
 * the command's order (scontrol's is not by task id) and may still be non-final right after
 * the job left the queue (sacct lags for arrays): poll. */
int rm_slurm_final(long job_id, rm_slurm_job_state **v, size_t *n, const char **source,
		   rm_error *err);
/* scancel JOB (every array task), or JOB_TASK when task >= 0; a job already gone is not an
 * error. */
int rm_slurm_cancel(long job_id, long task, rm_error *err);
/* Inside allocation job_id: sends signal (e.g. "TERM") to the tasks of its step called
 * step_name (scancel -s SIG JOB.STEP, which lets the tasks clean up: signalling srun itself
 * makes it kill them at once). 1 when no such step runs (yet, or any more). */
int rm_slurm_signal_step(long job_id, const char *step_name, const char *signal, rm_error *err);
/* The unfinished jobs of this user whose comment starts with prefix: array job ids (one
 * per array), with their comments; *n = 0 when none. */
int rm_slurm_mine(const char *prefix, long **ids, char ***comments, size_t *n, rm_error *err);

/* The first host of a hostlist expression ("n[1-2]" -> "n1", "gpu[007-010],x" -> "gpu007");
 * caller frees; NULL when it does not parse. */
char *rm_slurm_hostlist_first(const char *list);
/* NodeAddr from `scontrol -o show node NAME`; caller frees; NULL when absent. */
char *rm_slurm_node_addr(const char *scontrol_out);

/* The launcher (slurm.c). */
struct rm_launcher_ops;
extern const struct rm_launcher_ops rm_launcher_slurm;

#endif
