/*
 * Unit checks of the parser rules that golden logs cannot pin down on their own: nan is
 * never a result, whole keys, '\r' progress rewrites and ANSI codes, the warm-up rule, rank
 * tags and placeholder losses, broken last lines and pieces of over-long lines (split the
 * same way by the live stream and `parse`), "missing, not 0", thousands separators, auto's
 * choice and explanation, and the result helpers. The lines are small synthetic probes of one
 * rule each, not log fixtures (those live beside this file, from real logs).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "parse_util.h"
#include "rm/engine.h"
#include "rm/parser.h"
#include "rm/util.h"

/* Feeds complete lines, then an optional final fragment. */
static rm_parse_result run_frag(const char *parser, const char *const *lines, long warmup,
				const char *fragment)
{
	rm_parser p;
	rm_parse_result r = {0};
	rm_parser_config cfg = {warmup};

	CHECK(rm_parser_start(&p, parser, &cfg) == 0);
	for (size_t i = 0; lines[i]; i++)
		rm_parser_feed(&p, lines[i], strlen(lines[i]));
	if (fragment)
		rm_parser_feed_fragment(&p, fragment, strlen(fragment));
	rm_parser_finish(&p, &r);
	rm_parser_stop(&p);
	rm_parser_stop(&p); /* safe twice */
	return r;
}

static rm_parse_result run(const char *parser, const char *const *lines, long warmup)
{
	return run_frag(parser, lines, warmup, NULL);
}

static const rm_metric *find(const rm_parse_result *r, const char *name, const char *agg)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->metrics[i].name, name) && !strcmp(r->metrics[i].aggregate, agg))
			return &r->metrics[i];
	return NULL;
}

static void test_numbers(void)
{
	double v;
	const char *s = " 10,050  tflops", *next;

	CHECK(rm_parsers__number(s, s + strlen(s), 1, &v, &next) == PU_OK && v == 10050 &&
	      *next == ' ');
	CHECK(rm_parsers__number(s, s + strlen(s), 0, &v, &next) == PU_OK && v == 10);
	s = "1,234.5 samples_per_second";
	CHECK(rm_parsers__number(s, s + strlen(s), 1, &v, NULL) == PU_OK && v == 1234.5);
	s = "nan";
	CHECK(rm_parsers__number(s, s + 3, 0, &v, NULL) == PU_NONFINITE && isnan(v));
	s = "-inf |";
	CHECK(rm_parsers__number(s, s + strlen(s), 0, &v, &next) == PU_NONFINITE && isinf(v) &&
	      v < 0 && *next == ' ');
	s = "1e999";
	CHECK(rm_parsers__number(s, s + strlen(s), 0, &v, NULL) == PU_NONFINITE);
	s = "1.818812E+00 |";
	CHECK(rm_parsers__number(s, s + strlen(s), 0, &v, NULL) == PU_OK && v == 1.818812);
	s = "5e";
	CHECK(rm_parsers__number(s, s + 2, 0, &v, &next) == PU_OK && v == 5 && *next == 'e');
	s = "8.";
	CHECK(rm_parsers__number(s, s + 2, 0, &v, NULL) == PU_NONE); /* cut mid-write */
	s = "9.8TFLOPS";
	CHECK(rm_parsers__number(s, s + strlen(s), 0, &v, &next) == PU_OK && v == 9.8 &&
	      *next == 'T');
}

static void test_keys(void)
{
	const char *s = "global_step: 17 | reduced_train_loss: 11.03";
	double v;

	CHECK(pu_key(s, strlen(s), "step:") == NULL);
	CHECK(pu_key(s, strlen(s), "loss:") == NULL);
	CHECK(pu_field(s, strlen(s), "global_step:", 0, &v, NULL) == PU_OK && v == 17);
	s = "step:  3  loss:  4.9925";
	CHECK(pu_key(s, strlen(s), "step:") == s);
	CHECK(pu_field(s, strlen(s), "loss:", 0, &v, NULL) == PU_OK && v == 4.9925);
	s = "x tokens/s/GPU: 5";
	CHECK(pu_key(s, strlen(s), "s/GPU:") == NULL);
}

