/*
 * Summaries of repeated runs (--repeat N): the statistics of each metric, printed and
 * appended to perf_summary.csv beside perf.csv.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rm/report.h"
#include "rm/util.h"

static const char *const summary_header[] = {"timestamp", "run_id", "model", "metric",	  "unit",
					     "aggregate", "n",	    "mean",  "median",	  "stddev",
					     "min",	  "max",    "score", "score_rule"};
enum { SUMMARY_COLS = sizeof(summary_header) / sizeof(summary_header[0]) };

static void summary_add(rm_summary *sm, const char *name, const char *unit, const char *aggregate,
			double v)
{
	rm_series *x = NULL;
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

void rm_summary_collect(rm_summary *sm, const rm_parse_result *pr)
{
	if (pr->has_performance)
		summary_add(sm, "performance", pr->performance_metric, "last", pr->performance);
	for (size_t i = 0; i < pr->n; i++)
		summary_add(sm, pr->metrics[i].name, pr->metrics[i].unit, pr->metrics[i].aggregate,
			    pr->metrics[i].value);
}

void rm_summary_release(rm_summary *sm)
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

static char *summary_fmt_num(double v)
{
	return rm_xasprintf("%.10g", v);
}

/* The MLPerf score of a series when it is a time to train and score is "mlperf". */
static int mlperf_score(const rm_series *x, const char *model, const char *score, double *out)
{
	rm_error serr = RM_ERROR_INIT;
	size_t used = 0;

	if (!score || strcmp(score, "mlperf") ||
	    !(strstr(x->name, "time_to_train") || strstr(x->unit, "time_to_train")))
		return 0;
	if (rm_score_mlperf(x->v, x->n, out, &used, &serr) < 0) {
		rm_warn("model '%s': no MLPerf score for '%s': %s", model, x->name,
			rm_error_text(&serr));
		return 0;
	}
	if (x->n != 10)
		rm_warn("model '%s': MLPerf scores take 10 runs; this one has %zu", model, x->n);
	return 1;
}

int rm_summary_check(const char *perf_path, rm_error *err)
{
	char *path = rm_perf_sibling(perf_path, "perf_summary.csv");
	int ret = rm_csv_check(path, summary_header, SUMMARY_COLS, err);

	free(path);
	return ret;
}

int rm_summary_write(const rm_summary *sm, const char *perf_path, const char *run_id,
		     const char *model, long runs, const char *score, FILE *out, rm_error *err)
{
	char ts[32];
	char *path = rm_perf_sibling(perf_path, "perf_summary.csv");
	const char **rows = rm_xcalloc(sm->n * SUMMARY_COLS + 1, sizeof(*rows));
	/* at most 7 strings a series: the score and six statistics */
	char **cells = rm_xcalloc(sm->n * 7 + 1, sizeof(*cells));
	size_t nr = 0, nc = 0;
	int ret;

	/* The terminal's table: within 80 columns (the metric's name gives way), figures to 6
	 * significant digits (perf_summary.csv keeps 10), a score column only when scored. */
	static const char *const head[] = {
	    "metric (aggregate)", "n", "mean", "median", "stddev", "min", "max", "score"};
	rm_table tab;
	size_t n_scored = 0, ncols;
	int width = rm_term_width(out);
	char **shown_rows = rm_xcalloc(sm->n * 8 + 1, sizeof(*shown_rows));

	rm_utc_timestamp(ts, sizeof(ts));
	fprintf(out, "summary of %ld runs of '%s':\n", runs, model);
	for (size_t i = 0; i < sm->n; i++) {
		const rm_series *x = &sm->s[i];
		rm_stats st;
		double sc = 0;
		int scored;
		char label[256];
		if (rm_stats_compute(x->v, x->n, &st) < 0)
			continue;
		scored = mlperf_score(x, model, score, &sc);
		snprintf(label, sizeof(label), "%s (%s)", x->name, x->aggregate);
		/* Each cell is made in its own statement: the order in which an initializer
		 * list is evaluated is unspecified. */
		char **c = cells + nc;
		c[0] = rm_xasprintf("%zu", st.n);
		c[1] = summary_fmt_num(st.mean);
		c[2] = summary_fmt_num(st.median);
		c[3] = summary_fmt_num(st.stddev);
		c[4] = summary_fmt_num(st.min);
		c[5] = summary_fmt_num(st.max);
		c[6] = scored ? summary_fmt_num(sc) : rm_xstrdup("");
		nc += 7;
		const double figures[6] = {st.mean, st.median, st.stddev, st.min, st.max, sc};
		char **tr = shown_rows + (nr * 8);
		tr[0] = rm_xstrdup(label);
		tr[1] = rm_xstrdup(c[0]);
		for (size_t k = 0; k < 6; k++)
			tr[2 + k] = rm_xasprintf("%.6g", figures[k]);
		if (!scored)
			tr[7][0] = '\0';
		n_scored += scored != 0;
		const char *row[SUMMARY_COLS] = {
		    ts,	     run_id,
		    model,   x->name,
		    x->unit, x->aggregate,
		    c[0],    c[1],
		    c[2],    c[3],
		    c[4],    c[5],
		    c[6],    scored ? "mlperf: drop fastest and slowest, mean of the rest" : ""};
		memcpy(rows + nr * SUMMARY_COLS, row, sizeof(row));
		nr++;
	}
	/* without a score, the table has no score column */
	ncols = n_scored ? 8 : 7;
	rm_table_init(&tab, ncols, head);
	rm_table_column(&tab, 0, RM_TABLE_SHRINK, 16, 0);
	for (size_t k = 1; k < ncols; k++)
		rm_table_column(&tab, k, RM_TABLE_RIGHT, 0, 0);
	for (size_t i = 0; i < nr; i++)
		rm_table_add(&tab, (const char *const *)shown_rows + i * 8);
	rm_table_print(&tab, out, "  ", width > 0 ? (size_t)width : 80);
	rm_table_release(&tab);
	for (size_t i = 0; i < nr * 8; i++)
		free(shown_rows[i]);
	free(shown_rows);
	ret = nr ? rm_csv_append(path, summary_header, SUMMARY_COLS, rows, nr, err) : 0;
	for (size_t i = 0; i < nc; i++)
		free(cells[i]);
	free(cells);
	free(rows);
	free(path);
	return ret;
}
