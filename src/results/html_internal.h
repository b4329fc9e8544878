/*
 * The HTML report's pieces shared by html.c (runs, series, the latest run judged) and
 * rm_results__html_page.c (the page written from them).
 */
#ifndef RM_HTML_INTERNAL_H
#define RM_HTML_INTERNAL_H

#include <stddef.h>

#include "rm/results.h"
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

/* Per run of a series: the mean of its SUCCESS values, and whether it failed. */
struct point {
	size_t run;
	double v; /* NAN: no value that run */
	int failed;
};

/* Everything the page is written from. */
struct report {
	const rm_html_opts *o;
	struct ctx c;
	rm_results latest; /* the latest run's rows (shallow copies) */
	size_t n_fail_latest;
	rm_baseline *base;
	rm_gate gate;
	size_t *idx; /* row indexes by key, then run */
	struct series *ser;
	size_t n_series, n_models;
	size_t *fidx; /* FAILURE rows by model, then run */
	size_t n_fidx;
	struct html_power *power; /* html_power.c, or NULL: no power column */
};

/* html.c */
size_t rm_results__html_points_of(const struct ctx *c, const struct series *s, struct point *p);
/* The first of idx[0..n) (sorted by model) whose model is not below model. */
size_t rm_results__html_lower_model(const struct ctx *c, const size_t *idx, size_t n,
				    const char *model);

/* html_power.c: each model's GPU power per run beside its trend. new returns NULL when no
 * run of the history has a figure (the page then has no such column); head writes the
 * column's <th>, cell its "</td><td>plot" (after the trend's cell). */
struct html_power;
struct html_power *rm_results__html_power_new(const struct ctx *c, const rm_metrics *m);
void rm_results__html_power_free(struct html_power *hp);
void rm_results__html_power_head(rm_buf *out, const struct html_power *hp);
void rm_results__html_power_cell(rm_buf *out, const struct html_power *hp, const struct ctx *c,
				 const char *model);

/* rm_results__html_page.c: the whole page into out. */
void rm_results__html_page(rm_buf *out, const struct report *r);

#endif
