/*
 * The HTML trend report. Everything is computed once over sorted row indexes: the runs in
 * time order, one series per (model, metric, Dockerfile, GPU architecture, machine), the
 * latest run judged against its baseline by the same gate as CI uses.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rm/ci.h"
#include "rm/html.h"
#include "rm/text.h"
#include "rm/util.h"

#define HTML_MAX ((size_t)512 << 20)

/* Plot geometry (SVG user units = CSS pixels). */
#define PW   300 /* the plot, then a margin for the min/max labels */
#define PLOT 250
#define PH   46
#define PAD  4

struct run {
	const char *id;
	const char *start; /* earliest timestamp of its rows */
	size_t order;	   /* order of first appearance: ties and renumbering */
};

struct series {
	size_t *rows; /* row indexes, sorted by run */
	size_t n;
	const rm_result *r0; /* names */
	const rm_change *change;
	int failed_latest; /* the model failed in the latest run */
	int rank;
};

struct ctx {
	const rm_results *h;
	struct run *runs;
	size_t n_runs;
	size_t *run_of; /* per row: index into runs (time order) */
	size_t latest;
};

static struct ctx *sort_ctx;

static int key_cmp(const rm_result *a, const rm_result *b)
{
	static const int cols[] = {RM_COL_MODEL, RM_COL_METRIC, RM_COL_DOCKERFILE, RM_COL_ARCH,
				   RM_COL_MACHINE};
	for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++) {
		int c = strcmp(a->col[cols[i]], b->col[cols[i]]);
		if (c)
			return c;
	}
	return 0;
}

static int by_key_run(const void *pa, const void *pb)
{
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	int c = key_cmp(&sort_ctx->h->rows[a], &sort_ctx->h->rows[b]);
	if (c)
		return c;
	if (sort_ctx->run_of[a] != sort_ctx->run_of[b])
		return sort_ctx->run_of[a] < sort_ctx->run_of[b] ? -1 : 1;
	return (a > b) - (a < b);
}

static int by_start(const void *pa, const void *pb)
{
	const struct run *a = pa, *b = pb;
	int c = strcmp(a->start, b->start);
	return c ? c : (a->order > b->order) - (a->order < b->order);
}

/* Runs in time order; run_of[] per row. */
static void index_runs(struct ctx *c)
{
	const rm_results *h = c->h;
	size_t cap = 0, last = (size_t)-1, *map;

	c->run_of = rm_xcalloc(h->n ? h->n : 1, sizeof(*c->run_of));
	for (size_t i = 0; i < h->n; i++) {
		const char *id = h->rows[i].col[RM_COL_RUN_ID],
			   *ts = h->rows[i].col[RM_COL_TIMESTAMP];
		size_t k = last;
		/* Rows of a run sit together in an append-only file: try the last one first. */
		if (k == (size_t)-1 || strcmp(c->runs[k].id, id))
			for (k = 0; k < c->n_runs; k++)
				if (!strcmp(c->runs[k].id, id))
					break;
		if (k == c->n_runs) {
			if (c->n_runs == cap) {
				cap = cap ? cap * 2 : 64;
				c->runs = rm_xrealloc(c->runs, cap * sizeof(*c->runs));
			}
			c->runs[k].id = id;
			c->runs[k].start = ts;
			c->runs[k].order = k;
			c->n_runs++;
		} else if (ts[0] && (!c->runs[k].start[0] || strcmp(ts, c->runs[k].start) < 0)) {
			c->runs[k].start = ts;
		}
		c->run_of[i] = k;
		last = k;
	}
	/* Sort by start, then renumber the rows' run indexes. */
	struct run *sorted = rm_xcalloc(c->n_runs ? c->n_runs : 1, sizeof(*sorted));
	memcpy(sorted, c->runs, c->n_runs * sizeof(*sorted));
	qsort(sorted, c->n_runs, sizeof(*sorted), by_start);
	map = rm_xcalloc(c->n_runs ? c->n_runs : 1, sizeof(*map));
	for (size_t k = 0; k < c->n_runs; k++)
		map[sorted[k].order] = k;
	for (size_t i = 0; i < h->n; i++)
		c->run_of[i] = map[c->run_of[i]];
	free(c->runs);
	c->runs = sorted;
	free(map);
	c->latest = c->n_runs ? c->n_runs - 1 : 0;
}

