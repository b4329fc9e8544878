/*
 * The history: per series a bounded list of runs, fed one row at a time (rm/history.h).
 * Series, groups of series and runs are found through hash tables: jansson's object, a
 * string-keyed hash table we already link, rather than one written here. Keys are the
 * fields joined by the unit separator (0x1f); a field holding that character could make
 * two series share a key, which we accept for a control character no tool writes in CSV.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rm/detect.h"
#include "rm/history.h"
#include "rm/results.h"
#include "rm/util.h"

enum { K_MODEL, K_METRIC, K_DOCKERFILE, K_ARCH, K_NGPUS, K_MACHINE, K_CONFIG_KEY, K_N };

struct accepted {
	char *k[K_N]; /* "" matches any value */
	char *run, *start;
};

/* A series: what rm_history_series_at shows (h), and what the history keeps for itself. */
struct series {
	rm_hseries h; /* first: rm_history_find hands out &h */
	size_t cap;   /* of h.p */
	size_t next;  /* the next series of its group, or RM_DETECT_NONE */
	double *last; /* values of the latest valued run (rm_baseline_find) */
	size_t n_last, cap_last, last_run;
	char *keys;   /* the storage behind h's key strings */
	char *config; /* h.config: the first row's `config` cell */
};

struct rm_baseline {
	rm_history_opts o;
	size_t keep; /* points a series keeps */
	struct series *s;
	size_t ns, cap_s;
	json_t *by_key;	  /* series key -> index */
	json_t *by_group; /* model, metric, Dockerfile, arch -> first series; ->next links */
	rm_run_info *runs;
	size_t n_runs, cap_runs;
	json_t *by_run;
	size_t last_run; /* the run of the previous row: rows of a run come together */
	size_t before;	 /* the index of o.before_run once seen, else RM_DETECT_NONE */
	struct accepted *acc;
	size_t n_acc;
	rm_results latest; /* keep_latest: the rows of the run that appeared last */
	size_t latest_run;
	rm_baseline_entry *e; /* after rm_baseline_seal: one per series with a valued run */
	size_t ne;
	size_t *e_series;
	rm_buf key;
};

static const char *nz(const char *s)
{
	return s ? s : "";
}

rm_baseline *rm_history_new(const rm_history_opts *o)
{
	rm_baseline *b = rm_xcalloc(1, sizeof(*b));

	if (o)
		b->o = *o;
	if (!b->o.window)
		b->o.window = RM_DETECT_WINDOW;
	if (b->o.window > RM_DETECT_MAX_WINDOW)
		b->o.window = RM_DETECT_MAX_WINDOW;
	b->o.before_run = b->o.before_run ? rm_xstrdup(b->o.before_run) : NULL;
	b->keep = RM_DETECT_KEEP(b->o.window);
	if (b->o.plot && b->o.plot < RM_HISTORY_PLOT_MIN(b->o.window))
		b->o.plot = RM_HISTORY_PLOT_MIN(b->o.window);
	b->by_key = json_object();
	b->by_group = json_object();
	b->by_run = json_object();
	b->last_run = b->before = b->latest_run = RM_DETECT_NONE;
	b->latest = (rm_results)RM_RESULTS_INIT;
	rm_buf_init(&b->key, (size_t)8 << 20);
	return b;
}

rm_baseline *rm_baseline_new(void)
{
	return rm_history_new(NULL);
}

static json_t *map_get(json_t *m, const char *k, size_t n)
{
	return json_object_getn(m, k, n);
}

static void map_set(json_t *m, const char *k, size_t n, size_t v)
{
	json_object_setn_new_nocheck(m, k, n, json_integer((json_int_t)v));
}

