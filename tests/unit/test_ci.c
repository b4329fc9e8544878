/* Suite files, JUnit, run.json, the archive and the end-of-run step. */
#include <archive.h>
#include <archive_entry.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rm/archive.h"
#include "rm/config.h"
#include "rm/gate.h"
#include "rm/junit.h"
#include "rm/manifest.h"
#include "rm/provenance.h"
#include "rm/results.h"
#include "rm/text.h"
#include "rm/suite.h"
#include "rm/util.h"
#include "testfs.h"

static char *dir; /* the tests' files */

SETUP()
{
	dir = tfs_tmpdir("ci");
}

TEARDOWN()
{
	tfs_rm_tree(dir);
	free(dir);
}

static int load(const char *folder, const char *name, rm_suite *s, rm_error *err)
{
	char *p = rm_xasprintf("%s/%s", folder, name);
	int rc = rm_suite_load(p, s, err);
	free(p);
	return rc;
}

TEST(suite)
{
	rm_suite s;
	rm_error err = RM_ERROR_INIT;

	tfs_put(dir, "common.yaml",
		"defaults:\n"
		"  repeat: 2\n"
		"  timeout: 600\n"
		"  additional_context: {gpu_vendor: AMD, MAD_SYSTEM_NGPUS: 8}\n"
		"  regression: {fail_on_regression: 5, baseline: base/perf.csv}\n");
	tfs_put(dir, "nightly.yaml",
		"suite: nightly\n"
		"description: every night\n"
		"include: common.yaml\n"
		"defaults:\n"
		"  additional_context: {guest_os: UBUNTU}\n"
		"entries:\n"
		"  - tags: [llm, 'training:batch_size=8']\n"
		"    repeat: 5\n"
		"    regression: {fail_on_regression: 3}\n"
		"  - models: pyt_a, pyt_b\n"
		"    name: pair\n"
		"    additional_context: {MAD_SYSTEM_NGPUS: 4}\n"
		"    regression: {fail_on_regression: off}\n"
		"    timeout: 0\n");
	CHECK(load(dir, "nightly.yaml", &s, &err) == 0);
	if (err.msg[0])
		fprintf(stderr, "%s\n", err.msg);
	CHECK_STR(s.name, "nightly");
	CHECK_STR(s.description, "every night");
	CHECK(s.n == 2 && s.n_files == 2);
	CHECK(s.baseline && rm_ends_with(s.baseline, "/base/perf.csv"));
	if (s.n == 2) {
		rm_suite_entry *a = &s.entries[0], *b = &s.entries[1];
		CHECK(a->n_tags == 2 && !strcmp(a->tags[1], "training:batch_size=8"));
		CHECK_STR(a->name, "llm,training:batch_size=8");
		CHECK(a->repeat == 5 && a->timeout == 600 && a->fail_on_regression == 3);
		CHECK(a->line == 7);
		CHECK(json_integer_value(json_object_get(a->context, "MAD_SYSTEM_NGPUS")) == 8);
		CHECK_STR(json_string_value(json_object_get(a->context, "guest_os")), "UBUNTU");
		CHECK(b->n_models == 2 && !strcmp(b->models[1], "pyt_b") && b->n_tags == 0);
		CHECK_STR(b->name, "pair");
		CHECK(b->repeat == 2 && b->timeout == 0 && b->fail_on_regression < 0);
		CHECK(json_integer_value(json_object_get(b->context, "MAD_SYSTEM_NGPUS")) == 4);
		CHECK_STR(json_string_value(json_object_get(b->context, "gpu_vendor")), "AMD");
	}
	json_t *j = rm_suite_json(&s);
	CHECK(json_array_size(json_object_get(j, "entries")) == 2);
	json_decref(j);
	rm_suite_release(&s);

	/* Errors name the file, line, column and field. */
	static const struct {
		const char *text, *want;
	} bad[] = {
	    {"entries:\n  - tags: [a]\n    repeat: three\n",
	     "bad.yaml' line 3 column 13: entries[0].repeat: must be a whole number from 1 to "
	     "1000000, not three"},
	    /* issue 29: said as written, not "that" */
	    {"entries:\n  - tags: [a]\n    repeat: 2.5\n",
	     "entries[0].repeat: must be a whole number from 1 to 1000000, not 2.5"},
	    {"entries:\n  - tags: [a]\n    repaet: 2\n",
	     "bad.yaml' line 3 column 5: entries[0].repaet: unknown field"},
	    {"entries:\n  - repeat: 2\n", "line 2 column 5: entries[0]: needs tags or models"},
	    {"entries:\n  - tags: [a]\n    regression: {baseline: x.csv}\n",
	     "line 3 column 18: entries[0].regression.baseline: the baseline is one per suite"},
	    {"suite: x\n", "bad.yaml' line 1 column 1: entries: missing"},
	    {"entries:\n  - tags: [a]\n    timeout: -1\n",
	     "line 3 column 14: entries[0].timeout: must be a number >= 0"},
	    {"include: nothere.yaml\nentries: [{tags: a}]\n",
	     "bad.yaml' line 1 column 10: include: cannot open suite file"},
	    {"include: bad.yaml\nentries: [{tags: a}]\n", "includes itself"},
	    {"entries:\n  - tags: [a\n", "bad.yaml' line 3"},
	    {"- just a list\n", "a suite file is a mapping"},
	    {"a: &x 1\nb: *x\n", "alias"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		tfs_put(dir, "bad.yaml", bad[i].text);
		rm_error_clear(&err);
		CHECK(load(dir, "bad.yaml", &s, &err) == -1);
		if (!strstr(err.msg, bad[i].want))
			fprintf(stderr, "case %zu: got '%s'\n", i, err.msg);
		CHECK(strstr(err.msg, bad[i].want) != NULL);
		CHECK(err.kind == RM_ERR_INPUT || err.kind == RM_ERR_IO);
	}
	/* The name defaults to the file's. */
	tfs_put(dir, "weekly.yml", "entries: [{tags: all}]\n");
	CHECK(load(dir, "weekly.yml", &s, &err) == 0);
	CHECK_STR(s.name, "weekly");
	CHECK(s.entries[0].repeat == 1 && s.entries[0].timeout < 0 && !s.baseline);
	rm_suite_release(&s);
}

static void add(rm_results *r, const char *model, const char *perf, const char *status,
		const char *reason, const char *log, const char *repeat)
{
	const char *names[] = {"model",	   "metric",	   "performance",   "status",
			       "run_id",   "machine_name", "test_duration", "reason",
			       "log_file", "repeat",	   "timestamp",	    "docker_file"};
	const char *vals[] = {model,
			      "tokens/s",
			      perf,
			      status,
			      "run7",
			      "host",
			      "12.5",
			      reason,
			      log,
			      repeat,
			      "2024-05-01T02:03:04Z",
			      "docker/x.Dockerfile"};
	rm_results_add(r, names, vals, 12, "mem", 2);
}

struct names {
	char **v;
	size_t n;
	const rm_suite_entry *e;
};

static int collect_name(void *ctx, const size_t *values)
{
	struct names *x = ctx;
	char *name = rm_sweep_point_name(x->e->sweep, values, x->e->name);
	x->v = rm_strv_push(x->v, &x->n, name);
	free(name);
	return 0;
}

/* A sweep's points: in order (the first group outermost), zipped dimensions together, the
 * excluded ones left out, named after the entry; its bindings; its points in run.json's
 * entries. */
TEST(sweep)
{
	rm_suite s;
	rm_error err = RM_ERROR_INIT;
	struct names x = {NULL, 0, NULL};
	const rm_sweep *sw;
	rm_config c = RM_CONFIG_INIT;
	size_t values[4] = {1, 1, 0, 1};
	json_t *j;

	tfs_put(dir, "sweep.yaml",
		"entries:\n"
		"  - name: grid\n"
		"    models: [m]\n"
		"    sweep:\n"
		"      batch_size: [8, 16]\n"
		"      precision: [fp16, bf16]\n"
		"      env.NCCL_MIN_NCHANNELS: [16, 32]\n"
		"      tunableop: [on, off]\n"
		"      zip: [[batch_size, precision]]\n"
		"      exclude: [{batch_size: 8, tunableop: off}]\n");
	CHECK(load(dir, "sweep.yaml", &s, &err) == 0);
	sw = s.n ? s.entries[0].sweep : NULL;
	CHECK(sw && sw->n_dims == 4 && sw->n_groups == 3 && sw->raw == 8 && sw->n_points == 6);
	if (!sw)
		return;
	CHECK(sw->dims[0].bind == RM_SWEEP_ARG && !strcmp(sw->dims[0].target, "batch_size"));
	CHECK(sw->dims[1].bind == RM_SWEEP_PRECISION && sw->dims[1].group == sw->dims[0].group);
	CHECK(sw->dims[2].bind == RM_SWEEP_ENV &&
	      !strcmp(sw->dims[2].target, "NCCL_MIN_NCHANNELS"));
	CHECK(sw->dims[3].bind == RM_SWEEP_TUNABLEOP);
	x.e = &s.entries[0];
	CHECK(rm_sweep_each(sw, collect_name, &x) == 6 && x.n == 6);
	CHECK(x.n == 6 &&
	      !strcmp(x.v[0], "grid[batch_size=8,precision=fp16,env.NCCL_MIN_NCHANNELS=16,"
			      "tunableop=on]") &&
	      !strcmp(x.v[1], "grid[batch_size=8,precision=fp16,env.NCCL_MIN_NCHANNELS=32,"
			      "tunableop=on]") &&
	      !strcmp(x.v[2], "grid[batch_size=16,precision=bf16,env.NCCL_MIN_NCHANNELS=16,"
			      "tunableop=on]") &&
	      !strcmp(x.v[5], "grid[batch_size=16,precision=bf16,env.NCCL_MIN_NCHANNELS=32,"
			      "tunableop=off]"));
	rm_sweep_params(sw, values, &c);
	CHECK(c.n == 4 && !strcmp(rm_config_get(&c, "precision"), "bf16") &&
	      !strcmp(rm_config_get(&c, "tunableop"), "off"));
	j = rm_suite_json(&s);
	CHECK(json_array_size(json_object_get(json_array_get(json_object_get(j, "entries"), 0),
					      "points")) == 6);
	json_decref(j);
	/* 100,000 points and more need --yes. */
	CHECK(rm_suite_check_size(&s, 0, &err) == 0);
	rm_config_release(&c);
	rm_strv_free(x.v);
	rm_suite_release(&s);
	tfs_put(dir, "big.yaml",
		"entries:\n  - name: big\n    models: [m]\n    sweep:\n"
		"      a: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n      b: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n"
		"      c: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n      d: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n"
		"      e: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n");
	CHECK(load(dir, "big.yaml", &s, &err) == 0);
	CHECK(rm_suite_check_size(&s, 0, &err) < 0 && strstr(err.msg, "entry 'big'") &&
	      strstr(err.msg, "give --yes"));
	CHECK(rm_suite_check_size(&s, 1, &err) == 0);
	rm_suite_release(&s);
}

TEST(junit)
{
	rm_results run = RM_RESULTS_INIT;
	rm_error err = RM_ERROR_INIT;
	char *path = rm_xasprintf("%s/junit.xml", dir), *text = NULL, *log;
	rm_buf lines = RM_BUF_INIT(1 << 20);

	for (int i = 1; i <= 80; i++)
		rm_buf_addf(&lines, "log line %d\n", i);
	rm_buf_addstr(&lines, "\x1b[1mbold\x1b[0m \x07"
			      "bell \xfe"
			      " end\n");
	tfs_put(dir, "fail.live.log", rm_buf_str(&lines));
	log = rm_xasprintf("%s/fail.live.log", dir);
	add(&run, "good", "10", "SUCCESS", "", "", "1");
	add(&run, "good", "11", "SUCCESS", "", "", "2");
	add(&run, "fail", "", "FAILURE", "exit 1 <\"&'>", log, "1");
	add(&run, "skip", "", "SKIPPED", "gfx90a skipped", "", "1");

	rm_junit_opts o = RM_JUNIT_OPTS_INIT;
	o.suite = "nightly";
	o.log_lines = 50;
	CHECK(rm_junit_write(path, &run, &o, &err) == 0);
	CHECK(rm_read_file(path, 1 << 20, &text, NULL, &err) == 0);
	CHECK(strstr(text, "<testsuite name=\"nightly\" package=\"nightly\" id=\"0\" "
			   "timestamp=\"2024-05-01T02:03:04\" hostname=\"host\" tests=\"4\" "
			   "failures=\"1\" errors=\"0\" skipped=\"1\" time=\"50.000\">"));
	CHECK(strstr(text, "<testcase name=\"good #2\" classname=\"nightly\" time=\"12.500\"/>"));
	CHECK(strstr(text, "<failure type=\"FAILURE\" message=\"exit 1 &lt;&quot;&amp;'&gt;\">"));
	CHECK(strstr(text, "log line 32\n") && !strstr(text, "log line 31\n")); /* last 50 */
	CHECK(strstr(text, "bold \\x07bell \xef\xbf\xbd end"));
	CHECK(strstr(text, "<skipped message=\"gfx90a skipped\"/>"));
	CHECK(strstr(text, "<property name=\"good #1.tokens/s\" value=\"10\"/>"));
	free(text);
	text = NULL;

	/* A missing log is said in the failure, not an error. */
	rm_results_release(&run);
	add(&run, "fail", "", "FAILURE", "oom", "gone.log", "1");
	CHECK(rm_junit_write(path, &run, &o, &err) == 0);
	CHECK(rm_read_file(path, 1 << 20, &text, NULL, &err) == 0);
	CHECK(strstr(text, "(cannot open 'gone.log'"));
	free(text);
	rm_results_release(&run);
	rm_buf_release(&lines);
	free(log);
	free(path);
}

/* A row of run7 of attempt n. */
static void add_attempt(rm_results *r, const char *model, const char *perf, const char *status,
			const char *reason, const char *attempt)
{
	const char *names[] = {"model",	 "metric",  "performance", "status",	  "run_id",
			       "repeat", "attempt", "reason",	   "docker_file", "timestamp"};
	const char *vals[] = {model,
			      "tokens/s",
			      perf,
			      status,
			      "run7",
			      "1",
			      attempt,
			      reason,
			      "docker/x.Dockerfile",
			      "2024-05-01T02:03:04Z"};
	rm_results_add(r, names, vals, 10, "mem", 2);
}

/* --retries: each attempt is a row; the last one is the test case, a pass after a failure
 * is flaky (<flakyFailure>, as Maven Surefire writes it), a failure every time has a
 * <rerunFailure> per earlier attempt; the gate judges the last attempt only. */
TEST(junit_attempts)
{
	rm_results run = RM_RESULTS_INIT;
	rm_error err = RM_ERROR_INIT;
	char *path = rm_xasprintf("%s/attempts.xml", dir), *text = NULL;
	rm_gate g;
	rm_gate_opts go = RM_GATE_OPTS_INIT;

	add_attempt(&run, "flaky", "", "FAILURE", "POST /containers/create: 500 oops", "1");
	add_attempt(&run, "flaky", "42", "SUCCESS", "", "2");
	add_attempt(&run, "broken", "", "FAILURE", "node n1 failed", "1");
	add_attempt(&run, "broken", "", "FAILURE", "node n2 failed", "2");
	add_attempt(&run, "once", "7", "SUCCESS", "", "1");
	CHECK(run.rows[0].retried && !run.rows[1].retried && run.rows[1].attempt == 2);
	CHECK(run.rows[2].retried && !run.rows[3].retried && !run.rows[4].retried);
	rm_junit_opts o = RM_JUNIT_OPTS_INIT;
	o.suite = "nightly";
	CHECK(rm_junit_write(path, &run, &o, &err) == 0);
	CHECK(rm_read_file(path, 1 << 20, &text, NULL, &err) == 0);
	CHECK(text && strstr(text, "tests=\"3\" failures=\"1\""));
	CHECK(text &&
	      strstr(text, "<testcase name=\"flaky\" classname=\"nightly\" time=\"0.000\">\n"
			   "      <flakyFailure message=\"POST /containers/create: 500 oops\" "
			   "type=\"FAILURE\">\n        <stackTrace>POST /containers/create: 500 "
			   "oops"));
	CHECK(text && strstr(text, "<failure type=\"FAILURE\" message=\"node n2 failed\">"));
	CHECK(text && strstr(text, "<rerunFailure message=\"node n1 failed\" type=\"FAILURE\">"));
	CHECK(text && !strstr(text, "name=\"flaky #"));
	free(text);
	/* the gate: flaky passed, broken failed once (not twice) */
	rm_gate_eval(&run, NULL, &go, &g);
	CHECK(g.n_failed == 1);
	for (size_t i = 0; i < g.n; i++)
		if (!strcmp(g.v[i].model, "flaky"))
			CHECK(g.v[i].n_failed == 0 && g.v[i].n_success == 1);
	rm_gate_release(&g);
	rm_results_release(&run);
	free(path);
}

/* A run's provenance in perf.csv's companion file, and what differs between two runs. */
TEST(provenance_diff)
{
	rm_error err = RM_ERROR_INIT;
	char *perf = rm_xasprintf("%s/prov/perf.csv", dir);
	json_t *g1 = json_pack("{s:{s:s, s:s}}", "driver and firmware", "driver", "580.159.04",
			       "gpu0.vbios", "96.00.DA.00.0C");
	json_t *g2 = json_pack("{s:{s:s, s:s}}", "driver and firmware", "driver", "580.172.01",
			       "gpu0.vbios", "96.00.DA.00.0C");
	json_t *m1 = json_pack("{s:{s:s, s:s}, s:{s:s}}", "environment", "MY_KNOB", "1", "HOME",
			       "/root", "image", "digest", "r@sha256:1");
	json_t *m2 = json_pack("{s:{s:s, s:s}, s:{s:s}}", "environment", "MY_KNOB", "2", "HOME",
			       "/root", "image", "id", "sha256:2");
	json_t *a = NULL, *b = NULL, *d, *e;
	size_t n = 0;

	{
		char *pd = rm_xasprintf("%s/prov", dir);
		tfs_mkdirs(pd);
		free(pd);
	}
	CHECK(rm_provenance_append(perf, "A", "", "", g1, &err) == 0);
	CHECK(rm_provenance_append(perf, "A", "m", "docker/m.Dockerfile", m1, &err) == 0);
	CHECK(rm_provenance_append(perf, "B", "", "", g2, &err) == 0);
	CHECK(rm_provenance_append(perf, "B", "m", "docker/m.Dockerfile", m2, &err) == 0);
	CHECK(rm_provenance_read(perf, "A", &a, &err) == 0 && json_object_size(a) == 2);
	CHECK(rm_provenance_read(perf, "B", &b, &err) == 0);
	d = rm_provenance_diff(a, b, &n);
	CHECK(n == 4); /* the driver, the knob, a digest gone, an id new */
	e = json_array_get(json_object_get(d, "driver and firmware"), 0);
	CHECK(e && !strcmp(json_string_value(json_object_get(e, "a")), "580.159.04") &&
	      !strcmp(json_string_value(json_object_get(e, "b")), "580.172.01") &&
	      !strcmp(json_string_value(json_object_get(e, "model")), ""));
	CHECK(json_array_size(json_object_get(d, "environment")) == 1);
	CHECK(json_array_size(json_object_get(d, "image")) == 2);
	/* the groups in report compare's order */
	CHECK(!strcmp(json_object_iter_key(json_object_iter(d)), "image"));
	json_decref(d);
	/* a run the file does not have, a file that is not there: nothing */
	json_decref(b);
	CHECK(rm_provenance_read(perf, "C", &b, &err) == 0 && json_object_size(b) == 0);
	json_decref(b);
	CHECK(rm_provenance_read("/nonexistent/perf.csv", "A", &b, &err) == 0);
	json_decref(b);
	json_decref(a);
	json_decref(g1);
	json_decref(g2);
	json_decref(m1);
	json_decref(m2);
	free(perf);
}

TEST(manifest_archive)
{
	rm_error err = RM_ERROR_INIT;
	rm_finding f[] = {{RM_FINDING_OK, "rocm", "ROCm 6.2.1; amdgpu driver 6.8.5", NULL},
			  {RM_FINDING_WARN, "numa_balancing", "1", "disable it"}};
	json_t *prov = json_object();
	rm_provenance_put(prov, "", "", "driver and firmware", "gpu0.vbios", "113-M3000100-102");
	rm_provenance_put(prov, "m1", "docker/m1.Dockerfile", "image", "digest",
			  "rocm/pytorch@sha256:0123");
	rm_manifest m = {.run_id = "run9",
			 .started_at = "2024-05-01T00:00:00Z",
			 .git_commit = "abc",
			 .models_root = ".",
			 .host = "hostx",
			 .suite = "nightly",
			 .suite_file = "n.yaml",
			 .suite_entries = NULL,
			 .options = NULL,
			 .gpu_vendor = "AMD",
			 .gpu_arch = "gfx942",
			 .n_gpus = 8,
			 .findings = f,
			 .n_findings = 2,
			 .mask = NULL,
			 .provenance = prov};
	char *mp = rm_xasprintf("%s/run.json", dir), *out = rm_xasprintf("%s/a.tar.gz", dir);
	rm_manifest_file back;
	json_t *j;

	CHECK(rm_manifest_write(mp, &m, &err) == 0);
	CHECK(rm_manifest_load(mp, &back, &err) == 0);
	j = back.json;
	CHECK_STR(json_string_value(json_object_get(j, "run_id")), "run9");
	CHECK_STR(json_string_value(json_object_get(json_object_get(j, "versions"), "rocm")),
		  "ROCm 6.2.1; amdgpu driver 6.8.5");
	CHECK(json_integer_value(json_object_get(json_object_get(j, "gpu"), "count")) == 8);
	CHECK(json_array_size(json_object_get(j, "doctor")) == 2);
	/* the reader gives back what the writer was given, field by field */
	CHECK_STR(back.m.run_id, "run9");
	CHECK_STR(back.m.started_at, "2024-05-01T00:00:00Z");
	CHECK_STR(back.m.git_commit, "abc");
	CHECK_STR(back.m.models_root, ".");
	CHECK_STR(back.m.host, "hostx");
	CHECK_STR(back.m.suite, "nightly");
	CHECK_STR(back.m.suite_file, "n.yaml");
	CHECK_STR(back.m.gpu_vendor, "AMD");
	CHECK_STR(back.m.gpu_arch, "gfx942");
	CHECK(back.m.n_gpus == 8);
	CHECK(back.m.n_findings == 2 && back.m.findings[1].status == RM_FINDING_WARN &&
	      !strcmp(back.m.findings[1].check, "numa_balancing") &&
	      !strcmp(back.m.findings[1].action, "disable it") && !back.m.findings[0].action);
	CHECK(json_is_array(back.m.suite_entries) && json_is_object(back.m.options));
	CHECK(back.m.provenance && json_equal((json_t *)back.m.provenance, prov));
	rm_manifest_file_release(&back);
	json_decref(prov);
	CHECK(rm_manifest_load("/nonexistent/run.json", &back, &err) < 0 && rm_error_missing(&err));

	tfs_put(dir, "logs/a.live.log", "a\n");
	tfs_put(dir, "logs/sub/b.txt", "bb\n");
	char *logs = rm_xasprintf("%s/logs", dir);
	const char *paths[] = {mp, logs};
	CHECK(rm_archive_write(out, "run_models-run9", paths, 2, NULL, &err) == 0);
	/* Read it back with libarchive. */
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	int seen = 0, files = 0;
	archive_read_support_filter_gzip(a);
	archive_read_support_format_tar(a);
	CHECK(archive_read_open_filename(a, out, 10240) == ARCHIVE_OK);
	while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
		const char *n = archive_entry_pathname(e);
		seen += !strcmp(n, "run_models-run9/run.json");
		seen += !strcmp(n, "run_models-run9/logs/sub/b.txt");
		seen += !strcmp(n, "run_models-run9/logs/a.live.log");
		files += archive_entry_filetype(e) == AE_IFREG;
		CHECK(rm_starts_with(n, "run_models-run9/"));
	}
	archive_read_free(a);
	CHECK(seen == 3 && files == 3);
	const char *missing[] = {"/nonexistent/x"};
	CHECK(rm_archive_write(out, "t", missing, 1, NULL, &err) == -1 &&
	      strstr(err.msg, "/nonexistent/x"));
	free(logs);
	free(mp);
	free(out);
}

