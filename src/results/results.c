#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rm/config.h"
#include "rm/history.h"
#include "rm/metrics.h"
#include "rm/report.h"
#include "rm/results.h"
#include "rm/util.h"

/* What an rm_results owns beside its rows: each row's record (the strings its col[] points
 * to; NULL for a row that borrows them), and the arrays' room. */
struct rm_results_store {
	char ***rec;
	size_t cap;
};

/* The same for an rm_metrics. */
struct rm_metrics_store {
	char ***rec;
	size_t cap;
};

/* MAD's narrow cell columns a perf.csv header may name (more are not read). */
#define RM_HEADER_CELLS 16

const char *const rm_metric_header[8] = {"timestamp", "run_id", "model", "metric",
					 "value",     "unit",	"step",	 "aggregate"};

int rm_perf_col_index(const char *name)
{
	for (int i = 0; i < RM_PERF_COLS; i++)
		if (!strcmp(rm_perf_header[i], name))
			return i;
	return -1;
}

char *rm_dirname(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return rm_xstrdup(".");
	if (slash == path)
		return rm_xstrdup("/");
	return rm_xstrndup(path, (size_t)(slash - path));
}

static double num_or_nan(const char *s)
{
	double v;
	if (!s || !*s || rm_parse_double(s, &v) < 0)
		return NAN;
	return v;
}

static const char *add_file(rm_results *res, const char *path)
{
	for (size_t i = 0; i < res->n_files; i++)
		if (!strcmp(res->files[i], path))
			return res->files[i];
	res->files = rm_strv_push(res->files, &res->n_files, path);
	return res->files[res->n_files - 1];
}

/* A new row, zeroed, that owns rec (NULL: none yet). */
static rm_result *new_row(rm_results *res, char **rec)
{
	rm_results_store *st = res->store;

	if (!st)
		st = res->store = rm_xcalloc(1, sizeof(*st));
	if (res->n == st->cap) {
		st->cap = st->cap ? st->cap * 2 : 64;
		res->rows = rm_xrealloc(res->rows, st->cap * sizeof(*res->rows));
		st->rec = rm_xrealloc(st->rec, st->cap * sizeof(*st->rec));
	}
	st->rec[res->n] = rec;
	rm_result *r = &res->rows[res->n++];
	memset(r, 0, sizeof(*r));
	return r;
}

void rm_result_numbers(rm_result *r)
{
	long rep;
	r->performance = num_or_nan(r->col[RM_COL_PERFORMANCE]);
	r->test_s = num_or_nan(r->col[RM_COL_TEST_DURATION]);
	r->repeat = 1;
	if (rm_parse_long(r->col[RM_COL_REPEAT], 1, 1000000000L, &rep) == 0)
		r->repeat = rep;
	r->attempt = 1;
	if (rm_parse_long(r->col[RM_COL_ATTEMPT], 1, 1000000L, &rep) == 0)
		r->attempt = rep;
}

/* model, or "<model>_<row>" of it */
static int same_model(const char *m, const char *of)
{
	size_t n = strlen(of);
	return !strcmp(m, of) || (!strncmp(m, of, n) && m[n] == '_');
}

int rm_result_retries(const rm_result *a, const rm_result *b)
{
	return b->attempt > a->attempt && b->repeat == a->repeat &&
	       !strcmp(b->col[RM_COL_RUN_ID], a->col[RM_COL_RUN_ID]) &&
	       !strcmp(b->col[RM_COL_DOCKERFILE], a->col[RM_COL_DOCKERFILE]) &&
	       (same_model(b->col[RM_COL_MODEL], a->col[RM_COL_MODEL]) ||
		same_model(a->col[RM_COL_MODEL], b->col[RM_COL_MODEL]));
}

/* The last row is a later attempt: the rows it retried are marked (attempts are rare, so
 * the scan back costs nothing in a run without them). */
static void mark_retried(rm_results *res)
{
	const rm_result *last = &res->rows[res->n - 1];

	for (size_t i = 0; last->attempt > 1 && i + 1 < res->n; i++)
		if (!res->rows[i].retried && rm_result_retries(&res->rows[i], last))
			res->rows[i].retried = 1;
}

