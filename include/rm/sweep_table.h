/*
 * A metric by configuration (src/results/sweep_table.c): a run's rows gathered per model,
 * metric and configuration (the mean of its SUCCESS values), then `run_models report sweep`'s
 * tables (a metric by the dimensions a user picks, in text, Markdown or CSV) and the HTML
 * report's curves (x: one dimension, y: the metric, a line per remaining point).
 *
 * A configuration's dimensions are its parameters (the `config` column, and the cell a MAD
 * metric carries: rm/config.h), and, when a parameter does not name it, any perf.csv column
 * (n_gpus, tunableop, training_precision, machine_name, ...) or "model". A metric is named by
 * its text, or by its name without its cell ("tok/s" for "tok/s (isl=1024 osl=1024 con=8)").
 */
#ifndef RM_SWEEP_TABLE_H
#define RM_SWEEP_TABLE_H

#include <stddef.h>

#include "rm/config.h"
#include "rm/results.h"
#include "rm/util.h"

/* One configuration of one model and metric in a run. */
typedef struct rm_sweep_cell {
	const char *model;    /* into the rows */
	char *metric;	      /* without its cell */
	rm_config params;     /* its parameters, the metric's cell's included */
	const rm_result *row; /* its first row: the columns a dimension may name */
	double sum, sum2, mean, sd;
	size_t n;
} rm_sweep_cell;

typedef struct rm_sweep_cells {
	rm_sweep_cell *v;
	size_t n;
} rm_sweep_cells;

/* The SUCCESS rows of run (model and metric NULL: every one) per model, metric and
 * configuration key. */
void rm_sweep_cells_collect(const rm_results *run, const char *model, const char *metric,
			    rm_sweep_cells *out);
void rm_sweep_cells_release(rm_sweep_cells *c);
/* A cell's value of a dimension, or NULL when it has none. */
const char *rm_sweep_cell_dim(const rm_sweep_cell *c, const char *dim);

typedef enum rm_sweep_format { RM_SWEEP_TEXT, RM_SWEEP_MARKDOWN, RM_SWEEP_CSV } rm_sweep_format;

typedef struct rm_sweep_table_opts {
	const char *rows;    /* the dimension down a table (required) */
	const char *columns; /* across it; NULL: one column, the metric */
	rm_sweep_format format;
	size_t width; /* text: the terminal's columns (0: no limit) */
} rm_sweep_table_opts;

#define RM_SWEEP_TABLE_OPTS_INIT                                                                   \
	{                                                                                          \
		.rows = NULL, .columns = NULL, .format = RM_SWEEP_TEXT, .width = 0                 \
	}

/*
 * The tables of cells: one per model, metric and value of the remaining dimensions (those
 * neither rows nor columns), its rows and columns the dimensions' values (in numeric order
 * when they are all numbers, else as they first come), each cell the mean of its runs. An
 * error when no cell has the rows' (or columns') dimension, naming those it has.
 */
int rm_sweep_table(const rm_sweep_cells *c, const rm_sweep_table_opts *o, rm_buf *out,
		   rm_error *err);

/*
 * The HTML report's curves, as an SVG per model and metric that ran in two configurations or
 * more with a numeric dimension of two values or more: x that dimension (of several, the one
 * with the most values), y the metric, a line per value of the other dimensions. Nothing when
 * no model was swept.
 */
void rm_sweep_curves_html(rm_buf *out, const rm_sweep_cells *c);

#endif