/* Issue 22: a secret given as a tag argument reaches no byte of run.json (strings and keys)
 * nor of the archive, whoever wrote the archived file. */
TEST(manifest_archive_masked)
{
	rm_error err = RM_ERROR_INIT;
	const char *secret = "tok_S3cr3t_value";
	const char *values[] = {secret};
	rm_mask mask;
	json_t *opts = json_pack("{s:[s], s:{s:s}}", "tags", "m:tok=tok_S3cr3t_value", "ctx",
				 "tok_S3cr3t_value", "x");
	rm_manifest m = {.run_id = "run8",
			 .started_at = NULL,
			 .git_commit = NULL,
			 .models_root = ".",
			 .host = "hostx",
			 .suite = NULL,
			 .suite_file = NULL,
			 .suite_entries = NULL,
			 .options = opts,
			 .gpu_vendor = NULL,
			 .gpu_arch = NULL,
			 .n_gpus = 0,
			 .findings = NULL,
			 .n_findings = 0,
			 .mask = &mask,
			 .provenance = NULL};
	char *mp = rm_xasprintf("%s/masked-run.json", dir), *out = rm_xasprintf("%s/m.tar.gz", dir);
	char *text = NULL, *raw = NULL;
	size_t len = 0;

	rm_mask_init(&mask, values, 1);
	CHECK(rm_manifest_write(mp, &m, &err) == 0);
	CHECK(rm_read_file(mp, 1 << 20, &text, &len, &err) == 0);
	CHECK(!strstr(text, secret));
	CHECK(strstr(text, "m:tok=***") != NULL);
	free(text);

	/* a file the run did not mask itself, large enough for several blocks */
	rm_buf big = RM_BUF_INIT(1 << 24);
	for (int i = 0; i < 20000; i++)
		rm_buf_addstr(&big, "line with tok_S3cr3t_value in it\n");
	raw = rm_xasprintf("%s/raw.log", dir);
	CHECK(rm_write_text_file(raw, big.data, big.len, 0, &err) == 0);
	const char *paths[] = {mp, raw};
	CHECK(rm_archive_write(out, "run_models-run8", paths, 2, &mask, &err) == 0);
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	char buf[8192];
	rm_buf all = RM_BUF_INIT(1 << 24);
	ssize_t got;
	archive_read_support_filter_gzip(a);
	archive_read_support_format_tar(a);
	CHECK(archive_read_open_filename(a, out, 10240) == ARCHIVE_OK);
	while (archive_read_next_header(a, &e) == ARCHIVE_OK)
		while ((got = archive_read_data(a, buf, sizeof(buf))) > 0)
			rm_buf_add(&all, buf, (size_t)got);
	archive_read_free(a);
	CHECK(all.len > 20000 * 20);
	CHECK(!memmem(all.data, all.len, secret, strlen(secret)));
	CHECK(memmem(all.data, all.len, "line with *** in it\n", 20) != NULL);
	rm_buf_release(&all);
	rm_buf_release(&big);
	rm_mask_release(&mask);
	json_decref(opts);
	free(raw);
	free(mp);
	free(out);
}