static void test_rank_tags(void)
{
	static const struct {
		const char *line;
		long rank;
	} cases[] = {
	    {"[rank7]:[titan] step: 1", 7},
	    {"[default3]: iteration 1/ 2 |", 3},
	    {" 0: Training epoch 0, iteration 8/29 |", 0},
	    {"12: ", 12},
	    {"12:34:56 step 1", -1},
	    {"[20251121 12:10:29][rank-31/32][INFO ] iteration", 31},
	    {" iteration 5/ 10 | lm loss: 1.0", -1},
	    {"[rankx]: step", -1},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK(rm_parsers__rank_tag(cases[i].line, strlen(cases[i].line)) == cases[i].rank);
}

static void test_clean(void)
{
	pu_cleaner *c = rm_xmalloc(sizeof(*c));
	const char *out;
	size_t n;
	const char *bar = "step 1\rstep 2\rfinal text\r";
	const char *ansi = "\x1b[32mgreen\x1b[0m plain\x1b]0;title\a end";

	rm_parsers__clean(c, bar, strlen(bar), &out, &n);
	CHECK(n == 10 && !memcmp(out, "final text", 10));
	rm_parsers__clean(c, ansi, strlen(ansi), &out, &n);
	CHECK(n == 15 && !memcmp(out, "green plain end", 15));
	free(c);
}

static void test_series(void)
{
	pu_series s, o;
	rm_parser_config fixed2 = {2}, autocfg = {RM_PARSER_WARMUP_AUTO};
	pu_cut cut;
	long dropped;

	rm_parsers__series_init(&s, &fixed2);
	rm_parsers__series_add(&s, 1, 100); /* warm-up */
	rm_parsers__series_add(&s, 2, 10);  /* warm-up */
	rm_parsers__series_add(&s, 3, 20);
	rm_parsers__series_add(&s, 3, 40); /* same step from another line: averaged, 30 */
	rm_parsers__series_add(&s, 4, NAN);
	rm_parsers__series_add(&s, 4, 50);
	CHECK(rm_parsers__series_count(&s) == 4);
	cut = rm_parsers__series_cut(&s, 1);
	CHECK(rm_parsers__series_mean(&s, &cut, &dropped) == 40 && dropped == 2);
	CHECK(rm_parsers__series_last(&s) == 50);

	/* Fewer steps than the warm-up: the last step alone remains. */
	rm_parsers__series_init(&s, &fixed2);
	rm_parsers__series_add(&s, 1, 7);
	rm_parsers__series_add(&s, 2, 9);
	cut = rm_parsers__series_cut(&s, 1);
	CHECK(rm_parsers__series_mean(&s, &cut, &dropped) == 9 && dropped == 1);

	/* Auto: compilation then a ramp (torchtitan PR 2169's figures): two steps dropped. */
	rm_parsers__series_init(&s, &autocfg);
	rm_parsers__series_add(&s, 1, 0.02);
	rm_parsers__series_add(&s, 2, 1.16);
	rm_parsers__series_add(&s, 3, 10.35);
	cut = rm_parsers__series_cut(&s, 1);
	CHECK(cut.count == 2 && cut.by_step && cut.step == 2);
	CHECK(rm_parsers__series_mean(&s, &cut, &dropped) == 10.35 && dropped == 2);

	/* Auto: a steady series keeps its first step; slack is 5 %. */
	rm_parsers__series_init(&s, &autocfg);
	rm_parsers__series_add(&s, 71, 243.6);
	rm_parsers__series_add(&s, 72, 238.7);
	rm_parsers__series_add(&s, 73, 224.0);
	cut = rm_parsers__series_cut(&s, 1);
	CHECK(cut.count == 0);

	/* Times: higher is worse. Another series leaves out the same steps by number. */
	rm_parsers__series_init(&s, &autocfg);
	rm_parsers__series_init(&o, &autocfg);
	for (long i = 1; i <= 40; i++) {
		rm_parsers__series_add(&s, i, i <= 3 ? 1000.0 / (double)i : 100);
		rm_parsers__series_add(&o, i, (double)i);
	}
	cut = rm_parsers__series_cut(&s, 0);
	CHECK(cut.count == 3 && cut.step == 3);
	CHECK(rm_parsers__series_mean(&s, &cut, &dropped) == 100 && dropped == 3);
	/* o: steps 4..40 kept, 37 of them, mean 22 (beyond the window: total minus prefix) */
	CHECK(fabs(rm_parsers__series_mean(&o, &cut, &dropped) - 22) < 1e-12 && dropped == 3);

	/* A fixed warm-up larger than the window still leaves one step. */
	rm_parser_config big = {100};
	rm_parsers__series_init(&s, &big);
	for (long i = 1; i <= 50; i++)
		rm_parsers__series_add(&s, i, (double)i);
	cut = rm_parsers__series_cut(&s, 1);
	CHECK(rm_parsers__series_mean(&s, &cut, &dropped) == 50 && dropped == 49);
	rm_parser_config forty = {40};
	rm_parsers__series_init(&s, &forty);
	for (long i = 1; i <= 50; i++)
		rm_parsers__series_add(&s, i, (double)i);
	cut = rm_parsers__series_cut(&s, 1);
	CHECK(rm_parsers__series_mean(&s, &cut, &dropped) == 45.5 && dropped == 40);
}

static void test_generic(void)
{
	const char *const lines[] = {"performance: 1.5 wrong_first",
				     "performance: 2.5 samples_per_sec", NULL};
	rm_parse_result r = run("generic", lines, 1);

	CHECK(r.has_performance && r.performance == 2.5 && !r.problem);
	CHECK_STR(r.performance_metric, "samples_per_sec");
	CHECK_STR(r.performance_aggregate, "summary");
	rm_parse_result_release(&r);

	/* The other forms MAD's guide accepts, thousands separators, set -x traces. */
	const char *const forms[][2] = {
	    {"performance: 14164/s, samples_per_second", "samples_per_second"},
	    {"performance: 14164, /s samples_per_second", "samples_per_second"},
	    {"performance: 14164 samples_per_second", "samples_per_second"},
	    {"performance: 14,164 samples_per_second", "samples_per_second"},
	};
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		const char *const one[] = {forms[i][0], NULL};
		r = run("generic", one, 1);
		CHECK(r.has_performance && r.performance == 14164);
		CHECK_STR(r.performance_metric, forms[i][1]);
		rm_parse_result_release(&r);
	}
	const char *const thousands[] = {"performance: 1,234.5 samples_per_second", NULL};
	r = run("generic", thousands, 1);
	CHECK(r.has_performance && r.performance == 1234.5);
	rm_parse_result_release(&r);
	const char *const traced[] = {"performance: 187.3 samples_per_second",
				      "+ echo 'performance: 999 samples_per_second'",
				      "++ echo \"performance: 998 x\"", NULL};
	r = run("generic", traced, 1);
	CHECK(r.has_performance && r.performance == 187.3);
	rm_parse_result_release(&r);

	/* The last line says nan: no figure, and the reason says why (issue 14). */
	const char *const nan_last[] = {"performance: 2.5 samples_per_sec",
					"performance: nan samples_per_sec", NULL};
	r = run("generic", nan_last, 1);
	CHECK(!r.has_performance && r.n == 0);
	CHECK_STR(r.problem, "performance value 'nan' is not finite");
	rm_parse_result_release(&r);
	const char *const inf_last[] = {"performance: inf samples_per_sec", NULL};
	r = run("generic", inf_last, 1);
	CHECK_STR(r.problem, "performance value 'inf' is not finite");
	rm_parse_result_release(&r);
	const char *const none[] = {"no figure here", NULL};
	r = run("generic", none, 1);
	CHECK(!r.has_performance && r.problem != NULL);
	rm_parse_result_release(&r);
}

