/*
 * The output of a workload and of an image build, on its way to the log file, the terminal
 * and (stdout only) the parser. Secrets are masked before any byte is written or parsed;
 * stderr never counts as a result.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "rm/util.h"

/* Seconds of quiet output after the keep-alive exit marker before the stream ends. */
#define KEEP_ALIVE_QUIET 0.3

struct stream;

/* One output stream of the workload (stdout or stderr), after secret masking. */
struct sink {
	struct stream *st;
	int stream;
};

struct stream {
	struct run *r;
	const char *model;
	FILE *log;
	const char *log_file;
	int live;
	rm_lines lines;	    /* stdout lines for the parser */
	rm_lines err_lines; /* stderr lines, watched for the keep-alive exit marker */
	rm_mask masks[2];   /* stdout, stderr */
	struct sink sinks[2];
	rm_parser parser;
	double start;
	double timeout;	 /* seconds, 0 = none */
	double deadline; /* monotonic seconds, 0 = none */
	int queued;	 /* the launcher says the workload waits in a queue: no clock */
	int timed_out;
	int tools;	     /* the workload runs under the tools' wrapper */
	double gather_start; /* when the wrapper started gathering the tools' outputs, or 0 */
	double last_flush;
	double last_progress;
	double last_data;  /* when the last piece of output came */
	int write_errno;   /* the first failed write to the log (a full disk), or 0 */
	char *exit_marker; /* keep-alive: "<marker><run id>:" */
	int script_done;   /* keep-alive: the marker came */
	long script_rc;
};

/* The live log is read while it grows (tail -f): flush it at most every 200 ms rather than
 * per frame, which would cost a write(2) per line on chatty workloads. */
static void flush_log(struct stream *st, int force)
{
	double now = rm_now();
	if (force || now - st->last_flush >= 0.2) {
		fflush(st->log);
		if (st->live)
			fflush(stdout);
		st->last_flush = now;
	}
}

static void stream_progress(struct stream *st, int final)
{
	struct run *r = st->r;
	double now = rm_now();
	double every = r->progress_mode == 1 ? 1.0 : r->o->progress_interval;
	rm_parse_progress pp = {-1, -1, -1, NULL};

	if (!final && now - st->last_progress < every)
		return;
	st->last_progress = now;
	if (st->parser.ops && st->parser.ops->progress && st->parser.state)
		st->parser.ops->progress(st->parser.state, &pp);
	rm_runner__progress_line(r, st->model, st->queued ? "queued" : "running",
				 st->queued ? 0 : now - st->start, st->timeout, &pp, final);
}

static void on_stdout_line(void *ud, const char *line, size_t len, int kind)
{
	struct stream *st = ud;
	size_t gl = strlen(RM_TOOLS_GATHER_LINE);

	/* The tools' wrapper is gathering their outputs: the model's time ends here; the
	 * copying has a budget of its own (RM_TOOLS_GATHER_S), whatever the timeout. */
	if (st->tools && !st->gather_start && len >= gl &&
	    !memcmp(line, RM_TOOLS_GATHER_LINE, gl) && (len == gl || line[gl] == '\r')) {
		st->gather_start = rm_now();
		st->deadline = st->gather_start + RM_TOOLS_GATHER_S;
		return;
	}
	rm_parser_feed_split(&st->parser, line, len, kind);
}

/* The end of the output without a newline, when the workload did not end by itself (or died
 * of a signal): a line cut mid-write never becomes a metric. */
static void on_stdout_cut_end(void *ud, const char *line, size_t len, int kind)
{
	struct stream *st = ud;
	if (kind == RM_LINE_END)
		rm_parser_feed_fragment(&st->parser, line, len);
	else
		rm_parser_feed_split(&st->parser, line, len, kind);
}

static void on_stderr_line(void *ud, const char *line, size_t len, int kind)
{
	struct stream *st = ud;
	(void)kind;
	size_t ml = strlen(st->exit_marker);
	if (len > ml && !memcmp(line, st->exit_marker, ml)) {
		char buf[32];
		size_t n = len - ml < sizeof(buf) - 1 ? len - ml : sizeof(buf) - 1;
		memcpy(buf, line + ml, n);
		buf[n] = '\0';
		buf[strcspn(buf, "\r")] = '\0';
		if (rm_parse_long(buf, 0, 255, &st->script_rc) == 0)
			st->script_done = 1;
	}
}

