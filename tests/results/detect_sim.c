/*
 * Simulations of the history detector (rm_detect_run), for docs/nightly.md's figures and
 * for the calibration of its critical values. Driven by tools/detect-sim.sh; not run by
 * ctest. Independent normal noise around 100, one value per run (no repeats), a
 * higher-is-better metric; every series is judged as the nightly gate judges it.
 *
 *   detect_sim calibrate TARGET TRIALS      z per window size for a false-alarm rate
 *   detect_sim far TRIALS THRESHOLD NOISE... false alarms on stable series
 *   detect_sim power TRIALS THRESHOLD NOISE... persisting steps of 1, 2 and 4 noise
 *   detect_sim speed MODELS NIGHTS          the detector alone over MODELS x NIGHTS
 *   detect_sim issue STABLE STEPS NIGHTS    issue 31's figures (false alarms, "unstable",
 *                                           persisting steps that drop out)
 *   detect_sim gate MODELS CONFIGS NIGHTS   the gate over a history of that many rows:
 *                                           time and peak memory
 *   detect_sim expand SUITE                 a suite loaded (its sweeps checked and counted)
 *                                           and every point expanded into its parameters
 *                                           and name, timed
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/resource.h>

#include "rm/detect.h"
#include "rm/direction.h"
#include "rm/gate.h"
#include "rm/history.h"
#include "rm/results.h"
#include "rm/suite.h"
#include "rm/config.h"
#include "rm/util.h"

static unsigned long long state;

/* splitmix64: a fixed sequence for a given seed, on every host. */
static double uniform(void)
{
	unsigned long long x = (state += 0x9e3779b97f4a7c15ULL);
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return ((double)(x >> 11) + 0.5) / 9007199254740992.0;
}

static double gauss(void)
{
	double u = uniform(), v = uniform();
	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

static void stable(rm_point *p, size_t n, double noise)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (rm_point){100 + noise * gauss(), 0, 1};
}

/* The gate's verdict on p[n - 1]; window 0: the default (30 runs). */
static rm_verdict judge_w(const rm_point *p, size_t n, double thr, double z, size_t window)
{
	rm_detect_opts o = RM_DETECT_OPTS_INIT;
	rm_detect d;
	o.direction = RM_DIR_HIGHER;
	o.threshold_pct = thr;
	o.window = window;
	o.z = z;
	rm_detect_run(p, n, &o, &d);
	return d.verdict;
}

static rm_verdict judge(const rm_point *p, size_t n, double thr, double z)
{
	return judge_w(p, n, thr, z, 0);
}

/* Share of stable series of n runs whose last run is judged a regression, the window
 * holding all n. */
static double false_alarms(size_t n, double thr, double noise, double z, long trials)
{
	rm_point p[RM_DETECT_MAX_WINDOW];
	long fa = 0;

	state = 42;
	for (long t = 0; t < trials; t++) {
		stable(p, n, noise);
		fa += judge_w(p, n, thr, z, n) == RM_VERDICT_REGRESSION;
	}
	return (double)fa / (double)trials;
}

static long arg_long(const char *s, long min, long max)
{
	long v;
	if (rm_parse_long(s, min, max, &v) < 0) {
		fprintf(stderr, "detect_sim: '%s' is not a number in %ld..%ld\n", s, min, max);
		exit(2);
	}
	return v;
}

static double arg_double(const char *s)
{
	double v;
	if (rm_parse_double(s, &v) < 0) {
		fprintf(stderr, "detect_sim: '%s' is not a number\n", s);
		exit(2);
	}
	return v;
}

/* The z giving `target` false alarms at threshold 0, by bisection, per window size. */
static void calibrate(double target, long trials)
{
	static const size_t sizes[] = {5, 6, 8, 10, 15, 20, 30, 60, 100, 200};

	printf("/* calibrated: %.2f %% false alarms, %ld series per size */\n", target * 100,
	       trials);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		double lo = 2, hi = 30;
		for (int it = 0; it < 16; it++) {
			double mid = (lo + hi) / 2;
			if (false_alarms(sizes[k], 0, 1, mid, trials) > target)
				lo = mid;
			else
				hi = mid;
		}
		printf("{%zu, %.2f},\n", sizes[k], hi);
		fflush(stdout);
	}
}

/*
 * False alarms: the last run of 1,000-ish stable series judged with windows of 5, 10 and
 * 30 runs; and over 90 nights of one series judged every night from the second on (the
 * share of nights that fail, and of series that fail at least once).
 */
