/*
 * The HTML report's page: head, counts, the latest run's failures, one row per series with
 * its inline SVG trend, and how changes are judged.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_internal.h"
#include "rm/results.h"

static const char css[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1f2328;background:#fff}"
    "h1{font-size:1.5em;margin:0 0 .2em}h2{font-size:1.15em;display:inline}"
    ".meta{color:#59636e;margin-bottom:1em}"
    ".cards{display:flex;gap:1em;flex-wrap:wrap;margin:1em 0}"
    ".card{border:1px solid #d1d9e0;border-radius:6px;padding:.5em 1em;min-width:8em}"
    ".card b{display:block;font-size:1.6em}"
    "table{border-collapse:collapse;margin:.5em 0 1.5em}"
    "th,td{border-bottom:1px solid #d1d9e0;padding:3px 8px;text-align:left;vertical-align:"
    "middle}"
    "th{background:#f6f8fa;position:sticky;top:0}td.n{text-align:right;font-variant-numeric:"
    "tabular-nums}"
    "details{margin:.8em 0}summary{cursor:pointer}"
    "svg.trend{display:block}svg polyline{fill:none;stroke:#0969da;stroke-width:1.5}"
    "svg line.base{stroke:#8c959f;stroke-dasharray:3 3}svg path.fail{stroke:#cf222e;"
    "stroke-width:2}"
    "svg text{font-size:9px;fill:#59636e;text-anchor:end}"
    "svg circle{fill:#0969da}svg circle.regression,svg circle.failed{fill:#cf222e}"
    "svg circle.better{fill:#1a7f37}svg circle.old{fill:#8c959f}"
    ".regression{color:#cf222e;font-weight:600}.better{color:#1a7f37}"
    ".noise,.same,.none{color:#59636e}.unknown{color:#9a6700}.failed{color:#cf222e}"
    "tr.regression td{background:#ffebe9}pre{white-space:pre-wrap;margin:0;font-size:12px}"
    ".legend span{margin-right:1.5em}";

static const char *verdict_class(const rm_change *ch)
{
	if (!ch)
		return "none";
	switch (ch->verdict) {
	case RM_VERDICT_REGRESSION:
		return "regression";
	case RM_VERDICT_BETTER:
		return "better";
	case RM_VERDICT_NOISE:
		return "noise";
	case RM_VERDICT_SAME:
		return "same";
	case RM_VERDICT_FAILED:
		return "failed";
	case RM_VERDICT_UNKNOWN:
		return "unknown";
	default:
		return "none";
	}
}

static double xpos(const struct ctx *c, size_t run)
{
	if (c->n_runs < 2)
		return PLOT / 2.0;
	return PAD + (double)run * (PLOT - 2 * PAD) / (double)(c->n_runs - 1);
}

static void plot(rm_buf *o, const struct ctx *c, const struct series *s, const struct point *p,
		 size_t np, const unsigned char *failed_runs)
{
	double lo = INFINITY, hi = -INFINITY, span;
	const rm_change *ch = s->change;
	size_t nv = 0;

	for (size_t i = 0; i < np; i++)
		if (isfinite(p[i].v)) {
			lo = fmin(lo, p[i].v);
			hi = fmax(hi, p[i].v);
			nv++;
		}
	if (ch && isfinite(ch->base_mean)) {
		lo = fmin(lo, ch->base_mean);
		hi = fmax(hi, ch->base_mean);
	}
	span = hi - lo;
	if (!(span > 0))
		span = fabs(hi) > 0 ? fabs(hi) * 0.1 : 1;
#define Y(v) (PH - 10 - ((v)-lo) / span * (PH - 18) + 2)
	rm_buf_addf(o, "<svg class=\"trend\" data-model=\"");
	rm_text_html(o, s->r0->col[RM_COL_MODEL]);
	rm_buf_addf(o, "\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\"><title>",
		    PW, PH, PW, PH);
	rm_text_html(o, s->r0->col[RM_COL_MODEL]);
	rm_buf_addstr(o, " ");
	rm_text_html(o, s->r0->col[RM_COL_METRIC]);
	if (nv)
		rm_buf_addf(o, ": %zu runs, min %.6g, max %.6g", nv, lo, hi);
	rm_buf_addstr(o, "</title>");
	if (ch && isfinite(ch->base_mean))
		rm_buf_addf(o, "<line class=\"base\" x1=\"0\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>",
			    PLOT, Y(ch->base_mean), Y(ch->base_mean));
	if (nv > 1) {
		rm_buf_addstr(o, "<polyline points=\"");
		for (size_t i = 0; i < np; i++)
			if (isfinite(p[i].v))
				rm_buf_addf(o, "%.1f,%.1f ", xpos(c, p[i].run), Y(p[i].v));
		rm_buf_addstr(o, "\"/>");
	}
	for (size_t k = 0; k < c->n_runs; k++)
		if (failed_runs[k])
			rm_buf_addf(o, "<path class=\"fail\" d=\"M%.1f %dv-6\"/>", xpos(c, k),
				    PH - 1);
	if (np && isfinite(p[np - 1].v))
		rm_buf_addf(o, "<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\"/>",
			    p[np - 1].run == c->latest ? verdict_class(ch) : "old",
			    xpos(c, p[np - 1].run), Y(p[np - 1].v));
	if (nv)
		rm_buf_addf(o,
			    "<text x=\"%d\" y=\"9\">%.4g</text><text x=\"%d\" y=\"%d\">%.4g</text>",
			    PW - 2, hi, PW - 2, PH - 9, lo);
	rm_buf_addstr(o, "</svg>");
#undef Y
}

static void head(rm_buf *out, const struct report *r)
{
	const struct ctx *c = &r->c;
	const char *title = r->o->title ? r->o->title : "run_models results";
	char now[32];

	rm_utc_timestamp(now, sizeof(now));
	rm_buf_addstr(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
			   "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
			   "'none'; style-src 'unsafe-inline'\">"
			   "<meta name=\"viewport\" content=\"width=device-width\"><title>");
	rm_text_html(out, title);
	rm_buf_addf(out, "</title><style>%s</style></head><body>\n<h1>", css);
	rm_text_html(out, title);
	rm_buf_addstr(out, "</h1><div class=\"meta\">");
	if (c->n_runs) {
		rm_buf_addf(out, "%zu run%s from ", c->n_runs, c->n_runs == 1 ? "" : "s");
		rm_text_html(out, c->runs[0].start);
		rm_buf_addstr(out, " to ");
		rm_text_html(out, c->runs[c->latest].start);
		rm_buf_addstr(out, "; latest run <code>");
		rm_text_html(out, c->runs[c->latest].id);
		rm_buf_addstr(out, "</code>");
	} else {
		rm_buf_addstr(out, "no results");
	}
	if (r->o->source) {
		rm_buf_addstr(out, "; from ");
		rm_text_html(out, r->o->source);
	}
	rm_buf_addf(out, "; generated %s</div>\n", now);
	rm_buf_addf(out,
		    "<div class=\"cards\"><div class=\"card\"><b>%zu</b>models</div>"
		    "<div class=\"card regression\"><b>%zu</b>regressions</div>"
		    "<div class=\"card failed\"><b>%zu</b>failures in the latest run</div>"
		    "<div class=\"card\"><b>%zu</b>compared with a baseline</div></div>\n",
		    r->n_models, r->gate.n_regressions, r->n_fail_latest, r->gate.n_compared);
}

static void failures(rm_buf *out, const struct report *r)
{
	if (!r->n_fail_latest)
		return;
	/* A long list would push the trends off the first screen; the failed models head the
	 * table below anyway. */
	rm_buf_addf(out,
		    "<details%s id=\"failures\"><summary><h2>Failures in the latest run"
		    "</h2> (%zu)</summary><table><tr><th>model</th><th>reason</th>"
		    "<th>exit code</th><th>log</th></tr>\n",
		    r->n_fail_latest <= 10 ? " open" : "", r->n_fail_latest);
	for (size_t i = 0; i < r->latest.n; i++) {
		const rm_result *row = &r->latest.rows[i];
		if (strcmp(row->col[RM_COL_STATUS], "FAILURE"))
			continue;
		rm_buf_addstr(out, "<tr class=\"failed\" data-failed=\"");
		rm_text_html(out, row->col[RM_COL_MODEL]);
		rm_buf_addstr(out, "\"><td>");
		rm_text_html(out, row->col[RM_COL_MODEL]);
		rm_buf_addstr(out, "</td><td><pre>");
		rm_text_html(out, row->col[RM_COL_REASON]);
		rm_buf_addstr(out, "</pre></td><td class=\"n\">");
		rm_text_html(out, row->col[RM_COL_EXIT_CODE]);
		rm_buf_addstr(out, "</td><td>");
		rm_text_html(out, row->col[RM_COL_LOG_FILE]);
		rm_buf_addstr(out, "</td></tr>\n");
	}
	rm_buf_addstr(out, "</table></details>\n");
}

