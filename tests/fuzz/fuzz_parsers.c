/*
 * libFuzzer harness for every log parser of rm_parsers[] ("auto" and any parser added to the
 * table included): the input is split into lines at '\n' (a trailing '\r', ANSI codes and
 * progress-bar '\r's are the parsers' business) and fed to each parser in turn, the
 * unterminated end through rm_parser_feed_fragment(); then finish, progress, explain and
 * release run, so every code path that touches untrusted log text is exercised on every
 * input. A result must never hold nan or inf, and must carry either a figure or a problem.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rm/parser.h"
#include "rm/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	rm_parser_config cfg = {RM_PARSER_WARMUP_AUTO};

	/* The first byte, when present, varies the warm-up so both rules are fuzzed. */
	if (size > 0)
		cfg.warmup = data[0] % 5 == 4 ? RM_PARSER_WARMUP_AUTO : data[0] % 4;
	for (size_t i = 0; rm_parsers[i]; i++) {
		rm_parser p;
		rm_parse_result r = {0};
		rm_parse_progress prog;
		rm_parser_candidate cand[16];
		size_t start = 0;

		if (rm_parser_start(&p, rm_parsers[i]->name, &cfg) < 0)
			abort();
		while (start < size) {
			const char *nl = memchr(s + start, '\n', size - start);
			if (!nl) {
				rm_parser_feed_fragment(&p, s + start, size - start);
				break;
			}
			rm_parser_feed(&p, s + start, (size_t)(nl - (s + start)));
			if (p.ops->progress)
				p.ops->progress(p.state, &prog);
			start = (size_t)(nl - s) + 1;
		}
		rm_parser_finish(&p, &r);
		for (size_t k = 0; k < r.n; k++)
			if (!(r.metrics[k].value == r.metrics[k].value) ||
			    r.metrics[k].value - r.metrics[k].value != 0) /* nan or inf */
				abort();
		if (r.has_performance && r.performance - r.performance != 0)
			abort();
		if (r.has_performance == (r.problem != NULL))
			abort();
		rm_parser_explain(&p, cand, sizeof(cand) / sizeof(cand[0]));
		rm_parse_result_release(&r);
		rm_parser_stop(&p);
	}
	return 0;
}
