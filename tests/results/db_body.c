/*
 * One test body for every database backend: results_db_body URL runs it against
 * sqlite:PATH or postgresql://... (tests/results/tests.cmake runs it against both: SQLite in
 * a temp file, PostgreSQL on the private server of tests/results/pg.sh). Counts are taken
 * before and after, so a database that already holds rows does not matter; run ids are
 * unique per invocation.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "testfs.h"
#include "rm/db.h"
#include "rm/accepted.h"
#include "rm/history.h"
#include "rm/metrics.h"
#include "rm/results.h"
#include "rm/util.h"

static char tag[64];

static void add(rm_results *r, const char *run, const char *ts, const char *model, const char *perf,
		const char *status, const char *repeat)
{
	const char *names[] = {
	    "model",	       "metric",	   "performance", "status",	   "run_id",
	    "machine_name",    "gpu_architecture", "docker_file", "timestamp",	   "repeat",
	    "relative_change", "exit_code",	   "reason",	  "test_duration", "args"};
	char *id = rm_xasprintf("%s-%s", tag, run), *m = rm_xasprintf("%s-%s", tag, model);
	const char *vals[] = {m,
			      "tokens/s",
			      perf,
			      status,
			      id,
			      "host-a",
			      "gfx942",
			      "docker/x.Dockerfile",
			      ts,
			      repeat,
			      "+1.5",
			      "0",
			      strcmp(status, "SUCCESS") ? "it broke, \"badly\"" : "",
			      "12.5",
			      "--a 'b c'"};
	rm_results_add(r, names, vals, 15, "mem", (long)r->n + 2);
	free(id);
	free(m);
}

static long long count(rm_db *db, const char *table)
{
	long long n = -1;
	rm_error err = RM_ERROR_INIT;
	if (rm_db_count(db, table, &n, &err) < 0)
		fprintf(stderr, "count %s: %s\n", table, err.msg);
	return n;
}

int main(int argc, char **argv)
{
	rm_error err = RM_ERROR_INIT;
	rm_db *db = NULL;
	rm_results r1 = RM_RESULTS_INIT, bad = RM_RESULTS_INIT, back = RM_RESULTS_INIT;
	rm_metrics metrics = RM_METRICS_INIT;
	rm_export_stats st;
	int version = 0;
	long long runs0, res0, met0, env0;

	if (argc != 2) {
		fprintf(stderr, "usage: results_db_body URL\n");
		return 2;
	}
	snprintf(tag, sizeof(tag), "t%ld%d", (long)getpid(), rand() % 1000);
	printf("backend url: %s\n", argv[1]);

	/* Open twice: the second finds the schema current and changes nothing. */
	CHECK(rm_db_open(argv[1], &db, &err) == 0);
	if (!db) {
		fprintf(stderr, "%s\n", err.msg);
		return check_summary();
	}
	rm_db_close(db);
	CHECK(rm_db_open(argv[1], &db, &err) == 0);
	CHECK(rm_db_schema_version(db, &version, &err) == 0 && version == RM_DB_SCHEMA_VERSION);
	CHECK(count(db, "rm_schema") >= 3); /* 1, 2, 4, and 3 where issue 27 added it */
	runs0 = count(db, "runs");
	res0 = count(db, "results");
	met0 = count(db, "metrics");
	env0 = count(db, "environment");

	/* Run r1 with repeats, a failure, metrics and a manifest; then run r2. */
	add(&r1, "r1", "2024-05-01T01:00:00Z", "a", "100", "SUCCESS", "1");
	add(&r1, "r1", "2024-05-01T01:10:00Z", "a", "104", "SUCCESS", "2");
	add(&r1, "r1", "2024-05-01T01:20:00Z", "b", "", "FAILURE", "1");
	add(&r1, "r2", "2024-05-02T01:00:00Z", "a", "90", "SUCCESS", "1");
	char *run1 = rm_xasprintf("%s-r1", tag), *ma = rm_xasprintf("%s-a", tag);
	for (int i = 0; i < 2; i++) {
		metrics.rows = rm_xrealloc(metrics.rows, (metrics.n + 1) * sizeof(*metrics.rows));
		rm_metric_row *m = &metrics.rows[metrics.n++];
		memset(m, 0, sizeof(*m));
		m->timestamp = "2024-05-01T01:00:00Z";
		m->run_id = run1;
		m->model = ma;
		m->metric = "loss";
		m->unit = "";
		m->aggregate = "last";
		m->value = 2.5 - i;
		m->step = 100;
		m->repeat = i + 1; /* the same step in two repeats */
	}
	json_t *man =
	    json_pack("{s:s, s:s, s:s, s:s, s:[{s:s, s:s, s:s}]}", "run_id", run1, "started_at",
		      "2024-05-01T00:59:00Z", "suite", "nightly", "host", "host-a", "doctor",
		      "status", "OK", "check", "rocm", "detail", "ROCm 6.2");
	/* as a run.json on disk, read back as the runner reads it */
	char *man_dir = tfs_tmpdir("db-body"), *man_path = rm_xasprintf("%s/run.json", man_dir);
	rm_manifest_file mf;
	CHECK(json_dump_file(man, man_path, 0) == 0);
	CHECK(rm_manifest_load(man_path, &mf, &err) == 0);
	CHECK(rm_db_export(db, &r1, &metrics, &mf, NULL, &st, &err) == 0);
	if (err.msg[0])
		fprintf(stderr, "%s\n", err.msg);
	CHECK(st.runs == 2 && st.results == 4 && st.metrics == 2 && st.environment == 5);
	CHECK(count(db, "runs") == runs0 + 2 && count(db, "results") == res0 + 4);
	CHECK(count(db, "metrics") == met0 + 2 && count(db, "environment") == env0 + 5);

	/* Idempotent: the same export again adds nothing. */
	CHECK(rm_db_export(db, &r1, &metrics, &mf, NULL, &st, &err) == 0);
	CHECK(st.runs == 0 && st.results == 0 && st.metrics == 0 && st.environment == 0);
	CHECK(st.results_seen == 4);
	CHECK(count(db, "results") == res0 + 4 && count(db, "runs") == runs0 + 2);

	/* Transactional: a bad row after good ones (a status the schema refuses) rolls the
	 * whole export back, the new run included. */
	add(&bad, "r3", "2024-05-03T01:00:00Z", "a", "95", "SUCCESS", "1");
	add(&bad, "r3", "2024-05-03T01:00:00Z", "c", "1", "BOGUS", "1");
	rm_error_clear(&err);
	CHECK(rm_db_export(db, &bad, NULL, NULL, NULL, &st, &err) == -1);
	CHECK(strstr(err.msg, "rolled back") != NULL);
	printf("expected failure: %s\n", err.msg);
	CHECK(count(db, "runs") == runs0 + 2 && count(db, "results") == res0 + 4);
	/* A row without a run id is refused before anything is written. */
	rm_results_release(&bad);
	const char *nn[] = {"model", "status"}, *nv[] = {"x", "SUCCESS"};
	rm_results_add(&bad, nn, nv, 2, "mad.csv", 2);
	CHECK(rm_db_export(db, &bad, NULL, NULL, NULL, &st, &err) == -1);
	CHECK(strstr(err.msg, "'mad.csv' record 2 has no run_id") != NULL);

	/* Read back exactly what went in. */
	CHECK(rm_db_read_results(db, run1, &back, &err) == 0);
	CHECK(back.n == 3);
	if (back.n == 3) {
		const rm_result *b = &back.rows[1];
		CHECK(b->performance == 104 && b->repeat == 2 && b->test_s == 12.5);
		CHECK_STR(b->col[RM_COL_TIMESTAMP], "2024-05-01T01:10:00Z");
		CHECK_STR(b->col[RM_COL_ARGS], "--a 'b c'");
		CHECK_STR(b->col[RM_COL_RELATIVE_CHANGE], "1.5");
		CHECK_STR(back.rows[2].col[RM_COL_REASON], "it broke, \"badly\"");
		CHECK_STR(back.rows[2].col[RM_COL_STATUS], "FAILURE");
		CHECK(isnan(back.rows[2].performance));
	}
	rm_results_release(&back);

	/* The database as a baseline: for r2, the latest earlier run is r1 with both repeats. */
	rm_baseline *bl = rm_baseline_new();
	char *run2 = rm_xasprintf("%s-r2", tag);
	CHECK(rm_db_baseline(db, run2, "2024-05-02T00:00:00Z", 1, bl, &err) == 0);
	rm_baseline_seal(bl);
	const rm_baseline_entry *e =
	    rm_baseline_find(bl, ma, "tokens/s", "docker/x.Dockerfile", "gfx942", "host-a", "");
	CHECK(e && e->n == 2 && !strcmp(e->run_id, run1));
	CHECK(e && fabs(e->values[0] + e->values[1] - 204) < 1e-9);
	rm_baseline_free(bl);
	/* Later than r2: r2 itself is the latest. */
	bl = rm_baseline_new();
	CHECK(rm_db_baseline(db, "none", NULL, 1, bl, &err) == 0);
	rm_baseline_seal(bl);
	e = rm_baseline_find(bl, ma, "tokens/s", "docker/x.Dockerfile", "gfx942", "host-a", "");
	CHECK(e && e->n == 1 && e->values[0] == 90);
	rm_baseline_free(bl);
	/* Through the public entry point, as --baseline URL uses it. */
	rm_baseline_opts bo = RM_BASELINE_OPTS_INIT;
	bo.source = argv[1];
	bo.exclude_run_id = run2;
	bo.before = "2024-05-02T00:00:00Z";
	CHECK(rm_baseline_open(&bo, &bl, &err) == 0);
	char pct[32];
	CHECK(rm_baseline_change(bl, ma, "tokens/s", "docker/x.Dockerfile", "gfx942", "host-a", "",
				 90, pct, sizeof(pct)) == 0);
	CHECK_STR(pct, "-11.76"); /* 90 against the mean of 100 and 104 */
	rm_baseline_free(bl);

	/* Runs started within one second keep their export order, whatever their ids: three
	 * runs of one start second, ids in reverse order, the last one slower. */
	rm_results tie = RM_RESULTS_INIT;
	add(&tie, "z", "2024-05-05T00:00:00Z", "t", "100", "SUCCESS", "1");
	add(&tie, "y", "2024-05-05T00:00:00Z", "t", "101", "SUCCESS", "1");
	add(&tie, "x", "2024-05-05T00:00:00Z", "t", "80", "SUCCESS", "1");
	CHECK(rm_db_export(db, &tie, NULL, NULL, NULL, &st, &err) == 0 && st.runs == 3);
	char *mt = rm_xasprintf("%s-t", tag), *rx = rm_xasprintf("%s-x", tag), *start = NULL;
	rm_history_opts ho = RM_HISTORY_OPTS_INIT;
	rm_baseline *h = rm_history_new(&ho);
	CHECK(rm_db_baseline(db, NULL, NULL, 33, h, &err) == 0);
	const rm_hseries *s =
	    rm_history_find(h, mt, "tokens/s", "docker/x.Dockerfile", "gfx942", "", "host-a", "");
	CHECK(s && s->n == 3 && s->p[2].mean == 80 && s->p[0].mean == 100);
	CHECK(s && !strcmp(rm_history_run(h, s->p[2].run)->id, rx));
	CHECK(s && !strcmp(rm_history_run(h, s->p[2].run)->start, "2024-05-05T00:00:00Z"));
	/* The same order reading the results back. */
	rm_results_release(&back);
	CHECK(rm_db_read_results(db, NULL, &back, &err) == 0);
	double last_t = NAN;
	for (size_t i = 0; i < back.n; i++)
		if (!strcmp(back.rows[i].col[RM_COL_MODEL], mt))
			last_t = back.rows[i].performance;
	CHECK(last_t == 80);
	rm_results_release(&back);
	/* An accepted change, read back into the history: it starts there. */
	CHECK(rm_db_run_start(db, rx, &start, &err) == 0 && start &&
	      !strcmp(start, "2024-05-05T00:00:00Z"));
	rm_acceptance acc = {
	    mt, "tokens/s", "", "", "", "", rx, start, "2024-05-06T00:00:00Z", "on purpose", ""};
	CHECK(rm_db_accept(db, &acc, 1, &err) == 0 && count(db, "accepted") >= 1);
	CHECK(rm_db_accepted(db, h, &err) == 0);
	CHECK(s && rm_history_from(h, s) == 2 && !strcmp(rm_history_accepted(h, s, NULL), rx));
	free(start);
	CHECK(rm_db_run_start(db, "no-such-run", &start, &err) == 0 && !start);
	rm_baseline_free(h);
	rm_results_release(&tie);
	free(mt);
	free(rx);

	/* Passwords never reach messages. */
	char *red = rm_db_redact("postgresql://u:s3cret@h:5432/db?password=p4ss&sslmode=off");
	CHECK(!strstr(red, "s3cret") && !strstr(red, "p4ss") && strstr(red, "sslmode=off"));
	free(red);

	free(run2);
	free(run1);
	free(ma);
	json_decref(man);
	rm_manifest_file_release(&mf);
	unlink(man_path);
	rmdir(man_dir);
	free(man_path);
	free(man_dir);
	free(metrics.rows);
	rm_results_release(&bad);
	rm_results_release(&r1);
	rm_db_close(db);
	return check_summary();
}
