/*
 * The option table of every command, its parser, and --help (text and the README's
 * Markdown table) generated from it.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "options.h"
#include "rm/doctor.h"
#include "rm/detect.h"
#include "rm/engine.h"
#include "rm/parser.h"
#include "rm/registry.h"
#include "rm/runner.h"
#include "rm/telemetry.h"
#include "rm/util.h"

/* The type and the field of a row, checked against each other at compile time (_Generic
 * has no association for a field of another type). */
#define CHECKED(f, T) (offsetof(struct cli, f) + 0 * sizeof(_Generic(((struct cli *)0)->f, T : 1)))
#define FLAG(f)	      OPT_FLAG, CHECKED(f, int), NULL
#define STR(f)	      OPT_STRING, CHECKED(f, const char *), NULL
#define LIST(f)	      OPT_LIST, CHECKED(f, struct opt_list), NULL
#define WORDS(f)      OPT_WORDS, CHECKED(f, struct opt_list), NULL
#define NUM(f)	      OPT_NUMBER, CHECKED(f, double), NULL
#define INT(f)	      OPT_INT, CHECKED(f, long), NULL
#define SECS(f)	      OPT_SECONDS, CHECKED(f, double), NULL
#define CHOICE(f, w)  OPT_CHOICE, CHECKED(f, int), w, NULL
#define SEL	      (CMD_RUN | CMD_LIST)
#define CI	      (CMD_RUN | CMD_REPORT_CI)
#define RB	      (CMD_RUN | CMD_BUILD)
static const rm_choice dynamic_words[] = {{"run", DYNAMIC_RUN}, {"skip", DYNAMIC_SKIP}, {NULL, 0}};
static const rm_choice score_words[] = {{"mlperf", SCORE_MLPERF}, {NULL, 0}};
static const rm_choice parse_formats[] = {{"csv", FORMAT_CSV}, {"json", FORMAT_JSON}, {NULL, 0}};
static const rm_choice doctor_formats[] = {{"text", FORMAT_TEXT}, {"json", FORMAT_JSON}, {NULL, 0}};
static const rm_choice compare_formats[] = {
    {"text", FORMAT_TEXT}, {"markdown", FORMAT_MARKDOWN}, {"json", FORMAT_JSON}, {NULL, 0}};
static const rm_choice sweep_formats[] = {
    {"text", FORMAT_TEXT}, {"markdown", FORMAT_MARKDOWN}, {"csv", FORMAT_CSV}, {NULL, 0}};
static const rm_choice list_formats[] = {
    {"table", FORMAT_TABLE}, {"csv", FORMAT_CSV}, {"json", FORMAT_JSON}, {NULL, 0}};