/* Scratch space of the model rows, one slot per run. */
struct row_scratch {
	struct point *pts;
	unsigned char *failed_runs, *seen_runs;
	size_t nfail, nseen;
	const char *why; /* the reason of the model's failure in the latest run */
};

/* The runs the series' model failed and ran in (failures sit in no value series: their
 * metric is empty). */
static void mark_runs(const struct report *r, const struct series *s, size_t np,
		      struct row_scratch *w)
{
	const struct ctx *c = &r->c;
	const char *model = s->r0->col[RM_COL_MODEL];

	memset(w->failed_runs, 0, c->n_runs);
	memset(w->seen_runs, 0, c->n_runs);
	w->nfail = w->nseen = 0;
	w->why = NULL;
	for (size_t k = 0; k < np; k++)
		w->seen_runs[w->pts[k].run] = 1;
	for (size_t k = rm_results__html_lower_model(c, r->fidx, r->n_fidx, model);
	     k < r->n_fidx && !strcmp(c->h->rows[r->fidx[k]].col[RM_COL_MODEL], model); k++) {
		size_t run = c->run_of[r->fidx[k]];
		w->failed_runs[run] = w->seen_runs[run] = 1;
		if (run == c->latest)
			w->why = c->h->rows[r->fidx[k]].col[RM_COL_REASON];
	}
	for (size_t k = 0; k < c->n_runs; k++) {
		w->nfail += w->failed_runs[k];
		w->nseen += w->seen_runs[k];
	}
}

