/*
 * Shared by the runner's files, one concern each:
 *   run.c       the run: set-up, the loop over models, signals, the final sweep
 *   model.c     one model: its Dockerfiles, skips, the build, the repeats
 *   execute.c   one run of a workload through the launcher, its results read back
 *   results.c   multiple_results: the CSV read back, copied out, its rows
 *   data_run.c  the model's data: resolved before the build, its figures after the run
 *   tools_run.c the context's tools: resolved before any build, their verdict and outputs
 *   telemetry_run.c  GPU telemetry while a workload runs here: its figures and time series
 *   preflight_run.c  the pre-flight check of a workload's GPUs before it starts here
 *   provenance_run.c what made each run: the host's facts, each model's image, environment
 *               and arguments, into PERF.provenance.csv (rm/provenance.h)
 *   retry.c     --retries: whether a failed run is tried again, and the wait before it
 *   stream.c    the workload's output: masking, the log file, the terminal, the parser
 *   progress.c  the status line / progress lines
 *   record.c    an outcome and its perf rows
 *   dryrun.c    what --dry-run prints
 *   logs.c      log file names and their safe creation
 *   outputs.c   every file the run writes, resolved and checked before the first build
 *   watchdog.c  the process that removes the run's containers when the runner is killed
 *   prebuilt.c  the images of a build manifest (run --manifest): no build
 *   queue.c     batching: every workload prepared first, then the launcher's submit_all
 *   build.c     run_models build: build, push, write the manifest
 *   build_manifest.c  the build manifest file (rm/runner.h)
 */
#ifndef RM_RUNNER_INTERNAL_H
#define RM_RUNNER_INTERNAL_H

#include <stddef.h>
#include <stdio.h>

#include "rm/config.h"
#include "rm/context.h"
#include "rm/data.h"
#include "rm/launcher.h"
#include "rm/util.h"
#include "rm/parser.h"
#include "rm/registry.h"
#include "rm/runner.h"

typedef struct json_t json_t;

struct run {
	const rm_run_opts *o;
	rm_registry reg;
	rm_selection sel;
	rm_context ctx;
	rm_launcher launcher;
	/* A card whose own script runs on a batch host (MAD's slurm_multi) when the run's
	 * launcher runs none: the batch host's launcher (opened at the first; rm_runner__launcher)
	 * and the launcher of the workload being run (execute.c). */
	rm_launcher cards;
	rm_launcher *active;
	char run_id[64];
	char machine[256];
	char *git_commit;
	size_t n_failed;
	char **secrets; /* values of the host's MAD_SECRETS* variables */
	size_t n_secrets;
	rm_mask mask;	   /* for whole strings: reasons, messages, build lines, dry runs */
	int progress_mode; /* 0 none, 1 status line on a terminal, 2 plain periodic lines */
	int unremoved;	   /* workloads this run made and could not remove */
	int swept;	   /* nothing of the run is left (the final sweep succeeded or was moot) */
	int watchdog_fd;   /* write end of the watchdog's pipe, or <= 0 */
	int engine_lost;   /* a workload lost its engine mid-run */
	size_t jobs_started;  /* workloads the launcher was asked to start */
	rm_data_config data;  /* data.json (or --data-config) with the context's "data" */
	char **unserved_said; /* data no provider serves, warned about once a run */
	size_t n_unserved_said;
	int data_loaded;
	rm_tool_plan tools;    /* the context's tools and scripts (tools_run.c); empty without */
	rm_build_manifest man; /* run --manifest: its images (man.path NULL without) */
	rm_table summary;      /* a row per perf row of the run, printed at its end */
	char *last_log;	       /* the live log of the last run (the end names it) */
	/* provenance_run.c: the host's, collected from the start; the models' written */
	struct prov_host *prov;
	char **prov_done;
	size_t n_prov_done;
	/* Batching (the launcher has submit_all): workloads wait here, prepared, until every
	 * model has been through its build; then they are submitted at once and run. */
	int batching;
	struct queued *queue;
	size_t n_queue;
	/* A sweep's point (rm_run_opts.point): its label for file names, NULL without; a short
	 * tag of it for container names, "" without (logs.c). */
	char *point_file;
	char point_tag[9];
};