static void test_megatron_nan_and_pairs(void)
{
	const char *const lines[] = {
	    " iteration 1/ 3 | elapsed time per iteration (ms): 900.0/900.0 | throughput per "
	    "GPU (TFLOP/s/GPU): 100.0/100.0 | lm loss: 2.000000E+00 |",
	    "\x1b[1m iteration 2/ 3 | elapsed time per iteration (ms): 500.0/700.0 | throughput "
	    "per GPU (TFLOP/s/GPU): 200.0/150.0 | lm loss: nan |\x1b[0m",
	    " iteration 2/ 3 | elapsed time per iteration (ms): nan | throughput per GPU "
	    "(TFLOP/s/GPU): nan | lm loss: nan |",
	    " iteration 3/ 3 | elapsed time per iteration (ms): 500.0/633.3 | throughput per "
	    "GPU (TFLOP/s/GPU): 300.0/200.0 | lm loss: 1.000000E+00 |",
	    NULL};
	rm_parse_result r = run("megatron", lines, 1);
	const rm_metric *m = find(&r, "tflops_per_gpu", "mean");

	CHECK(m && m->value == 250);
	CHECK(r.has_performance && r.performance == 250);
	CHECK_STR(r.performance_metric, "tflops_per_gpu");
	CHECK_STR(r.performance_aggregate, "mean");
	m = find(&r, "lm_loss", "last");
	CHECK(m && m->value == 1 && m->step == 3);
	for (size_t i = 0; i < r.n; i++)
		CHECK(isfinite(r.metrics[i].value));
	rm_parse_result_release(&r);

	/* Every TFLOP/s figure nan: no figure, said so. */
	const char *const all_nan[] = {" iteration 1/ 3 | elapsed time per iteration (ms): nan | "
				       "throughput per GPU (TFLOP/s/GPU): nan |",
				       NULL};
	r = run("megatron", all_nan, 1);
	CHECK(!r.has_performance && r.problem && strstr(r.problem, "'nan' is not finite"));
	rm_parse_result_release(&r);
}

