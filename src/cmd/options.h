/*
 * Every option of every command is declared once, in one table (options.c): its name, short
 * name, other spellings (MAD's and madengine's), argument, help text and the commands that
 * accept it. The parser, --help and the README's option tables (--help=markdown) all come
 * from it, so they cannot drift (git's parse-options). Each row writes into a field of
 * struct cli, which every command shares.
 */
#ifndef RM_OPTIONS_H
#define RM_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

#include "rm/util.h"

/* The commands an option belongs to. */
enum {
	CMD_RUN = 1 << 0,
	CMD_LIST = 1 << 1,
	CMD_PARSE = 1 << 2,
	CMD_DOCTOR = 1 << 3,
	CMD_REPORT_HTML = 1 << 4,
	CMD_REPORT_CI = 1 << 5,
	CMD_EXPORT = 1 << 6,
	CMD_SUITE = 1 << 7,
	CMD_BUILD = 1 << 8,
	CMD_NODE_RUN = 1 << 9, /* hidden: what each SLURM task runs */
	CMD_COMPLETION = 1 << 10,
	CMD_ACCEPT = 1 << 11,
	CMD_REPORT_SWEEP = 1 << 12,
	CMD_REPORT_COMPARE = 1 << 13,
	CMD_ALL = (1 << 14) - 1,
};

enum opt_type {
	OPT_FLAG,    /* int, set to 1 */
	OPT_STRING,  /* const char *, the last one wins */
	OPT_LIST,    /* struct opt_list, every occurrence appended */
	OPT_WORDS,   /* OPT_LIST, and the words after it up to the next option (nargs='+') */
	OPT_NUMBER,  /* double, >= 0 */
	OPT_INT,     /* long, >= 0 */
	OPT_SECONDS, /* double; a negative value (madengine's -1) means none and is stored as 0 */
	OPT_CHOICE,  /* int: the value of one of the row's choices (0: not given) */
};

/* The values of --format: each command's row takes some of them. */
enum cli_format {
	FORMAT_DEFAULT = 0,
	FORMAT_CSV,
	FORMAT_JSON,
	FORMAT_TEXT,
	FORMAT_TABLE,
	FORMAT_MARKDOWN
};
/* --dynamic-registry */
enum cli_dynamic { DYNAMIC_DEFAULT = 0, DYNAMIC_RUN, DYNAMIC_SKIP };
/* --score */
enum cli_score { SCORE_NONE = 0, SCORE_MLPERF };

struct opt_list {
	const char **v;
	size_t n;
};

/* The values of every option; the command reads the fields its options fill. */
struct cli {
	/* run, list: the selection and the context */
	struct opt_list tags;
	struct opt_list contexts;
	struct opt_list context_files;
	int dynamic_registry; /* enum cli_dynamic */
	/* run */
	const char *output;
	const char *log_dir;
	const char *parser; /* also parse */
	double timeout;
	double build_timeout; /* --build-timeout: 0 none */
	int live_output;
	int keep_alive;
	int allow_sensitive_mounts;
	int keep_model_dir;
	int clean_docker_cache;
	int no_pull;
	int skip_model_run;
	int disable_skip_gpu_arch;
	const char *data_config;
	const char *tools_config;
	const char *force_mirror_local;
	int list;
	int quiet;
	/* madengine's and MAD's spellings (options.c): --verbose, --log-level, --cleanup-perf,
	 * --ignore-deprecated */
	int verbose;
	const char *log_level;
	int cleanup_perf;
	int ignore_deprecated;
	int tunableop; /* rm_tunableop */
	const char *shm_size;
	int telemetry; /* rm_telemetry_mode */
	int engine;    /* rm_engine_kind: RM_ENGINE_ANY = ask the engine */
	int dry_run;
	long repeat;
	long retries;	   /* -1 when not given (a suite's entries then say) */
	double retry_wait; /* seconds; -1 when not given */
	int preflight;	   /* rm_preflight_mode */
	int score;	   /* enum cli_score */
	int no_progress;
	double progress_interval;
	int sys_env_details;
	const char *warmup; /* "auto" or N; also parse */
	/* run, report ci: the CI outputs and the regression gate (docs/nightly.md) */
	const char *suite;
	const char *junit;
	const char *summary_markdown;
	const char *html;
	const char *archive;
	struct opt_list export_dbs;
	const char *baseline;
	double fail_on_regression; /* percent; -1 when not given */
	int no_step_summary;
	const char *references;
	long history_window; /* 0 when not given */
	/* accept */
	const char *model;
	const char *metric;
	const char *since;
	const char *reason;
	const char *machine;
	const char *config; /* also report sweep */
	/* run, suite: a sweep of RM_SWEEP_CONFIRM points or more */
	int yes;
	/* report sweep */
	const char *rows;
	const char *columns;
	/* report ci, report html, export */
	const char *run_id;
	const char *manifest;
	const char *models_root;
	const char *title;
	struct opt_list archive_add;
	struct opt_list db;
	double threshold; /* -1 when not given */
	int no_metrics;
	/* build (manifest: also run, and the manifest build writes) */
	const char *registry;
	/* node-run */
	const char *job;
	const char *workload;
	/* every command */
	int color; /* enum rm_color_when (applied by opt_parse) */
	/* parse, doctor, list */
	int format; /* enum cli_format */
	int gpus;   /* doctor --gpus */
	int explain;
	int list_parsers;
};