void rm_results_add(rm_results *res, const char *const *names, const char *const *values, size_t n,
		    const char *file, long line)
{
	rm_result *r = new_row(res, rm_xcalloc(1, sizeof(char *)));
	char ***rec = &res->store->rec[res->n - 1];
	size_t nf = 0;

	for (int c = 0; c < RM_PERF_COLS; c++)
		r->col[c] = "";
	for (size_t i = 0; i < n; i++) {
		int c = rm_perf_col_index(names[i]);
		if (c < 0 || !values[i])
			continue;
		*rec = rm_strv_push(*rec, &nf, values[i]);
		r->col[c] = (*rec)[nf - 1];
	}
	r->file = file ? add_file(res, file) : "";
	r->line = line;
	rm_result_numbers(r);
	mark_retried(res);
}

/* The perf.csv header's columns: map[c] is the record field of column c, or -1; cells[] the
 * fields of MAD's narrow cell columns (rm_config_cell_column), named in names. */
struct header {
	int map[RM_PERF_COLS];
	int cells[RM_HEADER_CELLS];
	size_t n_cells, n_cols;
	char **names;
};

static int read_header(FILE *f, const char *path, struct header *h, rm_error *err)
{
	static const int required[] = {RM_COL_MODEL, RM_COL_PERFORMANCE, RM_COL_METRIC,
				       RM_COL_STATUS};
	char **rec = NULL;
	size_t n = 0;
	int rc = rm_csv_read_record(f, &rec, &n, err), ret = -1;

	h->n_cells = 0;
	h->names = NULL;
	if (rc <= 0) {
		if (rc == 0)
			rm_error_set(err, RM_ERR_INPUT, "'%s' is empty: not a perf.csv", path);
		else
			rm_error_wrap(err, "reading '%s'", path);
		goto out;
	}
	if (n && !strncmp(rec[0], "\xEF\xBB\xBF", 3)) {
		rm_warn("'%s' starts with a UTF-8 byte order mark (a spreadsheet's \"CSV UTF-8\"): "
			"read without it",
			path);
		memmove(rec[0], rec[0] + 3, strlen(rec[0] + 3) + 1);
	}
	h->n_cols = n;
	for (int c = 0; c < RM_PERF_COLS; c++) {
		h->map[c] = -1;
		for (size_t i = 0; i < n; i++)
			if (!strcmp(rec[i], rm_perf_header[c]))
				h->map[c] = (int)i;
	}
	for (size_t i = 0; i < n && h->n_cells < RM_HEADER_CELLS; i++)
		if (rm_config_cell_column(rec[i]) && rm_perf_col_index(rec[i]) < 0)
			h->cells[h->n_cells++] = (int)i;
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		if (h->map[required[i]] < 0) {
			rm_error_set(err, RM_ERR_INPUT,
				     "'%s' has no '%s' column: not a perf.csv of run_models or "
				     "madengine (its header starts with '%s')",
				     path, rm_perf_header[required[i]], n ? rec[0] : "");
			goto out;
		}
	}
	h->names = rec;
	rec = NULL;
	ret = 0;
out:
	rm_strv_free(rec);
	return ret;
}

int rm_result_config(const rm_result *r, const char *const *cell_names,
		     const char *const *cell_values, size_t n_cells, char **config, char **key)
{
	rm_config c = RM_CONFIG_INIT, id = RM_CONFIG_INIT;
	char k[RM_CONFIG_KEY_LEN + 1];

	*config = *key = NULL;
	if (r->col[RM_COL_CONFIG_KEY][0])
		return 0;
	for (size_t i = 0; i < n_cells; i++)
		if (cell_values[i] && cell_values[i][0])
			rm_config_set(&c, cell_names[i], cell_values[i]);
	rm_config_from_metric(r->col[RM_COL_METRIC], &c);
	if (!c.n)
		return 0;
	rm_config_set(&id, "model", r->col[RM_COL_MODEL]);
	rm_config_merge(&id, &c);
	rm_config_key(&id, k);
	*config = r->col[RM_COL_CONFIG][0] ? rm_xstrdup(r->col[RM_COL_CONFIG]) : rm_config_text(&c);
	*key = rm_xstrdup(k);
	rm_config_release(&c);
	rm_config_release(&id);
	return 1;
}

/* A row without a configuration key gets the one its MAD cell gives (rm_result_config); the
 * strings join the row's record, which owns them. */
