/*
 * Two runs side by side (rm/compare.h): the metrics through the regression gate, then what
 * made them different (rm/provenance.h's diff). Built as JSON first; text and Markdown are
 * that JSON written out.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rm/compare.h"
#include "rm/provenance.h"
#include "rm/text.h"
#include "rm/util.h"

const rm_choice rm_compare_formats[] = {{"text", RM_COMPARE_TEXT},
					{"markdown", RM_COMPARE_MARKDOWN},
					{"json", RM_COMPARE_JSON},
					{NULL, 0}};

/* The mean of A's SUCCESS values of a key (the last attempt of each run), NAN when none. */
static double a_mean(const rm_results *a, const rm_change *c)
{
	double sum = 0;
	size_t n = 0;

	for (size_t i = 0; a && i < a->n; i++) {
		const rm_result *r = &a->rows[i];
		if (r->retried || !isfinite(r->performance) ||
		    rm_status_of(r->col[RM_COL_STATUS]) != RM_STATUS_SUCCESS ||
		    strcmp(r->col[RM_COL_MODEL], c->model) ||
		    strcmp(r->col[RM_COL_METRIC], c->metric) ||
		    strcmp(r->col[RM_COL_DOCKERFILE], c->docker_file) ||
		    strcmp(r->col[RM_COL_CONFIG_KEY], c->config_key ? c->config_key : ""))
			continue;
		sum += r->performance;
		n++;
	}
	return n ? sum / (double)n : NAN;
}

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *metrics_json(const rm_compare_opts *o, const rm_gate *g, rm_compare_result *res)
{
	json_t *list = json_array();

	for (size_t i = 0; i < g->n; i++) {
		const rm_change *c = &g->v[i];
		double av = a_mean(o->a, c);
		double pct = isfinite(av) && av != 0 && isfinite(c->mean)
				 ? (c->mean - av) / fabs(av) * 100.0
				 : NAN;
		if (!c->metric[0] && !isfinite(av) && c->verdict != RM_VERDICT_FAILED)
			continue; /* a row without a figure that did not fail: nothing to compare */
		json_array_append_new(
		    list,
		    json_pack("{s:s, s:s, s:s, s:o, s:o, s:o, s:s, s:s, s:o}", "model", c->model,
			      "metric", c->metric, "docker_file", c->docker_file, "a",
			      num_or_null(av), "b", num_or_null(c->mean), "change_pct",
			      num_or_null(pct), "verdict", rm_verdict_name(c->verdict), "note",
			      c->note ? c->note : "", "noise_pct", num_or_null(c->noise_pct)));
		res->n_metrics++;
		res->n_regressions += c->verdict == RM_VERDICT_REGRESSION;
	}
	return list;
}

/* A run's provenance, with its rows' columns for the models that have none. */
static json_t *with_rows(const json_t *prov, const rm_results *rows)
{
	static const struct {
		int col;
		const char *group;
	} cols[] = {{RM_COL_DOCKER_SHA, "image"},
		    {RM_COL_IMAGE, "image"},
		    {RM_COL_BASE_DOCKER, "image"},
		    {RM_COL_ARGS, "arguments"},
		    {RM_COL_TUNABLEOP, "arguments"},
		    {RM_COL_NGPUS, "arguments"},
		    {RM_COL_RUN_OPTIONS, "arguments"},
		    {RM_COL_MACHINE, "host"},
		    {RM_COL_ARCH, "host"},
		    {RM_COL_GIT_COMMIT, "host"}};
	json_t *out = prov ? json_deep_copy(prov) : json_object();

	for (size_t i = 0; rows && i < rows->n; i++) {
		const rm_result *r = &rows->rows[i];
		char *key = rm_xasprintf("%s\t%s", r->col[RM_COL_MODEL], r->col[RM_COL_DOCKERFILE]);
		json_t *scope = json_object_get(out, key);
		free(key);
		if (r->retried || (scope && !json_object_get(scope, "from_rows")))
			continue;
		for (size_t k = 0; k < sizeof(cols) / sizeof(cols[0]); k++) {
			char *name = rm_xasprintf("perf.csv:%s", rm_perf_header[cols[k].col]);
			if (r->col[cols[k].col][0])
				rm_provenance_put(out, r->col[RM_COL_MODEL],
						  r->col[RM_COL_DOCKERFILE], cols[k].group, name,
						  r->col[cols[k].col]);
			free(name);
		}
		key = rm_xasprintf("%s\t%s", r->col[RM_COL_MODEL], r->col[RM_COL_DOCKERFILE]);
		if ((scope = json_object_get(out, key)))
			json_object_set_new(scope, "from_rows", json_true());
		free(key);
	}
	return out;
}

/* Whether two rows are one model's metric from one Dockerfile. */
static int same_metric(const rm_result *x, const rm_result *y)
{
	return !strcmp(x->col[RM_COL_MODEL], y->col[RM_COL_MODEL]) &&
	       !strcmp(x->col[RM_COL_METRIC], y->col[RM_COL_METRIC]) &&
	       !strcmp(x->col[RM_COL_DOCKERFILE], y->col[RM_COL_DOCKERFILE]);
}

/*
 * B's rows with A's configurations: two runs put side by side pair a model's metric even where
 * their configurations differ (an environment variable, --tunableop), B judged in A's series;
 * what differs is listed under the differences. Where A holds the model's metric in B's
 * configuration, or in several (a sweep, compared point by point), B's key stays. The rows'
 * strings stay A's and B's; the array is the caller's to free.
 */