/* The latest, baseline and change cells. */
static void value_cells(rm_buf *out, const struct series *s, const struct row_scratch *w, size_t np,
			const char *cls)
{
	const rm_change *ch = s->change;

	rm_buf_addstr(out, "</td><td class=\"n\">");
	if (ch && isfinite(ch->mean)) {
		rm_buf_addf(out, "%.6g", ch->mean);
	} else if (s->failed_latest) {
		rm_buf_addstr(out, "<span class=\"failed\" title=\"");
		rm_text_html(out, w->why ? w->why : "");
		rm_buf_addstr(out, "\">failed</span>");
	} else if (np && isfinite(w->pts[np - 1].v)) {
		rm_buf_addf(out, "<span class=\"none\">%.6g (older run)</span>", w->pts[np - 1].v);
	}
	rm_buf_addstr(out, "</td><td class=\"n\">");
	if (ch && isfinite(ch->base_mean))
		rm_buf_addf(out, "%.6g", ch->base_mean);
	rm_buf_addf(out, "</td><td class=\"n %s\"", cls);
	if (ch && ch->note) {
		rm_buf_addstr(out, " title=\"");
		rm_text_html(out, ch->note);
		rm_buf_addstr(out, "\"");
	}
	rm_buf_addstr(out, ">");
	if (ch && isfinite(ch->change_pct))
		rm_buf_addf(out, "%+.2f%%", ch->change_pct);
	if (ch && ch->verdict == RM_VERDICT_NOISE)
		rm_buf_addstr(out, " (noise)");
	if (ch && ch->verdict == RM_VERDICT_UNKNOWN)
		rm_buf_addstr(out, " (direction?)");
}

