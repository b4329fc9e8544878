/*
 * GPU telemetry of one run (rm/telemetry.h): whether to sample, the GPUs of the workload on
 * this host, the time series beside the run's log, and afterwards the figures as metrics of
 * the outcome (perf_<model>.csv) and notes in the log. The sampling itself runs in the
 * telemetry module's own thread, so nothing here touches the output stream's loop.
 *
 * Sampled here only when the workload runs on this host (the launcher's describe says
 * "local"); a launcher that runs workloads elsewhere (SLURM) has them sampled where they run.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "rm/launcher.h"
#include "rm/parser.h"
#include "rm/telemetry.h"
#include "rm/util.h"

struct telem_run {
	rm_telem *t;
	char *series; /* the time series file */
	int wanted;   /* --telemetry on: say it when nothing can be sampled */
};

/* "<dir>/<model>.<run id>.live.log" -> "<dir>/<model>.<run id>.telemetry.csv" */
static char *telemetry_series_path(const char *log)
{
	size_t n = strlen(log), sl = strlen(".live.log");

	if (n > sl && !strcmp(log + n - sl, ".live.log"))
		return rm_xasprintf("%.*s.telemetry.csv", (int)(n - sl), log);
	return rm_xasprintf("%s.telemetry.csv", log);
}

static void telemetry_not_sampled(struct stream *st, int wanted, const char *model, const char *why)
{
	rm_runner__stream_note(st, "run_models: telemetry: not sampled: %s", why);
	if (wanted)
		rm_warn("model '%s': --telemetry on, but nothing is sampled: %s", model, why);
}

struct telem_run *rm_runner__telemetry_start(struct run *r, const rm_workload *w, struct stream *st,
					     const struct outcome *oc)
{
	rm_telemetry_mode mode = w->set.telemetry;
	struct telem_run *tr;
	rm_error err = RM_ERROR_INIT;
	long *gpus = NULL;
	size_t n = 0;
	char *link = NULL;
	rm_buf ids = RM_BUF_INIT(1 << 16);
	FILE *series = NULL;
	rm_telem_opts to;

	if (mode == RM_TELEMETRY_OFF || !rm_runner__runs_here(r, w))
		return NULL;
	tr = rm_xcalloc(1, sizeof(*tr));
	tr->wanted = mode == RM_TELEMETRY_ON;
	if (rm_workload_gpu_indexes(w, &r->ctx, &gpus, &n, &err) < 0) {
		telemetry_not_sampled(st, tr->wanted, w->model->name, rm_error_text(&err));
		goto fail;
	}
	if (!n) {
		if (tr->wanted)
			telemetry_not_sampled(st, 1, w->model->name, "the run has no GPU");
		goto fail;
	}
	for (size_t i = 0; i < n; i++)
		rm_buf_addf(&ids, "%s%ld", i ? "," : "", gpus[i]);
	if (oc->log_file) {
		tr->series = telemetry_series_path(oc->log_file);
		link = oc->log_link ? telemetry_series_path(oc->log_link) : NULL;
		series = rm_runner__log_create(r, tr->series, link, &err);
		if (!series)
			rm_runner__stream_note(st, "run_models: telemetry: no time series: %s",
					       rm_error_text(&err));
		else
			setvbuf(series, NULL, _IOFBF, 1 << 14);
	}
	to = (rm_telem_opts){.vendor = r->ctx.gpu_vendor,
			     .sysfs_root = r->o->sysfs_root,
			     .ctx = &r->ctx,
			     .gpus = gpus,
			     .n_gpus = n,
			     .series = series};
	rm_error_clear(&err);
	if (rm_telem_start(&tr->t, &to, &err) < 0) {
		if (series) { /* an empty series says nothing: drop it and its link */
			unlink(tr->series);
			if (link)
				unlink(link);
		}
		telemetry_not_sampled(st, tr->wanted, w->model->name, rm_error_text(&err));
		goto fail;
	}
	rm_runner__stream_note(
	    st, "run_models: telemetry: sampling %s GPU(s) %s every %.0f ms%s%s%s",
	    r->ctx.gpu_vendor, rm_buf_str(&ids), RM_TELEM_INTERVAL * 1000, series ? " into '" : "",
	    series ? tr->series : "", series ? "'" : "");
	free(link);
	free(gpus);
	rm_buf_release(&ids);
	return tr;
fail:
	free(link);
	free(gpus);
	rm_buf_release(&ids);
	free(tr->series);
	free(tr);
	return NULL;
}

