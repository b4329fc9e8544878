/* The results library: reader, metric table, baseline, gate, text cleaning, summaries. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rm/detect.h"
#include "rm/direction.h"
#include "rm/gate.h"
#include "rm/history.h"
#include "rm/markdown.h"
#include "rm/metrics.h"
#include "rm/results.h"
#include "rm/text.h"
#include "rm/util.h"
#include "testfs.h"

#define HDR                                                                                        \
	"model,n_gpus,nnodes,gpus_per_node,training_precision,pipeline,args,tags,docker_file,"     \
	"base_docker,docker_sha,docker_image,git_commit,machine_name,deployment_type,launcher,"    \
	"gpu_architecture,performance,metric,relative_change,status,build_duration,"               \
	"test_duration,dataname,data_provider_type,data_size,data_download_duration,"              \
	"build_number,additional_docker_run_options,timestamp,run_id,repeat,reason,tunableop,"     \
	"exit_code,log_file\n"

static char *dir; /* the tests' files */

SETUP()
{
	dir = tfs_tmpdir("results");
}

TEARDOWN()
{
	tfs_rm_tree(dir);
	free(dir);
}

/* A perf.csv row with the fields that matter here. */
static void row(rm_buf *b, const char *model, const char *metric, const char *perf,
		const char *status, const char *run, int repeat, const char *machine)
{
	rm_buf_addf(b,
		    "%s,1,1,1,,,,,docker/%s.Dockerfile,,,,c0ffee,%s,local,docker,gfx942,%s,%s,,%s,"
		    "1.5,10.25,,,,,,,2024-05-0%dT01:00:00Z,%s,%d,%s,,%s,%s.live.log\n",
		    model, model, machine, perf, metric, status, run[3] - '0', run, repeat,
		    strcmp(status, "SUCCESS") ? "\"exit 2, see \"\"log\"\"\"" : "",
		    strcmp(status, "SUCCESS") ? "2" : "0", model);
}

TEST(reader)
{
	rm_buf b = RM_BUF_INIT(1 << 20);
	rm_results r = RM_RESULTS_INIT;
	rm_error err = RM_ERROR_INIT;
	char *p = rm_xasprintf("%s/perf.csv", dir);

	rm_buf_addstr(&b, HDR);
	row(&b, "a", "tokens/s", "100", "SUCCESS", "run1", 1, "h");
	row(&b, "b", "", "", "FAILURE", "run1", 1, "h");
	row(&b, "a", "tokens/s", "90", "SUCCESS", "run2", 1, "h");
	tfs_put(dir, "perf.csv", rm_buf_str(&b));
	CHECK(rm_results_read(&r, p, NULL, &err) == 0);
	CHECK(r.n == 3);
	CHECK_STR(r.rows[1].col[RM_COL_REASON], "exit 2, see \"log\"");
	CHECK(r.rows[0].performance == 100 && isnan(r.rows[1].performance));
	CHECK(r.rows[0].test_s == 10.25 && r.rows[0].repeat == 1 && r.rows[2].line == 4);
	CHECK_STR(rm_results_last_run(&r), "run2");
	rm_results_release(&r);
	CHECK(rm_results_read(&r, p, "run1", &err) == 0 && r.n == 2);
	rm_results_release(&r);

	/* madengine's own perf.csv: fewer columns, found by name. */
	tfs_put(dir, "mad.csv",
		"model,n_gpus,performance,metric,status\nm1,8,12.5,samples_per_second,SUCCESS\n");
	free(p);
	p = rm_xasprintf("%s/mad.csv", dir);
	CHECK(rm_results_read(&r, p, NULL, &err) == 0 && r.n == 1);
	CHECK(r.rows[0].performance == 12.5 && !strcmp(r.rows[0].col[RM_COL_RUN_ID], ""));
	rm_results_release(&r);

	/* A foreign CSV is refused, naming the file and the column. */
	tfs_put(dir, "other.csv", "name,value\nx,1\n");
	free(p);
	p = rm_xasprintf("%s/other.csv", dir);
	CHECK(rm_results_read(&r, p, NULL, &err) == -1);
	CHECK(strstr(err.msg, "other.csv") && strstr(err.msg, "'model'"));
	CHECK(err.kind == RM_ERR_INPUT);
	rm_results_release(&r);
	free(p);
	p = rm_xasprintf("%s/missing.csv", dir);
	CHECK(rm_results_read(&r, p, NULL, &err) == -1 && err.kind == RM_ERR_IO);
	rm_results_release(&r);
	free(p);
	rm_buf_release(&b);
}