static int success(const rm_result *r)
{
	return !strcmp(r->col[RM_COL_STATUS], "SUCCESS") && isfinite(r->performance);
}

/* Per run of a series: the mean of its SUCCESS values, and whether it failed. */
struct point {
	size_t run;
	double v; /* NAN: no value that run */
	int failed;
};

static size_t points_of(const struct ctx *c, const struct series *s, struct point *p)
{
	size_t n = 0;
	for (size_t i = 0; i < s->n;) {
		size_t run = c->run_of[s->rows[i]], cnt = 0;
		double sum = 0;
		int failed = 0;
		for (; i < s->n && c->run_of[s->rows[i]] == run; i++) {
			const rm_result *r = &c->h->rows[s->rows[i]];
			if (success(r)) {
				sum += r->performance;
				cnt++;
			} else if (!strcmp(r->col[RM_COL_STATUS], "FAILURE")) {
				failed = 1;
			}
		}
		p[n].run = run;
		p[n].v = cnt ? sum / (double)cnt : NAN;
		p[n].failed = failed;
		n++;
	}
	return n;
}

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

static int by_model_run(const void *pa, const void *pb)
{
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	int c =
	    strcmp(sort_ctx->h->rows[a].col[RM_COL_MODEL], sort_ctx->h->rows[b].col[RM_COL_MODEL]);
	if (c)
		return c;
	return (sort_ctx->run_of[a] > sort_ctx->run_of[b]) -
	       (sort_ctx->run_of[a] < sort_ctx->run_of[b]);
}

/* The first of idx[0..n) (sorted by model) whose model is not below model. */
static size_t lower_model(const struct ctx *c, const size_t *idx, size_t n, const char *model)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(c->h->rows[idx[mid]].col[RM_COL_MODEL], model) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int rank_of(const struct series *s)
{
	const rm_change *ch = s->change;
	if (ch && ch->verdict == RM_VERDICT_REGRESSION)
		return 0;
	if (s->failed_latest)
		return 1;
	if (ch && ch->verdict == RM_VERDICT_NOISE)
		return 2;
	return 3;
}

static int by_rank(const void *pa, const void *pb)
{
	const struct series *a = pa, *b = pb;
	if (a->rank != b->rank)
		return a->rank - b->rank;
	return key_cmp(a->r0, b->r0);
}

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

