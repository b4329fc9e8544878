/*
 * multiple_results, as madengine reads it: the CSV a model's script writes with one result
 * per row (columns model, performance, metric, and any others). It is looked for where
 * madengine looks, the run's folder (/myworkspace, madengine's working directory) first,
 * then the model dir; copied out beside perf.csv under its own name (madengine leaves it in
 * its working directory); each row becomes a perf.csv row "<model>_<row>", and the other
 * numeric columns go to perf_<model>.csv. A row whose performance is empty or not a
 * number is a FAILURE row saying so (madengine: FAILURE when empty, SUCCESS with the text
 * otherwise); a missing CSV, or one without rows, fails the run.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "rm/config.h"
#include "rm/report.h"
#include "rm/util.h"
#include "rm/tar.h"

/* The largest multiple_results (or data status) file read back (docs/workloads.md). */
#define RESULTS_MAX_BYTES ((size_t)16 << 20)
#define RESULTS_TAR_SLACK ((size_t)64 << 10)

FILE *rm_runner__fetch_file(struct run *r, rm_job *job, const char *path, rm_error *err)
{
	char *tar_path = NULL, *csv_path = NULL;
	int tfd = rm_make_temp(&tar_path, err), cfd = -1;
	FILE *f = NULL;

	if (tfd < 0)
		goto out;
	/* the tar of one file: the file, a header or two and padding */
	if (r->active->ops->fetch(r->active->state, job, path, tfd,
				  RESULTS_MAX_BYTES + RESULTS_TAR_SLACK, err) < 0)
		goto out;
	cfd = rm_make_temp(&csv_path, err);
	if (cfd < 0 || lseek(tfd, 0, SEEK_SET) < 0)
		goto out;
	if (rm_tar_extract_one(tfd, cfd, RESULTS_MAX_BYTES, err) < 0) {
		err->kind = RM_ERR_IO; /* it is there, and not usable: never "missing" */
		goto out;
	}
	f = fopen(csv_path, "r");
	if (!f)
		rm_error_set(err, RM_ERR_IO, "cannot read '%s'", csv_path);
out:
	if (tfd >= 0)
		close(tfd);
	if (cfd >= 0)
		close(cfd);
	if (tar_path)
		unlink(tar_path); /* f stays readable: unlinked, not closed */
	if (csv_path)
		unlink(csv_path);
	free(tar_path);
	free(csv_path);
	return f;
}

/* The CSV in the run's folder, else in the model dir; *where receives the path found. */
static FILE *fetch_results(struct run *r, const rm_model *m, const char *name, int card,
			   rm_job *job, char **where, rm_error *err)
{
	char *dir = rm_model_dir(m);
	char *paths[2] = {rm_xasprintf("%s/%s", RM_WORKSPACE, name),
			  rm_xasprintf("%s/%s/%s", RM_WORKSPACE, dir, name)};
	FILE *f = NULL;

	if (card) { /* the launcher finds what the card's script wrote, and says where it looked */
		f = rm_runner__fetch_file(r, job, paths[0], err);
		*where = f ? rm_xstrdup(name) : NULL;
		free(paths[0]);
		free(paths[1]);
		free(dir);
		return f;
	}
	for (int i = 0; i < 2 && !f; i++) {
		rm_error_clear(err);
		f = rm_runner__fetch_file(r, job, paths[i], err);
		if (f) {
			*where = rm_xstrdup(paths[i]);
		} else if (err->kind != RM_ERR_INPUT) { /* there, but not usable: say why */
			rm_error_wrap(err, "multiple_results '%s'", name);
			break;
		}
	}
	if (!f && err->kind == RM_ERR_INPUT)
		rm_error_set(err, RM_ERR_INPUT,
			     "multiple_results '%s': the script wrote no such file (looked for "
			     "'%s' and '%s')",
			     name, paths[0], paths[1]);
	free(paths[0]);
	free(paths[1]);
	free(dir);
	return f;
}

/* Whether name (beside perf.csv) is one of the run's own files. */
static int results_ours(const struct run *r, const rm_model *m, const char *name)
{
	const char *out = strrchr(r->o->output, '/');
	char *safe = rm_file_safe(m->name), *metrics = rm_xasprintf("perf_%s.csv", safe);
	int yes = !strcmp(name, out ? out + 1 : r->o->output) || !strcmp(name, metrics) ||
		  !strcmp(name, "perf_summary.csv");

	free(metrics);
	free(safe);
	return yes;
}

