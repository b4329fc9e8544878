/*
 * A metric by configuration: cells per model, metric and configuration, `report sweep`'s
 * tables, the HTML report's curves (rm/sweep_table.h). A run has a few hundred cells: plain
 * arrays and linear scans.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rm/config.h"
#include "rm/report.h"
#include "rm/results.h"
#include "rm/sweep_table.h"
#include "rm/text.h"
#include "rm/util.h"

static rm_sweep_cell *cell_of(rm_sweep_cells *c, json_t *index, const rm_result *r,
			      const char *base)
{
	char *key = rm_xasprintf("%s\x1f%s\x1f%s", r->col[RM_COL_MODEL], base,
				 r->col[RM_COL_CONFIG_KEY][0] ? r->col[RM_COL_CONFIG_KEY]
							      : r->col[RM_COL_METRIC]);
	json_t *at = json_object_get(index, key);
	rm_sweep_cell *cell;

	if (at) {
		free(key);
		return &c->v[json_integer_value(at)];
	}
	json_object_set_new(index, key, json_integer((json_int_t)c->n));
	free(key);
	c->v = rm_xrealloc(c->v, (c->n + 1) * sizeof(*c->v));
	cell = &c->v[c->n++];
	memset(cell, 0, sizeof(*cell));
	cell->model = r->col[RM_COL_MODEL];
	cell->metric = rm_xstrdup(base);
	cell->row = r;
	if (rm_config_parse(&cell->params, r->col[RM_COL_CONFIG]) < 0)
		rm_config_release(&cell->params);
	rm_config_from_metric(r->col[RM_COL_METRIC], &cell->params);
	return cell;
}

void rm_sweep_cells_collect(const rm_results *run, const char *model, const char *metric,
			    rm_sweep_cells *out)
{
	json_t *index = json_object();

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < run->n; i++) {
		const rm_result *r = &run->rows[i];
		char *base;
		rm_sweep_cell *c;
		if (rm_status_of(r->col[RM_COL_STATUS]) != RM_STATUS_SUCCESS ||
		    !isfinite(r->performance) || (model && strcmp(model, r->col[RM_COL_MODEL])))
			continue;
		base = rm_config_metric_base(r->col[RM_COL_METRIC]);
		if (metric && strcmp(metric, base) && strcmp(metric, r->col[RM_COL_METRIC])) {
			free(base);
			continue;
		}
		c = cell_of(out, index, r, base);
		free(base);
		c->n++;
		c->sum += r->performance;
		c->sum2 += r->performance * r->performance;
	}
	for (size_t i = 0; i < out->n; i++) {
		rm_sweep_cell *c = &out->v[i];
		double var =
		    c->n > 1 ? (c->sum2 - c->sum * c->sum / (double)c->n) / (double)(c->n - 1) : 0;
		c->mean = c->sum / (double)c->n;
		c->sd = var > 0 ? sqrt(var) : 0;
	}
	json_decref(index);
}

void rm_sweep_cells_release(rm_sweep_cells *c)
{
	for (size_t i = 0; c && i < c->n; i++) {
		free(c->v[i].metric);
		rm_config_release(&c->v[i].params);
	}
	if (c) {
		free(c->v);
		memset(c, 0, sizeof(*c));
	}
}

const char *rm_sweep_cell_dim(const rm_sweep_cell *c, const char *dim)
{
	const char *v = rm_config_get(&c->params, dim);
	int col;

	if (v)
		return v;
	if (!strcmp(dim, "model"))
		return c->model;
	if (!strcmp(dim, "metric"))
		return c->metric;
	col = rm_perf_col_index(dim);
	return col >= 0 && c->row->col[col][0] ? c->row->col[col] : NULL;
}

/* The distinct values of a dimension over cells idx[0..n): numeric order when all are
 * numbers, else the order they come in. */
struct values {
	const char **v;
	size_t n;
};

static int num_cmp(const void *a, const void *b)
{
	double x = 0, y = 0;
	rm_parse_double(*(const char *const *)a, &x);
	rm_parse_double(*(const char *const *)b, &y);
	return (x > y) - (x < y);
}