/* The run of a row; RM_DETECT_NONE when the row is to be left out (rm_history_opts). */
static size_t run_of(rm_baseline *b, const rm_result *r)
{
	const char *id = r->col[RM_COL_RUN_ID], *ts = r->col[RM_COL_TIMESTAMP];
	const char *commit = r->col[RM_COL_GIT_COMMIT];
	size_t k = b->last_run;
	json_t *v;

	if (k == RM_DETECT_NONE || strcmp(b->runs[k].id, id)) {
		v = map_get(b->by_run, id, strlen(id));
		if (v) {
			k = (size_t)json_integer_value(v);
		} else {
			/* A run first seen after the one judged is not its history. */
			if (b->before != RM_DETECT_NONE)
				return RM_DETECT_NONE;
			if (b->n_runs == b->cap_runs) {
				b->cap_runs = b->cap_runs ? b->cap_runs * 2 : 64;
				b->runs = rm_xrealloc(b->runs, b->cap_runs * sizeof(*b->runs));
			}
			k = b->n_runs++;
			b->runs[k].id = rm_xstrdup(id);
			b->runs[k].start = rm_xstrdup(ts);
			b->runs[k].commit = rm_xstrdup(commit);
			map_set(b->by_run, id, strlen(id), k);
			if (b->o.before_run && !strcmp(id, b->o.before_run))
				b->before = k;
		}
	}
	b->last_run = k;
	if (k == b->before)
		return RM_DETECT_NONE;
	if (ts[0] && (!b->runs[k].start[0] || strcmp(ts, b->runs[k].start) < 0)) {
		free((char *)b->runs[k].start);
		b->runs[k].start = rm_xstrdup(ts);
	}
	if (!b->runs[k].commit[0] && commit[0]) {
		free((char *)b->runs[k].commit);
		b->runs[k].commit = rm_xstrdup(commit);
	}
	return k;
}

static void key_of(rm_buf *k, const char *const *f, int upto)
{
	rm_buf_reset(k);
	for (int i = 0; i < upto; i++) {
		if (i)
			rm_buf_addch(k, '\x1f');
		rm_buf_addstr(k, f[i]);
	}
}

static size_t series_of(rm_baseline *b, const char *const *f, const char *config)
{
	json_t *v;
	struct series *ss;
	rm_hseries *s;
	size_t len[K_N], total = 0, i;
	char *p;

	key_of(&b->key, f, K_N);
	v = map_get(b->by_key, rm_buf_str(&b->key), b->key.len);
	if (v)
		return (size_t)json_integer_value(v);
	if (b->ns == b->cap_s) {
		b->cap_s = b->cap_s ? b->cap_s * 2 : 64;
		b->s = rm_xrealloc(b->s, b->cap_s * sizeof(*b->s));
	}
	i = b->ns++;
	map_set(b->by_key, rm_buf_str(&b->key), b->key.len, i);
	ss = &b->s[i];
	memset(ss, 0, sizeof(*ss));
	s = &ss->h;
	for (int k = 0; k < K_N; k++)
		total += (len[k] = strlen(f[k])) + 1;
	p = ss->keys = rm_xmalloc(total);
	for (int k = 0; k < K_N; k++) {
		memcpy(p, f[k], len[k] + 1);
		p += len[k] + 1;
	}
	p = ss->keys;
	s->model = p;
	s->metric = p += len[K_MODEL] + 1;
	s->docker_file = p += len[K_METRIC] + 1;
	s->arch = p += len[K_DOCKERFILE] + 1;
	s->n_gpus = p += len[K_ARCH] + 1;
	s->machine = p += len[K_NGPUS] + 1;
	s->config_key = p + len[K_MACHINE] + 1;
	ss->last_run = RM_DETECT_NONE;
	s->config = ss->config = rm_xstrdup(config);
	/* The group (every machine and GPU count) for rm_baseline_find and fallbacks. */
	key_of(&b->key, f, K_ARCH + 1);
	v = map_get(b->by_group, rm_buf_str(&b->key), b->key.len);
	ss->next = v ? (size_t)json_integer_value(v) : RM_DETECT_NONE;
	map_set(b->by_group, rm_buf_str(&b->key), b->key.len, i);
	return i;
}