static char **derive_config(rm_result *r, const struct header *h, char **rec, size_t *n)
{
	const char *names[RM_HEADER_CELLS], *values[RM_HEADER_CELLS];
	char *config, *key;
	size_t nrec = *n;

	for (size_t i = 0; i < h->n_cells; i++) {
		names[i] = h->names[h->cells[i]];
		values[i] = (size_t)h->cells[i] < nrec ? rec[h->cells[i]] : "";
	}
	if (rm_result_config(r, names, values, h->n_cells, &config, &key) <= 0)
		return rec;
	rec = rm_strv_push(rec, n, config);
	rec = rm_strv_push(rec, n, key);
	r->col[RM_COL_CONFIG] = rec[*n - 2];
	r->col[RM_COL_CONFIG_KEY] = rec[*n - 1];
	free(config);
	free(key);
	return rec;
}

/* A row as it is streamed: the record its strings are in comes with it, for keep_row. */
struct streamed {
	rm_result r; /* first: fn gets &r */
	char **rec;
};

/*
 * Run ids seen reused (issue 29): a run holds each row's key (model, repeat, Dockerfile,
 * metric, configuration, attempt: the database's; args, TunableOp, MAD's cells) once, so a key seen
 * twice under one run id is a later run that reused the id (a copied command line, a fixed
 * --run-id). Its rows from there on are read as a run of their own ("ID~2"), named in a warning,
 * instead of merging into the old one (n=2, a noise of 193 %, a drop passed). Bounded: the key
 * hashes of the RECENT_RUNS run ids seen last.
 */
#define RECENT_RUNS 16
struct run_gen {
	char *id;
	long gen;	/* 1: as written; 2, ...: reused */
	uint64_t *keys; /* hashes of this generation's model/repeat/dockerfile keys */
	size_t n, cap;
	unsigned long used; /* for the least recently used one to go */
};

struct reader {
	const char *path;
	const struct header *h;
	const int *map;
	long line; /* physical line of the record being read */
	struct run_gen runs[RECENT_RUNS];
	unsigned long tick;
	char gen_id[320];
};

static uint64_t key_hash(const char *const *parts, size_t n)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	for (size_t i = 0; i < n; i++) {
		for (const char *p = parts[i]; *p; p++)
			h = (h ^ (unsigned char)*p) * 1099511628211ULL;
		h = (h ^ 0x1f) * 1099511628211ULL;
	}
	return h;
}

static struct run_gen *run_gen_of(struct reader *rd, const char *id)
{
	struct run_gen *lru = &rd->runs[0];

	for (size_t i = 0; i < RECENT_RUNS; i++) {
		struct run_gen *g = &rd->runs[i];
		if (g->id && !strcmp(g->id, id)) {
			g->used = ++rd->tick;
			return g;
		}
		if (!g->id || g->used < lru->used)
			lru = g;
	}
	free(lru->id);
	free(lru->keys);
	memset(lru, 0, sizeof(*lru));
	lru->id = rm_xstrdup(id);
	lru->gen = 1;
	lru->used = ++rd->tick;
	return lru;
}

/* The run id the row is read under: its own, or "ID~N" once the id was reused. */
static const char *row_run_id(struct reader *rd, const rm_result *r, char *const *rec, size_t n)
{
	const char *id = r->col[RM_COL_RUN_ID];
	/* the database's key of a row within its run (rm/db.h; MAD's narrow cell columns as
	 * they are written, for the configuration they make), and what set a model's runs in
	 * one run apart before configurations had a key (the tag form's args, TunableOp) */
	const char *parts[8 + RM_HEADER_CELLS] = {
	    r->col[RM_COL_MODEL],     r->col[RM_COL_REPEAT],	r->col[RM_COL_DOCKERFILE],
	    r->col[RM_COL_METRIC],    r->col[RM_COL_ATTEMPT],	r->col[RM_COL_ARGS],
	    r->col[RM_COL_TUNABLEOP], r->col[RM_COL_CONFIG_KEY]};
	size_t np = 8;
	struct run_gen *g;
	uint64_t h;

	for (size_t i = 0; i < rd->h->n_cells; i++)
		parts[np++] = (size_t)rd->h->cells[i] < n ? rec[rd->h->cells[i]] : "";
	if (!id[0])
		return id;
	g = run_gen_of(rd, id);
	h = key_hash(parts, np);
	for (size_t i = 0; i < g->n; i++)
		if (g->keys[i] == h) {
			g->gen++;
			g->n = 0;
			rm_warn("'%s' line %ld: run id '%s' is used again (model '%s' repeat %s is "
				"in it "
				"twice): its rows from here on are read as another run, '%s~%ld'",
				rd->path, rd->line, id, r->col[RM_COL_MODEL],
				r->col[RM_COL_REPEAT][0] ? r->col[RM_COL_REPEAT] : "1", id, g->gen);
			break;
		}
	if (g->n == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 64;
		g->keys = rm_xrealloc(g->keys, g->cap * sizeof(*g->keys));
	}
	g->keys[g->n++] = h;
	if (g->gen == 1)
		return id;
	snprintf(rd->gen_id, sizeof(rd->gen_id), "%s~%ld", id, g->gen);
	return rd->gen_id;
}

