/*
 * run_models export --db URL [PERF_CSV...]: results into a database dashboards read
 * directly (docs/nightly.md). One transaction; rows already there are left alone.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "options.h"
#include "rm/direction.h"
#include "rm/manifest.h"
#include "rm/metrics.h"
#include "rm/results.h"
#include "rm/db.h"
#include "rm/util.h"

/* Exports one perf.csv, its perf_<model>.csv and run.json; *total counts new results. */
static int export_file(rm_db *db, const char *red, const char *path, const struct cli *cli,
		       const rm_direction_table *dirs, size_t *total, rm_error *err)
{
	rm_results rows = RM_RESULTS_INIT;
	rm_metrics metrics = RM_METRICS_INIT;
	rm_export_stats st;
	rm_manifest_file manifest = {0};
	int have_manifest = 0;
	char *dir = rm_dirname(path), *mpath = NULL;
	double t1 = rm_now();
	int rc = rm_results_read(&rows, path, cli->run_id, err);

	if (rc == 0 && !cli->no_metrics)
		rc = rm_metrics_read_dir(&metrics, dir, cli->run_id, err);
	if (rc == 0) {
		rm_error e = RM_ERROR_INIT;
		mpath =
		    cli->manifest ? rm_xstrdup(cli->manifest) : rm_xasprintf("%s/run.json", dir);
		have_manifest = rm_manifest_load(mpath, &manifest, &e) == 0;
		if (!have_manifest && cli->manifest) {
			*err = e;
			rc = -1;
		}
	}
	if (rc == 0)
		rc = rm_db_export(db, &rows, &metrics, have_manifest ? &manifest : NULL, dirs, &st,
				  err);
	if (rc == 0) {
		double dt = rm_now() - t1;
		fprintf(
		    stderr,
		    "export: %s: %zu results (%zu new), %zu metrics (%zu new), %zu runs new, "
		    "%zu environment rows, %zu provenance rows in %.2f s (%.0f rows/s) into %s\n",
		    path, st.results_seen, st.results, st.metrics_seen, st.metrics, st.runs,
		    st.environment, st.provenance, dt,
		    dt > 0 ? (double)(st.results_seen + st.metrics_seen) / dt : 0.0, red);
		*total += st.results;
	}
	rm_manifest_file_release(&manifest);
	free(mpath);
	free(dir);
	rm_metrics_release(&metrics);
	rm_results_release(&rows);
	return rc;
}

int cmd_export(int argc, char **argv, rm_error *err)
{
	struct cli cli;
	struct opt_list pos = {0};
	const char *url;
	rm_direction_table *dirs = rm_direction_table_new();
	rm_db *db = NULL;
	char *red = NULL;
	int rc, md, ret = -1;
	size_t total = 0;
	double t0;

	cli_init(&cli);
	rc = opt_parse(CMD_EXPORT, &cli, argc, argv, &pos, &md, err);
	if (rc != 0) {
		if (rc == 1) {
			opt_help(stdout, CMD_EXPORT,
				 "usage: run_models export [--db URL] [PERF_CSV...]\n\n"
				 "Exports perf.csv rows (default ./perf.csv), the perf_<model>.csv "
				 "metrics beside them\nand run.json into the runs, results, "
				 "metrics and environment tables.",
				 md);
			ret = RM_EXIT_OK;
		}
		goto out;
	}
	/* --db: the last one given wins, as for every option with one value. */
	url = cli.db.n ? cli.db.v[cli.db.n - 1] : "sqlite:run_models.db";
	if (!rm_db_is_url(url)) {
		rm_error_set(err, RM_ERR_USAGE,
			     "--db takes sqlite:PATH or postgresql://..., not '%s'", url);
		goto out;
	}
	if (!pos.n) {
		pos.v = rm_xrealloc(pos.v, sizeof(*pos.v));
		pos.v[pos.n++] = "perf.csv";
	}
	if (cli.models_root && rm_direction_table_load(dirs, cli.models_root, err) < 0)
		goto out;
	red = rm_db_redact(url);
	if (rm_db_open(url, &db, err) < 0)
		goto out;
	t0 = rm_now();
	/* One transaction per perf.csv: a file is either in or not. */
	for (size_t i = 0; i < pos.n; i++)
		if (export_file(db, red, pos.v[i], &cli, dirs, &total, err) < 0)
			goto out;
	if (pos.n > 1)
		fprintf(stderr, "export: %zu new results in %.2f s\n", total, rm_now() - t0);
	ret = RM_EXIT_OK;
out:
	rm_db_close(db);
	free(red);
	rm_direction_table_free(dirs);
	cli_release(&cli);
	opt_list_release(&pos);
	return ret;
}