/* Copies f (from its start) to path through a temporary file renamed over it: what stands
 * at path (an older copy, a planted symlink) is replaced, never followed. */
static int copy_to(FILE *f, const char *path, const char *run_id, rm_error *err)
{
	char *tmp = rm_xasprintf("%s.%s.tmp", path, run_id), buf[65536];
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644), ret = 0;
	size_t n;

	if (fd < 0) {
		free(tmp);
		return rm_error_sys(err, RM_ERR_IO, errno, "cannot create '%s'", path);
	}
	rewind(f);
	while (ret == 0 && (n = fread(buf, 1, sizeof(buf), f)) > 0)
		if (rm_write_all(fd, buf, n) < 0)
			ret = rm_error_sys(err, RM_ERR_IO, errno, "cannot write '%s'", path);
	if (close(fd) != 0 && ret == 0)
		ret = rm_error_sys(err, RM_ERR_IO, errno, "cannot write '%s'", path);
	if (ret == 0 && rename(tmp, path) != 0)
		ret = rm_error_sys(err, RM_ERR_IO, errno, "cannot create '%s'", path);
	if (ret < 0)
		unlink(tmp);
	rewind(f);
	free(tmp);
	return ret;
}

/* The CSV as the script wrote it, beside perf.csv (madengine's test reads it there). */
static void copy_out(struct run *r, const rm_model *m, const char *name, FILE *f)
{
	const char *base = strrchr(name, '/');
	rm_error err = RM_ERROR_INIT;
	char *dest;

	base = base ? base + 1 : name;
	if (results_ours(r, m, base)) {
		rm_warn("model '%s': multiple_results '%s' has the name of one of run_models' "
			"own files; it is not copied beside them",
			m->name, name);
		return;
	}
	dest = rm_perf_sibling(r->o->output, base);
	if (copy_to(f, dest, r->run_id, &err) < 0)
		rm_warn("model '%s': multiple_results: %s", m->name, rm_error_text(&err));
	free(dest);
}

/* The columns of the CSV's header. */
struct results_cols {
	const char *name; /* the file's name, for messages */
	long model, perf, metric;
	char **names;
	size_t n;
};

static int results_header(FILE *f, struct results_cols *c, rm_error *err)
{
	if (rm_csv_read_record(f, &c->names, &c->n, err) != 1)
		return rm_error_set(err, RM_ERR_INPUT, "it is empty");
	c->model = c->perf = c->metric = -1;
	for (size_t i = 0; i < c->n; i++) {
		long *slot = !strcmp(c->names[i], "model")	   ? &c->model
			     : !strcmp(c->names[i], "performance") ? &c->perf
			     : !strcmp(c->names[i], "metric")	   ? &c->metric
								   : NULL;
		if (slot && *slot < 0)
			*slot = (long)i;
	}
	if (c->model < 0 || c->perf < 0 || c->metric < 0)
		return rm_error_set(
		    err, RM_ERR_INPUT,
		    "its header must name the columns model, performance and metric");
	return 0;
}

static const char *cell(char **rec, size_t n, long col)
{
	return col >= 0 && (size_t)col < n ? rec[col] : "";
}