static void reader_release(struct reader *rd)
{
	for (size_t i = 0; i < RECENT_RUNS; i++) {
		free(rd->runs[i].id);
		free(rd->runs[i].keys);
	}
}

/* The newlines a record held in its quoted fields: the physical lines it took, less one. */
static long record_lines(char *const *rec, size_t n)
{
	long k = 0;

	for (size_t i = 0; i < n; i++)
		for (const char *p = rec[i]; (p = strchr(p, '\n')); p++)
			k++;
	return k;
}

/* Whether a record is a row to hand on: blank lines, the header repeated (two files put
 * together) and rows whose field count is not the header's (a torn row) are not, the last
 * two said with their line. */
static int row_ok(struct reader *rd, char **rec, size_t n)
{
	const int *map = rd->map;

	if (n == 1 && !rec[0][0])
		return 0;
	if (map[RM_COL_MODEL] >= 0 && (size_t)map[RM_COL_MODEL] < n &&
	    !strcmp(rec[map[RM_COL_MODEL]], "model") && map[RM_COL_STATUS] >= 0 &&
	    (size_t)map[RM_COL_STATUS] < n && !strcmp(rec[map[RM_COL_STATUS]], "status")) {
		rm_warn("'%s' line %ld repeats the header (two files put together?): skipped",
			rd->path, rd->line);
		return 0;
	}
	if (n != rd->h->n_cols) {
		rm_warn(
		    "'%s' line %ld has %zu fields where the header has %zu: skipped (a torn row, "
		    "or a stray '\"'?)",
		    rd->path, rd->line, n, rd->h->n_cols);
		return 0;
	}
	return 1;
}

/* Hands one record to fn as a row (1: fn asked to stop). */
static int hand_on(struct reader *rd, char **rec, size_t n, const char *run_id, rm_result_fn fn,
		   void *ctx)
{
	struct streamed sr;
	rm_result *r = &sr.r;
	int rc;

	memset(&sr, 0, sizeof(sr));
	for (int c = 0; c < RM_PERF_COLS; c++)
		r->col[c] = rd->map[c] >= 0 && (size_t)rd->map[c] < n ? rec[rd->map[c]] : "";
	r->col[RM_COL_RUN_ID] = row_run_id(rd, r, rec, n);
	if (run_id && strcmp(r->col[RM_COL_RUN_ID], run_id)) {
		rm_strv_free(rec);
		return 0;
	}
	sr.rec = derive_config(r, rd->h, rec, &n);
	r->file = rd->path;
	r->line = rd->line;
	rm_result_numbers(r);
	rc = fn(ctx, r);
	rm_strv_free(sr.rec); /* NULL when keep_row kept the record */
	return rc != 0;
}

/*
 * What a stray '"' swallowed (a record with the wrong field count over several lines, or the
 * end of the file reached inside quotes): the record's first line is read again alone, a line
 * end closing the quote, and named; reading goes on normally after it, so the rows the quote
 * would have swallowed are read (a legit quoted newline later in the file still is one).
 * Returns 1 when fn asked to stop, 0, or -1 (err).
 */