static void values_of(const rm_sweep_cells *c, const size_t *idx, size_t n, const char *dim,
		      struct values *out)
{
	int numeric = 1;
	double d;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; dim && i < n; i++) {
		const char *v = rm_sweep_cell_dim(&c->v[idx[i]], dim);
		size_t k = 0;
		if (!v)
			continue;
		while (k < out->n && strcmp(out->v[k], v))
			k++;
		if (k < out->n)
			continue;
		out->v = rm_xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
		out->v[out->n++] = v;
		numeric &= rm_parse_double(v, &d) == 0;
	}
	if (numeric && out->n > 1)
		qsort(out->v, out->n, sizeof(*out->v), num_cmp);
}

/* A cell's parameters but the table's dimensions, as a label ("" when none). */
static char *rest_label(const rm_sweep_cell *c, const rm_sweep_table_opts *o)
{
	rm_config rest = RM_CONFIG_INIT;
	char *label;

	for (size_t i = 0; i < c->params.n; i++)
		if (strcmp(c->params.p[i].name, o->rows) &&
		    (!o->columns || strcmp(c->params.p[i].name, o->columns)))
			rm_config_set(&rest, c->params.p[i].name, c->params.p[i].value);
	label = rm_config_label(&rest);
	rm_config_release(&rest);
	return label;
}

/* A table: its cells (indexes), and what names it. */
struct table {
	const char *model, *metric;
	char *rest;
	size_t *idx;
	size_t n;
};

struct tables {
	struct table *t;
	size_t n;
};

static void tables_make(const rm_sweep_cells *c, const rm_sweep_table_opts *o, struct tables *ts)
{
	memset(ts, 0, sizeof(*ts));
	for (size_t i = 0; i < c->n; i++) {
		const rm_sweep_cell *cell = &c->v[i];
		char *rest;
		size_t k = 0;
		if (!rm_sweep_cell_dim(cell, o->rows) ||
		    (o->columns && !rm_sweep_cell_dim(cell, o->columns)))
			continue;
		rest = rest_label(cell, o);
		while (k < ts->n &&
		       (strcmp(ts->t[k].model, cell->model) ||
			strcmp(ts->t[k].metric, cell->metric) || strcmp(ts->t[k].rest, rest)))
			k++;
		if (k == ts->n) {
			ts->t = rm_xrealloc(ts->t, (ts->n + 1) * sizeof(*ts->t));
			memset(&ts->t[ts->n++], 0, sizeof(*ts->t));
			ts->t[k].model = cell->model;
			ts->t[k].metric = cell->metric;
			ts->t[k].rest = rest;
		} else {
			free(rest);
		}
		ts->t[k].idx = rm_xrealloc(ts->t[k].idx, (ts->t[k].n + 1) * sizeof(size_t));
		ts->t[k].idx[ts->t[k].n++] = i;
	}
}

static void tables_free(struct tables *ts)
{
	for (size_t i = 0; i < ts->n; i++) {
		free(ts->t[i].rest);
		free(ts->t[i].idx);
	}
	free(ts->t);
}

/* The dimensions the cells have, for an error: "batch_size, precision". */
static char *dims_named(const rm_sweep_cells *c)
{
	rm_config seen = RM_CONFIG_INIT;
	rm_buf b = RM_BUF_INIT((size_t)1 << 16);

	for (size_t i = 0; i < c->n; i++)
		for (size_t k = 0; k < c->v[i].params.n; k++)
			if (!rm_config_get(&seen, c->v[i].params.p[k].name)) {
				rm_config_set(&seen, c->v[i].params.p[k].name, "");
				rm_buf_addf(&b, "%s%s", b.len ? ", " : "",
					    c->v[i].params.p[k].name);
			}
	rm_config_release(&seen);
	return rm_buf_detach(&b);
}

