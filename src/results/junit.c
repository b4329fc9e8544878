/*
 * JUnit XML through libxml2's xmlTextWriter (escaping, well-formedness); text is cleaned
 * first (rm_text_clean) because XML 1.0 cannot carry most control characters at all.
 */
#include <libxml/xmlwriter.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rm/detect.h"
#include "rm/config.h"
#include "rm/gate.h"
#include "rm/junit.h"
#include "rm/metrics.h"
#include "rm/results.h"
#include "rm/text.h"
#include "rm/util.h"

#define TEXT_MAX ((size_t)4 << 20)

struct jw {
	xmlTextWriterPtr w;
	int failed;
};

static const xmlChar *X(const char *s)
{
	return (const xmlChar *)s;
}

static void junit_start(struct jw *j, const char *name)
{
	if (xmlTextWriterStartElement(j->w, X(name)) < 0)
		j->failed = 1;
}

static void end(struct jw *j)
{
	if (xmlTextWriterEndElement(j->w) < 0)
		j->failed = 1;
}

static void attr(struct jw *j, const char *name, const char *value)
{
	rm_buf b = RM_BUF_INIT(TEXT_MAX);
	rm_text_clean(&b, value ? value : "", value ? strlen(value) : 0);
	if (xmlTextWriterWriteAttribute(j->w, X(name), X(rm_buf_str(&b))) < 0)
		j->failed = 1;
	rm_buf_release(&b);
}