int rm_html_report(const char *path, const rm_results *h, const rm_html_opts *o, rm_error *err)
{
	struct ctx c = {h, NULL, 0, NULL, 0};
	rm_buf out = RM_BUF_INIT(HTML_MAX);
	rm_results latest = RM_RESULTS_INIT;
	rm_baseline *base = NULL;
	rm_gate gate = {0};
	rm_gate_opts go = {o->threshold_pct, 0, NULL, 0, o->directions};
	size_t *idx = NULL, n_series = 0, n_models = 0, n_fail_latest = 0;
	struct series *ser = NULL;
	struct point *pts = NULL;
	unsigned char *failed_runs = NULL, *seen_runs = NULL;
	size_t *fidx = rm_xcalloc(h->n ? h->n : 1, sizeof(*fidx)), n_fidx = 0;
	char now[32];
	int ret = -1;

	rm_utc_timestamp(now, sizeof(now));
	index_runs(&c);

	/* The latest run's rows (shallow copies: owned by h) and its verdicts. */
	if (c.n_runs) {
		const char *lid = c.runs[c.latest].id;
		for (size_t i = 0; i < h->n; i++) {
			if (c.run_of[i] != c.latest)
				continue;
			if (latest.n == latest.cap_) {
				latest.cap_ = latest.cap_ ? latest.cap_ * 2 : 64;
				latest.rows =
				    rm_xrealloc(latest.rows, latest.cap_ * sizeof(*latest.rows));
			}
			latest.rows[latest.n++] = h->rows[i];
			n_fail_latest += !strcmp(h->rows[i].col[RM_COL_STATUS], "FAILURE");
		}
		base = rm_baseline_from_results(h, lid);
		rm_gate_eval(&latest, base, &go, &gate);
	}

	/* Series: rows sorted by key then run. */
	idx = rm_xcalloc(h->n ? h->n : 1, sizeof(*idx));
	for (size_t i = 0; i < h->n; i++)
		idx[i] = i;
	sort_ctx = &c;
	qsort(idx, h->n, sizeof(*idx), by_key_run);
	ser = rm_xcalloc(h->n ? h->n : 1, sizeof(*ser));
	for (size_t i = 0; i < h->n;) {
		size_t j = i;
		int any_value = 0;
		while (j < h->n && !key_cmp(&h->rows[idx[i]], &h->rows[idx[j]]))
			any_value |= success(&h->rows[idx[j++]]);
		struct series *s = &ser[n_series];
		s->rows = idx + i;
		s->n = j - i;
		s->r0 = &h->rows[idx[i]];
		/* Rows without a metric are failures of a model that has a series of its own;
		 * they make a series only for a model that never produced a value. */
		if (any_value || !s->r0->col[RM_COL_METRIC][0])
			n_series++;
		i = j;
	}
	/* Metric-less series of models that have a real series are dropped; the failures
	 * still mark the real series' plots through failed_latest and the failure table. */
	{
		size_t w = 0;
		for (size_t i = 0; i < n_series; i++) {
			struct series *s = &ser[i];
			int keep = 1;
			if (!s->r0->col[RM_COL_METRIC][0])
				for (size_t k = 0; k < n_series && keep; k++)
					if (k != i && ser[k].r0->col[RM_COL_METRIC][0] &&
					    !strcmp(ser[k].r0->col[RM_COL_MODEL],
						    s->r0->col[RM_COL_MODEL]))
						keep = 0;
			if (keep)
				ser[w++] = *s;
		}
		n_series = w;
	}
	for (size_t i = 0; i < n_series; i++) {
		struct series *s = &ser[i];
		const char *model = s->r0->col[RM_COL_MODEL];
		for (size_t k = 0; k < gate.n; k++) {
			const rm_change *ch = &gate.v[k];
			if (!strcmp(ch->model, model) && ch->n_failed)
				s->failed_latest = 1;
			if (!strcmp(ch->model, model) &&
			    !strcmp(ch->metric, s->r0->col[RM_COL_METRIC]) &&
			    !strcmp(ch->docker_file, s->r0->col[RM_COL_DOCKERFILE]) &&
			    !strcmp(ch->arch, s->r0->col[RM_COL_ARCH]) && ch->n_success)
				s->change = ch;
		}
		s->rank = rank_of(s);
		if (i == 0 || strcmp(model, ser[i - 1].r0->col[RM_COL_MODEL]))
			n_models++;
	}
	qsort(ser, n_series, sizeof(*ser), by_rank);

	/* The page */
	rm_buf_addstr(&out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
			    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
			    "'none'; style-src 'unsafe-inline'\">"
			    "<meta name=\"viewport\" content=\"width=device-width\"><title>");
	rm_text_html(&out, o->title ? o->title : "run_models results");
	rm_buf_addf(&out, "</title><style>%s</style></head><body>\n<h1>", css);
	rm_text_html(&out, o->title ? o->title : "run_models results");
	rm_buf_addstr(&out, "</h1><div class=\"meta\">");
	if (c.n_runs) {
		rm_buf_addf(&out, "%zu run%s from ", c.n_runs, c.n_runs == 1 ? "" : "s");
		rm_text_html(&out, c.runs[0].start);
		rm_buf_addstr(&out, " to ");
		rm_text_html(&out, c.runs[c.latest].start);
		rm_buf_addstr(&out, "; latest run <code>");
		rm_text_html(&out, c.runs[c.latest].id);
		rm_buf_addstr(&out, "</code>");
	} else {
		rm_buf_addstr(&out, "no results");
	}
	if (o->source) {
		rm_buf_addstr(&out, "; from ");
		rm_text_html(&out, o->source);
	}
	rm_buf_addf(&out, "; generated %s</div>\n", now);

	rm_buf_addf(&out,
		    "<div class=\"cards\"><div class=\"card\"><b>%zu</b>models</div>"
		    "<div class=\"card regression\"><b>%zu</b>regressions</div>"
		    "<div class=\"card failed\"><b>%zu</b>failures in the latest run</div>"
		    "<div class=\"card\"><b>%zu</b>compared with a baseline</div></div>\n",
		    n_models, gate.n_regressions, n_fail_latest, gate.n_compared);

	if (n_fail_latest) {
		/* A long list would push the trends off the first screen; the failed models
		 * head the table below anyway. */
		rm_buf_addf(&out,
			    "<details%s id=\"failures\"><summary><h2>Failures in the latest run"
			    "</h2> (%zu)</summary><table><tr><th>model</th><th>reason</th>"
			    "<th>exit code</th><th>log</th></tr>\n",
			    n_fail_latest <= 10 ? " open" : "", n_fail_latest);
		for (size_t i = 0; i < latest.n; i++) {
			const rm_result *r = &latest.rows[i];
			if (strcmp(r->col[RM_COL_STATUS], "FAILURE"))
				continue;
			rm_buf_addstr(&out, "<tr class=\"failed\" data-failed=\"");
			rm_text_html(&out, r->col[RM_COL_MODEL]);
			rm_buf_addstr(&out, "\"><td>");
			rm_text_html(&out, r->col[RM_COL_MODEL]);
			rm_buf_addstr(&out, "</td><td><pre>");
			rm_text_html(&out, r->col[RM_COL_REASON]);
			rm_buf_addstr(&out, "</pre></td><td class=\"n\">");
			rm_text_html(&out, r->col[RM_COL_EXIT_CODE]);
			rm_buf_addstr(&out, "</td><td>");
			rm_text_html(&out, r->col[RM_COL_LOG_FILE]);
			rm_buf_addstr(&out, "</td></tr>\n");
		}
		rm_buf_addstr(&out, "</table></details>\n");
	}

	rm_buf_addf(&out,
		    "<details open id=\"models\"><summary><h2>Models and metrics</h2> "
		    "(%zu)</summary>"
		    "<p class=\"legend\"><span class=\"regression\">worse than %.2f%%</span>"
		    "<span class=\"better\">better than %.2f%%</span><span class=\"noise\">"
		    "within the threshold or the noise</span><span>dashed line: baseline; "
		    "red ticks: failed runs</span></p>"
		    "<table><tr><th>model</th><th>metric</th><th>trend</th><th>latest</th>"
		    "<th>baseline</th><th>change</th><th>failed runs</th></tr>\n",
		    n_series, gate.threshold_pct, gate.threshold_pct);
	pts = rm_xcalloc(c.n_runs ? c.n_runs : 1, sizeof(*pts));
	failed_runs = rm_xcalloc(c.n_runs ? c.n_runs : 1, 1);
	seen_runs = rm_xcalloc(c.n_runs ? c.n_runs : 1, 1);
	/* FAILURE rows by model (their metric is empty, so they sit in no value series). */
	for (size_t i = 0; i < h->n; i++)
		if (!strcmp(h->rows[i].col[RM_COL_STATUS], "FAILURE"))
			fidx[n_fidx++] = i;
	qsort(fidx, n_fidx, sizeof(*fidx), by_model_run);
	for (size_t i = 0; i < n_series; i++) {
		const struct series *s = &ser[i];
		const rm_change *ch = s->change;
		size_t np = points_of(&c, s, pts), nfail = 0, nseen = 0;
		const char *cls = s->failed_latest && !ch ? "failed" : verdict_class(ch);
		const char *model = s->r0->col[RM_COL_MODEL], *why = NULL;

		memset(failed_runs, 0, c.n_runs);
		memset(seen_runs, 0, c.n_runs);
		for (size_t k = 0; k < np; k++)
			seen_runs[pts[k].run] = 1;
		for (size_t k = lower_model(&c, fidx, n_fidx, model);
		     k < n_fidx && !strcmp(h->rows[fidx[k]].col[RM_COL_MODEL], model); k++) {
			failed_runs[c.run_of[fidx[k]]] = 1;
			seen_runs[c.run_of[fidx[k]]] = 1;
			if (c.run_of[fidx[k]] == c.latest)
				why = h->rows[fidx[k]].col[RM_COL_REASON];
		}
		for (size_t k = 0; k < c.n_runs; k++) {
			nfail += failed_runs[k];
			nseen += seen_runs[k];
		}
		rm_buf_addf(&out, "<tr class=\"%s\" data-model=\"", cls);
		rm_text_html(&out, s->r0->col[RM_COL_MODEL]);
		rm_buf_addstr(&out, "\"><td>");
		rm_text_html(&out, s->r0->col[RM_COL_MODEL]);
		rm_buf_addstr(&out, "</td><td>");
		rm_text_html(&out, s->r0->col[RM_COL_METRIC]);
		if (s->r0->col[RM_COL_ARCH][0]) {
			rm_buf_addstr(&out, "<br><small>");
			rm_text_html(&out, s->r0->col[RM_COL_ARCH]);
			rm_buf_addstr(&out, " ");
			rm_text_html(&out, s->r0->col[RM_COL_MACHINE]);
			rm_buf_addstr(&out, "</small>");
		}
		rm_buf_addstr(&out, "</td><td>");
		plot(&out, &c, s, pts, np, failed_runs);
		rm_buf_addstr(&out, "</td><td class=\"n\">");
		if (ch && isfinite(ch->mean))
			rm_buf_addf(&out, "%.6g", ch->mean);
		else if (s->failed_latest) {
			rm_buf_addstr(&out, "<span class=\"failed\" title=\"");
			rm_text_html(&out, why ? why : "");
			rm_buf_addstr(&out, "\">failed</span>");
		} else if (np && isfinite(pts[np - 1].v))
			rm_buf_addf(&out, "<span class=\"none\">%.6g (older run)</span>",
				    pts[np - 1].v);
		rm_buf_addstr(&out, "</td><td class=\"n\">");
		if (ch && isfinite(ch->base_mean))
			rm_buf_addf(&out, "%.6g", ch->base_mean);
		rm_buf_addf(&out, "</td><td class=\"n %s\"", cls);
		if (ch && ch->note) {
			rm_buf_addstr(&out, " title=\"");
			rm_text_html(&out, ch->note);
			rm_buf_addstr(&out, "\"");
		}
		rm_buf_addstr(&out, ">");
		if (ch && isfinite(ch->change_pct))
			rm_buf_addf(&out, "%+.2f%%", ch->change_pct);
		if (ch && ch->verdict == RM_VERDICT_NOISE)
			rm_buf_addstr(&out, " (noise)");
		if (ch && ch->verdict == RM_VERDICT_UNKNOWN)
			rm_buf_addstr(&out, " (direction?)");
		rm_buf_addf(&out, "</td><td class=\"n\">%zu/%zu</td></tr>\n", nfail, nseen);
	}
	rm_buf_addstr(&out, "</table></details>\n<details><summary><h2>How changes are judged"
			    "</h2></summary><p>");
	rm_text_html(&out, gate.rule ? gate.rule : "");
	rm_buf_addstr(&out, " The change is (latest - baseline) / |baseline| &times; 100, "
			    "both the means of their run's repeats; its colour says whether "
			    "that is good for the metric.</p></details>\n</body></html>\n");
	if (out.len >= out.max) {
		rm_error_set(err, RM_ERR_IO, "report '%s' would exceed %zu MiB", path,
			     HTML_MAX >> 20);
		goto out;
	}
	ret = rm_write_text_file(path, out.data, out.len, 0, err);
out:
	free(pts);
	free(failed_runs);
	free(seen_runs);
	free(fidx);
	free(ser);
	free(idx);
	free(c.run_of);
	free(c.runs);
	free(latest.rows);
	rm_gate_release(&gate);
	rm_baseline_free(base);
	rm_buf_release(&out);
	return ret;
}
