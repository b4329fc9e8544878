#include <math.h>
#include <string.h>

#include "check.h"
#include "rm/util.h"
#include "rm/report.h"

static int near(double a, double b)
{
	return fabs(a - b) < 1e-9 * (fabs(b) > 1 ? fabs(b) : 1);
}

TEST(stats)
{
	rm_stats s;
	const double four[] = {4, 1, 3, 2};
	CHECK(rm_stats_compute(four, 4, &s) == 0);
	CHECK(s.n == 4);
	CHECK(near(s.mean, 2.5));
	CHECK(near(s.median, 2.5));
	CHECK(near(s.stddev, 1.2909944487358056));
	CHECK(s.min == 1 && s.max == 4);

	const double odd[] = {10, 2, 38, 23, 38};
	CHECK(rm_stats_compute(odd, 5, &s) == 0);
	CHECK(near(s.mean, 22.2));
	CHECK(near(s.median, 23));
	CHECK(near(s.stddev, 16.25423021862309));
	CHECK(s.min == 2 && s.max == 38);

	/* non-finite values are skipped, not counted */
	const double gaps[] = {NAN, 1, INFINITY, 3, -INFINITY};
	CHECK(rm_stats_compute(gaps, 5, &s) == 0);
	CHECK(s.n == 2);
	CHECK(near(s.mean, 2) && near(s.median, 2));
	CHECK(near(s.stddev, 1.4142135623730951));

	const double one[] = {42.5};
	CHECK(rm_stats_compute(one, 1, &s) == 0);
	CHECK(s.n == 1 && s.mean == 42.5 && s.median == 42.5 && s.stddev == 0);
	CHECK(s.min == 42.5 && s.max == 42.5);

	/* large values close together: the two-pass deviation keeps its precision */
	const double close[] = {1e9 + 1, 1e9 + 2, 1e9 + 3};
	CHECK(rm_stats_compute(close, 3, &s) == 0);
	CHECK(near(s.stddev, 1));

	const double none[] = {NAN, INFINITY};
	memset(&s, 0x55, sizeof(s));
	CHECK(rm_stats_compute(none, 2, &s) == -1);
	CHECK(rm_stats_compute(NULL, 0, &s) == -1);
}

TEST(mlperf)
{
	rm_error err = RM_ERROR_INIT;
	double score = 0;
	size_t used = 0;

	/* 10 runs: the fastest (95) and the slowest (140) are dropped */
	const double ten[] = {120, 95, 110, 105, 140, 100, 115, 108, 112, 102};
	CHECK(rm_score_mlperf(ten, 10, &score, &used, &err) == 0);
	CHECK(used == 8);
	CHECK(near(score, (120 + 110 + 105 + 100 + 115 + 108 + 112 + 102) / 8.0));

	const double three[] = {30, 10, 20};
	CHECK(rm_score_mlperf(three, 3, &score, &used, &err) == 0);
	CHECK(used == 1 && near(score, 20));

	/* a failed run (nan) does not count towards the minimum */
	const double failed[] = {30, NAN, 20};
	score = -1;
	CHECK(rm_score_mlperf(failed, 3, &score, &used, &err) == -1);
	CHECK(err.kind == RM_ERR_INPUT);
	CHECK(strstr(err.msg, "at least 3") != NULL);
	CHECK(strstr(err.msg, "got 2") != NULL);
	CHECK(score == -1);

	const double two[] = {1, 2};
	CHECK(rm_score_mlperf(two, 2, &score, &used, NULL) == -1);
	CHECK(rm_score_mlperf(NULL, 0, &score, NULL, &err) == -1);
}
