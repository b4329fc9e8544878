/* The history detector on planted series: what must fail the gate, with the right change
 * point, and what must not. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rm/detect.h"
#include "rm/direction.h"

/* Deterministic normal noise (splitmix64, Box-Muller): the same series on every host. */
static unsigned long long seed;
static double gauss(void)
{
	double u[2];
	for (int i = 0; i < 2; i++) {
		unsigned long long x = (seed += 0x9e3779b97f4a7c15ULL);
		x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
		x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
		x ^= x >> 31;
		u[i] = ((double)(x >> 11) + 0.5) / 9007199254740992.0;
	}
	return sqrt(-2 * log(u[0])) * cos(2 * M_PI * u[1]);
}

/* n points around level with noise sd (percent of 100), one value each. */
static void fill(rm_point *p, size_t from, size_t to, double level, double sd)
{
	for (size_t i = from; i < to; i++) {
		p[i].mean = level + sd * gauss();
		p[i].sd = 0;
		p[i].n = 1;
	}
}

static rm_detect judge(const rm_point *p, size_t n, rm_direction dir, double thr)
{
	rm_detect_opts o = RM_DETECT_OPTS_INIT;
	rm_detect d;
	o.direction = dir;
	o.threshold_pct = thr;
	rm_detect_run(p, n, &o, &d);
	return d;
}

TEST(fail)
{
	rm_point p[64];
	rm_detect d;

	/* A step six nights ago that persists: judged against the level before it. */
	seed = 1;
	fill(p, 0, 24, 100, 1);
	fill(p, 24, 30, 90, 1);
	d = judge(p, 30, RM_DIR_HIGHER, 5);
	CHECK(d.verdict == RM_VERDICT_REGRESSION && d.since == 24);
	CHECK(fabs(d.change_pct + 10) < 1.5 && d.noise_from == RM_NOISE_HISTORY);
	CHECK(d.n_cps >= 1 && d.cps[d.n_cps - 1] == 24 && d.ref_first <= 1);

	/* A slow drift: 3 % worse each night for ten nights, each within a 5 % gate. */
	seed = 2;
	fill(p, 0, 20, 100, 0.5);
	for (size_t i = 20; i < 30; i++)
		p[i].mean = 100 * pow(0.97, (double)(i - 19)) + 0.5 * gauss();
	d = judge(p, 30, RM_DIR_HIGHER, 5);
	CHECK(d.verdict == RM_VERDICT_REGRESSION && d.change_pct < -15);
	CHECK(d.since >= 20 && d.since <= 23);
	/* The ten nights, each 3 % slower, and nothing before: 26 % lost. Steps fit a
	 * drift coarsely: the last five runs' level against the first five's. */
	for (size_t i = 0; i < 10; i++)
		p[i].mean = 100 * pow(0.97, (double)i);
	d = judge(p, 10, RM_DIR_HIGHER, 5);
	CHECK(d.verdict == RM_VERDICT_REGRESSION && d.change_pct < -10 && d.since <= 5);

	/* A fresh step in the last run. */
	seed = 3;
	fill(p, 0, 29, 100, 1);
	p[29].mean = 85;
	d = judge(p, 30, RM_DIR_HIGHER, 5);
	CHECK(d.verdict == RM_VERDICT_REGRESSION && d.since == 29 && d.level_n == 1);

	/* A lower-is-better metric that rose. */
	seed = 4;
	fill(p, 0, 20, 50, 0.5);
	fill(p, 20, 25, 60, 0.5);
	d = judge(p, 25, RM_DIR_LOWER, 5);
	CHECK(d.verdict == RM_VERDICT_REGRESSION && d.since == 20 && d.change_pct > 15);
	/* ... and the same numbers for a higher-is-better one are an improvement. */
	d = judge(p, 25, RM_DIR_HIGHER, 5);
	CHECK(d.verdict == RM_VERDICT_BETTER && d.since == 20);

	/* Two runs, a large drop: the plain threshold. */
	p[0] = (rm_point){100, 0, 1};
	p[1] = (rm_point){60, 0, 1};
	d = judge(p, 2, RM_DIR_HIGHER, 5);
	CHECK(d.verdict == RM_VERDICT_REGRESSION && d.since == 1 && isnan(d.band_pct));
	/* With two runs before it, the next night at the same level: the step persists. */
	p[0] = (rm_point){100, 0, 1};
	p[1] = (rm_point){100.5, 0, 1};
	p[2] = (rm_point){60, 0, 1};
	p[3] = (rm_point){60.5, 0, 1};
	d = judge(p, 4, RM_DIR_HIGHER, 5);
	CHECK(d.verdict == RM_VERDICT_REGRESSION && d.since == 2);
	CHECK(d.noise_from == RM_NOISE_THRESHOLD && d.ref_n == 2 && d.level_n == 2);
	/* With one: that run alone may have been an outlier, and is no reference. */
	d = judge(p + 1, 3, RM_DIR_HIGHER, 5);
	CHECK(d.verdict == RM_VERDICT_SAME);
}