static void far(long trials, double thr, const double *noise, size_t nn)
{
	rm_point p[90];

	printf("| noise | last run, 5 runs | 10 runs | 30 runs | nights of 90 that fail (2 "
	       "runs / 3-4 runs / 5+ runs) | series failing at least once in 90 nights |\n"
	       "|---:|---:|---:|---:|---:|---:|\n");
	for (size_t k = 0; k < nn; k++) {
		long f2 = 0, f34 = 0, f5 = 0, n2 = 0, n34 = 0, n5 = 0, once = 0;
		printf("| %.1f %% | %.2f %% | %.2f %% | %.2f %% ", noise[k],
		       100 * false_alarms(5, thr, noise[k], 0, trials),
		       100 * false_alarms(10, thr, noise[k], 0, trials),
		       100 * false_alarms(30, thr, noise[k], 0, trials));
		state = 7;
		for (long t = 0; t < trials; t++) {
			int any = 0;
			stable(p, 90, noise[k]);
			for (size_t n = 2; n <= 90; n++) {
				int fa = judge(p, n, thr, 0) == RM_VERDICT_REGRESSION;
				any |= fa;
				if (n == 2) {
					f2 += fa;
					n2++;
				} else if (n <= 4) {
					f34 += fa;
					n34++;
				} else {
					f5 += fa;
					n5++;
				}
			}
			once += any;
		}
		printf("| %.1f %% / %.1f %% / %.2f %% | %.1f %% |\n",
		       100.0 * (double)f2 / (double)n2, 100.0 * (double)f34 / (double)n34,
		       100.0 * (double)f5 / (double)n5, 100.0 * (double)once / (double)trials);
	}
}

/*
 * Power and delay: 29 stable runs, then a persisting step of k noise in the bad direction,
 * judged every night for ten nights with the default window. Detected by night d: the
 * share of series whose gate failed on some night up to d; delay: the mean first night
 * among those detected within ten.
 */
static void power(long trials, double thr, const double *noise, size_t nn)
{
	static const double steps[] = {1, 2, 4};
	enum { H = 29, D = 10 };
	rm_point p[H + D];

	printf(
	    "| noise | step (noise) | step | first night | by night 3 | by night 5 | by night 10 | "
	    "mean delay (nights) | still failing on night 10 |\n"
	    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (size_t k = 0; k < nn; k++)
		for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
			long det[D + 1] = {0}, ndet = 0, last = 0;
			double delay = 0;
			state = 11;
			for (long t = 0; t < trials; t++) {
				int first = 0;
				stable(p, H + D, noise[k]);
				for (size_t i = H; i < H + D; i++)
					p[i].mean -= steps[s] * noise[k];
				for (int d = 1; d <= D; d++) {
					rm_verdict v = judge(p, H + (size_t)d, thr, 0);
					if (v == RM_VERDICT_REGRESSION && !first)
						first = d;
					if (d == D)
						last += v == RM_VERDICT_REGRESSION;
				}
				if (first) {
					for (int d = first; d <= D; d++)
						det[d]++;
					delay += first;
					ndet++;
				}
			}
			printf("| %.1f %% | %.0f x | %.1f %% | %.1f %% | %.1f %% | %.1f %% | %.1f "
			       "%% | ",
			       noise[k], steps[s], steps[s] * noise[k],
			       100.0 * (double)det[1] / (double)trials,
			       100.0 * (double)det[3] / (double)trials,
			       100.0 * (double)det[5] / (double)trials,
			       100.0 * (double)det[10] / (double)trials);
			if (ndet)
				printf("%.1f", delay / (double)ndet);
			else
				printf("-");
			printf(" | %.1f %% |\n", 100.0 * (double)last / (double)trials);
		}
}

/*
 * Issue 31's figures: 300 stable series at each of 1, 2 and 5 % noise (30 nights, the last
 * judged: false alarms and the "unstable" label), and 200 series at 2 % noise with a
 * persisting 10 % step after 29 stable nights, judged every night for `nights` nights:
 * caught, and caught then dropping out on a later night (a step must stay reported).
 */