/* Merges q into p (Chan et al.'s pairwise update of mean and m2). */
static void merge(rm_hpoint *p, const rm_hpoint *q)
{
	unsigned n = p->n + q->n;

	if (q->n) {
		double delta = q->mean - p->mean;
		p->m2 += q->m2 + delta * delta * (double)p->n * (double)q->n / (double)n;
		p->mean += delta * (double)q->n / (double)n;
	}
	p->n = n;
	p->failed += q->failed;
	if (q->run > p->run)
		p->run = q->run;
	if (q->run_first < p->run_first)
		p->run_first = q->run_first;
}

/* Room for one more point: drop the oldest (gate), or merge older ones pairwise (plot). */
static void make_room(rm_baseline *b, struct series *ss)
{
	rm_hseries *s = &ss->h;
	size_t cap = b->o.plot ? b->o.plot : b->keep;

	if (s->n < cap) {
		if (s->n == ss->cap) {
			ss->cap = ss->cap ? ss->cap * 2 : 4;
			if (ss->cap > cap)
				ss->cap = cap;
			s->p = rm_xrealloc(s->p, ss->cap * sizeof(*s->p));
		}
		return;
	}
	if (!b->o.plot) {
		memmove(s->p, s->p + 1, (s->n - 1) * sizeof(*s->p));
		s->n--;
		return;
	}
	/* The runs the detector reads stay exact; the older ones halve. */
	size_t old = s->n - b->keep, w = 0;
	for (size_t i = 0; i < old; i += 2) {
		s->p[w] = s->p[i];
		if (i + 1 < old)
			merge(&s->p[w], &s->p[i + 1]);
		w++;
	}
	memmove(s->p + w, s->p + old, b->keep * sizeof(*s->p));
	s->n = w + b->keep;
}

/* Where run k goes in s (kept in run order: late rows of an earlier run find its point). */
static size_t slot(const rm_hseries *s, size_t k)
{
	size_t at = s->n;

	while (at > 0 && s->p[at - 1].run > k && s->p[at - 1].run_first == s->p[at - 1].run)
		at--;
	return at;
}

/* The point of run k in s, made when new; NULL when k is older than everything kept. */
static rm_hpoint *point_of(rm_baseline *b, struct series *ss, size_t k)
{
	rm_hseries *s = &ss->h;
	size_t at = slot(s, k);

	if (at > 0 && s->p[at - 1].run == k)
		return &s->p[at - 1];
	if (at == 0 && s->n && s->n >= (b->o.plot ? b->o.plot : b->keep))
		return NULL;
	make_room(b, ss);
	at = slot(s, k);
	memmove(s->p + at + 1, s->p + at, (s->n - at) * sizeof(*s->p));
	s->n++;
	memset(&s->p[at], 0, sizeof(s->p[at]));
	s->p[at].run = s->p[at].run_first = k;
	s->n_runs++;
	return &s->p[at];
}

void rm_history_add(rm_baseline *b, const rm_result *r)
{
	const char *f[K_N] = {r->col[RM_COL_MODEL],	 r->col[RM_COL_METRIC],
			      r->col[RM_COL_DOCKERFILE], r->col[RM_COL_ARCH],
			      r->col[RM_COL_NGPUS],	 r->col[RM_COL_MACHINE],
			      r->col[RM_COL_CONFIG_KEY]};
	const char *st = r->col[RM_COL_STATUS];
	int ok = rm_status_of(st) == RM_STATUS_SUCCESS && isfinite(r->performance);
	size_t k, si;
	struct series *s;
	rm_hpoint *p;

	if ((k = run_of(b, r)) == RM_DETECT_NONE)
		return;
	if (b->o.keep_latest && k + 1 == b->n_runs) {
		if (k != b->latest_run) {
			rm_results_release(&b->latest);
			b->latest_run = k;
		}
		rm_results_add(&b->latest, rm_perf_header, r->col, RM_PERF_COLS, r->file, r->line);
	}
	if (!ok && rm_status_of(st) != RM_STATUS_FAILURE)
		return; /* SKIPPED rows say nothing about performance */
	si = series_of(b, f, r->col[RM_COL_CONFIG]);
	s = &b->s[si];
	if (!(p = point_of(b, s, k)))
		return;
	if (!ok) {
		if (!p->failed++)
			s->h.n_failed_runs++;
		return;
	}
	/* Welford */
	p->n++;
	double delta = r->performance - p->mean;
	p->mean += delta / (double)p->n;
	p->m2 += delta * (r->performance - p->mean);
	/* The latest valued run's values, for rm_baseline_find. */
	if (s->last_run == RM_DETECT_NONE || k > s->last_run) {
		s->last_run = k;
		s->n_last = 0;
	}
	if (k == s->last_run) {
		if (s->n_last == s->cap_last) {
			s->cap_last = s->cap_last ? s->cap_last * 2 : 4;
			s->last = rm_xrealloc(s->last, s->cap_last * sizeof(*s->last));
		}
		s->last[s->n_last++] = r->performance;
	}
}