/* The cell of a table at (row value, column value), or NULL. */
static const rm_sweep_cell *at(const rm_sweep_cells *c, const struct table *t,
			       const rm_sweep_table_opts *o, const char *rv, const char *cv)
{
	for (size_t i = 0; i < t->n; i++) {
		const rm_sweep_cell *cell = &c->v[t->idx[i]];
		if (!strcmp(rm_sweep_cell_dim(cell, o->rows), rv) &&
		    (!cv || !strcmp(rm_sweep_cell_dim(cell, o->columns), cv)))
			return cell;
	}
	return NULL;
}

static char *value_text(const rm_sweep_cell *cell)
{
	return cell ? rm_xasprintf("%.6g", cell->mean) : rm_xstrdup("");
}

/* rm_table's aligned text into out. */
static void table_text(rm_buf *out, const rm_table *tab, size_t width)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return;
	rm_table_print(tab, f, "", width);
	fclose(f);
	rm_buf_add(out, text, len);
	free(text);
}

/* One table as text or Markdown. */
static void table_out(rm_buf *out, const rm_sweep_cells *c, const struct table *t,
		      const rm_sweep_table_opts *o)
{
	struct values rows, cols;
	size_t nc;
	char *corner;

	values_of(c, t->idx, t->n, o->rows, &rows);
	values_of(c, t->idx, t->n, o->columns, &cols);
	nc = o->columns ? cols.n : 1;
	corner = o->columns ? rm_xasprintf("%s / %s", o->rows, o->columns) : rm_xstrdup(o->rows);
	if (o->format == RM_SWEEP_MARKDOWN) {
		rm_buf_addstr(out, "### ");
		rm_text_md_cell(out, t->model);
		rm_buf_addstr(out, ": ");
		rm_text_md_cell(out, t->metric);
		if (t->rest[0]) {
			rm_buf_addstr(out, " (");
			rm_text_md_cell(out, t->rest);
			rm_buf_addstr(out, ")");
		}
		rm_buf_addstr(out, "\n\n| ");
		rm_text_md_cell(out, corner);
		for (size_t k = 0; k < nc; k++) {
			rm_buf_addstr(out, " | ");
			rm_text_md_cell(out, o->columns ? cols.v[k] : t->metric);
		}
		rm_buf_addstr(out, " |\n|---|");
		for (size_t k = 0; k < nc; k++)
			rm_buf_addstr(out, "---:|");
		rm_buf_addch(out, '\n');
		for (size_t r = 0; r < rows.n; r++) {
			rm_buf_addstr(out, "| ");
			rm_text_md_cell(out, rows.v[r]);
			for (size_t k = 0; k < nc; k++) {
				char *v = value_text(
				    at(c, t, o, rows.v[r], o->columns ? cols.v[k] : NULL));
				rm_buf_addf(out, " | %s", v);
				free(v);
			}
			rm_buf_addstr(out, " |\n");
		}
		rm_buf_addch(out, '\n');
	} else {
		const char **cells = rm_xcalloc((nc + 1) * (rows.n + 1), sizeof(*cells));
		char **owned = rm_xcalloc((nc + 1) * (rows.n + 1), sizeof(*owned));
		rm_table tab;
		rm_buf_addf(out, "%s: %s%s%s%s\n", t->model, t->metric, t->rest[0] ? " (" : "",
			    t->rest, t->rest[0] ? ")" : "");
		cells[0] = corner;
		for (size_t k = 0; k < nc; k++)
			cells[k + 1] = o->columns ? cols.v[k] : t->metric;
		rm_table_init(&tab, nc + 1, cells);
		for (size_t k = 1; k <= nc; k++)
			rm_table_column(&tab, k, RM_TABLE_RIGHT, 0, 0);
		for (size_t r = 0; r < rows.n; r++) {
			cells[0] = rows.v[r];
			for (size_t k = 0; k < nc; k++)
				cells[k + 1] = owned[k] = value_text(
				    at(c, t, o, rows.v[r], o->columns ? cols.v[k] : NULL));
			rm_table_add(&tab, cells);
			for (size_t k = 0; k < nc; k++)
				free(owned[k]);
		}
		table_text(out, &tab, o->width);
		rm_buf_addch(out, '\n');
		rm_table_release(&tab);
		free(cells);
		free(owned);
	}
	free(corner);
	free(rows.v);
	free(cols.v);
}

