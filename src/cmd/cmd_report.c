/*
 * run_models report html [CSV... | DB-URL] -o report.html
 *   The self-contained HTML trend report over the history in perf.csv files or a database.
 * run_models report ci [PERF_CSV] [--junit F] [--summary-markdown F] [--archive F] ...
 *   What a run's end does for CI (rm_nightly_finish), from files alone: the same outputs and
 *   exit codes as `run --junit ...` (docs/nightly.md).
 * run_models report compare A B ...: cmd_compare.c.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "options.h"
#include "rm/detect.h"
#include "rm/results.h"
#include "rm/sweep_table.h"
#include "rm/db.h"
#include "rm/manifest.h"
#include "rm/util.h"
#include "rm/suite.h"

/* The positional words: perf.csv files (default: perf.csv) and database URLs, added to
 * --db's. */
static void html_sources(struct cli *cli, const struct opt_list *pos, rm_nightly_html_opts *o)
{
	const char **files = rm_xcalloc(pos->n + 1, sizeof(*files));

	for (size_t i = 0; i < pos->n; i++)
		if (rm_db_is_url(pos->v[i])) {
			cli->db.v = rm_xrealloc(cli->db.v, (cli->db.n + 1) * sizeof(*cli->db.v));
			cli->db.v[cli->db.n++] = pos->v[i];
		} else {
			files[o->n_files++] = pos->v[i];
		}
	if (!pos->n && !cli->db.n)
		files[o->n_files++] = "perf.csv";
	o->files = files;
	o->dbs = cli->db.v;
	o->n_dbs = cli->db.n;
}

static int report_html(int argc, char **argv, rm_error *err)
{
	struct cli cli;
	struct opt_list pos = {0};
	rm_nightly_html_opts o = RM_NIGHTLY_HTML_OPTS_INIT;
	rm_nightly_html_result res;
	double t0 = rm_now();
	int rc, md, ret = -1;

	cli_init(&cli);
	rc = opt_parse(CMD_REPORT_HTML, &cli, argc, argv, &pos, &md, err);
	if (rc != 0) {
		if (rc == 1) {
			opt_help(
			    stdout, CMD_REPORT_HTML,
			    "usage: run_models report html [PERF_CSV...|DB_URL] [-o FILE]\n\n"
			    "One self-contained HTML file: a trend per model and metric over "
			    "the history\nwith its change points, the latest value against its "
			    "reference level, the latest\nrun's failures.",
			    md);
			ret = RM_EXIT_OK;
		}
		goto out;
	}
	if (cli.history_window == 1 || cli.history_window > RM_DETECT_MAX_WINDOW) {
		rm_error_set(err, RM_ERR_USAGE, "--history-window takes 2 to %d runs, not %ld",
			     RM_DETECT_MAX_WINDOW, cli.history_window);
		goto out;
	}
	html_sources(&cli, &pos, &o);
	o.path = cli.output ? cli.output : "report.html";
	o.title = cli.title;
	o.threshold_pct = cli.threshold;
	o.window = (size_t)cli.history_window;
	o.models_root = cli.models_root;
	if (rm_nightly_html(&o, &res, err) < 0)
		goto out;
	fprintf(stderr, "report: %s from %zu rows (%zu series, %zu runs) in %.2f s\n", o.path,
		res.rows, res.series, res.runs, rm_now() - t0);
	ret = RM_EXIT_OK;
out:
	free((void *)o.files);
	opt_list_release(&pos);
	cli_release(&cli);
	return ret;
}

static int report_ci(int argc, char **argv, rm_error *err)
{
	struct cli cli;
	struct opt_list pos = {0};
	rm_nightly_opts o = RM_NIGHTLY_OPTS_INIT;
	rm_nightly_result res;
	char *dir = NULL, *beside = NULL;
	int rc, md, ret = -1;

	cli_init(&cli);
	rc = opt_parse(CMD_REPORT_CI, &cli, argc, argv, &pos, &md, err);
	if (rc != 0) {
		if (rc == 1) {
			opt_help(stdout, CMD_REPORT_CI,
				 "usage: run_models report ci [PERF_CSV] [options]\n\n"
				 "The end of a nightly run from its files: regression gate, JUnit, "
				 "summary,\nreport, export, archive. Exit 0, 1 (a model failed) or "
				 "6 (a regression).\nThe suite name, its thresholds and the gate "
				 "come from the run's run.json\nwhere the options leave them out.",
				 md);
			ret = RM_EXIT_OK;
		}
		goto out;
	}
	if (pos.n > 1) {
		rm_error_set(err, RM_ERR_USAGE, "report ci takes one PERF_CSV ('%s' and '%s')",
			     pos.v[0], pos.v[1]);
		goto out;
	}
	o.perf_csv = pos.n ? pos.v[0] : "perf.csv";
	/* The run's manifest beside perf.csv, where run writes it (run.<id>.json for --run-id,
	 * else run.json, the latest run's), unless told otherwise. */
	dir = rm_dirname(o.perf_csv);
	beside = rm_manifest_path(dir, cli.run_id);
	if (cli.run_id && access(beside, R_OK) != 0) {
		free(beside);
		beside = rm_manifest_path(dir, NULL);
	}
	o.manifest = cli.manifest ? cli.manifest : access(beside, R_OK) == 0 ? beside : NULL;
	nightly_outputs(&cli, &o);
	o.run_id = cli.run_id;
	o.suite = cli.title;
	o.models_root = cli.models_root;
	o.extra_files = cli.archive_add.v;
	o.n_extra_files = cli.archive_add.n;
	if (rm_nightly_finish(&o, &res, err) < 0)
		goto out;
	fprintf(stderr,
		"report: %zu results, %zu failed, %zu skipped, %zu compared, %zu improvement(s), "
		"%zu unstable, %zu regression(s)%s\n",
		res.n_rows, res.n_failed, res.n_skipped, res.n_compared, res.n_better,
		res.n_unstable, res.n_regressions, res.gate_enforced ? "" : " (gate off)");
	ret = rm_exit_code_for(res.n_failed, res.gate_enforced ? res.n_regressions : 0, 0);
out:
	free(beside);
	free(dir);
	cli_release(&cli);
	opt_list_release(&pos);
	return ret;
}

