#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "rm/report.h"
#include "rm/util.h"

static char tmpl[] = "/tmp/rm-test-csv-XXXXXX", *dir; /* the tests' files */

SETUP()
{
	dir = mkdtemp(tmpl);
}

TEARDOWN()
{
	rmdir(dir);
}

TEST(quote)
{
	rm_buf b = RM_BUF_INIT(1024);
	const char *f[] = {"plain", "a,b", "say \"hi\"", "two\nlines", NULL, ""};
	CHECK(rm_csv_record(&b, f, 6) == 0);
	CHECK_STR(rm_buf_str(&b), "plain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",,\n");
	rm_buf_release(&b);
}

TEST(read_back)
{
	char *path = rm_xasprintf("%s/rt.csv", dir);
	const char *hdr[] = {"a", "b", "c"};
	const char *rows[] = {"1", "x,y", "q\"uote", "2", "multi\nline", ""};
	rm_error err = RM_ERROR_INIT;
	char **v;
	size_t n;

	CHECK(rm_csv_append(path, hdr, 3, rows, 2, &err) == 0);
	FILE *f = fopen(path, "r");
	CHECK(f != NULL);
	CHECK(rm_csv_read_record(f, &v, &n, &err) == 1 && n == 3);
	CHECK_STR(v[0], "a");
	rm_strv_free(v);
	CHECK(rm_csv_read_record(f, &v, &n, &err) == 1 && n == 3);
	CHECK_STR(v[1], "x,y");
	CHECK_STR(v[2], "q\"uote");
	rm_strv_free(v);
	CHECK(rm_csv_read_record(f, &v, &n, &err) == 1 && n == 3);
	CHECK_STR(v[1], "multi\nline");
	CHECK_STR(v[2], "");
	rm_strv_free(v);
	CHECK(rm_csv_read_record(f, &v, &n, &err) == 0);
	fclose(f);

	/* A different header is refused and the file is left alone. */
	const char *other[] = {"a", "b", "d"};
	CHECK(rm_csv_append(path, other, 3, rows, 1, &err) == -1);
	CHECK(strstr(err.msg, "different header") != NULL);

	/* A foreign writer's torn last row gets a newline before ours. */
	f = fopen(path, "a");
	fputs("3,torn", f);
	fclose(f);
	CHECK(rm_csv_append(path, hdr, 3, rows, 1, &err) == 0);
	f = fopen(path, "r");
	int records = 0;
	while (rm_csv_read_record(f, &v, &n, &err) == 1) {
		records++;
		if (records == 5)
			CHECK_STR(v[0], "1");
		rm_strv_free(v);
	}
	fclose(f);
	CHECK(records == 5);
	unlink(path);
	free(path);
}

/* The whole text of a file (caller frees). */
static char *slurp(const char *path)
{
	rm_error err = RM_ERROR_INIT;
	char *text = NULL;

	if (rm_read_file(path, 1 << 20, &text, NULL, &err) != 0)
		return rm_xstrdup("");
	return text;
}

/* One perf row of ours for model m, every column filled. */
static void perf_row(rm_perf_row *row, const char *m, const char *perf)
{
	memset(row, 0, sizeof(*row));
	for (int c = 0; c < RM_PERF_COLS; c++)
		row->cell[c] = rm_perf_header[c]; /* each cell names its column */
	row->cell[RM_COL_MODEL] = m;
	row->cell[RM_COL_PERFORMANCE] = perf;
	row->cell[RM_COL_METRIC] = "samples_per_second";
	row->cell[RM_COL_STATUS] = "SUCCESS";
	row->cell[RM_COL_DOCKERFILE] = "docker/dummy.ubuntu.amd.Dockerfile";
	row->cell[RM_COL_MACHINE] = "node1";
	row->cell[RM_COL_ARCH] = "gfx942";
	row->cell[RM_COL_TIMESTAMP] = "2026-01-02T03:04:05Z";
	row->cell[RM_COL_RUN_ID] = "run1";
	row->cell[RM_COL_REASON] = "a, \"quoted\" reason";
	row->cell[RM_COL_RELATIVE_CHANGE] = NULL;
}

/*
 * A perf.csv that madengine (its 29 columns, LF) or MAD (tools/run_models.py's RunDetails
 * through csv.DictWriter: 20 columns with host_os, CRLF) wrote: its header is kept byte for
 * byte, each row fills its columns by name, the rest goes to perf_<model>.csv; CRLF files
 * get CRLF rows; relative_change finds the earlier rows by name.
 */
TEST(peer_headers)
{
	char *madengine = rm_xasprintf("%s/perf.csv", dir), *mad = rm_xasprintf("%s/mad.csv", dir);
	char *ours_crlf = rm_xasprintf("%s/crlf.csv", dir), *text, *metrics, *rel[1];
	rm_buf hdr = RM_BUF_INIT(1 << 16);
	rm_perf_row row;
	rm_error err = RM_ERROR_INIT;
	FILE *f;
	char **v;
	size_t n;

	/* madengine: its header is our first 29 columns; one earlier SUCCESS row */
	CHECK(rm_csv_record(&hdr, rm_perf_header, RM_COL_RUN_OPTIONS + 1) == 0);
	f = fopen(madengine, "w");
	fputs(rm_buf_str(&hdr), f);
	fputs("dummy,1,1,1,,,,dummies,docker/dummy.ubuntu.amd.Dockerfile,rocm/pytorch,sha256:1,"
	      "ci-dummy_dummy.ubuntu.amd,,node1,local,docker,gfx942,100,samples_per_second,,"
	      "SUCCESS,10,20,,,,,0,\n",
	      f);
	fclose(f);
	CAPTURE_MESSAGES();
	CHECK(rm_perf_check(madengine, &err) == 0);
	CHECK_LOGGED("has another tool's header (madengine's or MAD's, 29 columns): it is kept");
	perf_row(&row, "dummy", "110");
	rm_perf_relative_changes(madengine, &row, 1, rel);
	CHECK_STR(rel[0], "+10.00"); /* found by column name */
	free(rel[0]);
	row.cell[RM_COL_RELATIVE_CHANGE] = NULL;
	CHECK(rm_perf_append(madengine, "dummy", &row, 1, &err) == 0);
	text = slurp(madengine);
	CHECK(rm_starts_with(text, rm_buf_str(&hdr))); /* never rewritten */
	f = fopen(madengine, "r");
	CHECK(rm_csv_read_record(f, &v, &n, &err) == 1 && n == RM_COL_RUN_OPTIONS + 1);
	rm_strv_free(v);
	CHECK(rm_csv_read_record(f, &v, &n, &err) == 1);
	rm_strv_free(v);
	CHECK(rm_csv_read_record(f, &v, &n, &err) == 1 && n == RM_COL_RUN_OPTIONS + 1);
	if (n == RM_COL_RUN_OPTIONS + 1) {
		CHECK_STR(v[RM_COL_MODEL], "dummy");
		CHECK_STR(v[RM_COL_PERFORMANCE], "110");
		CHECK_STR(v[RM_COL_LAUNCHER], "launcher");
		CHECK_STR(v[RM_COL_RUN_OPTIONS], "additional_docker_run_options");
	}
	rm_strv_free(v);
	CHECK(rm_csv_read_record(f, &v, &n, &err) == 0);
	fclose(f);
	free(text);
	/* our columns the file lacks: perf_dummy.csv, one row each (not timestamp, run_id) */
	char *mpath = rm_xasprintf("%s/perf_dummy.csv", dir);
	metrics = slurp(mpath);
	CHECK(strstr(metrics, "timestamp,run_id,model,metric,value,unit,step,aggregate\n") ==
	      metrics);
	CHECK(strstr(metrics, "2026-01-02T03:04:05Z,run1,dummy,reason,\"a, \"\"quoted\"\" "
			      "reason\",,,perf.csv\n") != NULL);
	CHECK(strstr(metrics, ",run1,dummy,log_file,log_file,,,perf.csv\n") != NULL);
	CHECK(strstr(metrics, ",metric,run_id") == NULL && strstr(metrics, ",timestamp,") == NULL);
	free(metrics);
	unlink(mpath);
	free(mpath);

	/* MAD: CRLF, its own columns (host_os stays empty), ours go to perf_<model>.csv */
	static const char mad_hdr[] =
	    "model,pipeline,tags,args,docker_file,base_docker,docker_sha,docker_image,"
	    "machine_name,host_os,gpu_architecture,n_gpus,training_precision,performance,metric,"
	    "status,build_duration,test_duration,git_commit,relative_change\r\n";
	f = fopen(mad, "w");
	fputs(mad_hdr, f);
	fputs("pyt_vllm_llama-3.1-8b,,\"['pyt', 'vllm']\",,,,,ci-x,node1,HOST_UBUNTU,gfx942,8,,"
	      "12.5,tokens_per_second,SUCCESS,1,2,,\r\n",
	      f);
	fclose(f);
	CAPTURE_MESSAGES();
	CHECK(rm_perf_check(mad, &err) == 0);
	CHECK_LOGGED("(madengine's or MAD's, 20 columns)");
	perf_row(&row, "pyt_vllm_llama-3.1-8b", "13");
	CHECK(rm_perf_append(mad, "pyt_vllm_llama-3.1-8b", &row, 1, &err) == 0);
	text = slurp(mad);
	CHECK(rm_starts_with(text, mad_hdr));
	/* every line ends with CRLF, ours included */
	{
		size_t lf = 0, crlf = 0;
		for (const char *p = text; *p; p++)
			if (*p == '\n') {
				lf++;
				crlf += p > text && p[-1] == '\r';
			}
		CHECK(lf == 3 && crlf == 3);
	}
	CHECK(strstr(text, "\r\npyt_vllm_llama-3.1-8b,pipeline,tags,args,docker/dummy.ubuntu.amd."
			   "Dockerfile,base_docker,docker_sha,docker_image,node1,,gfx942,n_gpus,"
			   "training_precision,13,samples_per_second,SUCCESS,build_duration,"
			   "test_duration,git_commit,\r\n") != NULL);
	free(text);
	mpath = rm_xasprintf("%s/perf_pyt_vllm_llama-3.1-8b.csv", dir);
	metrics = slurp(mpath);
	CHECK(strstr(metrics, ",pyt_vllm_llama-3.1-8b,nnodes,nnodes,,,perf.csv\n") != NULL);
	CHECK(strstr(metrics,
		     ",pyt_vllm_llama-3.1-8b,deployment_type,deployment_type,,,perf.csv\n") !=
	      NULL);
	free(metrics);
	unlink(mpath);
	free(mpath);

	/* our own header saved with CRLF (a spreadsheet round trip): ours, CRLF kept */
	rm_buf_reset(&hdr);
	CHECK(rm_csv_record(&hdr, rm_perf_header, RM_PERF_COLS) == 0);
	hdr.data[hdr.len - 1] = '\r';
	rm_buf_addch(&hdr, '\n');
	f = fopen(ours_crlf, "w");
	fputs(rm_buf_str(&hdr), f);
	fclose(f);
	CHECK(rm_perf_check(ours_crlf, &err) == 0);
	perf_row(&row, "dummy", "1");
	CHECK(rm_perf_append(ours_crlf, "dummy", &row, 1, &err) == 0);
	text = slurp(ours_crlf);
	CHECK(rm_starts_with(text, rm_buf_str(&hdr)));
	CHECK(rm_ends_with(text, ",config_key\r\n")); /* the last column's cell is its name */
	free(text);
	mpath = rm_xasprintf("%s/perf_dummy.csv", dir);
	CHECK(access(mpath, F_OK) != 0); /* nothing left over: every column is there */
	free(mpath);

	/* an older run_models' header (every column up to log_file, before attempt): kept,
	 * rows fill its columns, the newer ones go to perf_<model>.csv; said as such */
	rm_buf_reset(&hdr);
	CHECK(rm_csv_record(&hdr, rm_perf_header, RM_COL_LOG_FILE + 1) == 0);
	f = fopen(ours_crlf, "w");
	fputs(rm_buf_str(&hdr), f);
	fclose(f);
	CAPTURE_MESSAGES();
	CHECK(rm_perf_check(ours_crlf, &err) == 0);
	CHECK_LOGGED("columns): it is kept and each row fills its columns; the newer ones "
		     "(attempt, ...) go to perf_<model>.csv");
	CHECK(rm_perf_append(ours_crlf, "dummy", &row, 1, &err) == 0);
	text = slurp(ours_crlf);
	CHECK(rm_starts_with(text, rm_buf_str(&hdr)) && rm_ends_with(text, ",log_file\n"));
	free(text);
	mpath = rm_xasprintf("%s/perf_dummy.csv", dir);
	metrics = slurp(mpath);
	CHECK(metrics && strstr(metrics, ",run1,dummy,attempt,attempt,,,perf.csv\n") != NULL);
	free(metrics);
	unlink(mpath);
	free(mpath);

	/* another tool's CSV without madengine's columns is still refused */
	f = fopen(mad, "w");
	fputs("model,value\n", f);
	fclose(f);
	CHECK(rm_perf_check(mad, &err) < 0 && strstr(err.msg, "different header"));
	CHECK(rm_perf_append(mad, "dummy", &row, 1, &err) < 0);
	text = slurp(mad);
	CHECK_STR(text, "model,value\n");
	free(text);

	unlink(madengine);
	unlink(mad);
	unlink(ours_crlf);
	free(madengine);
	free(mad);
	free(ours_crlf);
	rm_buf_release(&hdr);
}

/* Several processes append at once: every row must come out whole, the header once. */
TEST(concurrent)
{
	enum { PROCS = 6, ROWS = 150 };
	char *path = rm_xasprintf("%s/conc.csv", dir);
	const char *hdr[] = {"proc", "row", "payload"};

	for (int p = 0; p < PROCS; p++) {
		pid_t pid = fork();
		if (pid == 0) {
			char pb[16], payload[600];
			memset(payload, 'a' + p, sizeof(payload) - 1);
			payload[sizeof(payload) - 1] = '\0';
			snprintf(pb, sizeof(pb), "%d", p);
			for (int r = 0; r < ROWS; r++) {
				char rb[16];
				rm_error err = RM_ERROR_INIT;
				snprintf(rb, sizeof(rb), "%d", r);
				const char *row[] = {pb, rb, payload};
				if (rm_csv_append(path, hdr, 3, row, 1, &err) != 0)
					_exit(1);
			}
			_exit(0);
		}
	}
	int ok = 1, status;
	while (wait(&status) > 0)
		ok &= WIFEXITED(status) && WEXITSTATUS(status) == 0;
	CHECK(ok);

	FILE *f = fopen(path, "r");
	char **v;
	size_t n;
	int records = 0, good = 0, headers = 0;
	rm_error err = RM_ERROR_INIT;
	while (rm_csv_read_record(f, &v, &n, &err) == 1) {
		records++;
		if (n == 3 && !strcmp(v[0], "proc"))
			headers++;
		else if (n == 3 && strlen(v[2]) == 599 && v[2][0] == 'a' + (v[0][0] - '0'))
			good++;
		rm_strv_free(v);
	}
	fclose(f);
	CHECK(headers == 1);
	CHECK(good == PROCS * ROWS);
	CHECK(records == PROCS * ROWS + 1);
	unlink(path);
	free(path);
}

/* The run is interrupted (Ctrl-C); counts how often the append asked. */
static int always(void *ud)
{
	(*(int *)ud)++;
	return 1;
}

/* A lock held by a process that hangs: the append gives up (at once-ish after an
 * interrupt) with a message naming the file, and writes nothing. That it gave up because of
 * the interrupt, not after its full wait of 60 s, shows in what it says it waited: the test
 * reads no clock (a loaded machine takes longer, never 59 s longer). */
TEST(lock_held)
{
	char *path = rm_xasprintf("%s/locked.csv", dir);
	const char *hdr[] = {"a"}, *row[] = {"1"};
	int fds[2];
	char c;
	pid_t pid;

	CHECK(pipe(fds) == 0);
	pid = fork();
	if (pid == 0) {
		int fd = open(path, O_WRONLY | O_CREAT, 0644);
		close(fds[0]);
		if (fd < 0 || flock(fd, LOCK_EX) != 0)
			_exit(1);
		if (write(fds[1], "x", 1) != 1)
			_exit(1);
		pause(); /* hung, holding the lock */
		_exit(0);
	}
	close(fds[1]);
	CHECK(read(fds[0], &c, 1) == 1);
	int asked = 0;
	rm_interrupt_set(always, &asked);
	rm_error err = RM_ERROR_INIT;
	CHECK(rm_csv_append(path, hdr, 1, row, 1, &err) < 0);
	CHECK(asked > 0);
	CHECK(strstr(err.msg, "stayed locked") != NULL);
	{
		const char *by = "stayed locked by another process for ", *at = strstr(err.msg, by);
		long waited = -1;
		char *secs =
		    at ? rm_xstrndup(at + strlen(by), strcspn(at + strlen(by), " ")) : NULL;
		CHECK(secs && rm_parse_long(secs, 0, 3600, &waited) == 0 && waited < 60);
		free(secs);
	}
	CHECK(strstr(err.msg, path) != NULL);
	rm_interrupt_set(NULL, NULL);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(fds[0]);
	struct stat st;
	CHECK(stat(path, &st) == 0 && st.st_size == 0);
	unlink(path);
	free(path);
}

/* Issue 22 (8): a dangling perf.csv symlink is refused by the check and by the append, and
 * its target is never created; a symlink to an existing file is still appended to. */
TEST(dangling_symlink)
{
	char *path = rm_xasprintf("%s/perf.csv", dir), *target = rm_xasprintf("%s/elsewhere", dir);
	const char *hdr[] = {"a"};
	const char *rows[] = {"1"};
	rm_error err = RM_ERROR_INIT;
	struct stat st;

	CHECK(symlink(target, path) == 0);
	CHECK(rm_csv_check(path, hdr, 1, &err) == -1);
	CHECK(strstr(err.msg, "is a symbolic link to") && strstr(err.msg, "not followed"));
	rm_error_clear(&err);
	CHECK(rm_csv_append(path, hdr, 1, rows, 1, &err) == -1);
	CHECK(strstr(err.msg, "does not exist: it is not followed"));
	CHECK(lstat(target, &st) != 0);
	/* pointing at a file that exists is the user's choice: appended there */
	CHECK(close(open(target, O_CREAT | O_WRONLY, 0644)) == 0);
	rm_error_clear(&err);
	CHECK(rm_csv_check(path, hdr, 1, &err) == 0);
	CHECK(rm_csv_append(path, hdr, 1, rows, 1, &err) == 0);
	CHECK(stat(target, &st) == 0 && st.st_size == 4);
	unlink(path);
	unlink(target);
	free(path);
	free(target);
}
