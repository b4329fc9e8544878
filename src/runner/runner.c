/*
 * The run loop. For each selected model and each of its kept Dockerfiles:
 *   build (POST /build) -> create -> copy scripts in (PUT /archive) -> start ->
 *   stream logs?follow through the frame decoder to the log file, the terminal and the
 *   parser -> wait -> read multiple_results (GET /archive) -> remove -> append rows.
 * Every failure along the way becomes a FAILURE row with its reason; only a failure to start
 * at all (no registry, no selection, unwritable perf.csv) ends the run early.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rm/csv.h"
#include "rm/docker.h"
#include "rm/frame.h"
#include "rm/hash.h"
#include "rm/doctor.h"
#include "rm/log.h"
#include "rm/mask.h"
#include "rm/parser.h"
#include "rm/cmdline.h"
#include "rm/runner.h"
#include "rm/stats.h"
#include "rm/yaml.h"
#include "rm/tar.h"
#include "rm/util.h"

extern char **environ;

/* madengine's 29 columns in their order, then ours (always at the end, so that tools that
 * read madengine's columns by position keep working). */
static const char *const perf_header[] = {
    "model", "n_gpus", "nnodes", "gpus_per_node", "training_precision", "pipeline", "args", "tags",
    "docker_file", "base_docker", "docker_sha", "docker_image", "git_commit", "machine_name",
    "deployment_type", "launcher", "gpu_architecture", "performance", "metric", "relative_change",
    "status", "build_duration", "test_duration", "dataname", "data_provider_type", "data_size",
    "data_download_duration", "build_number", "additional_docker_run_options",
    /* ours */
    "timestamp", "run_id", "repeat", "reason", "tunableop", "exit_code", "log_file"};
enum { PERF_COLS = sizeof(perf_header) / sizeof(perf_header[0]) };
enum {
	C_MODEL,
	C_NGPUS,
	C_NNODES,
	C_GPN,
	C_PREC,
	C_PIPELINE,
	C_ARGS,
	C_TAGS,
	C_DOCKERFILE,
	C_BASE,
	C_SHA,
	C_IMAGE,
	C_GIT,
	C_MACHINE,
	C_DEPLOY,
	C_LAUNCHER,
	C_ARCH,
	C_PERF,
	C_METRIC,
	C_REL,
	C_STATUS,
	C_BUILD_S,
	C_TEST_S,
	C_DATANAME,
	C_DATAPROV,
	C_DATASIZE,
	C_DATADL,
	C_BUILDNO,
	C_RUNOPTS,
	C_TIMESTAMP,
	C_RUNID,
	C_REPEAT,
	C_REASON,
	C_TUNABLEOP,
	C_EXIT,
	C_LOG,
};

static const char *const summary_header[] = {"timestamp", "run_id", "model", "metric",	  "unit",
					     "aggregate", "n",	    "mean",  "median",	  "stddev",
					     "min",	  "max",    "score", "score_rule"};

static const char *const metric_header[] = {"timestamp", "run_id", "model", "metric",
					    "value",	 "unit",   "step",  "aggregate"};

#define LINE_MAX_BYTES	  ((size_t)64 << 10)
#define RESULTS_MAX_BYTES ((size_t)16 << 20)

/* Signals */

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	if (got_signal)
		_exit(128 + sig); /* the second Ctrl-C: leave at once */
	got_signal = sig;
}

