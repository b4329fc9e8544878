/*
 * What is generated from the option table (options.c) and the command list below: --help
 * (wrapped to the terminal), the README's Markdown tables (--help=markdown), the man page
 * (run_models --help=man) and the bash completion (run_models completion bash).
 */
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "options.h"
#include "rm/util.h"

const struct opt_cmd opt_cmds[] = {
    {"run", CMD_RUN, "run_models [run] --tags TAG[,TAG...] [options]",
     "Builds the image of each selected model, runs its container through the Docker Engine "
     "API, streams its output to the log files (and the terminal with `--live-output`), parses "
     "it and appends a row per run to the perf CSV. Ends with a table of the runs: model, "
     "status, performance, metric and duration. `run` is the default command."},
    {"list", CMD_LIST, "run_models list [--tags TAG] [options]",
     "Prints the selected models (default: all) with the Dockerfiles this host's context "
     "keeps, their parser and tags; `discover` is the same. It accepts every `run` option "
     "(without effect), so that a run's command line can be listed as it is."},
    {"parse", CMD_PARSE, "run_models parse [options] LOGFILE",
     "Re-parses an existing log with a workload parser and prints the metrics it finds."},
    {"doctor", CMD_DOCTOR, "run_models doctor [--gpus] [--format text|json]",
     "Checks this host before benchmarking: the engine, GPUs, drivers, memory, disks; with "
     "`--gpus`, the pre-flight check of every GPU."},
    {"report html", CMD_REPORT_HTML, "run_models report html [PERF_CSV...|DB_URL] [-o FILE]",
     "One self-contained HTML trend report over the history in perf CSV files or a results "
     "database."},
    {"report compare", CMD_REPORT_COMPARE,
     "run_models report compare A B [PERF_CSV|DB_URL] [options]",
     "Two runs (run ids in a perf CSV or a database, or two perf CSV files: their last runs) "
     "side by side: each metric's change with the gate's verdict, then every difference in "
     "what made them (image, driver and firmware, environment, arguments, host)."},
    {"report ci", CMD_REPORT_CI, "run_models report ci [PERF_CSV] [options]",
     "The end of a nightly run from its files: the regression gate, JUnit, the Markdown "
     "summary, the report, the export and the archive."},
    {"report sweep", CMD_REPORT_SWEEP,
     "run_models report sweep [PERF_CSV] --rows DIM [--columns DIM] [--metric M]",
     "A metric by the parameters of a run's configurations (a suite's sweep, `name:key=value` "
     "tags, MAD's cells): a table per model and metric, in text, Markdown or CSV."},
    {"export", CMD_EXPORT, "run_models export [--db URL] [PERF_CSV...]",
     "Exports perf CSV rows, their metrics and run.json to SQLite or PostgreSQL."},
    {"suite", CMD_SUITE, "run_models suite FILE.yaml",
     "Checks a suite file and prints its resolved entries as JSON, each sweep's points with "
     "their parameters."},
    {"build", CMD_BUILD,
     "run_models build --tags TAG[,TAG...] [--registry HOST:PORT] [--manifest FILE] [options]",
     "Builds (and pushes) the selected models' images and writes a build manifest that `run "
     "--manifest` runs."},
    {"accept", CMD_ACCEPT, "run_models accept [PERF_CSV|DB_URL] --model NAME [options]",
     "Records that a model's change is intended from a run on (the run where the gate finds "
     "its regression started, or `--since RUN_ID`), in the perf CSV's companion file "
     "(`perf.accepted.csv`) or the database: the gate then judges it only from that run on."},
    {"completion", CMD_COMPLETION, "run_models completion bash|tags",
     "`bash` prints the bash completion script (installed with run_models); `tags` prints the "
     "model names and tags of the folder's models.json, which the script completes "
     "`--tags` with."},
    {NULL, 0, NULL, NULL},
};

/* ---- --help ---- */

size_t opt_help_width(FILE *f)
{
	int w = rm_term_width(f);
	if (w <= 0)
		return 80;
	return w > 100 ? 100 : (size_t)w;
}

