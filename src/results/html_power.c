/*
 * The HTML report's power column: each model's GPU power per run (gpu_power_avg_w from
 * perf_<model>.csv, the mean of a run's repeats) as a small plot on the same run axis as the
 * model's trend, so a throughput change can be read beside what the GPUs drew. Its own
 * piece: the page asks it for a header and a cell, nothing more.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "html_internal.h"
#include "rm/results.h"

struct power_point {
	const char *model;
	size_t run;
	double w;
};

struct html_power {
	struct power_point *p; /* by model, then run; one per (model, run) */
	size_t n;
};

static const struct ctx *power_ctx;

static int power_by_run_id(const void *a, const void *b)
{
	const size_t *x = a, *y = b;
	return strcmp(power_ctx->runs[*x].id, power_ctx->runs[*y].id);
}

static int power_by_model_run(const void *a, const void *b)
{
	const struct power_point *x = a, *y = b;
	int c = strcmp(x->model, y->model);
	return c ? c : (x->run > y->run) - (x->run < y->run);
}

/* The run index of id, through runs sorted by id; -1 when the history has no such run. */
static long power_run_of(const struct ctx *c, const size_t *by_id, const char *id)
{
	size_t lo = 0, hi = c->n_runs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int cmp = strcmp(c->runs[by_id[mid]].id, id);
		if (!cmp)
			return (long)by_id[mid];
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

struct html_power *rm_results__html_power_new(const struct ctx *c, const rm_metrics *m)
{
	struct html_power *hp;
	size_t *by_id, k = 0;

	if (!m || !m->n || !c->n_runs)
		return NULL;
	hp = rm_xcalloc(1, sizeof(*hp));
	hp->p = rm_xcalloc(m->n, sizeof(*hp->p));
	by_id = rm_xcalloc(c->n_runs, sizeof(*by_id));
	for (size_t i = 0; i < c->n_runs; i++)
		by_id[i] = i;
	power_ctx = c;
	qsort(by_id, c->n_runs, sizeof(*by_id), power_by_run_id);
	for (size_t i = 0; i < m->n; i++) {
		const rm_metric_row *r = &m->rows[i];
		long run;
		if (strcmp(r->metric, "gpu_power_avg_w") || !isfinite(r->value) ||
		    (run = power_run_of(c, by_id, r->run_id)) < 0)
			continue;
		hp->p[hp->n++] = (struct power_point){r->model, (size_t)run, r->value};
	}
	free(by_id);
	qsort(hp->p, hp->n, sizeof(*hp->p), power_by_model_run);
	/* the repeats of a run: their mean */
	for (size_t i = 0; i < hp->n;) {
		size_t j = i;
		double sum = 0;
		for (; j < hp->n && !power_by_model_run(&hp->p[i], &hp->p[j]); j++)
			sum += hp->p[j].w;
		hp->p[k] = hp->p[i];
		hp->p[k++].w = sum / (double)(j - i);
		i = j;
	}
	hp->n = k;
	if (!hp->n) {
		rm_results__html_power_free(hp);
		return NULL;
	}
	return hp;
}

void rm_results__html_power_free(struct html_power *hp)
{
	if (!hp)
		return;
	free(hp->p);
	free(hp);
}

void rm_results__html_power_head(rm_buf *out, const struct html_power *hp)
{
	if (hp)
		rm_buf_addstr(out, "<th>GPU power (W)</th>");
}

static double power_x(const struct ctx *c, size_t run)
{
	if (c->n_runs < 2)
		return PLOT / 2.0;
	return PAD + (double)run * (PLOT - 2 * PAD) / (double)(c->n_runs - 1);
}

void rm_results__html_power_cell(rm_buf *out, const struct html_power *hp, const struct ctx *c,
				 const char *model)
{
	size_t lo = 0, hi, from;
	double min = INFINITY, max = -INFINITY, span;

	if (!hp)
		return;
	/* the page's cells are written "</td><td>content": this one too */
	rm_buf_addstr(out, "</td><td>");
	hi = hp->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(hp->p[mid].model, model) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	from = lo;
	for (hi = from; hi < hp->n && !strcmp(hp->p[hi].model, model); hi++) {
		min = fmin(min, hp->p[hi].w);
		max = fmax(max, hp->p[hi].w);
	}
	if (hi == from)
		return;
	span = max - min > 0 ? max - min : fabs(max) > 0 ? fabs(max) * 0.1 : 1;
#define PY(v) (PH - 10 - ((v)-min) / span * (PH - 18) + 2)
	rm_buf_addstr(out, "<svg class=\"trend power\" data-model=\"");
	rm_text_html(out, model);
	rm_buf_addf(out, "\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\"><title>",
		    PW, PH, PW, PH);
	rm_text_html(out, model);
	rm_buf_addf(out, " gpu_power_avg_w: %zu runs, min %.4g W, max %.4g W</title>", hi - from,
		    min, max);
	if (hi - from > 1) {
		rm_buf_addstr(out, "<polyline style=\"stroke:#bc4c00\" points=\"");
		for (size_t i = from; i < hi; i++)
			rm_buf_addf(out, "%.1f,%.1f ", power_x(c, hp->p[i].run), PY(hp->p[i].w));
		rm_buf_addstr(out, "\"/>");
	}
	rm_buf_addf(out, "<circle style=\"fill:#bc4c00\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\"/>",
		    power_x(c, hp->p[hi - 1].run), PY(hp->p[hi - 1].w));
	rm_buf_addf(out, "<text x=\"%d\" y=\"9\">%.4g</text><text x=\"%d\" y=\"%d\">%.4g</text>",
		    PW - 2, max, PW - 2, PH - 9, min);
	rm_buf_addstr(out, "</svg>");
#undef PY
	rm_buf_addf(out, "%s%.4g W",
		    hp->p[hi - 1].run == c->latest ? "" : "older run: ", hp->p[hi - 1].w);
}