void rm_runner_install_signal_handlers(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int rm_runner_signal(void)
{
	return got_signal;
}

/* One run */

struct run {
	const rm_run_opts *o;
	rm_registry reg;
	rm_selection sel;
	rm_context ctx;
	rm_docker *d;
	char run_id[64];
	char machine[256];
	char *git_commit;
	size_t n_failed;
	char **secrets; /* values of the host's MAD_SECRETS* variables */
	size_t n_secrets;
	rm_mask mask;	   /* for whole strings: reasons, messages, build lines, dry runs */
	int progress_mode; /* 0 none, 1 status line on a terminal, 2 plain periodic lines */
	int unremoved;	   /* containers this run made and did not remove */
};

/* What one container run produced. */
struct outcome {
	const char *status; /* SUCCESS FAILURE SKIPPED */
	char *reason;
	double build_s;
	double test_s;
	long exit_code; /* -1 when none */
	long repeat;	/* 1-based */
	const char *tunableop;
	char *dockerfile;
	char *base_image;
	char *image;
	char *image_id;
	char *log_file;
	rm_parse_result pr;
	/* multiple_results rows: name, performance text, metric */
	char **mr_names, **mr_perf, **mr_metric;
	size_t mr_n;
};

/* The reasons end up in perf.csv and on the terminal: secrets are masked on the way in. */
static const rm_mask *reason_mask;

static void outcome_release(struct outcome *oc)
{
	free(oc->reason);
	free(oc->dockerfile);
	free(oc->base_image);
	free(oc->image);
	free(oc->image_id);
	free(oc->log_file);
	rm_parse_result_release(&oc->pr);
	rm_strv_free(oc->mr_names);
	rm_strv_free(oc->mr_perf);
	rm_strv_free(oc->mr_metric);
	memset(oc, 0, sizeof(*oc));
}

static void fail(struct outcome *oc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct outcome *oc, const char *fmt, ...)
{
	va_list ap;
	char *raw;
	oc->status = "FAILURE";
	free(oc->reason);
	va_start(ap, fmt);
	raw = rm_xvasprintf(fmt, ap);
	va_end(ap);
	oc->reason = reason_mask ? rm_mask_string(reason_mask, raw) : rm_xstrdup(raw);
	free(raw);
}

static const char *signal_name(void)
{
	return got_signal == SIGTERM ? "SIGTERM" : "SIGINT";
}

static char *file_safe(const char *name)
{
	char *s = rm_xstrdup(name);
	for (char *p = s; *p; p++)
		if (*p == '/' || *p == ' ')
			*p = '_';
	return s;
}

/*
 * The commit of the registry folder for the git_commit column, read from .git directly
 * (HEAD, then the loose ref or packed-refs; a worktree's ".git" file is followed). Spawning
 * git would cost a shell and a process per run; libgit2 would be a large dependency for
 * three file reads. Anything unexpected gives "".
 */
static char *read_line_of(const char *path)
{
	char *text = NULL;
	if (rm_read_file(path, 1 << 16, &text, NULL, NULL) != 0)
		return NULL;
	text[strcspn(text, "\r\n")] = '\0';
	return text;
}

static char *git_commit_of(const char *root)
{
	char *gitdir = rm_xasprintf("%s/.git", root), *head = NULL, *path = NULL, *out = NULL;
	struct stat st;

	if (stat(gitdir, &st) == 0 && S_ISREG(st.st_mode)) {
		char *line = read_line_of(gitdir); /* "gitdir: <path>" */
		free(gitdir);
		gitdir = line && rm_starts_with(line, "gitdir: ") ? rm_xstrdup(line + 8) : NULL;
		free(line);
	}
	if (!gitdir)
		return rm_xstrdup("");
	path = rm_xasprintf("%s/HEAD", gitdir);
	head = read_line_of(path);
	free(path);
	if (head && rm_starts_with(head, "ref: ")) {
		path = rm_xasprintf("%s/%s", gitdir, head + 5);
		out = read_line_of(path);
		free(path);
		if (!out) {
			char *packed = rm_xasprintf("%s/packed-refs", gitdir), *text = NULL;
			if (rm_read_file(packed, (size_t)64 << 20, &text, NULL, NULL) == 0) {
				size_t rl = strlen(head + 5);
				for (char *l = text; l && *l;) {
					char *nl = strchr(l, '\n');
					if (nl)
						*nl = '\0';
					if (strlen(l) == 41 + rl && l[40] == ' ' &&
					    !strcmp(l + 41, head + 5))
						out = rm_xstrndup(l, 40);
					l = nl ? nl + 1 : NULL;
				}
			}
			free(text);
			free(packed);
		}
	} else if (head) {
		out = rm_xstrdup(head); /* detached */
	}
	free(head);
	free(gitdir);
	if (out && strlen(out) < 40) {
		free(out);
		out = NULL;
	}
	return out ? out : rm_xstrdup("");
}

static char *fmt_num(double v)
{
	return rm_xasprintf("%.10g", v);
}

static char *join_tags(const rm_model *m)
{
	rm_buf b = RM_BUF_INIT((size_t)1 << 20);
	for (size_t i = 0; i < m->n_tags; i++) {
		if (i)
			rm_buf_addch(&b, ',');
		rm_buf_addstr(&b, m->tags[i]);
	}
	return rm_buf_detach(&b);
}

/*
 * relative_change: percent change of performance against the last SUCCESS row of perf.csv
 * with the same model, metric, Dockerfile, machine and GPU architecture (madengine leaves
 * the column empty). Reads the file as a stream; no earlier row, an unreadable file or a
 * zero baseline leaves it empty.
 */
static void relative_changes(const char *path, const char **rows, size_t n_rows,
			     const char *dockerfile, const char *machine, const char *arch,
			     char **rel)
{
	FILE *f = fopen(path, "r");
	char **rec = NULL;
	size_t n;
	rm_error err = RM_ERROR_INIT;
	double *last = rm_xcalloc(n_rows, sizeof(*last));
	int *found = rm_xcalloc(n_rows, sizeof(*found));

	/* One pass over the file for every row of this outcome: perf.csv grows night after
	 * night, and a multiple_results model can have many rows. */
	while (f && rm_csv_read_record(f, &rec, &n, &err) == 1) {
		double v;
		if (n >= PERF_COLS && !strcmp(rec[C_STATUS], "SUCCESS") &&
		    !strcmp(rec[C_DOCKERFILE], dockerfile ? dockerfile : "") &&
		    !strcmp(rec[C_MACHINE], machine) && !strcmp(rec[C_ARCH], arch ? arch : "") &&
		    rm_parse_double(rec[C_PERF], &v) == 0) {
			for (size_t i = 0; i < n_rows; i++) {
				const char **row = rows + i * PERF_COLS;
				if (row[C_METRIC] && !strcmp(rec[C_MODEL], row[C_MODEL]) &&
				    !strcmp(rec[C_METRIC], row[C_METRIC])) {
					last[i] = v;
					found[i] = 1;
				}
			}
		}
		rm_strv_free(rec);
		rec = NULL;
	}
	if (f)
		fclose(f);
	for (size_t i = 0; i < n_rows; i++) {
		double now;
		const char **row = rows + i * PERF_COLS;
		if (found[i] && last[i] != 0 && !strcmp(row[C_STATUS], "SUCCESS") && row[C_PERF] &&
		    rm_parse_double(row[C_PERF], &now) == 0)
			rel[i] = rm_xasprintf("%+.2f", (now - last[i]) / fabs(last[i]) * 100.0);
	}
	free(last);
	free(found);
}

/* Appends the perf.csv rows of one outcome (one row, or one per multiple_results row), and
 * its metrics to perf_<model>.csv. */
/* Appends the perf.csv rows of one outcome (one row, or one per multiple_results row), and
 * its metrics to perf_<model>.csv. */
static int record(struct run *r, const rm_selected *s, long runtime_ngpus, const char *args,
		  struct outcome *oc, rm_error *err)
{
	const rm_model *m = s->model;
	char ts[32], ngpus[32], build_s[32], test_s[32], exit_code[32], repeat[32];
	char *tags = join_tags(m), *perf = NULL, *margs = rm_mask_string(&r->mask, args);
	const char *base[PERF_COLS] = {0};
	const char **rows = NULL;
	size_t n_rows = oc->mr_n ? oc->mr_n : 1;
	int ret = -1;

	rm_utc_timestamp(ts, sizeof(ts));
	snprintf(ngpus, sizeof(ngpus), "%ld", runtime_ngpus);
	snprintf(build_s, sizeof(build_s), "%.3f", oc->build_s);
	snprintf(test_s, sizeof(test_s), "%.3f", oc->test_s);
	snprintf(repeat, sizeof(repeat), "%ld", oc->repeat > 0 ? oc->repeat : 1);
	if (oc->exit_code >= 0)
		snprintf(exit_code, sizeof(exit_code), "%ld", oc->exit_code);
	else
		exit_code[0] = '\0';
	base[C_MODEL] = m->name;
	base[C_NGPUS] = ngpus;
	base[C_NNODES] = "1";
	base[C_GPN] = ngpus;
	base[C_PREC] = m->training_precision;
	base[C_ARGS] = margs;
	base[C_TAGS] = tags;
	base[C_DOCKERFILE] = oc->dockerfile;
	base[C_BASE] = oc->base_image;
	base[C_SHA] = oc->image_id;
	base[C_IMAGE] = oc->image;
	base[C_GIT] = r->git_commit;
	base[C_MACHINE] = r->machine;
	base[C_DEPLOY] = "local";
	base[C_LAUNCHER] = "docker";
	base[C_ARCH] = r->ctx.gpu_arch;
	base[C_STATUS] = oc->status;
	base[C_BUILD_S] = build_s;
	base[C_TEST_S] = test_s;
	base[C_DATANAME] = m->data;
	base[C_BUILDNO] = getenv("BUILD_NUMBER");
	base[C_RUNOPTS] = m->additional_docker_run_options;
	base[C_TIMESTAMP] = ts;
	base[C_RUNID] = r->run_id;
	base[C_REPEAT] = repeat;
	base[C_REASON] = oc->reason;
	base[C_TUNABLEOP] = oc->tunableop;
	base[C_EXIT] = exit_code;
	base[C_LOG] = oc->log_file;

	rows = rm_xcalloc(n_rows * PERF_COLS, sizeof(*rows));
	char **names = rm_xcalloc(n_rows, sizeof(*names));
	char **rel = rm_xcalloc(n_rows, sizeof(*rel));
	for (size_t i = 0; i < n_rows; i++) {
		memcpy(rows + i * PERF_COLS, base, sizeof(base));
		if (oc->mr_n) {
			names[i] = rm_xasprintf("%s_%s", m->name, oc->mr_names[i]);
			rows[i * PERF_COLS + C_MODEL] = names[i];
			rows[i * PERF_COLS + C_PERF] = oc->mr_perf[i];
			rows[i * PERF_COLS + C_METRIC] = oc->mr_metric[i];
		} else if (oc->pr.has_performance) {
			perf = fmt_num(oc->pr.performance);
			rows[i * PERF_COLS + C_PERF] = perf;
			rows[i * PERF_COLS + C_METRIC] = oc->pr.performance_metric;
		}
	}
	if (!strcmp(oc->status, "SUCCESS")) {
		relative_changes(r->o->output, rows, n_rows, oc->dockerfile, r->machine,
				 r->ctx.gpu_arch, rel);
		for (size_t i = 0; i < n_rows; i++)
			rows[i * PERF_COLS + C_REL] = rel[i];
	}
	ret = rm_csv_append(r->o->output, perf_header, PERF_COLS, rows, n_rows, err);

	if (ret == 0 && oc->pr.n) {
		char *dir = rm_xstrdup(r->o->output), *slash = strrchr(dir, '/');
		char *safe = file_safe(m->name), *path;
		if (slash)
			slash[1] = '\0';
		path = rm_xasprintf("%sperf_%s.csv", slash ? dir : "", safe);
		const char **mrows = rm_xcalloc(oc->pr.n * 8, sizeof(*mrows));
		char **vals = rm_xcalloc(oc->pr.n * 2, sizeof(*vals));
		for (size_t i = 0; i < oc->pr.n; i++) {
			const rm_metric *mt = &oc->pr.metrics[i];
			vals[2 * i] = fmt_num(mt->value);
			vals[2 * i + 1] = mt->step >= 0 ? rm_xasprintf("%ld", mt->step) : NULL;
			const char *row[8] = {
			    ts,		 r->run_id, m->name,	     mt->name,
			    vals[2 * i], mt->unit,  vals[2 * i + 1], mt->aggregate};
			memcpy(mrows + i * 8, row, sizeof(row));
		}
		ret = rm_csv_append(path, metric_header, 8, mrows, oc->pr.n, err);
		for (size_t i = 0; i < oc->pr.n * 2; i++)
			free(vals[i]);
		free(vals);
		free(mrows);
		free(path);
		free(safe);
		free(dir);
	}
	for (size_t i = 0; i < n_rows; i++) {
		free(names[i]);
		free(rel[i]);
	}
	free(names);
	free(rel);
	free(rows);
	free(perf);
	free(tags);
	free(margs);
	return ret;
}

/* Values of one metric over the repeats of a model, for the summary. */
struct series {
	char *name;
	char *unit;
	char *aggregate;
	double *v;
	size_t n;
};

struct summary {
	struct series *s;
	size_t n;
};

static void summary_add(struct summary *sm, const char *name, const char *unit,
			const char *aggregate, double v)
{
	struct series *x = NULL;
	for (size_t i = 0; i < sm->n && !x; i++)
		if (!strcmp(sm->s[i].name, name) && !strcmp(sm->s[i].aggregate, aggregate))
			x = &sm->s[i];
	if (!x) {
		sm->s = rm_xrealloc(sm->s, (sm->n + 1) * sizeof(*sm->s));
		x = &sm->s[sm->n++];
		x->name = rm_xstrdup(name);
		x->unit = rm_xstrdup(unit ? unit : "");
		x->aggregate = rm_xstrdup(aggregate);
		x->v = NULL;
		x->n = 0;
	}
	x->v = rm_xrealloc(x->v, (x->n + 1) * sizeof(*x->v));
	x->v[x->n++] = v;
}

static void summary_collect(struct summary *sm, const struct outcome *oc)
{
	if (strcmp(oc->status, "SUCCESS"))
		return;
	if (oc->pr.has_performance)
		summary_add(sm, "performance", oc->pr.performance_metric, "last",
			    oc->pr.performance);
	for (size_t i = 0; i < oc->pr.n; i++)
		summary_add(sm, oc->pr.metrics[i].name, oc->pr.metrics[i].unit,
			    oc->pr.metrics[i].aggregate, oc->pr.metrics[i].value);
}

static void summary_release(struct summary *sm)
{
	for (size_t i = 0; i < sm->n; i++) {
		free(sm->s[i].name);
		free(sm->s[i].unit);
		free(sm->s[i].aggregate);
		free(sm->s[i].v);
	}
	free(sm->s);
	sm->s = NULL;
	sm->n = 0;
}

/* Prints the per-metric statistics of a model's repeats and appends them to
 * perf_summary.csv beside perf.csv. --score mlperf scores time to train by MLPerf's rule. */
static int summary_write(struct run *r, const rm_model *m, struct summary *sm, rm_error *err)
{
	char ts[32];
	char *dir = rm_xstrdup(r->o->output), *slash = strrchr(dir, '/'), *path;
	const char **rows = rm_xcalloc(sm->n * 14 + 1, sizeof(*rows));
	/* at most 7 strings a series: the score and six statistics */
	char **cells = rm_xcalloc(sm->n * 7 + 1, sizeof(*cells));
	size_t nr = 0, nc = 0;
	int ret;

	rm_utc_timestamp(ts, sizeof(ts));
	if (slash)
		slash[1] = '\0';
	path = rm_xasprintf("%sperf_summary.csv", slash ? dir : "");
	printf("summary of %ld runs of '%s':\n  %-40s %5s %12s %12s %10s %12s %12s %12s\n",
	       r->o->repeat, m->name, "metric (aggregate)", "n", "mean", "median", "stddev", "min",
	       "max", "score");
	for (size_t i = 0; i < sm->n; i++) {
		const struct series *x = &sm->s[i];
		rm_stats st;
		double score = 0;
		size_t used = 0;
		int scored = 0;
		if (rm_stats_compute(x->v, x->n, &st) < 0)
			continue;
		/* the series itself, or the primary figure when it is a time to train */
		if (r->o->score && !strcmp(r->o->score, "mlperf") &&
		    (strstr(x->name, "time_to_train") || strstr(x->unit, "time_to_train"))) {
			rm_error serr = RM_ERROR_INIT;
			scored = rm_score_mlperf(x->v, x->n, &score, &used, &serr) == 0;
			if (!scored)
				rm_warn("model '%s': no MLPerf score for '%s': %s", m->name,
					x->name, serr.msg);
			else if (x->n != 10)
				rm_warn("model '%s': MLPerf scores take 10 runs; this one has %zu",
					m->name, x->n);
		}
		char label[256];
		snprintf(label, sizeof(label), "%s (%s)", x->name, x->aggregate);
		/* Each cell is made in its own statement: the order in which an initializer
		 * list is evaluated is unspecified. */
		char **c = cells + nc;
		c[0] = rm_xasprintf("%zu", st.n);
		c[1] = fmt_num(st.mean);
		c[2] = fmt_num(st.median);
		c[3] = fmt_num(st.stddev);
		c[4] = fmt_num(st.min);
		c[5] = fmt_num(st.max);
		c[6] = scored ? fmt_num(score) : rm_xstrdup("");
		nc += 7;
		printf("  %-40s %5zu %12.6g %12.6g %10.4g %12.6g %12.6g %12s\n", label, st.n,
		       st.mean, st.median, st.stddev, st.min, st.max, c[6]);
		const char *row[14] = {
		    ts,	     r->run_id,
		    m->name, x->name,
		    x->unit, x->aggregate,
		    c[0],    c[1],
		    c[2],    c[3],
		    c[4],    c[5],
		    c[6],    scored ? "mlperf: drop fastest and slowest, mean of the rest" : ""};
		memcpy(rows + nr * 14, row, sizeof(row));
		nr++;
	}
	ret = nr ? rm_csv_append(path, summary_header, 14, rows, nr, err) : 0;
	for (size_t i = 0; i < nc; i++)
		free(cells[i]);
	free(cells);
	free(rows);
	free(path);
	free(dir);
	return ret;
}

/* Streaming */

struct stream;

/* One output stream of the container (stdout or stderr), after secret masking. */
struct sink {
	struct stream *st;
	int stream;
};

struct stream {
	struct run *r;
	const char *model;
	FILE *log;
	int live;
	rm_lines lines;	    /* stdout lines for the parser */
	rm_lines err_lines; /* stderr lines, watched for the keep-alive exit marker */
	rm_mask masks[2];   /* stdout, stderr */
	struct sink sinks[2];
	rm_parser parser;
	double start;
	double timeout;	 /* seconds, 0 = none */
	double deadline; /* monotonic seconds, 0 = none */
	int timed_out;
	double last_flush;
	double last_progress;
	char *exit_marker; /* keep-alive: "<marker><run id>:" */
	int script_done;   /* keep-alive: the marker came */
	long script_rc;
};

/* The live log is read while it grows (tail -f): flush it at most every 200 ms rather than
 * per frame, which would cost a write(2) per line on chatty workloads. */
static void flush_log(struct stream *st, int force)
{
	double now = rm_now();
	if (force || now - st->last_flush >= 0.2) {
		fflush(st->log);
		if (st->live)
			fflush(stdout);
		st->last_flush = now;
	}
}

static void fmt_duration(char *buf, size_t size, double s)
{
	long t = s < 0 ? 0 : (long)s;
	if (t >= 3600)
		snprintf(buf, size, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(buf, size, "%ld:%02ld", t / 60, t % 60);
}

/*
 * Progress goes to stderr, never into the logs: on a terminal one status line redrawn in
 * place (unless the output itself is streamed there), elsewhere (CI) a plain line every
 * progress_interval seconds.
 */
static void progress_line(struct run *r, const char *model, const char *what, double elapsed,
			  double timeout, const rm_parse_progress *pp, int final)
{
	char el[32], to[32] = "", line[512];
	size_t n;

	if (!r->progress_mode)
		return;
	if (r->progress_mode == 1 && final) {
		fputs("\r\033[K", stderr);
		return;
	}
	if (final)
		return;
	fmt_duration(el, sizeof(el), elapsed);
	if (timeout > 0) {
		to[0] = '/';
		fmt_duration(to + 1, sizeof(to) - 1, timeout);
	}
	n = (size_t)snprintf(line, sizeof(line), "[%s] %s %s%s", model, what, el, to);
	if (pp && pp->step >= 0 && n < sizeof(line)) {
		if (pp->total_steps > 0)
			n += (size_t)snprintf(line + n, sizeof(line) - n, "  step %ld/%ld",
					      pp->step, pp->total_steps);
		else
			n += (size_t)snprintf(line + n, sizeof(line) - n, "  step %ld", pp->step);
	}
	if (pp && pp->throughput >= 0 && n < sizeof(line))
		n += (size_t)snprintf(line + n, sizeof(line) - n, "  %.6g %s", pp->throughput,
				      pp->throughput_metric ? pp->throughput_metric : "");
	if (timeout >= 0 && pp && pp->step > 0 && pp->total_steps > pp->step && n < sizeof(line)) {
		char eta[32];
		fmt_duration(eta, sizeof(eta),
			     elapsed / (double)pp->step * (double)(pp->total_steps - pp->step));
		n += (size_t)snprintf(line + n, sizeof(line) - n, "  ETA %s", eta);
	}
	if (r->progress_mode == 1)
		fprintf(stderr, "\r\033[K%s", line);
	else
		fprintf(stderr, "run_models: %s\n", line);
	fflush(stderr);
}

static void stream_progress(struct stream *st, int final)
{
	struct run *r = st->r;
	double now = rm_now();
	double every = r->progress_mode == 1 ? 1.0 : r->o->progress_interval;
	rm_parse_progress pp = {-1, -1, -1, NULL};

	if (!final && now - st->last_progress < every)
		return;
	st->last_progress = now;
	if (st->parser.ops && st->parser.ops->progress && st->parser.state)
		st->parser.ops->progress(st->parser.state, &pp);
	progress_line(r, st->model, "running", now - st->start, st->timeout, &pp, final);
}

static void on_stdout_line(void *ud, const char *line, size_t len)
{
	struct stream *st = ud;
	rm_parser_feed(&st->parser, line, len);
}

static void on_stderr_line(void *ud, const char *line, size_t len)
{
	struct stream *st = ud;
	size_t ml = strlen(st->exit_marker);
	if (len > ml && !memcmp(line, st->exit_marker, ml)) {
		char buf[32];
		size_t n = len - ml < sizeof(buf) - 1 ? len - ml : sizeof(buf) - 1;
		memcpy(buf, line + ml, n);
		buf[n] = '\0';
		buf[strcspn(buf, "\r")] = '\0';
		if (rm_parse_long(buf, 0, 255, &st->script_rc) == 0)
			st->script_done = 1;
	}
}

/* Masked bytes of one stream: to the log, the terminal, and (stdout) the parser. */
static void on_masked(void *ud, const char *data, size_t len)
{
	struct sink *k = ud;
	struct stream *st = k->st;
	fwrite(data, 1, len, st->log);
	if (k->stream == RM_STREAM_STDOUT) {
		if (st->live)
			fwrite(data, 1, len, stdout);
		rm_lines_feed(&st->lines, data, len, on_stdout_line, st);
	} else {
		if (st->live)
			fwrite(data, 1, len, stderr);
		if (st->exit_marker)
			rm_lines_feed(&st->err_lines, data, len, on_stderr_line, st);
	}
}

static void on_frame(void *ud, int stream, const char *data, size_t len)
{
	struct stream *st = ud;
	int i = stream == RM_STREAM_STDOUT ? 0 : 1;
	rm_mask_feed(&st->masks[i], data, len, on_masked, &st->sinks[i]);
	flush_log(st, 0);
}

static int cancel_stream(void *ud)
{
	struct stream *st = ud;
	flush_log(st, 0); /* a quiet container's last lines still reach the file */
	stream_progress(st, 0);
	if (got_signal || st->script_done)
		return 1;
	if (st->deadline > 0 && rm_now() > st->deadline) {
		st->timed_out = 1;
		return 1;
	}
	return 0;
}

static int cancel_signal(void *ud)
{
	(void)ud;
	return got_signal != 0;
}

/* Build */

struct build_log {
	struct run *r;
	const char *model;
	FILE *f;
	int live;
	double start;
	double last_progress;
};

static void on_build_line(void *ud, const char *line, size_t len)
{
	struct build_log *b = ud;
	char *copy = NULL;

	if (rm_mask_active(&b->r->mask)) {
		char *raw = rm_xstrndup(line, len);
		copy = rm_mask_string(&b->r->mask, raw);
		free(raw);
		line = copy;
		len = strlen(copy);
	}
	fwrite(line, 1, len, b->f);
	fputc('\n', b->f);
	if (b->live) {
		fwrite(line, 1, len, stdout);
		fputc('\n', stdout);
	}
	/* "Step 3/5 : RUN ..." drives the build's progress line. */
	long step, total;
	if (b->r->progress_mode && len > 5 && !memcmp(line, "Step ", 5) &&
	    sscanf(line + 5, "%ld/%ld", &step, &total) == 2) {
		double now = rm_now();
		double every = b->r->progress_mode == 1 ? 0 : b->r->o->progress_interval;
		if (now - b->last_progress >= every) {
			rm_parse_progress pp = {step, total, -1, NULL};
			/* no ETA: build steps differ too much in length */
			progress_line(b->r, b->model, "building", now - b->start, -1, &pp, 0);
			b->last_progress = now;
		}
	}
	free(copy);
}

static int make_temp(char **path, rm_error *err)
{
	const char *tmp = getenv("TMPDIR");
	char *p = rm_xasprintf("%s/run_models-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	int fd = mkstemp(p);
	if (fd < 0) {
		rm_error_set(err, RM_ERR_IO, "cannot create a temporary file in '%s': %s",
			     tmp && *tmp ? tmp : "/tmp", strerror(errno));
		free(p);
		return -1;
	}
	*path = p;
	return fd;
}

#define FINGERPRINT_LABEL "run_models.fingerprint"

/* SHA-256 over the build context's metadata (rm_tar_context_fingerprint), the Dockerfile
 * name, the build args and the id of the base image as the engine has it now (a re-pulled
 * base makes a new fingerprint). */
static int fingerprint(struct run *r, const rm_model *m, const rm_dockerfile *df, json_t *args,
		       char out[65], rm_error *err)
{
	rm_hash *h = rm_hash_new();
	char *js = json_dumps(args, JSON_COMPACT | JSON_SORT_KEYS), *df_name = NULL;
	json_t *base = NULL;
	rm_error ierr = RM_ERROR_INIT;
	int ret = rm_tar_context_fingerprint(m->dockercontext, df->path, h, &df_name, err);

	if (ret == 0) {
		rm_hash_update(h, df_name, strlen(df_name) + 1);
		if (js)
			rm_hash_update(h, js, strlen(js) + 1);
		if (df->base_image && strcmp(df->base_image, "scratch") &&
		    rm_docker_image_inspect(r->d, df->base_image, &base, &ierr) == 0) {
			const char *id = json_string_value(json_object_get(base, "Id"));
			if (id)
				rm_hash_update(h, id, strlen(id));
		}
	}
	json_decref(base);
	free(js);
	free(df_name);
	rm_hash_final_hex(h, out);
	return ret;
}

static int image_is_current(struct run *r, const char *image, const char *fp, char **image_id)
{
	json_t *img = NULL;
	rm_error ierr = RM_ERROR_INIT;
	int current = 0;

	if (rm_docker_image_inspect(r->d, image, &img, &ierr) == 0) {
		json_t *labels = json_object_get(json_object_get(img, "Config"), "Labels");
		const char *have = json_string_value(json_object_get(labels, FINGERPRINT_LABEL));
		const char *id = json_string_value(json_object_get(img, "Id"));
		if (have && id && !strcmp(have, fp)) {
			*image_id = rm_xstrdup(id);
			current = 1;
		}
	}
	json_decref(img);
	return current;
}

/* MAD_SYSTEM_GPU_ARCHITECTURE and the context's docker_build_arg. Secrets are never build
 * args (image history keeps them), unless the user put one there explicitly: warned. */
static json_t *build_args(struct run *r, const rm_model *m)
{
	json_t *args = json_object();
	if (r->ctx.gpu_arch)
		json_object_set_new(args, "MAD_SYSTEM_GPU_ARCHITECTURE",
				    json_string(r->ctx.gpu_arch));
	for (size_t i = 0; i < r->ctx.n_docker_build_arg; i++) {
		const rm_kv *kv = &r->ctx.docker_build_arg[i];
		int secret = strstr(kv->key, "MAD_SECRETS") != NULL;
		for (size_t k = 0; k < r->n_secrets && !secret; k++)
			secret = strstr(kv->value, r->secrets[k]) != NULL;
		if (secret)
			rm_warn("model '%s': build arg '%s' carries a secret: the image history "
				"keeps it; pass secrets to the container instead (MAD_SECRETS_* "
				"variables reach its environment)",
				m->name, kv->key);
		json_object_set_new(args, kv->key, json_string(kv->value));
	}
	for (size_t i = 0; i < m->n_build_secrets; i++) {
		const char *name = m->build_secrets[i], *value = getenv(name);
		if (!value) {
			rm_warn("model '%s': field 'build_secrets' names '%s', which is not set on "
				"this host; the build gets no such argument",
				m->name, name);
			continue;
		}
		rm_warn("model '%s': passing secret '%s' as a build arg because its field "
			"'build_secrets' asks for it: the image history keeps its value",
			m->name, name);
		json_object_set_new(args, name, json_string(value));
	}
	return args;
}

static int build_image(struct run *r, const rm_model *m, const rm_dockerfile *df,
		       const char *log_base, struct outcome *oc, rm_error *err)
{
	char *tar_path = NULL, *df_name = NULL, *log_path = NULL;
	int fd = -1, ret = -1;
	json_t *args = build_args(r, m), *labels = json_object();
	struct build_log bl = {r, m->name, NULL, r->o->live_output, rm_now(), 0};

	log_path = rm_xasprintf("%s/%s.build.log", r->o->log_dir, log_base);
	bl.f = fopen(log_path, "w");
	if (!bl.f) {
		rm_error_set(err, RM_ERR_IO, "cannot write '%s': %s", log_path, strerror(errno));
		goto out;
	}
	/* The image is up to date when its fingerprint label matches the context, the build
	 * args and the base image as they are now: skip the build (a fully cached build still
	 * costs the engine a context upload and a cache lookup per step). */
	char fp[65];
	if (fingerprint(r, m, df, args, fp, err) < 0) {
		rm_error_wrap(err, "build context '%s'", m->dockercontext);
		goto out;
	}
	json_object_set_new(labels, FINGERPRINT_LABEL, json_string(fp));
	if (!r->o->clean_docker_cache && image_is_current(r, oc->image, fp, &oc->image_id)) {
		fprintf(bl.f,
			"run_models: image '%s' (%s) is up to date with '%s' and its context "
			"(fingerprint %s); build skipped, --clean-docker-cache rebuilds it\n",
			oc->image, oc->image_id, df->path, fp);
		rm_info("image '%s' is up to date; build skipped", oc->image);
		ret = 0;
		goto out;
	}
	fd = make_temp(&tar_path, err);
	if (fd < 0)
		goto out;
	if (rm_tar_build_context(m->dockercontext, df->path, fd, &df_name, err) < 0) {
		rm_error_wrap(err, "build context '%s'", m->dockercontext);
		goto out;
	}
	rm_info("building '%s' from '%s' (log: %s)", oc->image, df->path, log_path);
	rm_build_opts bo = {
	    .labels = labels,
	    .context_tar = tar_path,
	    .dockerfile = df_name,
	    .tag = oc->image,
	    .buildargs = args,
	    .nocache = r->o->clean_docker_cache,
	    .networkmode = "host",
	    .on_line = on_build_line,
	    .ud = &bl,
	    .cancel = cancel_signal,
	};
	ret = rm_docker_build(r->d, &bo, &oc->image_id, err);
	progress_line(r, m->name, "building", 0, 0, NULL, 1);
	if (ret < 0) {
		char *msg = rm_mask_string(&r->mask, err->msg);
		fprintf(bl.f, "run_models: build failed: %s\n", msg);
		rm_error_set(err, err->kind, "building '%s' from '%s' (see %s): %s", oc->image,
			     df->path, log_path, msg);
		free(msg);
	}
out:
	oc->build_s = rm_now() - bl.start;
	if (bl.f)
		fclose(bl.f);
	if (fd >= 0)
		close(fd);
	if (tar_path)
		unlink(tar_path);
	free(tar_path);
	free(df_name);
	free(log_path);
	json_decref(args);
	json_decref(labels);
	return ret;
}

static int copy_scripts(struct run *r, const rm_model *m, const char *id, rm_error *err)
{
	char *src = rm_xstrdup(m->scripts), *dir = rm_model_dir(m), *prefix, *tar_path = NULL;
	struct stat st;
	int fd = -1, ret = -1;

	if (stat(src, &st) != 0) {
		rm_error_set(err, RM_ERR_INPUT, "model '%s': field 'scripts': cannot read '%s': %s",
			     m->name, src, strerror(errno));
		goto out;
	}
	if (!S_ISDIR(st.st_mode)) {
		char *slash = strrchr(src, '/');
		if (slash)
			*slash = '\0';
		else
			src[0] = '.', src[1] = '\0';
	}
	prefix = m->url && *m->url ? rm_xasprintf("%s/.run_models/%s", &RM_WORKSPACE[1], dir)
				   : rm_xasprintf("%s/%s", &RM_WORKSPACE[1], dir);
	fd = make_temp(&tar_path, err);
	if (fd >= 0 && rm_tar_tree(src, prefix, fd, err) == 0 &&
	    rm_docker_put_archive(r->d, id, "/", tar_path, err) == 0)
		ret = 0;
	free(prefix);
out:
	if (fd >= 0)
		close(fd);
	if (tar_path)
		unlink(tar_path);
	free(tar_path);
	free(src);
	free(dir);
	return ret;
}

/* Reads the multiple_results CSV out of the container: one result per row. */
static int read_multiple_results(struct run *r, const rm_model *m, const char *id,
				 struct outcome *oc, rm_error *err)
{
	char *dir = rm_model_dir(m), *tar_path = NULL, *csv_path = NULL, *path;
	int tfd = -1, cfd = -1, ret = -1;
	FILE *f = NULL;
	char **rec = NULL;
	size_t n, nm = 0, np = 0, nme = 0;
	long c_model = -1, c_perf = -1, c_metric = -1;

	path = m->multiple_results[0] == '/'
		   ? rm_xstrdup(m->multiple_results)
		   : rm_xasprintf("%s/%s/%s", RM_WORKSPACE, dir, m->multiple_results);
	tfd = make_temp(&tar_path, err);
	if (tfd < 0)
		goto out;
	if (rm_docker_get_archive(r->d, id, path, tfd, RESULTS_MAX_BYTES * 2, err) < 0)
		goto out;
	cfd = make_temp(&csv_path, err);
	if (cfd < 0 || lseek(tfd, 0, SEEK_SET) < 0 ||
	    rm_tar_extract_one(tfd, cfd, RESULTS_MAX_BYTES, err) < 0)
		goto out;
	f = fopen(csv_path, "r");
	if (!f || rm_csv_read_record(f, &rec, &n, err) != 1) {
		rm_error_set(err, RM_ERR_INPUT, "it is empty");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(rec[i], "model"))
			c_model = (long)i;
		else if (!strcmp(rec[i], "performance"))
			c_perf = (long)i;
		else if (!strcmp(rec[i], "metric"))
			c_metric = (long)i;
	}
	rm_strv_free(rec);
	rec = NULL;
	if (c_model < 0 || c_perf < 0 || c_metric < 0) {
		rm_error_set(err, RM_ERR_INPUT,
			     "its header must name the columns model, performance and metric");
		goto out;
	}
	oc->mr_names = rm_xcalloc(1, sizeof(char *));
	oc->mr_perf = rm_xcalloc(1, sizeof(char *));
	oc->mr_metric = rm_xcalloc(1, sizeof(char *));
	int got;
	while ((got = rm_csv_read_record(f, &rec, &n, err)) == 1) {
		double v;
		if (n == 1 && !rec[0][0]) { /* blank line */
			rm_strv_free(rec);
			continue;
		}
		if ((size_t)c_model >= n || (size_t)c_perf >= n || (size_t)c_metric >= n ||
		    !rec[c_model][0]) {
			rm_error_set(err, RM_ERR_INPUT, "row %zu has missing columns", nm + 2);
			goto out;
		}
		oc->mr_names = rm_strv_push(oc->mr_names, &nm, rec[c_model]);
		/* A row without a finite number keeps an empty performance. */
		oc->mr_perf = rm_strv_push(
		    oc->mr_perf, &np, rm_parse_double(rec[c_perf], &v) == 0 ? rec[c_perf] : "");
		oc->mr_metric = rm_strv_push(oc->mr_metric, &nme, rec[c_metric]);
		rm_strv_free(rec);
		rec = NULL;
	}
	if (got < 0)
		goto out;
	oc->mr_n = nm;
	if (!nm) {
		rm_error_set(err, RM_ERR_INPUT, "it has no rows");
		goto out;
	}
	ret = 0;
out:
	if (ret < 0)
		rm_error_wrap(err, "multiple_results '%s'", path);
	rm_strv_free(rec);
	if (f)
		fclose(f);
	if (tfd >= 0)
		close(tfd);
	if (cfd >= 0)
		close(cfd);
	if (tar_path)
		unlink(tar_path);
	if (csv_path)
		unlink(csv_path);
	free(tar_path);
	free(csv_path);
	free(path);
	free(dir);
	return ret;
}

static int keep_model_dir(struct run *r, const rm_model *m, const char *id, rm_error *err)
{
	char *dir = rm_model_dir(m), *path = rm_xasprintf("%s/%s", RM_WORKSPACE, dir);
	char *tar_path = NULL;
	int fd = make_temp(&tar_path, err), ret = -1;

	if (fd >= 0 && rm_docker_get_archive(r->d, id, path, fd, (size_t)8 << 30, err) == 0 &&
	    lseek(fd, 0, SEEK_SET) == 0 && rm_tar_extract_dir(fd, r->o->log_dir, 0, err) == 0) {
		rm_info("kept the model dir as '%s/%s'", r->o->log_dir, dir);
		ret = 0;
	}
	if (fd >= 0)
		close(fd);
	if (tar_path)
		unlink(tar_path);
	free(tar_path);
	free(path);
	free(dir);
	return ret;
}

static char *container_name(const struct run *r, const rm_model *m, size_t k)
{
	char *s = rm_xasprintf("run_models-%s-%s-%zu", r->run_id, m->name, k);
	for (char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || *p == '.' || *p == '-'))
			*p = '_';
	return s;
}

/* Runs the container of one built image; fills oc. Returns -1 only when interrupted. */
static int run_container(struct run *r, const rm_selected *s, const rm_spec_in *in, size_t k,
			 struct outcome *oc)
{
	const rm_model *m = s->model;
	rm_error err = RM_ERROR_INIT;
	json_t *body = NULL;
	char *name = container_name(r, m, k), *id = NULL;
	const char *parser = r->o->parser ? r->o->parser : m->parser;
	struct stream st;
	double timeout = r->o->timeout >= 0 ? r->o->timeout
			 : m->timeout > 0   ? m->timeout
					    : RM_DEFAULT_TIMEOUT;
	long status = -1;
	int rc, ret = 0;

	memset(&st, 0, sizeof(st));
	st.r = r;
	st.model = m->name;
	st.live = r->o->live_output;
	st.timeout = timeout;
	rm_lines_init(&st.lines, LINE_MAX_BYTES);
	rm_lines_init(&st.err_lines, LINE_MAX_BYTES);
	for (int i = 0; i < 2; i++) {
		rm_mask_init(&st.masks[i], (const char *const *)r->secrets, r->n_secrets);
		st.sinks[i].st = &st;
		st.sinks[i].stream = i == 0 ? RM_STREAM_STDOUT : RM_STREAM_STDERR;
	}
	if (in->keep_alive)
		st.exit_marker = rm_xasprintf("%s%s:", RM_EXIT_MARKER, r->run_id);
	rm_parser_config pcfg = {r->o->warmup >= 0 ? r->o->warmup : RM_PARSER_WARMUP_DEFAULT};
	if (rm_parser_start(&st.parser, parser ? parser : "generic", &pcfg) < 0) {
		fail(oc, "unknown parser '%s' (model field 'parser' or --parser)", parser);
		goto out;
	}
	st.log = fopen(oc->log_file, "w");
	if (!st.log) {
		fail(oc, "cannot write '%s': %s", oc->log_file, strerror(errno));
		goto out;
	}
	setvbuf(st.log, NULL, _IOFBF, 1 << 16);
	if (rm_spec_body(in, &body, &err) < 0 ||
	    rm_docker_create(r->d, name, body, &id, &err) < 0 || copy_scripts(r, m, id, &err) < 0) {
		fail(oc, "%s", err.msg);
		goto out;
	}
	st.start = rm_now();
	st.last_progress = st.start;
	if (timeout > 0)
		st.deadline = st.start + timeout;
	rc = rm_docker_attach_start(r->d, id, 0, on_frame, &st, cancel_stream, &st, &err);
	if (st.script_done) {
		/* keep-alive: the script ended, the container lives on */
		status = st.script_rc;
		oc->exit_code = status;
	} else if (rc == RM_DOCKER_CANCELLED || rc < 0) {
		rm_error kerr = RM_ERROR_INIT;
		/* Kill first: the container must not outlive its budget by more than one poll
		 * of the stream (200 ms). */
		if (rm_docker_kill(r->d, id, "SIGKILL", &kerr) < 0)
			rm_warn("%s", kerr.msg);
		if (got_signal) {
			fail(oc, "interrupted by %s", signal_name());
			ret = -1;
		} else if (st.timed_out) {
			fail(oc, "timed out after %g s (the container was killed)", timeout);
		} else {
			fail(oc, "%s", err.msg);
		}
	}
	if (!st.script_done && !got_signal &&
	    rm_docker_wait(r->d, id, "not-running", &status, cancel_signal, NULL, &err) == 0)
		oc->exit_code = status;
	oc->test_s = rm_now() - st.start;
	for (int i = 0; i < 2; i++)
		rm_mask_flush(&st.masks[i], on_masked, &st.sinks[i]);
	rm_lines_flush(&st.lines, on_stdout_line, &st);
	stream_progress(&st, 1);
	rm_parser_finish(&st.parser, &oc->pr);
	if (fflush(st.log) != 0)
		rm_warn("cannot write '%s': %s", oc->log_file, strerror(errno));
	if (oc->reason) /* timed out, interrupted, stream broken */
		goto out;
	if (status != 0) {
		fail(oc, "the script exited with code %ld", status);
	} else if (m->multiple_results) {
		if (read_multiple_results(r, m, id, oc, &err) < 0)
			fail(oc, "%s", err.msg);
		else
			oc->status = "SUCCESS";
	} else if (!oc->pr.has_performance) {
		fail(oc, "no performance found in the output (parser '%s')",
		     st.parser.ops ? st.parser.ops->name : "?");
	} else {
		oc->status = "SUCCESS";
	}
out:
	if (id && r->o->keep_model_dir && !got_signal) {
		rm_error kerr = RM_ERROR_INIT;
		if (keep_model_dir(r, m, id, &kerr) < 0)
			rm_warn("model '%s': could not keep the model dir: %s", m->name, kerr.msg);
	}
	if (id && r->o->keep_alive && !got_signal) {
		rm_info("kept container '%s' %s; enter it with 'docker exec -it %s sh', remove "
			"it with 'docker rm -f %s'",
			name, st.script_done ? "running" : "(stopped)", name, name);
	} else if (id) {
		rm_error rerr = RM_ERROR_INIT;
		if (rm_docker_remove(r->d, id, &rerr) < 0) {
			rm_warn("could not remove container '%s': %s", name, rerr.msg);
			r->unremoved++;
		}
	}
	if (st.log)
		fclose(st.log);
	if (st.live)
		fflush(stdout);
	rm_parser_stop(&st.parser);
	rm_lines_release(&st.lines);
	rm_lines_release(&st.err_lines);
	for (int i = 0; i < 2; i++)
		rm_mask_release(&st.masks[i]);
	free(st.exit_marker);
	json_decref(body);
	free(name);
	free(id);
	return ret;
}

static int arch_skipped(const rm_model *m, const char *arch)
{
	if (!m->skip_gpu_arch || !arch)
		return 0;
	const char *p = m->skip_gpu_arch;
	size_t al = strlen(arch);
	while (*p) {
		while (*p == ' ' || *p == ',')
			p++;
		size_t len = strcspn(p, ", ");
		if (len == al && !strncmp(p, arch, al))
			return 1;
		p += len;
	}
	return 0;
}

/* What a dry run shows for one kept Dockerfile: the equivalent docker CLI commands. */
static void print_plan(struct run *r, const rm_model *m, const rm_dockerfile *df,
		       const rm_spec_in *in)
{
	json_t *args = build_args(r, m), *body = NULL;
	rm_error err = RM_ERROR_INIT;
	char *name = container_name(r, m, 0);
	char *build = rm_build_cmdline(in->image, df->path, m->dockercontext, args, NULL,
				       r->o->clean_docker_cache);
	char *line;

	printf("  dockerfile: %s (base image %s)\n", df->path,
	       df->base_image ? df->base_image : "unknown");
	char *js = json_dumps(args, JSON_COMPACT | JSON_SORT_KEYS);
	line = rm_mask_string(&r->mask, js ? js : "{}");
	printf("  build args: %s\n", line);
	free(line);
	free(js);
	line = rm_mask_string(&r->mask, build);
	printf("  %s\n", line);
	free(line);
	if (rm_spec_body(in, &body, &err) < 0) {
		line = rm_mask_string(&r->mask, err.msg);
		printf("  would fail: %s\n", line);
		free(line);
	} else {
		char *run = rm_run_cmdline(body, name);
		line = rm_mask_string(&r->mask, run);
		printf("  %s\n", line);
		free(line);
		free(run);
	}
	json_decref(body);
	json_decref(args);
	free(build);
	free(name);
}

/* Fills the build facts of a repeat's outcome from the build's. */
static void outcome_from_build(struct outcome *oc, const struct outcome *b, int first)
{
	oc->exit_code = -1;
	oc->dockerfile = rm_xstrdup(b->dockerfile);
	oc->base_image = rm_xstrdup(b->base_image);
	oc->image = rm_xstrdup(b->image);
	oc->image_id = rm_xstrdup(b->image_id);
	oc->tunableop = b->tunableop;
	/* One build serves every repeat: its time is on the first row only, so sums over
	 * perf.csv stay right. */
	oc->build_s = first ? b->build_s : 0;
}

static void report(struct run *r, const rm_model *m, const struct outcome *oc)
{
	if (!strcmp(oc->status, "FAILURE")) {
		r->n_failed++;
		rm_warn("model '%s' failed: %s", m->name, oc->reason);
	} else if (!strcmp(oc->status, "SKIPPED")) {
		rm_info("model '%s' skipped: %s", m->name, oc->reason);
	} else if (oc->mr_n) {
		rm_info("model '%s': SUCCESS, %zu results", m->name, oc->mr_n);
	} else {
		rm_info("model '%s': SUCCESS, %.6g %s", m->name, oc->pr.performance,
			oc->pr.performance_metric ? oc->pr.performance_metric : "");
	}
}

/* Where tuned TunableOp results live between runs: <log dir>/tunableop/<model>/. */
static char *tunableop_dir(struct run *r, const rm_model *m, int create)
{
	char real[PATH_MAX];
	char *safe = file_safe(m->name), *dir;
	const char *base = realpath(r->o->log_dir, real) ? real : r->o->log_dir;

	dir = rm_xasprintf("%s/tunableop/%s", base, safe);
	if (create) {
		char *top = rm_xasprintf("%s/tunableop", base);
		if ((mkdir(top, 0755) != 0 && errno != EEXIST) ||
		    (mkdir(dir, 0755) != 0 && errno != EEXIST))
			rm_warn("model '%s': cannot create '%s': %s", m->name, dir,
				strerror(errno));
		free(top);
	}
	free(safe);
	return dir;
}

/* Runs one selected model: every kept Dockerfile is built once and run --repeat times. */
static int run_model(struct run *r, const rm_selected *s, rm_error *err)
{
	const rm_model *m = s->model;
	rm_dockerfile *dfs = NULL;
	size_t n_dfs = 0, kept = 0;
	rm_error derr = RM_ERROR_INIT;
	long runtime_ngpus = m->n_gpus < 0 ? r->ctx.n_gpus : m->n_gpus;
	const char *tunableop = rm_tunableop_effective(m, r->o->tunableop);
	int tuning = tunableop && !strcmp(tunableop, "on");
	char *tdir = tuning ? tunableop_dir(r, m, !r->o->dry_run) : NULL;
	rm_spec_in in = {m,
			 &r->ctx,
			 s->extra_args,
			 NULL,
			 r->run_id,
			 (const char *const *)environ,
			 runtime_ngpus,
			 tunableop,
			 tdir,
			 r->o->shm_size,
			 r->o->keep_alive};
	char *args = rm_spec_args(&in);
	int ret = 0;
	const char *skip = NULL;

	int sel_rc = rm_dockerfiles_select(m->dockerfile, &r->ctx, &dfs, &n_dfs, &derr);
	for (size_t i = 0; i < n_dfs; i++)
		kept += dfs[i].kept != 0;
	if (r->o->dry_run) {
		char *a = rm_mask_string(&r->mask, args);
		printf("model '%s' (GPUs %ld, tunableop %s, parser %s)\n  args: %s\n", m->name,
		       runtime_ngpus, tunableop ? tunableop : "as the model has it",
		       r->o->parser ? r->o->parser : m->parser, a);
		free(a);
		if (tdir)
			printf("  tunableop results: %s (mounted at %s)\n", tdir, RM_TUNABLEOP_DIR);
		for (size_t i = 0; i < n_dfs; i++)
			if (!dfs[i].kept)
				printf("  dropped: %s: %s\n", dfs[i].path, dfs[i].why_dropped);
	} else {
		rm_info("model '%s'", m->name);
	}

	if (arch_skipped(m, r->ctx.gpu_arch))
		skip = "skip_gpu_arch";
	if (skip || sel_rc < 0 || (m->n_gpus > 0 && m->n_gpus > r->ctx.n_gpus)) {
		struct outcome oc = {0};
		oc.exit_code = -1;
		oc.tunableop = tunableop;
		if (skip) {
			oc.status = "SKIPPED";
			oc.reason = rm_xasprintf("skip_gpu_arch lists '%s'", r->ctx.gpu_arch);
		} else if (sel_rc < 0) {
			fail(&oc, "%s", derr.msg);
		} else {
			fail(&oc, "the model needs %ld GPUs and the context has %ld", m->n_gpus,
			     r->ctx.n_gpus);
		}
		if (r->o->dry_run) {
			printf("  would be %s: %s\n", oc.status, oc.reason);
		} else {
			report(r, m, &oc);
			ret = record(r, s, runtime_ngpus, args, &oc, err);
		}
		outcome_release(&oc);
		goto out;
	}

	for (size_t i = 0, k = 0; i < n_dfs && ret == 0 && !got_signal; i++) {
		if (!dfs[i].kept)
			continue;
		struct outcome b = {0};
		char *safe = file_safe(m->name), *log_base;
		log_base = kept > 1 ? rm_xasprintf("%s_%s", safe, dfs[i].stem) : rm_xstrdup(safe);
		free(safe);
		b.exit_code = -1;
		b.tunableop = tunableop;
		b.dockerfile = rm_xstrdup(dfs[i].path);
		b.base_image = rm_xstrdup(dfs[i].base_image);
		b.image = rm_image_name(m->name, dfs[i].stem);
		b.log_file = rm_xasprintf("%s/%s.live.log", r->o->log_dir, log_base);
		in.image = b.image;

		/* A Dockerfile made for a GPU vendor cannot run on a host without GPUs: say so
		 * before pulling a base image of tens of GB. */
		const char *want =
		    json_string_value(json_object_get(dfs[i].context_req, "gpu_vendor"));
		if (r->o->dry_run) {
			print_plan(r, m, &dfs[i], &in);
			if (want && !r->ctx.gpu_vendor)
				printf(
				    "  would fail: it is for %s GPUs and this context has none\n",
				    want);
		} else if (want && !r->ctx.gpu_vendor) {
			fail(&b,
			     "'%s' is for %s GPUs (its CONTEXT line) and no GPU was found on "
			     "this host; give --additional-context '{\"gpu_vendor\": \"%s\"}' "
			     "to build and run it anyway",
			     dfs[i].path, want, want);
			report(r, m, &b);
			if (record(r, s, runtime_ngpus, args, &b, err) < 0)
				ret = -1;
		} else {
			rm_error berr = RM_ERROR_INIT;
			struct summary sm = {0};
			if (build_image(r, m, &dfs[i], log_base, &b, &berr) < 0) {
				if (got_signal)
					fail(&b, "interrupted by %s during the build",
					     signal_name());
				else
					fail(&b, "build failed: %s", berr.msg);
				report(r, m, &b);
				if (record(r, s, runtime_ngpus, args, &b, err) < 0)
					ret = -1;
			}
			for (long rep = 1; !b.status && rep <= r->o->repeat && ret == 0; rep++) {
				struct outcome oc = {0};
				outcome_from_build(&oc, &b, rep == 1);
				oc.repeat = rep;
				oc.log_file = r->o->repeat > 1
						  ? rm_xasprintf("%s/%s.r%ld.live.log",
								 r->o->log_dir, log_base, rep)
						  : rm_xstrdup(b.log_file);
				if (run_container(r, s, &in, k++, &oc) < 0)
					ret = -1;
				if (!oc.status)
					fail(&oc, "unknown failure");
				report(r, m, &oc);
				summary_collect(&sm, &oc);
				if (record(r, s, runtime_ngpus, args, &oc, err) < 0)
					ret = -1;
				outcome_release(&oc);
				if (got_signal)
					ret = -1;
			}
			if (r->o->repeat > 1 && sm.n && summary_write(r, m, &sm, err) < 0)
				ret = -1;
			summary_release(&sm);
		}
		free(log_base);
		outcome_release(&b);
	}
out:
	rm_dockerfiles_free(dfs, n_dfs);
	free(args);
	free(tdir);
	return ret;
}

static void sweep(struct run *r)
{
	char *label = rm_xasprintf("run_models.run=%s", r->run_id);
	char **ids = NULL;
	size_t n = 0;
	rm_error err = RM_ERROR_INIT;

	if (rm_docker_list_by_label(r->d, label, &ids, &n, &err) == 0) {
		for (size_t i = 0; i < n; i++) {
			rm_error rerr = RM_ERROR_INIT;
			if (rm_docker_remove(r->d, ids[i], &rerr) < 0)
				rm_warn("could not remove container %s: %s", ids[i], rerr.msg);
		}
	}
	rm_strv_free(ids);
	free(label);
}

/* --additional-context-file: JSON or YAML, applied before any --additional-context. */
static int apply_context_file(rm_context *ctx, const char *path, rm_error *err)
{
	json_t *j = NULL;
	json_error_t je;
	char *text = NULL, *what = NULL, *dumped = NULL;
	size_t len = 0;
	int ret = -1;
	int r = rm_read_file(path, (size_t)16 << 20, &text, &len, err);

	if (r != 0) {
		if (r == 1)
			rm_error_set(err, RM_ERR_INPUT, "cannot open '%s': no such file", path);
		err->kind = RM_ERR_INPUT;
		return rm_error_wrap(err, "--additional-context-file");
	}
	j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!j && !(j = rm_yaml_to_json(text, len, path, err)))
		goto out;
	if (!json_is_object(j)) {
		rm_error_set(err, RM_ERR_INPUT, "'%s' must hold a mapping of context keys", path);
		goto out;
	}
	dumped = json_dumps(j, JSON_COMPACT);
	what = rm_xasprintf("--additional-context-file '%s'", path);
	ret = rm_context_apply(ctx, dumped, what, err);
out:
	free(text);
	json_decref(j);
	free(dumped);
	free(what);
	return ret;
}

