/*
 * The HTML trend report (src/results/html*.c; run_models report html): ONE self-contained
 * file, no scripts, no fonts, no network (a Content-Security-Policy of default-src 'none'
 * makes the browser refuse anything else, and log it). Per model and metric: an inline SVG trend
 * over the history (one point per run: the mean of its repeats; failed runs as red ticks), the
 * latest value, its baseline (the latest earlier run) and the change coloured by the metric's
 * direction; then the latest run's failures with their reasons. Rows are ordered
 * regressions first, then failures, then by model, so the top of the page is what needs a
 * look. Sized for 500 models x 90 nights (docs/nightly.md has the measurements).
 */
#ifndef RM_HTML_H
#define RM_HTML_H

#include <stddef.h>

#include "rm/direction.h"
#include "rm/history.h"
#include "rm/results.h"
#include "rm/util.h"

typedef struct json_t json_t;

typedef struct rm_html_opts {
	const char *title;    /* NULL: "run_models results" */
	const char *source;   /* shown under the title: the files or database read */
	double threshold_pct; /* change colouring and verdicts; < 0: 5 */
	const rm_direction_table *directions; /* NULL: the metric table only */
	size_t window;			      /* the detector's; 0: RM_DETECT_WINDOW */
	/* The GPU power per run of each model (rm_history_read_metric_dir of gpu_power_avg_w),
	 * or NULL: plotted beside its trend on the same run axis (a column shown only when
	 * some run of the history has a figure). */
	const rm_baseline *power;
	/* what made the latest run (rm/provenance.h's JSON), or NULL: a collapsed "Run details"
	 * table of it */
	const json_t *provenance;
} rm_html_opts;

#define RM_HTML_OPTS_INIT                                                                          \
	{                                                                                          \
		.title = NULL, .source = NULL, .threshold_pct = -1, .directions = NULL,            \
		.window = 0, .power = NULL, .provenance = NULL                                     \
	}

/* Points a series keeps for its trend (rm_history_opts.plot). */
#define RM_HTML_PLOT_POINTS 128

/*
 * Writes the report of a history store made with rm_history_opts.plot (and keep_latest);
 * latest is the latest run's rows (rm_history_latest), the run judged.
 */
int rm_html_report(const char *path, const rm_baseline *history, const rm_results *latest,
		   const rm_html_opts *o, rm_error *err);

#endif