TEST(pass)
{
	rm_point p[64];
	rm_detect d;
	int fails = 0;

	/* A stable series whose noise (5 %) is larger than the threshold (3 %): no alarm over
	 * twenty seeds, and it says it is unstable. */
	for (unsigned s = 1; s <= 20; s++) {
		seed = s * 7919;
		fill(p, 0, 30, 100, 5);
		d = judge(p, 30, RM_DIR_HIGHER, 3);
		fails += d.verdict == RM_VERDICT_REGRESSION;
		CHECK(d.unstable);
	}
	CHECK(fails == 0);
	/* A quiet one is not unstable. */
	seed = 5;
	fill(p, 0, 30, 100, 0.3);
	d = judge(p, 30, RM_DIR_HIGHER, 5);
	CHECK(!d.unstable && d.verdict == RM_VERDICT_SAME && d.since == RM_DETECT_NONE);

	/* A past one-night outlier, in the middle and at the window's start. */
	seed = 6;
	fill(p, 0, 40, 100, 1);
	p[25].mean = 50;
	d = judge(p, 40, RM_DIR_HIGHER, 5);
	CHECK(d.verdict == RM_VERDICT_SAME && rm_detect_is_outlier(&d, 25) && d.n_outliers >= 1);
	p[25].mean = 150; /* a lucky night is no new level either */
	d = judge(p, 40, RM_DIR_HIGHER, 5);
	CHECK(d.verdict == RM_VERDICT_SAME && rm_detect_is_outlier(&d, 25));
	p[25].mean = 100;
	p[10].mean = 150; /* the window's first run: the runs before it are its neighbours */
	d = judge(p, 40, RM_DIR_HIGHER, 5);
	CHECK(d.first == 10 && d.verdict == RM_VERDICT_SAME && rm_detect_is_outlier(&d, 10));
	/* The run judged is never an outlier: a fresh drop fails at once. */
	p[39].mean = 50;
	d = judge(p, 40, RM_DIR_HIGHER, 5);
	CHECK(d.verdict == RM_VERDICT_REGRESSION && d.since == 39);

	/* An improvement is reported and never fails. */
	seed = 7;
	fill(p, 0, 20, 100, 1);
	fill(p, 20, 26, 120, 1);
	d = judge(p, 26, RM_DIR_HIGHER, 5);
	CHECK(d.verdict == RM_VERDICT_BETTER && d.since == 20 && d.change_pct > 15);
	/* ... and becomes the level to keep: losing it again is a regression. */
	fill(p, 26, 30, 100, 1);
	d = judge(p, 30, RM_DIR_HIGHER, 5);
	CHECK(d.verdict == RM_VERDICT_REGRESSION && d.since == 26 && fabs(d.ref - 120) < 2);

	/* A step that recovered: same. */
	seed = 8;
	fill(p, 0, 15, 100, 1);
	fill(p, 15, 20, 80, 1);
	fill(p, 20, 30, 100, 1);
	d = judge(p, 30, RM_DIR_HIGHER, 5);
	CHECK(d.verdict == RM_VERDICT_SAME && d.n_cps == 2);

	/* A step older than the window is the level: nothing to compare it with. */
	seed = 9;
	fill(p, 0, 10, 100, 1);
	fill(p, 10, 45, 80, 1);
	d = judge(p, 45, RM_DIR_HIGHER, 5);
	CHECK(d.verdict == RM_VERDICT_SAME && d.first == 15 && d.n == 30);

	/* Within the threshold: same, whatever the significance. */
	seed = 10;
	fill(p, 0, 20, 100, 0.1);
	fill(p, 20, 25, 97, 0.1);
	d = judge(p, 25, RM_DIR_HIGHER, 5);
	CHECK(d.verdict == RM_VERDICT_SAME);
	/* ... and with the threshold at 0, a significant 3 % step is a regression. */
	d = judge(p, 25, RM_DIR_HIGHER, 0);
	CHECK(d.verdict == RM_VERDICT_REGRESSION && d.since == 20);

	/* Direction unknown: the change is measured, not judged. */
	d = judge(p, 25, RM_DIR_UNKNOWN, 0);
	CHECK(d.verdict == RM_VERDICT_UNKNOWN && fabs(d.change_pct + 3) < 0.5);

	/* A level of 1e9 with a noise of 1: the same as a level of 100 (no cancellation). */
	seed = 11;
	fill(p, 0, 24, 1e9, 1);
	fill(p, 24, 30, 1e9 - 8, 1);
	d = judge(p, 30, RM_DIR_HIGHER, 0);
	CHECK(d.verdict == RM_VERDICT_REGRESSION && d.since == 24 && d.n_cps == 1);
	/* Sums that overflow: not judged, no crash. */
	p[28].mean = INFINITY;
	d = judge(p, 30, RM_DIR_HIGHER, 0);
	CHECK(d.verdict == RM_VERDICT_NONE);
}