/* The run to tabulate: --run-id, else the last one in the file (one pass to find it). */
static int last_run(void *ctx, rm_result *row)
{
	char **id = ctx;
	if (row->col[RM_COL_RUN_ID][0] && (!*id || strcmp(*id, row->col[RM_COL_RUN_ID]))) {
		free(*id);
		*id = rm_xstrdup(row->col[RM_COL_RUN_ID]);
	}
	return 0;
}

static int sweep_table(const struct cli *cli, const char *path, rm_error *err)
{
	rm_sweep_table_opts o = RM_SWEEP_TABLE_OPTS_INIT;
	rm_results run = RM_RESULTS_INIT;
	rm_sweep_cells cells = {0};
	rm_buf out = RM_BUF_INIT((size_t)256 << 20);
	char *id = cli->run_id ? rm_xstrdup(cli->run_id) : NULL;
	int width = rm_term_width(stdout), ret = -1;

	o.rows = cli->rows;
	o.columns = cli->columns;
	o.format = cli->format == FORMAT_MARKDOWN ? RM_SWEEP_MARKDOWN
		   : cli->format == FORMAT_CSV	  ? RM_SWEEP_CSV
						  : RM_SWEEP_TEXT;
	o.width = width > 0 ? (size_t)width : 0;
	if ((!id && rm_results_each(path, NULL, last_run, &id, err) < 0) ||
	    rm_results_read(&run, path, id ? id : "", err) < 0)
		goto out;
	if (!run.n) {
		rm_error_set(err, RM_ERR_INPUT, "'%s' holds no run%s%s", path, id ? " " : "",
			     id ? id : "");
		goto out;
	}
	rm_sweep_cells_collect(&run, cli->model, cli->metric, &cells);
	if (rm_sweep_table(&cells, &o, &out, err) < 0) {
		rm_error_wrap(err, "run %s of '%s'", id, path);
		goto out;
	}
	fwrite(out.data ? out.data : "", 1, out.len, stdout);
	ret = RM_EXIT_OK;
out:
	rm_buf_release(&out);
	rm_sweep_cells_release(&cells);
	rm_results_release(&run);
	free(id);
	return ret;
}

static int report_sweep(int argc, char **argv, rm_error *err)
{
	struct cli cli;
	struct opt_list pos = {0};
	int rc, md, ret = -1;

	cli_init(&cli);
	rc = opt_parse(CMD_REPORT_SWEEP, &cli, argc, argv, &pos, &md, err);
	if (rc != 0) {
		if (rc == 1) {
			opt_help(
			    stdout, CMD_REPORT_SWEEP,
			    "usage: run_models report sweep [PERF_CSV] --rows DIM [--columns "
			    "DIM] [--metric M]\n\nA metric by the parameters of the run's "
			    "configurations (a suite's sweep, name:key=value\ntags, MAD's cells "
			    "in metric names or columns): one table per model, metric\nand value "
			    "of the other parameters, each cell the mean of its repeats.",
			    md);
			ret = RM_EXIT_OK;
		}
		goto out;
	}
	if (pos.n > 1)
		rm_error_set(err, RM_ERR_USAGE, "report sweep takes one PERF_CSV ('%s' and '%s')",
			     pos.v[0], pos.v[1]);
	else if (!cli.rows)
		rm_error_set(err, RM_ERR_USAGE,
			     "report sweep needs --rows DIM: a parameter of the configurations "
			     "(e.g. batch_size), a perf.csv column or model");
	else
		ret = sweep_table(&cli, pos.n ? pos.v[0] : "perf.csv", err);
out:
	cli_release(&cli);
	opt_list_release(&pos);
	return ret;
}

int cmd_report(int argc, char **argv, rm_error *err)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		FILE *f = argc < 2 ? stderr : stdout;
		fputs("usage: run_models report html [PERF_CSV...|DB_URL] [-o FILE]\n"
		      "       run_models report ci [PERF_CSV] [--junit F] [--summary-markdown F] "
		      "[--html F]\n"
		      "                 [--archive F] [--export URL] [--baseline FILE|URL] "
		      "[--fail-on-regression PCT]\n"
		      "       run_models report compare A B [PERF_CSV|DB_URL] [--format "
		      "text|markdown|json]\n"
		      "       run_models report sweep [PERF_CSV] --rows DIM [--columns DIM] "
		      "[--metric M] [--format text|markdown|csv]\n"
		      "'run_models report <kind> --help' lists each kind's options.\n",
		      f);
		return argc < 2 ? RM_EXIT_USAGE : RM_EXIT_OK;
	}
	if (!strcmp(argv[1], "html"))
		return report_html(argc - 1, argv + 1, err);
	if (!strcmp(argv[1], "ci"))
		return report_ci(argc - 1, argv + 1, err);
	if (!strcmp(argv[1], "compare"))
		return cmd_report_compare(argc - 1, argv + 1, err);
	if (!strcmp(argv[1], "sweep"))
		return report_sweep(argc - 1, argv + 1, err);
	return rm_error_set(err, RM_ERR_USAGE, "unknown report '%s' (html, ci, compare or sweep)",
			    argv[1]);
}