static int history_feed(void *ctx, rm_result *row)
{
	rm_history_add(ctx, row);
	return 0;
}

int rm_history_read_csv(rm_baseline *b, const char *path, rm_error *err)
{
	return rm_results_each(path, NULL, history_feed, b, err);
}

size_t rm_history_n_series(const rm_baseline *b)
{
	return b ? b->ns : 0;
}

const rm_hseries *rm_history_series_at(const rm_baseline *b, size_t i)
{
	return &b->s[i].h;
}

size_t rm_history_n_runs(const rm_baseline *b)
{
	return b ? b->n_runs : 0;
}

const rm_run_info *rm_history_run(const rm_baseline *b, size_t i)
{
	return &b->runs[i];
}

const char *rm_history_latest(const rm_baseline *b, const rm_results **rows, int *complete)
{
	size_t best = RM_DETECT_NONE;

	for (size_t k = 0; b && k < b->n_runs; k++)
		if (best == RM_DETECT_NONE || strcmp(b->runs[k].start, b->runs[best].start) >= 0)
			best = k;
	if (rows)
		*rows = &b->latest;
	if (complete)
		*complete = best != RM_DETECT_NONE && best == b->latest_run;
	return best == RM_DETECT_NONE ? NULL : b->runs[best].id;
}

size_t rm_history_run_index(const rm_baseline *b, const char *id)
{
	json_t *v = b ? map_get(b->by_run, id, strlen(id)) : NULL;
	return v ? (size_t)json_integer_value(v) : RM_DETECT_NONE;
}

/* The first series of a group, or RM_DETECT_NONE. */
static size_t group_head(const rm_baseline *b, const char *model, const char *metric,
			 const char *docker_file, const char *arch)
{
	const char *f[4] = {nz(model), nz(metric), nz(docker_file), nz(arch)};
	rm_buf k = RM_BUF_INIT((size_t)8 << 20);
	json_t *v;

	key_of(&k, f, 4);
	v = map_get(b->by_group, rm_buf_str(&k), k.len);
	rm_buf_release(&k);
	return v ? (size_t)json_integer_value(v) : RM_DETECT_NONE;
}

/* The run of the latest valued point of s, for picking among machines. */
static size_t newest(const struct series *s)
{
	return s->last_run;
}

const rm_hseries *rm_history_find(const rm_baseline *b, const char *model, const char *metric,
				  const char *docker_file, const char *arch, const char *n_gpus,
				  const char *machine, const char *config_key)
{
	const struct series *best = NULL;

	if (!b)
		return NULL;
	for (size_t i = group_head(b, model, metric, docker_file, arch); i != RM_DETECT_NONE;
	     i = b->s[i].next) {
		const struct series *s = &b->s[i];
		if (strcmp(s->h.n_gpus, nz(n_gpus)) || strcmp(s->h.config_key, nz(config_key)) ||
		    newest(s) == RM_DETECT_NONE)
			continue;
		if (machine && !strcmp(s->h.machine, machine))
			return &s->h;
		if (!best || newest(s) > newest(best))
			best = s;
	}
	return best ? &best->h : NULL;
}