struct opt {
	const char *name; /* without the leading "--" */
	char short_name;  /* 0 when none */
	enum opt_type type;
	size_t offset;		  /* into struct cli */
	const rm_choice *choices; /* OPT_CHOICE: its words and values (arg is NULL) */
	const char *arg;	  /* value name for --help, NULL for flags */
	const char *help;
	unsigned cmds;	     /* CMD_* that accept it */
	const char *aliases; /* other long spellings, space-separated, or NULL */
};

/* The value name of a row for --help and the man page: its arg, or its choices as
 * "a|b|c"; NULL for a flag. Caller frees. */
char *opt_arg_text(const struct opt *o);

/* Every option of every command, ended by a row whose name is NULL (options.c). */
extern const struct opt opt_table[];

/* The defaults every command starts from (timeout -1 = not given, ...). */
void cli_init(struct cli *c);
void cli_release(struct cli *c);
/* --warmup: "auto" (or not given) is RM_PARSER_WARMUP_AUTO, else a count of steps. */
int cli_warmup(const struct cli *c, long *warmup, rm_error *err);

/*
 * Parses argv[1..] (argv[0] is the command name) with the rows that accept one of the
 * commands in `accept`. Non-option words go to *positional (pointers into argv). "--" ends
 * the options. Returns 0; 1 when --help was asked for (then *help_markdown says whether it
 * was --help=markdown); or -1 with err filled (RM_ERR_USAGE).
 */
int opt_parse(unsigned accept, struct cli *c, int argc, char **argv, struct opt_list *positional,
	      int *help_markdown, rm_error *err);
/* The help of one command: usage line, then its options (rows whose cmds include cmd),
 * wrapped to the width of the terminal f is (80 columns when it is none). */
void opt_help(FILE *f, unsigned cmd, const char *usage, int markdown);
/* Text wrapped to width columns; lines after the first start with indent spaces. Breaks at
 * blanks (a word longer than a line is cut); keeps the text's own line ends. Backquotes
 * (Markdown) are left out. */
void opt_wrap(FILE *f, const char *text, size_t first_col, size_t indent, size_t width);
/* The width help is wrapped to on f: the terminal's (at most 100), else 80. */
size_t opt_help_width(FILE *f);

/* What the man page and the completion know of a command. */
struct opt_cmd {
	const char *name;     /* "run", "report html" */
	unsigned mask;	      /* CMD_* */
	const char *synopsis; /* after "usage: " in its --help */
	const char *about;    /* a paragraph for the man page */
};
extern const struct opt_cmd opt_cmds[];
/* The man page (roff), generated from the option table and opt_cmds. */
void opt_man(FILE *f);
/* The bash completion script: commands, each command's options and their values, and the
 * model names and tags of the folder's models.json (run_models completion tags). */
void opt_bash_completion(FILE *f);
void opt_list_release(struct opt_list *l);
/* --dynamic-registry run|skip, else $RM_DYNAMIC_REGISTRY ("run" runs them): *run 0 or 1. */
/* Whether the runner's messages are to be quiet: --quiet, or MAD's --log-level WARNING or
 * ERROR (DEBUG, INFO: not); another level is an error. */
int cli_quiet(const struct cli *c, int *quiet, rm_error *err);
/* Whether get_models_json.py files run: --dynamic-registry, else $RM_DYNAMIC_REGISTRY. */
int cli_run_dynamic(const struct cli *c);

#endif