/* What one run of a workload produced. */
struct outcome {
	rm_status status; /* RM_STATUS_NONE while unknown */
	char *reason;
	double build_s;
	double test_s;
	long exit_code; /* -1 when none */
	long repeat;	/* 1-based */
	long attempt;	/* 1-based: --retries tries a run again when it failed for the machine */
	/* The run failed (or was skipped by the pre-flight check) for a reason of the
	 * machine, not the model's: the engine refused or lost it, an image could not be
	 * pulled, a SLURM node was lost, a GPU was not fit to measure on. --retries tries it
	 * again. */
	int machine;
	char *dockerfile;
	char *base_image;
	char *image;
	char *image_id;
	char *log_file; /* this run's own file */
	char *log_link; /* the stable name that points at the latest run's file */
	rm_parse_result pr;
	/* multiple_results rows: name, performance text, metric, and why the row is not a
	 * result ("" when it is one) */
	char **mr_names, **mr_perf, **mr_metric, **mr_reason;
	size_t mr_n;
	/* the rows' cells (MAD's narrow layout: inp, out, max_concurrency, ...; rm/config.h),
	 * one per row */
	rm_config *mr_cells;
	/* the rows' numbers for perf_<model>.csv, and the row model ("<model>_<row>") of each */
	rm_parse_result mr_extra;
	char **mr_extra_model;
	size_t mr_extra_n;
	/* data: data_size column ("" when unknown), seconds the custom scripts took */
	char data_size[32];
	double data_s;
	int data_ran; /* the run reached the data step: data_s holds */
};

/* run.c */
/* The launcher of w: the run's, or the batch host's for a card whose script runs there
 * (rm_launcher_open_batch_host) when the run's does not run cards; NULL with err when that
 * cannot be opened. */
rm_launcher *rm_runner__launcher(struct run *r, const rm_workload *w, rm_error *err);
int rm_runner__load_context(struct run *r, rm_error *err); /* detected, then files, then texts */
void rm_runner__warn_short_secrets(void);

/* record.c: reasons reach perf.csv and the terminal, so rm_runner__fail() masks secrets with the
 * mask given to rm_runner__outcome_set_mask. */