void opt_wrap(FILE *f, const char *text, size_t first_col, size_t indent, size_t width)
{
	size_t col = first_col, start = first_col;

	if (width <= indent + 8)
		width = indent + 8;
	while (*text) {
		size_t word = strcspn(text, " \n"), shown = 0;
		for (size_t i = 0; i < word; i++)
			shown += text[i] != '`' && ((unsigned char)text[i] & 0xc0) != 0x80;
		if (col > start && col + 1 + shown > width) {
			fprintf(f, "\n%*s", (int)indent, "");
			col = start = indent;
		} else if (col > start) {
			fputc(' ', f);
			col++;
		}
		for (size_t i = 0; i < word; i++) {
			if (text[i] == '`')
				continue;
			/* a word longer than a whole line is cut where the line ends */
			if (col >= width && ((unsigned char)text[i] & 0xc0) != 0x80) {
				fprintf(f, "\n%*s", (int)indent, "");
				col = start = indent;
			}
			fputc(text[i], f);
			col += ((unsigned char)text[i] & 0xc0) != 0x80;
		}
		text += word;
		if (*text == '\n') {
			fprintf(f, "\n%*s", (int)indent, "");
			col = start = indent;
			text++;
			continue;
		}
		while (*text == ' ')
			text++;
	}
	fputc('\n', f);
}

/* "-t, --tags TAGS" or "    --log-dir DIR" (markdown: no indent for a missing short). */
static void left_column(char *buf, size_t size, const struct opt *t, int markdown)
{
	const char *pad = markdown ? "" : "    ";
	char *arg = opt_arg_text(t);

	if (t->short_name)
		snprintf(buf, size, "-%c, --%s%s%s", t->short_name, t->name, arg ? " " : "",
			 arg ? arg : "");
	else
		snprintf(buf, size, "%s--%s%s%s", pad, t->name, arg ? " " : "", arg ? arg : "");
	free(arg);
}

/* " (also --a, --b)" */
static char *aliases_text(const struct opt *t)
{
	rm_buf b = RM_BUF_INIT(4096);
	const char *a = t->aliases;

	if (!a)
		return rm_xstrdup("");
	rm_buf_addstr(&b, " (also");
	while (*a) {
		size_t n = strcspn(a, " ");
		rm_buf_addf(&b, "%s --%.*s", b.len > 6 ? "," : "", (int)n, a);
		a += n;
		a += *a == ' ';
	}
	rm_buf_addch(&b, ')');
	return rm_buf_detach(&b);
}

/* The usage text: each of its lines wrapped, continuation lines indented. */
static void usage_text(FILE *f, const char *usage, size_t width)
{
	while (*usage) {
		size_t n = strcspn(usage, "\n");
		char *line = rm_xstrndup(usage, n);
		opt_wrap(f, line, 0, rm_starts_with(line, "usage: ") ? 7 : 0, width);
		free(line);
		usage += n;
		usage += *usage == '\n';
	}
}

void opt_help(FILE *f, unsigned cmd, const char *usage, int markdown)
{
	size_t width = opt_help_width(f);
	/* The help column: 37 on a wide terminal, 30 at 80 columns, and under the option on a
	 * narrow one. */
	size_t indent = width >= 96 ? 37 : width >= 72 ? 30 : 8;

	if (markdown) {
		fputs("| option | meaning |\n|---|---|\n", f);
	} else {
		usage_text(f, usage, width);
		fputs("\noptions:\n", f);
	}
	for (const struct opt *t = opt_table; t->name; t++) {
		char left[64];
		char *also;
		if (!(t->cmds & cmd))
			continue;
		also = aliases_text(t);
		left_column(left, sizeof(left), t, markdown);
		if (markdown) {
			/* a | inside a cell would end it */
			fputs("| `", f);
			for (const char *p = left; *p; p++) {
				if (*p == '|')
					fputc('\\', f);
				fputc(*p, f);
			}
			fprintf(f, "` | %s%s |\n", t->help, also);
		} else {
			char *text = rm_xasprintf("%s%s", t->help, also);
			size_t n = (size_t)fprintf(f, "  %s", left);
			if (n + 1 >= indent) {
				fprintf(f, "\n%*s", (int)indent, "");
			} else {
				fprintf(f, "%*s", (int)(indent - n), "");
			}
			opt_wrap(f, text, indent, indent, width);
			free(text);
		}
		free(also);
	}
	if (!markdown)
		fprintf(f, "  -h, --help%*sshow this help\n", (int)(indent > 12 ? indent - 12 : 1),
			"");
}

