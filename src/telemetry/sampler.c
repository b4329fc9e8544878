/*
 * The sampler: one thread per run, woken by its own deadlines (AMD: every interval) or by
 * nvidia-smi's lines (NVIDIA), stopped through a pipe. Why a thread and not the runner's
 * poll loop: that loop runs about every 200 ms and between output frames, so it can neither
 * keep 10 Hz nor afford a slow sysfs read (amdgpu answers some reads in milliseconds, a hung
 * one never) without delaying the output and the timeout. The thread shares nothing with the
 * stream but the aggregate, under a mutex held only to add a reading or to read the
 * figures, never across I/O.
 *
 * Lifetime: the state is counted (caller and thread); whoever drops it last frees it. A
 * thread that does not stop within RM_TELEM_STOP_WAIT (a sysfs read stuck in the driver) is
 * detached and frees the state when it returns; the run goes on with the figures so far.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "telemetry_internal.h"
#include "rm/util.h"

const rm_choice rm_telemetry_words[] = {
    {"auto", RM_TELEMETRY_AUTO}, {"on", RM_TELEMETRY_ON}, {"off", RM_TELEMETRY_OFF}, {NULL, 0}};

#define FLUSH_EVERY 1.0 /* seconds between flushes of the series */
#define LINE_MAX_   4096

struct rm_telem {
	pthread_t th;
	pthread_mutex_t mu;
	int refs; /* under mu: the caller and the thread */
	int stop_fd[2];
	int nvidia;
	double interval;
	size_t n;
	long *gpus;
	double t0;
	double stop_at; /* under mu: readings after it are not the run's */
	struct rm_telem__amd *amd;
	rm_telem_sample *samples; /* AMD: one reading per GPU, reused */
	rm_telem_agg *agg;	  /* under mu */
	FILE *series;
	double last_flush;
	int series_errno;
	/* NVIDIA */
	char **argv;
	char *nvsmi;   /* its path */
	size_t n_read; /* samples read from it */
	rm_lines lines;
	int in_piece;	      /* the last line handed over was a piece of a longer one */
	char first_junk[160]; /* the first line that was no sample (an error, usually) */
	rm_error error;	      /* why sampling ended early; under mu */
};

static void sampler_release(rm_telem *t)
{
	int last;

	/* Through the mutex, not an atomic: whoever frees sees everything the other did. */
	pthread_mutex_lock(&t->mu);
	last = --t->refs == 0;
	pthread_mutex_unlock(&t->mu);
	if (!last)
		return;
	if (t->series)
		fclose(t->series);
	rm_telem__amd_close(t->amd);
	rm_telem_agg_free(t->agg);
	rm_strv_free(t->argv);
	free(t->nvsmi);
	rm_lines_release(&t->lines);
	close(t->stop_fd[0]);
	close(t->stop_fd[1]);
	pthread_mutex_destroy(&t->mu);
	free(t->samples);
	free(t->gpus);
	free(t);
}

/* The first reason sampling ended early; errnum: the failed call's errno, or 0. */
static void sampler_error(rm_telem *t, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void sampler_error(rm_telem *t, int errnum, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&t->mu);
	if (t->error.kind == RM_ERR_NONE)
		rm_error_sys(&t->error, RM_ERR_IO, errnum, "%s", msg);
	pthread_mutex_unlock(&t->mu);
}

/* ---- the series file ---- */

static void series_num(FILE *f, double v, const char *fmt)
{
	fputc(',', f);
	if (isfinite(v))
		fprintf(f, fmt, v);
}

static void series_row(rm_telem *t, double now, size_t i, const rm_telem_sample *s)
{
	FILE *f = t->series;

	if (!f || t->series_errno)
		return;
	fprintf(f, "%.3f,%ld", now - t->t0, t->gpus[i]);
	series_num(f, s->power_w, "%.3f");
	series_num(f, s->temp_c, "%.1f");
	series_num(f, s->vram_mib, "%.1f");
	series_num(f, s->util_pct, "%.0f");
	series_num(f, s->sclk_mhz, "%.0f");
	series_num(f, s->power_limit_w > 0 ? s->power_limit_w : NAN, "%.0f");
	fputc(',', f);
	for (int c = 0, first = 1; c < RM_THROTTLE_CAUSES; c++)
		if (s->causes & s->causes_known & (1u << c)) {
			fprintf(f, "%s%s", first ? "" : "|", rm_throttle_causes[c].word);
			first = 0;
		}
	fputc('\n', f);
}

static void series_flush(rm_telem *t, double now, int force)
{
	if (!t->series || t->series_errno || (!force && now - t->last_flush < FLUSH_EVERY))
		return;
	t->last_flush = now;
	if (fflush(t->series) != 0 || ferror(t->series))
		t->series_errno = errno ? errno : EIO;
}

