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
#include "rm/ci.h"
#include "rm/db.h"
#include "rm/gate.h"
#include "rm/util.h"

struct export_cli {
	const char *db, *run_id, *manifest, *models_root;
	int no_metrics;
};

#define F(field) offsetof(struct export_cli, field)
static const struct opt export_options[] = {
    {"db", 0, OPT_STRING, F(db), "URL",
     "sqlite:PATH (default sqlite:run_models.db) or postgresql://..."},
    {"run-id", 0, OPT_STRING, F(run_id), "ID", "export only this run"},
    {"manifest", 0, OPT_STRING, F(manifest), "FILE",
     "the run's run.json (default: run.json beside each perf.csv, when present)"},
    {"models-root", 0, OPT_STRING, F(models_root), "DIR",
     "read metric_direction overrides from DIR/models.json"},
    {"no-metrics", 0, OPT_FLAG, F(no_metrics), NULL, "leave perf_<model>.csv files out"},
    OPT_END,
};
#undef F

int cmd_export(int argc, char **argv, rm_error *err)
{
	struct export_cli cli = {0};
	struct opt_list pos = {0};
	rm_direction_table *dirs = rm_direction_table_new();
	rm_db *db = NULL;
	char *red = NULL;
	int rc, ret = -1;
	size_t total = 0;
	double t0;

	rc = opt_parse(export_options, &cli, argc, argv, &pos, err);
	if (rc != 0) {
		if (rc == 1) {
			opt_help(
			    stdout,
			    "usage: run_models export [--db URL] [PERF_CSV...]\n\n"
			    "Exports perf.csv rows (default ./perf.csv), the perf_<model>.csv "
			    "metrics beside them\nand run.json into the runs, results, metrics "
			    "and environment tables.",
			    export_options);
			ret = RM_EXIT_OK;
		}
		goto out;
	}
	if (!cli.db)
		cli.db = "sqlite:run_models.db";
	if (!rm_db_is_url(cli.db)) {
		rm_error_set(err, RM_ERR_USAGE,
			     "--db takes sqlite:PATH or postgresql://..., not '%s'", cli.db);
		goto out;
	}
	if (!pos.n) {
		pos.v = rm_xrealloc(pos.v, sizeof(*pos.v));
		pos.v[pos.n++] = "perf.csv";
	}
	if (cli.models_root && rm_direction_table_load(dirs, cli.models_root, err) < 0)
		goto out;
	red = rm_db_redact(cli.db);
	if (rm_db_open(cli.db, &db, err) < 0)
		goto out;
	t0 = rm_now();
	/* One transaction per perf.csv: a file is either in or not. */
	for (size_t i = 0; i < pos.n; i++) {
		rm_results rows = RM_RESULTS_INIT;
		rm_metrics metrics = RM_METRICS_INIT;
		rm_export_stats st;
		json_t *manifest = NULL;
		char *dir = rm_dirname(pos.v[i]), *mpath = NULL;
		double t1 = rm_now();

		rc = rm_results_read(&rows, pos.v[i], cli.run_id, err);
		if (rc == 0 && !cli.no_metrics)
			rc = rm_metrics_read_dir(&metrics, dir, cli.run_id, err);
		if (rc == 0) {
			mpath = cli.manifest ? rm_xstrdup(cli.manifest)
					     : rm_xasprintf("%s/run.json", dir);
			rm_error e = RM_ERROR_INIT;
			manifest = rm_manifest_read(mpath, &e);
			if (!manifest && cli.manifest) {
				*err = e;
				rc = -1;
			}
		}
		if (rc == 0)
			rc = rm_db_export(db, &rows, &metrics, manifest, dirs, &st, err);
		if (rc == 0) {
			double dt = rm_now() - t1;
			fprintf(stderr,
				"export: %s: %zu results (%zu new), %zu metrics (%zu new), %zu "
				"runs new, %zu environment rows in %.2f s (%.0f rows/s) into %s\n",
				pos.v[i], st.results_seen, st.results, st.metrics_seen, st.metrics,
				st.runs, st.environment, dt,
				dt > 0 ? (double)(st.results_seen + st.metrics_seen) / dt : 0.0,
				red);
			total += st.results;
		}
		json_decref(manifest);
		free(mpath);
		free(dir);
		rm_metrics_release(&metrics);
		rm_results_release(&rows);
		if (rc < 0)
			goto out;
	}
	if (pos.n > 1)
		fprintf(stderr, "export: %zu new results in %.2f s\n", total, rm_now() - t0);
	ret = RM_EXIT_OK;
out:
	rm_db_close(db);
	free(red);
	rm_direction_table_free(dirs);
	opt_list_release(&pos);
	return ret;
}
