/*
 * The HTML trend report (run_models report html): ONE self-contained file, no scripts, no
 * fonts, no network (a Content-Security-Policy of default-src 'none' makes the browser
 * refuse anything else, and log it). Per model and metric: an inline SVG trend over the
 * history (one point per run: the mean of its repeats; failed runs as red ticks), the latest
 * value, its baseline (the latest earlier run) and the change coloured by the metric's
 * direction; then the latest run's failures with their reasons. Rows are ordered
 * regressions first, then failures, then by model, so the top of the page is what needs a
 * look. Sized for 500 models x 90 nights (docs/nightly.md has the measurements).
 */
#ifndef RM_HTML_H
#define RM_HTML_H

#include "rm/error.h"
#include "rm/gate.h"
#include "rm/results.h"

typedef struct rm_html_opts {
	const char *title;    /* NULL: "run_models results" */
	const char *source;   /* shown under the title: the files or database read */
	double threshold_pct; /* change colouring and verdicts; < 0: 5 */
	const rm_direction_table *directions; /* NULL: the metric table only */
} rm_html_opts;

/* Writes the report of history (rows of any number of runs; the newest run is the one
 * judged) to path. */
int rm_html_report(const char *path, const rm_results *history, const rm_html_opts *o,
		   rm_error *err);

#endif