/* Every table as CSV, one header: model, metric, config (the other dimensions), the rows'
 * dimension, then each value of the columns' (or the metric). */
static void tables_csv(rm_buf *out, const rm_sweep_cells *c, const struct tables *ts,
		       const rm_sweep_table_opts *o)
{
	size_t *all = rm_xcalloc(c->n + 1, sizeof(*all));
	struct values cols;
	size_t nc;
	const char **rec;

	for (size_t i = 0; i < c->n; i++)
		all[i] = i;
	values_of(c, all, c->n, o->columns, &cols);
	nc = o->columns ? cols.n : 1;
	rec = rm_xcalloc(nc + 4, sizeof(*rec));
	rec[0] = "model";
	rec[1] = "metric";
	rec[2] = "config";
	rec[3] = o->rows;
	for (size_t k = 0; k < nc; k++)
		rec[4 + k] = o->columns ? cols.v[k] : "value";
	rm_csv_record(out, rec, nc + 4);
	for (size_t i = 0; i < ts->n; i++) {
		const struct table *t = &ts->t[i];
		struct values rows;
		values_of(c, t->idx, t->n, o->rows, &rows);
		for (size_t r = 0; r < rows.n; r++) {
			char **owned = rm_xcalloc(nc + 1, sizeof(*owned));
			rec[0] = t->model;
			rec[1] = t->metric;
			rec[2] = t->rest;
			rec[3] = rows.v[r];
			for (size_t k = 0; k < nc; k++)
				rec[4 + k] = owned[k] = value_text(
				    at(c, t, o, rows.v[r], o->columns ? cols.v[k] : NULL));
			rm_csv_record(out, rec, nc + 4);
			for (size_t k = 0; k < nc; k++)
				free(owned[k]);
			free(owned);
		}
		free(rows.v);
	}
	free(rec);
	free(cols.v);
	free(all);
}

int rm_sweep_table(const rm_sweep_cells *c, const rm_sweep_table_opts *o, rm_buf *out,
		   rm_error *err)
{
	struct tables ts;

	if (!o->rows)
		return rm_error_set(err, RM_ERR_USAGE, "a sweep table needs --rows DIM");
	if (!c->n)
		return rm_error_set(err, RM_ERR_INPUT,
				    "no SUCCESS row with a value in the run (for that model and "
				    "metric)");
	tables_make(c, o, &ts);
	if (!ts.n) {
		char *dims = dims_named(c);
		rm_error_set(err, RM_ERR_INPUT,
			     "no configuration in the run has '%s'%s%s%s: its parameters are %s "
			     "(or name a perf.csv column, or model)",
			     o->rows, o->columns ? " and '" : "", o->columns ? o->columns : "",
			     o->columns ? "'" : "", dims[0] ? dims : "none");
		free(dims);
		return -1;
	}
	if (o->format == RM_SWEEP_CSV)
		tables_csv(out, c, &ts, o);
	else
		for (size_t i = 0; i < ts.n; i++)
			table_out(out, c, &ts.t[i], o);
	tables_free(&ts);
	return 0;
}

/* ---- the HTML report's curves ---- */

#define CW 420 /* the plot's width and height (SVG user units), and its margins */
#define CH 180
#define CL 56
#define CR 12
#define CT 10
#define CB 34

/* lines are coloured by class (the report's style sheet: l0 .. l7, then again) */
#define N_PALETTE 8

/* The dimension a swept model is drawn over: of its parameters with two values or more, a
 * numeric one with the most values (else any with the most); NULL when none. */
