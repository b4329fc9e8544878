/*
 * Profiling tools around a model, as madengine runs them: a tool's pre_scripts run in the
 * container before the model, its cmd is put in front of the model's command, its env_vars
 * reach the container, its post_scripts run after the model; what it writes (its
 * `outputs`, our extension) is copied back beside the run's log.
 *
 * Definitions: a tools file (madengine's scripts/common/tools.json):
 *   {"tools": {"<name>": {"pre_scripts": [{"path": "scripts/...", "args": "a b"}],
 *                         "cmd": "prefix text", "env_vars": {"K": "V"},
 *                         "post_scripts": [...], "outputs": ["glob", ...]}}}
 * Script paths are relative to the MAD folder; args are split into words as a model's args
 * are; outputs are globs relative to the model's folder in the container (or absolute),
 * never with a ".." part. The folder's scripts/common/tools.json is read when present (or
 * the file given with --tools-config); a name it does not define falls back to the built-in
 * definition of madengine's tool of that name (src/tools/builtin.c), whose scripts are
 * shell text carried in the plan instead of files.
 *
 * The context selects tools and adds scripts (madengine's keys):
 *   "tools": [{"name": "rocprofv3", "cmd": "...", "env_vars": {...}, "outputs": [...]}]
 *            (cmd replaces the definition's, env_vars are merged over its, outputs replace)
 *   "pre_scripts", "post_scripts": [{"path": ..., "args": ...}]
 *   "encapsulate_script": "prefix text"
 *
 * Order (madengine's ContainerRunner.apply_tools; its test_stackable_design_runs_correctly
 * runs tools [A, B] and expects pre B, pre A, cmd_B, cmd_A, post A, post B): start from the
 * context's own pre_scripts, encapsulate_script and post_scripts; then, for each tool in the
 * context's order, its pre_scripts go before those gathered so far, its cmd before the
 * prefix so far (a cmd already added is not added again), its post_scripts after those so
 * far, its env_vars over those so far. The context's docker_env_vars still win over every
 * tool's env_vars (madengine passes them after).
 *
 * Ownership: configs and plans own their strings; the _release functions free them (NULL and
 * zeroed values are fine). Errors follow rm/util.h and name the file, key or tool.
 */
#ifndef RM_TOOLS_H
#define RM_TOOLS_H

#include <stddef.h>

#include "rm/context.h"
#include "rm/util.h"

typedef struct json_t json_t;

/* Definitions read from a tools file. */
typedef struct rm_tools_config {
	json_t *tools; /* {"<name>": {...}}, checked; an empty object without a file */
	char *source;  /* the file read, or NULL */
	char *folder;  /* the file's folder relative to the MAD folder when inside it, or NULL */
} rm_tools_config;

/*
 * Reads a tools file. path NULL: <root>/scripts/common/tools.json when it exists (else an
 * empty config: the built-ins only); a path given must exist. A JSON error names the file,
 * line and column; a wrong shape names the tool and key.
 */
int rm_tools_config_load(rm_tools_config *c, const char *path, const char *root, rm_error *err);
void rm_tools_config_release(rm_tools_config *c);

/* One script run in the container before or after the model. */
typedef struct rm_tool_script {
	char *tool; /* the tool's name; NULL: the context's own pre_scripts / post_scripts */
	char *path; /* relative to the MAD folder (copied into the container), or NULL */
	char *text; /* a built-in definition's shell text, when path is NULL */
	char *args; /* as written; NULL: none */
} rm_tool_script;

/* A glob of a tool's outputs. */
typedef struct rm_tool_output {
	char *tool;
	char *glob; /* relative to the model's folder in the container, or absolute */
} rm_tool_output;

/* Folders copied into the container: host, as the runner reaches it; dest, relative to the
 * container's workspace (RM_WORKSPACE in rm/workload.h). */
typedef struct rm_tool_copy {
	char *host;
	char *dest;
} rm_tool_copy;

/* What the tools and the context's scripts add to every container of a run. */
typedef struct rm_tool_plan {
	char **tools; /* the selected tools in the context's order (NULL-terminated) */
	size_t n_tools;
	char **sources;	     /* where each tool's definition came from: a file, or "built in" */
	rm_tool_script *pre; /* in the order they run */
	size_t n_pre;
	rm_tool_script *post;
	size_t n_post;
	char *wrap; /* madengine's encapsulate_script: put in front of the model's command; NULL */
	rm_kv *env; /* the tools' env_vars, each name once, in order */
	size_t n_env;
	rm_tool_output *outputs;
	size_t n_outputs;
	rm_tool_copy *copies;
	size_t n_copies;
} rm_tool_plan;

/*
 * The plan of a run's context (its "tools", "pre_scripts", "post_scripts" and
 * "encapsulate_script" keys) with the definitions of c (NULL: built-ins only). root is the
 * MAD folder. A tool neither c nor the built-ins define, a script that is missing or leaves
 * the folder, a value of the wrong type: an error naming it (and, for an unknown tool, the
 * known ones). An empty plan when the context has none of the keys.
 */
int rm_tools_resolve(const rm_tools_config *c, const json_t *ctx_obj, const char *root,
		     rm_tool_plan *plan, rm_error *err);
/* Whether the plan adds anything to a container. */
int rm_tool_plan_empty(const rm_tool_plan *p);
void rm_tool_plan_copy(rm_tool_plan *dst, const rm_tool_plan *src);
void rm_tool_plan_release(rm_tool_plan *p);

/* The context keys this module reads (NULL-terminated): tools, pre_scripts, post_scripts,
 * encapsulate_script. */
extern const char *const rm_tools_context_keys[];

/* The names of the built-in tools, in their table's order (NULL-terminated, static). */
const char *const *rm_tools_builtin_names(void);

#endif