static void sampler_add(rm_telem *t, size_t i, double now, const rm_telem_sample *s)
{
	int late;

	pthread_mutex_lock(&t->mu);
	late = t->stop_at > 0 && now > t->stop_at;
	if (!late)
		rm_telem_agg_add(t->agg, i, now, s);
	pthread_mutex_unlock(&t->mu);
	if (!late)
		series_row(t, now, i, s);
}

/* Waits up to `seconds` for the stop byte; non-zero when it came. */
static int sampler_stop_requested(rm_telem *t, double seconds)
{
	struct pollfd p = {t->stop_fd[0], POLLIN, 0};
	int ms = seconds > 0 ? (int)ceil(seconds * 1000) : 0, r;

	do
		r = poll(&p, 1, ms);
	while (r < 0 && errno == EINTR);
	return r > 0;
}

/* ---- AMD: sysfs on a fixed cadence ---- */

static void sampler_loop_amd(rm_telem *t)
{
	double next = t->t0;

	for (;;) {
		double now = rm_now();
		for (size_t i = 0; i < t->n; i++)
			rm_telem__amd_read(t->amd, i, &t->samples[i]);
		now = rm_now(); /* the instant the readings stand for: after the reads */
		for (size_t i = 0; i < t->n; i++)
			sampler_add(t, i, now, &t->samples[i]);
		series_flush(t, now, 0);
		/* A late tick (a slow read) is skipped, never made up in a burst. */
		next += t->interval;
		now = rm_now();
		while (next <= now)
			next += t->interval;
		if (sampler_stop_requested(t, next - now))
			return;
	}
}

/* ---- NVIDIA: nvidia-smi's lines as they come ---- */

static void on_nvsmi_line(void *ud, const char *line, size_t len, int kind)
{
	rm_telem *t = ud;
	rm_telem_sample s;
	long gpu;
	double now = rm_now();
	int cut = t->in_piece || kind != RM_LINE_WHOLE;

	(void)len;
	t->in_piece = kind == RM_LINE_PIECE;
	/* A line cut short (nvidia-smi killed mid-write, an over-long line) is never a sample:
	 * "0, 380.42, 37, 45000, 100, 19" would read as a clock of 19 MHz. */
	if (cut || rm_telem_parse_nvsmi(line, &gpu, &s) < 0) {
		if (!t->first_junk[0] && *line)
			snprintf(t->first_junk, sizeof(t->first_junk), "%s", line);
		return;
	}
	t->n_read++;
	for (size_t i = 0; i < t->n; i++)
		if (t->gpus[i] == gpu) {
			sampler_add(t, i, now, &s);
			break;
		}
}

/* One nvidia-smi: its lines until the stop or its end. 1 when it ended by itself with
 * status *status, 0 when stopped, -1 when it could not start. */
static int sampler_run_nvsmi(rm_telem *t, int *status)
{
	pid_t pid;
	int fd, ended = 0;
	char buf[4096];

	if (rm_telem__spawn(t->argv, &pid, &fd) < 0)
		return -1;
	for (;;) {
		struct pollfd p[2] = {{t->stop_fd[0], POLLIN, 0}, {fd, POLLIN, 0}};
		int r = poll(p, 2, (int)(FLUSH_EVERY * 1000));
		ssize_t n;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || (p[0].revents & POLLIN))
			break;
		series_flush(t, rm_now(), 0);
		if (!(p[1].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rm_lines_flush(&t->lines, on_nvsmi_line, t);
			*status = rm_telem__reap(pid);
			pid = -1;
			ended = 1;
			break;
		}
		rm_lines_feed(&t->lines, buf, (size_t)n, on_nvsmi_line, t);
	}
	close(fd);
	if (pid > 0)
		rm_telem__reap(pid);
	return ended;
}

static void sampler_loop_nvidia(rm_telem *t)
{
	int status = 0, rc = sampler_run_nvsmi(t, &status);

	if (rc < 0) {
		sampler_error(t, errno, "cannot start '%s'", t->argv[0]);
		return;
	}
	/* Refused at once without a sample: a driver before 535 may know the clock event
	 * reasons only by their older name. */
	if (rc == 1 && !t->n_read && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		char first[sizeof(t->first_junk)];
		int old_status = status;
		memcpy(first, t->first_junk, sizeof(first));
		t->first_junk[0] = '\0';
		t->in_piece = 0;
		rm_strv_free(t->argv);
		t->argv = rm_telem__nvsmi_argv(t->nvsmi, t->gpus, t->n, t->interval, 1);
		rc = sampler_run_nvsmi(t, &status);
		if (!t->n_read) { /* no better: the first refusal says more */
			rc = 1;
			status = old_status;
			memcpy(t->first_junk, first, sizeof(first));
		} else if (rc < 0) {
			rc = 0;
		}
	}
	if (rc == 1)
		sampler_error(t, 0, "nvidia-smi ended during the run (%s%d)%s%s",
			      WIFSIGNALED(status) ? "signal " : "exit status ",
			      WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status),
			      t->first_junk[0] ? ": " : "", t->first_junk);
}

