/*
 * The model registry: ./models.json plus scripts/<dir>/models.json (MAD layout), and
 * madengine's dynamic registries scripts/<dir>/get_models_json.py (see rm_registry_opts).
 *
 * Models from scripts/<dir>/ are named "<dir>/<name>". As madengine does, their dockerfile
 * and scripts are relative to scripts/<dir> and normalised (os.path.normpath), while
 * dockercontext, like every path of a top-level model, is relative to the registry root
 * (default "docker"). Paths stored here are resolved relative to the registry root (the
 * folder holding ./models.json), e.g. "scripts/llm/run.sh" or "docker/pyt_mpt30b_training".
 *
 * Names: any non-empty string a MAD registry holds ("dummy", "dummy2", "pyt_huggingface_gpt2")
 * except what breaks tag selection or the files named after models: ',', ':', blanks and
 * control characters.
 *
 * Validation, before anything is built: a JSON syntax error names the file, line and
 * column; a missing or mistyped required field names the file, the model and the field; a
 * duplicate name names both files; a path field (dockerfile, scripts, dockercontext,
 * multiple_results) that is absolute or leaves the folder through ".." is refused naming the
 * field; numbers out of range (n_gpus below -1, a timeout over a year either way; a negative
 * one, as MAD's -1, means no time limit) are refused naming the field; unknown fields are warned
 * about (rm_warn) and ignored. rm_model_check_paths() adds the checks that need the file
 * system (symlinks out of the folder, a folder where a file is expected).
 *
 * Cost: loading is linear in the file size (names are indexed in a hash table) and the JSON
 * is parsed one entry at a time, so memory is the file plus the models, not a whole DOM.
 *
 * Ownership: the registry owns every string in it; rm_registry_release frees all of it.
 */
#ifndef RM_REGISTRY_H
#define RM_REGISTRY_H

#include <stddef.h>

#include "rm/util.h"

/* PyTorch TunableOp: a model's tunableop field, --tunableop. */
typedef enum rm_tunableop {
	RM_TUNABLEOP_UNSET = 0, /* not given: the model decides */
	RM_TUNABLEOP_ON,
	RM_TUNABLEOP_OFF,
} rm_tunableop;
extern const rm_choice rm_tunableop_words[]; /* "on", "off" */

/* How a model's scripts runs, as MAD runs it: a .sh, .slurm or .sbatch file with bash, a .py
 * file with python3, anything else is a folder whose run.sh runs with bash. */
typedef enum rm_script_kind { RM_SCRIPT_FOLDER, RM_SCRIPT_BASH, RM_SCRIPT_PYTHON } rm_script_kind;
rm_script_kind rm_script_kind_of(const char *scripts);

typedef struct json_t json_t;

typedef struct rm_model {
	char *name;	  /* unique; "<dir>/<name>" for per-folder registries */
	char *short_name; /* the part after the last '/' */
	char *scope;	  /* "<dir>" for scripts/<dir>/models.json, NULL for the top level */
	char *source;	  /* the models.json file this entry came from */
	char *dockerfile; /* prefix, resolved, e.g. "docker/smoke" */
	char *scripts;	  /* resolved path to a file (run.sh, x.py) or a folder */
	long n_gpus;	  /* -1 = all GPUs */
	char *owner;
	char **tags; /* NULL-terminated */
	size_t n_tags;
	char *args;		/* "" when empty */
	char *url;		/* NULL when absent */
	char *data;		/* NULL when absent */
	double timeout;		/* seconds; 0: not given; -1 (0 or negative given): none */
	char *multiple_results; /* NULL when absent */
	char *training_precision;
	char *skip_gpu_arch;		     /* comma list or NULL */
	char *dockercontext;		     /* relative to the root; default "docker" */
	char *additional_docker_run_options; /* NULL when absent */
	char **env_vars;		     /* NULL-terminated "K=V" list from env_vars */
	size_t n_env_vars;
	/* The card's "slurm" (nodes, gpus_per_node, time, ...: defaults under the context's)
	 * and "distributed" (launcher, nnodes) objects as given, or NULL. */
	json_t *slurm;
	json_t *distributed;
	char *parser;		/* log parser name; default "generic" */
	rm_tunableop tunableop; /* the model's own default: its "tunableop" field */
	/* Host MAD_SECRETS* variables the model explicitly asks to get as build args (the
	 * image history keeps them: warned about at every build). NULL-terminated. */
	char **build_secrets;
	size_t n_build_secrets;
	int dynamic; /* listed by a scripts/<dir>/get_models_json.py */
} rm_model;

struct rm_names;

typedef struct rm_registry {
	rm_model *models;
	size_t n;
	struct rm_names *names; /* private: the name index */
	/* scripts/<dir>/get_models_json.py files found and not run (see rm_registry_opts), as
	 * "scripts/<dir>/get_models_json.py" relative to the root; NULL-terminated or NULL. */
	char **dynamic_skipped;
	size_t n_dynamic_skipped;
} rm_registry;