/* A 10 % step at 2 % noise after 29 stable nights, judged every night for 28 nights (the
 * window then still holds two runs from before it): once caught, it stays caught. Before the
 * noise was refitted down as well as up, and regressions held, 9 of 200 such series dropped
 * out on some later night (tools/detect-sim.sh has the figures). */
TEST(persist)
{
	rm_point p[64];
	int caught = 0, dropped = 0;

	for (unsigned s = 1; s <= 300; s++) {
		int first = 0, lost = 0;
		seed = 1000003ULL * s;
		fill(p, 0, 29, 100, 2);
		fill(p, 29, 57, 90, 2);
		for (size_t d = 1; d <= 28; d++) {
			int reg =
			    judge(p, 29 + d, RM_DIR_HIGHER, 5).verdict == RM_VERDICT_REGRESSION;
			if (reg && !first)
				first = (int)d;
			lost |= first && !reg;
		}
		caught += first != 0;
		dropped += lost;
	}
	CHECK(caught == 300 && dropped == 0);
}

/* The cases that dropped out, by hand. */
TEST(hold)
{
	rm_point p[64];
	rm_detect d;

	/* A night whose noise lands high, alone: it joins the regressed level before it. */
	seed = 21;
	fill(p, 0, 29, 100, 1);
	fill(p, 29, 34, 90, 1);
	p[34] = (rm_point){98.6, 0, 1};
	d = judge(p, 35, RM_DIR_HIGHER, 5);
	CHECK(d.verdict == RM_VERDICT_REGRESSION && d.held == RM_HELD_RUN && d.since == 29);
	CHECK(d.level_n == 6 && d.change_pct < -7);
	/* A second such run is a level: the regression is over. */
	p[35] = (rm_point){99.4, 0, 1};
	d = judge(p, 36, RM_DIR_HIGHER, 5);
	CHECK(d.verdict == RM_VERDICT_SAME && d.held == RM_HELD_NONE);

	/* Two nights that land high make a level of their own, under the threshold: the
	 * regression found the nights before holds, from where it started. */
	seed = 22;
	fill(p, 0, 29, 100, 1);
	fill(p, 29, 36, 90, 1);
	p[36] = (rm_point){95.8, 0, 1};
	p[37] = (rm_point){95.9, 0, 1};
	d = judge(p, 38, RM_DIR_HIGHER, 5);
	CHECK(d.verdict == RM_VERDICT_REGRESSION && d.held == RM_HELD_NIGHTS && d.since == 29);
	/* ... not when the run judged is back within half the threshold. */
	p[37] = (rm_point){99.9, 0, 1};
	d = judge(p, 38, RM_DIR_HIGHER, 5);
	CHECK(d.verdict != RM_VERDICT_REGRESSION);
	/* Nor from a night too young to measure its noise. */
	for (size_t i = 0; i < 4; i++)
		p[i] = (rm_point){i < 2 ? 100.0 : 90.0, 0, 1};
	p[4] = (rm_point){96, 0, 1};
	d = judge(p, 5, RM_DIR_HIGHER, 5);
	CHECK(d.held != RM_HELD_NIGHTS);
}