static void test_megatron_units_and_placeholders(void)
{
	/* (s) is converted to ms; a zero loss is a placeholder. */
	const char *const lines[] = {
	    " iteration 1/ 2 | elapsed time per iteration (s): 2.5 | global batch size: 10 | lm "
	    "loss: 0.000000E+00 | samples per second: 4.000 | TFLOPs: 50.00 |",
	    NULL};
	rm_parse_result r = run("megatron", lines, RM_PARSER_WARMUP_AUTO);
	const rm_metric *m = find(&r, "step_time_ms", "last");

	CHECK(m && m->value == 2500);
	CHECK(find(&r, "lm_loss", "last") == NULL);
	m = find(&r, "samples_per_sec", "last");
	CHECK(m && m->value == 4); /* reported, not derived (10 / 2.5 would also be 4) */
	CHECK(r.has_performance && r.performance == 50);
	rm_parse_result_release(&r);
}

static void test_ranks(void)
{
	/* Pipeline stages: rank 0 prints the placeholder loss, rank 7 the real one and other
	 * figures; the figures come from rank 7 alone. */
	const char *const lines[] = {
	    "[rank0]:[titan] step:  1  loss: -1.0000  memory: 10.00GiB(10.00%)  tps: 100  "
	    "tflops: 1.00  mfu: 0.10%",
	    "[rank7]:[titan] step:  1  loss:  8.0000  memory: 20.00GiB(20.00%)  tps: 200  "
	    "tflops: 2.00  mfu: 0.20%",
	    "[rank0]:[titan] step:  2  loss: -1.0000  memory: 10.00GiB(10.00%)  tps: 100  "
	    "tflops: 1.00  mfu: 0.10%",
	    "[rank7]:[titan] step:  2  loss:  7.0000  memory: 20.00GiB(20.00%)  tps: 200  "
	    "tflops: 2.00  mfu: 0.20%",
	    NULL};
	rm_parse_result r = run("torchtitan", lines, RM_PARSER_WARMUP_AUTO);
	const rm_metric *m = find(&r, "loss", "mean");

	CHECK(m && m->value == 7.5);
	m = find(&r, "memory", "last");
	CHECK(m && m->value == 20);
	CHECK(r.has_performance && r.performance == 2);
	rm_parse_result_release(&r);

	/* Only placeholders: no loss at all, the figures still count. */
	const char *const only0[] = {lines[0], lines[2], NULL};
	r = run("torchtitan", only0, RM_PARSER_WARMUP_AUTO);
	CHECK(find(&r, "loss", "last") == NULL);
	CHECK(r.has_performance && r.performance == 1);
	rm_parse_result_release(&r);
}

static void test_broken_lines(void)
{
	const char *const lines[] = {
	    " iteration 1/ 9 | elapsed time per iteration (ms): 100.0 | lm loss: 9.000000E+00 "
	    "| throughput per GPU (TFLOP/s/GPU): 200.0 |",
	    NULL};
	/* A run killed mid-write: the cut last line never becomes a metric. */
	rm_parse_result r =
	    run_frag("megatron", lines, 0,
		     " iteration 2/ 9 | elapsed time per iteration (ms): 100.0 | lm loss: 8.");
	const rm_metric *m = find(&r, "lm_loss", "last");

	CHECK(m && m->value == 9 && m->step == 1);
	CHECK(r.has_performance && r.performance == 200);
	rm_parse_result_release(&r);
	/* Not even a complete-looking value: the fragment is not parsed at all. */
	r = run_frag("megatron", lines, 0,
		     " iteration 2/ 9 | elapsed time per iteration (ms): 100.0 | throughput per "
		     "GPU (TFLOP/s/GPU): 24");
	CHECK(r.has_performance && r.performance == 200);
	rm_parse_result_release(&r);
	/* A half JSON record. */
	const char *const none[] = {NULL};
	r = run_frag("mlperf", none, 0,
		     ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1, \"event_type\": "
		     "\"POINT_IN_TIME\", \"key\": \"tracked_stats\", \"value\": {\"throughput\": "
		     "2.5}, \"metadata\": {\"step\": 1");
	CHECK(r.n == 0 && !r.has_performance);
	rm_parse_result_release(&r);
	/* A progress bar's whole updates before the last '\r' of the fragment do count. */
	r = run_frag("nemo", none, 0,
		     "Epoch 0: 10%| 1/10 [00:01, reduced_train_loss=3.000, global_step=0.000, "
		     "train_step_timing in s=2.00]\rEpoch 0: 20%| 2/10 [00:03, "
		     "reduced_train_loss=2.000, global_step=1.000, train_step_timing in s=2.00]\r"
		     "Epoch 0: 30%| 3/10 [00:05, reduced_train_loss=1.");
	m = find(&r, "reduced_train_loss", "last");
	CHECK(m && m->value == 2 && m->step == 1);
	rm_parse_result_release(&r);
}