static void attrf(struct jw *j, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void attrf(struct jw *j, const char *name, const char *fmt, ...)
{
	va_list ap;
	char *s;
	va_start(ap, fmt);
	s = rm_xvasprintf(fmt, ap);
	va_end(ap);
	attr(j, name, s);
	free(s);
}

static void text(struct jw *j, const char *s, size_t n)
{
	rm_buf b = RM_BUF_INIT(TEXT_MAX);
	rm_text_clean(&b, s, n);
	if (xmlTextWriterWriteString(j->w, X(rm_buf_str(&b))) < 0)
		j->failed = 1;
	rm_buf_release(&b);
}

static void property(struct jw *j, const char *name, const char *value)
{
	junit_start(j, "property");
	attr(j, "name", name);
	attr(j, "value", value);
	end(j);
}

static double secs(double v)
{
	return isfinite(v) && v > 0 ? v : 0;
}

/* Testcase names: the model and its configuration ("model[batch_size=8]"), plus the
 * Dockerfile when the model ran several, plus the repeat when it ran several times. */
static char *case_name(const rm_results *run, size_t i)
{
	const rm_result *r = &run->rows[i];
	int other_df = 0, same_df = 0;
	rm_config cfg = RM_CONFIG_INIT;
	char *model;

	if (rm_config_parse(&cfg, r->col[RM_COL_CONFIG]) < 0)
		rm_config_release(&cfg);
	model = rm_config_name(r->col[RM_COL_MODEL], &cfg);
	rm_config_release(&cfg);
	for (size_t k = 0; k < run->n; k++) {
		const rm_result *q = &run->rows[k];
		if (k == i || q->retried || strcmp(q->col[RM_COL_MODEL], r->col[RM_COL_MODEL]) ||
		    strcmp(q->col[RM_COL_CONFIG_KEY], r->col[RM_COL_CONFIG_KEY]))
			continue;
		if (strcmp(q->col[RM_COL_DOCKERFILE], r->col[RM_COL_DOCKERFILE]))
			other_df = 1;
		else
			same_df = 1;
	}
	const char *df = r->col[RM_COL_DOCKERFILE], *slash = strrchr(df, '/');
	rm_buf b = RM_BUF_INIT((size_t)1 << 16);
	rm_buf_addstr(&b, model);
	free(model);
	if (other_df)
		rm_buf_addf(&b, " [%s]", slash ? slash + 1 : df);
	if (same_df)
		rm_buf_addf(&b, " #%ld", r->repeat);
	return rm_buf_detach(&b);
}

/* A relative log path as the runner wrote it: from the current folder, else base_dir. */
static char *find_log(const char *log, const char *base_dir)
{
	if (!log[0])
		return NULL;
	if (log[0] == '/' || access(log, R_OK) == 0 || !base_dir)
		return rm_xstrdup(log);
	return rm_xasprintf("%s/%s", base_dir, log);
}

static void failure_body(struct jw *j, const rm_result *r, const rm_junit_opts *o)
{
	rm_buf b = RM_BUF_INIT(TEXT_MAX);
	char *log = find_log(r->col[RM_COL_LOG_FILE], o->base_dir);
	size_t lines = o->log_lines ? o->log_lines : 50;

	rm_buf_addstr(&b, r->col[RM_COL_REASON][0] ? r->col[RM_COL_REASON] : "failed");
	if (r->col[RM_COL_EXIT_CODE][0])
		rm_buf_addf(&b, " (exit code %s)", r->col[RM_COL_EXIT_CODE]);
	rm_buf_addch(&b, '\n');
	if (log) {
		rm_error e = RM_ERROR_INIT;
		rm_buf_addf(&b, "\nlast %zu lines of %s:\n", lines, log);
		if (rm_tail_lines(log, lines, (size_t)256 << 10, &b, &e) < 0)
			rm_buf_addf(&b, "(%s)\n", rm_error_text(&e));
	}
	text(j, b.data ? b.data : "", b.len);
	free(log);
	rm_buf_release(&b);
}

static void row_properties(struct jw *j, const rm_results *run, const rm_junit_opts *o)
{
	for (size_t i = 0; i < run->n; i++) {
		const rm_result *r = &run->rows[i];
		char *name, *k;
		if (r->retried) /* the attempt that counts has the properties */
			continue;
		name = case_name(run, i);
		if (r->col[RM_COL_PERFORMANCE][0]) {
			k = rm_xasprintf("%s.%s", name,
					 r->col[RM_COL_METRIC][0] ? r->col[RM_COL_METRIC]
								  : "performance");
			property(j, k, r->col[RM_COL_PERFORMANCE]);
			free(k);
		}
		if (r->col[RM_COL_RELATIVE_CHANGE][0]) {
			k = rm_xasprintf("%s.relative_change", name);
			property(j, k, r->col[RM_COL_RELATIVE_CHANGE]);
			free(k);
		}
		/* The parser's metrics of this model and repeat, from perf_<model>.csv. */
		for (size_t m = 0; o->metrics && m < o->metrics->n; m++) {
			const rm_metric_row *mr = &o->metrics->rows[m];
			char *v;
			if (strcmp(mr->model, r->col[RM_COL_MODEL]) || mr->repeat != r->repeat ||
			    strcmp(mr->run_id, r->col[RM_COL_RUN_ID]))
				continue;
			k = rm_xasprintf("%s.%s%s%s", name, mr->metric, mr->aggregate[0] ? "." : "",
					 mr->aggregate);
			v = rm_xasprintf("%.10g%s%s", mr->value, mr->unit[0] ? " " : "", mr->unit);
			property(j, k, v);
			free(k);
			free(v);
		}
		free(name);
	}
	for (size_t i = 0; o->gate && i < o->gate->n; i++) {
		const rm_change *c = &o->gate->v[i];
		char *k;
		if (!isfinite(c->change_pct) && c->verdict != RM_VERDICT_NONE)
			continue;
		k = rm_xasprintf("%s.%s.vs_baseline", c->name, c->metric);
		property(j, k, c->note ? c->note : "");
		free(k);
		/* Where the change judged started, and its size, for tools that read properties. */
		if (c->since.id[0] && c->verdict != RM_VERDICT_SAME) {
			char since[256], pct[32];
			rm_run_ref_text(&c->since, since, sizeof(since));
			k = rm_xasprintf("%s.%s.change_point", c->name, c->metric);
			property(j, k, since);
			free(k);
			snprintf(pct, sizeof(pct), "%+.2f", c->change_pct);
			k = rm_xasprintf("%s.%s.change_pct", c->name, c->metric);
			property(j, k, pct);
			free(k);
		}
	}
}

/* The testsuite's counts, time stamp and host. */
struct totals {
	char host[256], ts[32];
	size_t failures, skipped, tests;
	double time;
};

/* Whether a gate verdict gets a testcase of its own (a failed or skipped model has its
 * row's). */
static int gated_case(const rm_change *c)
{
	return c->verdict != RM_VERDICT_FAILED && c->verdict != RM_VERDICT_SKIPPED;
}

static void count(const rm_results *run, const rm_junit_opts *o, struct totals *t)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < run->n; i++) {
		const rm_result *r = &run->rows[i];
		t->time += secs(r->test_s);
		if (r->retried) /* its test case is the last attempt's */
			continue;
		t->tests++;
		t->failures += rm_status_of(r->col[RM_COL_STATUS]) == RM_STATUS_FAILURE;
		t->skipped += rm_status_of(r->col[RM_COL_STATUS]) == RM_STATUS_SKIPPED;
		if (r->col[RM_COL_TIMESTAMP][0] &&
		    (!t->ts[0] || strcmp(r->col[RM_COL_TIMESTAMP], t->ts) < 0))
			snprintf(t->ts, sizeof(t->ts), "%s", r->col[RM_COL_TIMESTAMP]);
		if (!t->host[0] && r->col[RM_COL_MACHINE][0])
			snprintf(t->host, sizeof(t->host), "%s", r->col[RM_COL_MACHINE]);
	}
	for (size_t i = 0; o->gate && o->gate->enforce && i < o->gate->n; i++) {
		const rm_change *c = &o->gate->v[i];
		if (!gated_case(c))
			continue;
		t->tests++;
		t->failures += c->verdict == RM_VERDICT_REGRESSION && c->threshold >= 0;
		t->skipped += c->verdict == RM_VERDICT_NONE || c->verdict == RM_VERDICT_UNKNOWN ||
			      c->threshold < 0;
	}
	if (o->hostname)
		snprintf(t->host, sizeof(t->host), "%s", o->hostname);
	if (!t->host[0] && gethostname(t->host, sizeof(t->host) - 1) != 0)
		t->host[0] = '\0';
	if (!t->host[0])
		snprintf(t->host, sizeof(t->host), "localhost");
	if (!t->ts[0])
		rm_utc_timestamp(t->ts, sizeof(t->ts));
	/* Ant's schema wants a time without a zone (it is UTC). */
	t->ts[strcspn(t->ts, "Z")] = '\0';
}