static const char *x_dim(const rm_sweep_cells *c, const size_t *idx, size_t n)
{
	const char *best = NULL;
	size_t best_n = 1;
	int best_num = 0;

	for (size_t i = 0; i < n; i++) {
		const rm_config *p = &c->v[idx[i]].params;
		for (size_t k = 0; k < p->n; k++) {
			struct values v;
			double d;
			int num = 1;
			values_of(c, idx, n, p->p[k].name, &v);
			for (size_t j = 0; j < v.n; j++)
				num &= rm_parse_double(v.v[j], &d) == 0;
			if (v.n >= 2 && (num > best_num || (num == best_num && v.n > best_n))) {
				best = p->p[k].name;
				best_n = v.n;
				best_num = num;
			}
			free(v.v);
		}
	}
	return best;
}

/* A plot's scales: the x values (numeric or by place), the y range. */
struct scale {
	struct values xs;
	int numeric;
	double xlo, xhi, ylo, yhi;
};

static double sx(const struct scale *s, size_t k)
{
	double v = (double)k, lo = s->xlo, hi = s->xhi;

	if (s->numeric)
		rm_parse_double(s->xs.v[k], &v);
	else {
		lo = 0;
		hi = (double)(s->xs.n - 1);
	}
	return CL + (v - lo) / (hi > lo ? hi - lo : 1) * (CW - CL - CR);
}

static double sy(const struct scale *s, double y)
{
	return CT + (s->yhi - y) / (s->yhi > s->ylo ? s->yhi - s->ylo : 1) * (CH - CT - CB);
}

/* One line: the cells of one value of the other dimensions, by x. */
static void curve_line(rm_buf *out, const rm_sweep_cells *c, const size_t *idx, size_t n,
		       const char *xd, const char *label, const struct scale *s, size_t colour)
{
	rm_sweep_table_opts o = RM_SWEEP_TABLE_OPTS_INIT;

	o.rows = xd;
	rm_buf_addstr(out, "<g><title>");
	rm_text_html(out, label[0] ? label : "all");
	rm_buf_addf(out, "</title><polyline class=\"l%zu\" points=\"", colour);
	for (size_t k = 0; k < s->xs.n; k++)
		for (size_t i = 0; i < n; i++) {
			const rm_sweep_cell *cell = &c->v[idx[i]];
			const char *x = rm_sweep_cell_dim(cell, xd);
			char *rest = rest_label(cell, &o);
			if (x && !strcmp(rest, label) && !strcmp(x, s->xs.v[k]))
				rm_buf_addf(out, "%.1f,%.1f ", sx(s, k), sy(s, cell->mean));
			free(rest);
		}
	rm_buf_addstr(out, "\"/></g>");
}

/* The axes, their labels and the dimension's name. */
static void curve_axes(rm_buf *out, const struct scale *s, const char *xd)
{
	rm_buf_addf(out,
		    "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>"
		    "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>",
		    CL, CH - CB, CW - CR, CH - CB, CL, CT, CL, CH - CB);
	rm_buf_addf(out, "<text x=\"%d\" y=\"%d\">%.4g</text><text x=\"%d\" y=\"%d\">%.4g</text>",
		    CL - 4, CT + 8, s->yhi, CL - 4, CH - CB, s->ylo);
	for (size_t k = 0; k < s->xs.n; k++) {
		rm_buf_addf(out, "<text class=\"mid\" x=\"%.1f\" y=\"%d\">", sx(s, k),
			    CH - CB + 14);
		rm_text_html(out, s->xs.v[k]);
		rm_buf_addstr(out, "</text>");
	}
	rm_buf_addf(out, "<text class=\"mid\" x=\"%d\" y=\"%d\">", (CL + CW - CR) / 2, CH - 4);
	rm_text_html(out, xd);
	rm_buf_addstr(out, "</text>");
}

/* The labels of the lines: each value of the other dimensions, in order. */
static char **line_labels(const rm_sweep_cells *c, const size_t *idx, size_t n, const char *xd,
			  struct scale *s, size_t *nl)
{
	rm_sweep_table_opts o = RM_SWEEP_TABLE_OPTS_INIT;
	char **labels = NULL;