/* Writes a log with one progress-bar line longer than RM_PARSER_LINE_MAX. */
static char *write_long_line_log(void)
{
	char *path = rm_xstrdup("/tmp/rm_units_longXXXXXX");
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	CHECK(f != NULL);
	if (!f)
		return path;
	for (long i = 0; i < 3000; i++)
		fprintf(f,
			"\rEpoch 0: %ld/3000 [00:01, reduced_train_loss=%ld.500, global_step=%ld, "
			"train_step_timing in s=1.00]",
			i, 3000 - i, i);
	fputs("\nperformance: 5 x\n", f);
	fclose(f);
	return path;
}

/* The mean reduced_train_loss of the updates of the first line that no piece boundary
 * (a multiple of RM_PARSER_LINE_MAX) touches: update [s, e) is lost when s <= b <= e. */
static double whole_update_mean(const char *data, size_t len)
{
	const char *nl = memchr(data, '\n', len);
	size_t end = nl ? (size_t)(nl - data) : len, s = 0;
	double sum = 0;
	long n = 0;

	while (s < end) {
		const char *cr = memchr(data + s, '\r', end - s);
		size_t e = cr ? (size_t)(cr - data) : end;
		size_t b = (s / RM_PARSER_LINE_MAX + 1) * RM_PARSER_LINE_MAX;
		const char *k = e > s ? pu_find(data + s, e - s, "reduced_train_loss=") : NULL;
		int lost = (s % RM_PARSER_LINE_MAX == 0 && s > 0) || b <= e;
		if (k && !lost) {
			sum += strtod(k + 19, NULL);
			n++;
		}
		s = e + 1;
	}
	return n ? sum / (double)n : NAN;
}

static void feed_cb(void *ud, const char *line, size_t len, int kind)
{
	rm_parser_feed_split(ud, line, len, kind);
}

/* The live stream (rm_lines at RM_PARSER_LINE_MAX fed in odd chunk sizes) and `parse` give
 * the same result for a line longer than the cap, and no update is cut into a metric. */
static void test_long_lines_same_both_ways(void)
{
	char *path = write_long_line_log(), *data = NULL, *a = NULL, *b = NULL;
	size_t len = 0, alen = 0, blen = 0;
	rm_error err = RM_ERROR_INIT;
	rm_parser p;
	rm_parse_result r = {0};
	rm_lines lines;
	FILE *fa, *fb;
	const rm_metric *m;

	CHECK(rm_read_file(path, 1 << 24, &data, &len, &err) == 0);
	CHECK(len > 2 * RM_PARSER_LINE_MAX);
	CHECK(rm_parser_start(&p, "nemo", NULL) == 0);
	rm_lines_init(&lines, RM_PARSER_LINE_MAX);
	for (size_t off = 0; off < len; off += 777)
		rm_lines_feed(&lines, data + off, len - off < 777 ? len - off : 777, feed_cb, &p);
	rm_lines_flush(&lines, feed_cb, &p);
	rm_lines_release(&lines);
	rm_parser_finish(&p, &r);
	rm_parser_stop(&p);
	fa = open_memstream(&a, &alen);
	rm_parse_result_write_csv(&r, fa);
	fclose(fa);
	m = find(&r, "reduced_train_loss", "last");
	CHECK(m && m->value == 1.5 && m->step == 2999);
	/* Every value read is one the log printed whole (n.500), none a cut piece of one. */
	for (size_t i = 0; i < r.n; i++)
		if (!strcmp(r.metrics[i].name, "reduced_train_loss") &&
		    !strcmp(r.metrics[i].aggregate, "last"))
			CHECK(r.metrics[i].value - floor(r.metrics[i].value) == 0.5);
	m = find(&r, "step_time_ms", "mean");
	CHECK(m && m->value == 1000);
	/* Exactly the updates that lie whole inside one piece count, each once (an update that
	 * straddles a piece boundary is lost, never read in part). */
	m = find(&r, "reduced_train_loss", "mean");
	CHECK(m && m->value == whole_update_mean(data, len));
	rm_parse_result_release(&r);

	fb = open_memstream(&b, &blen);
	CHECK(rm_parse_file(path, "nemo", NULL, fb, RM_PARSE_CSV, NULL, &err) == 0);
	fclose(fb);
	CHECK(a && b && !strcmp(a, b));
	unlink(path);
	free(path);
	free(data);
	free(a);
	free(b);
}

/* Feeds text through rm_lines at RM_PARSER_LINE_MAX in chunks of `step`, as the live stream
 * and `parse` do; `cut` hands an unterminated end to the cut-end path (the runner stopped the
 * workload). */
struct split_feed {
	rm_parser *p;
	int cut;
};

static void split_cb(void *ud, const char *line, size_t len, int kind)
{
	struct split_feed *f = ud;
	if (kind == RM_LINE_END && f->cut)
		rm_parser_feed_fragment(f->p, line, len);
	else
		rm_parser_feed_split(f->p, line, len, kind);
}