static int reread_line(struct reader *rd, FILE *f, long start, long first_line, const char *run_id,
		       rm_result_fn fn, void *ctx, rm_error *err)
{
	char **rec = NULL;
	size_t n = 0;
	int open = 0, rc;

	rm_warn("'%s' line %ld: a '\"' opens a field that is not closed on its line (it would "
		"swallow the lines after it): read as one line",
		rd->path, first_line);
	rd->line = first_line;
	if (fseek(f, start, SEEK_SET) != 0 ||
	    (rc = rm_csv_read_line_record(f, &rec, &n, &open, err)) == 0)
		return 0; /* a pipe: the record is skipped, and said so */
	if (rc < 0)
		return -1;
	if (!row_ok(rd, rec, n)) {
		rm_strv_free(rec);
		return 0;
	}
	return hand_on(rd, rec, n, run_id, fn, ctx);
}

int rm_results_each_file(FILE *f, const char *path, const char *run_id, rm_result_fn fn, void *ctx,
			 rm_error *err)
{
	char **rec = NULL;
	size_t n = 0;
	int rc, ret = -1, open = 0;
	struct reader rd;
	struct header h;
	long start;

	memset(&rd, 0, sizeof(rd));
	memset(&h, 0, sizeof(h));
	rd.path = path;
	rd.h = &h;
	rd.map = h.map;
	rd.line = 1;
	if (read_header(f, path, &h, err) < 0)
		goto out;
	while ((start = ftell(f)), (rc = rm_csv_read_record_open(f, &rec, &n, &open, err)) == 1) {
		long first = rd.line + 1, extra = record_lines(rec, n);
		rd.line = first + extra;
		if ((open || (extra && n != h.n_cols)) && start >= 0) {
			rm_strv_free(rec);
			rec = NULL;
			if ((rc = reread_line(&rd, f, start, first, run_id, fn, ctx, err)) != 0)
				break;
			rc = 1;
			continue;
		}
		if (!row_ok(&rd, rec, n)) {
			rm_strv_free(rec);
			rec = NULL;
			continue;
		}
		rc = hand_on(&rd, rec, n, run_id, fn, ctx);
		rec = NULL;
		if (rc)
			break;
	}
	if (rc < 0) {
		rm_error_wrap(err, "'%s' record %ld", path, rd.line + 1);
		goto out;
	}
	ret = 0;
out:
	reader_release(&rd);
	rm_strv_free(h.names);
	rm_strv_free(rec);
	return ret;
}

int rm_results_each(const char *path, const char *run_id, rm_result_fn fn, void *ctx, rm_error *err)
{
	FILE *f = fopen(path, "r");
	int ret;

	if (!f)
		return rm_error_sys(err, RM_ERR_IO, errno, "cannot open '%s'", path);
	ret = rm_results_each_file(f, path, run_id, fn, ctx, err);
	fclose(f);
	return ret;
}

/* rm_results_read's collector: keeps each row, its strings handed over. Only ever called by
 * rm_results_each_file, whose rows are struct streamed. */
struct keep_ctx {
	rm_results *res;
	const char *file;
};

static int keep_row(void *ctx, rm_result *row)
{
	struct keep_ctx *k = ctx;
	struct streamed *sr = (struct streamed *)row;
	rm_result *r = new_row(k->res, sr->rec);
	*r = *row;
	r->file = k->file;
	sr->rec = NULL;
	mark_retried(k->res);
	return 0;
}

int rm_results_read(rm_results *res, const char *path, const char *run_id, rm_error *err)
{
	struct keep_ctx k = {res, add_file(res, path)};
	return rm_results_each(path, run_id, keep_row, &k, err);
}

void rm_results_release(rm_results *res)
{
	for (size_t i = 0; res->store && i < res->n; i++)
		rm_strv_free(res->store->rec[i]);
	if (res->store)
		free(res->store->rec);
	free(res->store);
	free(res->rows);
	rm_strv_free(res->files);
	memset(res, 0, sizeof(*res));
}

const char *rm_results_last_run(const rm_results *res)
{
	for (size_t i = res->n; i-- > 0;)
		if (res->rows[i].col[RM_COL_RUN_ID][0])
			return res->rows[i].col[RM_COL_RUN_ID];
	return NULL;
}

/* Metrics */

static int metric_key_cmp(const rm_metric_row *a, const rm_metric_row *b)
{
	int c;
	if ((c = strcmp(a->run_id, b->run_id)) || (c = strcmp(a->model, b->model)) ||
	    (c = strcmp(a->metric, b->metric)) || (c = strcmp(a->aggregate, b->aggregate)))
		return c;
	return (a->step > b->step) - (a->step < b->step);
}