/* A perf.csv line: model, performance, run id; the rest as the runner writes them. */
static void perf_line(rm_buf *b, const char *model, const char *perf, const char *run_id)
{
	const char *cell[RM_PERF_COLS] = {0};
	cell[RM_COL_MODEL] = model;
	cell[RM_COL_PERFORMANCE] = perf;
	cell[RM_COL_METRIC] = "samples_per_second";
	cell[RM_COL_STATUS] = "SUCCESS";
	cell[RM_COL_MACHINE] = "host";
	cell[RM_COL_TIMESTAMP] = "2024-05-01T02:03:04Z";
	cell[RM_COL_RUN_ID] = run_id;
	cell[RM_COL_REPEAT] = "1";
	for (int c = 0; c < RM_PERF_COLS; c++)
		rm_buf_addf(b, "%s%s", c ? "," : "", cell[c] ? cell[c] : "");
	rm_buf_addch(b, '\n');
}

/* The finish takes what the caller leaves out from the run's run.json: the suite name, the
 * entries' thresholds (a PCT gates, "off" does not), the gate; a run.json of another run is
 * not used. */
TEST(nightly_manifest)
{
	rm_buf csv = RM_BUF_INIT(1 << 20);
	rm_error err = RM_ERROR_INIT;
	rm_nightly_result res;
	char *perf = rm_xasprintf("%s/perf.csv", dir), *man = rm_xasprintf("%s/run.json", dir);
	char *md = rm_xasprintf("%s/summary.md", dir), *text = NULL;
	const char *entries = "\"entries\": [{\"selected\": [\"m1\"], \"fail_on_regression\": 5},"
			      "{\"selected\": [\"m2\"], \"fail_on_regression\": \"off\"}]";

	for (int c = 0; c < RM_PERF_COLS; c++)
		rm_buf_addf(&csv, "%s%s", c ? "," : "", rm_perf_header[c]);
	rm_buf_addch(&csv, '\n');
	perf_line(&csv, "m1", "100", "A");
	perf_line(&csv, "m2", "100", "A");
	perf_line(&csv, "m1", "80", "B");
	perf_line(&csv, "m2", "80", "B");
	tfs_put(dir, "perf.csv", rm_buf_str(&csv));
	char *j = rm_xasprintf("{\"run_id\": \"B\", \"suite\": \"night\", %s}", entries);
	tfs_put(dir, "run.json", j);
	free(j);
	rm_nightly_opts o = RM_NIGHTLY_OPTS_INIT;
	o.perf_csv = perf;
	o.manifest = man;
	o.fail_on_regression = -1;
	o.summary_markdown = md;
	o.no_step_summary = 1;
	CHECK(rm_nightly_finish(&o, &res, &err) == 0);
	CHECK(res.gate_enforced && res.n_regressions == 1 && res.n_compared == 2);
	CHECK(rm_read_file(md, 1 << 20, &text, NULL, &err) == 0);
	CHECK(text && strstr(text, "## night: 2 passed") && strstr(text, "| m2 |") &&
	      strstr(text, "(not gated: its suite entry is off)"));
	free(text);
	/* The command line's threshold for entries that set none. */
	tfs_put(dir, "run.json",
		"{\"run_id\": \"B\", \"options\": {\"fail_on_regression\": 50}, \"entries\": "
		"[{\"selected\": [\"m1\", \"m2\"], \"fail_on_regression\": null}]}");
	CHECK(rm_nightly_finish(&o, &res, &err) == 0);
	CHECK(res.gate_enforced && res.n_regressions == 0);
	o.fail_on_regression = 10;
	CHECK(rm_nightly_finish(&o, &res, &err) == 0 && res.n_regressions == 2);
	/* run.json of another run: gate off, nothing taken from it. */
	j = rm_xasprintf("{\"run_id\": \"A\", %s}", entries);
	tfs_put(dir, "run.json", j);
	free(j);
	o.fail_on_regression = -1;
	CHECK(rm_nightly_finish(&o, &res, &err) == 0);
	CHECK(!res.gate_enforced && res.n_regressions == 2);
	rm_buf_release(&csv);
	free(perf);
	free(man);
	free(md);
}