static void telemetry_metric(struct outcome *oc, const char *name, double v, const char *unit)
{
	if (isfinite(v))
		rm_result_add(&oc->pr, name, v, unit, -1, "summary");
}

/* One line of the run's figures in its log; what no GPU reported is left out. */
static void telemetry_note(struct stream *st, const rm_telem_summary *s)
{
	rm_buf b = RM_BUF_INIT(1 << 12);

	rm_buf_addf(&b, "%zu GPU(s), %zu readings in %.1f s", s->n_gpus, s->n_samples, s->window_s);
	if (isfinite(s->power_avg_w))
		rm_buf_addf(&b, "; power %.1f W average, %.1f W max, energy %.0f J", s->power_avg_w,
			    s->power_max_w, s->energy_j);
	if (isfinite(s->vram_max_mib))
		rm_buf_addf(&b, "; VRAM max %.0f MiB", s->vram_max_mib);
	if (isfinite(s->util_avg_pct))
		rm_buf_addf(&b, "; busy %.0f%%", s->util_avg_pct);
	if (isfinite(s->temp_max_c))
		rm_buf_addf(&b, "; hottest %.1f C", s->temp_max_c);
	rm_runner__stream_note(st, "run_models: telemetry: %s", rm_buf_str(&b));
	rm_buf_release(&b);
}

/* "the power cap (the GPU at its 700 W limit)": a cause as a note names it. */
static char *cause_text(const rm_telem_summary *s, int c)
{
	if (c == RM_THROTTLE_POWER_CAP && isfinite(s->power_limit_w))
		return rm_xasprintf("%s (the GPU at its %.0f W limit)", rm_throttle_causes[c].what,
				    s->power_limit_w);
	return rm_xstrdup(rm_throttle_causes[c].what);
}

/* Why the clock fell, as far as the driver says: "; cause: ... in N% of busy readings:
 * expected ..." or a problem with its advice; "" when the source names no causes. */
static char *fall_cause(const rm_telem_summary *s, int *problem)
{
	int c = rm_telem_summary_main_cause(s, 0);
	char *what, *r;

	*problem = 1;
	if (!s->n_busy_known)
		return rm_xstrdup("");
	if (c < 0)
		return rm_xstrdup("; the driver named no cause");
	*problem = !rm_throttle_causes[c].expected;
	what = cause_text(s, c);
	r = rm_xasprintf("; cause: %s in %.0f%% of busy readings: %s%s", what, s->cause_pct[c],
			 *problem ? "a problem, " : "expected under full load, not a fault",
			 *problem ? rm_throttle_causes[c].advice : "");
	free(what);
	return r;
}

/* The first clock fall under load, with its cause; a problem cause the fall did not name
 * gets a note of its own. Expected causes are said, not warned about. */