/* ---- the man page ---- */

/* Text for roff: backslashes and dashes escaped, Markdown code in bold. */
static void roff(FILE *f, const char *s)
{
	int code = 0;

	if (*s == '.' || *s == '\'')
		fputs("\\&", f);
	for (; *s; s++) {
		if (*s == '`') {
			fputs(code ? "\\fR" : "\\fB", f);
			code = !code;
		} else if (*s == '\\') {
			fputs("\\e", f);
		} else if (*s == '-') {
			fputs("\\-", f);
		} else if (*s == '\n') {
			fputs("\n.br\n", f);
		} else {
			fputc(*s, f);
		}
	}
	if (code)
		fputs("\\fR", f);
}

/* A list of terms and their meanings (.TP paragraphs). */
static void roff_terms(FILE *f, const char *const (*rows)[2], size_t n)
{
	for (size_t i = 0; i < n; i++) {
		fputs(".TP\n.B ", f);
		roff(f, rows[i][0]);
		fputc('\n', f);
		roff(f, rows[i][1]);
		fputc('\n', f);
	}
}

static void man_options(FILE *f, unsigned cmd)
{
	for (const struct opt *t = opt_table; t->name; t++) {
		char left[64];
		char *also;
		if (!(t->cmds & cmd))
			continue;
		also = aliases_text(t);
		left_column(left, sizeof(left), t, 1);
		fputs(".TP\n.B ", f);
		roff(f, left);
		fputc('\n', f);
		roff(f, t->help);
		roff(f, also);
		fputc('\n', f);
		free(also);
	}
}

void opt_man(FILE *f)
{
	fputs(".TH RUN_MODELS 1 \"\" \"run_models " RM_VERSION "\" \"User Commands\"\n"
	      ".SH NAME\n"
	      "run_models \\- build, run and measure the GPU benchmark workloads of a MAD-style "
	      "models.json\n"
	      ".SH SYNOPSIS\n",
	      f);
	for (const struct opt_cmd *c = opt_cmds; c->name; c++) {
		fputs(".B ", f);
		roff(f, c->synopsis);
		fputs("\n.br\n", f);
	}
	fputs(".SH DESCRIPTION\n", f);
	roff(f, "run_models reads a MAD-style registry (`models.json`, `docker/`, `scripts/`) in "
		"the current folder, picks workloads by tag, builds each one's Docker image and "
		"runs its container through the Docker Engine API, streams the output to log "
		"files, parses it with a per-workload parser and appends the results to "
		"`perf.csv`. Its flags, folders and perf.csv are those of ROCm/MAD's "
		"run_models.py and madengine.");
	fputs("\n.SH COMMANDS\n", f);
	for (const struct opt_cmd *c = opt_cmds; c->name; c++) {
		fputs(".SS \"", f);
		roff(f, c->name);
		fputs("\"\n", f);
		roff(f, c->about);
		fputc('\n', f);
		if (c->mask != CMD_COMPLETION)
			man_options(f, c->mask);
	}
	fputs(".SH ENVIRONMENT\n", f);
	static const char *const env[][2] = {
	    {"DOCKER_HOST",
	     "the engine (`unix:///path` or `tcp://host:port`); without it, "
	     "`/var/run/docker.sock` when that socket exists, else the private engine that the "
	     "set-up (tools/ensure-docker.sh) starts under `/var/tmp/run_models-dockerd`"},
	    {"RM_DOCKER_DIR", "where that private engine lives, when not the default"},
	    {"NO_COLOR", "set and not empty: no colour (as `--color never`)"},
	    {"MAD_SECRETS_*",
	     "every host variable whose name holds MAD_SECRETS reaches the containers in the "
	     "request body only, and is masked as *** in logs, CSVs and messages"},
	    {"RM_DYNAMIC_REGISTRY", "`run`: run the folder's get_models_json.py files"},
	    {"GITHUB_STEP_SUMMARY", "the Markdown summary of a CI run is appended to this file"},
	};
	roff_terms(f, env, sizeof(env) / sizeof(env[0]));
	fputs(".SH EXIT STATUS\n", f);
	static const char *const codes[][2] = {
	    {"0", "every selected model succeeded"},
	    {"1", "a model failed (perf.csv's reason column says why); parse: no figure found"},
	    {"2", "a bad command line"},
	    {"3", "bad input: models.json, a context, a Dockerfile, a tag that selects nothing"},
	    {"4", "the Docker engine is unreachable, refuses, or was lost"},
	    {"5", "local files: perf.csv, the logs"},
	    {"6", "every model ran and a metric regressed (--fail-on-regression)"},
	    {"129, 130, 143", "stopped by SIGHUP, SIGINT or SIGTERM (what ran is removed)"},
	};
	roff_terms(f, codes, sizeof(codes) / sizeof(codes[0]));
	fputs(".SH FILES\n", f);
	roff(f, "`models.json`, `docker/`, `scripts/` (the registry, read from the current "
		"folder); `perf.csv`, `perf_<model>.csv`, `perf_summary.csv` (results); "
		"`<model>.live.log`, `<model>.build.log` (logs, in --log-dir).");
	fputs("\n.SH SEE ALSO\n", f);
	roff(f, "docker(1), sbatch(1); the README and docs/ of the run_models sources.");
	fputc('\n', f);
}