static rm_parse_result run_split(const char *parser, const char *text, size_t len, size_t step,
				 int cut)
{
	rm_parser p;
	rm_parse_result r = {0};
	rm_lines lines;
	struct split_feed f = {&p, cut};

	CHECK(rm_parser_start(&p, parser, NULL) == 0);
	rm_lines_init(&lines, RM_PARSER_LINE_MAX);
	for (size_t off = 0; off < len; off += step)
		rm_lines_feed(&lines, text + off, len - off < step ? len - off : step, split_cb,
			      &f);
	rm_lines_flush(&lines, split_cb, &f);
	rm_lines_release(&lines);
	rm_parser_finish(&p, &r);
	rm_parser_stop(&p);
	return r;
}

/* Issue 22: a line of exactly RM_PARSER_LINE_MAX bytes (or a multiple) is a whole line, so
 * the performance line after it counts; a last line without a line end counts when the
 * output ended by itself, unless a number runs into its very end. */
static void test_line_max_and_last_line(void)
{
	const char *perf = "performance: 42.5 samples_per_sec\n";
	size_t sizes[] = {RM_PARSER_LINE_MAX, 2 * RM_PARSER_LINE_MAX, RM_PARSER_LINE_MAX - 1,
			  RM_PARSER_LINE_MAX + 1};
	size_t steps[] = {1 << 20, 4096, 777};
	rm_parse_result r;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i], len = n + 1 + strlen(perf);
		char *text = rm_xmalloc(len + 1);
		memset(text, 'x', n);
		text[n] = '\n';
		memcpy(text + n + 1, perf, strlen(perf) + 1);
		for (size_t k = 0; k < sizeof(steps) / sizeof(steps[0]); k++) {
			r = run_split("generic", text, len, steps[k], 0);
			CHECK(r.has_performance && r.performance == 42.5);
			rm_parse_result_release(&r);
		}
		free(text);
	}

	/* The last line without '\n': whole when the output ended by itself, not when cut. */
	const char *last = "warming up\nperformance: 7 samples_per_sec";
	r = run_split("generic", last, strlen(last), 5, 0);
	CHECK(r.has_performance && r.performance == 7);
	CHECK(r.performance_metric && !strcmp(r.performance_metric, "samples_per_sec"));
	rm_parse_result_release(&r);
	r = run_split("generic", last, strlen(last), 5, 1);
	CHECK(!r.has_performance);
	rm_parse_result_release(&r);

	/* A number that runs into the end may be cut: `lm loss: 2` of `lm loss: 2.47`. */
	const char *cutnum = "iteration 1/ 9 | elapsed time per iteration (ms): 10.0 | lm loss: "
			     "2.5 |\niteration 2/ 9 | elapsed time per iteration (ms): 12.0 | lm "
			     "loss: 2";
	r = run_split("megatron", cutnum, strlen(cutnum), 1 << 20, 0);
	const rm_metric *m = find(&r, "lm_loss", "last");
	CHECK(m && m->value == 2.5 && m->step == 1);
	m = find(&r, "step_time_ms", "last");
	CHECK(m && m->value == 12 && m->step == 2);
	rm_parse_result_release(&r);
}

static void test_auto(void)
{
	/* NeMo's global_step:/reduced_train_loss: must not pass for torchtitan's step:/loss:. */
	const char *const nemo[] = {
	    "Training epoch 0, iteration 3/9 | lr: 0.0006 | global_batch_size: 32 | global_step: 3 "
	    "| reduced_train_loss: 8.595 | train_step_timing in s: 2.0",
	    "performance: 16 samples_per_sec", NULL};
	rm_parser p;
	rm_parse_result r = {0};
	rm_parser_candidate c[16];
	size_t n;

	CHECK(rm_parser_start(&p, "auto", NULL) == 0);
	for (size_t i = 0; nemo[i]; i++)
		rm_parser_feed(&p, nemo[i], strlen(nemo[i]));
	rm_parser_finish(&p, &r);
	CHECK(rm_parser_effective(&p) && !strcmp(rm_parser_effective(&p)->name, "nemo"));
	CHECK(r.has_performance && r.performance == 16);
	CHECK_STR(r.performance_metric, "samples_per_sec");
	n = rm_parser_explain(&p, c, 16);
	CHECK(n >= 7);
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(c[i].name, "nemo"))
			CHECK(c[i].taken && c[i].score == 100 && strstr(c[i].why, "taken"));
		if (!strcmp(c[i].name, "torchtitan"))
			CHECK(!c[i].taken && c[i].score == 0 && strstr(c[i].why, "no line"));
		if (!strcmp(c[i].name, "generic"))
			CHECK(!c[i].taken && c[i].score == 30 && strstr(c[i].why, "below nemo"));
	}
	rm_parse_result_release(&r);
	rm_parser_stop(&p);

	/* A log no parser recognises: no figure, and a reason. */
	const char *const noise[] = {"hello", "world", NULL};
	r = run("auto", noise, RM_PARSER_WARMUP_AUTO);
	CHECK(!r.has_performance && r.n == 0 && r.problem &&
	      strstr(r.problem, "no parser recognised this log"));
	rm_parse_result_release(&r);

	/* A non-auto parser explains nothing. */
	CHECK(rm_parser_start(&p, "generic", NULL) == 0);
	CHECK(rm_parser_explain(&p, c, 16) == 0);
	rm_parser_stop(&p);
}

