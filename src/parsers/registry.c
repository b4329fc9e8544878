/*
 * The parser table and the result helpers every parser uses. Adding a workload format is one
 * new file and one line in rm_parsers[].
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "parse_util.h"
#include "rm/parser.h"
#include "rm/util.h"

const rm_parser_ops *const rm_parsers[] = {
    &rm_parser_generic, &rm_parser_llm_foundry, &rm_parser_megatron, &rm_parser_torchtitan,
    &rm_parser_mlperf,	&rm_parser_hf_trainer,	&rm_parser_auto,     NULL,
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
	if (!ops)
		return -1;
	p->ops = ops;
	p->state = ops->init(cfg ? cfg : &def);
	return 0;
}

void rm_parser_feed(rm_parser *p, const char *line, size_t len)
{
	if (p->ops && p->state)
		p->ops->feed_line(p->state, line, len);
}

void rm_parser_finish(rm_parser *p, rm_parse_result *out)
{
	if (p->ops && p->state)
		p->ops->finish(p->state, out);
}

void rm_parser_stop(rm_parser *p)
{
	if (p->ops && p->state)
		p->ops->free(p->state);
	p->state = NULL;
	p->ops = NULL;
}

void rm_result_add(rm_parse_result *r, const char *name, double value, const char *unit, long step,
		   const char *aggregate)
{
	rm_metric *m;

	if (!isfinite(value))
		return;
	r->metrics = rm_xrealloc(r->metrics, (r->n + 1) * sizeof(*r->metrics));
	m = &r->metrics[r->n++];
	m->name = rm_xstrdup(name ? name : "");
	m->value = value;
	m->unit = rm_xstrdup(unit ? unit : "");
	m->step = step;
	m->aggregate = rm_xstrdup(aggregate ? aggregate : "last");
}

void rm_result_set_performance(rm_parse_result *r, double value, const char *metric)
{
	if (!isfinite(value))
		return;
	free(r->performance_metric);
	r->performance_metric = rm_xstrdup(metric ? metric : "");
	r->performance = value;
	r->has_performance = 1;
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
	memset(r, 0, sizeof(*r));
}
