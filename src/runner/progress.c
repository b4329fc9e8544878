/*
 * Progress goes to stderr, never into the logs: on a terminal one status line redrawn in
 * place (unless the output itself is streamed there), elsewhere (CI) a plain line every
 * --progress-interval seconds. The status line is cut to the terminal's width (a line that
 * wraps cannot be redrawn in place: each redraw would leave a row behind), and every message
 * of the runner clears it first (rm_log_set_before) so that none is printed after it.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

static int status_shown; /* the status line is on the terminal */

void rm_runner__progress_clear(void)
{
	if (!status_shown)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	status_shown = 0;
}

static void fmt_duration(char *buf, size_t size, double s)
{
	long t = s < 0 ? 0 : (long)s;
	if (t >= 3600)
		snprintf(buf, size, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(buf, size, "%ld:%02ld", t / 60, t % 60);
}

/* Appends "  step N/M", the latest throughput and the ETA when the parser knows them. */
static size_t add_parse_progress(char *line, size_t size, size_t n, double elapsed, double timeout,
				 const rm_parse_progress *pp)
{
	if (!pp)
		return n;
	if (pp->step >= 0 && n < size) {
		if (pp->total_steps > 0)
			n += (size_t)snprintf(line + n, size - n, "  step %ld/%ld", pp->step,
					      pp->total_steps);
		else
			n += (size_t)snprintf(line + n, size - n, "  step %ld", pp->step);
	}
	if (pp->throughput >= 0 && n < size)
		n += (size_t)snprintf(line + n, size - n, "  %.6g %s", pp->throughput,
				      pp->throughput_metric ? pp->throughput_metric : "");
	if (timeout >= 0 && pp->step > 0 && pp->total_steps > pp->step && n < size) {
		char eta[32];
		fmt_duration(eta, sizeof(eta),
			     elapsed / (double)pp->step * (double)(pp->total_steps - pp->step));
		n += (size_t)snprintf(line + n, size - n, "  ETA %s", eta);
	}
	return n;
}

void rm_runner__progress_line(struct run *r, const char *model, const char *what, double elapsed,
			      double timeout, const rm_parse_progress *pp, int final)
{
	char el[32], to[32] = "", line[512];
	size_t n;

	if (!r->progress_mode)
		return;
	if (r->progress_mode == 1 && final) {
		rm_runner__progress_clear();
		return;
	}
	if (final)
		return;
	fmt_duration(el, sizeof(el), elapsed);
	if (timeout > 0) {
		to[0] = '/';
		fmt_duration(to + 1, sizeof(to) - 1, timeout);
	}
	n = (size_t)snprintf(line, sizeof(line), "[%s] %s %s%s", model, what, el, to);
	add_parse_progress(line, sizeof(line), n, elapsed, timeout, pp);
	if (r->progress_mode == 1) {
		/* one column spare: a line that fills the last column wraps on some terminals */
		int width = rm_term_width(stderr);
		size_t keep = width > 1 ? rm_text_clip(line, (size_t)width - 1) : strlen(line);
		fprintf(stderr, "\r\033[K%.*s", (int)keep, line);
		status_shown = 1;
	} else
		fprintf(stderr, "run_models: %s\n", line);
	fflush(stderr);
}
