/*
 * An outcome (what one run of a workload produced) and its perf rows: the row layout is
 * rm/report.h's; this file fills it from the run, the model, the launcher and the outcome.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "rm/history.h"
#include "rm/util.h"
#include "rm/report.h"

static const rm_mask *reason_mask;

void rm_runner__outcome_set_mask(const rm_mask *m)
{
	reason_mask = m;
}

/* The outcome's status and its reason (masked). */
static void outcome_set(struct outcome *oc, rm_status st, const char *fmt, va_list ap)
{
	char *raw = rm_xvasprintf(fmt, ap);

	oc->status = st;
	free(oc->reason);
	oc->reason = reason_mask ? rm_mask_string(reason_mask, raw) : rm_xstrdup(raw);
	free(raw);
}

void rm_runner__fail(struct outcome *oc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	outcome_set(oc, RM_STATUS_FAILURE, fmt, ap);
	va_end(ap);
}

void rm_runner__skip(struct outcome *oc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	outcome_set(oc, RM_STATUS_SKIPPED, fmt, ap);
	va_end(ap);
}

void rm_runner__outcome_release(struct outcome *oc)
{
	free(oc->reason);
	free(oc->dockerfile);
	free(oc->base_image);
	free(oc->image);
	free(oc->image_id);
	free(oc->log_file);
	free(oc->log_link);
	rm_parse_result_release(&oc->pr);
	rm_strv_free(oc->mr_names);
	rm_strv_free(oc->mr_perf);
	rm_strv_free(oc->mr_metric);
	rm_strv_free(oc->mr_reason);
	rm_parse_result_release(&oc->mr_extra);
	rm_strv_free(oc->mr_extra_model);
	for (size_t i = 0; oc->mr_cells && i < oc->mr_n; i++)
		rm_config_release(&oc->mr_cells[i]);
	free(oc->mr_cells);
	memset(oc, 0, sizeof(*oc));
}

