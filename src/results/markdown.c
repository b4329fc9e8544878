#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rm/results.h"
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
	const char *status = c->n_failed ? "FAILURE" : c->n_success ? "SUCCESS" : "SKIPPED";

	rm_buf_addstr(out, "| ");
	rm_text_md_cell(out, c->model);
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
	if (isfinite(c->change_pct))
		rm_buf_addf(out, "%+.2f%%", c->change_pct);
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

int rm_summary_markdown(rm_buf *out, const char *title, const rm_results *run, const rm_gate *gate)
{
	rm_gate local;
	const rm_gate *g = gate;
	size_t passed = 0;

	if (!g) {
		rm_gate_opts o = {-1, 0, NULL, 0, NULL};
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
	rm_buf_addstr(out, "\n<details><summary>How changes are judged</summary>\n\n");
	rm_text_md_cell(out, g->rule);
	rm_buf_addstr(out, "\n\nchange = (value - baseline) / |baseline| \xc3\x97 100; "
			   "value and baseline are means over the repeats of each run.\n"
			   "</details>\n\n");
	if (g == &local)
		rm_gate_release(&local);
	return out->len >= out->max ? -1 : 0;
}