TEST(metrics)
{
	rm_metrics m = RM_METRICS_INIT;
	rm_error err = RM_ERROR_INIT;
	char *sub = rm_xasprintf("%s/m", dir);

	tfs_put(sub, "perf_a.csv",
		"timestamp,run_id,model,metric,value,unit,step,aggregate\n"
		"t,r1,a,loss,2.5,,10,last\nt,r1,a,loss,2.4,,10,last\nt,r2,a,loss,2.0,,,mean\n");
	tfs_put(sub, "perf_summary.csv", "timestamp,run_id,model,metric,unit\n");
	tfs_put(sub, "perf_weird.csv", "a,b\n1,2\n");
	CHECK(rm_metrics_read_dir(&m, sub, "r1", &err) == 0);
	CHECK(m.n == 2);
	CHECK(m.rows[0].repeat == 1 && m.rows[1].repeat == 2 && m.rows[0].step == 10);
	rm_metrics_release(&m);
	CHECK(rm_metrics_read_dir(&m, sub, NULL, &err) == 0 && m.n == 3 && m.rows[2].step == -1);
	rm_metrics_release(&m);
	free(sub);
}

TEST(direction)
{
	static const struct {
		const char *metric;
		rm_direction d;
	} cases[] = {
	    {"samples_per_second", RM_DIR_HIGHER},
	    {"tokens/s", RM_DIR_HIGHER},
	    {"TFLOPs/s/GPU", RM_DIR_HIGHER},
	    {"throughput", RM_DIR_HIGHER},
	    {"images/sec", RM_DIR_HIGHER},
	    {"FPS", RM_DIR_HIGHER},
	    {"tokens_per_sec_per_gpu", RM_DIR_HIGHER},
	    {"it/s", RM_DIR_HIGHER},
	    {"time_to_train_min", RM_DIR_LOWER},
	    {"ms/iter", RM_DIR_LOWER},
	    {"s/it", RM_DIR_LOWER},
	    {"latency_p99_ms", RM_DIR_LOWER},
	    {"train_loss", RM_DIR_LOWER},
	    {"step_time", RM_DIR_LOWER},
	    {"perplexity", RM_DIR_LOWER},
	    {"score", RM_DIR_UNKNOWN},
	    {"", RM_DIR_UNKNOWN},
	    {"memory_gb", RM_DIR_UNKNOWN},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		rm_direction d = rm_direction_guess(cases[i].metric, NULL);
		if (d != cases[i].d)
			fprintf(stderr, "direction of '%s': %s\n", cases[i].metric,
				rm_direction_name(d));
		CHECK(d == cases[i].d);
	}
	CHECK(rm_direction_guess("performance", "samples/s") == RM_DIR_HIGHER);
	CHECK(rm_direction_guess("performance", "ms") == RM_DIR_LOWER);
}