static const rm_metric_row *sort_base;
static int by_key_then_order(const void *pa, const void *pb)
{
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	int c = metric_key_cmp(&sort_base[a], &sort_base[b]);
	return c ? c : (a > b) - (a < b);
}

/* Rows of one key that appear k times in a run are its repeats, in file order. */
static void number_repeats(rm_metrics *m, size_t from)
{
	size_t n = m->n - from, *idx = rm_xcalloc(n ? n : 1, sizeof(*idx));
	for (size_t i = 0; i < n; i++)
		idx[i] = from + i;
	sort_base = m->rows;
	qsort(idx, n, sizeof(*idx), by_key_then_order);
	for (size_t i = 0; i < n; i++) {
		rm_metric_row *r = &m->rows[idx[i]];
		r->repeat = i && !metric_key_cmp(&m->rows[idx[i - 1]], r)
				? m->rows[idx[i - 1]].repeat + 1
				: 1;
	}
	free(idx);
}

/* A new row that owns rec. */
static rm_metric_row *new_metric(rm_metrics *m, char **rec)
{
	rm_metrics_store *st = m->store;

	if (!st)
		st = m->store = rm_xcalloc(1, sizeof(*st));
	if (m->n == st->cap) {
		st->cap = st->cap ? st->cap * 2 : 64;
		m->rows = rm_xrealloc(m->rows, st->cap * sizeof(*m->rows));
		st->rec = rm_xrealloc(st->rec, st->cap * sizeof(*st->rec));
	}
	st->rec[m->n] = rec;
	return &m->rows[m->n++];
}

static int header_is(char **rec, size_t n, const char *const *want, size_t nw)
{
	if (n != nw)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (strcmp(rec[i], want[i]))
			return 0;
	return 1;
}

static int metrics_read(rm_metrics *m, const char *path, const char *run_id, const char *metric,
			int quiet_foreign, rm_error *err)
{
	FILE *f = fopen(path, "r");
	char **rec = NULL;
	size_t n = 0, from = m->n;
	long line = 1, step;
	int rc, ret = -1;

	if (!f)
		return rm_error_sys(err, RM_ERR_IO, errno, "cannot open '%s'", path);
	rc = rm_csv_read_record(f, &rec, &n, err);
	if (rc <= 0 || !header_is(rec, n, rm_metric_header, 8)) {
		if (rc >= 0 && quiet_foreign)
			ret = 0;
		else if (rc >= 0)
			rm_error_set(err, RM_ERR_INPUT,
				     "'%s' does not start with perf_<model>.csv's header "
				     "(timestamp,run_id,model,metric,value,unit,step,aggregate)",
				     path);
		else
			rm_error_wrap(err, "reading '%s'", path);
		goto out;
	}
	rm_strv_free(rec);
	rec = NULL;
	while ((rc = rm_csv_read_record(f, &rec, &n, err)) == 1) {
		line++;
		if (n != 8 || (run_id && strcmp(rec[1], run_id)) ||
		    (metric && strcmp(rec[3], metric))) {
			rm_strv_free(rec);
			rec = NULL;
			continue;
		}
		rm_metric_row *r = new_metric(m, rec);
		r->timestamp = rec[0];
		r->run_id = rec[1];
		r->model = rec[2];
		r->metric = rec[3];
		r->value = num_or_nan(rec[4]);
		r->unit = rec[5];
		r->step = rm_parse_long(rec[6], 0, 0x7fffffffL, &step) == 0 ? step : -1;
		r->aggregate = rec[7];
		r->repeat = 1;
		rec = NULL;
	}
	if (rc < 0) {
		rm_error_wrap(err, "'%s' record %ld", path, line + 1);
		goto out;
	}
	number_repeats(m, from);
	ret = 0;
out:
	rm_strv_free(rec);
	fclose(f);
	return ret;
}