/* Masked bytes of one stream: to the log and the terminal. */
static void on_masked(void *ud, const char *data, size_t len)
{
	struct sink *k = ud;
	struct stream *st = k->st;
	if (fwrite(data, 1, len, st->log) != len && !st->write_errno)
		st->write_errno = errno ? errno : EIO;
	if (st->live)
		fwrite(data, 1, len, k->stream == RM_STREAM_STDOUT ? stdout : stderr);
}

/* The parser reads the lines as the workload printed them, before masking: a secret that
 * happens to look like part of a number must not cost a metric. What the parser keeps is
 * masked before it reaches a file (rm_runner__stream_end). */
static void on_frame(void *ud, int stream, const char *data, size_t len)
{
	struct stream *st = ud;
	int i = stream == RM_STREAM_STDOUT ? 0 : 1;
	if (stream == RM_STREAM_STDOUT)
		rm_lines_feed(&st->lines, data, len, on_stdout_line, st);
	else if (st->exit_marker)
		rm_lines_feed(&st->err_lines, data, len, on_stderr_line, st);
	rm_mask_feed(&st->masks[i], data, len, on_masked, &st->sinks[i]);
	st->last_data = rm_now();
	flush_log(st, 0);
}

/* Replaces *s by its masked copy. */
static void mask_in_place(const rm_mask *m, char **s)
{
	char *masked;

	if (!*s)
		return;
	masked = rm_mask_string(m, *s);
	free(*s);
	*s = masked;
}

/* Metric names and units come from the log: mask them as the log is masked. */
static void mask_result(const rm_mask *m, rm_parse_result *pr)
{
	if (!rm_mask_active(m))
		return;
	mask_in_place(m, &pr->performance_metric);
	for (size_t i = 0; i < pr->n; i++) {
		mask_in_place(m, &pr->metrics[i].name);
		mask_in_place(m, &pr->metrics[i].unit);
	}
}

static int poll_stream(void *ud)
{
	struct stream *st = ud;
	flush_log(st, 0); /* a quiet workload's last lines still reach the file */
	stream_progress(st, 0);
	if (rm_signal_received())
		return 1;
	/* keep-alive: the exit marker comes on stderr, and the engine copies stdout and stderr
	 * apart, so the script's last stdout lines may still be on their way: stop once the
	 * stream has been quiet for a moment after the marker. */
	if (st->script_done && rm_now() - st->last_data >= KEEP_ALIVE_QUIET)
		return 1;
	if (st->deadline > 0 && !st->queued && rm_now() > st->deadline) {
		st->timed_out = 1;
		return 1;
	}
	return 0;
}

struct stream *rm_runner__stream_open(struct run *r, const rm_workload *w, double timeout,
				      struct outcome *oc)
{
	rm_error err = RM_ERROR_INIT;
	const rm_model *m = w->model;
	const char *parser = r->o->parser ? r->o->parser : m->parser;
	struct stream *st = rm_xcalloc(1, sizeof(*st));
	rm_parser_config pcfg = {r->o->warmup};

	st->r = r;
	st->model = m->name;
	st->live = r->o->live_output;
	st->timeout = timeout;
	st->tools = !rm_tool_plan_empty(&w->tools) && w->tools.n_outputs > 0;
	st->log_file = oc->log_file;
	/* The same line cap and splitting as 'run_models parse' (rm/parser.h). */
	rm_lines_init(&st->lines, RM_PARSER_LINE_MAX);
	rm_lines_init(&st->err_lines, RM_PARSER_LINE_MAX);
	for (int i = 0; i < 2; i++) {
		rm_mask_init(&st->masks[i], (const char *const *)r->secrets, r->n_secrets);
		st->sinks[i].st = st;
		st->sinks[i].stream = i == 0 ? RM_STREAM_STDOUT : RM_STREAM_STDERR;
	}
	if (w->set.keep_alive)
		st->exit_marker = rm_xasprintf("%s%s:", RM_EXIT_MARKER, r->run_id);
	if (rm_parser_start(&st->parser, parser ? parser : "generic", &pcfg) < 0) {
		rm_runner__fail(oc, "unknown parser '%s' (model field 'parser' or --parser)",
				parser);
		goto fail;
	}
	st->log = rm_runner__log_create(r, oc->log_file, oc->log_link, &err);
	if (!st->log) {
		rm_runner__fail(oc, "%s", rm_error_text(&err));
		goto fail;
	}
	setvbuf(st->log, NULL, _IOFBF, 1 << 16);
	return st;
fail:
	rm_runner__stream_close(st);
	return NULL;
}

