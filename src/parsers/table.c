/*
 * The parser table, the feeding rules of rm/parser.h (pieces of over-long lines, the final
 * fragment) and the result helpers every parser uses. Adding a workload format is one new
 * file and one row (with its extern) here.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "parse_util.h"
#include "rm/parser.h"
#include "rm/util.h"

extern const rm_parser_ops rm_parser_llm_foundry;
extern const rm_parser_ops rm_parser_megatron;
extern const rm_parser_ops rm_parser_nemo;
extern const rm_parser_ops rm_parser_torchtitan;
extern const rm_parser_ops rm_parser_mlperf;
extern const rm_parser_ops rm_parser_hf_trainer;

/* Order matters for "auto": on equal scores the earlier row wins (generic loses every tie). */
const rm_parser_ops *const rm_parsers[] = {
    &rm_parser_generic,	   &rm_parser_llm_foundry, &rm_parser_megatron,
    &rm_parser_nemo,	   &rm_parser_torchtitan,  &rm_parser_mlperf,
    &rm_parser_hf_trainer, &rm_parser_auto,	   NULL,
};

const rm_parser_ops *rm_parser_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; rm_parsers[i]; i++)
		if (!strcmp(rm_parsers[i]->name, name))
			return rm_parsers[i];
	return NULL;
}

int rm_parser_start(rm_parser *p, const char *name, const rm_parser_config *cfg)
{
	const rm_parser_ops *ops = rm_parser_find(name);
	rm_parser_config def = {RM_PARSER_WARMUP_DEFAULT};

	p->ops = NULL;
	p->state = NULL;
	p->in_piece = 0;
	if (!ops)
		return -1;
	p->ops = ops;
	p->state = ops->init(cfg ? cfg : &def);
	return 0;
}

/*
 * Hands over the whole text of s[0..len): when head_cut, the text up to and including the
 * first '\r' is the tail of an update whose start was in an earlier piece; when tail_cut,
 * the text after the last '\r' is an update whose end is missing. Both are dropped.
 */
static void feed_whole(rm_parser *p, const char *s, size_t len, int head_cut, int tail_cut)
{
	if (head_cut) {
		const char *cr = memchr(s, '\r', len);
		if (!cr)
			return;
		len -= (size_t)(cr + 1 - s);
		s = cr + 1;
	}
	if (tail_cut) {
		while (len > 0 && s[len - 1] != '\r')
			len--;
		if (len == 0)
			return;
	}
	if (len)
		p->ops->feed_line(p->state, s, len);
}

/* The length of an unterminated last line without a number that runs into its very end:
 * `lm loss: 2` may be the start of `lm loss: 2.4774` (a run killed mid-write), while a
 * record that ends in anything else (`}}`, a unit, a metric name) is read whole. */
static size_t end_without_cut_number(const char *s, size_t len)
{
	if (!len || !((s[len - 1] >= '0' && s[len - 1] <= '9') || s[len - 1] == '.'))
		return len;
	while (len && ((s[len - 1] >= '0' && s[len - 1] <= '9') || strchr(".,eE+-", s[len - 1])))
		len--;
	return len;
}

void rm_parser_feed_split(rm_parser *p, const char *line, size_t len, int kind)
{
	int head_cut, tail_cut = kind == RM_LINE_PIECE;

	if (!p->ops || !p->state)
		return;
	head_cut = p->in_piece;
	p->in_piece = tail_cut;
	if (kind == RM_LINE_END) {
		len = end_without_cut_number(line, len);
		if (!len)
			return;
	}
	if (!head_cut && !tail_cut) {
		p->ops->feed_line(p->state, line, len);
		return;
	}
	feed_whole(p, line, len, head_cut, tail_cut);
}

void rm_parser_feed(rm_parser *p, const char *line, size_t len)
{
	rm_parser_feed_split(p, line, len, RM_LINE_WHOLE);
}

void rm_parser_feed_fragment(rm_parser *p, const char *line, size_t len)
{
	if (!p->ops || !p->state || len == 0)
		return;
	feed_whole(p, line, len, p->in_piece, 1);
	p->in_piece = 0;
}

void rm_parser_finish(rm_parser *p, rm_parse_result *out)
{
	if (!p->ops || !p->state)
		return;
	p->ops->finish(p->state, out);
	if (!out->has_performance && !out->problem)
		rm_result_set_problem(out, "parser '%s' found no performance figure", p->ops->name);
}

void rm_parser_stop(rm_parser *p)
{
	if (p->ops && p->state)
		p->ops->free(p->state);
	p->state = NULL;
	p->ops = NULL;
	p->in_piece = 0;
}

const rm_parser_ops *rm_parser_effective(const rm_parser *p)
{
	if (!p || !p->ops)
		return NULL;
	if (p->ops == &rm_parser_auto)
		return rm_parsers__auto_choice(p->state);
	return p->ops;
}

size_t rm_parser_explain(const rm_parser *p, rm_parser_candidate *out, size_t max)
{
	if (!p || p->ops != &rm_parser_auto || !p->state)
		return 0;
	return rm_parsers__auto_explain(p->state, out, max);
}

void rm_result_add(rm_parse_result *r, const char *name, double value, const char *unit, long step,
		   const char *aggregate)
{
	rm_metric *m;

	if (!isfinite(value))
		return;
	r->metrics = rm_xrealloc(r->metrics, (r->n + 1) * sizeof(*r->metrics));
	m = &r->metrics[r->n++];
	/* names and units come from the log: never a spreadsheet formula in a CSV */
	m->name = rm_cell_text(name ? name : "");
	m->value = value;
	m->unit = rm_cell_text(unit ? unit : "");
	m->step = step;
	m->aggregate = rm_xstrdup(aggregate ? aggregate : "last");
}

void rm_result_set_performance_agg(rm_parse_result *r, double value, const char *metric,
				   const char *aggregate)
{
	if (!isfinite(value)) {
		r->has_performance = 0;
		rm_result_set_problem(r, "performance value '%s' is not finite",
				      isnan(value) ? "nan"
				      : value > 0  ? "inf"
						   : "-inf");
		return;
	}
	free(r->performance_metric);
	free(r->performance_aggregate);
	free(r->problem);
	r->problem = NULL;
	r->performance_metric = rm_cell_text(metric ? metric : "");
	r->performance_aggregate = rm_xstrdup(aggregate ? aggregate : "last");
	r->performance = value;
	r->has_performance = 1;
}

void rm_result_set_performance(rm_parse_result *r, double value, const char *metric)
{
	rm_result_set_performance_agg(r, value, metric, "last");
}

void rm_result_set_problem(rm_parse_result *r, const char *fmt, ...)
{
	va_list ap;

	if (r->has_performance)
		return;
	free(r->problem);
	va_start(ap, fmt);
	r->problem = rm_xvasprintf(fmt, ap);
	va_end(ap);
}

void rm_parse_result_release(rm_parse_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++) {
		free(r->metrics[i].name);
		free(r->metrics[i].unit);
		free(r->metrics[i].aggregate);
	}
	free(r->metrics);
	free(r->performance_metric);
	free(r->performance_aggregate);
	free(r->problem);
	memset(r, 0, sizeof(*r));
}
