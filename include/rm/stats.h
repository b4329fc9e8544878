/*
 * Summary statistics over repeated runs (--repeat N), and the MLPerf Training score rule.
 */
#ifndef RM_STATS_H
#define RM_STATS_H

#include <stddef.h>

#include "rm/error.h"

typedef struct rm_stats {
	size_t n;
	double mean;
	double median; /* mean of the two middle values for even n */
	double stddev; /* sample standard deviation (n - 1); 0 when n == 1 */
	double min;
	double max;
} rm_stats;

/* Non-finite values are skipped (n counts the finite ones). Returns -1 when none is left. */
int rm_stats_compute(const double *v, size_t n, rm_stats *out);

/*
 * MLPerf Training's rule for a score from several runs of time to train: drop the fastest
 * and the slowest, average the rest. MLPerf asks for 10 runs (some benchmarks 5+); this
 * needs at least 3 finite values and fills err otherwise. *used receives how many values
 * were averaged.
 */
int rm_score_mlperf(const double *v, size_t n, double *score, size_t *used, rm_error *err);

#endif
