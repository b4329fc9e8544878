/*
 * Unit checks of the parser rules that golden logs cannot pin down on their own: nan is
 * never a result, '\r' progress rewrites and ANSI codes, the warm-up rule, "missing, not 0",
 * thousands separators, and the result helpers. The lines are small synthetic probes of one
 * rule each, not log fixtures (those live beside this file, from real logs).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "parse_util.h"
#include "rm/parser.h"
#include "rm/util.h"

static rm_parse_result run(const char *parser, const char *const *lines, long warmup)
{
	rm_parser p;
	rm_parse_result r = {0};
	rm_parser_config cfg = {warmup};

	CHECK(rm_parser_start(&p, parser, &cfg) == 0);
	for (size_t i = 0; lines[i]; i++)
		rm_parser_feed(&p, lines[i], strlen(lines[i]));
	rm_parser_finish(&p, &r);
	rm_parser_stop(&p);
	rm_parser_stop(&p); /* safe twice */
	return r;
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

	CHECK(pu_number(s, s + strlen(s), 1, &v, &next) == 0 && v == 10050 && *next == ' ');
	CHECK(pu_number(s, s + strlen(s), 0, &v, &next) == 0 && v == 10);
	s = "nan";
	CHECK(pu_number(s, s + 3, 0, &v, NULL) < 0);
	s = "-inf";
	CHECK(pu_number(s, s + 4, 0, &v, NULL) < 0);
	s = "1.818812E+00 |";
	CHECK(pu_number(s, s + strlen(s), 0, &v, NULL) == 0 && v == 1.818812);
	s = "5e";
	CHECK(pu_number(s, s + 2, 0, &v, &next) == 0 && v == 5 && *next == 'e');
}

static void test_clean(void)
{
	pu_cleaner *c = rm_xmalloc(sizeof(*c));
	const char *out;
	size_t n;
	const char *bar = "step 1\rstep 2\rfinal text\r";
	const char *ansi = "\x1b[32mgreen\x1b[0m plain\x1b]0;title\a end";

	pu_clean(c, bar, strlen(bar), &out, &n);
	CHECK(n == 10 && !memcmp(out, "final text", 10));
	pu_clean(c, ansi, strlen(ansi), &out, &n);
	CHECK(n == 15 && !memcmp(out, "green plain end", 15));
	free(c);
}

static void test_series(void)
{
	pu_series s;
	rm_parser_config cfg = {2};

	pu_series_init(&s, &cfg);
	pu_series_add(&s, 1, 100); /* warm-up */
	pu_series_add(&s, 2, 10);  /* warm-up */
	pu_series_add(&s, 3, 20);
	pu_series_add(&s, 3, 40); /* same step from another rank: averaged, 30 */
	pu_series_add(&s, 4, NAN);
	pu_series_add(&s, 4, 50);
	CHECK(pu_series_count(&s) == 4);
	CHECK(pu_series_mean(&s) == 40);
	CHECK(pu_series_last(&s) == 50);

	/* Fewer steps than the warm-up: the last step alone remains. */
	pu_series_init(&s, &cfg);
	pu_series_add(&s, 1, 7);
	pu_series_add(&s, 2, 9);
	CHECK(pu_series_mean(&s) == 9);
}

static void test_generic(void)
{
	const char *const lines[] = {"performance: 1.5 wrong_first",
				     "performance: 2.5 samples_per_sec",
				     "performance: nan samples_per_sec", NULL};
	rm_parse_result r = run("generic", lines, 1);

	CHECK(r.has_performance && r.performance == 2.5);
	CHECK_STR(r.performance_metric, "samples_per_sec");
	rm_parse_result_release(&r);

	/* The other forms MAD's guide accepts, and set -x traces that must not count. */
	const char *const forms[][2] = {
	    {"performance: 14164/s, samples_per_second", "samples_per_second"},
	    {"performance: 14164, /s samples_per_second", "samples_per_second"},
	    {"performance: 14164 samples_per_second", "samples_per_second"},
	};
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		const char *const one[] = {forms[i][0], NULL};
		r = run("generic", one, 1);
		CHECK(r.has_performance && r.performance == 14164);
		CHECK_STR(r.performance_metric, forms[i][1]);
		rm_parse_result_release(&r);
	}
	const char *const traced[] = {"performance: 187.3 samples_per_second",
				      "+ echo 'performance: 999 samples_per_second'",
				      "++ echo \"performance: 998 x\"", NULL};
	r = run("generic", traced, 1);
	CHECK(r.has_performance && r.performance == 187.3);
	CHECK_STR(r.performance_metric, "samples_per_second");
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
	m = find(&r, "lm_loss", "last");
	CHECK(m && m->value == 1 && m->step == 3);
	for (size_t i = 0; i < r.n; i++)
		CHECK(isfinite(r.metrics[i].value));
	rm_parse_result_release(&r);
}

static void test_missing_not_zero(void)
{
	const char *const lines[] = {"[batch=1/10]:", "\t Train loss/train/total: 11.6153", NULL};
	rm_parse_result r = run("llm_foundry", lines, 1);

	CHECK(!r.has_performance);
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
	const rm_metric *m = find(&r, "time_to_train", "last");

	CHECK(m && fabs(m->value - 33.9308) < 1e-9);
	CHECK(!r.has_performance); /* aborted: no valid score */
	m = find(&r, "run_success", "last");
	CHECK(m && m->value == 0);
	rm_parse_result_release(&r);
}

static void test_registry(void)
{
	CHECK_STR(rm_parsers[0]->name, "generic");
	CHECK(rm_parser_find("megatron") == &rm_parser_megatron);
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
	rm_result_add(&r, "x", 1, "u", 3, "mean");
	CHECK(r.n == 1 && r.metrics[0].step == 3);
	rm_parse_result_release(&r);
	rm_parse_result_release(&r);
	rm_parse_result_release(NULL);
}

int main(void)
{
	test_numbers();
	test_clean();
	test_series();
	test_generic();
	test_megatron_nan_and_pairs();
	test_missing_not_zero();
	test_mlperf_crlf();
	test_registry();
	test_result_helpers();
	return check_summary();
}