void rm_runner__stream_begin(struct stream *st);

/* A queued workload (SLURM) starts its clock when it starts running. */
static void on_queued(void *ud, int queued)
{
	struct stream *st = ud;
	if (st->queued && !queued)
		rm_runner__stream_begin(st);
	st->queued = queued;
}

void rm_runner__stream_bind(struct stream *st, rm_job_spec *spec)
{
	spec->on_output = on_frame;
	spec->poll = poll_stream;
	spec->cancelled = rm_signal_cancelled;
	spec->queued = on_queued;
	spec->ud = st;
}

void rm_runner__stream_begin(struct stream *st)
{
	st->start = rm_now();
	st->last_progress = st->start;
	if (st->timeout > 0)
		st->deadline = st->start + st->timeout;
}

void rm_runner__stream_end(struct stream *st, struct outcome *oc)
{
	for (int i = 0; i < 2; i++)
		rm_mask_flush(&st->masks[i], on_masked, &st->sinks[i]);
	/* A last line without '\n' is whole when the workload ended by itself (exit 0): a
	 * result file printed with `cat` often ends so. When the runner stopped it (timeout,
	 * signal, lost engine: oc->reason is set) or it died, the line may be cut. */
	rm_lines_flush(&st->lines,
		       oc->reason || oc->exit_code != 0 ? on_stdout_cut_end : on_stdout_line, st);
	stream_progress(st, 1);
	rm_parser_finish(&st->parser, &oc->pr);
	mask_result(&st->r->mask, &oc->pr);
	if ((fflush(st->log) != 0 || ferror(st->log)) && !st->write_errno)
		st->write_errno = errno ? errno : EIO;
	/* The output is the evidence of a result: without it the run is not a SUCCESS. */
	if (st->write_errno && !oc->reason) {
		rm_error e = RM_ERROR_INIT;
		rm_error_sys(&e, RM_ERR_IO, st->write_errno, "cannot write the log '%s'",
			     st->log_file);
		rm_error_hint(&e, " (its output is incomplete)");
		rm_runner__fail(oc, "%s", rm_error_text(&e));
	}
}

void rm_runner__stream_close(struct stream *st)
{
	if (!st)
		return;
	if (st->log)
		fclose(st->log);
	if (st->live)
		fflush(stdout);
	rm_parser_stop(&st->parser);
	rm_lines_release(&st->lines);
	rm_lines_release(&st->err_lines);
	for (int i = 0; i < 2; i++)
		rm_mask_release(&st->masks[i]);
	free(st->exit_marker);
	free(st);
}

void rm_runner__stream_note(struct stream *st, const char *fmt, ...)
{
	va_list ap;
	char *raw, *line;

	va_start(ap, fmt);
	raw = rm_xvasprintf(fmt, ap);
	va_end(ap);
	line = rm_mask_string(&st->r->mask, raw); /* it may quote the folder's values */
	free(raw);
	if (fprintf(st->log, "%s\n", line) < 0 && !st->write_errno)
		st->write_errno = errno ? errno : EIO;
	if (st->live)
		printf("%s\n", line);
	free(line);
}

int rm_runner__stream_timed_out(const struct stream *st)
{
	return st->timed_out;
}

int rm_runner__stream_script_done(const struct stream *st, long *rc)
{
	if (st->script_done)
		*rc = st->script_rc;
	return st->script_done;
}