TEST(overrides)
{
	rm_direction_table *t = rm_direction_table_new();
	rm_error err = RM_ERROR_INIT;
	char *root = rm_xasprintf("%s/reg", dir);
	const char *why = NULL;

	tfs_put(
	    root, "models.json",
	    "[{\"name\":\"m1\",\"metric_direction\":{\"score\":\"lower\",\"tokens/s\":\"lower\"}},"
	    "{\"name\":\"m2\"}]");
	tfs_put(root, "scripts/llm/models.json",
		"[{\"name\":\"x\",\"metric_direction\":{\"score\":\"higher\"}}]");
	CHECK(rm_direction_table_load(t, root, &err) == 0);
	CHECK(rm_direction_lookup(t, "m1", "score", &why) == RM_DIR_LOWER);
	CHECK_STR(why, "models.json");
	CHECK(rm_direction_lookup(t, "m1", "tokens/s", NULL) == RM_DIR_LOWER);
	CHECK(rm_direction_lookup(t, "m1_sub", "score", NULL) == RM_DIR_LOWER); /* multiple */
	CHECK(rm_direction_lookup(t, "m2", "tokens/s", &why) == RM_DIR_HIGHER);
	CHECK_STR(why, "metric table");
	CHECK(rm_direction_lookup(t, "llm/x", "score", NULL) == RM_DIR_HIGHER);
	CHECK(rm_direction_lookup(t, "x", "score", NULL) == RM_DIR_UNKNOWN);
	rm_direction_table_free(t);

	t = rm_direction_table_new();
	tfs_put(root, "models.json", "[{\"name\":\"m1\",\"metric_direction\":{\"a\":\"up\"}}]");
	CHECK(rm_direction_table_load(t, root, &err) == -1);
	CHECK(strstr(err.msg, "'m1'") && strstr(err.msg, "\"higher\" or \"lower\""));
	rm_direction_table_free(t);
	free(root);
}

/* Rows of one run in memory. */
static void add(rm_results *r, const char *model, const char *metric, const char *perf,
		const char *status, const char *run, const char *machine)
{
	const char *names[] = {"model",	 "metric",	 "performance",	     "status",
			       "run_id", "machine_name", "gpu_architecture", "docker_file",
			       "reason"};
	const char *vals[] = {model,	metric, perf,
			      status,	run,	machine,
			      "gfx942", "df",	strcmp(status, "SUCCESS") ? "boom" : ""};
	rm_results_add(r, names, vals, 9, "mem", (long)r->n + 2);
}

TEST(baseline)
{
	rm_results h = RM_RESULTS_INIT;
	rm_baseline *b;
	const rm_baseline_entry *e;
	char buf[32];

	add(&h, "a", "tokens/s", "100", "SUCCESS", "r1", "h1");
	add(&h, "a", "tokens/s", "110", "SUCCESS", "r2", "h2");
	add(&h, "a", "tokens/s", "112", "SUCCESS", "r2", "h2"); /* repeat */
	add(&h, "a", "tokens/s", "", "FAILURE", "r3", "h1");
	add(&h, "a", "tokens/s", "999", "SUCCESS", "now", "h1");
	b = rm_baseline_from_results(&h, "now");
	/* Same machine wins over a newer run elsewhere. */
	e = rm_baseline_find(b, "a", "tokens/s", "df", "gfx942", "h1", "");
	CHECK(e && !strcmp(e->run_id, "r1") && e->n == 1 && e->values[0] == 100);
	/* Another machine: the newest run, with both repeats. */
	e = rm_baseline_find(b, "a", "tokens/s", "df", "gfx942", "h9", "");
	CHECK(e && !strcmp(e->run_id, "r2") && e->n == 2);
	CHECK(rm_baseline_find(b, "a", "tokens/s", "other", "gfx942", "h1", "") == NULL);
	CHECK(rm_baseline_change(b, "a", "tokens/s", "df", "gfx942", "h2", "", 99, buf,
				 sizeof(buf)) == 0);
	CHECK_STR(buf, "-10.81"); /* 99 against the mean of 110 and 112 */
	CHECK(rm_baseline_change(b, "zz", "tokens/s", "df", "gfx942", "h2", "", 99, buf,
				 sizeof(buf)) == 1 &&
	      buf[0] == '\0');
	rm_baseline_free(b);
	rm_results_release(&h);
}