const struct opt opt_table[] = {
    {"tags", 't', WORDS(tags), "TAG [TAG ...]",
     "names, tags, `all`, `scope/tag`, `name:key=value`; several after one `--tags` (as in "
     "madengine), repeatable, comma lists",
     SEL | CMD_BUILD, "model_name model-name"},
    {"additional-context", 'c', LIST(contexts), "JSON|@FILE",
     "overrides detection: `gpu_vendor`, `guest_os`, `MAD_SYSTEM_GPU_ARCHITECTURE`, "
     "`MAD_SYSTEM_NGPUS`, `docker_env_vars`, `docker_build_arg`, `docker_mounts`, "
     "`docker_gpus` (`\"0,2-4\"`), `docker_cpus`, `model_args`, `docker_device_root`; "
     "`slurm` and `distributed` submit to SLURM (docs/scale-out.md)",
     SEL | CMD_BUILD, "additional_context"},
    {"additional-context-file", 'f', LIST(context_files), "FILE",
     "the same as a JSON or YAML file (libyaml), applied first", SEL | CMD_BUILD,
     "additional_context_file"},
    {"dynamic-registry", 0, CHOICE(dynamic_registry, dynamic_words),
     "whether `scripts/<dir>/get_models_json.py` files are run (the folder's Python, on this "
     "host) to list their models; default `skip`, or `$RM_DYNAMIC_REGISTRY`",
     SEL | CMD_BUILD, "dynamic_registry"},
    {"output", 'o', STR(output), "FILE",
     "perf CSV (default `perf.csv`); `perf_<model>.csv` and `perf_summary.csv` go beside it",
     CMD_RUN, NULL},
    {"log-dir", 0, STR(log_dir), "DIR",
     "where `<model>.live.log` and `<model>.build.log` go (default `.`)", RB, "log_dir"},
    {"live-output", 'l', FLAG(live_output), NULL, "stream build and run output to the terminal", RB,
     "live_output"},
    {"timeout", 0, SECS(timeout), "S",
     "seconds; default: the model's `timeout` (`0` or negative there: none), else 7200; `0` or "
     "negative (`-1`) = none",
     CMD_RUN, NULL},
    {"skip-model-run", 0, FLAG(skip_model_run), NULL,
     "build the images and stop: nothing runs and no rows are written, but a failed build is "
     "a FAILURE row",
     CMD_RUN, "skip_model_run"},
    {"disable-skip-gpu-arch", 0, FLAG(disable_skip_gpu_arch), NULL,
     "run the models whose `skip_gpu_arch` names this host's GPU", CMD_RUN,
     "disable_skip_gpu_arch"},
    {"data-config", 0, STR(data_config), "FILE",
     "data providers of the models' `data` field (default `data.json` in the folder)", CMD_RUN,
     "data-config-file-name data_config_file_name"},
    {"tools-config", 0, STR(tools_config), "FILE",
     "definitions of the tools the context's `tools` key selects (default "
     "`scripts/common/tools.json` in the folder, else the built-in ones; docs/tools.md)",
     CMD_RUN, "tools_config tools-json-file-name tools_json_file_name"},
    {"force-mirror-local", 0, STR(force_mirror_local), "DIR",
     "keep the data of `custom` providers in `DIR/<dataname>` on this host for later runs "
     "(`mirrorlocal` on every provider but `local`)",
     CMD_RUN, "force_mirror_local"},
    {"tunableop", 0, CHOICE(tunableop, rm_tunableop_words),
     "PyTorch TunableOp: `on` tunes GEMMs and keeps the results in "
     "`<log dir>/tunableop/<model>/` for later runs, `off` disables it; default: the model's "
     "setting",
     CMD_RUN, NULL},
    {"shm-size", 0, STR(shm_size), "SIZE",
     "`/dev/shm` of the containers, e.g. `64G` (a model's own `--shm-size` wins)", CMD_RUN,
     "shm_size"},
    {"telemetry", 0, CHOICE(telemetry, rm_telemetry_words),
     "GPU power, energy, VRAM, busy, temperature and clock sampled on the host at 10 Hz while "
     "each run's container runs (`perf_<model>.csv` gets `gpu_power_avg_w`, `gpu_energy_j`, "
     "`performance_per_watt`, ...; docs/telemetry.md); `auto` (default): when the run has GPUs",
     CMD_RUN, NULL},
    {"engine", 0, CHOICE(engine, rm_engine_words),
     "the engine the containers run on, when it is not the one run_models finds "
     "(`$DOCKER_HOST`, the Docker socket, then Podman's; docs/engines.md): Podman gets NVIDIA "
     "GPUs as CDI devices; a dry run renders for it without asking any engine",
     CMD_RUN, NULL},
    {"dry-run", 'n', FLAG(dry_run), NULL,
     "print Dockerfiles (kept and dropped, with why), build args and the equivalent "
     "`docker build` / `docker run` lines (`podman ...` for Podman); nothing is built or run "
     "(without `--engine`, the engine's `/_ping` says whether it is Docker or Podman)",
     CMD_RUN | CMD_NODE_RUN, "dry_run"},
    {"repeat", 0, INT(repeat), "N",
     "run each model N times on one build; summary (mean, median, stddev, min, max) printed "
     "and appended to `perf_summary.csv`",
     CMD_RUN, NULL},
    {"retries", 0, INT(retries), "N",
     "try a run again, up to N times, when it failed for the machine's reason (the engine "
     "refused or lost it, an image pull failed, a SLURM node was lost, the pre-flight check "
     "refused a GPU); never when the model failed (its exit code, a timeout, no figure). Each "
     "attempt keeps its row (`attempt` column); JUnit marks one that passed on a retry as "
     "flaky (docs/reliability.md)",
     CMD_RUN, NULL},
    {"retry-wait", 0, NUM(retry_wait), "S",
     "seconds before the first retry, doubling for each next one (default 10, at most 300)",
     CMD_RUN, NULL},
    {"preflight", 0, CHOICE(preflight, rm_preflight_words),
     "check the GPUs each model will get before its container starts (memory in use, ECC "
     "errors, retired pages, power limit and clocks under their defaults, a narrow PCIe link, "
     "a missing GPU): a finding that would spoil the number skips the model with it as the "
     "reason, the others are warned about (docs/doctor.md); `auto` (default): on for "
     "`--suite` and runs with CI outputs",
     CMD_RUN, NULL},
    {"score", 0, CHOICE(score, score_words),
     "with `--repeat`: MLPerf's rule on time to train (drop fastest and slowest, mean of the "
     "rest)",
     CMD_RUN, NULL},
    {"parser", 0, STR(parser), "NAME",
     "log parser for every model (default: the model's `parser`, else `generic`)", CMD_RUN, NULL},
    {"warmup", 0, STR(warmup), "auto|N",
     "warm-up steps left out of the steady-state means in `perf_<model>.csv`: `auto` "
     "(default: detected from the step times) or the first N",
     CMD_RUN, NULL},
    {"keep-alive", 0, FLAG(keep_alive), NULL,
     "keep the container running after the script; prints how to enter and remove it", CMD_RUN,
     "keep_alive"},
    {"allow-sensitive-mounts", 0, FLAG(allow_sensitive_mounts), NULL,
     "let the folder's `additional_docker_run_options` and `data.json` bind the host's root "
     "folder, its system folders read-write or the Docker socket into containers (refused "
     "otherwise)",
     CMD_RUN, NULL},
    {"keep-model-dir", 0, FLAG(keep_model_dir), NULL,
     "copy the model dir out of the container into the log dir", CMD_RUN, "keep_model_dir"},
    {"clean-docker-cache", 0, FLAG(clean_docker_cache), NULL, "rebuild without the layer cache", RB,
     "clean_docker_cache"},
    {"build-timeout", 0, SECS(build_timeout), "S",
     "seconds a build may take before it is stopped and its model is a FAILURE row naming the "
     "build (default 10800, three hours; `0` = none); the model's `--timeout` counts from its "
     "run, not its build",
     RB, "build_timeout"},
    {"no-pull", 0, FLAG(no_pull), NULL,
     "build on the base images the engine has: no pull of a newer one first (madengine's "
     "`--pull`, the default; a registry out of reach is only warned about)",
     RB, NULL},
    {"sys-env-details", 0, FLAG(sys_env_details), NULL,
     "store `run_models doctor`'s findings beside the run's logs", CMD_RUN,
     "sys_env_details generate-sys-env-details generate_sys_env_details"},
    {"no-progress", 0, FLAG(no_progress), NULL, "no status line / progress lines", RB, NULL},
    {"progress-interval", 0, NUM(progress_interval), "S",
     "seconds between progress lines when stderr is not a terminal (CI; default 30)", RB, NULL},
    {"list", 0, FLAG(list), NULL, "print the selection (as `run_models list`) and stop", CMD_RUN,
     NULL},
    {"manifest", 0, STR(manifest), "FILE",
     "run the images of this build manifest (`run_models build`): nothing is built, the engine "
     "pulls what it lacks; without `--tags`, every model the manifest names",
     CMD_RUN, "manifest-file manifest_file"},
    {"quiet", 'q', FLAG(quiet), NULL, "only warnings and errors from the runner itself", RB, NULL},
    /* madengine's and MAD's spellings that keep their meaning here */
    {"verbose", 'v', FLAG(verbose), NULL,
     "madengine's: every message of the runner (the default; `--quiet` for fewer)", RB, NULL},
    {"log-level", 0, STR(log_level), "LEVEL",
     "MAD's: `DEBUG` or `INFO` show every message (the default), `WARNING` or `ERROR` only "
     "warnings and errors (as `--quiet`)",
     RB, "log_level"},
    {"cleanup-perf", 0, FLAG(cleanup_perf), NULL,
     "madengine's: removes its intermediate `perf_entry` files; run_models writes none, so "
     "there is nothing to remove",
     CMD_RUN, NULL},
    {"ignore-deprecated", 0, FLAG(ignore_deprecated), NULL,
     "madengine's: run models marked deprecated; run_models runs them in any case", CMD_RUN,
     "ignore_deprecated"},
    /* build */
    {"registry", 0, STR(registry), "HOST:PORT",
     "push each image as `HOST:PORT/<image>:<fingerprint>`; an image whose fingerprint the "
     "registry has is neither built nor pushed",
     CMD_BUILD, NULL},
    {"manifest", 0, STR(manifest), "FILE",
     "the build manifest to write (default `build_manifest.json`), madengine's layout", CMD_BUILD,
     "manifest-file manifest_file"},
    /* node-run */
    {"job", 0, STR(job), "FILE", "the job file the submitting run_models wrote", CMD_NODE_RUN,
     NULL},
    {"workload", 0, STR(workload), "KEY", "the workload of the job file to run", CMD_NODE_RUN,
     NULL},
    /* run, report ci: CI outputs and the regression gate (docs/nightly.md) */
    {"yes", 0, FLAG(yes), NULL,
     "expand a suite's sweep of 100,000 points or more (refused without it, before anything is "
     "built)",
     CMD_RUN | CMD_SUITE, NULL},
    {"suite", 0, STR(suite), "FILE",
     "run the entries of a suite file (tags or models, context, repeat, timeout, regression "
     "threshold; `run_models suite FILE` shows them) under one run id, instead of `--tags`",
     CMD_RUN, NULL},
    {"title", 0, STR(title), "NAME",
     "the suite name in JUnit, the summary and the report (default: the suite's in "
     "`run.json`, else `run_models`)",
     CMD_REPORT_CI, NULL},
    {"junit", 0, STR(junit), "FILE",
     "write JUnit XML: a testcase per perf row (a failure holds the reason and the last 50 "
     "lines of its log), one per gated metric with `--fail-on-regression`",
     CI, NULL},
    {"summary-markdown", 0, STR(summary_markdown), "FILE",
     "write a Markdown summary of the run (also appended to `$GITHUB_STEP_SUMMARY` when set)", CI,
     NULL},
    {"no-step-summary", 0, FLAG(no_step_summary), NULL, "leave `$GITHUB_STEP_SUMMARY` alone", CI,
     NULL},
    {"html", 0, STR(html), "FILE",
     "write the HTML trend report (one self-contained file) over the history in the perf CSV", CI,
     NULL},
    {"archive", 0, STR(archive), "FILE",
     "write one `.tar.gz`: the perf CSVs, the run's logs, `run.json`, JUnit, summary and report",
     CI, NULL},
    {"export", 0, LIST(export_dbs), "URL",
     "export the run to a results database: `sqlite:PATH` or `postgresql://...`; repeatable", CI,
     NULL},
    {"baseline", 0, STR(baseline), "FILE|URL",
     "compare with an earlier perf CSV or a results database (`relative_change`, the gate); "
     "default: the earlier rows of the perf CSV",
     CI, NULL},
    {"fail-on-regression", 0, NUM(fail_on_regression), "PCT",
     "exit 6 when every model ran but a metric is worse than its history's reference level by "
     "more than PCT percent and outside the noise (docs/nightly.md), or outside its pinned "
     "reference",
     CI, NULL},
    {"references", 0, STR(references), "FILE",
     "pinned references, YAML or JSON: `{model: {metric: {value: V, lower: PCT, upper: "
     "PCT}}}`; a value outside on the bad side is a regression",
     CI, NULL},
    {"history-window", 0, INT(history_window), "N",
     "runs of each model and metric the gate reads (default 30, at most 200)",
     CI | CMD_REPORT_HTML | CMD_ACCEPT | CMD_REPORT_COMPARE, NULL},
    /* accept */
    {"model", 0, STR(model), "NAME", "the model whose change is intended", CMD_ACCEPT, NULL},
    {"metric", 0, STR(metric), "NAME", "only this metric (default: every metric of the model)",
     CMD_ACCEPT, NULL},
    {"since", 0, STR(since), "RUN_ID",
     "the run the intended change starts at (default: where the gate finds the model's "
     "current regression started)",
     CMD_ACCEPT, NULL},
    {"machine", 0, STR(machine), "HOST", "only this machine (default: every machine)", CMD_ACCEPT,
     NULL},
    {"reason", 0, STR(reason), "TEXT", "why the change is intended, kept with the record",
     CMD_ACCEPT, NULL},
    {"config", 0, STR(config), "KEY|PARAMS",
     "only this configuration: its key (perf.csv's `config_key`) or its parameters as reports "
     "name them (`batch_size=8,precision=bf16`; default: every configuration)",
     CMD_ACCEPT, NULL},
    {"fail-on-regression", 0, NUM(fail_on_regression), "PCT",
     "without `--since`: the threshold the gate uses (default 5)", CMD_ACCEPT, NULL},
    /* report ci, report html, export */
    {"output", 'o', STR(output), "FILE", "the report to write (default `report.html`)",
     CMD_REPORT_HTML, NULL},
    {"db", 0, LIST(db), "URL",
     "read the history from a results database (`sqlite:PATH`, `postgresql://...`); "
     "repeatable",
     CMD_REPORT_HTML, NULL},
    {"db", 0, LIST(db), "URL",
     "the database: `sqlite:PATH` (default `sqlite:run_models.db`) or `postgresql://...`",
     CMD_EXPORT, NULL},
    {"output", 'o', STR(output), "FILE", "write the comparison there (default: stdout)",
     CMD_REPORT_COMPARE, NULL},
    {"format", 0, CHOICE(format, compare_formats),
     "`text` (default), `markdown` (for a CI summary or a pull request) or `json`",
     CMD_REPORT_COMPARE, NULL},
    {"threshold", 0, NUM(threshold), "PCT",
     "the gate's threshold for the verdicts, percent (default 5)", CMD_REPORT_COMPARE, NULL},
    {"title", 0, STR(title), "TEXT", "the page title", CMD_REPORT_HTML, NULL},
    {"threshold", 0, NUM(threshold), "PCT", "a change beyond PCT percent is coloured (default 5)",
     CMD_REPORT_HTML, NULL},
    {"run-id", 0, STR(run_id), "ID", "the run to report on (default: the last one)", CMD_REPORT_CI,
     NULL},
    {"run-id", 0, STR(run_id), "ID", "export only this run", CMD_EXPORT, NULL},
    {"manifest", 0, STR(manifest), "FILE",
     "the run's `run.json` (default: `run.json` beside the perf CSV, when there is one)",
     CMD_REPORT_CI | CMD_EXPORT, NULL},
    {"models-root", 0, STR(models_root), "DIR",
     "read `metric_direction` overrides from DIR/models.json",
     CMD_REPORT_HTML | CMD_REPORT_CI | CMD_EXPORT | CMD_ACCEPT, NULL},
    {"add", 0, LIST(archive_add), "PATH", "one more file or folder for the archive; repeatable",
     CMD_REPORT_CI, NULL},
    {"no-metrics", 0, FLAG(no_metrics), NULL, "leave the perf_<model>.csv files out", CMD_EXPORT,
     NULL},
    /* report sweep */
    {"rows", 0, STR(rows), "DIM",
     "the dimension down the table: a parameter of the configurations (`batch_size`, "
     "`env.NAME`, `tunableop`, a MAD cell's `con`), or `model`",
     CMD_REPORT_SWEEP, NULL},
    {"columns", 0, STR(columns), "DIM", "the dimension across the table (default: none)",
     CMD_REPORT_SWEEP, NULL},
    {"metric", 0, STR(metric), "NAME",
     "the metric in the cells (default: every metric, a table each); a MAD cell's metric by "
     "its name without the cell (`tok/s`)",
     CMD_REPORT_SWEEP, NULL},
    {"model", 0, STR(model), "NAME", "only this model (default: every model)", CMD_REPORT_SWEEP,
     NULL},
    {"run-id", 0, STR(run_id), "ID", "the run to tabulate (default: the last one)",
     CMD_REPORT_SWEEP, NULL},
    {"format", 0, CHOICE(format, sweep_formats),
     "`text` (default: aligned columns), `markdown` or `csv`", CMD_REPORT_SWEEP, NULL},
    /* parse */
    {"parser", 0, STR(parser), "NAME", "parser to use (default `auto`: recognise the format)",
     CMD_PARSE, NULL},
    {"format", 0, CHOICE(format, parse_formats), "output format (default `csv`)", CMD_PARSE, NULL},
    {"warmup", 0, STR(warmup), "auto|N",
     "warm-up steps left out of means: `auto` (default, from the data) or the first N", CMD_PARSE,
     NULL},
    {"explain", 0, FLAG(explain), NULL,
     "print on stderr why `auto` took or dropped each candidate parser", CMD_PARSE, NULL},
    {"list-parsers", 0, FLAG(list_parsers), NULL, "print the parser names, one per line, and exit",
     CMD_PARSE, NULL},
    /* doctor */
    {"format", 0, CHOICE(format, doctor_formats), "one line per finding (default), or a JSON array",
     CMD_DOCTOR, NULL},
    {"gpus", 0, FLAG(gpus), NULL,
     "the pre-flight check of every GPU instead (what `run --preflight` checks before each "
     "model: memory in use, ECC and RAS errors, retired pages, power limit, clocks, PCIe link)",
     CMD_DOCTOR, NULL},
    /* list */
    {"format", 0, CHOICE(format, list_formats),
     "`table` (default: a header and aligned columns, cut to the terminal's width), or `csv` "
     "or `json` for scripts",
     CMD_LIST, NULL},
    /* every command */
    {"color", 0, CHOICE(color, rm_color_words),
     "colour SUCCESS, FAILURE, SKIPPED and warnings: `auto` (default) on a terminal unless "
     "`NO_COLOR` is set",
     CMD_ALL, "colour"},
    {NULL, 0, OPT_FLAG, 0, NULL, NULL, NULL, 0, NULL},
};
#undef SEL
#undef CI
#undef RB