/* <testsuite ...> and its <properties>. */
static void suite_head(struct jw *j, const rm_results *run, const rm_junit_opts *o,
		       const char *suite, const struct totals *t)
{
	junit_start(j, "testsuite");
	attr(j, "name", suite);
	attr(j, "package", suite);
	attr(j, "id", "0");
	attr(j, "timestamp", t->ts);
	attr(j, "hostname", t->host);
	attrf(j, "tests", "%zu", t->tests);
	attrf(j, "failures", "%zu", t->failures);
	attr(j, "errors", "0");
	attrf(j, "skipped", "%zu", t->skipped);
	attrf(j, "time", "%.3f", t->time);
	junit_start(j, "properties");
	if (run->n) {
		const rm_result *r = &run->rows[0];
		property(j, "run_id", r->col[RM_COL_RUN_ID]);
		property(j, "git_commit", r->col[RM_COL_GIT_COMMIT]);
		property(j, "machine_name", r->col[RM_COL_MACHINE]);
		property(j, "gpu_architecture", r->col[RM_COL_ARCH]);
	}
	if (o->gate) {
		char v[64];
		property(j, "regression_rule", o->gate->rule);
		snprintf(v, sizeof(v), "%.2f", o->gate->threshold_pct);
		property(j, "regression_threshold_pct", v);
		property(j, "regression_gate", o->gate->enforce ? "on" : "off");
	}
	row_properties(j, run, o);
	end(j);
}

/* The earlier attempts of row i (run --retries), as Maven Surefire writes reruns: a test
 * that passed on a later attempt is flaky, each failed attempt a <flakyFailure>; one that
 * failed every attempt has a <rerunFailure> for each before the last. */
static void attempts(struct jw *j, const rm_results *run, size_t i, const rm_junit_opts *o)
{
	const rm_result *last = &run->rows[i];
	int passed = rm_status_of(last->col[RM_COL_STATUS]) == RM_STATUS_SUCCESS;

	for (size_t k = 0; k < i; k++) {
		const rm_result *a = &run->rows[k];
		if (!a->retried || !rm_result_retries(a, last))
			continue;
		junit_start(j, passed ? "flakyFailure" : "rerunFailure");
		attr(j, "message", a->col[RM_COL_REASON][0] ? a->col[RM_COL_REASON] : "failed");
		attr(j, "type", a->col[RM_COL_STATUS]);
		junit_start(j, "stackTrace");
		failure_body(j, a, o);
		end(j);
		end(j);
	}
}