/* --sys-env-details: the doctor's findings beside the run's logs. */
static void write_sys_env(struct run *r)
{
	rm_doctor_opts dopt = {"/proc",	      r->o->sysfs_root ? r->o->sysfs_root : "/sys",
			       "/dev",	      r->o->docker_host,
			       r->o->log_dir, 1};
	rm_finding *v = NULL;
	size_t n = 0;
	char *path = rm_xasprintf("%s/%s.sys_env_details.txt", r->o->log_dir, r->run_id);
	FILE *f = fopen(path, "w");

	if (!f) {
		rm_warn("cannot write '%s': %s", path, strerror(errno));
		free(path);
		return;
	}
	rm_doctor_collect(&dopt, &v, &n);
	rm_doctor_print(f, v, n);
	fclose(f);
	rm_info("system details in '%s'", path);
	rm_findings_free(v, n);
	free(path);
}

int rm_runner_run(const rm_run_opts *o, size_t *n_failed, int *interrupted, rm_error *err)
{
	struct run r;
	int ret = -1;
	unsigned rnd = 0;
	FILE *ur;

	memset(&r, 0, sizeof(r));
	r.o = o;
	*interrupted = 0;
	*n_failed = 0;
	/* The run id names containers and rows: time, pid and randomness keep two runners on
	 * one host apart. */
	ur = fopen("/dev/urandom", "r");
	if (!ur || fread(&rnd, sizeof(rnd), 1, ur) != 1)
		rnd = (unsigned)getpid() ^ (unsigned)time(NULL);
	if (ur)
		fclose(ur);
	{
		char ts[32];
		time_t t = time(NULL);
		struct tm tm;
		gmtime_r(&t, &tm);
		strftime(ts, sizeof(ts), "%Y%m%dT%H%M%SZ", &tm);
		snprintf(r.run_id, sizeof(r.run_id), "%s-%ld-%04x", ts, (long)getpid(),
			 rnd & 0xffff);
	}
	if (gethostname(r.machine, sizeof(r.machine)) != 0)
		r.machine[0] = '\0';
	r.machine[sizeof(r.machine) - 1] = '\0';
	r.secrets = rm_secrets_from_env(environ, &r.n_secrets);
	rm_mask_init(&r.mask, (const char *const *)r.secrets, r.n_secrets);
	reason_mask = &r.mask;
	if (o->progress && !o->dry_run)
		r.progress_mode = isatty(STDERR_FILENO) && !o->live_output ? 1 : 2;

	if (rm_registry_load(&r.reg, o->root, err) < 0)
		goto out;
	if (rm_select(&r.reg, o->tags, o->n_tags, &r.sel, err) < 0)
		goto out;
	if (rm_context_detect(&r.ctx, o->sysfs_root ? o->sysfs_root : "/sys", 1, err) < 0)
		goto out;
	for (size_t i = 0; i < o->n_context_files; i++)
		if (apply_context_file(&r.ctx, o->context_files[i], err) < 0)
			goto out;
	for (size_t i = 0; i < o->n_contexts; i++)
		if (rm_context_apply(&r.ctx, o->contexts[i], "--additional-context", err) < 0)
			goto out;
	if (o->dry_run) {
		printf(
		    "dry run %s: %zu model(s); context: vendor %s, %ld GPU(s), arch %s; no engine "
		    "contacted\n",
		    r.run_id, r.sel.n, r.ctx.gpu_vendor ? r.ctx.gpu_vendor : "none", r.ctx.n_gpus,
		    r.ctx.gpu_arch ? r.ctx.gpu_arch : "none");
		for (size_t i = 0; i < r.sel.n; i++)
			run_model(&r, &r.sel.items[i], err);
		ret = 0;
		goto out;
	}
	if (rm_docker_open(&r.d, o->docker_host, err) < 0)
		goto out;
	r.git_commit = git_commit_of(o->root);
	rm_info("run %s: %zu model(s), Docker API %s at %s", r.run_id, r.sel.n,
		rm_docker_api_version(r.d), rm_docker_host(r.d));
	if (o->sys_env_details)
		write_sys_env(&r);

	ret = 0;
	for (size_t i = 0; i < r.sel.n && !got_signal; i++) {
		if (run_model(&r, &r.sel.items[i], err) < 0) {
			if (!got_signal) {
				ret = -1; /* perf.csv could not be written */
				break;
			}
		}
	}
	/* The label sweep costs a request: only when a removal failed or a signal came. */
	if ((!o->keep_alive && r.unremoved) || got_signal)
		sweep(&r);
	if (got_signal) {
		*interrupted = got_signal;
		ret = rm_error_set(err, RM_ERR_NONE, "interrupted by %s", signal_name());
	}
	*n_failed = r.n_failed;
out:
	reason_mask = NULL;
	rm_mask_release(&r.mask);
	rm_strv_free(r.secrets);
	rm_docker_close(r.d);
	free(r.git_commit);
	rm_context_release(&r.ctx);
	rm_selection_release(&r.sel);
	rm_registry_release(&r.reg);
	return ret;
}