/*
 * madengine imports scripts/<dir>/get_models_json.py into its own process to list models
 * (CustomModel objects from list_models()). That runs the folder's Python code on the host,
 * outside any container, at every discovery, so it is opt-in here:
 *   run_dynamic 0: the file is not run; it is recorded in reg->dynamic_skipped and warned
 *     about, and a tag that matches nothing (or a scope that is such a folder) says so.
 *   run_dynamic 1: python3 runs it, with a stand-in for madengine.utils.discover_models
 *     (CustomModel with madengine's fields and defaults, update_model() applied), in the
 *     registry root, with a time limit; its models are loaded like scripts/<dir>/models.json
 *     entries ("<dir>/<name>", dockerfile and scripts relative to scripts/<dir>). Any failure
 *     (no python3, an exception, a time-out, output that is not the expected list) is an
 *     error naming the file.
 * A folder with both models.json and get_models_json.py is an error, as in madengine.
 */
typedef struct rm_registry_opts {
	int run_dynamic;
	double dynamic_timeout; /* seconds; <= 0 means 60 */
} rm_registry_opts;

#define RM_REGISTRY_OPTS_INIT                                                                      \
	{                                                                                          \
		.run_dynamic = 0, .dynamic_timeout = 0                                             \
	}

/* Loads root/models.json (if present) and root/scripts/<dir>/ registries in sorted <dir>
 * order. No registry anywhere is an error that says so. */
int rm_registry_load_opts(rm_registry *reg, const char *root, const rm_registry_opts *opts,
			  rm_error *err);
/* rm_registry_load_opts with run_dynamic taken from the environment: RM_DYNAMIC_REGISTRY=run
 * runs dynamic registries (the commands use --dynamic-registry, which defaults to it). */
int rm_registry_load(rm_registry *reg, const char *root, rm_error *err);

/*
 * Parses one registry file's text and appends its models. `source` names the file in
 * messages; `scope` is "<dir>" for scripts/<dir>/models.json or NULL; `base` is the folder
 * the entry paths are relative to ("." or "scripts/<dir>"). Used by rm_registry_load and by
 * the fuzz harness. On error, reg keeps the models appended before this call.
 */
int rm_registry_load_buffer(rm_registry *reg, const char *text, size_t len, const char *source,
			    const char *scope, const char *base, rm_error *err);

void rm_registry_release(rm_registry *reg);

/* O(1): the model called name (its full "<dir>/<name>" for per-folder ones), or NULL. */
const rm_model *rm_registry_find(const rm_registry *reg, const char *name);

/*
 * The checks of a model's paths that need the file system, for the runner to call on every
 * selected model before the first build (root is the registry root): scripts, dockercontext
 * and each existing Dockerfile candidate must resolve (symlinks followed) inside root;
 * scripts ending in .sh or .py must be a file and dockercontext a folder. The error names
 * the model, the field and the path, and says what to do.
 */
int rm_model_check_paths(const rm_model *m, const char *root, rm_error *err);

/*
 * Whether a skip_gpu_arch comma list names this GPU (blanks ignored, case-insensitive), by
 * its architecture or by its product name, as madengine compares both. gpu_arch is the
 * context's MAD_SYSTEM_GPU_ARCHITECTURE: an AMD target ("gfx942", also matched by
 * "gfx942:sramecc+:xnack-"), an NVIDIA one ("sm_80") or what nvidia-smi -L prints, which
 * madengine uses as the NVIDIA architecture ("NVIDIA A100-SXM4-80GB"). product is
 * MAD_SYSTEM_GPU_PRODUCT_NAME ("NVIDIA A100-SXM4-80GB", "AMD Instinct MI300X"), or NULL.
 * A vendor's name or product matches without its vendor prefix, by its first word, and that
 * word before its first '-': "A100", "A100-SXM4-80GB", "H100", "MI300X". An empty list, or
 * neither an arch nor a product, never matches.
 */
int rm_skip_gpu_arch_match(const char *skip_list, const char *gpu_arch, const char *product);

/* Tag selection. */
typedef struct rm_selected {
	const rm_model *model; /* points into the registry */
	char *extra_args;      /* " --key value ..." from name:key=value tags, or NULL */
} rm_selected;

typedef struct rm_selection {
	rm_selected *items;
	size_t n;
} rm_selection;

/*
 * Selects models by tag expressions, each as given to one --tags option (so "a,b" is split
 * on commas here). A tag matches a model's whole name or any entry of its tags (madengine's
 * rule: "model2" does not select "dummy2/model2", a tag "inference" of that model does);
 * "all" matches everything. A tag with exactly one '/' ("scope/tag", as in madengine) only
 * matches inside that scope: models named "scope/..." whose short name or a tag is "tag",
 * or all of them for "scope/all". "tag:key=value:key2=value2" also appends
 * " --key value --key2 value2" to the args of the models it matches. The selection keeps
 * registry order and holds each model once, however many tags or --tags options pick it
 * (the same extra args given twice are appended once). Tags that match nothing are an error
 * naming all of them (a scoped model's short name given alone says to give its whole name;
 * and the dynamic registries that were not run, if any).
 */
int rm_select(const rm_registry *reg, const char *const *tag_exprs, size_t n_exprs,
	      rm_selection *sel, rm_error *err);
void rm_selection_release(rm_selection *sel);

#endif
