/*
 * run_models accept [PERF_CSV | DB_URL] --model NAME [--metric NAME] [--since RUN_ID] ...
 *   Records that a model's change is intended from a run on (docs/nightly.md), in the
 *   perf.csv's companion file or the database; the gate then judges that model only from
 *   that run on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "options.h"
#include "rm/db.h"
#include "rm/accepted.h"
#include "rm/config.h"
#include "rm/detect.h"
#include "rm/direction.h"
#include "rm/gate.h"
#include "rm/history.h"
#include "rm/results.h"
#include "rm/util.h"

struct accept {
	struct cli cli;
	const char *source;
	int is_db;
	rm_baseline *h;
	rm_direction_table *dirs;
	rm_acceptance *a;
	size_t n;
	char now[32];
	char *since_start; /* --since: the run's start */
	char **owned;	   /* strings the records point to */
	size_t n_owned;
};

static const char *own(struct accept *x, const char *s)
{
	x->owned = rm_strv_push(x->owned, &x->n_owned, s ? s : "");
	return x->owned[x->n_owned - 1];
}

/* --since's run: its start from the file or the database, or an error naming both. */
struct find_run {
	const char *id;
	char *start;
	int found;
};

static int find_run_row(void *ctx, rm_result *row)
{
	struct find_run *f = ctx;
	const char *ts = row->col[RM_COL_TIMESTAMP];
	f->found = 1;
	if (ts[0] && (!f->start || strcmp(ts, f->start) < 0)) {
		free(f->start);
		f->start = rm_xstrdup(ts);
	}
	return 0;
}

static int since_run(struct accept *x, rm_error *err)
{
	struct find_run f = {x->cli.since, NULL, 0};

	if (x->is_db) {
		rm_db *db = NULL;
		int rc = rm_db_open(x->source, &db, err);
		if (rc == 0)
			rc = rm_db_run_start(db, x->cli.since, &f.start, err);
		rm_db_close(db);
		if (rc < 0)
			return -1;
		f.found = f.start != NULL;
	} else if (rm_results_each(x->source, x->cli.since, find_run_row, &f, err) < 0) {
		return -1;
	}
	if (!f.found)
		return rm_error_set(err, RM_ERR_INPUT,
				    "run '%s' is not in '%s': give a run id of its run_id column",
				    x->cli.since, x->source);
	x->since_start = f.start ? f.start : rm_xstrdup("");
	return 0;
}

static void accept_add(struct accept *x, const rm_acceptance *a)
{
	x->a = rm_xrealloc(x->a, (x->n + 1) * sizeof(*x->a));
	x->a[x->n++] = *a;
}

/* Whether a series is --config's: its key, or its parameters as reports name them. */
static int config_is(const rm_hseries *s, const char *want)
{
	rm_config c = RM_CONFIG_INIT;
	char *label;
	int yes;

	if (!want || !strcmp(s->config_key, want))
		return 1;
	if (rm_config_parse(&c, s->config) < 0)
		rm_config_release(&c);
	label = rm_config_label(&c);
	yes = c.n && !strcmp(label, want);
	free(label);
	rm_config_release(&c);
	return yes;
}

/* The history of the source, with its accepted changes. */
static int read_history(struct accept *x, rm_error *err)
{
	rm_history_opts ho = RM_HISTORY_OPTS_INIT;

	ho.window = (size_t)x->cli.history_window;
	x->h = rm_history_new(&ho);
	if (x->is_db) {
		rm_db *db = NULL;
		size_t w = x->cli.history_window ? (size_t)x->cli.history_window : RM_DETECT_WINDOW;
		int rc = rm_db_open(x->source, &db, err);
		if (rc == 0)
			rc = rm_db_baseline(db, NULL, NULL, RM_DETECT_KEEP(w) + 1, x->h, err);
		if (rc == 0)
			rc = rm_db_accepted(db, x->h, err);
		rm_db_close(db);
		if (rc < 0)
			return -1;
	} else if (rm_history_read_csv(x->h, x->source, err) < 0 ||
		   rm_accepted_read(x->h, x->source, err) < 0) {
		return -1;
	}
	return 0;
}

/* Without --since: each matching series' current regression, from where it started. */
static int current(struct accept *x, rm_error *err)
{
	double thr = x->cli.fail_on_regression >= 0 ? x->cli.fail_on_regression : 5;
	size_t matched = 0;

	if (read_history(x, err) < 0)
		return -1;
	for (size_t i = 0; i < rm_history_n_series(x->h); i++) {
		const rm_hseries *s = rm_history_series_at(x->h, i);
		rm_detect d;
		rm_detect_opts o = RM_DETECT_OPTS_INIT;
		rm_run_ref since;
		if (strcmp(s->model, x->cli.model) || !s->metric[0] ||
		    (x->cli.metric && strcmp(s->metric, x->cli.metric)) ||
		    (x->cli.machine && strcmp(s->machine, x->cli.machine)) ||
		    !config_is(s, x->cli.config))
			continue;
		matched++;
		o.direction = rm_direction_lookup(x->dirs, s->model, s->metric, NULL);
		o.threshold_pct = thr;
		o.window = (size_t)x->cli.history_window;
		if (rm_history_judge(x->h, s, &o, &d, &since) < 0 ||
		    d.verdict != RM_VERDICT_REGRESSION || !since.id[0])
			continue;
		rm_acceptance a = {s->model,	     s->metric,
				   s->docker_file,   s->arch,
				   s->n_gpus,	     s->machine,
				   own(x, since.id), own(x, since.start),
				   x->now,	     x->cli.reason ? x->cli.reason : "",
				   s->config_key};
		accept_add(x, &a);
	}
	if (!x->n)
		return rm_error_set(
		    err, RM_ERR_INPUT,
		    "nothing to accept: the gate finds no regression of '%s'%s%s%s%s in "
		    "'%s' (%zu series of it; threshold %.2f%%): give --since RUN_ID "
		    "to accept a change from a run on",
		    x->cli.model, x->cli.metric ? " " : "", x->cli.metric ? x->cli.metric : "",
		    x->cli.config ? " in configuration " : "", x->cli.config ? x->cli.config : "",
		    x->source, matched, thr);
	return 0;
}