/* A row of the history tests: model m, run r (started at day d), value v, GPU count g. */
static void hadd(rm_baseline *h, const char *m, const char *run, int day, const char *v,
		 const char *g, const char *machine)
{
	rm_results one = RM_RESULTS_INIT;
	char ts[32];
	const char *names[] = {"model",	       "metric", "performance", "status",	   "run_id",
			       "machine_name", "n_gpus", "timestamp",	"gpu_architecture"};
	snprintf(ts, sizeof(ts), "2024-03-%02dT01:00:00Z", day);
	const char *vals[] = {m, "tokens/s", v,	      v[0] ? "SUCCESS" : "FAILURE", run, machine,
			      g, ts,	     "gfx942"};
	rm_results_add(&one, names, vals, 9, "mem", 2);
	rm_history_add(h, &one.rows[0]);
	rm_results_release(&one);
}

TEST(history)
{
	char run[32], v[32];
	rm_history_opts gate = RM_HISTORY_OPTS_INIT, plot = RM_HISTORY_OPTS_INIT;
	rm_baseline *h, *p;
	const rm_hseries *s;
	unsigned total = 0;

	gate.window = plot.window = 10;
	plot.plot = 40;
	plot.keep_latest = 1;
	h = rm_history_new(&gate);
	p = rm_history_new(&plot);

	/* 100 runs: the gate keeps the window and its context, the plot merges older runs. */
	for (int i = 0; i < 100; i++) {
		snprintf(run, sizeof(run), "r%03d", i);
		snprintf(v, sizeof(v), "%d", 1000 + i);
		hadd(h, "m", run, 1 + i % 28, v, "8", "h1");
		hadd(p, "m", run, 1 + i % 28, v, "8", "h1");
	}
	s = rm_history_find(h, "m", "tokens/s", "", "gfx942", "8", "h1", "");
	CHECK(s && s->n == RM_DETECT_KEEP(10) && s->n_runs == 100);
	CHECK(s && s->p[s->n - 1].mean == 1099 && s->p[0].mean == 1100 - RM_DETECT_KEEP(10));
	s = rm_history_find(p, "m", "tokens/s", "", "gfx942", "8", "h1", "");
	/* plot 40 is raised to twice what the gate keeps */
	CHECK(s && s->n <= 2 * RM_DETECT_KEEP(10) && s->n > RM_DETECT_KEEP(10) &&
	      s->p[0].run_first == 0);
	for (size_t i = 0; s && i < s->n; i++) {
		total += s->p[i].n;
		CHECK(i == 0 || s->p[i].run_first > s->p[i - 1].run);
		if (i + RM_DETECT_KEEP(10) >= s->n)
			CHECK(s->p[i].run == s->p[i].run_first && s->p[i].n == 1);
	}
	CHECK(total == 100);
	rm_baseline_free(h);
	rm_baseline_free(p);

	/* Repeats of a run that come late join its point; runs after the judged one, and the
	 * judged one, are left out; another GPU count is another series. */
	rm_history_opts before = RM_HISTORY_OPTS_INIT;
	before.before_run = "now";
	h = rm_history_new(&before);
	hadd(h, "m", "a", 1, "100", "8", "h1");
	hadd(h, "m", "b", 2, "90", "8", "h1");
	hadd(h, "m", "a", 1, "102", "8", "h1");
	hadd(h, "m", "b", 2, "", "8", "h1"); /* a failed repeat */
	hadd(h, "m", "b", 2, "110", "4", "h1");
	hadd(h, "m", "now", 3, "50", "8", "h1");
	hadd(h, "m", "later", 4, "1", "8", "h1");
	hadd(h, "m", "b", 2, "91", "8", "h2"); /* another machine */
	s = rm_history_find(h, "m", "tokens/s", "", "gfx942", "8", "h1", "");
	CHECK(s && s->n == 2 && s->p[0].n == 2 && s->p[0].mean == 101 && s->p[1].failed == 1);
	CHECK(s && s->n_failed_runs == 1 && rm_hpoint_value(&s->p[0]).sd > 1.41 &&
	      rm_hpoint_value(&s->p[0]).sd < 1.42);
	CHECK(rm_history_find(h, "m", "tokens/s", "", "gfx942", "2", "h1", "") == NULL);
	s = rm_history_find(h, "m", "tokens/s", "", "gfx942", "4", "h9", "");
	CHECK(s && s->p[0].mean == 110);
	/* Another machine: the one whose latest run is newest; both ran b: the series seen
	 * last. */
	s = rm_history_find(h, "m", "tokens/s", "", "gfx942", "8", "h9", "");
	CHECK(s && !strcmp(s->machine, "h2"));
	CHECK(rm_history_n_runs(h) == 3 && rm_history_run_index(h, "later") == RM_DETECT_NONE);

	/* Acceptances: by run, else by start; the latest wins; empty fields match any. */
	s = rm_history_find(h, "m", "tokens/s", "", "gfx942", "8", "h1", "");
	CHECK(s && rm_history_from(h, s) == 0 && !rm_history_accepted(h, s, NULL));
	rm_history_accept(h, "m", "", "", "", "", "", "", "b", "2024-03-02T01:00:00Z");
	CHECK(s && rm_history_from(h, s) == 1);
	rm_history_accept(h, "m", "tokens/s", "", "", "", "h9", "", "zz", "2024-03-09T00:00:00Z");
	CHECK(s && rm_history_from(h, s) == 1); /* another machine's */
	rm_history_accept(h, "m", "tokens/s", "", "", "", "h1", "", "gone", "2024-03-01T12:00:00Z");
	CHECK(s && rm_history_from(h, s) == 1 && !strcmp(rm_history_accepted(h, s, NULL), "b"));
	rm_history_accept(h, "m", "tokens/s", "", "", "", "h1", "", "gone", "2024-03-09T00:00:00Z");
	CHECK(s && rm_history_from(h, s) == s->n);
	rm_baseline_free(h);

	/* The latest run: by start, its rows kept; out of order, flagged for a second read. */
	rm_history_opts keep = RM_HISTORY_OPTS_INIT;
	const rm_results *rows;
	int complete;
	keep.keep_latest = 1;
	h = rm_history_new(&keep);
	hadd(h, "m", "old", 1, "1", "8", "h1");
	hadd(h, "m", "new", 5, "2", "8", "h1");
	hadd(h, "n", "new", 5, "", "8", "h1");
	CHECK(!strcmp(rm_history_latest(h, &rows, &complete), "new") && complete && rows->n == 2);
	hadd(h, "m", "middle", 3, "3", "8", "h1");
	CHECK(!strcmp(rm_history_latest(h, &rows, &complete), "new") && !complete);
	rm_baseline_free(h);
}