static rm_results b_in_a_series(const rm_results *a, const rm_results *b)
{
	rm_results out = *b;

	out.rows = rm_xcalloc(b->n ? b->n : 1, sizeof(*out.rows));
	for (size_t i = 0; i < b->n; i++) {
		rm_result *r = &out.rows[i];
		const char *key = NULL;
		int own = 0, several = 0;

		*r = b->rows[i];
		for (size_t k = 0; a && k < a->n && !own; k++) {
			const rm_result *q = &a->rows[k];
			if (!same_metric(q, r))
				continue;
			own = !strcmp(q->col[RM_COL_CONFIG_KEY], r->col[RM_COL_CONFIG_KEY]);
			several |= key && strcmp(key, q->col[RM_COL_CONFIG_KEY]);
			key = q->col[RM_COL_CONFIG_KEY];
		}
		if (key && !own && !several)
			r->col[RM_COL_CONFIG_KEY] = key;
	}
	return out;
}

static json_t *compare_json(const rm_compare_opts *o, rm_compare_result *res)
{
	rm_gate_opts go = o->gate ? *o->gate : (rm_gate_opts)RM_GATE_OPTS_INIT;
	rm_gate g;
	json_t *pa = with_rows(o->prov_a, o->a), *pb = with_rows(o->prov_b, o->b), *diff, *out;

	rm_results b = b_in_a_series(o->a, o->b);

	go.enforce = 0;
	rm_gate_eval(&b, o->history, &go, &g);
	diff = rm_provenance_diff(pa, pb, &res->n_differences);
	out = json_pack("{s:s?, s:s?, s:s?, s:o, s:o, s:s}", "a", o->a_id, "b", o->b_id, "source",
			o->source, "metrics", metrics_json(o, &g, res), "differences", diff, "rule",
			g.rule ? g.rule : "");
	rm_gate_release(&g);
	free(b.rows);
	json_decref(pa);
	json_decref(pb);
	return out;
}

static const char *str(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

static void compare_fmt_num(char *buf, size_t size, const json_t *v, const char *f)
{
	if (json_is_number(v))
		snprintf(buf, size, f, json_number_value(v));
	else
		snprintf(buf, size, "-");
}

/* "model [Dockerfile]" of a difference, "(the host)" for the run's own. */
static char *scope_name(const json_t *d)
{
	if (!str(d, "model")[0])
		return rm_xstrdup("(the host)");
	return str(d, "docker_file")[0]
		   ? rm_xasprintf("%s [%s]", str(d, "model"), str(d, "docker_file"))
		   : rm_xstrdup(str(d, "model"));
}

static void write_text(FILE *out, const json_t *j, int md)
{
	const json_t *m, *list, *d;
	const char *g;
	size_t i, k;

	fprintf(out, md ? "## run %s → run %s\n\n" : "run %s -> run %s", str(j, "a"), str(j, "b"));
	if (!md)
		fprintf(out, " (%s)\n\n", str(j, "source"));
	fprintf(
	    out,
	    md ? "| model | metric | %s | %s | change | verdict |\n|---|---|---:|---:|---:|---|\n"
	       : "metrics (%s -> %s; the verdict is the gate's, with the noise of the history "
		 "up to the first run):\n",
	    str(j, "a"), str(j, "b"));
	json_array_foreach (json_object_get(j, "metrics"), i, m) {
		char a[32], b[32], c[32];
		compare_fmt_num(a, sizeof(a), json_object_get(m, "a"), "%.6g");
		compare_fmt_num(b, sizeof(b), json_object_get(m, "b"), "%.6g");
		compare_fmt_num(c, sizeof(c), json_object_get(m, "change_pct"), "%+.2f%%");
		fprintf(out,
			md ? "| %s | %s | %s | %s | %s | %s: %s |\n"
			   : "  %s %s: %s -> %s (%s): %s: %s\n",
			str(m, "model"), str(m, "metric")[0] ? str(m, "metric") : "(no figure)", a,
			b, c, str(m, "verdict"), str(m, "note"));
	}
	fprintf(out, md ? "\n### What differs\n" : "\nwhat differs:\n");
	if (!json_object_size(json_object_get(j, "differences")))
		fprintf(out, md ? "\nnothing recorded differs\n" : "  nothing recorded differs\n");
	json_object_foreach (json_object_get(j, "differences"), g, list) {
		fprintf(out, md ? "\n**%s**\n\n" : "  %s:\n", g);
		json_array_foreach (list, k, d) {
			char *who = scope_name(d);
			const char *a = json_string_value(json_object_get(d, "a"));
			const char *b = json_string_value(json_object_get(d, "b"));
			fprintf(out, md ? "- %s `%s`: `%s` → `%s`\n" : "    %s %s: %s -> %s\n", who,
				str(d, "name"), a ? a : "(none)", b ? b : "(none)");
			free(who);
		}
	}
}

int rm_compare_write(FILE *out, const rm_compare_opts *o, rm_compare_result *res, rm_error *err)
{
	json_t *j;

	memset(res, 0, sizeof(*res));
	j = compare_json(o, res);
	if (o->format == RM_COMPARE_JSON) {
		char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fprintf(out, "%s\n", s ? s : "{}");
		free(s);
	} else {
		write_text(out, j, o->format == RM_COMPARE_MARKDOWN);
	}
	json_decref(j);
	if (fflush(out) != 0 || ferror(out))
		return rm_error_sys(err, RM_ERR_IO, errno, "cannot write the comparison");
	return 0;
}