int rm_metrics_read(rm_metrics *m, const char *path, const char *run_id, rm_error *err)
{
	return metrics_read(m, path, run_id, NULL, 0, err);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int rm_metrics_read_dir(rm_metrics *m, const char *dir, const char *run_id, rm_error *err)
{
	return rm_metrics_read_dir_named(m, dir, run_id, NULL, err);
}

/* The perf_<model>.csv files of dir, sorted (the same order on every host). */
static char **metric_files(const char *dir, size_t *n, rm_error *err, int *rc)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;

	*n = 0;
	*rc = 0;
	if (!d) {
		if (errno != ENOENT)
			*rc = rm_error_sys(err, RM_ERR_IO, errno, "cannot read folder '%s'", dir);
		return NULL;
	}
	while ((e = readdir(d)))
		if (rm_starts_with(e->d_name, "perf_") && rm_ends_with(e->d_name, ".csv") &&
		    strcmp(e->d_name, "perf_summary.csv"))
			names = rm_strv_push(names, n, e->d_name);
	closedir(d);
	if (names)
		qsort(names, *n, sizeof(*names), by_name);
	return names;
}

/* One perf_<model>.csv's rows of one metric into the history, a row at a time. */
static int metric_file_each(rm_baseline *b, const char *path, const char *metric, rm_error *err)
{
	FILE *f = fopen(path, "r");
	char **rec = NULL;
	size_t n = 0;
	long line = 1;
	int rc, ret = -1;
	rm_result r;

	if (!f)
		return rm_error_sys(err, RM_ERR_IO, errno, "cannot open '%s'", path);
	rc = rm_csv_read_record(f, &rec, &n, err);
	if (rc <= 0 || !header_is(rec, n, rm_metric_header, 8)) {
		ret = rc >= 0 ? 0 : rm_error_wrap(err, "reading '%s'", path); /* another shape */
		goto out;
	}
	rm_strv_free(rec);
	rec = NULL;
	while ((rc = rm_csv_read_record(f, &rec, &n, err)) == 1) {
		line++;
		if (n == 8 && !strcmp(rec[3], metric)) {
			memset(&r, 0, sizeof(r));
			for (int c = 0; c < RM_PERF_COLS; c++)
				r.col[c] = "";
			r.col[RM_COL_TIMESTAMP] = rec[0];
			r.col[RM_COL_RUN_ID] = rec[1];
			r.col[RM_COL_MODEL] = rec[2];
			r.col[RM_COL_METRIC] = rec[3];
			r.col[RM_COL_PERFORMANCE] = rec[4];
			r.col[RM_COL_STATUS] = rm_status_name(RM_STATUS_SUCCESS);
			r.file = path;
			r.line = line;
			rm_result_numbers(&r);
			rm_history_add(b, &r);
		}
		rm_strv_free(rec);
		rec = NULL;
	}
	ret = rc < 0 ? rm_error_wrap(err, "'%s' record %ld", path, line + 1) : 0;
out:
	rm_strv_free(rec);
	fclose(f);
	return ret;
}

int rm_history_read_metric_dir(rm_baseline *b, const char *dir, const char *metric, rm_error *err)
{
	size_t n;
	int ret;
	char **names = metric_files(dir, &n, err, &ret);

	for (size_t i = 0; i < n && ret == 0; i++) {
		char *p = rm_xasprintf("%s/%s", dir, names[i]);
		ret = metric_file_each(b, p, metric, err);
		free(p);
	}
	rm_strv_free(names);
	return ret;
}

int rm_metrics_read_dir_named(rm_metrics *m, const char *dir, const char *run_id,
			      const char *metric, rm_error *err)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0;
	int ret = 0;

	if (!d)
		return errno == ENOENT
			   ? 0
			   : rm_error_sys(err, RM_ERR_IO, errno, "cannot read folder '%s'", dir);
	while ((e = readdir(d)))
		if (rm_starts_with(e->d_name, "perf_") && rm_ends_with(e->d_name, ".csv") &&
		    strcmp(e->d_name, "perf_summary.csv"))
			names = rm_strv_push(names, &n, e->d_name);
	closedir(d);
	if (names)
		qsort(names, n, sizeof(*names), by_name); /* same order on every host */
	for (size_t i = 0; i < n && ret == 0; i++) {
		char *p = rm_xasprintf("%s/%s", dir, names[i]);
		ret = metrics_read(m, p, run_id, metric, 1, err);
		free(p);
	}
	rm_strv_free(names);
	return ret;
}

void rm_metrics_release(rm_metrics *m)
{
	for (size_t i = 0; m->store && i < m->n; i++)
		rm_strv_free(m->store->rec[i]);
	if (m->store)
		free(m->store->rec);
	free(m->store);
	free(m->rows);
	memset(m, 0, sizeof(*m));
}