void cli_init(struct cli *c)
{
	memset(c, 0, sizeof(*c));
	c->timeout = -1;
	c->build_timeout = RM_BUILD_TIMEOUT_DEFAULT;
	c->repeat = 1;
	c->retries = -1;
	c->retry_wait = -1;
	c->progress_interval = 30;
	c->fail_on_regression = -1;
	c->threshold = -1;
}

int cli_warmup(const struct cli *c, long *warmup, rm_error *err)
{
	if (!c->warmup || !strcmp(c->warmup, "auto")) {
		*warmup = RM_PARSER_WARMUP_AUTO;
		return 0;
	}
	if (rm_parse_long(c->warmup, 0, 1000000, warmup) < 0)
		return rm_error_set(err, RM_ERR_USAGE,
				    "--warmup takes 'auto' or a whole number >= 0, not '%s'",
				    c->warmup);
	return 0;
}

void opt_list_release(struct opt_list *l)
{
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

void cli_release(struct cli *c)
{
	opt_list_release(&c->tags);
	opt_list_release(&c->contexts);
	opt_list_release(&c->context_files);
	opt_list_release(&c->archive_add);
	opt_list_release(&c->export_dbs);
	opt_list_release(&c->db);
}

int cli_run_dynamic(const struct cli *c)
{
	const char *v = getenv("RM_DYNAMIC_REGISTRY");

	if (c->dynamic_registry == DYNAMIC_DEFAULT)
		return v && !strcmp(v, "run");
	return c->dynamic_registry == DYNAMIC_RUN;
}

char *opt_arg_text(const struct opt *o)
{
	if (o->type == OPT_CHOICE)
		return rm_choice_list(o->choices, "", "|", "|");
	return o->arg ? rm_xstrdup(o->arg) : NULL;
}

int cli_quiet(const struct cli *c, int *quiet, rm_error *err)
{
	static const char *const loud[] = {"DEBUG", "INFO", "NOTSET", NULL};
	static const char *const hushed[] = {"WARNING", "WARN", "ERROR", "CRITICAL", "FATAL", NULL};

	*quiet = c->quiet;
	if (!c->log_level)
		return 0;
	for (size_t i = 0; loud[i]; i++)
		if (!strcasecmp(c->log_level, loud[i]))
			return 0;
	for (size_t i = 0; hushed[i]; i++)
		if (!strcasecmp(c->log_level, hushed[i])) {
			*quiet = 1;
			return 0;
		}
	return rm_error_set(err, RM_ERR_USAGE,
			    "--log-level takes DEBUG, INFO, WARNING or ERROR (MAD's levels), not "
			    "'%s'",
			    c->log_level);
}

static void list_add(struct opt_list *l, const char *s)
{
	l->v = rm_xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = s;
}

static int set_value(const struct opt *o, struct cli *c, const char *val, rm_error *err)
{
	char *field = (char *)c + o->offset;
	switch (o->type) {
	case OPT_FLAG:
		*(int *)field = 1;
		return 0;
	case OPT_STRING:
		*(const char **)field = val;
		return 0;
	case OPT_LIST:
	case OPT_WORDS:
		list_add((struct opt_list *)field, val);
		return 0;
	case OPT_NUMBER: {
		double d;
		if (rm_parse_double(val, &d) < 0 || d < 0)
			return rm_error_set(err, RM_ERR_USAGE,
					    "--%s takes a number%s >= 0, not '%s'", o->name,
					    !strcmp(o->arg, "S") ? " of seconds" : "", val);
		*(double *)field = d;
		return 0;
	}
	case OPT_SECONDS: {
		double d;
		if (rm_parse_double(val, &d) < 0)
			return rm_error_set(err, RM_ERR_USAGE,
					    "--%s takes a number of seconds (0 or negative: none), "
					    "not '%s'",
					    o->name, val);
		*(double *)field = d < 0 ? 0 : d;
		return 0;
	}
	case OPT_CHOICE: {
		int v;
		if (rm_choice_parse(o->choices, val, &v) < 0) {
			char *words = rm_choice_list(o->choices, "'", ", ", " or ");
			rm_error_set(err, RM_ERR_USAGE, "--%s takes %s, not '%s'", o->name, words,
				     val);
			free(words);
			return -1;
		}
		*(int *)field = v;
		return 0;
	}
	case OPT_INT: {
		/* the counts with a range of their own, said the same way whatever the value */
		static const struct {
			const char *name;
			long lo, hi;
		} ranges[] = {{"repeat", 1, 1000000}, {"history-window", 2, RM_DETECT_MAX_WINDOW}};
		long l, lo = 0, hi = 1000000;
		for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
			if (!strcmp(o->name, ranges[i].name))
				lo = ranges[i].lo, hi = ranges[i].hi;
		if (rm_parse_long(val, lo, hi, &l) < 0)
			return lo ? rm_error_set(
					err, RM_ERR_USAGE,
					"--%s takes a whole number from %ld to %ld, not '%s'",
					o->name, lo, hi, val)
				  : rm_error_set(err, RM_ERR_USAGE,
						 "--%s takes a whole number >= 0, not '%s'",
						 o->name, val);
		*(long *)field = l;
		return 0;
	}
	}
	return 0;
}

/* madengine's spellings with no counterpart here: refused, saying what to use instead. */
static const struct {
	const char *name; /* without "--" */
	const char *instead;
} refused[] = {
    {"summary-output", "madengine's JSON summary of the run is not written by run_models: the "
		       "results are in the perf CSV (-o), and --junit FILE or --summary-markdown "
		       "FILE write a summary for CI"},
    {"summary_output", "madengine's JSON summary of the run is not written by run_models: the "
		       "results are in the perf CSV (-o), and --junit FILE or --summary-markdown "
		       "FILE write a summary for CI"},
    {NULL, NULL}};

/* Whether the long option spelled name[0..len) is o's name or one of its aliases. */
static int spells(const struct opt *o, const char *name, size_t len)
{
	const char *a = o->aliases;

	if (strlen(o->name) == len && !strncmp(o->name, name, len))
		return 1;
	while (a && *a) {
		size_t n = strcspn(a, " ");
		if (n == len && !strncmp(a, name, len))
			return 1;
		a += n;
		a += *a == ' ';
	}
	return 0;
}

static const struct opt *find_long(unsigned accept, const char *name, size_t len)
{
	for (const struct opt *t = opt_table; t->name; t++)
		if ((t->cmds & accept) && spells(t, name, len))
			return t;
	return NULL;
}

static const struct opt *find_short(unsigned accept, char c)
{
	for (const struct opt *t = opt_table; t->name; t++)
		if ((t->cmds & accept) && t->short_name == c)
			return t;
	return NULL;
}

int opt_parse(unsigned accept, struct cli *c, int argc, char **argv, struct opt_list *positional,
	      int *help_markdown, rm_error *err)
{
	*help_markdown = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const struct opt *o = NULL;
		const char *val = NULL;

		if (!strcmp(a, "--")) {
			while (++i < argc)
				list_add(positional, argv[i]);
			break;
		}
		if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			return 1;
		if (!strcmp(a, "--help=markdown")) {
			*help_markdown = 1;
			return 1;
		}
		if (a[0] != '-' || !a[1]) {
			list_add(positional, a);
			continue;
		}
		if (a[1] == '-') {
			const char *name = a + 2, *eq = strchr(name, '=');
			o = find_long(accept, name, eq ? (size_t)(eq - name) : strlen(name));
			if (o && eq)
				val = eq + 1;
		} else if (!a[2]) {
			o = find_short(accept, a[1]);
		}
		for (size_t k = 0; !o && a[1] == '-' && refused[k].name; k++) {
			size_t len = strcspn(a + 2, "=");
			if (strlen(refused[k].name) == len && !strncmp(a + 2, refused[k].name, len))
				return rm_error_set(err, RM_ERR_USAGE, "'--%s': %s",
						    refused[k].name, refused[k].instead);
		}
		if (!o && !strcmp(a, "-s"))
			return rm_error_set(err, RM_ERR_USAGE,
					    "'-s' (madengine's --summary-output): %s",
					    refused[0].instead);
		if (!o)
			return rm_error_set(err, RM_ERR_USAGE,
					    "unknown option '%s' (see '%s --help')", a, argv[0]);
		if (o->type == OPT_FLAG) {
			if (val)
				return rm_error_set(err, RM_ERR_USAGE, "--%s takes no value",
						    o->name);
		} else if (!val) {
			if (i + 1 >= argc)
				return rm_error_set(err, RM_ERR_USAGE, "--%s needs a value (%s)",
						    o->name, o->arg);
			val = argv[++i];
		}
		if (set_value(o, c, val, err) < 0)
			return -1;
		/* argparse's nargs='+': the words up to the next option belong to it too. */
		while (o->type == OPT_WORDS && i + 1 < argc && argv[i + 1][0] != '-')
			list_add((struct opt_list *)((char *)c + o->offset), argv[++i]);
	}
	if (c->color)
		rm_color_set((enum rm_color_when)c->color);
	return 0;
}