/* One source, a model whose change is intended, a window the detector takes. */
static int check_args(const struct accept *x, const struct opt_list *pos, rm_error *err)
{
	if (pos->n > 1)
		return rm_error_set(err, RM_ERR_USAGE,
				    "accept takes one PERF_CSV or DB_URL ('%s' and '%s')",
				    pos->v[0], pos->v[1]);
	if (!x->cli.model)
		return rm_error_set(err, RM_ERR_USAGE,
				    "accept needs --model NAME: the model whose change "
				    "is intended");
	if (x->cli.history_window == 1 || x->cli.history_window > RM_DETECT_MAX_WINDOW)
		return rm_error_set(err, RM_ERR_USAGE,
				    "--history-window takes 2 to %d runs, not %ld",
				    RM_DETECT_MAX_WINDOW, x->cli.history_window);
	return 0;
}

/* --config's key: as given when the history has a series of the model with that key, else
 * the key of its series whose parameters read so. */
static int config_key(struct accept *x, const char **key, rm_error *err)
{
	*key = "";
	if (!x->cli.config)
		return 0;
	if (read_history(x, err) < 0)
		return -1;
	for (size_t i = 0; i < rm_history_n_series(x->h); i++) {
		const rm_hseries *s = rm_history_series_at(x->h, i);
		if (!strcmp(s->model, x->cli.model) && config_is(s, x->cli.config)) {
			*key = own(x, s->config_key);
			return 0;
		}
	}
	return rm_error_set(err, RM_ERR_INPUT,
			    "'%s' has no configuration '%s' of '%s': give its key (the "
			    "config_key column) or its parameters as the report names them",
			    x->source, x->cli.config, x->cli.model);
}

/* With --since: one record of the key as given, from that run on. */
static int since(struct accept *x, rm_error *err)
{
	const char *key;

	if (since_run(x, err) < 0 || config_key(x, &key, err) < 0)
		return -1;
	rm_acceptance a = {
	    x->cli.model, x->cli.metric ? x->cli.metric : "",	"",	      "",
	    "",		  x->cli.machine ? x->cli.machine : "", x->cli.since, x->since_start,
	    x->now,	  x->cli.reason ? x->cli.reason : "",	key};
	accept_add(x, &a);
	return 0;
}

/* The records into the database's accepted table or the perf.csv's companion file. */
static int record(const struct accept *x, rm_error *err)
{
	rm_db *db = NULL;
	int rc;

	if (!x->is_db)
		return rm_accepted_append(x->source, x->a, x->n, err);
	rc = rm_db_open(x->source, &db, err);
	if (rc == 0)
		rc = rm_db_accept(db, x->a, x->n, err);
	rm_db_close(db);
	return rc;
}

static void print_accepted(const struct accept *x)
{
	for (size_t i = 0; i < x->n; i++) {
		const rm_acceptance *a = &x->a[i];
		char *where = x->is_db ? rm_db_redact(x->source) : rm_accepted_path(x->source);
		fprintf(stderr, "accepted: %s %s%s%s%s%s from run %s%s%s%s: recorded in %s\n",
			a->model, a->metric[0] ? a->metric : "(every metric)",
			a->machine[0] ? " on " : "", a->machine,
			a->config_key[0] ? " in configuration " : "", a->config_key, a->since_run,
			a->since_start[0] ? " (" : "", a->since_start, a->since_start[0] ? ")" : "",
			where);
		free(where);
	}
}

int cmd_accept(int argc, char **argv, rm_error *err)
{
	struct accept x;
	struct opt_list pos = {0};
	int rc, md, ret = -1;

	memset(&x, 0, sizeof(x));
	cli_init(&x.cli);
	x.dirs = rm_direction_table_new();
	rm_utc_timestamp(x.now, sizeof(x.now));
	rc = opt_parse(CMD_ACCEPT, &x.cli, argc, argv, &pos, &md, err);
	if (rc != 0) {
		if (rc == 1) {
			opt_help(
			    stdout, CMD_ACCEPT,
			    "usage: run_models accept [PERF_CSV|DB_URL] --model NAME [options]\n\n"
			    "Records that the model's change is intended from a run on: the "
			    "gate then\njudges it only from that run on. Kept in the perf CSV's "
			    "companion file\n(perf.accepted.csv) or in the database.",
			    md);
			ret = RM_EXIT_OK;
		}
		goto out;
	}
	if (check_args(&x, &pos, err) < 0)
		goto out;
	x.source = pos.n ? pos.v[0] : "perf.csv";
	x.is_db = rm_db_is_url(x.source);
	if (x.cli.models_root && rm_direction_table_load(x.dirs, x.cli.models_root, err) < 0)
		goto out;
	if ((x.cli.since ? since(&x, err) : current(&x, err)) < 0 || record(&x, err) < 0)
		goto out;
	print_accepted(&x);
	ret = RM_EXIT_OK;
out:
	rm_baseline_free(x.h);
	rm_direction_table_free(x.dirs);
	free(x.a);
	free(x.since_start);
	rm_strv_free(x.owned);
	opt_list_release(&pos);
	cli_release(&x.cli);
	return ret;
}