/* One testcase per perf.csv row (the last attempt's, when a run was tried again). */
static void row_cases(struct jw *j, const rm_results *run, const rm_junit_opts *o,
		      const char *suite)
{
	for (size_t i = 0; i < run->n; i++) {
		const rm_result *r = &run->rows[i];
		const char *st = r->col[RM_COL_STATUS];
		char *name;
		if (r->retried)
			continue;
		name = case_name(run, i);
		junit_start(j, "testcase");
		attr(j, "name", name);
		attr(j, "classname", suite);
		attrf(j, "time", "%.3f", secs(r->test_s));
		if (rm_status_of(st) == RM_STATUS_FAILURE) {
			junit_start(j, "failure");
			attr(j, "type", rm_status_name(RM_STATUS_FAILURE));
			attr(j, "message",
			     r->col[RM_COL_REASON][0] ? r->col[RM_COL_REASON] : "failed");
			failure_body(j, r, o);
			end(j);
		} else if (rm_status_of(st) == RM_STATUS_SKIPPED) {
			junit_start(j, "skipped");
			attr(j, "message", r->col[RM_COL_REASON]);
			end(j);
		}
		if (r->attempt > 1)
			attempts(j, run, i, o);
		end(j);
		free(name);
	}
}

/* With the gate on: one testcase per gated model and metric. */
static void gate_cases(struct jw *j, const rm_gate *g, const char *suite)
{
	char *cls = rm_xasprintf("%s.regression", suite);

	for (size_t i = 0; g && g->enforce && i < g->n; i++) {
		const rm_change *c = &g->v[i];
		char *name;
		if (!gated_case(c))
			continue;
		name = rm_xasprintf("%s %s vs baseline", c->name, c->metric);
		junit_start(j, "testcase");
		attr(j, "name", name);
		attr(j, "classname", cls);
		attr(j, "time", "0.000");
		if (c->threshold < 0) {
			junit_start(j, "skipped");
			attr(j, "message", "not gated by its suite entry");
			end(j);
		} else if (c->verdict == RM_VERDICT_REGRESSION) {
			junit_start(j, "failure");
			attr(j, "type", "regression");
			attr(j, "message", c->note);
			text(j, c->note, strlen(c->note));
			end(j);
		} else if (c->verdict == RM_VERDICT_NONE || c->verdict == RM_VERDICT_UNKNOWN) {
			junit_start(j, "skipped");
			attr(j, "message", c->note);
			end(j);
		}
		end(j);
		free(name);
	}
	free(cls);
}

static void suite_tail(struct jw *j, const rm_results *run, const rm_gate *g,
		       const struct totals *t)
{
	rm_buf b = RM_BUF_INIT(TEXT_MAX);

	junit_start(j, "system-out");
	rm_buf_addf(&b, "%zu results, %zu failed, %zu skipped", run->n, t->failures, t->skipped);
	if (g)
		rm_buf_addf(&b, "; %zu compared with a baseline, %zu regression(s)\n%s",
			    g->n_compared, g->n_regressions, g->rule);
	text(j, b.data ? b.data : "", b.len);
	rm_buf_release(&b);
	end(j);
	junit_start(j, "system-err");
	end(j);
}

int rm_junit_write(const char *path, const rm_results *run, const rm_junit_opts *o, rm_error *err)
{
	const char *suite = o->suite ? o->suite : "run_models";
	xmlBufferPtr buf = xmlBufferCreate();
	struct jw j = {NULL, 0};
	struct totals t;
	int ret = -1;

	if (!buf)
		return rm_error_set(err, RM_ERR_INTERNAL, "out of memory");
	j.w = xmlNewTextWriterMemory(buf, 0);
	if (!j.w) {
		xmlBufferFree(buf);
		return rm_error_set(err, RM_ERR_INTERNAL, "cannot start an XML writer");
	}
	xmlTextWriterSetIndent(j.w, 1);
	xmlTextWriterSetIndentString(j.w, X("  "));
	count(run, o, &t);
	if (xmlTextWriterStartDocument(j.w, NULL, "UTF-8", NULL) < 0)
		j.failed = 1;
	junit_start(&j, "testsuites");
	suite_head(&j, run, o, suite, &t);
	row_cases(&j, run, o, suite);
	gate_cases(&j, o->gate, suite);
	suite_tail(&j, run, o->gate, &t);
	end(&j); /* testsuite */
	end(&j); /* testsuites */
	if (xmlTextWriterEndDocument(j.w) < 0)
		j.failed = 1;
	xmlFreeTextWriter(j.w); /* flushes into buf */
	if (j.failed)
		rm_error_set(err, RM_ERR_INTERNAL, "cannot write JUnit XML for '%s'", path);
	else
		ret = rm_write_text_file(path, (const char *)xmlBufferContent(buf),
					 (size_t)xmlBufferLength(buf), 0, err);
	xmlBufferFree(buf);
	return ret;
}