static const rm_change *find(const rm_gate *g, const char *model)
{
	for (size_t i = 0; i < g->n; i++)
		if (!strcmp(g->v[i].model, model))
			return &g->v[i];
	return NULL;
}

TEST(gate)
{
	rm_results h = RM_RESULTS_INIT, run = RM_RESULTS_INIT;
	rm_gate g;
	const rm_change *c;
	rm_baseline *b;

	/* Baseline run r1. */
	add(&h, "thr", "tokens/s", "100", "SUCCESS", "r1", "h");
	add(&h, "time", "time_ms", "100", "SUCCESS", "r1", "h");
	add(&h, "up", "tokens/s", "100", "SUCCESS", "r1", "h");
	add(&h, "unk", "score", "100", "SUCCESS", "r1", "h");
	for (int i = 0; i < 3; i++) /* noisy baseline: 90, 100, 110 */
		add(&h, "noisy", "tokens/s",
		    i == 0   ? "90"
		    : i == 1 ? "100"
			     : "110",
		    "SUCCESS", "r1", "h");
	for (int i = 0; i < 3; i++) /* tight baseline: 100.0 +- 0.1 */
		add(&h, "tight", "tokens/s",
		    i == 0   ? "99.9"
		    : i == 1 ? "100"
			     : "100.1",
		    "SUCCESS", "r1", "h");
	b = rm_baseline_from_results(&h, "r2");

	add(&run, "thr", "tokens/s", "93", "SUCCESS", "r2", "h");  /* -7% higher-better */
	add(&run, "time", "time_ms", "107", "SUCCESS", "r2", "h"); /* +7% lower-better */
	add(&run, "up", "tokens/s", "120", "SUCCESS", "r2", "h");  /* better */
	add(&run, "unk", "score", "50", "SUCCESS", "r2", "h");	   /* unknown direction */
	add(&run, "new", "tokens/s", "1", "SUCCESS", "r2", "h");   /* no baseline */
	add(&run, "broken", "", "", "FAILURE", "r2", "h");	   /* failed */
	for (int i = 0; i < 3; i++) /* -7% on the mean, but inside the noise */
		add(&run, "noisy", "tokens/s",
		    i == 0   ? "83"
		    : i == 1 ? "93"
			     : "103",
		    "SUCCESS", "r2", "h");
	for (int i = 0; i < 3; i++) /* -7%, far outside a tight noise band */
		add(&run, "tight", "tokens/s",
		    i == 0   ? "92.9"
		    : i == 1 ? "93"
			     : "93.1",
		    "SUCCESS", "r2", "h");

	rm_gate_opts o = RM_GATE_OPTS_INIT;
	o.threshold_pct = 5;
	o.enforce = 1;
	rm_gate_eval(&run, b, &o, &g);
	CHECK((c = find(&g, "thr")) && c->verdict == RM_VERDICT_REGRESSION);
	CHECK(c && fabs(c->change_pct + 7) < 1e-9 && isnan(c->noise_pct));
	CHECK(c && strstr(c->note, "no repeats: threshold only"));
	CHECK((c = find(&g, "time")) && c->verdict == RM_VERDICT_REGRESSION);
	CHECK((c = find(&g, "up")) && c->verdict == RM_VERDICT_BETTER);
	CHECK((c = find(&g, "unk")) && c->verdict == RM_VERDICT_UNKNOWN);
	CHECK((c = find(&g, "new")) && c->verdict == RM_VERDICT_NONE);
	CHECK((c = find(&g, "broken")) && c->verdict == RM_VERDICT_FAILED);
	CHECK(c && !strcmp(c->reason, "boom"));
	CHECK((c = find(&g, "noisy")) && c->verdict == RM_VERDICT_NOISE);
	CHECK(c && c->noise_pct > 7 && strstr(c->note, "inside the noise"));
	CHECK((c = find(&g, "tight")) && c->verdict == RM_VERDICT_REGRESSION);
	CHECK(c && c->noise_pct < 1 && c->t_crit > 2.7 && c->t_crit < 2.8); /* dof 4 */
	CHECK(g.n_regressions == 3 && g.n_failed == 1 && g.n_unknown == 1);
	rm_gate_release(&g);

	/* A suite entry's own threshold: 10% lets thr and time pass; -1 ungates tight. */
	rm_threshold th[] = {{"thr", 10}, {"time", 10}, {"tight", -1}};
	rm_gate_opts o2 = o;
	o2.thresholds = th;
	o2.n_thresholds = 3;
	rm_gate_eval(&run, b, &o2, &g);
	CHECK(find(&g, "thr")->verdict == RM_VERDICT_SAME);
	CHECK(find(&g, "time")->verdict == RM_VERDICT_SAME);
	CHECK(g.n_regressions == 0);
	rm_gate_release(&g);

	/* The t table. */
	CHECK(rm_t95(1) > 12.7 && rm_t95(1) < 12.71 && rm_t95(30) == 2.042 && rm_t95(1e6) == 1.96);
	rm_baseline_free(b);
	rm_results_release(&h);
	rm_results_release(&run);
}

