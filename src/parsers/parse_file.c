/*
 * rm_parse_file(): stream a log file through a parser and print the findings (the engine of
 * `run_models parse`, the golden tests and the benchmark).
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "parse_util.h"
#include "rm/parser.h"
#include "rm/util.h"

#define CHUNK (64 * 1024)

static void on_line(void *ud, const char *line, size_t len, int kind)
{
	rm_parser_feed_split(ud, line, len, kind);
}

/* Splits the stream exactly as the runner does (rm_lines at RM_PARSER_LINE_MAX); the end of
 * the file is the end of the output, so its last line counts whether or not '\n' ends it. */
static int feed_stream(FILE *f, rm_parser *p)
{
	char *buf = rm_xmalloc(CHUNK);
	rm_lines lines;
	size_t got;
	int rc = 0;

	rm_lines_init(&lines, RM_PARSER_LINE_MAX);
	while ((got = fread(buf, 1, CHUNK, f)) > 0)
		rm_lines_feed(&lines, buf, got, on_line, p);
	if (ferror(f))
		rc = -1;
	else
		rm_lines_flush(&lines, on_line, p);
	rm_lines_release(&lines);
	free(buf);
	return rc;
}

static void print_value(FILE *out, double v)
{
	fprintf(out, "%.10g", v);
}

/* CSV field: quoted only when it holds a separator, quote or line break. */
static void csv_field(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

void rm_parse_result_write_csv(const rm_parse_result *r, FILE *out)
{
	fputs("metric,value,unit,step,aggregate\n", out);
	for (size_t i = 0; i < r->n; i++) {
		const rm_metric *m = &r->metrics[i];
		csv_field(out, m->name);
		fputc(',', out);
		print_value(out, m->value);
		fputc(',', out);
		csv_field(out, m->unit);
		fputc(',', out);
		if (m->step >= 0)
			fprintf(out, "%ld", m->step);
		fputc(',', out);
		csv_field(out, m->aggregate);
		fputc('\n', out);
	}
	if (r->has_performance) {
		fputs("performance,", out);
		print_value(out, r->performance);
		fputc(',', out);
		csv_field(out, r->performance_metric ? r->performance_metric : "");
		fputs(",,", out);
		csv_field(out, r->performance_aggregate ? r->performance_aggregate : "last");
		fputc('\n', out);
	}
}

void rm_parse_result_write_json(const rm_parse_result *r, const char *parser, FILE *out)
{
	json_t *root = json_object(), *arr = json_array();

	json_object_set_new(root, "parser", json_string(parser ? parser : ""));
	if (r->has_performance) {
		json_t *p = json_object();
		json_object_set_new(p, "value", json_real(r->performance));
		json_object_set_new(
		    p, "metric", json_string(r->performance_metric ? r->performance_metric : ""));
		json_object_set_new(
		    p, "aggregate",
		    json_string(r->performance_aggregate ? r->performance_aggregate : "last"));
		json_object_set_new(root, "performance", p);
	} else {
		json_object_set_new(root, "performance", json_null());
	}
	json_object_set_new(root, "problem", r->problem ? json_string(r->problem) : json_null());
	json_object_set_new(root, "warmup_steps_dropped", json_integer(r->warmup_dropped));
	for (size_t i = 0; i < r->n; i++) {
		const rm_metric *m = &r->metrics[i];
		json_t *o = json_object();
		json_object_set_new(o, "metric", json_string(m->name));
		json_object_set_new(o, "value", json_real(m->value));
		json_object_set_new(o, "unit", json_string(m->unit));
		json_object_set_new(o, "step", m->step >= 0 ? json_integer(m->step) : json_null());
		json_object_set_new(o, "aggregate", json_string(m->aggregate));
		json_array_append_new(arr, o);
	}
	json_object_set_new(root, "metrics", arr);
	json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	fputc('\n', out);
	json_decref(root);
}

int rm_parse_path(const char *path, rm_parser *p, rm_parse_result *out, rm_error *err)
{
	FILE *f = fopen(path, "rb");
	int rc;

	if (!f)
		return rm_error_sys(err, RM_ERR_IO, errno, "cannot open '%s'", path);
	rc = feed_stream(f, p);
	fclose(f);
	if (rc < 0)
		return rm_error_set(err, RM_ERR_IO, "cannot read '%s'", path);
	rm_parser_finish(p, out);
	return 0;
}

int rm_parse_file(const char *path, const char *name, const rm_parser_config *cfg, FILE *out,
		  int format, const char **chosen, rm_error *err)
{
	rm_parser p;
	rm_parse_result r = {0};
	const rm_parser_ops *eff;
	int rc;

	if (rm_parser_start(&p, name, cfg) < 0)
		return rm_error_set(err, RM_ERR_USAGE,
				    "unknown parser '%s' (see 'run_models parse --help')", name);
	if (rm_parse_path(path, &p, &r, err) < 0) {
		rm_parser_stop(&p);
		return -1;
	}
	eff = rm_parser_effective(&p);
	if (chosen)
		*chosen = eff ? eff->name : NULL;
	if (out) {
		if (format == RM_PARSE_JSON)
			rm_parse_result_write_json(&r, eff ? eff->name : "", out);
		else
			rm_parse_result_write_csv(&r, out);
	}
	rc = r.has_performance ? 0 : 1;
	rm_parse_result_release(&r);
	rm_parser_stop(&p);
	return rc;
}
