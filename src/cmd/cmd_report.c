/*
 * run_models report html [CSV... | DB-URL] -o report.html
 *   The self-contained HTML trend report over the history in perf.csv files or a database.
 * run_models report ci [PERF_CSV] [--junit F] [--summary-markdown F] [--archive F] ...
 *   What a run's end does for CI (rm_nightly_finish), from files alone: the same outputs and
 *   exit codes as `run --junit ...` (docs/nightly.md).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "options.h"
#include "rm/ci.h"
#include "rm/db.h"
#include "rm/html.h"
#include "rm/log.h"
#include "rm/util.h"

struct html_cli {
	const char *output, *title, *models_root;
	double threshold;
	struct opt_list db;
};

#define F(field) offsetof(struct html_cli, field)
static const struct opt html_options[] = {
    {"output", 'o', OPT_STRING, F(output), "FILE", "the report to write (default report.html)"},
    {"db", 0, OPT_LIST, F(db), "URL",
     "read the history from a database (sqlite:PATH, "
     "postgresql://...)"},
    {"title", 0, OPT_STRING, F(title), "TEXT", "the page title"},
    {"threshold", 0, OPT_NUMBER, F(threshold), "PCT",
     "a change beyond PCT percent is coloured (default 5)"},
    {"models-root", 0, OPT_STRING, F(models_root), "DIR",
     "read metric_direction overrides from DIR/models.json"},
    OPT_END,
};
#undef F

static int report_html(int argc, char **argv, rm_error *err)
{
	struct html_cli cli = {NULL, NULL, NULL, -1, {0}};
	struct opt_list pos = {0};
	rm_results h = RM_RESULTS_INIT;
	rm_direction_table *dirs = rm_direction_table_new();
	rm_buf source = RM_BUF_INIT((size_t)1 << 16);
	double t0 = rm_now();
	int rc, ret = -1;

	rc = opt_parse(html_options, &cli, argc, argv, &pos, err);
	if (rc != 0) {
		if (rc == 1) {
			opt_help(stdout,
				 "usage: run_models report html [PERF_CSV...|DB_URL] [-o FILE]\n\n"
				 "One self-contained HTML file: a trend per model and metric over "
				 "the history,\nthe latest value against its baseline, the latest "
				 "run's failures.",
				 html_options);
			ret = RM_EXIT_OK;
		}
		goto out;
	}
	/* Positional words: perf.csv files, or database URLs. */
	for (size_t i = 0; i < pos.n; i++)
		if (rm_db_is_url(pos.v[i])) {
			cli.db.v = rm_xrealloc(cli.db.v, (cli.db.n + 1) * sizeof(*cli.db.v));
			cli.db.v[cli.db.n++] = pos.v[i];
		}
	if (!pos.n && !cli.db.n) {
		pos.v = rm_xrealloc(pos.v, sizeof(*pos.v));
		pos.v[pos.n++] = "perf.csv";
	}
	for (size_t i = 0; i < pos.n; i++) {
		if (rm_db_is_url(pos.v[i]))
			continue;
		if (rm_results_read(&h, pos.v[i], NULL, err) < 0)
			goto out;
		rm_buf_addf(&source, "%s%s", source.len ? ", " : "", pos.v[i]);
	}
	for (size_t i = 0; i < cli.db.n; i++) {
		rm_db *db = NULL;
		char *red = rm_db_redact(cli.db.v[i]);
		rc = rm_db_open(cli.db.v[i], &db, err);
		if (rc == 0)
			rc = rm_db_read_results(db, NULL, &h, err);
		rm_db_close(db);
		rm_buf_addf(&source, "%s%s", source.len ? ", " : "", red);
		free(red);
		if (rc < 0)
			goto out;
	}
	if (cli.models_root && rm_direction_table_load(dirs, cli.models_root, err) < 0)
		goto out;
	rm_html_opts ho = {cli.title, rm_buf_str(&source), cli.threshold, dirs};
	if (!cli.output)
		cli.output = "report.html";
	if (rm_html_report(cli.output, &h, &ho, err) < 0)
		goto out;
	fprintf(stderr, "report: %s from %zu rows in %.2f s\n", cli.output, h.n, rm_now() - t0);
	ret = RM_EXIT_OK;
out:
	rm_buf_release(&source);
	rm_direction_table_free(dirs);
	rm_results_release(&h);
	opt_list_release(&pos);
	opt_list_release(&cli.db);
	return ret;
}

struct ci_cli {
	const char *run_id, *suite, *baseline, *junit, *summary, *html, *archive, *export_db;
	const char *manifest, *models_root;
	double fail_on_regression;
	int no_step_summary;
	struct opt_list files;
};