	o.rows = xd;
	*nl = 0;
	for (size_t i = 0; i < n; i++) {
		char *rest = rest_label(&c->v[idx[i]], &o);
		size_t k = 0;
		s->ylo = fmin(s->ylo, c->v[idx[i]].mean);
		s->yhi = fmax(s->yhi, c->v[idx[i]].mean);
		while (k < *nl && strcmp(labels[k], rest))
			k++;
		if (k == *nl && rm_sweep_cell_dim(&c->v[idx[i]], xd))
			labels = rm_strv_push(labels, nl, rest);
		free(rest);
	}
	return labels;
}

/* One swept model and metric: axes, a line per value of the other dimensions, a legend. */
static void curves_of(rm_buf *out, const rm_sweep_cells *c, const size_t *idx, size_t n)
{
	const char *xd = x_dim(c, idx, n);
	struct scale s = {
	    .numeric = 1, .xlo = INFINITY, .xhi = -INFINITY, .ylo = INFINITY, .yhi = -INFINITY};
	char **labels;
	size_t nl;
	double d = 0;

	if (!xd)
		return;
	values_of(c, idx, n, xd, &s.xs);
	for (size_t k = 0; k < s.xs.n; k++) {
		s.numeric &= rm_parse_double(s.xs.v[k], &d) == 0;
		s.xlo = fmin(s.xlo, d);
		s.xhi = fmax(s.xhi, d);
	}
	labels = line_labels(c, idx, n, xd, &s, &nl);
	rm_buf_addstr(out, "<figure class=\"sweep\" data-model=\"");
	rm_text_html(out, c->v[idx[0]].model);
	rm_buf_addstr(out, "\"><figcaption>");
	rm_text_html(out, c->v[idx[0]].model);
	rm_buf_addstr(out, ": ");
	rm_text_html(out, c->v[idx[0]].metric);
	rm_buf_addstr(out, " by ");
	rm_text_html(out, xd);
	rm_buf_addf(out,
		    "</figcaption><svg class=\"curves\" width=\"%d\" height=\"%d\" "
		    "viewBox=\"0 0 %d %d\">",
		    CW, CH, CW, CH);
	curve_axes(out, &s, xd);
	for (size_t l = 0; l < nl; l++)
		curve_line(out, c, idx, n, xd, labels[l], &s, l % N_PALETTE);
	rm_buf_addstr(out, "</svg><ul class=\"legend\">");
	for (size_t l = 0; l < nl; l++) {
		rm_buf_addf(out, "<li><span class=\"l%zu\">&#9644;</span> ", l % N_PALETTE);
		rm_text_html(out, labels[l][0] ? labels[l] : "all");
		rm_buf_addstr(out, "</li>");
	}
	rm_buf_addstr(out, "</ul></figure>\n");
	rm_strv_free(labels);
	free(s.xs.v);
}

void rm_sweep_curves_html(rm_buf *out, const rm_sweep_cells *c)
{
	unsigned char *done = rm_xcalloc(c->n + 1, 1);
	size_t *idx = rm_xcalloc(c->n + 1, sizeof(*idx)), shown = 0;

	for (size_t i = 0; i < c->n; i++) {
		size_t n = 0;
		if (done[i] || !c->v[i].params.n)
			continue;
		for (size_t k = i; k < c->n; k++)
			if (!done[k] && c->v[k].params.n && !strcmp(c->v[k].model, c->v[i].model) &&
			    !strcmp(c->v[k].metric, c->v[i].metric)) {
				done[k] = 1;
				idx[n++] = k;
			}
		if (n < 2 || !x_dim(c, idx, n))
			continue;
		if (!shown++)
			rm_buf_addstr(out,
				      "<details open id=\"sweeps\"><summary><h2>Sweeps</h2>"
				      "</summary><p class=\"legend\">the latest run: the metric "
				      "by a parameter, a line per value of the others</p>\n");
		curves_of(out, c, idx, n);
	}
	if (shown)
		rm_buf_addstr(out, "</details>\n");
	free(done);
	free(idx);
}
