#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rm/detect.h"
#include "rm/gate.h"
#include "rm/markdown.h"
#include "rm/results.h"
#include "rm/text.h"
#include "rm/util.h"

static const char *mark(rm_verdict v)
{
	switch (v) {
	case RM_VERDICT_REGRESSION:
		return "\xf0\x9f\x94\xb4 regression"; /* red circle */
	case RM_VERDICT_FAILED:
		return "\xe2\x9d\x8c failed"; /* cross mark */
	case RM_VERDICT_BETTER:
		return "\xf0\x9f\x9f\xa2 better"; /* green circle */
	case RM_VERDICT_NOISE:
		return "\xe2\x9a\xaa noise"; /* white circle */
	case RM_VERDICT_SAME:
		return "same";
	case RM_VERDICT_SKIPPED:
		return "skipped";
	case RM_VERDICT_UNKNOWN:
		return "direction unknown";
	default:
		return "no baseline";
	}
}

/* Regressions first, then failures, then the rest in run order. */
static int rank(const rm_change *c)
{
	return c->verdict == RM_VERDICT_REGRESSION ? 0 : c->verdict == RM_VERDICT_FAILED ? 1 : 2;
}

static void row(rm_buf *out, const rm_change *c)
{
	const char *status = rm_status_name(c->n_failed	   ? RM_STATUS_FAILURE
					    : c->n_success ? RM_STATUS_SUCCESS
							   : RM_STATUS_SKIPPED);

	rm_buf_addstr(out, "| ");
	rm_text_md_cell(out, c->name);
	rm_buf_addstr(out, " | ");
	rm_text_md_cell(out, c->metric);
	rm_buf_addf(out, " | %s | ", status);
	if (isfinite(c->mean)) {
		rm_buf_addf(out, "%.6g", c->mean);
		if (c->n_success > 1)
			rm_buf_addf(out, " \xc2\xb1 %.3g (n=%zu)", c->sd, c->n_success);
	}
	rm_buf_addstr(out, " | ");
	if (isfinite(c->base_mean))
		rm_buf_addf(out, "%.6g", c->base_mean);
	rm_buf_addstr(out, " | ");
	if (isfinite(c->change_pct)) {
		char pct[64];
		rm_pct_text(c->change_pct, pct, sizeof(pct));
		rm_buf_addf(out, "%s", pct);
	}
	rm_buf_addf(out, " | %s", mark(c->verdict));
	if (c->verdict == RM_VERDICT_REGRESSION && c->threshold < 0)
		rm_buf_addstr(out, " (not gated: its suite entry is off)");
	if (c->verdict == RM_VERDICT_FAILED || c->verdict == RM_VERDICT_SKIPPED) {
		if (c->reason[0]) {
			rm_buf_addstr(out, ": ");
			rm_text_md_cell(out, c->reason);
		}
	} else if (c->verdict == RM_VERDICT_NOISE && isfinite(c->noise_pct)) {
		rm_buf_addf(out, " (band \xc2\xb1%.2f%%)", c->noise_pct);
	}
	rm_buf_addstr(out, " |\n");
}

/* One line of the changes list: what, where it started, how big, against what. */
static void change_line(rm_buf *out, const rm_change *c, const char *mark)
{
	char since[256];

	rm_buf_addf(out, "- %s `", mark);
	rm_text_md_cell(out, c->name);
	rm_buf_addstr(out, "` ");
	rm_text_md_cell(out, c->metric);
	if (c->machine[0]) {
		rm_buf_addstr(out, " on `");
		rm_text_md_cell(out, c->machine);
		rm_buf_addstr(out, "`");
	}
	rm_buf_addstr(out, ":");
	if (isfinite(c->change_pct)) {
		char pct[64];
		rm_pct_text(c->change_pct, pct, sizeof(pct));
		rm_buf_addf(out, " %s", pct);
	}
	if (c->since.id[0]) {
		rm_run_ref_text(&c->since, since, sizeof(since));
		rm_buf_addstr(out, " since ");
		rm_text_md_cell(out, since);
	}
	if (c->n_history > 2 && isfinite(c->level))
		rm_buf_addf(out, "; level %.6g over %zu run%s vs %.6g", c->level, c->level_n,
			    c->level_n == 1 ? "" : "s", c->base_mean);
	if (c->pin_verdict == RM_VERDICT_REGRESSION || c->pin_verdict == RM_VERDICT_BETTER)
		rm_buf_addf(out, "; %.6g is %s its reference %.6g", c->mean,
			    c->pin_verdict == RM_VERDICT_BETTER ? "better than" : "outside",
			    c->pin->value);
	if (c->accepted) {
		rm_buf_addstr(out, "; accepted from run ");
		rm_text_md_cell(out, c->accepted);
	}
	if (c->verdict == RM_VERDICT_REGRESSION && c->threshold < 0)
		rm_buf_addstr(out, " (not gated: its suite entry is off)");
	rm_buf_addstr(out, "\n");
}

