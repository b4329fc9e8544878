#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rm/util.h"
#include "rm/report.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y ? 1 : 0;
}

/* The finite values of v, sorted ascending, in a new array (caller frees); *m the count. */
static double *finite_sorted(const double *v, size_t n, size_t *m)
{
	double *s = rm_xmalloc((n ? n : 1) * sizeof(*s));
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (isfinite(v[i]))
			s[k++] = v[i];
	qsort(s, k, sizeof(*s), cmp_double);
	*m = k;
	return s;
}

static double mean_of(const double *s, size_t n)
{
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += s[i];
	return sum / (double)n;
}

int rm_stats_compute(const double *v, size_t n, rm_stats *out)
{
	size_t m;
	double *s = finite_sorted(v, n, &m);

	if (m == 0) {
		free(s);
		return -1;
	}
	out->n = m;
	out->min = s[0];
	out->max = s[m - 1];
	out->mean = mean_of(s, m);
	out->median = m % 2 ? s[m / 2] : (s[m / 2 - 1] + s[m / 2]) / 2;
	/* Two passes (deviations from the mean) rather than sum of squares: no cancellation. */
	double ss = 0;
	for (size_t i = 0; i < m; i++)
		ss += (s[i] - out->mean) * (s[i] - out->mean);
	out->stddev = m > 1 ? sqrt(ss / (double)(m - 1)) : 0;
	free(s);
	return 0;
}

int rm_score_mlperf(const double *v, size_t n, double *score, size_t *used, rm_error *err)
{
	size_t m;
	double *s = finite_sorted(v, n, &m);

	if (m < 3) {
		free(s);
		return rm_error_set(err, RM_ERR_INPUT,
				    "the MLPerf score needs at least 3 results (10 recommended), "
				    "got %zu; run with --repeat 10",
				    m);
	}
	*score = mean_of(s + 1, m - 2);
	if (used)
		*used = m - 2;
	free(s);
	return 0;
}
