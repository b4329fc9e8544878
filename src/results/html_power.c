/*
 * The HTML report's power column: each model's GPU power per run (gpu_power_avg_w from
 * perf_<model>.csv, the mean of a run's repeats) as a small plot on the same run axis as the
 * model's trend, so a throughput change can be read beside what the GPUs drew. Its own
 * piece: the page asks it for a header and a cell, nothing more. The figures come as a
 * history store (rm_history_read_metric_dir), bounded per model like the trends; a run the
 * report's history does not hold is left out.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "html_internal.h"
#include "rm/detect.h"
#include "rm/history.h"
#include "rm/text.h"

#define POWER_METRIC "gpu_power_avg_w"

struct html_power {
	const rm_baseline *p;
};

/* The report's run index of a power point's run, or RM_DETECT_NONE. */
static size_t power_run(const struct report *r, const rm_baseline *p, size_t run)
{
	return rm_history_run_index(r->h, rm_history_run(p, run)->id);
}

/* A power point as a point of the report's runs (merged points: their first and last). */
static int power_point(const struct report *r, const rm_baseline *p, const rm_hpoint *q,
		       rm_hpoint *out)
{
	size_t a = power_run(r, p, q->run_first), b = power_run(r, p, q->run);

	if (a == RM_DETECT_NONE && b == RM_DETECT_NONE)
		return 0;
	*out = *q;
	out->run_first = a != RM_DETECT_NONE ? a : b;
	out->run = b != RM_DETECT_NONE ? b : a;
	return q->n > 0;
}

struct html_power *rm_results__html_power_new(const struct report *r, const rm_baseline *power)
{
	struct html_power *hp;
	rm_hpoint x;

	if (!power || !r->n_runs)
		return NULL;
	for (size_t i = 0; i < rm_history_n_series(power); i++) {
		const rm_hseries *s = rm_history_series_at(power, i);
		for (size_t k = 0; k < s->n; k++)
			if (!strcmp(s->metric, POWER_METRIC) &&
			    power_point(r, power, &s->p[k], &x)) {
				hp = rm_xcalloc(1, sizeof(*hp));
				hp->p = power;
				return hp;
			}
	}
	return NULL;
}

void rm_results__html_power_free(struct html_power *hp)
{
	free(hp);
}

void rm_results__html_power_head(rm_buf *out, const struct html_power *hp)
{
	if (hp)
		rm_buf_addstr(out, "<th>GPU power (W)</th>");
}

void rm_results__html_power_cell(rm_buf *out, const struct html_power *hp, const struct report *r,
				 const char *model)
{
	const rm_hseries *s;
	double min = INFINITY, max = -INFINITY, span;
	rm_hpoint x, last = {0};
	size_t n = 0;

	if (!hp)
		return;
	/* the page's cells are written "</td><td>content": this one too */
	rm_buf_addstr(out, "</td><td class=\"plot\" data-label=\"GPU power (W)\">");
	s = rm_history_find(hp->p, model, POWER_METRIC, "", "", "", NULL, "");
	for (size_t i = 0; s && i < s->n; i++)
		if (power_point(r, hp->p, &s->p[i], &x)) {
			min = fmin(min, x.mean);
			max = fmax(max, x.mean);
			last = x;
			n++;
		}
	if (!n)
		return;
	span = max - min > 0 ? max - min : fabs(max) > 0 ? fabs(max) * 0.1 : 1;
#define PY(v) (PH - 10 - ((v)-min) / span * (PH - 18) + 2)
	rm_buf_addstr(out, "<svg class=\"trend power\" data-model=\"");
	rm_text_html(out, model);
	rm_buf_addf(out, "\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\"><title>",
		    PW, PH, PW, PH);
	rm_text_html(out, model);
	rm_buf_addf(out, " " POWER_METRIC ": %zu runs, min %.4g W, max %.4g W</title>", n, min,
		    max);
	if (n > 1) {
		rm_buf_addstr(out, "<polyline style=\"stroke:#bc4c00\" points=\"");
		for (size_t i = 0; i < s->n; i++)
			if (power_point(r, hp->p, &s->p[i], &x))
				rm_buf_addf(out, "%.1f,%.1f ", rm_results__html_x(r, &x),
					    PY(x.mean));
		rm_buf_addstr(out, "\"/>");
	}
	rm_buf_addf(out, "<circle style=\"fill:#bc4c00\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\"/>",
		    rm_results__html_x(r, &last), PY(last.mean));
	rm_buf_addf(out, "<text x=\"%d\" y=\"9\">%.4g</text><text x=\"%d\" y=\"%d\">%.4g</text>",
		    PW - 2, max, PW - 2, PH - 9, min);
	rm_buf_addstr(out, "</svg>");
#undef PY
	rm_buf_addf(out, "%s%.4g W",
		    r->latest_id && !strcmp(rm_history_run(r->h, last.run)->id, r->latest_id)
			? ""
			: "older run: ",
		    last.mean);
}