TEST(text)
{
	rm_buf b = RM_BUF_INIT(1 << 16);
	rm_error err = RM_ERROR_INIT;
	char *p;

	static const char raw[] = "a\x1b[31mred\x1b[0m\x01z\r\nx\ry\xff\xc3\xa9\xed\xa0\x80";
	rm_text_clean(&b, raw, sizeof(raw) - 1);
	CHECK_STR(rm_buf_str(&b), "ared\\x01z\nx\ny\xef\xbf\xbd\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd"
				  "\xef\xbf\xbd");
	rm_buf_reset(&b);
	rm_text_html(&b, "<a href='x'>&\"</a>");
	CHECK_STR(rm_buf_str(&b), "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;");
	rm_buf_reset(&b);
	rm_text_md_cell(&b, "a|b\nc<d");
	CHECK_STR(rm_buf_str(&b), "a\\|b c&lt;d");
	rm_buf_reset(&b);

	/* Tail: the last 3 of 200 lines, without reading from the start. */
	rm_buf big = RM_BUF_INIT(1 << 20);
	for (int i = 1; i <= 200; i++)
		rm_buf_addf(&big, "line %d\n", i);
	tfs_put(dir, "t.log", rm_buf_str(&big));
	p = rm_xasprintf("%s/t.log", dir);
	CHECK(rm_tail_lines(p, 3, 1 << 20, &b, &err) == 0);
	CHECK_STR(rm_buf_str(&b), "line 198\nline 199\nline 200");
	rm_buf_reset(&b);
	CHECK(rm_tail_lines(p, 500, 1 << 20, &b, &err) == 0 && b.len == big.len - 1);
	rm_buf_reset(&b);
	CHECK(rm_tail_lines(p, 50, 20, &b, &err) == 0 && b.len == 20); /* byte cap */
	free(p);
	rm_buf_reset(&b);
	p = rm_xasprintf("%s/none.log", dir);
	CHECK(rm_tail_lines(p, 3, 100, &b, &err) == -1 && strstr(err.msg, "none.log"));
	free(p);
	rm_buf_release(&big);
	rm_buf_release(&b);
}