static void test_missing_not_zero(void)
{
	const char *const lines[] = {"[batch=1/10]:", "\t Train loss/train/total: 11.6153", NULL};
	rm_parse_result r = run("llm_foundry", lines, 1);

	CHECK(!r.has_performance && r.problem);
	CHECK(find(&r, "loss/train/total", "last") != NULL);
	rm_parse_result_release(&r);
}

static void test_mlperf_crlf(void)
{
	/* Lines from the golden lora fixture with CRLF ends and a host prefix. */
	const char *const lines[] = {
	    "node0: :::MLLOG {\"namespace\": \"\", \"time_ms\": 1755477365577, \"event_type\": "
	    "\"INTERVAL_START\", \"key\": \"run_start\", \"value\": null, \"metadata\": "
	    "{\"lineno\": 193}}\r",
	    ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1755479401425, \"event_type\": "
	    "\"INTERVAL_END\", \"key\": \"run_stop\", \"value\": null, \"metadata\": "
	    "{\"samples_count\": 3840, \"status\": \"aborted\"}}\r",
	    NULL};
	rm_parse_result r = run("mlperf", lines, 1);
	const rm_metric *m = find(&r, "time_to_train", "summary");

	/* aborted: no valid score, and no time to train even as a side metric (issue 22) */
	CHECK(!m);
	CHECK(!r.has_performance);
	CHECK(r.problem && strstr(r.problem, "'aborted'"));
	m = find(&r, "run_success", "summary");
	CHECK(m && m->value == 0);
	m = find(&r, "samples_count", "summary");
	CHECK(m && m->value == 3840);
	rm_parse_result_release(&r);

	/* The same pair with status success: 33.9308 minutes, CRLF and prefix tolerated. */
	char *ok = rm_xstrdup(lines[1]);
	memcpy(strstr(ok, "aborted"), "success", 7);
	const char *const good[] = {lines[0], ok, NULL};
	r = run("mlperf", good, 1);
	m = find(&r, "time_to_train", "summary");
	CHECK(m && fabs(m->value - 33.9308) < 1e-9);
	CHECK(r.has_performance && fabs(r.performance - 33.9308) < 1e-9);
	rm_parse_result_release(&r);
	free(ok);
}

static void test_registry(void)
{
	size_t n = 0;

	CHECK_STR(rm_parsers[0]->name, "generic");
	for (; rm_parsers[n]; n++)
		CHECK(rm_parser_find(rm_parsers[n]->name) == rm_parsers[n]);
	CHECK(n >= 8 && !strcmp(rm_parsers[n - 1]->name, "auto"));
	CHECK(rm_parser_find("nemo") != NULL);
	CHECK(rm_parser_find("nope") == NULL);
	rm_parser p;
	CHECK(rm_parser_start(&p, "nope", NULL) < 0);
	rm_parser_stop(&p);
}

static void test_result_helpers(void)
{
	rm_parse_result r = {0};

	rm_result_add(&r, "x", NAN, "", -1, "last");
	rm_result_add(&r, "x", INFINITY, "", -1, "last");
	rm_result_set_performance(&r, NAN, "x");
	CHECK(r.n == 0 && !r.has_performance);
	CHECK_STR(r.problem, "performance value 'nan' is not finite");
	rm_result_set_performance_agg(&r, -INFINITY, "x", "mean");
	CHECK_STR(r.problem, "performance value '-inf' is not finite");
	rm_result_add(&r, "x", 1, "u", 3, "mean");
	CHECK(r.n == 1 && r.metrics[0].step == 3);
	rm_result_set_performance_agg(&r, 5, "x", "summary");
	CHECK(r.has_performance && !r.problem);
	CHECK_STR(r.performance_aggregate, "summary");
	rm_result_set_problem(&r, "ignored once a figure is set");
	CHECK(!r.problem);
	rm_parse_result_release(&r);
	rm_parse_result_release(&r);
	rm_parse_result_release(NULL);
}