static void *sampler_main(void *arg)
{
	rm_telem *t = arg;

	if (t->nvidia)
		sampler_loop_nvidia(t);
	else
		sampler_loop_amd(t);
	series_flush(t, rm_now(), 1);
	sampler_release(t);
	return NULL;
}

/* ---- start and stop ---- */

static int sampler_open_source(rm_telem *t, const rm_telem_opts *o, rm_error *err)
{
	if (o->vendor && !strcmp(o->vendor, "AMD"))
		return rm_telem__amd_open(&t->amd, o->sysfs_root, o->ctx, t->gpus, t->n, err);
	if (o->vendor && !strcmp(o->vendor, "NVIDIA")) {
		char *path = rm_which("nvidia-smi");
		if (!path)
			return rm_error_set(err, RM_ERR_IO, "nvidia-smi is not on PATH");
		t->nvidia = 1;
		t->argv = rm_telem__nvsmi_argv(path, t->gpus, t->n, t->interval, 0);
		rm_lines_init(&t->lines, LINE_MAX_);
		t->nvsmi = path;
		return 0;
	}
	return rm_error_set(err, RM_ERR_INPUT, "no telemetry for GPU vendor '%s'",
			    o->vendor ? o->vendor : "(none)");
}

int rm_telem_start(rm_telem **out, const rm_telem_opts *o, rm_error *err)
{
	rm_telem *t = rm_xcalloc(1, sizeof(*t));
	sigset_t all, old;
	int rc;

	*out = NULL;
	t->stop_fd[0] = t->stop_fd[1] = -1;
	pthread_mutex_init(&t->mu, NULL);
	t->refs = 1;
	t->series = o->series;
	t->interval = o->interval > 0 ? o->interval : RM_TELEM_INTERVAL;
	t->n = o->n_gpus > RM_TELEM_MAX_GPUS ? RM_TELEM_MAX_GPUS : o->n_gpus;
	t->gpus = rm_xcalloc(t->n ? t->n : 1, sizeof(*t->gpus));
	memcpy(t->gpus, o->gpus, t->n * sizeof(*t->gpus));
	t->samples = rm_xcalloc(t->n ? t->n : 1, sizeof(*t->samples));
	if (!t->n) {
		rm_error_set(err, RM_ERR_INPUT, "no GPU to sample");
		goto fail;
	}
	if (sampler_open_source(t, o, err) < 0)
		goto fail;
	if (pipe2(t->stop_fd, O_CLOEXEC) < 0) {
		rm_error_sys(err, RM_ERR_IO, errno, "pipe");
		goto fail;
	}
	if (t->series) {
		fprintf(t->series, "%s\n", RM_TELEM_SERIES_HEADER);
		series_flush(t, rm_now(), 1);
	}
	t->t0 = rm_now();
	t->last_flush = t->t0;
	t->agg = rm_telem_agg_new(t->n, t->gpus, t->t0);
	/* The thread takes no signal: the runner's handlers stay in the runner's thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	t->refs = 2;
	rc = pthread_create(&t->th, NULL, sampler_main, t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		t->refs = 1;
		rm_error_sys(err, RM_ERR_IO, rc, "cannot start the sampling thread");
		goto fail;
	}
	*out = t;
	return 0;
fail:
	sampler_release(t);
	return -1;
}

int rm_telem_stop(rm_telem *t, rm_telem_summary *out, rm_error *err)
{
	double t_end;
	struct timespec deadline;
	int joined, ret = 0;

	if (!t) {
		rm_telem_summary_none(out);
		return 0;
	}
	pthread_mutex_lock(&t->mu);
	t->stop_at = t_end = rm_now();
	pthread_mutex_unlock(&t->mu);
	/* A pipe with room for a byte: this write cannot fail or block. */
	(void)!rm_write_all(t->stop_fd[1], "x", 1);
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += (time_t)RM_TELEM_STOP_WAIT;
	joined = pthread_timedjoin_np(t->th, NULL, &deadline) == 0;
	if (!joined)
		pthread_detach(t->th);
	pthread_mutex_lock(&t->mu);
	rm_telem_agg_summary(t->agg, t_end, out);
	if (t->error.kind != RM_ERR_NONE) {
		if (err)
			*err = t->error;
		ret = -1;
	}
	pthread_mutex_unlock(&t->mu);
	if (!joined && ret == 0)
		ret =
		    rm_error_set(err, RM_ERR_IO,
				 "the sampler did not stop within %g s (a GPU sensor read hangs); "
				 "the figures stop there",
				 RM_TELEM_STOP_WAIT);
	else if (joined && t->series_errno && ret == 0)
		ret = rm_error_sys(err, RM_ERR_IO, t->series_errno, "cannot write the time series");
	sampler_release(t);
	return ret;
}
