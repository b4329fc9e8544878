/*
 * The HTML trend report. Everything is computed once over sorted row indexes: the runs in
 * time order, one series per (model, metric, Dockerfile, GPU architecture, machine), the
 * latest run judged against its baseline by the same gate as CI uses.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_internal.h"
#include "rm/results.h"

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

size_t rm_results__html_points_of(const struct ctx *c, const struct series *s, struct point *p)
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

size_t rm_results__html_lower_model(const struct ctx *c, const size_t *idx, size_t n,
				    const char *model)
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

/* The latest run's rows (shallow copies: owned by h) and its verdicts. */
static void judge_latest(struct report *r, const rm_results *h)
{
	rm_gate_opts go = {r->o->threshold_pct, 0, NULL, 0, r->o->directions};

	if (!r->c.n_runs)
		return;
	for (size_t i = 0; i < h->n; i++) {
		if (r->c.run_of[i] != r->c.latest)
			continue;
		if (r->latest.n == r->latest.cap_) {
			r->latest.cap_ = r->latest.cap_ ? r->latest.cap_ * 2 : 64;
			r->latest.rows =
			    rm_xrealloc(r->latest.rows, r->latest.cap_ * sizeof(*r->latest.rows));
		}
		r->latest.rows[r->latest.n++] = h->rows[i];
		r->n_fail_latest += !strcmp(h->rows[i].col[RM_COL_STATUS], "FAILURE");
	}
	r->base = rm_baseline_from_results(h, r->c.runs[r->c.latest].id);
	rm_gate_eval(&r->latest, r->base, &go, &r->gate);
}

/* Series: rows sorted by key then run, one series per key. Rows without a metric are
 * failures of a model that has a series of its own; they make a series only for a model
 * that never produced a value. */
static void make_series(struct report *r, const rm_results *h)
{
	r->idx = rm_xcalloc(h->n ? h->n : 1, sizeof(*r->idx));
	for (size_t i = 0; i < h->n; i++)
		r->idx[i] = i;
	sort_ctx = &r->c;
	qsort(r->idx, h->n, sizeof(*r->idx), by_key_run);
	r->ser = rm_xcalloc(h->n ? h->n : 1, sizeof(*r->ser));
	for (size_t i = 0; i < h->n;) {
		size_t j = i;
		int any_value = 0;
		while (j < h->n && !key_cmp(&h->rows[r->idx[i]], &h->rows[r->idx[j]]))
			any_value |= success(&h->rows[r->idx[j++]]);
		struct series *s = &r->ser[r->n_series];
		s->rows = r->idx + i;
		s->n = j - i;
		s->r0 = &h->rows[r->idx[i]];
		if (any_value || !s->r0->col[RM_COL_METRIC][0])
			r->n_series++;
		i = j;
	}
}

/* Metric-less series of models that have a real series are dropped; the failures still mark
 * the real series' plots and the failure table. */
static void drop_metricless(struct report *r)
{
	size_t w = 0;

	for (size_t i = 0; i < r->n_series; i++) {
		const struct series *s = &r->ser[i];
		int keep = 1;
		if (!s->r0->col[RM_COL_METRIC][0])
			for (size_t k = 0; k < r->n_series && keep; k++)
				if (k != i && r->ser[k].r0->col[RM_COL_METRIC][0] &&
				    !strcmp(r->ser[k].r0->col[RM_COL_MODEL],
					    s->r0->col[RM_COL_MODEL]))
					keep = 0;
		if (keep)
			r->ser[w++] = *s;
	}
	r->n_series = w;
}

/* Each series' verdict in the latest run, its rank, and the number of models. */
static void attach_changes(struct report *r)
{
	for (size_t i = 0; i < r->n_series; i++) {
		struct series *s = &r->ser[i];
		const char *model = s->r0->col[RM_COL_MODEL];
		for (size_t k = 0; k < r->gate.n; k++) {
			const rm_change *ch = &r->gate.v[k];
			if (strcmp(ch->model, model))
				continue;
			if (ch->n_failed)
				s->failed_latest = 1;
			if (!strcmp(ch->metric, s->r0->col[RM_COL_METRIC]) &&
			    !strcmp(ch->docker_file, s->r0->col[RM_COL_DOCKERFILE]) &&
			    !strcmp(ch->arch, s->r0->col[RM_COL_ARCH]) && ch->n_success)
				s->change = ch;
		}
		s->rank = rank_of(s);
		if (i == 0 || strcmp(model, r->ser[i - 1].r0->col[RM_COL_MODEL]))
			r->n_models++;
	}
	qsort(r->ser, r->n_series, sizeof(*r->ser), by_rank);
}

/* FAILURE rows by model, then run. */
static void index_failures(struct report *r, const rm_results *h)
{
	r->fidx = rm_xcalloc(h->n ? h->n : 1, sizeof(*r->fidx));
	for (size_t i = 0; i < h->n; i++)
		if (!strcmp(h->rows[i].col[RM_COL_STATUS], "FAILURE"))
			r->fidx[r->n_fidx++] = i;
	sort_ctx = &r->c;
	qsort(r->fidx, r->n_fidx, sizeof(*r->fidx), by_model_run);
}

int rm_html_report(const char *path, const rm_results *h, const rm_html_opts *o, rm_error *err)
{
	struct report r;
	rm_buf out = RM_BUF_INIT(HTML_MAX);
	int ret = -1;

	memset(&r, 0, sizeof(r));
	r.o = o;
	r.c.h = h;
	r.latest = (rm_results)RM_RESULTS_INIT;
	index_runs(&r.c);
	r.power = rm_results__html_power_new(&r.c, o->power);
	judge_latest(&r, h);
	make_series(&r, h);
	drop_metricless(&r);
	attach_changes(&r);
	index_failures(&r, h);
	rm_results__html_page(&out, &r);
	if (out.len >= out.max)
		rm_error_set(err, RM_ERR_IO, "report '%s' would exceed %zu MiB", path,
			     HTML_MAX >> 20);
	else
		ret = rm_write_text_file(path, out.data, out.len, 0, err);
	rm_results__html_power_free(r.power);
	free(r.fidx);
	free(r.ser);
	free(r.idx);
	free(r.c.run_of);
	free(r.c.runs);
	free(r.latest.rows);
	rm_gate_release(&r.gate);
	rm_baseline_free(r.base);
	rm_buf_release(&out);
	return ret;
}
