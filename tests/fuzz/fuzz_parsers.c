/*
 * libFuzzer harness for every log parser: the input is split into lines at '\n' (a trailing
 * '\r', ANSI codes and progress-bar '\r's are the parsers' business) and fed to each parser
 * of rm_parsers[] in turn, "auto" included; then finish, progress and release run, so every
 * code path that touches untrusted log text is exercised on every input.
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
	rm_parser_config cfg = {RM_PARSER_WARMUP_DEFAULT};

	/* The first byte, when present, varies the warm-up so the mean rule is fuzzed too. */
	if (size > 0)
		cfg.warmup = data[0] % 4;
	for (size_t i = 0; rm_parsers[i]; i++) {
		rm_parser p;
		rm_parse_result r = {0};
		rm_parse_progress prog;
		size_t start = 0;

		if (rm_parser_start(&p, rm_parsers[i]->name, &cfg) < 0)
			abort();
		while (start < size) {
			const char *nl = memchr(s + start, '\n', size - start);
			size_t end = nl ? (size_t)(nl - s) : size;
			rm_parser_feed(&p, s + start, end - start);
			if (p.ops->progress)
				p.ops->progress(p.state, &prog);
			start = end + 1;
		}
		rm_parser_finish(&p, &r);
		for (size_t k = 0; k < r.n; k++)
			if (!(r.metrics[k].value == r.metrics[k].value)) /* nan */
				abort();
		if (r.has_performance && !(r.performance == r.performance))
			abort();
		rm_parse_result_release(&r);
		rm_parser_stop(&p);
	}
	return 0;
}
