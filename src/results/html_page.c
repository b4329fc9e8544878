/*
 * The HTML report's page: head, counts, the latest run's failures, one row per series with
 * its inline SVG trend, and how changes are judged.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_internal.h"
#include "rm/config.h"
#include "rm/detect.h"
#include "rm/gate.h"
#include "rm/history.h"
#include "rm/results.h"
#include "rm/text.h"

/*
 * The layout fits a 1200-pixel window and a phone (tests/results/cases.sh html_layout measures
 * it in Chromium at 1200 and 412 px): the table takes the page's width, long words (model
 * names, run ids, log paths) may break anywhere, and the plots scale down with their column
 * (viewBox) to 160 px. Under 720 px every row becomes a block and each cell says its column
 * (data-label), so no column loses its meaning. Red is for something wrong: a count of zero is
 * drawn plain.
 */
static const char css[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1f2328;background:#fff}"
    "h1{font-size:1.5em;margin:0 0 .2em}h2{font-size:1.15em;display:inline}"
    ".meta{color:#59636e;margin-bottom:1em;overflow-wrap:anywhere}"
    ".cards{display:flex;gap:1em;flex-wrap:wrap;margin:1em 0}"
    ".card{border:1px solid #d1d9e0;border-radius:6px;padding:.5em 1em;min-width:8em}"
    ".card b{display:block;font-size:1.6em}"
    "table{border-collapse:collapse;margin:.5em 0 1.5em;width:100%}"
    "th,td{border-bottom:1px solid #d1d9e0;padding:3px 8px;text-align:left;vertical-align:"
    "middle}"
    "td{overflow-wrap:anywhere}table.cols td:first-child{min-width:10em}"
    "#models td:nth-child(2){min-width:9em}#models td[data-label=since]{min-width:8em}"
    "th{background:#f6f8fa;position:sticky;top:0}td.n{text-align:right;font-variant-numeric:"
    "tabular-nums;overflow-wrap:normal;white-space:nowrap}"
    "details{margin:.8em 0}summary{cursor:pointer}"
    "svg.trend{display:block;width:100%;max-width:300px;min-width:160px;height:auto}"
    "svg polyline{fill:none;stroke:#0969da;stroke-width:1.5}"
    "svg line.base{stroke:#8c959f;stroke-dasharray:3 3}svg path.fail{stroke:#cf222e;"
    "stroke-width:2}"
    "svg text{font-size:9px;fill:#59636e;text-anchor:end}"
    "svg circle{fill:#0969da}svg circle.regression,svg circle.failed{fill:#cf222e}"
    "svg circle.better{fill:#1a7f37}svg circle.old{fill:#8c959f}"
    "svg line.cp{stroke:#9a6700;stroke-dasharray:2 2}svg line.cp.since{stroke:#cf222e;"
    "stroke-dasharray:none}svg line.ref{stroke:#1a7f37;stroke-dasharray:4 2}"
    ".regression{color:#cf222e;font-weight:600}.better{color:#1a7f37}"
    ".noise,.same,.none{color:#59636e}.unknown{color:#9a6700}.failed{color:#cf222e}"
    "tr.regression td{background:#ffebe9}pre{white-space:pre-wrap;margin:0;font-size:12px}"
    ".legend span{margin-right:1.5em}"
    "figure.sweep{display:inline-block;margin:.5em 1.5em .5em 0;vertical-align:top}"
    "figure.sweep ul{list-style:none;padding:0;margin:.2em 0;font-size:12px}"
    "svg.curves line.axis{stroke:#8c959f}svg.curves text.mid{text-anchor:middle}"
    "svg.curves polyline{stroke-width:1.8}"
    ".l0{stroke:#0969da;color:#0969da}.l1{stroke:#cf222e;color:#cf222e}"
    ".l2{stroke:#1a7f37;color:#1a7f37}.l3{stroke:#8250df;color:#8250df}"
    ".l4{stroke:#bc4c00;color:#bc4c00}.l5{stroke:#1b7c83;color:#1b7c83}"
    ".l6{stroke:#9a6700;color:#9a6700}.l7{stroke:#bf3989;color:#bf3989}"
    "@media (max-width:720px){body{margin:.8em}table.cols,table.cols tbody,table.cols tr,"
    "table.cols td{display:block;width:auto}table.cols tr.head{display:none}"
    "table.cols tr{border-bottom:1px solid #d1d9e0;padding:.3em 0}table.cols td{border:0;"
    "padding:1px 4px;text-align:left}table.cols td::before{content:attr(data-label) \": \";"
    "color:#59636e;font-weight:400}table.cols td.plot::before{display:block}"
    "td.n{white-space:normal}table.cols td:first-child,#models td:nth-child(2),"
    "#models td[data-label=since]{min-width:0}"
    "svg.trend{min-width:0;max-width:100%}}";

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

/* The x of a run index (for change points). */
static double run_x(const struct report *r, size_t run)
{
	rm_hpoint p = {0};
	p.run = p.run_first = run;
	return rm_results__html_x(r, &p);
}

/* Vertical marks where the latest verdict's change points are: the one the change judged
 * started at in red, the others dashed. */
static void change_points(rm_buf *o, const struct report *r, const rm_change *ch)
{
	char since[256];

	for (size_t i = 0; ch && i < ch->n_cps; i++) {
		size_t run = rm_history_run_index(r->h, ch->cps[i].id);
		int is_since = ch->since.id[0] && !strcmp(ch->since.id, ch->cps[i].id);
		double x;
		if (run == RM_DETECT_NONE)
			continue;
		x = run_x(r, run);
		rm_run_ref_text(&ch->cps[i], since, sizeof(since));
		rm_buf_addf(o,
			    "<line class=\"cp%s\" x1=\"%.1f\" x2=\"%.1f\" y1=\"1\" y2=\"%d\">"
			    "<title>change point: ",
			    is_since ? " since" : "", x, x, PH - 1);
		rm_text_html(o, since);
		rm_buf_addstr(o, "</title></line>");
	}
}

static void plot(rm_buf *o, const struct report *r, const struct series *s)
{
	const rm_hseries *h = s->h;
	const rm_change *ch = s->change;
	double lo = INFINITY, hi = -INFINITY, span;
	size_t nv = 0, last = RM_DETECT_NONE;

	for (size_t i = 0; i < h->n; i++)
		if (h->p[i].n) {
			lo = fmin(lo, h->p[i].mean);
			hi = fmax(hi, h->p[i].mean);
			nv++;
			last = i;
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
	rm_text_html(o, h->model);
	rm_buf_addf(o, "\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\"><title>",
		    PW, PH, PW, PH);
	rm_text_html(o, h->model);
	rm_buf_addstr(o, " ");
	rm_text_html(o, h->metric);
	if (nv)
		rm_buf_addf(o, ": %zu runs, min %.6g, max %.6g", h->n_runs, lo, hi);
	if (ch && ch->n_cps)
		rm_buf_addf(o, "; %zu change point%s", ch->n_cps, ch->n_cps == 1 ? "" : "s");
	if (ch && ch->detect.n_outliers)
		rm_buf_addf(o, "; %zu outlier%s set aside", ch->detect.n_outliers,
			    ch->detect.n_outliers == 1 ? "" : "s");
	rm_buf_addstr(o, "</title>");
	if (ch && isfinite(ch->base_mean))
		rm_buf_addf(o,
			    "<line class=\"base\" x1=\"0\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\">"
			    "<title>reference level %.6g</title></line>",
			    PLOT, Y(ch->base_mean), Y(ch->base_mean), ch->base_mean);
	change_points(o, r, ch);
	if (nv > 1) {
		rm_buf_addstr(o, "<polyline points=\"");
		for (size_t i = 0; i < h->n; i++)
			if (h->p[i].n)
				rm_buf_addf(o, "%.1f,%.1f ", rm_results__html_x(r, &h->p[i]),
					    Y(h->p[i].mean));
		rm_buf_addstr(o, "\"/>");
	}
	/* Red ticks: the runs this series or its model failed. */
	for (const rm_hseries *f = h; f; f = f == h && s->fail != h ? s->fail : NULL)
		for (size_t i = 0; i < f->n; i++)
			if (f->p[i].failed)
				rm_buf_addf(o, "<path class=\"fail\" d=\"M%.1f %dv-6\"/>",
					    rm_results__html_x(r, &f->p[i]), PH - 1);
	if (last != RM_DETECT_NONE) {
		int is_latest =
		    r->latest_id && !strcmp(rm_history_run(r->h, h->p[last].run)->id, r->latest_id);
		rm_buf_addf(o, "<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\"/>",
			    is_latest ? verdict_class(ch) : "old",
			    rm_results__html_x(r, &h->p[last]), Y(h->p[last].mean));
	}
	if (nv)
		rm_buf_addf(o,
			    "<text x=\"%d\" y=\"9\">%.4g</text><text x=\"%d\" y=\"%d\">%.4g</text>",
			    PW - 2, hi, PW - 2, PH - 9, lo);
	rm_buf_addstr(o, "</svg>");
#undef Y
}

static void head(rm_buf *out, const struct report *r)
{
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
	if (r->n_runs) {
		const rm_run_info *first = rm_history_run(r->h, r->by_rank[0]);
		const rm_run_info *last = rm_history_run(r->h, r->by_rank[r->n_runs - 1]);
		rm_buf_addf(out, "%zu run%s from ", r->n_runs, r->n_runs == 1 ? "" : "s");
		rm_text_html(out, first->start);
		rm_buf_addstr(out, " to ");
		rm_text_html(out, last->start);
		rm_buf_addstr(out, "; latest run <code>");
		rm_text_html(out, r->latest_id ? r->latest_id : "");
		rm_buf_addstr(out, "</code>");
	} else {
		rm_buf_addstr(out, "no results");
	}
	if (r->o->source) {
		rm_buf_addstr(out, "; from ");
		rm_text_html(out, r->o->source);
	}
	rm_buf_addf(out, "; generated %s</div>\n", now);
	/* red only where there is something wrong: "0 regressions" is good news */
	rm_buf_addf(out,
		    "<div class=\"cards\"><div class=\"card\"><b>%zu</b>models</div>"
		    "<div class=\"card%s\"><b>%zu</b>regressions</div>"
		    "<div class=\"card%s\"><b>%zu</b>failures in the latest run</div>"
		    "<div class=\"card\"><b>%zu</b>compared with a baseline</div></div>\n",
		    r->n_models, r->gate.n_regressions ? " regression" : "", r->gate.n_regressions,
		    r->n_fail_latest ? " failed" : "", r->n_fail_latest, r->gate.n_compared);
}

static void failures(rm_buf *out, const struct report *r)
{
	if (!r->n_fail_latest)
		return;
	/* A long list would push the trends off the first screen; the failed models head the
	 * table below anyway. */
	rm_buf_addf(out,
		    "<details%s id=\"failures\"><summary><h2>Failures in the latest run"
		    "</h2> (%zu)</summary><table class=\"cols\"><tr class=\"head\"><th>model</th>"
		    "<th>reason</th><th>exit code</th><th>log</th></tr>\n",
		    r->n_fail_latest <= 10 ? " open" : "", r->n_fail_latest);
	for (size_t i = 0; i < r->latest->n; i++) {
		const rm_result *row = &r->latest->rows[i];
		if (rm_status_of(row->col[RM_COL_STATUS]) != RM_STATUS_FAILURE || row->retried)
			continue;
		rm_buf_addstr(out, "<tr class=\"failed\" data-failed=\"");
		rm_text_html(out, row->col[RM_COL_MODEL]);
		rm_buf_addstr(out, "\"><td data-label=\"model\">");
		rm_text_html(out, row->col[RM_COL_MODEL]);
		rm_buf_addstr(out, "</td><td data-label=\"reason\"><pre>");
		rm_text_html(out, row->col[RM_COL_REASON]);
		rm_buf_addstr(out, "</pre></td><td class=\"n\" data-label=\"exit code\">");
		rm_text_html(out, row->col[RM_COL_EXIT_CODE]);
		rm_buf_addstr(out, "</td><td data-label=\"log\">");
		rm_text_html(out, row->col[RM_COL_LOG_FILE]);
		rm_buf_addstr(out, "</td></tr>\n");
	}
	rm_buf_addstr(out, "</table></details>\n");
}

/* The reason of the model's failure in the latest run, or NULL. */
static const char *why_failed(const struct report *r, const char *model)
{
	for (size_t i = 0; i < r->latest->n; i++) {
		const rm_result *row = &r->latest->rows[i];
		if (!strcmp(row->col[RM_COL_MODEL], model) && !row->retried &&
		    rm_status_of(row->col[RM_COL_STATUS]) == RM_STATUS_FAILURE)
			return row->col[RM_COL_REASON];
	}
	return NULL;
}

/* The latest, reference and change cells. */
static void value_cells(rm_buf *out, const struct report *r, const struct series *s,
			const char *cls)
{
	const rm_change *ch = s->change;
	const rm_hseries *h = s->h;
	const rm_hpoint *last = NULL;

	for (size_t i = h->n; i-- > 0 && !last;)
		if (h->p[i].n)
			last = &h->p[i];
	rm_buf_addstr(out, "</td><td class=\"n\" data-label=\"latest\">");
	if (ch && isfinite(ch->mean)) {
		rm_buf_addf(out, "%.6g", ch->mean);
	} else if (s->failed_latest) {
		const char *why = why_failed(r, h->model);
		rm_buf_addstr(out, "<span class=\"failed\" title=\"");
		rm_text_html(out, why ? why : "");
		rm_buf_addstr(out, "\">failed</span>");
	} else if (last) {
		rm_buf_addf(out, "<span class=\"none\">%.6g (older run)</span>", last->mean);
	}
	rm_buf_addstr(out, "</td><td class=\"n\" data-label=\"reference\">");
	if (ch && isfinite(ch->base_mean))
		rm_buf_addf(out, "%.6g", ch->base_mean);
	rm_buf_addf(out, "</td><td class=\"n %s\" data-label=\"change\"", cls);
	if (ch && ch->note) {
		rm_buf_addstr(out, " title=\"");
		rm_text_html(out, ch->note);
		rm_buf_addstr(out, "\"");
	}
	rm_buf_addstr(out, ">");
	if (ch && isfinite(ch->change_pct)) {
		char pct[64];
		rm_pct_text(ch->change_pct, pct, sizeof(pct));
		rm_buf_addf(out, "%s", pct);
	}
	if (ch && ch->verdict == RM_VERDICT_NOISE)
		rm_buf_addstr(out, " (noise)");
	if (ch && ch->verdict == RM_VERDICT_UNKNOWN)
		rm_buf_addstr(out, " (direction?)");
	if (ch && ch->detect.unstable)
		rm_buf_addstr(out, " <span class=\"unknown\">(unstable)</span>");
	/* under the change, not a column of its own: the table fits 1200 px */
	if (ch && isfinite(ch->detectable_pct))
		rm_buf_addf(out,
			    "<br><small class=\"none\" title=\"the least one-run change its noise "
			    "lets be told\">detectable &plusmn;%.2f%%</small>",
			    ch->detectable_pct);
	rm_buf_addstr(out, "</td><td data-label=\"since\">");
	if (ch && ch->since.id[0] && ch->verdict != RM_VERDICT_SAME) {
		char since[256];
		rm_run_ref_text(&ch->since, since, sizeof(since));
		rm_buf_addstr(out, "<small>");
		rm_text_html(out, since);
		rm_buf_addstr(out, "</small>");
	}
}

/* A series' configuration under its model's name: "batch_size=8, precision=bf16". */
static void config_label(rm_buf *out, const char *config)
{
	rm_config c = RM_CONFIG_INIT;

	if (rm_config_parse(&c, config) == 0 && c.n) {
		rm_buf_addstr(out, "<br><small class=\"config\">");
		for (size_t i = 0; i < c.n; i++) {
			rm_buf_addstr(out, i ? ", " : "");
			rm_text_html(out, c.p[i].name);
			rm_buf_addch(out, '=');
			rm_text_html(out, c.p[i].value);
		}
		rm_buf_addstr(out, "</small>");
	}
	rm_config_release(&c);
}

static void model_row(rm_buf *out, const struct report *r, const struct series *s)
{
	const rm_change *ch = s->change;
	const char *cls = s->failed_latest && !ch ? "failed" : verdict_class(ch);
	size_t nfail = s->h->n_failed_runs, nseen = s->h->n_runs;

	/* the model's failures (metric-less rows) count as its failed runs */
	if (s->fail && s->fail != s->h) {
		nfail += s->fail->n_failed_runs;
		nseen += s->fail->n_failed_runs;
	}
	rm_buf_addf(out, "<tr class=\"%s\" data-model=\"", cls);
	rm_text_html(out, s->h->model);
	rm_buf_addstr(out, "\"><td data-label=\"model\">");
	rm_text_html(out, s->h->model);
	config_label(out, s->h->config);
	rm_buf_addstr(out, "</td><td data-label=\"metric\">");
	rm_text_html(out, s->h->metric);
	if (s->h->arch[0]) {
		rm_buf_addstr(out, "<br><small>");
		rm_text_html(out, s->h->arch);
		rm_buf_addstr(out, " ");
		rm_text_html(out, s->h->machine);
		rm_buf_addstr(out, "</small>");
	}
	rm_buf_addstr(out, "</td><td class=\"plot\" data-label=\"trend\">");
	plot(out, r, s);
	rm_results__html_power_cell(out, r->power, r, s->h->model);
	value_cells(out, r, s, cls);
	rm_buf_addf(out, "</td><td class=\"n\" data-label=\"failed runs\">%zu/%zu</td></tr>\n",
		    nfail, nseen);
}

void rm_results__html_page(rm_buf *out, const struct report *r)
{
	head(out, r);
	failures(out, r);
	rm_buf_addf(out,
		    "<details open id=\"models\"><summary><h2>Models and metrics</h2> "
		    "(%zu)</summary>"
		    "<p class=\"legend\"><span class=\"regression\">worse than %.2f%%</span>"
		    "<span class=\"better\">better than %.2f%%</span><span class=\"noise\">"
		    "within the threshold or the noise</span><span>dashed line: the reference "
		    "level; vertical lines: change points (red: where the change judged "
		    "started); red ticks: failed runs</span></p>"
		    "<table class=\"cols\"><tr class=\"head\"><th>model</th><th>metric</th>"
		    "<th>trend</th>",
		    r->n_series, r->gate.threshold_pct, r->gate.threshold_pct);
	rm_results__html_power_head(out, r->power);
	rm_buf_addstr(out, "<th>latest</th><th>reference</th><th>change (detectable)</th>"
			   "<th>since</th><th>failed runs</th></tr>\n");
	for (size_t i = 0; i < r->n_series; i++)
		model_row(out, r, &r->ser[i]);
	rm_buf_addstr(out, "</table></details>\n");
	rm_results__html_details(out, r);
	rm_sweep_curves_html(out, &r->cells);
	rm_buf_addstr(out, "<details><summary><h2>How changes are judged"
			   "</h2></summary><p>");
	rm_text_html(out, r->gate.rule ? r->gate.rule : "");
	rm_buf_addstr(out,
		      " The change is (latest level - reference) / |reference| &times; 100, "
		      "each the mean of its runs (a run: the mean of its repeats); its colour "
		      "says whether that is good for the metric.</p></details>\n</body></html>\n");
}