double rm_runner__stream_model_end(const struct stream *st)
{
	return st->gather_start > 0 ? st->gather_start : rm_now();
}

int rm_runner__stream_gather_timed_out(const struct stream *st)
{
	return st->timed_out && st->gather_start > 0;
}

double rm_runner__stream_started(const struct stream *st)
{
	return st->start;
}

const char *rm_runner__stream_parser_name(const struct stream *st)
{
	const rm_parser_ops *eff = rm_parser_effective(&st->parser);
	return eff ? eff->name : st->parser.ops ? st->parser.ops->name : "?";
}

/* Build output */

struct build_log {
	struct run *r;
	const char *model;
	FILE *f;
	const char *path;
	int live;
	int failed; /* a write failed */
	double start;
	double last_progress;
	double deadline; /* --build-timeout from the build's start, or 0 */
	int timed_out;
};

static void on_build_line(void *ud, const char *line, size_t len)
{
	struct build_log *b = ud;
	char *copy = NULL;
	long step, total;

	if (rm_mask_active(&b->r->mask)) {
		char *raw = rm_xstrndup(line, len);
		copy = rm_mask_string(&b->r->mask, raw);
		free(raw);
		line = copy;
		len = strlen(copy);
	}
	if (fwrite(line, 1, len, b->f) != len || fputc('\n', b->f) == EOF)
		b->failed = 1;
	if (b->live) {
		fwrite(line, 1, len, stdout);
		fputc('\n', stdout);
	}
	/* "Step 3/5 : RUN ..." drives the build's progress line. */
	if (b->r->progress_mode && len > 5 && !memcmp(line, "Step ", 5) &&
	    sscanf(line + 5, "%ld/%ld", &step, &total) == 2) {
		double now = rm_now();
		double every = b->r->progress_mode == 1 ? 0 : b->r->o->progress_interval;
		if (now - b->last_progress >= every) {
			rm_parse_progress pp = {step, total, -1, NULL};
			/* no ETA: build steps differ too much in length */
			rm_runner__progress_line(b->r, b->model, "building", now - b->start, -1,
						 &pp, 0);
			b->last_progress = now;
		}
	}
	free(copy);
}

struct build_log *rm_runner__build_log_open(struct run *r, const rm_model *m, const char *path,
					    const char *link, rm_error *err)
{
	struct build_log *b = rm_xcalloc(1, sizeof(*b));

	b->r = r;
	b->model = m->name;
	b->live = r->o->live_output;
	b->start = rm_now();
	b->deadline = r->o->build_timeout > 0 ? b->start + r->o->build_timeout : 0;
	b->path = path;
	b->f = rm_runner__log_create(r, path, link, err);
	if (!b->f) {
		free(b);
		return NULL;
	}
	return b;
}

/* The build's cancel: a signal, or --build-timeout passed (the engine then stops the build
 * when its connection closes, and removes its RUN container). */
static int build_poll(void *ud)
{
	struct build_log *b = ud;

	if (rm_signal_cancelled(NULL))
		return 1;
	if (b->deadline > 0 && rm_now() > b->deadline)
		b->timed_out = 1;
	return b->timed_out;
}

void rm_runner__build_log_bind(struct build_log *b, rm_image_req *req)
{
	req->on_line = on_build_line;
	req->poll = build_poll;
	req->ud = b;
}

int rm_runner__build_log_timed_out(const struct build_log *b)
{
	return b && b->timed_out;
}

void rm_runner__build_log_failed(struct build_log *b, const char *masked_msg)
{
	fprintf(b->f, "run_models: build failed: %s\n", masked_msg);
}

double rm_runner__build_log_elapsed(const struct build_log *b)
{
	return rm_now() - b->start;
}

void rm_runner__build_log_close(struct build_log *b)
{
	if (!b)
		return;
	rm_runner__progress_line(b->r, b->model, "building", 0, 0, NULL, 1);
	if (fclose(b->f) != 0 || b->failed)
		rm_warn_sys(errno ? errno : EIO, "model '%s': cannot write the build log '%s'",
			    b->model, b->path);
	free(b);
}