static void telemetry_throttle_notes(struct stream *st, const rm_telem_summary *s,
				     const char *model)
{
	int problem = 0, named = -1;

	if (s->throttle_gpu >= 0) {
		char *why = fall_cause(s, &problem);
		char *what = rm_xasprintf(
		    "GPU %ld's clock fell from %.0f MHz to %.0f MHz at %.1f s while %.0f%% busy "
		    "(throttling: %.0f%% of busy readings ran below %.0f%% of the peak clock)%s",
		    s->throttle_gpu, s->throttle_from_mhz, s->throttle_to_mhz, s->throttle_t,
		    s->throttle_util_pct, s->throttle_pct, 100.0 - RM_TELEM_THROTTLE_DROP_PCT, why);
		rm_runner__stream_note(st, "run_models: telemetry: %s", what);
		if (problem)
			rm_warn("model '%s': %s", model, what);
		else
			rm_info("model '%s': %s", model, what);
		named = rm_telem_summary_main_cause(s, 0);
		free(what);
		free(why);
	}
	if (s->cause_gpu >= 0 && s->cause_first != named) {
		int c = rm_telem_summary_main_cause(s, 1);
		char *cause = cause_text(s, c);
		char *what = rm_xasprintf("GPU %ld: %s from %.1f s, in %.0f%% of busy readings: a "
					  "problem, %s; this run's figures are not what the GPU "
					  "can do",
					  s->cause_gpu, cause, s->cause_t, s->cause_pct[c],
					  rm_throttle_causes[c].advice);
		rm_runner__stream_note(st, "run_models: telemetry: %s", what);
		rm_warn("model '%s': %s", model, what);
		free(what);
		free(cause);
	}
}

/* The figures into the outcome's metrics (perf_<model>.csv) and the log. */
static void telemetry_record(struct stream *st, struct outcome *oc, const rm_telem_summary *s,
			     const char *model)
{
	telemetry_metric(oc, "gpu_power_avg_w", s->power_avg_w, "W");
	telemetry_metric(oc, "gpu_power_max_w", s->power_max_w, "W");
	telemetry_metric(oc, "gpu_energy_j", s->energy_j, "J");
	telemetry_metric(oc, "gpu_vram_max_mib", s->vram_max_mib, "MiB");
	telemetry_metric(oc, "gpu_util_avg_pct", s->util_avg_pct, "%");
	telemetry_metric(oc, "gpu_temp_max_c", s->temp_max_c, "C");
	telemetry_metric(oc, "gpu_throttle_pct", s->throttle_pct, "%");
	for (int c = 0; c < RM_THROTTLE_CAUSES; c++) {
		char name[64];
		snprintf(name, sizeof(name), "gpu_throttle_%s_pct", rm_throttle_causes[c].word);
		telemetry_metric(oc, name, s->cause_pct[c], "%");
	}
	telemetry_metric(oc, "gpu_power_limit_w", s->power_limit_w, "W");
	/* The run's figure over its GPUs' average power; a multiple_results run has several
	 * figures and no one of them is the run's. */
	if (oc->pr.has_performance && !oc->mr_n && s->power_avg_w > 0) {
		char *unit = rm_xasprintf(
		    "%s/W", oc->pr.performance_metric ? oc->pr.performance_metric : "performance");
		telemetry_metric(oc, "performance_per_watt", oc->pr.performance / s->power_avg_w,
				 unit);
		free(unit);
	}
	telemetry_note(st, s);
	telemetry_throttle_notes(st, s, model);
}

void rm_runner__telemetry_finish(struct run *r, struct telem_run *tr, const rm_workload *w,
				 rm_job *job, struct stream *st, struct outcome *oc)
{
	const rm_launcher *L = r->active;
	rm_telemetry_mode mode = w->set.telemetry;
	const char *model = w->model->name;
	rm_telem_summary s;
	rm_error err = RM_ERROR_INIT;

	if (tr) {
		if (rm_telem_stop(tr->t, &s, &err) < 0) {
			rm_runner__stream_note(st, "run_models: telemetry: %s",
					       rm_error_text(&err));
			rm_warn("model '%s': telemetry: %s", model, rm_error_text(&err));
		}
		free(tr->series);
		free(tr);
	} else if (job && L->ops->telemetry && mode != RM_TELEMETRY_OFF &&
		   !rm_runner__runs_here(r, w)) {
		/* Sampled where it ran (SLURM: each node's node-run), merged over the hosts. */
		if (L->ops->telemetry(L->state, job, &s) < 0)
			return;
		rm_runner__stream_note(st, "run_models: telemetry: as the workload's hosts "
					   "sampled it (their *.telemetry.csv beside the logs)");
	} else {
		return;
	}
	telemetry_record(st, oc, &s, model);
}