void rm_runner__outcome_set_mask(const rm_mask *m);
void rm_runner__fail(struct outcome *oc, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The same for a run that did not take place: SKIPPED with the reason. */
void rm_runner__skip(struct outcome *oc, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void rm_runner__outcome_release(struct outcome *oc);
/* Prints what became of the run and counts failures. */
void rm_runner__outcome_report(struct run *r, const rm_model *m, const struct outcome *oc);
/* Appends the perf rows of an outcome (one, or one per multiple_results row) and its
 * metrics to perf_<model>.csv, and their rows to the run's summary table. */
/* config_run.c: a row's configuration: what a run sets (the point's parameters, then the
 * tags' args, --tunableop, the context's docker_env_vars, docker_gpus and model_args, the
 * point's precision and GPU count) into params, and its identity (model, effective args,
 * precision, TunableOp, GPUs, environment) into id; then each row's `config` cell and key
 * with its own cell (MAD's) added. */
void rm_runner__config_base(const struct run *r, const rm_workload *w, const char *args,
			    rm_config *params, rm_config *id);
void rm_runner__config_row(const struct run *r, const rm_config *params, const rm_config *id,
			   const rm_config *cell, const char *metric, char **text,
			   char key[RM_CONFIG_KEY_LEN + 1]);

int rm_runner__record(struct run *r, const rm_selected *s, const rm_workload *w, struct outcome *oc,
		      rm_error *err);

/* model.c */
int rm_runner__run_model(struct run *r, const rm_selected *s, rm_error *err);
/* Whether the launcher runs w on this host (its describe says "local"), where this host's
 * GPUs count and are sampled. */
int rm_runner__runs_here(struct run *r, const rm_workload *w);
json_t *rm_runner__build_args(struct run *r, const rm_model *m);
/* A row for a model that cannot run here at all: SKIPPED (skip given) or FAILURE (why). */
int rm_runner__cannot_run(struct run *r, const rm_selected *s, const rm_workload *w,
			  const char *skip, const char *why, rm_error *err);
/* An image given as it is (MAD_CONTAINER_IMAGE, a build manifest's entry), with the row's
 * facts about it. */
struct image_src {
	const char *image;	/* the reference to run, "HOST:PORT/name@sha256:..." */
	const char *dockerfile; /* for the row, or NULL */
	const char *base_image; /* for the row, or NULL */
	const char *stem;	/* names the logs when a model has several images */
};
int rm_runner__run_given(struct run *r, const rm_selected *s, rm_workload *w,
			 const struct image_src *src, size_t n_images, size_t *k, rm_error *err);
/* The --repeat runs of one prepared image (runs numbered from *k on), each tried again up to
 * --retries times when it fails for the machine (oc.machine). */
int rm_runner__run_repeats(struct run *r, const rm_selected *s, rm_workload *w,
			   const char *log_base, const struct outcome *b, size_t *k, rm_error *err);
/* The live log of attempt `attempt` of repeat rep and its stable name. */
void rm_runner__repeat_logs(const struct run *r, const char *log_base, const struct outcome *b,
			    long rep, long attempt, char **file, char **link);
/* Whether the run of oc is tried again (its failure is the machine's and --retries leaves
 * room); then says so and waits --retry-wait seconds (doubling per attempt, at most 5
 * minutes, a signal ends the wait). */
int rm_runner__retry(struct run *r, const rm_model *m, const struct outcome *oc);

/* prebuilt.c: the images the manifest holds for s (a FAILURE row when none). */
int rm_runner__run_from_manifest(struct run *r, const rm_selected *s, rm_workload *w, size_t *k,
				 rm_error *err);
/* Without tags: every model the manifest names, in its order. */
int rm_runner__select_from_manifest(struct run *r, rm_error *err);

/* queue.c: batching. rm_runner__queue_workload takes b over (b is left empty) and numbers the
 * workload's runs from *k on; rm_runner__run_queue submits everything and runs each in turn. */
void rm_runner__queue_workload(struct run *r, const rm_selected *s, const rm_workload *w,
			       const char *log_base, struct outcome *b, size_t *k);
int rm_runner__run_queue(struct run *r, rm_error *err);

/* results.c: a file out of the workload (the launcher's fetch), as an unlinked temporary
 * file; a missing path fails with RM_ERR_INPUT. */
FILE *rm_runner__fetch_file(struct run *r, rm_job *job, const char *path, rm_error *err);
/* The model's multiple_results into oc->mr_*; card: the results a card's own script wrote
 * on shared storage (the launcher finds them), named "<model>.results.csv" beside perf.csv. */
int rm_runner__read_multiple_results(struct run *r, const rm_model *m, int card, rm_job *job,
				     struct outcome *oc, rm_error *err);

struct stream;
/* data_run.c: data.json loaded once per run (when a selected model has data). */
int rm_runner__data_load(struct run *r, rm_error *err);
/* The model's data plan (empty without data), its mirror folders created; an error is the
 * model's FAILURE before anything is built. */
int rm_runner__data_prepare(struct run *r, const rm_model *m, rm_data_plan *plan, rm_error *err);
/* What the run's data is, in its log. */
void rm_runner__data_log(struct stream *st, const rm_workload *w);
/* After a run: data_size, and the custom scripts' seconds and exit code (a failed script
 * fails the run). */
void rm_runner__data_after_run(struct run *r, const rm_workload *w, rm_job *job,
			       struct outcome *oc);

/* tools_run.c: the context's tools resolved into r->tools before anything is built (an
 * unknown tool is an error); what they are, in a run's log; after the run, a failed tool
 * script as the run's reason and the outputs in rm_runner__tools_dir(oc->log_file). */
int rm_runner__tools_load(struct run *r, rm_error *err);
void rm_runner__tools_log(struct stream *st, const rm_workload *w);
char *rm_runner__tools_dir(const char *live_log);
void rm_runner__tools_after_run(struct run *r, const rm_workload *w, rm_job *job, struct stream *st,
				struct outcome *oc);
/* telemetry_run.c: the GPU telemetry of one run (rm/telemetry.h). start after the stream's
 * clock starts (NULL: nothing sampled here; the log says why when it matters); finish after
 * rm_runner__stream_end: stops sampling (or, for a workload that ran elsewhere, asks the
 * launcher what its hosts sampled), adds the figures to oc->pr (perf_<model>.csv) and notes
 * them in the log. */
struct telem_run;
struct telem_run *rm_runner__telemetry_start(struct run *r, const rm_workload *w, struct stream *st,
					     const struct outcome *oc);
void rm_runner__telemetry_finish(struct run *r, struct telem_run *tr, const rm_workload *w,
				 rm_job *job, struct stream *st, struct outcome *oc);

/* preflight_run.c: with --preflight on, the GPUs a workload gets on this host checked before
 * it starts (rm/doctor.h): warnings go to its log and the terminal; -1 when a finding
 * spoils the number: oc is then SKIPPED with the findings as its reason, the machine's (a
 * retry may find the GPU fit). */
int rm_runner__preflight(struct run *r, const rm_workload *w, struct stream *st,
			 struct outcome *oc);

/* provenance_run.c: the host's provenance, collected in a thread from start (after the
 * launcher is open) and written by finish; a model's, once per Dockerfile in the run, when
 * its first container exists (job) or could not be made (job NULL). */
void rm_runner__provenance_start(struct run *r);
void rm_runner__provenance_finish(struct run *r);
void rm_runner__provenance_model(struct run *r, const rm_workload *w, rm_job *job,
				 struct stream *st, const struct outcome *oc);
/* A workload that ran elsewhere (SLURM): its hosts' provenance (the launcher's
 * host_provenance) under its model, "node<R> <name>.<value name>", once it has ended. */
void rm_runner__provenance_hosts(struct run *r, const rm_workload *w, rm_job *job,
				 const struct outcome *oc);

/* execute.c: runs a built image once; fills oc. Returns -1 only when interrupted. */
int rm_runner__execute(struct run *r, const rm_workload *w, size_t k, struct outcome *oc);
/* "run_models-<run id>-<model>-<k>", "-a<N>" after it for attempt N > 1. */
char *rm_runner__container_name(const struct run *r, const rm_model *m, size_t k, long attempt);

/* progress.c; progress_clear takes the status line off the terminal (before a message). */
void rm_runner__progress_clear(void);
/* The end of a run on stdout: the summary table (model, status, performance, metric,
 * duration) within 80 columns (or the terminal's), then where the results and logs are. */
void rm_runner__summary_init(struct run *r);
void rm_runner__summary_print(struct run *r);
void rm_runner__progress_line(struct run *r, const char *model, const char *what, double elapsed,
			      double timeout, const rm_parse_progress *pp, int final);

/* stream.c: the output of one workload run */
struct stream;
struct stream *rm_runner__stream_open(struct run *r, const rm_workload *w, double timeout,
				      struct outcome *oc);
void rm_runner__stream_begin(struct stream *st);		   /* the clock starts */
void rm_runner__stream_bind(struct stream *st, rm_job_spec *spec); /* on_output, poll, cancelled */
/* Flushes the masks and the line splitter, finishes the parser into oc->pr. */
void rm_runner__stream_end(struct stream *st, struct outcome *oc);
void rm_runner__stream_close(struct stream *st);
/* A line of the runner's own in the log (and on the terminal with --live-output). */
void rm_runner__stream_note(struct stream *st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int rm_runner__stream_timed_out(const struct stream *st);
/* When the model's part of the run ended: the tools' wrapper's gathering line, else now. */
double rm_runner__stream_model_end(const struct stream *st);
/* Whether the timeout that stopped the run was the tools' gathering budget's. */
int rm_runner__stream_gather_timed_out(const struct stream *st);
/* keep-alive: whether the script's exit marker came, and its code. */
int rm_runner__stream_script_done(const struct stream *st, long *rc);
double rm_runner__stream_started(const struct stream *st);
const char *rm_runner__stream_parser_name(const struct stream *st);

/* stream.c: the build log of one image */
struct build_log;
struct build_log *rm_runner__build_log_open(struct run *r, const rm_model *m, const char *path,
					    const char *link, rm_error *err);
void rm_runner__build_log_bind(struct build_log *b, rm_image_req *req);
/* Whether --build-timeout stopped the build. */
int rm_runner__build_log_timed_out(const struct build_log *b); /* on_line, poll */
/* Writes the (masked) reason of a failed build into the log. */
void rm_runner__build_log_failed(struct build_log *b, const char *masked_msg);
double rm_runner__build_log_elapsed(const struct build_log *b);
void rm_runner__build_log_close(struct build_log *b);

/* logs.c: a model's logs' base name (its name, made file-safe, and a sweep point's), the
 * point's names (run.c sets them up once), "<log dir>/<base>.<run id><suffix>" and
 * "<log dir>/<base><suffix>" */
char *rm_runner__log_name(const struct run *r, const rm_model *m);
void rm_runner__point_names(struct run *r);
char *rm_runner__log_path(const struct run *r, const char *base, const char *suffix);
char *rm_runner__log_link(const struct run *r, const char *base, const char *suffix);
/* Creates path (never through a symlink, never over a file) and points link at it. */
FILE *rm_runner__log_create(const struct run *r, const char *path, const char *link, rm_error *err);

/* watchdog.c: started once the launcher is open; done when the run has cleaned up. */
int rm_runner__watchdog_start(struct run *r);
void rm_runner__watchdog_done(struct run *r);

/* dryrun.c */
void rm_runner__dry_run_model(struct run *r, const rm_model *m, const rm_workload *w,
			      const rm_dockerfile *dfs, size_t n_dfs);
void rm_runner__dry_run_dockerfile(struct run *r, const rm_image_req *req, const rm_job_spec *spec,
				   const char *gpu_vendor_wanted);

#endif
