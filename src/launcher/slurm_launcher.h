/*
 * The SLURM launcher's state, shared by its files (internal to src/launcher):
 *   slurm.c         the ops table: claims, open, prepare, describe, plan, probe, sweep, reap
 *   slurm_submit.c  the job file, the batch scripts, submit_all, start, stop, cleanup
 *   slurm_follow.c  stream (rank 0's log followed while the job runs), wait, fetch
 *
 * What goes where (docs/scale-out.md): the submitter writes one job file per run,
 * "<log dir>/<run id>.job.json", naming for each workload its model, image and log base;
 * the batch script's tasks run `run_models node-run --job FILE --workload KEY` on every
 * node; srun writes each node's stdout and stderr to "<log base>.node<R>.log" / ".err",
 * and node-run writes "<log base>.node<R>.result.json" (exit code, an error, the node's GPU
 * telemetry, and on rank 0 the multiple_results tar) and "<log base>.node<R>.telemetry.csv". The
 * follower reads those files: the log folder must be shared by the submit host and the nodes.
 */
#ifndef RM_LAUNCHER_SLURM_LAUNCHER_H
#define RM_LAUNCHER_SLURM_LAUNCHER_H

#include <stdio.h>
#include <sys/types.h>

#include "rm/launcher.h"
#include "slurm.h"

/* One workload handed to SLURM: a job of its own, or one task of an array. */
struct slurm_sub {
	char *name;	 /* the spec's name (the runner's container name) */
	char *key;	 /* its entry in the job file, "<model>-<k>" */
	char *log_base;	 /* "<log dir>/<model>.<run id>[.r<N>]" */
	char *batch_log; /* the batch script's own output */
	char *script;	 /* the batch script, kept beside the logs */
	long job_id;	 /* 0 until submitted */
	long task;	 /* the array task, or -1 */
	long nodes;	 /* the job's nodes */
	int card;	 /* the card's own script on the batch host (slurm_card.c) */
	char *steps;	 /* then: its steps file */
	char *image_tar; /* and the image saved for its nodes (removed at cleanup), or NULL */
	char *image_id;	 /* and the id every node must hold, or NULL (the first node's) */
};

struct slurm_launcher {
	rm_launcher_config cfg;
	rm_slurm_conf sc;
	rm_dist_conf dc;
	long alloc;	  /* inside an allocation (SLURM_JOB_ID): its id; runs with srun there */
	int present;	  /* the context has a "slurm" key (else: opened for the cards' scripts) */
	char *self;	  /* this binary, absolute: what each task runs */
	char *root;	  /* the registry folder, absolute (--chdir) */
	char *submit_dir; /* where sbatch runs: $SLURM_SUBMIT_DIR of the jobs, absolute */
	char *log_dir;	  /* absolute */
	char *job_file;	  /* "<log dir>/<run id>.job.json" */
	rm_job_doc doc;	  /* what the job file holds (doc.run_id NULL until first used) */
	char *comment;	  /* sbatch --comment: run id, host, pid (sweep, reap) */
	char *where;
	rm_launcher docker;	     /* opened to build images on this host, when needed */
	char **img_names, **img_ids; /* images built here: name -> id */
	size_t n_imgs;
	struct slurm_sub *subs; /* submitted by submit_all, waiting for start */
	size_t n_subs;
	size_t n_arrays;
	/* The last final states read (sacct or scontrol) and of which job: one call serves
	 * every task of an array that had ended by then. */
	long final_job;
	rm_slurm_job_state *finals;
	size_t n_finals;
};

struct rm_job {
	struct slurm_launcher *sl;
	const rm_job_spec *spec;
	struct slurm_sub sub;
	pid_t pid;   /* inside an allocation: the shell running the script, else 0 */
	int wstatus; /* its status once reaped */
	int reaped;
	int fd[2];	      /* rank 0's .log and .err, once they exist; -1 before */
	int queued;	      /* still in the queue when last asked */
	int stopped;	      /* scancel (or SIGTERM) was sent */
	double queue_lost;    /* since when squeue has failed, or 0 */
	int no_controller;    /* it ended by its result files while squeue failed */
	int running;	      /* told spec->queued(0): it runs (or ran) */
	rm_slurm_state state; /* as squeue last said */
	char reason[64];
	double next_check;
	double started;
};

/* slurm.c */
long rm_launcher__slurm_gpus_per_node(const struct slurm_launcher *sl, const rm_workload *w);
/* w's settings: the card's "slurm" and "distributed" under the context's, w's launcher;
 * slurm.nodes and distributed.nnodes that disagree are refused naming where each came from. */
int rm_launcher__slurm_conf_for(const struct slurm_launcher *sl, const rm_workload *w,
				rm_slurm_conf *sc, rm_dist_conf *dc, rm_error *err);

/* slurm_card.c: a card whose own script runs on the batch host (slurm_multi) */
int rm_launcher__slurm_runs_card(const struct slurm_launcher *sl, const rm_workload *w);
/* The batch script of spec (s: its names, steps file; s->nodes set); in a run the image
 * is saved beside the logs when no registry has it. */
int rm_launcher__slurm_card_script(struct slurm_launcher *sl, const rm_job_spec *spec,
				   struct slurm_sub *s, char **text, rm_error *err);
long rm_launcher__slurm_card_status(const rm_job *job);
void rm_launcher__slurm_card_reason(const rm_job *job, const char *why, rm_error *err);
int rm_launcher__slurm_card_fetch(struct slurm_launcher *sl, rm_job *job, int fd, size_t max,
				  rm_error *err);

/* slurm_submit.c */
void rm_launcher__slurm_sub_release(struct slurm_sub *s);
/* The workload's key and log base from its spec (names as the runner's logs). */
void rm_launcher__slurm_names(const struct slurm_launcher *sl, const rm_job_spec *spec, char **key,
			      char **log_base);
/* The batch script of subs[0..n) (an array when n > 1); caller frees. */
int rm_launcher__slurm_script_for(struct slurm_launcher *sl, const rm_job_spec *const *specs,
				  const struct slurm_sub *subs, size_t n, const char *batch_log,
				  char **text, rm_error *err);
int rm_launcher__slurm_submit_all(void *state, const rm_job_spec *const *specs, size_t n,
				  rm_error *err);
int rm_launcher__slurm_start(void *state, const rm_job_spec *spec, rm_job **job, rm_error *err);
int rm_launcher__slurm_stop(void *state, rm_job *job, rm_error *err);
int rm_launcher__slurm_cleanup(void *state, rm_job *job, int keep, rm_error *err);

/* slurm_follow.c */
int rm_launcher__slurm_stream(void *state, rm_job *job, rm_error *err);
int rm_launcher__slurm_wait(void *state, rm_job *job, double timeout, long *status, rm_error *err);
/* Every rank's telemetry (its result file's "telemetry"), merged. */
int rm_launcher__slurm_telemetry(void *state, rm_job *job, rm_telem_summary *out);
/* Each rank's provenance from its result file (rm_launcher_ops.host_provenance). */
int rm_launcher__slurm_provenance(void *state, rm_job *job, json_t **out);
int rm_launcher__slurm_fetch(void *state, rm_job *job, const char *path, int fd, size_t max,
			     rm_error *err);
/* Asks the queue (or the shell, inside an allocation) whether the job still runs: 0, or -1
 * when it cannot be known or the job can never start (err). */
int rm_launcher__slurm_check(rm_job *job, rm_error *err);
/* Sleeps s seconds (less when a signal comes). */
void rm_launcher__slurm_nap(double s);

#endif
