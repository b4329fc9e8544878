/*
 * Baselines: the values each (model, metric, Dockerfile, GPU architecture, machine) had in
 * its latest earlier run. Samples are collected oldest first, then sorted once; lookups are
 * binary searches (no hash table needed for a read-once index).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rm/results.h"
#include "rm/util.h"

enum { K_MODEL, K_METRIC, K_DOCKERFILE, K_ARCH, K_MACHINE, K_RUN, K_N };

struct sample {
	char *k[K_N];
	double value;
	size_t order;
};

struct rm_baseline {
	struct sample *s;
	size_t n, cap;
	rm_baseline_entry *e; /* one per (model, metric, dockerfile, arch, machine) */
	size_t ne;
	size_t *last_order; /* per entry: the order of its run's last sample */
	int sealed;
};

rm_baseline *rm_baseline_new(void)
{
	return rm_xcalloc(1, sizeof(rm_baseline));
}

static const char *nz(const char *s)
{
	return s ? s : "";
}

void rm_baseline_add(rm_baseline *b, const char *model, const char *metric, const char *docker_file,
		     const char *arch, const char *machine, const char *run_id, double value)
{
	if (!isfinite(value))
		return;
	if (b->n == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 256;
		b->s = rm_xrealloc(b->s, b->cap * sizeof(*b->s));
	}
	struct sample *s = &b->s[b->n];
	s->k[K_MODEL] = rm_xstrdup(nz(model));
	s->k[K_METRIC] = rm_xstrdup(nz(metric));
	s->k[K_DOCKERFILE] = rm_xstrdup(nz(docker_file));
	s->k[K_ARCH] = rm_xstrdup(nz(arch));
	s->k[K_MACHINE] = rm_xstrdup(nz(machine));
	s->k[K_RUN] = rm_xstrdup(nz(run_id));
	s->value = value;
	s->order = b->n++;
}

static int cmp_keys(const struct sample *a, const struct sample *b, int upto)
{
	for (int i = 0; i < upto; i++) {
		int c = strcmp(a->k[i], b->k[i]);
		if (c)
			return c;
	}
	return 0;
}

static int by_key_order(const void *pa, const void *pb)
{
	const struct sample *a = pa, *b = pb;
	int c = cmp_keys(a, b, K_RUN);
	return c ? c : (a->order > b->order) - (a->order < b->order);
}

void rm_baseline_seal(rm_baseline *b)
{
	if (b->sealed)
		return;
	b->sealed = 1;
	if (!b->n)
		return;
	qsort(b->s, b->n, sizeof(*b->s), by_key_order);
	b->e = rm_xcalloc(b->n, sizeof(*b->e));
	b->last_order = rm_xcalloc(b->n, sizeof(*b->last_order));
	for (size_t i = 0; i < b->n;) {
		size_t j = i, last;
		while (j < b->n && !cmp_keys(&b->s[i], &b->s[j], K_RUN))
			j++;
		/* The newest sample's run is the baseline run; take all of its samples (its
		 * repeats), wherever they sit in the group. */
		last = j - 1;
		rm_baseline_entry *e = &b->e[b->ne];
		const struct sample *ls = &b->s[last];
		e->model = ls->k[K_MODEL];
		e->metric = ls->k[K_METRIC];
		e->docker_file = ls->k[K_DOCKERFILE];
		e->arch = ls->k[K_ARCH];
		e->machine = ls->k[K_MACHINE];
		e->run_id = ls->k[K_RUN];
		e->values = rm_xcalloc(j - i, sizeof(double));
		for (size_t k = i; k < j; k++)
			if (!strcmp(b->s[k].k[K_RUN], ls->k[K_RUN]))
				e->values[e->n++] = b->s[k].value;
		b->last_order[b->ne] = ls->order;
		b->ne++;
		i = j;
	}
}

rm_baseline *rm_baseline_from_results(const rm_results *rows, const char *exclude_run_id)
{
	rm_baseline *b = rm_baseline_new();
	for (size_t i = 0; i < rows->n; i++) {
		const rm_result *r = &rows->rows[i];
		if (strcmp(r->col[RM_COL_STATUS], "SUCCESS") || !isfinite(r->performance))
			continue;
		if (exclude_run_id && !strcmp(r->col[RM_COL_RUN_ID], exclude_run_id))
			continue;
		rm_baseline_add(b, r->col[RM_COL_MODEL], r->col[RM_COL_METRIC],
				r->col[RM_COL_DOCKERFILE], r->col[RM_COL_ARCH],
				r->col[RM_COL_MACHINE], r->col[RM_COL_RUN_ID], r->performance);
	}
	rm_baseline_seal(b);
	return b;
}

const rm_baseline_entry *rm_baseline_find(const rm_baseline *b, const char *model,
					  const char *metric, const char *docker_file,
					  const char *arch, const char *machine)
{
	struct sample key = {{(char *)nz(model), (char *)nz(metric), (char *)nz(docker_file),
			      (char *)nz(arch), (char *)"", (char *)""},
			     0,
			     0};
	size_t lo = 0, hi, best = (size_t)-1;

	if (!b || !b->ne)
		return NULL;
	hi = b->ne;
	/* Lower bound of the (model, metric, dockerfile, arch) group: entries are sorted by the
	 * same fields, then machine. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const rm_baseline_entry *e = &b->e[mid];
		struct sample es = {{(char *)e->model, (char *)e->metric, (char *)e->docker_file,
				     (char *)e->arch, (char *)"", (char *)""},
				    0,
				    0};
		if (cmp_keys(&es, &key, K_MACHINE) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < b->ne; i++) {
		const rm_baseline_entry *e = &b->e[i];
		if (strcmp(e->model, key.k[K_MODEL]) || strcmp(e->metric, key.k[K_METRIC]) ||
		    strcmp(e->docker_file, key.k[K_DOCKERFILE]) || strcmp(e->arch, key.k[K_ARCH]))
			break;
		if (machine && !strcmp(e->machine, machine))
			return e;
		if (best == (size_t)-1 || b->last_order[i] > b->last_order[best])
			best = i;
	}
	return best == (size_t)-1 ? NULL : &b->e[best];
}

size_t rm_baseline_size(const rm_baseline *b)
{
	return b ? b->ne : 0;
}

int rm_baseline_change(const rm_baseline *b, const char *model, const char *metric,
		       const char *docker_file, const char *arch, const char *machine, double value,
		       char *buf, size_t size)
{
	const rm_baseline_entry *e;
	double mean = 0;

	if (size)
		buf[0] = '\0';
	if (!isfinite(value) ||
	    !(e = rm_baseline_find(b, model, metric, docker_file, arch, machine)))
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
	for (size_t i = 0; i < b->n; i++)
		for (int k = 0; k < K_N; k++)
			free(b->s[i].k[k]);
	for (size_t i = 0; i < b->ne; i++)
		free(b->e[i].values);
	free(b->s);
	free(b->e);
	free(b->last_order);
	free(b);
}