/* One data row: its perf.csv cells, why it is not a result (or ""), its other numbers. */
static void add_row(struct outcome *oc, const rm_model *m, const struct results_cols *c, char **rec,
		    size_t n, size_t line)
{
	const char *name = cell(rec, n, c->model), *perf = cell(rec, n, c->perf);
	char *row_model = rm_xasprintf("%s_%s", m->name, name), *why, *metric;
	size_t k = oc->mr_n, row = oc->mr_n;
	double v;

	/* The row's cell: the columns of MAD's narrow layout (inp, out, max_concurrency, ...),
	 * its configuration (rm/config.h); numbers among them still go to perf_<model>.csv. */
	oc->mr_cells = rm_xrealloc(oc->mr_cells, (row + 1) * sizeof(*oc->mr_cells));
	oc->mr_cells[row] = (rm_config)RM_CONFIG_INIT;
	for (size_t i = 0; i < n && i < c->n; i++)
		if (rec[i][0] && rm_config_cell_column(c->names[i]))
			rm_config_set(&oc->mr_cells[row], c->names[i], rec[i]);

	if ((size_t)c->perf >= n)
		why = rm_xasprintf("row %zu of multiple_results '%s' has %zu cells and the "
				   "header %zu: no performance",
				   line, c->name, n, c->n);
	else if (rm_parse_double(perf, &v) < 0)
		why = rm_xasprintf("row %zu of multiple_results '%s': performance '%s' is %s", line,
				   c->name, perf, *perf ? "not a number" : "empty");
	else
		why = rm_xstrdup("");
	oc->mr_names = rm_strv_push(oc->mr_names, &k, name);
	k = oc->mr_n;
	oc->mr_perf = rm_strv_push(oc->mr_perf, &k, *why ? "" : perf);
	k = oc->mr_n;
	metric = rm_cell_text(cell(rec, n, c->metric)); /* the script's text: no formula */
	oc->mr_metric = rm_strv_push(oc->mr_metric, &k, metric);
	free(metric);
	k = oc->mr_n;
	oc->mr_reason = rm_strv_push(oc->mr_reason, &k, why);
	oc->mr_n = k;
	/* Every number of the row goes to perf_<model>.csv, performance under its metric. */
	if (!*why)
		rm_result_add(&oc->mr_extra,
			      *cell(rec, n, c->metric) ? cell(rec, n, c->metric) : "performance", v,
			      "", -1, "last");
	for (size_t i = 0; i < n && i < c->n; i++) {
		if ((long)i == c->model || (long)i == c->perf || (long)i == c->metric ||
		    rm_parse_double(rec[i], &v) < 0)
			continue;
		rm_result_add(&oc->mr_extra, c->names[i], v, "", -1, "last");
	}
	while (oc->mr_extra_n < oc->mr_extra.n)
		oc->mr_extra_model = rm_strv_push(oc->mr_extra_model, &oc->mr_extra_n, row_model);
	free(why);
	free(row_model);
}

static int read_rows(FILE *f, const rm_model *m, const struct results_cols *c, struct outcome *oc,
		     rm_error *err)
{
	char **rec = NULL;
	size_t n, line = 1;
	int got;

	oc->mr_names = rm_xcalloc(1, sizeof(char *));
	oc->mr_perf = rm_xcalloc(1, sizeof(char *));
	oc->mr_metric = rm_xcalloc(1, sizeof(char *));
	oc->mr_reason = rm_xcalloc(1, sizeof(char *));
	oc->mr_extra_model = rm_xcalloc(1, sizeof(char *));
	while ((got = rm_csv_read_record(f, &rec, &n, err)) == 1) {
		line++;
		if (!(n == 1 && !rec[0][0])) { /* not a blank line */
			if (!*cell(rec, n, c->model)) {
				rm_strv_free(rec);
				return rm_error_set(err, RM_ERR_INPUT, "row %zu has no model name",
						    line);
			}
			add_row(oc, m, c, rec, n, line);
		}
		rm_strv_free(rec);
		rec = NULL;
	}
	if (got < 0)
		return -1;
	if (!oc->mr_n)
		return rm_error_set(err, RM_ERR_INPUT, "it has no rows");
	return 0;
}

int rm_runner__read_multiple_results(struct run *r, const rm_model *m, int card, rm_job *job,
				     struct outcome *oc, rm_error *err)
{
	char *safe = rm_file_safe(m->name), *card_name = rm_xasprintf("%s.results.csv", safe);
	const char *name = card ? card_name : m->multiple_results;
	struct results_cols c = {name, -1, -1, -1, NULL, 0};
	char *where = NULL;
	FILE *f = fetch_results(r, m, name, card, job, &where, err);
	int ret = -1;

	free(safe);
	if (!f) {
		free(card_name);
		return -1;
	}
	copy_out(r, m, name, f);
	if (results_header(f, &c, err) == 0 && read_rows(f, m, &c, oc, err) == 0)
		ret = 0;
	else
		rm_error_wrap(err, "%s '%s'", card ? "results" : "multiple_results", where);
	free(card_name);
	rm_strv_free(c.names);
	fclose(f);
	free(where);
	return ret;
}
