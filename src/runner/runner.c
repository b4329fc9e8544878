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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rm/csv.h"
#include "rm/docker.h"
#include "rm/frame.h"
#include "rm/hash.h"
#include "rm/log.h"
#include "rm/parser.h"
#include "rm/runner.h"
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
    "timestamp", "run_id", "reason", "tunableop", "exit_code", "log_file"};
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
	C_REASON,
	C_TUNABLEOP,
	C_EXIT,
	C_LOG,
};

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
};

/* What one container run produced. */
struct outcome {
	const char *status; /* SUCCESS FAILURE SKIPPED */
	char *reason;
	double build_s;
	double test_s;
	long exit_code; /* -1 when none */
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
	oc->status = "FAILURE";
	free(oc->reason);
	va_start(ap, fmt);
	oc->reason = rm_xvasprintf(fmt, ap);
	va_end(ap);
}

static char *file_safe(const char *name)
{
	char *s = rm_xstrdup(name);
	for (char *p = s; *p; p++)
		if (*p == '/' || *p == ' ')
			*p = '_';
	return s;
}

static char *git_commit_of(const char *root)
{
	char *cmd = rm_xasprintf("git -C '%s' rev-parse HEAD 2>/dev/null", root);
	FILE *p = strchr(root, '\'') ? NULL : popen(cmd, "r");
	char line[128] = "";
	free(cmd);
	if (!p)
		return rm_xstrdup("");
	if (!fgets(line, sizeof(line), p))
		line[0] = '\0';
	pclose(p);
	line[strcspn(line, "\r\n")] = '\0';
	return rm_xstrdup(line);
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

/* Appends the perf.csv rows of one outcome (one row, or one per multiple_results row), and
 * its metrics to perf_<model>.csv. */
static int record(struct run *r, const rm_selected *s, long runtime_ngpus, const char *args,
		  struct outcome *oc, rm_error *err)
{
	const rm_model *m = s->model;
	char ts[32], ngpus[32], build_s[32], test_s[32], exit_code[32];
	char *tags = join_tags(m), *perf = NULL;
	const char *base[PERF_COLS] = {0};
	const char **rows = NULL;
	size_t n_rows = oc->mr_n ? oc->mr_n : 1;
	int ret = -1;

	rm_utc_timestamp(ts, sizeof(ts));
	snprintf(ngpus, sizeof(ngpus), "%ld", runtime_ngpus);
	snprintf(build_s, sizeof(build_s), "%.3f", oc->build_s);
	snprintf(test_s, sizeof(test_s), "%.3f", oc->test_s);
	if (oc->exit_code >= 0)
		snprintf(exit_code, sizeof(exit_code), "%ld", oc->exit_code);
	else
		exit_code[0] = '\0';
	base[C_MODEL] = m->name;
	base[C_NGPUS] = ngpus;
	base[C_NNODES] = "1";
	base[C_GPN] = ngpus;
	base[C_PREC] = m->training_precision;
	base[C_ARGS] = args;
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
	base[C_REASON] = oc->reason;
	base[C_TUNABLEOP] = m->tunableop;
	base[C_EXIT] = exit_code;
	base[C_LOG] = oc->log_file;

	rows = rm_xcalloc(n_rows * PERF_COLS, sizeof(*rows));
	char **names = rm_xcalloc(n_rows, sizeof(*names));
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
	for (size_t i = 0; i < n_rows; i++)
		free(names[i]);
	free(names);
	free(rows);
	free(perf);
	free(tags);
	return ret;
}

/* Streaming */

struct stream {
	FILE *log;
	int live;
	rm_lines lines;
	rm_parser parser;
	double deadline; /* monotonic seconds, 0 = none */
	int timed_out;
	double last_flush;
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

static void on_stdout_line(void *ud, const char *line, size_t len)
{
	struct stream *st = ud;
	rm_parser_feed(&st->parser, line, len);
}

static void on_frame(void *ud, int stream, const char *data, size_t len)
{
	struct stream *st = ud;
	fwrite(data, 1, len, st->log);
	if (stream == RM_STREAM_STDOUT) {
		if (st->live)
			fwrite(data, 1, len, stdout);
		rm_lines_feed(&st->lines, data, len, on_stdout_line, st);
	} else if (st->live) {
		fwrite(data, 1, len, stderr);
	}
	flush_log(st, 0);
}

static int cancel_stream(void *ud)
{
	struct stream *st = ud;
	flush_log(st, 0); /* a quiet container's last lines still reach the file */
	if (got_signal)
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
	FILE *f;
	int live;
};

static void on_build_line(void *ud, const char *line, size_t len)
{
	struct build_log *b = ud;
	fwrite(line, 1, len, b->f);
	fputc('\n', b->f);
	if (b->live) {
		fwrite(line, 1, len, stdout);
		fputc('\n', stdout);
	}
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

/* SHA-256 over the context tar, the Dockerfile name, the build args and the id of the base
 * image as the engine has it now (a re-pulled base makes a new fingerprint). */
static void fingerprint(struct run *r, const rm_dockerfile *df, int tar_fd, const char *df_name,
			json_t *args, char out[65])
{
	rm_hash *h = rm_hash_new();
	char *js = json_dumps(args, JSON_COMPACT | JSON_SORT_KEYS);
	json_t *base = NULL;
	rm_error ierr = RM_ERROR_INIT;

	rm_hash_fd(h, tar_fd);
	rm_hash_update(h, df_name, strlen(df_name) + 1);
	if (js)
		rm_hash_update(h, js, strlen(js) + 1);
	if (df->base_image && strcmp(df->base_image, "scratch") &&
	    rm_docker_image_inspect(r->d, df->base_image, &base, &ierr) == 0) {
		const char *id = json_string_value(json_object_get(base, "Id"));
		if (id)
			rm_hash_update(h, id, strlen(id));
	}
	json_decref(base);
	free(js);
	rm_hash_final_hex(h, out);
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

static int build_image(struct run *r, const rm_model *m, const rm_dockerfile *df,
		       const char *log_base, struct outcome *oc, rm_error *err)
{
	char *tar_path = NULL, *df_name = NULL, *log_path = NULL;
	int fd = -1, ret = -1;
	json_t *args = json_object(), *labels = json_object();
	struct build_log bl = {NULL, r->o->live_output};
	double t0 = rm_now();

	log_path = rm_xasprintf("%s/%s.build.log", r->o->log_dir, log_base);
	bl.f = fopen(log_path, "w");
	if (!bl.f) {
		rm_error_set(err, RM_ERR_IO, "cannot write '%s': %s", log_path, strerror(errno));
		goto out;
	}
	fd = make_temp(&tar_path, err);
	if (fd < 0)
		goto out;
	if (rm_tar_build_context(m->dockercontext, df->path, fd, &df_name, err) < 0) {
		rm_error_wrap(err, "build context '%s'", m->dockercontext);
		goto out;
	}
	if (r->ctx.gpu_arch)
		json_object_set_new(args, "MAD_SYSTEM_GPU_ARCHITECTURE",
				    json_string(r->ctx.gpu_arch));
	for (size_t i = 0; i < r->ctx.n_docker_build_arg; i++)
		json_object_set_new(args, r->ctx.docker_build_arg[i].key,
				    json_string(r->ctx.docker_build_arg[i].value));
	/* The image is up to date when its fingerprint label matches the context, the build
	 * args and the base image as they are now: skip the build (a fully cached build still
	 * costs the engine a context upload and a cache lookup per step). */
	char fp[65];
	fingerprint(r, df, fd, df_name, args, fp);
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
	if (ret < 0) {
		fprintf(bl.f, "run_models: build failed: %s\n", err->msg);
		rm_error_wrap(err, "building '%s' from '%s' (see %s)", oc->image, df->path,
			      log_path);
	}
out:
	oc->build_s = rm_now() - t0;
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

/* Copies the scripts folder into the container below /myworkspace. */
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
static int run_container(struct run *r, const rm_selected *s, long runtime_ngpus, size_t k,
			 struct outcome *oc)
{
	const rm_model *m = s->model;
	rm_error err = RM_ERROR_INIT;
	rm_spec_in in = {m,
			 &r->ctx,
			 s->extra_args,
			 oc->image,
			 r->run_id,
			 (const char *const *)environ,
			 runtime_ngpus};
	json_t *body = NULL;
	char *name = container_name(r, m, k), *id = NULL;
	const char *parser = r->o->parser ? r->o->parser : m->parser;
	struct stream st = {0};
	double timeout = r->o->timeout >= 0 ? r->o->timeout
			 : m->timeout > 0   ? m->timeout
					    : RM_DEFAULT_TIMEOUT;
	long status = -1;
	double t0;
	int rc, ret = 0;

	st.live = r->o->live_output;
	rm_lines_init(&st.lines, LINE_MAX_BYTES);
	if (rm_parser_start(&st.parser, parser ? parser : "generic", NULL) < 0) {
		fail(oc, "unknown parser '%s' (model field 'parser' or --parser)", parser);
		goto out;
	}
	st.log = fopen(oc->log_file, "w");
	if (!st.log) {
		fail(oc, "cannot write '%s': %s", oc->log_file, strerror(errno));
		goto out;
	}
	setvbuf(st.log, NULL, _IOFBF, 1 << 16);
	if (rm_spec_body(&in, &body, &err) < 0 ||
	    rm_docker_create(r->d, name, body, &id, &err) < 0 || copy_scripts(r, m, id, &err) < 0) {
		fail(oc, "%s", err.msg);
		goto out;
	}
	t0 = rm_now();
	if (timeout > 0)
		st.deadline = t0 + timeout;
	rc = rm_docker_attach_start(r->d, id, 0, on_frame, &st, cancel_stream, &st, &err);
	if (rc == RM_DOCKER_CANCELLED || rc < 0) {
		rm_error kerr = RM_ERROR_INIT;
		/* Kill first: the container must not outlive its budget by more than the
		 * progress-callback period. */
		if (rm_docker_kill(r->d, id, "SIGKILL", &kerr) < 0)
			rm_warn("%s", kerr.msg);
		if (got_signal) {
			fail(oc, "interrupted by %s", got_signal == SIGTERM ? "SIGTERM" : "SIGINT");
			ret = -1;
		} else if (st.timed_out) {
			fail(oc, "timed out after %g s (the container was killed)", timeout);
		} else {
			fail(oc, "%s", err.msg);
		}
	}
	if (!got_signal &&
	    rm_docker_wait(r->d, id, "not-running", &status, cancel_signal, NULL, &err) == 0)
		oc->exit_code = status;
	oc->test_s = rm_now() - t0;
	rm_lines_flush(&st.lines, on_stdout_line, &st);
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
		rm_info("kept container '%s'; inspect it with 'docker start -ai %s' or "
			"'docker commit %s', remove it with 'docker rm -f %s'",
			name, name, name, name);
	} else if (id) {
		rm_error rerr = RM_ERROR_INIT;
		if (rm_docker_remove(r->d, id, &rerr) < 0)
			rm_warn("could not remove container '%s': %s", name, rerr.msg);
	}
	if (st.log)
		fclose(st.log);
	if (st.live)
		fflush(stdout);
	rm_parser_stop(&st.parser);
	rm_lines_release(&st.lines);
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

/* Runs one selected model: every kept Dockerfile gives one container and its rows. */
static int run_model(struct run *r, const rm_selected *s, rm_error *err)
{
	const rm_model *m = s->model;
	rm_dockerfile *dfs = NULL;
	size_t n_dfs = 0, kept = 0;
	rm_error derr = RM_ERROR_INIT;
	long runtime_ngpus = m->n_gpus < 0 ? r->ctx.n_gpus : m->n_gpus;
	rm_spec_in in = {m, &r->ctx, s->extra_args, NULL, r->run_id, NULL, runtime_ngpus};
	char *args = rm_spec_args(&in);
	int ret = 0;

	rm_info("model '%s'", m->name);
	int sel_rc = rm_dockerfiles_select(m->dockerfile, &r->ctx, &dfs, &n_dfs, &derr);
	for (size_t i = 0; i < n_dfs; i++)
		kept += dfs[i].kept != 0;

	if (arch_skipped(m, r->ctx.gpu_arch) || sel_rc < 0 ||
	    (m->n_gpus > 0 && m->n_gpus > r->ctx.n_gpus)) {
		struct outcome oc = {0};
		oc.exit_code = -1;
		char *safe = file_safe(m->name);
		oc.log_file = rm_xasprintf("%s/%s.live.log", r->o->log_dir, safe);
		free(safe);
		if (arch_skipped(m, r->ctx.gpu_arch)) {
			oc.status = "SKIPPED";
			oc.reason = rm_xasprintf("skip_gpu_arch lists '%s'", r->ctx.gpu_arch);
		} else if (sel_rc < 0) {
			fail(&oc, "%s", derr.msg);
		} else {
			fail(&oc, "the model needs %ld GPUs and the context has %ld", m->n_gpus,
			     r->ctx.n_gpus);
		}
		free(oc.log_file);
		oc.log_file = NULL;
		if (oc.status[0] == 'F') {
			r->n_failed++;
			rm_warn("model '%s' failed: %s", m->name, oc.reason);
		} else {
			rm_info("model '%s' skipped: %s", m->name, oc.reason);
		}
		ret = record(r, s, runtime_ngpus, args, &oc, err);
		outcome_release(&oc);
		goto out;
	}

	for (size_t i = 0, k = 0; i < n_dfs && ret == 0; i++) {
		if (!dfs[i].kept)
			continue;
		struct outcome oc = {0};
		char *safe = file_safe(m->name), *log_base;
		log_base = kept > 1 ? rm_xasprintf("%s_%s", safe, dfs[i].stem) : rm_xstrdup(safe);
		free(safe);
		oc.exit_code = -1;
		oc.dockerfile = rm_xstrdup(dfs[i].path);
		oc.base_image = rm_xstrdup(dfs[i].base_image);
		oc.image = rm_image_name(m->name, dfs[i].stem);
		oc.log_file = rm_xasprintf("%s/%s.live.log", r->o->log_dir, log_base);
		rm_error berr = RM_ERROR_INIT;
		if (build_image(r, m, &dfs[i], log_base, &oc, &berr) < 0) {
			if (got_signal)
				fail(&oc, "interrupted by %s during the build",
				     got_signal == SIGTERM ? "SIGTERM" : "SIGINT");
			else
				fail(&oc, "build failed: %s", berr.msg);
		} else if (run_container(r, s, runtime_ngpus, k++, &oc) < 0) {
			ret = -1;
		}
		if (!oc.status)
			fail(&oc, "unknown failure");
		if (!strcmp(oc.status, "FAILURE")) {
			r->n_failed++;
			rm_warn("model '%s' failed: %s", m->name, oc.reason);
		} else {
			rm_info("model '%s': %s %s %s", m->name, oc.status,
				oc.mr_n ? "(multiple results)" : "",
				oc.pr.performance_metric ? oc.pr.performance_metric : "");
		}
		if (record(r, s, runtime_ngpus, args, &oc, err) < 0)
			ret = -1;
		free(log_base);
		outcome_release(&oc);
		if (got_signal)
			ret = -1;
	}
out:
	rm_dockerfiles_free(dfs, n_dfs);
	free(args);
	return ret;
}

/* Removes whatever containers of this run are left (belt and braces after a failure). */
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

	if (rm_registry_load(&r.reg, o->root, err) < 0)
		goto out;
	if (rm_select(&r.reg, o->tags, o->n_tags, &r.sel, err) < 0)
		goto out;
	if (rm_context_detect(&r.ctx, o->sysfs_root ? o->sysfs_root : "/sys", 1, err) < 0)
		goto out;
	for (size_t i = 0; i < o->n_contexts; i++)
		if (rm_context_apply(&r.ctx, o->contexts[i], "--additional-context", err) < 0)
			goto out;
	if (rm_docker_open(&r.d, o->docker_host, err) < 0)
		goto out;
	r.git_commit = git_commit_of(o->root);
	rm_info("run %s: %zu model(s), Docker API %s at %s", r.run_id, r.sel.n,
		rm_docker_api_version(r.d), rm_docker_host(r.d));

	ret = 0;
	for (size_t i = 0; i < r.sel.n && !got_signal; i++) {
		if (run_model(&r, &r.sel.items[i], err) < 0) {
			if (!got_signal) {
				ret = -1; /* perf.csv could not be written */
				break;
			}
		}
	}
	if (!o->keep_alive || got_signal)
		sweep(&r);
	if (got_signal) {
		*interrupted = got_signal;
		ret = rm_error_set(err, RM_ERR_NONE, "interrupted by %s",
				   got_signal == SIGTERM ? "SIGTERM" : "SIGINT");
	}
	*n_failed = r.n_failed;
out:
	rm_docker_close(r.d);
	free(r.git_commit);
	rm_context_release(&r.ctx);
	rm_selection_release(&r.sel);
	rm_registry_release(&r.reg);
	return ret;
}