/* ---- bash completion ---- */

/* The values to offer: a choice row's words, space-separated, else NULL. */
static char *choices(const struct opt *t)
{
	return t->type == OPT_CHOICE ? rm_choice_list(t->choices, "", " ", " ") : NULL;
}

/* Every spelling of a row: "-t --tags --model_name --model-name". */
static char *spellings(const struct opt *t)
{
	rm_buf b = RM_BUF_INIT(4096);
	const char *a = t->aliases;

	if (t->short_name)
		rm_buf_addf(&b, "-%c ", t->short_name);
	rm_buf_addf(&b, "--%s", t->name);
	while (a && *a) {
		size_t n = strcspn(a, " ");
		rm_buf_addf(&b, " --%.*s", (int)n, a);
		a += n;
		a += *a == ' ';
	}
	return rm_buf_detach(&b);
}

/* The case arms that complete an option's value for command mask cmd. */
static void completion_values(FILE *f, unsigned cmd)
{
	for (const struct opt *t = opt_table; t->name; t++) {
		char *names, *w;
		if (!(t->cmds & cmd) || t->type == OPT_FLAG)
			continue;
		names = spellings(t);
		for (char *p = names; *p; p++)
			if (*p == ' ')
				*p = '|';
		w = choices(t);
		if (t->type == OPT_WORDS)
			fprintf(f, "\t\t%s) _run_models_tags; return ;;\n", names);
		else if (w)
			fprintf(f,
				"\t\t%s) COMPREPLY=($(compgen -W '%s' -- \"$cur\")); return ;;\n",
				names, w);
		else if (strstr(t->arg, "DIR"))
			fprintf(f, "\t\t%s) COMPREPLY=($(compgen -d -- \"$cur\")); return ;;\n",
				names);
		else if (strstr(t->arg, "FILE") || strstr(t->arg, "PATH"))
			fprintf(f, "\t\t%s) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n",
				names);
		else
			fprintf(f, "\t\t%s) return ;;\n", names);
		free(w);
		free(names);
	}
}

static void completion_options(FILE *f, unsigned cmd)
{
	for (const struct opt *t = opt_table; t->name; t++)
		if (t->cmds & cmd)
			fprintf(f, "--%s ", t->name);
	fputs("--help", f);
}