static void issue(long per_level, long steps, long nights)
{
	static const double levels[] = {1, 2, 5};
	rm_point p[RM_DETECT_MAX_WINDOW + 64];
	long fa_total = 0, unst_total = 0;

	printf("| noise | stable series | false alarms | labelled unstable "
	       "|\n|---:|---:|---:|---:|\n");
	for (size_t k = 0; k < 3; k++) {
		long fa = 0, unst = 0;
		state = 31 + k;
		for (long t = 0; t < per_level; t++) {
			rm_detect_opts o = RM_DETECT_OPTS_INIT;
			rm_detect d;
			stable(p, 30, levels[k]);
			o.direction = RM_DIR_HIGHER;
			o.threshold_pct = 5;
			rm_detect_run(p, 30, &o, &d);
			fa += d.verdict == RM_VERDICT_REGRESSION;
			unst += d.unstable != 0;
		}
		fa_total += fa;
		unst_total += unst;
		printf("| %.0f %% | %ld | %ld | %ld |\n", levels[k], per_level, fa, unst);
	}
	printf("| all | %ld | %ld (%.2f %%) | %ld |\n\n", 3 * per_level, fa_total,
	       100.0 * (double)fa_total / (double)(3 * per_level), unst_total);

	long caught = 0, dropped = 0, drop_nights = 0;
	state = 77;
	for (long t = 0; t < steps; t++) {
		int first = 0, lost = 0;
		stable(p, 29 + (size_t)nights, 2);
		for (long i = 29; i < 29 + nights; i++)
			p[i].mean -= 10;
		for (long d = 1; d <= nights; d++) {
			int reg = judge(p, 29 + (size_t)d, 5, 0) == RM_VERDICT_REGRESSION;
			if (reg && !first)
				first = (int)d;
			else if (first && !reg) {
				lost = 1;
				drop_nights++;
			}
		}
		caught += first != 0;
		dropped += lost;
	}
	printf("persisting 10 %% step at 2 %% noise, %ld series judged on each of %ld nights: %ld "
	       "caught, %ld of them dropped out on a later night (%ld nights in all)\n",
	       steps, nights, caught, dropped, drop_nights);
}

/* The detector alone over a history of models x nights (one series per model). */
static void speed(long models, long nights)
{
	rm_point *p = rm_xcalloc((size_t)nights, sizeof(*p));
	double t0 = rm_now();
	long regressions = 0;

	state = 3;
	for (long m = 0; m < models; m++) {
		stable(p, (size_t)nights, 1);
		regressions += judge(p, (size_t)nights, 5, 0) == RM_VERDICT_REGRESSION;
	}
	printf("%ld series of %ld runs: %.3f s (%ld regressions)\n", models, nights, rm_now() - t0,
	       regressions);
	free(p);
}

/* The rows of gate_speed, made one at a time and fed to h (NULL: made only), the last
 * night's kept in last (NULL: not kept). */
static void gate_rows(rm_baseline *h, rm_results *last, long models, long configs, long nights)
{
	char run[64], ts[32], model[32], key[32], cfg[64], perf[32];
	const char *names[] = {"model",	    "metric",	  "performance", "status",	"run_id",
			       "timestamp", "config_key", "config",	 "machine_name"};

	state = 5;
	for (long n = 1; n <= nights; n++) {
		snprintf(run, sizeof(run), "run-%05ld", n);
		snprintf(ts, sizeof(ts), "2024-%02ld-%02ldT01:00:00Z", 1 + (n - 1) / 28 % 12,
			 1 + (n - 1) % 28);
		for (long m = 0; m < models; m++)
			for (long c = 0; c < configs; c++) {
				rm_result r;
				snprintf(model, sizeof(model), "m%04ld", m);
				snprintf(key, sizeof(key), "k%02ld", c);
				snprintf(cfg, sizeof(cfg), "{\"batch_size\":\"%ld\"}", 8 * (c + 1));
				snprintf(perf, sizeof(perf), "%.4f",
					 100.0 * (double)(c + 1) + gauss());
				memset(&r, 0, sizeof(r));
				for (int k = 0; k < RM_PERF_COLS; k++)
					r.col[k] = "";
				r.col[RM_COL_MODEL] = model;
				r.col[RM_COL_METRIC] = "samples_per_second";
				r.col[RM_COL_PERFORMANCE] = perf;
				r.col[RM_COL_STATUS] = "SUCCESS";
				r.col[RM_COL_RUN_ID] = run;
				r.col[RM_COL_TIMESTAMP] = ts;
				r.col[RM_COL_CONFIG_KEY] = key;
				r.col[RM_COL_CONFIG] = cfg;
				r.col[RM_COL_MACHINE] = "host";
				rm_result_numbers(&r);
				if (n == nights && last) {
					const char *v[9] = {model, "samples_per_second",
							    perf,  "SUCCESS",
							    run,   ts,
							    key,   cfg,
							    "host"};
					rm_results_add(last, names, v, 9, "sim", n);
				} else if (h) {
					rm_history_add(h, &r);
				}
			}
	}
}

/*
 * The gate over MODELS x CONFIGS x NIGHTS rows, one configuration per series (each its own
 * level, 1 % noise): every row streamed into the history (as report ci reads perf.csv), the
 * last night's rows judged. The time of the history (less what the rows take to make: the
 * same loop without it) and of the gate, and the peak RSS: memory follows the series, not
 * the rows.
 */