static void model_row(rm_buf *out, const struct report *r, const struct series *s,
		      struct row_scratch *w)
{
	const rm_change *ch = s->change;
	size_t np = rm_results__html_points_of(&r->c, s, w->pts);
	const char *cls = s->failed_latest && !ch ? "failed" : verdict_class(ch);

	mark_runs(r, s, np, w);
	rm_buf_addf(out, "<tr class=\"%s\" data-model=\"", cls);
	rm_text_html(out, s->r0->col[RM_COL_MODEL]);
	rm_buf_addstr(out, "\"><td>");
	rm_text_html(out, s->r0->col[RM_COL_MODEL]);
	rm_buf_addstr(out, "</td><td>");
	rm_text_html(out, s->r0->col[RM_COL_METRIC]);
	if (s->r0->col[RM_COL_ARCH][0]) {
		rm_buf_addstr(out, "<br><small>");
		rm_text_html(out, s->r0->col[RM_COL_ARCH]);
		rm_buf_addstr(out, " ");
		rm_text_html(out, s->r0->col[RM_COL_MACHINE]);
		rm_buf_addstr(out, "</small>");
	}
	rm_buf_addstr(out, "</td><td>");
	plot(out, &r->c, s, w->pts, np, w->failed_runs);
	rm_results__html_power_cell(out, r->power, &r->c, s->r0->col[RM_COL_MODEL]);
	value_cells(out, s, w, np, cls);
	rm_buf_addf(out, "</td><td class=\"n\">%zu/%zu</td></tr>\n", w->nfail, w->nseen);
}

void rm_results__html_page(rm_buf *out, const struct report *r)
{
	size_t n = r->c.n_runs ? r->c.n_runs : 1;
	struct row_scratch w = {
	    rm_xcalloc(n, sizeof(struct point)), rm_xcalloc(n, 1), rm_xcalloc(n, 1), 0, 0, NULL};

	head(out, r);
	failures(out, r);
	rm_buf_addf(out,
		    "<details open id=\"models\"><summary><h2>Models and metrics</h2> "
		    "(%zu)</summary>"
		    "<p class=\"legend\"><span class=\"regression\">worse than %.2f%%</span>"
		    "<span class=\"better\">better than %.2f%%</span><span class=\"noise\">"
		    "within the threshold or the noise</span><span>dashed line: baseline; "
		    "red ticks: failed runs</span></p>"
		    "<table><tr><th>model</th><th>metric</th><th>trend</th>",
		    r->n_series, r->gate.threshold_pct, r->gate.threshold_pct);
	rm_results__html_power_head(out, r->power);
	rm_buf_addstr(out, "<th>latest</th><th>baseline</th><th>change</th><th>failed runs</th>"
			   "</tr>\n");
	for (size_t i = 0; i < r->n_series; i++)
		model_row(out, r, &r->ser[i], &w);
	rm_buf_addstr(out, "</table></details>\n<details><summary><h2>How changes are judged"
			   "</h2></summary><p>");
	rm_text_html(out, r->gate.rule ? r->gate.rule : "");
	rm_buf_addstr(out, " The change is (latest - baseline) / |baseline| &times; 100, "
			   "both the means of their run's repeats; its colour says whether "
			   "that is good for the metric.</p></details>\n</body></html>\n");
	free(w.pts);
	free(w.failed_runs);
	free(w.seen_runs);
}