rm_point rm_hpoint_value(const rm_hpoint *p)
{
	rm_point v = {p->mean, p->n >= 2 ? sqrt(p->m2 / (double)(p->n - 1)) : 0, p->n};
	return v;
}

void rm_history_accept(rm_baseline *b, const char *model, const char *metric,
		       const char *docker_file, const char *arch, const char *n_gpus,
		       const char *machine, const char *config_key, const char *since_run,
		       const char *since_start)
{
	struct accepted *a;
	const char *f[K_N] = {model, metric, docker_file, arch, n_gpus, machine, config_key};

	b->acc = rm_xrealloc(b->acc, (b->n_acc + 1) * sizeof(*b->acc));
	a = &b->acc[b->n_acc++];
	for (int k = 0; k < K_N; k++)
		a->k[k] = rm_xstrdup(nz(f[k]));
	a->run = rm_xstrdup(nz(since_run));
	a->start = rm_xstrdup(nz(since_start));
}

const char *rm_history_accepted(const rm_baseline *b, const rm_hseries *s, const char **start)
{
	const char *f[K_N] = {s->model,	 s->metric,  s->docker_file, s->arch,
			      s->n_gpus, s->machine, s->config_key};
	const struct accepted *best = NULL;

	for (size_t i = 0; b && i < b->n_acc; i++) {
		const struct accepted *a = &b->acc[i];
		int k;
		for (k = 0; k < K_N; k++)
			if (a->k[k][0] && strcmp(a->k[k], f[k]))
				break;
		if (k < K_N)
			continue;
		/* The latest acceptance wins; equal starts: the one recorded last. */
		if (!best || strcmp(a->start, best->start) >= 0)
			best = a;
	}
	if (start)
		*start = best ? best->start : NULL;
	return best ? best->run : NULL;
}

size_t rm_history_from(const rm_baseline *b, const rm_hseries *s)
{
	const char *start, *run = rm_history_accepted(b, s, &start);
	size_t k;

	if (!run)
		return 0;
	/* The accepted run itself when the series has it (runs can share a start second), else
	 * the first run that started from its start on. */
	k = rm_history_run_index(b, run);
	for (size_t i = 0; k != RM_DETECT_NONE && i < s->n; i++)
		if (s->p[i].run_first <= k && k <= s->p[i].run)
			return i;
	for (size_t i = 0; i < s->n; i++) {
		const rm_run_info *ri = &b->runs[s->p[i].run_first];
		if (start[0] && ri->start[0] && strcmp(ri->start, start) >= 0)
			return i;
	}
	return start[0] ? s->n : 0;
}

/* The earlier API */

void rm_baseline_add(rm_baseline *b, const char *model, const char *metric, const char *docker_file,
		     const char *arch, const char *machine, const char *run_id, double value)
{
	rm_result r;
	char num[64];

	if (!isfinite(value))
		return;
	memset(&r, 0, sizeof(r));
	for (int c = 0; c < RM_PERF_COLS; c++)
		r.col[c] = "";
	snprintf(num, sizeof(num), "%.17g", value);
	r.col[RM_COL_MODEL] = nz(model);
	r.col[RM_COL_METRIC] = nz(metric);
	r.col[RM_COL_DOCKERFILE] = nz(docker_file);
	r.col[RM_COL_ARCH] = nz(arch);
	r.col[RM_COL_MACHINE] = nz(machine);
	r.col[RM_COL_RUN_ID] = nz(run_id);
	r.col[RM_COL_STATUS] = rm_status_name(RM_STATUS_SUCCESS);
	r.col[RM_COL_PERFORMANCE] = num;
	r.performance = value;
	rm_history_add(b, &r);
}