/* The lines of a fixture (its '#' header left out), each with `label` in front. */
static char **labelled_lines(const char *dir, const char *fixture, const char *label)
{
	char path[1024], *buf = NULL, *save, **out;
	size_t len = 0, n = 0;
	rm_error err = RM_ERROR_INIT;

	snprintf(path, sizeof(path), "%s/%s", dir, fixture);
	CHECK(rm_read_file(path, 1 << 22, &buf, &len, &err) == 0);
	out = rm_xcalloc(len + 2, sizeof(*out));
	for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		if (l[0] != '#')
			out[n++] = rm_xasprintf("%s%s", label, l);
	free(buf);
	return out;
}

static void free_lines(char **lines)
{
	for (size_t i = 0; lines[i]; i++)
		free(lines[i]);
	free(lines);
}

/* Issue 29: the labels launchers put in front of every line (srun --label plain and padded,
 * torchrun, Ray through SkyPilot) are stripped the same way by every parser and by auto: real
 * fixture lines read with each label give what they give without one. */
static void test_labels_every_parser(const char *dir)
{
	static const char *const fixtures[][2] = {
	    {"generic", "generic/madengine_tools_context_fix_dummy_prof.log"},
	    {"llm_foundry", "llm_foundry/rocm_blog_mpt30b_1node.log"},
	    {"megatron", "megatron/megatron_lm_issue756_mixtral.log"},
	    {"nemo", "nemo/bionemo_recipes_pr740_step_timing.log"},
	    {"torchtitan", "torchtitan/torchtitan_pr2169_compile_warmup.log"},
	    {"mlperf", "mlperf/amd_mi300x_llama2_70b_lora_result_0.log"},
	    {"hf_trainer", "hf_trainer/hf_fsdp_table_only.log"},
	};
	static const char *const labels[] = {
	    "0: ", " 0: ", "   1:  ", "(pretraining, pid=4112) ", "[rank0]:", "0: [default0]:"};

	if (!dir)
		return;
	for (size_t f = 0; f < sizeof(fixtures) / sizeof(fixtures[0]); f++) {
		char **plain = labelled_lines(dir, fixtures[f][1], "");
		for (size_t w = 0; w < 2; w++) {
			const char *parser = w ? "auto" : fixtures[f][0];
			rm_parse_result want = run(parser, (const char *const *)plain, -1);
			CHECK(want.has_performance);
			for (size_t l = 0; l < sizeof(labels) / sizeof(labels[0]); l++) {
				char **ll = labelled_lines(dir, fixtures[f][1], labels[l]);
				rm_parse_result got = run(parser, (const char *const *)ll, -1);
				int same = got.has_performance == want.has_performance &&
					   got.performance == want.performance && got.n == want.n;
				for (size_t i = 0; same && i < got.n; i++)
					same = !strcmp(got.metrics[i].name, want.metrics[i].name) &&
					       got.metrics[i].value == want.metrics[i].value;
				if (!same)
					fprintf(stderr, "label '%s' changes %s on %s\n", labels[l],
						parser, fixtures[f][1]);
				CHECK(same);
				rm_parse_result_release(&got);
				free_lines(ll);
			}
			rm_parse_result_release(&want);
		}
		free_lines(plain);
	}
}

/* NeMo's FLOPsMeasurementCallback logs tflops_per_sec_per_gpu = -1 when it cannot compute the
 * figure (flops_callback.py): that is no TFLOP/s, and the step time still counts. */
static void test_nemo_minus_one(void)
{
	const char *lines[] = {
	    "Training epoch 0, iteration 0/99 | lr: 1e-06 | global_batch_size: 32 | global_step: 0 "
	    "| reduced_train_loss: 2.8 | train_step_timing in s: 0.19 | tflops_per_sec_per_gpu: -1",
	    "Training epoch 0, iteration 1/99 | lr: 2e-06 | global_batch_size: 32 | global_step: 1 "
	    "| reduced_train_loss: 2.7 | train_step_timing in s: 0.19 | tflops_per_sec_per_gpu: -1",
	    NULL};
	rm_parse_result r = run("nemo", lines, -1);

	CHECK(!find(&r, "tflops_per_gpu", "mean"));
	CHECK(r.has_performance && !strcmp(r.performance_metric, "samples_per_sec"));
	rm_parse_result_release(&r);
}

int main(int argc, char **argv)
{
	test_numbers();
	test_keys();
	test_rank_tags();
	test_clean();
	test_series();
	test_generic();
	test_megatron_nan_and_pairs();
	test_megatron_units_and_placeholders();
	test_ranks();
	test_broken_lines();
	test_long_lines_same_both_ways();
	test_line_max_and_last_line();
	test_auto();
	test_missing_not_zero();
	test_mlperf_crlf();
	test_registry();
	test_result_helpers();
	test_labels_every_parser(argc > 1 ? argv[1] : NULL);
	test_nemo_minus_one();
	return check_summary();
}
