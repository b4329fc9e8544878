/*
 * Fuzzes what the gate does with a perf.csv it is given (a history, a baseline, a run): the
 * CSV reader, the history store with plot points, the detector on every series, the gate on
 * the latest run and the Markdown summary. Any input must give rows or an error, and never
 * crash, leak, or yield a verdict or an index out of range (hostile numbers included: inf,
 * nan, 1e308, -0).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rm/detect.h"
#include "rm/direction.h"
#include "rm/gate.h"
#include "rm/history.h"
#include "rm/markdown.h"
#include "rm/results.h"
#include "rm/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int add(void *ctx, rm_result *row)
{
	rm_history_add(ctx, row);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rm_error err = RM_ERROR_INIT;
	rm_history_opts ho = RM_HISTORY_OPTS_INIT;
	rm_baseline *h;
	FILE *f = fmemopen((void *)data, size, "r");
	const rm_results *latest;
	int complete;
	size_t cap;

	ho.window = 8;
	ho.plot = 24;
	ho.keep_latest = 1;
	/* The store raises plot to what the detector needs (RM_DETECT_KEEP grew with the
	 * nights a regression must hold): the bound is the larger. */
	cap = ho.plot < RM_HISTORY_PLOT_MIN(ho.window) ? RM_HISTORY_PLOT_MIN(ho.window) : ho.plot;
	h = rm_history_new(&ho);
	if (!f || !size) {
		if (f)
			fclose(f);
		rm_baseline_free(h);
		return 0;
	}
	if (rm_results_each_file(f, "fuzz.csv", NULL, add, h, &err) == 0) {
		for (size_t i = 0; i < rm_history_n_series(h); i++) {
			const rm_hseries *s = rm_history_series_at(h, i);
			rm_detect d;
			rm_run_ref since;
			rm_detect_opts o = RM_DETECT_OPTS_INIT;
			o.direction = i % 3 ? RM_DIR_HIGHER : RM_DIR_LOWER;
			o.threshold_pct = (double)(i % 7);
			o.window = 8;
			if (s->n > cap)
				abort();
			if (rm_history_judge(h, s, &o, &d, &since) == 0 &&
			    (d.verdict > RM_VERDICT_REGRESSION || d.n > 8 || d.n_cps > d.n))
				abort();
		}
		if (rm_history_latest(h, &latest, &complete)) {
			rm_gate_opts go = RM_GATE_OPTS_INIT;
			go.threshold_pct = 5;
			go.enforce = 1;
			go.window = 8;
			rm_gate g;
			rm_buf md = RM_BUF_INIT((size_t)16 << 20);
			rm_baseline_seal(h);
			rm_gate_eval(latest, h, &go, &g);
			rm_summary_markdown(&md, "fuzz", latest, &g);
			rm_buf_release(&md);
			rm_gate_release(&g);
		}
	} else if (err.kind == RM_ERR_NONE) {
		abort();
	}
	fclose(f);
	rm_baseline_free(h);
	return 0;
}