void rm_baseline_seal(rm_baseline *b)
{
	free(b->e);
	free(b->e_series);
	b->e = rm_xcalloc(b->ns ? b->ns : 1, sizeof(*b->e));
	b->e_series = rm_xcalloc(b->ns ? b->ns : 1, sizeof(*b->e_series));
	b->ne = 0;
	for (size_t i = 0; i < b->ns; i++) {
		const struct series *s = &b->s[i];
		rm_baseline_entry *e;
		if (s->last_run == RM_DETECT_NONE)
			continue;
		e = &b->e[b->ne];
		e->model = s->h.model;
		e->metric = s->h.metric;
		e->docker_file = s->h.docker_file;
		e->arch = s->h.arch;
		e->machine = s->h.machine;
		e->run_id = b->runs[s->last_run].id;
		e->values = s->last;
		e->n = s->n_last;
		b->e_series[i] = b->ne++;
	}
}

rm_baseline *rm_baseline_from_results(const rm_results *rows, const char *exclude_run_id)
{
	rm_history_opts o = RM_HISTORY_OPTS_INIT;
	rm_baseline *b;

	o.before_run = exclude_run_id;
	b = rm_history_new(&o);

	for (size_t i = 0; i < rows->n; i++)
		rm_history_add(b, &rows->rows[i]);
	rm_baseline_seal(b);
	return b;
}

const rm_baseline_entry *rm_baseline_find(const rm_baseline *b, const char *model,
					  const char *metric, const char *docker_file,
					  const char *arch, const char *machine,
					  const char *config_key)
{
	size_t same = RM_DETECT_NONE, any = RM_DETECT_NONE;

	if (!b || !b->e)
		return NULL;
	for (size_t i = group_head(b, model, metric, docker_file, arch); i != RM_DETECT_NONE;
	     i = b->s[i].next) {
		const struct series *s = &b->s[i];
		if (s->last_run == RM_DETECT_NONE || strcmp(s->h.config_key, nz(config_key)))
			continue;
		if (machine && !strcmp(s->h.machine, machine) &&
		    (same == RM_DETECT_NONE || s->last_run > b->s[same].last_run))
			same = i;
		if (any == RM_DETECT_NONE || s->last_run > b->s[any].last_run)
			any = i;
	}
	if (same != RM_DETECT_NONE)
		any = same;
	return any == RM_DETECT_NONE ? NULL : &b->e[b->e_series[any]];
}

size_t rm_baseline_size(const rm_baseline *b)
{
	return b ? b->ne : 0;
}

int rm_baseline_change(const rm_baseline *b, const char *model, const char *metric,
		       const char *docker_file, const char *arch, const char *machine,
		       const char *config_key, double value, char *buf, size_t size)
{
	const rm_baseline_entry *e;
	double mean = 0;

	if (size)
		buf[0] = '\0';
	if (!isfinite(value) ||
	    !(e = rm_baseline_find(b, model, metric, docker_file, arch, machine, config_key)))
		return 1;
	for (size_t i = 0; i < e->n; i++)
		mean += e->values[i];
	mean /= (double)e->n;
	if (mean == 0)
		return 1;
	snprintf(buf, size, "%+.2f", (value - mean) / fabs(mean) * 100.0);
	return 0;
}

void rm_baseline_free(rm_baseline *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->ns; i++) {
		free(b->s[i].h.p);
		free(b->s[i].last);
		free(b->s[i].keys);
		free(b->s[i].config);
	}
	for (size_t i = 0; i < b->n_runs; i++) {
		free((char *)b->runs[i].id);
		free((char *)b->runs[i].start);
		free((char *)b->runs[i].commit);
	}
	for (size_t i = 0; i < b->n_acc; i++) {
		for (int k = 0; k < K_N; k++)
			free(b->acc[i].k[k]);
		free(b->acc[i].run);
		free(b->acc[i].start);
	}
	free(b->acc);
	rm_results_release(&b->latest);
	free(b->runs);
	free(b->s);
	free(b->e);
	free(b->e_series);
	json_decref(b->by_key);
	json_decref(b->by_group);
	json_decref(b->by_run);
	rm_buf_release(&b->key);
	free((char *)b->o.before_run);
	free(b);
}