#define F(field) offsetof(struct ci_cli, field)
static const struct opt ci_options[] = {
    {"run-id", 0, OPT_STRING, F(run_id), "ID", "the run to report on (default: the last one)"},
    {"suite", 0, OPT_STRING, F(suite), "NAME", "suite name in JUnit and the summary"},
    {"baseline", 0, OPT_STRING, F(baseline), "FILE|URL",
     "an earlier perf.csv or a database (default: earlier runs in PERF_CSV)"},
    {"fail-on-regression", 0, OPT_NUMBER, F(fail_on_regression), "PCT",
     "exit 6 when a metric got worse by more than PCT percent (and the noise)"},
    {"junit", 0, OPT_STRING, F(junit), "FILE", "write JUnit XML"},
    {"summary-markdown", 0, OPT_STRING, F(summary), "FILE",
     "write a Markdown summary (also appended to $GITHUB_STEP_SUMMARY when set)"},
    {"no-step-summary", 0, OPT_FLAG, F(no_step_summary), NULL, "leave $GITHUB_STEP_SUMMARY alone"},
    {"html", 0, OPT_STRING, F(html), "FILE", "write the HTML trend report"},
    {"archive", 0, OPT_STRING, F(archive), "FILE.tar.gz",
     "logs, CSVs, run.json, JUnit, summary and report in one file"},
    {"export", 0, OPT_STRING, F(export_db), "URL", "export the run to a database"},
    {"manifest", 0, OPT_STRING, F(manifest), "FILE", "the run's run.json"},
    {"models-root", 0, OPT_STRING, F(models_root), "DIR",
     "read metric_direction overrides from DIR/models.json"},
    {"add", 0, OPT_LIST, F(files), "PATH", "one more file or folder for the archive"},
    OPT_END,
};
#undef F

static int report_ci(int argc, char **argv, rm_error *err)
{
	struct ci_cli cli = {0};
	struct opt_list pos = {0};
	rm_nightly_result res;
	int rc, ret = -1;

	cli.fail_on_regression = -1;
	rc = opt_parse(ci_options, &cli, argc, argv, &pos, err);
	if (rc != 0) {
		if (rc == 1) {
			opt_help(stdout,
				 "usage: run_models report ci [PERF_CSV] [options]\n\n"
				 "The end of a nightly run from its files: regression gate, JUnit, "
				 "summary,\nreport, export, archive. Exit 0, 1 (a model failed) or "
				 "6 (a regression).",
				 ci_options);
			ret = RM_EXIT_OK;
		}
		goto out;
	}
	if (pos.n > 1) {
		rm_error_set(err, RM_ERR_USAGE, "report ci takes one PERF_CSV ('%s' and '%s')",
			     pos.v[0], pos.v[1]);
		goto out;
	}
	rm_nightly_opts o = {0};
	o.perf_csv = pos.n ? pos.v[0] : "perf.csv";
	o.run_id = cli.run_id;
	o.suite = cli.suite;
	o.models_root = cli.models_root;
	o.baseline = cli.baseline;
	o.fail_on_regression = cli.fail_on_regression;
	o.junit = cli.junit;
	o.summary_markdown = cli.summary;
	o.html = cli.html;
	o.archive = cli.archive;
	o.export_db = cli.export_db;
	/* run.json beside perf.csv, where run writes it, unless told otherwise. */
	char *dir = rm_dirname(o.perf_csv), *beside = rm_xasprintf("%s/run.json", dir);
	o.manifest = cli.manifest ? cli.manifest : access(beside, R_OK) == 0 ? beside : NULL;
	o.extra_files = cli.files.v;
	o.n_extra_files = cli.files.n;
	o.no_step_summary = cli.no_step_summary;
	rc = rm_nightly_finish(&o, &res, err);
	free(beside);
	free(dir);
	if (rc < 0)
		goto out;
	fprintf(stderr,
		"report: %zu results, %zu failed, %zu skipped, %zu compared, %zu regression(s)%s\n",
		res.n_rows, res.n_failed, res.n_skipped, res.n_compared, res.n_regressions,
		res.gate_enforced ? "" : " (gate off)");
	ret = rm_exit_code_for(res.n_failed, res.gate_enforced ? res.n_regressions : 0);
out:
	opt_list_release(&pos);
	opt_list_release(&cli.files);
	return ret;
}

int rm_exit_code_for(size_t n_failed, size_t n_regressions)
{
	if (n_failed)
		return RM_EXIT_MODEL_FAILED;
	return n_regressions ? RM_EXIT_REGRESSION : RM_EXIT_OK;
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
		      "'run_models report <kind> --help' lists each kind's options.\n",
		      f);
		return argc < 2 ? RM_EXIT_USAGE : RM_EXIT_OK;
	}
	if (!strcmp(argv[1], "html"))
		return report_html(argc - 1, argv + 1, err);
	if (!strcmp(argv[1], "ci"))
		return report_ci(argc - 1, argv + 1, err);
	return rm_error_set(err, RM_ERR_USAGE, "unknown report '%s' (html or ci)", argv[1]);
}