static void gate_speed(long models, long configs, long nights)
{
	rm_history_opts ho = RM_HISTORY_OPTS_INIT;
	rm_baseline *h = rm_history_new(&ho);
	rm_results last = RM_RESULTS_INIT;
	rm_gate_opts go = RM_GATE_OPTS_INIT;
	rm_gate g;
	struct rusage ru;
	double t0, t1, t2, made;

	t0 = rm_now();
	gate_rows(NULL, NULL, models, configs, nights);
	made = rm_now() - t0;
	t0 = rm_now();
	gate_rows(h, &last, models, configs, nights);
	t1 = rm_now();
	go.threshold_pct = 5;
	go.enforce = 1;
	rm_gate_eval(&last, h, &go, &g);
	t2 = rm_now();
	getrusage(RUSAGE_SELF, &ru);
	printf("%ld models x %ld configurations x %ld nights (%ld rows, %zu series): the rows made "
	       "in %.3f s; the history %.3f s more, the gate %.3f s: %.3f s; %zu judged, %zu "
	       "regression(s); peak RSS %ld MB\n",
	       models, configs, nights, models * configs * nights, rm_history_n_series(h), made,
	       t1 - t0 - made, t2 - t1, t2 - t0 - made, g.n, g.n_regressions, ru.ru_maxrss / 1024);
	rm_gate_release(&g);
	rm_results_release(&last);
	rm_baseline_free(h);
}

struct expand {
	const rm_suite_entry *e;
	size_t n, bytes;
};

static int expand_point(void *ctx, const size_t *values)
{
	struct expand *x = ctx;
	rm_config c = RM_CONFIG_INIT;
	char *name = rm_sweep_point_name(x->e->sweep, values, x->e->name);
	rm_sweep_params(x->e->sweep, values, &c);
	x->n++;
	x->bytes += strlen(name);
	free(name);
	rm_config_release(&c);
	return 0;
}

/* A suite's sweeps expanded: load (checked, counted), then each point's parameters and name. */
static void expand(const char *path)
{
	rm_suite s;
	rm_error err = RM_ERROR_INIT;
	struct expand x = {NULL, 0, 0};
	double t0 = rm_now(), t1;

	if (rm_suite_load(path, &s, &err) < 0) {
		fprintf(stderr, "detect_sim: %s\n", rm_error_text(&err));
		exit(1);
	}
	t1 = rm_now();
	for (size_t i = 0; i < s.n; i++) {
		x.e = &s.entries[i];
		if (x.e->sweep)
			rm_sweep_each(x.e->sweep, expand_point, &x);
	}
	printf("%zu points: loaded and checked in %.1f ms, expanded (parameters and names, %zu "
	       "bytes of names) in %.1f ms more: %.1f ms\n",
	       x.n, (t1 - t0) * 1000, x.bytes, (rm_now() - t1) * 1000, (rm_now() - t0) * 1000);
	rm_suite_release(&s);
}

int main(int argc, char **argv)
{
	double noise[16];
	size_t nn = 0;

	if (argc >= 4 && !strcmp(argv[1], "calibrate")) {
		calibrate(arg_double(argv[2]), arg_long(argv[3], 100, 100000000));
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "expand")) {
		expand(argv[2]);
		return 0;
	}
	if (argc >= 5 && !strcmp(argv[1], "gate")) {
		gate_speed(arg_long(argv[2], 1, 100000), arg_long(argv[3], 1, 10000),
			   arg_long(argv[4], 2, 100000));
		return 0;
	}
	if (argc >= 5 && !strcmp(argv[1], "issue")) {
		issue(arg_long(argv[2], 1, 10000000), arg_long(argv[3], 1, 10000000),
		      arg_long(argv[4], 1, 150));
		return 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "speed")) {
		speed(arg_long(argv[2], 1, 10000000), arg_long(argv[3], 2, 100000));
		return 0;
	}
	if (argc >= 5 && (!strcmp(argv[1], "far") || !strcmp(argv[1], "power"))) {
		for (int i = 4; i < argc && nn < 16; i++)
			noise[nn++] = arg_double(argv[i]);
		if (!strcmp(argv[1], "far"))
			far(arg_long(argv[2], 1, 100000000), arg_double(argv[3]), noise, nn);
		else
			power(arg_long(argv[2], 1, 100000000), arg_double(argv[3]), noise, nn);
		return 0;
	}
	fprintf(stderr,
		"usage: detect_sim calibrate TARGET TRIALS | far TRIALS THRESHOLD NOISE... "
		"| power TRIALS THRESHOLD NOISE... | speed MODELS NIGHTS | issue STABLE STEPS "
		"NIGHTS | gate MODELS CONFIGS NIGHTS | expand SUITE\n");
	return 2;
}