/* "unstable" only where the threshold is out of reach; the one-run detectable change for
 * every series measured. */
TEST(unstable)
{
	rm_point p[64];
	int at1 = 0, at2 = 0, at5 = 0;

	for (unsigned s = 1; s <= 100; s++) {
		rm_detect d;
		seed = 7777ULL * s;
		fill(p, 0, 30, 100, 1);
		d = judge(p, 30, RM_DIR_HIGHER, 5);
		at1 += d.unstable;
		CHECK(d.detectable_pct > 2 && d.detectable_pct < 8);
		fill(p, 0, 30, 100, 2);
		at2 += judge(p, 30, RM_DIR_HIGHER, 5).unstable;
		fill(p, 0, 30, 100, 5);
		at5 += judge(p, 30, RM_DIR_HIGHER, 5).unstable;
	}
	CHECK(at1 == 0 && at2 <= 2 && at5 >= 90);
}

TEST(repeats)
{
	rm_point p[8];
	rm_detect d;

	/* Two runs with repeats: Welch's band, Student's t (dof 4 here). */
	p[0] = (rm_point){100, 0.1, 3};
	p[1] = (rm_point){93, 0.1, 3};
	d = judge(p, 2, RM_DIR_HIGHER, 5);
	CHECK(d.verdict == RM_VERDICT_REGRESSION && d.z_crit > 2.7 && d.z_crit < 2.8);
	CHECK(d.band_pct < 1 && d.noise_from == RM_NOISE_REPEATS);
	p[0].sd = p[1].sd = 10;
	d = judge(p, 2, RM_DIR_HIGHER, 5);
	CHECK(d.verdict == RM_VERDICT_NOISE && d.band_pct > 7);
	/* Three runs: too few to measure the noise from the history; the repeats decide. */
	p[0] = (rm_point){100, 15, 3};
	p[1] = (rm_point){101, 15, 3};
	p[2] = (rm_point){88, 15, 3};
	d = judge(p, 3, RM_DIR_HIGHER, 5);
	CHECK(d.verdict == RM_VERDICT_NOISE && d.noise_from == RM_NOISE_REPEATS);
	p[0].sd = p[1].sd = p[2].sd = 0.2;
	d = judge(p, 3, RM_DIR_HIGHER, 5);
	CHECK(d.verdict == RM_VERDICT_REGRESSION);
}

TEST(table)
{
	/* The critical value falls with the window and is nominal under the history minimum. */
	CHECK(rm_detect_z(RM_DETECT_MIN_HISTORY - 1) == 4.0);
	CHECK(rm_detect_z(5) > rm_detect_z(10) && rm_detect_z(10) > rm_detect_z(30));
	CHECK(rm_detect_z(30) > 3.5 && rm_detect_z(30) < 4.5 && rm_detect_z(1000) > 3.5);
	CHECK(!strcmp(rm_noise_from_name(RM_NOISE_HISTORY), "history"));
}