TEST(markdown)
{
	rm_results run = RM_RESULTS_INIT, h = RM_RESULTS_INIT;
	rm_buf b = RM_BUF_INIT(1 << 20);
	rm_gate g;
	rm_baseline *base;

	add(&h, "slow|er", "tokens/s", "100", "SUCCESS", "r1", "h");
	add(&run, "slow|er", "tokens/s", "50", "SUCCESS", "r2", "h");
	add(&run, "ok", "tokens/s", "50", "SUCCESS", "r2", "h");
	add(&run, "bad", "", "", "FAILURE", "r2", "h");
	base = rm_baseline_from_results(&h, "r2");
	rm_gate_opts o = RM_GATE_OPTS_INIT;
	o.threshold_pct = 5;
	o.enforce = 1;
	rm_gate_eval(&run, base, &o, &g);
	CHECK(rm_summary_markdown(&b, "nightly", &run, &g) == 0);
	const char *s = rm_buf_str(&b);
	CHECK(strstr(s, "## nightly: 2 passed, 1 failed, 0 skipped, 1 regression\n"));
	CHECK(strstr(s, "| slow\\|er | tokens/s | SUCCESS | 50 | 100 | -50.00% |"));
	CHECK(strstr(s, "| bad |  | FAILURE |  |  |  | \xe2\x9d\x8c failed: boom |"));
	/* Regressions first, then failures, then the rest. */
	CHECK(strstr(s, "slow\\|er") < strstr(s, "| bad") &&
	      strstr(s, "| bad") < strstr(s, "| ok"));
	rm_gate_release(&g);
	rm_baseline_free(base);
	rm_buf_release(&b);
	rm_results_release(&run);
	rm_results_release(&h);
}
