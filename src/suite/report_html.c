/*
 * The HTML trend report from its sources: perf.csv files (each with its accepted changes and
 * the GPU power of the perf_<model>.csv files beside it) and databases, streamed into plot
 * points, then the latest run judged and the page written. `report html` and the end of a
 * run (rm_nightly_finish's --html) both come here.
 */
#include <jansson.h>
#include <stdlib.h>

#include "rm/accepted.h"
#include "rm/db.h"
#include "rm/provenance.h"
#include "rm/direction.h"
#include "rm/history.h"
#include "rm/html.h"
#include "rm/results.h"
#include "rm/suite.h"
#include "rm/util.h"

/* The reading: every row into the history, counted. */
struct html_in {
	rm_baseline *h;
	size_t rows;
};

static int html_row(void *ctx, rm_result *row)
{
	struct html_in *in = ctx;
	rm_history_add(in->h, row);
	in->rows++;
	return 0;
}

/* The latest run's rows again, by run id, when the sources were not in time order. */
static int latest_again(const rm_nightly_html_opts *o, const char *id, rm_results *out,
			rm_error *err)
{
	for (size_t i = 0; i < o->n_files; i++)
		if (rm_results_read(out, o->files[i], id, err) < 0)
			return -1;
	for (size_t i = 0; i < o->n_dbs; i++) {
		rm_db *db = NULL;
		int rc = rm_db_open(o->dbs[i], &db, err);
		if (rc == 0)
			rc = rm_db_read_results(db, id, out, err);
		rm_db_close(db);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* Each perf.csv, its accepted changes and the GPU power of its runs, from the
 * perf_<model>.csv files beside it; its name into source. */
static int read_files(const rm_nightly_html_opts *o, struct html_in *in, rm_baseline *power,
		      rm_buf *source, rm_error *err)
{
	for (size_t i = 0; i < o->n_files; i++) {
		char *dir;
		int rc;
		if (rm_results_each(o->files[i], NULL, html_row, in, err) < 0 ||
		    rm_accepted_read(in->h, o->files[i], err) < 0)
			return -1;
		rm_buf_addf(source, "%s%s", source->len ? ", " : "", o->files[i]);
		dir = rm_dirname(o->files[i]);
		rc = rm_history_read_metric_dir(power, dir, "gpu_power_avg_w", err);
		free(dir);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* Each database's results and accepted changes; its URL, password hidden, into source. */
static int read_dbs(const rm_nightly_html_opts *o, struct html_in *in, rm_buf *source,
		    rm_error *err)
{
	for (size_t i = 0; i < o->n_dbs; i++) {
		rm_db *db = NULL;
		char *red = rm_db_redact(o->dbs[i]);
		int rc = rm_db_open(o->dbs[i], &db, err);
		if (rc == 0)
			rc = rm_db_each_result(db, NULL, html_row, in, err);
		if (rc == 0)
			rc = rm_db_accepted(db, in->h, err);
		rm_db_close(db);
		rm_buf_addf(source, "%s%s", source->len ? ", " : "", red);
		free(red);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* What made the latest run: the first perf.csv's companion file, else a database, that has
 * it (none: NULL). */
static json_t *latest_provenance(const rm_nightly_html_opts *o, const char *id)
{
	json_t *prov = NULL;
	rm_error err = RM_ERROR_INIT;

	for (size_t i = 0; id && i < o->n_files; i++) {
		if (rm_provenance_read(o->files[i], id, &prov, &err) == 0 && json_object_size(prov))
			return prov;
		json_decref(prov);
		prov = NULL;
	}
	for (size_t i = 0; id && i < o->n_dbs; i++) {
		rm_db *db = NULL;
		if (rm_db_open(o->dbs[i], &db, &err) == 0 &&
		    rm_db_provenance(db, id, &prov, &err) == 0 && json_object_size(prov)) {
			rm_db_close(db);
			return prov;
		}
		rm_db_close(db);
		json_decref(prov);
		prov = NULL;
	}
	return NULL;
}

int rm_nightly_html(const rm_nightly_html_opts *o, rm_nightly_html_result *res, rm_error *err)
{
	rm_history_opts hopt = RM_HISTORY_OPTS_INIT, popt = RM_HISTORY_OPTS_INIT;
	rm_html_opts ho = RM_HTML_OPTS_INIT;
	rm_baseline *power;
	rm_direction_table *dirs = NULL;
	rm_results again = RM_RESULTS_INIT;
	rm_buf source = RM_BUF_INIT((size_t)1 << 16);
	struct html_in in = {NULL, 0};
	json_t *prov = NULL;
	const rm_results *latest;
	const char *id;
	int complete, ret = -1;

	hopt.window = popt.window = o->window;
	hopt.plot = popt.plot = RM_HTML_PLOT_POINTS;
	hopt.keep_latest = 1;
	in.h = rm_history_new(&hopt);
	power = rm_history_new(&popt);
	if (read_files(o, &in, power, &source, err) < 0 || read_dbs(o, &in, &source, err) < 0)
		goto out;
	if (!o->directions) {
		dirs = rm_direction_table_new();
		if (o->models_root && rm_direction_table_load(dirs, o->models_root, err) < 0)
			goto out;
	}
	id = rm_history_latest(in.h, &latest, &complete);
	if (id && !complete) {
		if (latest_again(o, id, &again, err) < 0)
			goto out;
		latest = &again;
	}
	ho.title = o->title;
	ho.source = rm_buf_str(&source);
	ho.threshold_pct = o->threshold_pct;
	ho.directions = o->directions ? o->directions : dirs;
	ho.window = o->window;
	ho.power = power;
	ho.provenance = prov = latest_provenance(o, id);
	if (rm_html_report(o->path, in.h, latest, &ho, err) < 0)
		goto out;
	if (res) {
		res->rows = in.rows;
		res->series = rm_history_n_series(in.h);
		res->runs = rm_history_n_runs(in.h);
	}
	ret = 0;
out:
	rm_buf_release(&source);
	rm_direction_table_free(dirs);
	rm_results_release(&again);
	rm_baseline_free(in.h);
	rm_baseline_free(power);
	json_decref(prov);
	return ret;
}