void opt_bash_completion(FILE *f)
{
	static const struct {
		const char *word;
		unsigned mask;
	} cmds[] = {{"run", CMD_RUN},
		    {"list", CMD_LIST | CMD_RUN},
		    {"discover", CMD_LIST | CMD_RUN},
		    {"parse", CMD_PARSE},
		    {"doctor", CMD_DOCTOR},
		    {"report html", CMD_REPORT_HTML},
		    {"report ci", CMD_REPORT_CI},
		    {"report compare", CMD_REPORT_COMPARE},
		    {"report sweep", CMD_REPORT_SWEEP},
		    {"export", CMD_EXPORT},
		    {"suite", CMD_SUITE},
		    {"build", CMD_BUILD},
		    {"accept", CMD_ACCEPT},
		    {"completion", CMD_COMPLETION}};
	const size_t n = sizeof(cmds) / sizeof(cmds[0]);

	fputs("# bash completion for run_models (generated by 'run_models completion bash' from\n"
	      "# its option table): commands, options, option values, and the model names and\n"
	      "# tags of the models.json in the current folder after --tags.\n\n"
	      "_run_models_tags() {\n"
	      "\tlocal pre=\"\" words\n"
	      "\t# a comma list: complete its last item\n"
	      "\t[[ $cur == *,* ]] && pre=${cur%,*},\n"
	      "\twords=$(\"${COMP_WORDS[0]}\" completion tags 2>/dev/null)\n"
	      "\tCOMPREPLY=($(compgen -P \"$pre\" -W \"$words\" -- \"${cur##*,}\"))\n"
	      "}\n\n"
	      "_run_models() {\n"
	      "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}\n"
	      "\tlocal cmd=run sub=\"\" i w\n"
	      "\tfor ((i = 1; i < COMP_CWORD; i++)); do\n"
	      "\t\tw=${COMP_WORDS[i]}\n"
	      "\t\tcase $w in\n"
	      "\t\trun | list | discover | parse | doctor | report | export | suite | build | "
	      "completion)\n"
	      "\t\t\t[ $i = 1 ] && cmd=$w\n"
	      "\t\t\t;;\n"
	      "\t\thtml | ci | sweep) [ \"$cmd\" = report ] && [ $i = 2 ] && sub=\" $w\" ;;\n"
	      "\t\tesac\n"
	      "\tdone\n"
	      "\tif [ \"$COMP_CWORD\" = 1 ] && [[ $cur != -* ]]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W 'run list discover parse doctor report export suite "
	      "build completion' -- \"$cur\"))\n"
	      "\t\treturn\n"
	      "\tfi\n"
	      "\tif [ \"$cmd\" = report ] && [ -z \"$sub\" ]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W 'html ci compare sweep' -- \"$cur\"))\n"
	      "\t\treturn\n"
	      "\tfi\n"
	      "\tif [ \"$cmd\" = completion ]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W 'bash tags' -- \"$cur\"))\n"
	      "\t\treturn\n"
	      "\tfi\n"
	      "\t# the words after --tags are tags too, up to the next option (as in madengine)\n"
	      "\tif [[ $cur != -* ]]; then\n"
	      "\t\tfor ((i = COMP_CWORD - 1; i > 0; i--)); do\n"
	      "\t\t\tw=${COMP_WORDS[i]}\n"
	      "\t\t\t[[ $w == -* ]] || continue\n"
	      "\t\t\tcase $w in\n"
	      "\t\t\t-t | --tags | --model_name | --model-name) _run_models_tags; return ;;\n"
	      "\t\t\tesac\n"
	      "\t\t\tbreak\n"
	      "\t\tdone\n"
	      "\tfi\n"
	      "\tcase \"$cmd$sub\" in\n",
	      f);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "\t\"%s\")\n\t\tcase $prev in\n", cmds[i].word);
		completion_values(f, cmds[i].mask);
		fputs("\t\tesac\n\t\tif [[ $cur == -* ]]; then\n\t\t\tCOMPREPLY=($(compgen -W '",
		      f);
		completion_options(f, cmds[i].mask);
		fputs("' -- \"$cur\"))\n\t\telse\n\t\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n"
		      "\t\tfi\n\t\t;;\n",
		      f);
	}
	fputs("\tesac\n}\ncomplete -o filenames -F _run_models run_models\n", f);
}
