/*
 * The HTML trend report from a history store (rm/results.h): the runs in time order, one
 * row per series, the latest run judged by the same gate as CI, its change points marked.
 * Memory is the store's (bounded per series) and the latest run's rows.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_internal.h"
#include "rm/detect.h"
#include "rm/gate.h"
#include "rm/history.h"
#include "rm/html.h"
#include "rm/results.h"
#include "rm/text.h"

static const struct report *sort_report;

/* Runs by start time, then order of appearance. */
static int by_start(const void *pa, const void *pb)
{
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	int c = strcmp(rm_history_run(sort_report->h, a)->start,
		       rm_history_run(sort_report->h, b)->start);
	return c ? c : (a > b) - (a < b);
}

static void order_runs(struct report *r)
{
	size_t n = r->n_runs ? r->n_runs : 1;

	r->by_rank = rm_xcalloc(n, sizeof(*r->by_rank));
	r->rank_of = rm_xcalloc(n, sizeof(*r->rank_of));
	for (size_t k = 0; k < r->n_runs; k++)
		r->by_rank[k] = k;
	sort_report = r;
	qsort(r->by_rank, r->n_runs, sizeof(*r->by_rank), by_start);
	for (size_t k = 0; k < r->n_runs; k++)
		r->rank_of[r->by_rank[k]] = k;
}

double rm_results__html_x(const struct report *r, const rm_hpoint *p)
{
	double a = (double)r->rank_of[p->run_first], b = (double)r->rank_of[p->run];
	if (r->n_runs < 2)
		return PLOT / 2.0;
	return PAD + (a + b) / 2 * (PLOT - 2 * PAD) / (double)(r->n_runs - 1);
}

static int key_cmp(const rm_hseries *a, const rm_hseries *b)
{
	int c;
	if ((c = strcmp(a->model, b->model)) || (c = strcmp(a->metric, b->metric)) ||
	    (c = strcmp(a->docker_file, b->docker_file)) || (c = strcmp(a->arch, b->arch)) ||
	    (c = strcmp(a->n_gpus, b->n_gpus)) || (c = strcmp(a->config, b->config)) ||
	    (c = strcmp(a->config_key, b->config_key)))
		return c;
	return strcmp(a->machine, b->machine);
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
	return key_cmp(a->h, b->h);
}

static int by_key(const void *pa, const void *pb)
{
	const struct series *a = pa, *b = pb;
	return key_cmp(a->h, b->h);
}

static int has_value(const rm_hseries *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->p[i].n)
			return 1;
	return 0;
}

/*
 * The rows of the page: series with a value, and the metric-less series (failures) of a
 * model that never produced one. A model's failures mark every plot of that model.
 */
static void make_series(struct report *r)
{
	size_t n = rm_history_n_series(r->h), w = 0;
	struct series *all = rm_xcalloc(n ? n : 1, sizeof(*all));

	for (size_t i = 0; i < n; i++) {
		all[i].h = rm_history_series_at(r->h, i);
	}
	qsort(all, n, sizeof(*all), by_key); /* a model's series together, metric "" first */
	r->ser = rm_xcalloc(n ? n : 1, sizeof(*r->ser));
	for (size_t i = 0; i < n;) {
		size_t j = i, fail = RM_DETECT_NONE, kept = 0;
		while (j < n && !strcmp(all[j].h->model, all[i].h->model))
			j++;
		for (size_t k = i; k < j; k++)
			if (!all[k].h->metric[0] && all[k].h->n_failed_runs &&
			    (fail == RM_DETECT_NONE ||
			     all[k].h->n_failed_runs > all[fail].h->n_failed_runs))
				fail = k;
		for (size_t k = i; k < j; k++)
			if (all[k].h->metric[0] && has_value(all[k].h)) {
				r->ser[w] = all[k];
				r->ser[w++].fail = fail != RM_DETECT_NONE ? all[fail].h : NULL;
				kept++;
			}
		if (!kept && fail != RM_DETECT_NONE) {
			r->ser[w] = all[fail];
			r->ser[w++].fail = all[fail].h;
		}
		i = j;
	}
	r->n_series = w;
	free(all);
}

/* Each series' verdict in the latest run, its rank, and the number of models. */
static void attach_changes(struct report *r)
{
	for (size_t i = 0; i < r->n_series; i++) {
		struct series *s = &r->ser[i];
		for (size_t k = 0; k < r->gate.n; k++) {
			const rm_change *ch = &r->gate.v[k];
			if (strcmp(ch->model, s->h->model))
				continue;
			if (ch->n_failed)
				s->failed_latest = 1;
			if (!strcmp(ch->metric, s->h->metric) &&
			    !strcmp(ch->docker_file, s->h->docker_file) &&
			    !strcmp(ch->arch, s->h->arch) && !strcmp(ch->n_gpus, s->h->n_gpus) &&
			    !strcmp(ch->machine, s->h->machine) &&
			    !strcmp(ch->config_key, s->h->config_key) && ch->n_success)
				s->change = ch;
		}
		s->rank = rank_of(s);
		if (i == 0 || strcmp(s->h->model, r->ser[i - 1].h->model))
			r->n_models++;
	}
	qsort(r->ser, r->n_series, sizeof(*r->ser), by_rank);
}

int rm_html_report(const char *path, const rm_baseline *h, const rm_results *latest,
		   const rm_html_opts *o, rm_error *err)
{
	struct report r;
	rm_buf out = RM_BUF_INIT(HTML_MAX);
	rm_gate_opts go = RM_GATE_OPTS_INIT;
	int ret = -1;

	go.threshold_pct = o->threshold_pct;
	go.directions = o->directions;
	go.window = o->window;
	memset(&r, 0, sizeof(r));
	r.o = o;
	r.h = h;
	r.latest = latest;
	r.n_runs = rm_history_n_runs(h);
	r.latest_id = rm_history_latest(h, NULL, NULL);
	order_runs(&r);
	r.power = rm_results__html_power_new(&r, o->power);
	for (size_t i = 0; i < latest->n; i++)
		r.n_fail_latest +=
		    rm_status_of(latest->rows[i].col[RM_COL_STATUS]) == RM_STATUS_FAILURE &&
		    !latest->rows[i].retried;
	rm_gate_eval(latest, h, &go, &r.gate);
	rm_sweep_cells_collect(latest, NULL, NULL, &r.cells);
	make_series(&r);
	attach_changes(&r);
	rm_results__html_page(&out, &r);
	if (out.len >= out.max)
		rm_error_set(err, RM_ERR_IO, "report '%s' would exceed %zu MiB", path,
			     HTML_MAX >> 20);
	else
		ret = rm_write_text_file(path, out.data, out.len, 0, err);
	rm_results__html_power_free(r.power);
	rm_sweep_cells_release(&r.cells);
	free(r.ser);
	free(r.by_rank);
	free(r.rank_of);
	rm_gate_release(&r.gate);
	rm_buf_release(&out);
	return ret;
}