/* Regressions, improvements and unstable metrics, with the run each started at. */
static void changes(rm_buf *out, const rm_gate *g)
{
	size_t n = 0;

	for (size_t i = 0; i < g->n; i++) {
		const rm_change *c = &g->v[i];
		n += c->verdict == RM_VERDICT_REGRESSION || c->verdict == RM_VERDICT_BETTER ||
		     c->detect.unstable;
	}
	if (!n)
		return;
	rm_buf_addstr(out, "### Changes over the history\n\n");
	for (size_t i = 0; i < g->n; i++)
		if (g->v[i].verdict == RM_VERDICT_REGRESSION)
			change_line(out, &g->v[i], "\xf0\x9f\x94\xb4 regression:");
	for (size_t i = 0; i < g->n; i++)
		if (g->v[i].verdict == RM_VERDICT_BETTER)
			change_line(out, &g->v[i], "\xf0\x9f\x9f\xa2 improvement:");
	for (size_t i = 0; i < g->n; i++) {
		const rm_change *c = &g->v[i];
		const rm_detect *d = &c->detect;
		if (!d->unstable)
			continue;
		rm_buf_addstr(out, "- \xe3\x80\xb0\xef\xb8\x8f unstable: `");
		rm_text_md_cell(out, c->name);
		rm_buf_addstr(out, "` ");
		rm_text_md_cell(out, c->metric);
		rm_buf_addf(out,
			    ": run-to-run noise %.3g (%.2f%% of its level, from the %s) over the "
			    "%zu runs read since run ",
			    d->noise, d->noise / fabs(d->ref) * 100,
			    rm_noise_from_name(d->noise_from), d->n);
		rm_text_md_cell(out, c->from.id);
		rm_buf_addf(out,
			    ": even a lasting change of the threshold (%.2f%%) cannot be told "
			    "from it; a one-run change under %.2f%% cannot either\n",
			    c->threshold >= 0 ? c->threshold : g->threshold_pct, d->detectable_pct);
	}
	rm_buf_addstr(out, "\n");
}

int rm_summary_markdown(rm_buf *out, const char *title, const rm_results *run, const rm_gate *gate)
{
	rm_gate local;
	const rm_gate *g = gate;
	size_t passed = 0;

	if (!g) {
		rm_gate_opts o = RM_GATE_OPTS_INIT;
		rm_gate_eval(run, NULL, &o, &local);
		g = &local;
	}
	for (size_t i = 0; i < g->n; i++)
		passed +=
		    g->v[i].verdict != RM_VERDICT_FAILED && g->v[i].verdict != RM_VERDICT_SKIPPED;
	rm_buf_addstr(out, "## ");
	rm_text_md_cell(out, title ? title : "run_models");
	rm_buf_addf(out, ": %zu passed, %zu failed, %zu skipped", passed, g->n_failed,
		    g->n_skipped);
	if (g->have_baseline)
		rm_buf_addf(out, ", %zu regression%s", g->n_regressions,
			    g->n_regressions == 1 ? "" : "s");
	rm_buf_addstr(out, "\n\n");
	if (run->n) {
		const rm_result *r = &run->rows[0];
		rm_buf_addstr(out, "Run `");
		rm_text_md_cell(out, r->col[RM_COL_RUN_ID]);
		rm_buf_addstr(out, "` on `");
		rm_text_md_cell(out, r->col[RM_COL_MACHINE]);
		rm_buf_addstr(out, "`");
		if (r->col[RM_COL_ARCH][0]) {
			rm_buf_addstr(out, " (");
			rm_text_md_cell(out, r->col[RM_COL_ARCH]);
			rm_buf_addstr(out, ")");
		}
		if (r->col[RM_COL_GIT_COMMIT][0])
			rm_buf_addf(out, ", models at `%.12s`", r->col[RM_COL_GIT_COMMIT]);
		rm_buf_addstr(out, ". ");
	}
	if (!g->have_baseline)
		rm_buf_addstr(out, "No baseline: changes not judged. ");
	rm_buf_addf(out, "Regression gate: %s (threshold %.2f%%).\n\n",
		    g->enforce ? "**on**" : "off", g->threshold_pct);
	rm_buf_addstr(out, "| model | metric | status | value | baseline | change | verdict |\n"
			   "|---|---|---|---:|---:|---:|---|\n");
	for (int k = 0; k < 3; k++)
		for (size_t i = 0; i < g->n; i++)
			if (rank(&g->v[i]) == k)
				row(out, &g->v[i]);
	rm_buf_addstr(out, "\n");
	changes(out, g);
	rm_buf_addstr(out, "<details><summary>How changes are judged</summary>\n\n");
	rm_text_md_cell(out, g->rule);
	rm_buf_addstr(out, "\n\nchange = (level - baseline) / |baseline| \xc3\x97 100, where "
			   "the baseline is the reference level of the history and the level the "
			   "mean of the runs since its latest change (with one earlier run: that "
			   "run and this one); a run counts as the mean of its repeats.\n"
			   "</details>\n\n");
	if (g == &local)
		rm_gate_release(&local);
	return out->len >= out->max ? -1 : 0;
}