void rm_runner__outcome_report(struct run *r, const rm_model *m, const struct outcome *oc)
{
	if (oc->status == RM_STATUS_FAILURE) {
		r->n_failed++;
		rm_warn("model '%s' %sfailed%s: %s", m->name, rm_color_start(stderr, RM_COLOR_BAD),
			rm_color_end(stderr, RM_COLOR_BAD), oc->reason);
	} else if (oc->status == RM_STATUS_SKIPPED) {
		rm_info("model '%s' %sskipped%s: %s", m->name,
			rm_color_start(stderr, RM_COLOR_WARN), rm_color_end(stderr, RM_COLOR_WARN),
			oc->reason);
	} else if (oc->mr_n) {
		size_t bad = 0;
		for (size_t i = 0; i < oc->mr_n; i++) {
			if (!*oc->mr_reason[i])
				continue;
			bad++;
			r->n_failed++;
			rm_warn("model '%s_%s' failed: %s", m->name, oc->mr_names[i],
				oc->mr_reason[i]);
		}
		if (bad < oc->mr_n)
			rm_info("model '%s': %sSUCCESS%s, %zu results%s", m->name,
				rm_color_start(stderr, RM_COLOR_GOOD),
				rm_color_end(stderr, RM_COLOR_GOOD), oc->mr_n - bad,
				bad ? " (and FAILURE rows, see above)" : "");
	} else {
		/* The figure and its unit together may spell a secret: mask the whole line. */
		char *raw = rm_xasprintf(
		    "model '%s': %sSUCCESS%s, %.6g %s", m->name,
		    rm_color_start(stderr, RM_COLOR_GOOD), rm_color_end(stderr, RM_COLOR_GOOD),
		    oc->pr.performance, oc->pr.performance_metric ? oc->pr.performance_metric : "");
		char *line = rm_mask_string(&r->mask, raw);
		rm_info("%s", line);
		free(line);
		free(raw);
	}
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

/* The cells every row of an outcome shares, and the configuration they start from. */
struct row_text {
	char ts[32], ngpus[32], nnodes[32], gpn[32], build_s[32], test_s[32], exit_code[32],
	    repeat[32], data_s[32], attempt[32];
	char *tags, *args, *perf;
	rm_config params, id;
};

static void base_row(struct run *r, const rm_workload *w, const struct outcome *oc,
		     struct row_text *t, rm_perf_row *row)
{
	const rm_model *m = w->model;
	rm_launch_desc d = {.nnodes = 1};
	char *args = rm_workload_args(w);
	rm_error err = RM_ERROR_INIT;
	rm_launcher *L = rm_runner__launcher(r, w, &err);

	(L ? L : &r->launcher)->ops->describe((L ? L : &r->launcher)->state, w, &d);
	rm_utc_timestamp(t->ts, sizeof(t->ts));
	snprintf(t->ngpus, sizeof(t->ngpus), "%ld", rm_workload_gpus(w, &r->ctx));
	snprintf(t->nnodes, sizeof(t->nnodes), "%ld", d.nnodes);
	snprintf(t->gpn, sizeof(t->gpn), "%ld", d.gpus_per_node);
	snprintf(t->build_s, sizeof(t->build_s), "%.3f", oc->build_s);
	snprintf(t->test_s, sizeof(t->test_s), "%.3f", oc->test_s);
	snprintf(t->repeat, sizeof(t->repeat), "%ld", oc->repeat > 0 ? oc->repeat : 1);
	snprintf(t->attempt, sizeof(t->attempt), "%ld", oc->attempt > 0 ? oc->attempt : 1);
	if (oc->exit_code >= 0)
		snprintf(t->exit_code, sizeof(t->exit_code), "%ld", oc->exit_code);
	else
		t->exit_code[0] = '\0';
	t->tags = join_tags(m);
	t->args = rm_mask_string(&r->mask, args);
	free(args);
	t->params = (rm_config)RM_CONFIG_INIT;
	t->id = (rm_config)RM_CONFIG_INIT;
	rm_runner__config_base(r, w, t->args, &t->params, &t->id);
	t->perf = oc->pr.has_performance ? rm_xasprintf("%.10g", oc->pr.performance) : NULL;

	memset(row, 0, sizeof(*row));
	row->cell[RM_COL_MODEL] = m->name;
	row->cell[RM_COL_NGPUS] = t->ngpus;
	row->cell[RM_COL_NNODES] = t->nnodes;
	row->cell[RM_COL_GPUS_PER_NODE] = t->gpn;
	row->cell[RM_COL_PRECISION] = r->o->precision ? r->o->precision : m->training_precision;
	row->cell[RM_COL_ARGS] = t->args;
	row->cell[RM_COL_TAGS] = t->tags;
	row->cell[RM_COL_DOCKERFILE] = oc->dockerfile;
	row->cell[RM_COL_BASE_DOCKER] = oc->base_image;
	row->cell[RM_COL_DOCKER_SHA] = oc->image_id;
	row->cell[RM_COL_IMAGE] = oc->image;
	row->cell[RM_COL_GIT_COMMIT] = r->git_commit;
	row->cell[RM_COL_MACHINE] = r->machine;
	row->cell[RM_COL_DEPLOYMENT] = d.deployment_type;
	row->cell[RM_COL_LAUNCHER] = d.launcher;
	row->cell[RM_COL_ARCH] = r->ctx.gpu_arch;
	row->cell[RM_COL_STATUS] = rm_status_name(oc->status);
	row->cell[RM_COL_BUILD_DURATION] = t->build_s;
	row->cell[RM_COL_TEST_DURATION] = t->test_s;
	if (w->data.n) {
		/* the names a provider served (madengine leaves the columns empty without) */
		row->cell[RM_COL_DATANAME] = w->data.dataname;
		row->cell[RM_COL_DATA_PROVIDER] = w->data.provider_type;
		row->cell[RM_COL_DATA_SIZE] = oc->data_size;
		snprintf(t->data_s, sizeof(t->data_s), "%.15g", oc->data_s);
		row->cell[RM_COL_DATA_DOWNLOAD] = oc->data_ran ? t->data_s : NULL;
	}
	row->cell[RM_COL_BUILD_NUMBER] = w->build_number;
	row->cell[RM_COL_RUN_OPTIONS] = m->additional_docker_run_options;
	row->cell[RM_COL_TIMESTAMP] = t->ts;
	row->cell[RM_COL_RUN_ID] = r->run_id;
	row->cell[RM_COL_REPEAT] = t->repeat;
	row->cell[RM_COL_REASON] = oc->reason;
	row->cell[RM_COL_TUNABLEOP] = rm_choice_name(rm_tunableop_words, (int)w->tunableop);
	row->cell[RM_COL_EXIT_CODE] = t->exit_code;
	row->cell[RM_COL_LOG_FILE] = oc->log_file;
	row->cell[RM_COL_ATTEMPT] = t->attempt;
	if (!oc->mr_n && oc->pr.has_performance) {
		row->cell[RM_COL_PERFORMANCE] = t->perf;
		row->cell[RM_COL_METRIC] = oc->pr.performance_metric;
	}
}

/* relative_change of each row: against the run's baseline (--baseline: the mean of the
 * latest earlier run of the key there), else against the last SUCCESS row in perf.csv. */
static void relative_changes(struct run *r, rm_perf_row *rows, size_t n, char **rel)
{
	if (!r->o->baseline) {
		rm_perf_relative_changes(r->o->output, rows, n, rel);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const char **c = rows[i].cell;
		char buf[32];
		double v;
		rel[i] = NULL;
		if (c[RM_COL_PERFORMANCE] && rm_parse_double(c[RM_COL_PERFORMANCE], &v) == 0 &&
		    rm_baseline_change(r->o->baseline, c[RM_COL_MODEL], c[RM_COL_METRIC],
				       c[RM_COL_DOCKERFILE], c[RM_COL_ARCH], c[RM_COL_MACHINE],
				       c[RM_COL_CONFIG_KEY], v, buf, sizeof(buf)) == 0)
			rel[i] = rm_xstrdup(buf);
		rows[i].cell[RM_COL_RELATIVE_CHANGE] = rel[i];
	}
}

/* ---- the summary at the end of a run ---- */

static void fmt_seconds(char *buf, size_t size, double s)
{
	long t = s < 0 ? 0 : (long)(s + 0.5);
	if (s < 60)
		snprintf(buf, size, "%.1f s", s < 0 ? 0 : s);
	else if (t < 3600)
		snprintf(buf, size, "%ld:%02ld", t / 60, t % 60);
	else
		snprintf(buf, size, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
}

void rm_runner__summary_init(struct run *r)
{
	static const char *const header[] = {"model", "status", "performance", "metric",
					     "duration"};
	rm_table_init(&r->summary, 5, header);
	/* at 80 columns the metric gives way first, then the model's name */
	rm_table_column(&r->summary, 0, RM_TABLE_SHRINK, 16, 1);
	rm_table_column(&r->summary, 1, RM_TABLE_STATUS, 0, 0);
	rm_table_column(&r->summary, 2, RM_TABLE_RIGHT, 0, 0);
	rm_table_column(&r->summary, 3, RM_TABLE_SHRINK, 10, 0);
	rm_table_column(&r->summary, 4, RM_TABLE_RIGHT, 0, 0);
}

static void summary_rows(struct run *r, rm_perf_row *rows, size_t n, const struct outcome *oc)
{
	char dur[32];

	if (!r->summary.ncols)
		return;
	fmt_seconds(dur, sizeof(dur), oc->test_s);
	for (size_t i = 0; i < n; i++) {
		const char **c = rows[i].cell;
		char *perf = NULL;
		double v;
		/* the figure as the terminal reads it; perf.csv keeps every digit */
		if (c[RM_COL_PERFORMANCE] && rm_parse_double(c[RM_COL_PERFORMANCE], &v) == 0)
			perf = rm_xasprintf("%.6g", v);
		/* a sweep's point: "model[batch_size=8]"; repeats: "model #2" */
		char *model = rm_config_name(c[RM_COL_MODEL], r->o->point);
		char *name = r->o->repeat > 1 ? rm_xasprintf("%s #%s", model, c[RM_COL_REPEAT])
					      : rm_xstrdup(model);
		const char *cells[] = {name, c[RM_COL_STATUS], perf ? perf : c[RM_COL_PERFORMANCE],
				       c[RM_COL_METRIC], dur};
		char *masked[5];
		for (size_t k = 0; k < 5; k++) {
			masked[k] = cells[k] ? rm_mask_string(&r->mask, cells[k]) : NULL;
			cells[k] = masked[k];
		}
		rm_table_add(&r->summary, cells);
		for (size_t k = 0; k < 5; k++)
			free(masked[k]);
		free(perf);
		free(name);
		free(model);
	}
	free(r->last_log);
	r->last_log = rm_xstrdup(oc->log_link ? oc->log_link : oc->log_file);
}

void rm_runner__summary_print(struct run *r)
{
	int width = rm_term_width(stdout);

	if (!r->summary.nrows)
		return;
	fputc('\n', stdout);
	rm_table_print(&r->summary, stdout, "", width > 0 ? (size_t)width : 80);
	printf("results: %s\n", r->o->output);
	if (r->summary.nrows == 1 && r->last_log)
		printf("log:     %s\n", r->last_log);
	else
		printf("logs:    %s/\n", r->o->log_dir);
	fflush(stdout);
}

int rm_runner__record(struct run *r, const rm_selected *s, const rm_workload *w, struct outcome *oc,
		      rm_error *err)
{
	const rm_model *m = s->model;
	struct row_text t;
	rm_perf_row base;
	size_t n = oc->mr_n ? oc->mr_n : 1;
	rm_perf_row *rows = rm_xcalloc(n, sizeof(*rows));
	char **names = rm_xcalloc(n, sizeof(*names));
	char **rel = rm_xcalloc(n, sizeof(*rel));
	char **config = rm_xcalloc(n, sizeof(*config));
	char(*keys)[RM_CONFIG_KEY_LEN + 1] = rm_xcalloc(n, sizeof(*keys));
	int ret;

	base_row(r, w, oc, &t, &base);
	for (size_t i = 0; i < n; i++) {
		rows[i] = base;
		if (oc->mr_n) {
			names[i] = rm_xasprintf("%s_%s", m->name, oc->mr_names[i]);
			rows[i].cell[RM_COL_MODEL] = names[i];
			rows[i].cell[RM_COL_PERFORMANCE] = oc->mr_perf[i];
			rows[i].cell[RM_COL_METRIC] = oc->mr_metric[i];
			if (*oc->mr_reason[i]) {
				rows[i].cell[RM_COL_STATUS] = rm_status_name(RM_STATUS_FAILURE);
				rows[i].cell[RM_COL_REASON] = oc->mr_reason[i];
			}
		}
		rm_runner__config_row(r, &t.params, &t.id, oc->mr_cells ? &oc->mr_cells[i] : NULL,
				      rows[i].cell[RM_COL_METRIC], &config[i], keys[i]);
		rows[i].cell[RM_COL_CONFIG] = config[i];
		rows[i].cell[RM_COL_CONFIG_KEY] = keys[i];
	}
	if (oc->status == RM_STATUS_SUCCESS)
		relative_changes(r, rows, n, rel);
	summary_rows(r, rows, n, oc);
	ret = rm_perf_append(r->o->output, m->name, rows, n, err);
	if (ret == 0)
		ret = rm_metrics_append(r->o->output, t.ts, r->run_id, m->name, &oc->pr, err);
	if (ret == 0 && oc->mr_extra.n)
		ret = rm_metrics_append_rows(r->o->output, t.ts, r->run_id, m->name,
					     (const char *const *)oc->mr_extra_model, &oc->mr_extra,
					     err);
	for (size_t i = 0; i < n; i++) {
		free(names[i]);
		free(rel[i]);
		free(config[i]);
	}
	free(names);
	free(rel);
	free(config);
	free(keys);
	rm_config_release(&t.params);
	rm_config_release(&t.id);
	free(rows);
	free(t.perf);
	free(t.tags);
	free(t.args);
	return ret;
}
