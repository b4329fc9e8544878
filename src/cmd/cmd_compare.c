/*
 * run_models report compare A B [PERF_CSV|DB_URL] [--format text|markdown|json] [-o FILE]
 *   Two runs side by side (rm/compare.h): A and B are run ids in a perf.csv (default
 *   perf.csv) or a results database, or two perf.csv files (each its last run). B is judged
 *   by the gate against the history up to A: in one source, the runs before B; with two
 *   files, A's whole file.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "options.h"
#include "rm/compare.h"
#include "rm/db.h"
#include "rm/history.h"
#include "rm/provenance.h"
#include "rm/util.h"

struct side {
	char *id;
	rm_results rows;
	json_t *prov;
};

/* One run of a perf.csv (the last one when id is NULL), and its provenance. */
static int csv_side(const char *path, const char *id, struct side *s, rm_error *err)
{
	if (!id) {
		rm_results all = RM_RESULTS_INIT;
		if (rm_results_read(&all, path, NULL, err) < 0) {
			rm_results_release(&all);
			return -1;
		}
		id = rm_results_last_run(&all);
		s->id = id ? rm_xstrdup(id) : NULL;
		rm_results_release(&all);
		if (!s->id)
			return rm_error_set(err, RM_ERR_INPUT, "'%s' holds no run", path);
	} else {
		s->id = rm_xstrdup(id);
	}
	if (rm_results_read(&s->rows, path, s->id, err) < 0)
		return -1;
	if (!s->rows.n)
		return rm_error_set(err, RM_ERR_INPUT, "'%s' has no run '%s'", path, s->id);
	return rm_provenance_read(path, s->id, &s->prov, err);
}

static int db_side(rm_db *db, const char *url, const char *id, struct side *s, rm_error *err)
{
	s->id = rm_xstrdup(id);
	if (rm_db_read_results(db, id, &s->rows, err) < 0)
		return -1;
	if (!s->rows.n)
		return rm_error_set(err, RM_ERR_INPUT, "'%s' has no run '%s'", url, id);
	return rm_db_provenance(db, id, &s->prov, err);
}

/* Both runs and B's history from the source. */
static int compare_load(const struct opt_list *pos, size_t window, struct side *a, struct side *b,
			rm_baseline **hist, const char **source, rm_error *err)
{
	rm_history_opts ho = RM_HISTORY_OPTS_INIT;
	int files = pos->n == 2 && access(pos->v[0], R_OK) == 0 && access(pos->v[1], R_OK) == 0;

	ho.window = window;
	if (files) { /* two perf.csv files: their last runs; A's file is the history */
		*source = pos->v[0];
		*hist = rm_history_new(&ho);
		return csv_side(pos->v[0], NULL, a, err) < 0 ||
			       csv_side(pos->v[1], NULL, b, err) < 0
			   ? -1
			   : rm_history_read_csv(*hist, pos->v[0], err);
	}
	*source = pos->n > 2 ? pos->v[2] : "perf.csv";
	if (rm_db_is_url(*source)) {
		rm_db *db = NULL;
		char *start = NULL;
		int rc = rm_db_open(*source, &db, err);
		if (rc == 0)
			rc = db_side(db, *source, pos->v[0], a, err) < 0 ||
				     db_side(db, *source, pos->v[1], b, err) < 0 ||
				     rm_db_run_start(db, pos->v[1], &start, err) < 0
				 ? -1
				 : 0;
		*hist = rm_history_new(&ho);
		if (rc == 0)
			rc = rm_db_baseline(db, pos->v[1], start,
					    window ? window : RM_DETECT_WINDOW, *hist, err);
		free(start);
		rm_db_close(db);
		return rc;
	}
	ho.before_run = pos->v[1];
	*hist = rm_history_new(&ho);
	return csv_side(*source, pos->v[0], a, err) < 0 || csv_side(*source, pos->v[1], b, err) < 0
		   ? -1
		   : rm_history_read_csv(*hist, *source, err);
}

static void side_release(struct side *s)
{
	free(s->id);
	rm_results_release(&s->rows);
	json_decref(s->prov);
}

static int compare_usage(struct cli *cli, const struct opt_list *pos, rm_error *err)
{
	if (pos->n < 2 || pos->n > 3)
		return rm_error_set(err, RM_ERR_USAGE,
				    "report compare takes two runs (run ids, or two perf CSV "
				    "files) and optionally where the run ids are (a perf CSV or a "
				    "database URL)");
	if (cli->history_window == 1 || cli->history_window > RM_DETECT_MAX_WINDOW)
		return rm_error_set(err, RM_ERR_USAGE,
				    "--history-window takes 2 to %d runs, not %ld",
				    RM_DETECT_MAX_WINDOW, cli->history_window);
	return 0;
}

int cmd_report_compare(int argc, char **argv, rm_error *err)
{
	struct cli cli;
	struct opt_list pos = {0};
	struct side a = {0}, b = {0};
	rm_baseline *hist = NULL;
	rm_compare_opts o = RM_COMPARE_OPTS_INIT;
	rm_gate_opts go = RM_GATE_OPTS_INIT;
	rm_compare_result res;
	FILE *out = stdout;
	int rc, md, ret = -1;

	cli_init(&cli);
	rc = opt_parse(CMD_REPORT_COMPARE, &cli, argc, argv, &pos, &md, err);
	if (rc != 0) {
		if (rc == 1) {
			opt_help(
			    stdout, CMD_REPORT_COMPARE,
			    "usage: run_models report compare A B [PERF_CSV|DB_URL] [options]\n\n"
			    "Two runs side by side: each metric's change with the gate's "
			    "verdict, then\nevery difference in what made them (image, driver "
			    "and firmware, environment,\narguments, host).",
			    md);
			ret = RM_EXIT_OK;
		}
		goto out;
	}
	if (compare_usage(&cli, &pos, err) < 0 ||
	    compare_load(&pos, (size_t)cli.history_window, &a, &b, &hist, &o.source, err) < 0)
		goto out;
	if (cli.output && !(out = fopen(cli.output, "w"))) {
		rm_error_sys(err, RM_ERR_IO, errno, "cannot write '%s'", cli.output);
		goto out;
	}
	go.threshold_pct = cli.threshold;
	go.window = (size_t)cli.history_window;
	o.a_id = a.id;
	o.b_id = b.id;
	o.a = &a.rows;
	o.b = &b.rows;
	o.prov_a = a.prov;
	o.prov_b = b.prov;
	o.history = hist;
	o.gate = &go;
	o.format = cli.format == FORMAT_JSON	   ? RM_COMPARE_JSON
		   : cli.format == FORMAT_MARKDOWN ? RM_COMPARE_MARKDOWN
						   : RM_COMPARE_TEXT;
	ret = rm_compare_write(out, &o, &res, err) < 0 ? -1 : RM_EXIT_OK;
	if (out != stdout && fclose(out) != 0 && ret == RM_EXIT_OK)
		ret = rm_error_sys(err, RM_ERR_IO, errno, "cannot write '%s'", cli.output);
out:
	side_release(&a);
	side_release(&b);
	rm_baseline_free(hist);
	cli_release(&cli);
	opt_list_release(&pos);
	return ret;
}
