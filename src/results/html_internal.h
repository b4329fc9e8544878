/*
 * The HTML report's pieces shared by html.c (runs, series, the latest run judged) and
 * html_page.c (the page written from them).
 */
#ifndef RM_HTML_INTERNAL_H
#define RM_HTML_INTERNAL_H

#include <stddef.h>

#include "rm/gate.h"
#include "rm/history.h"
#include "rm/html.h"
#include "rm/results.h"
#include "rm/sweep_table.h"
#include "rm/util.h"

#define HTML_MAX ((size_t)512 << 20)

/* Plot geometry (SVG user units = CSS pixels). */
#define PW   300 /* the plot, then a margin for the min/max labels */
#define PLOT 250
#define PH   46
#define PAD  4

struct series {
	const rm_hseries *h;	 /* its points */
	const rm_change *change; /* the latest run's verdict, NULL when it has none */
	const rm_hseries *fail;	 /* the model's metric-less series (its failures), or NULL */
	int failed_latest;	 /* the model failed in the latest run */
	int rank;
};

/* Everything the page is written from. */
struct report {
	const rm_html_opts *o;
	const rm_baseline *h;	  /* the history, with plot points */
	const rm_results *latest; /* the latest run's rows */
	const char *latest_id;
	size_t n_runs;
	size_t *rank_of; /* per run index: its place in time order */
	size_t *by_rank; /* per place: the run index */
	size_t n_fail_latest;
	rm_gate gate;
	struct series *ser;
	size_t n_series, n_models;
	struct html_power *power; /* html_power.c, or NULL: no power column */
	rm_sweep_cells cells;	  /* the latest run by configuration: the sweeps' curves */
};

/* html_details.c: the latest run's provenance (rm_html_opts.provenance), when it has one. */
void rm_results__html_details(rm_buf *out, const struct report *r);

/* html.c: the x of a point (merged points: the middle of their runs). */
double rm_results__html_x(const struct report *r, const rm_hpoint *p);

/* html_power.c: each model's GPU power per run beside its trend. new returns NULL when no
 * run of the history has a figure (the page then has no such column); head writes the
 * column's <th>, cell its "</td><td>plot" (after the trend's cell). */
struct html_power;
struct html_power *rm_results__html_power_new(const struct report *r, const rm_baseline *power);
void rm_results__html_power_free(struct html_power *hp);
void rm_results__html_power_head(rm_buf *out, const struct html_power *hp);
void rm_results__html_power_cell(rm_buf *out, const struct html_power *hp, const struct report *r,
				 const char *model);

/* html_page.c: the whole page into out. */
void rm_results__html_page(rm_buf *out, const struct report *r);

#endif
