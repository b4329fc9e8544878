/*
 * The model registry: ./models.json plus scripts/<dir>/models.json (MAD layout).
 *
 * Models from scripts/<dir>/models.json are named "<dir>/<name>" and their paths
 * (dockerfile, scripts, dockercontext) are relative to scripts/<dir>; paths stored here are
 * already resolved relative to the registry root (the folder holding ./models.json), e.g.
 * "scripts/llm/docker/foo" or "docker/pyt_mpt30b_training".
 *
 * Validation: a JSON syntax error names the file, line and column; a missing or mistyped
 * required field names the file, the model and the field; a duplicate name names both files;
 * unknown fields are warned about (rm_warn) and ignored.
 *
 * Ownership: the registry owns every string in it; rm_registry_release frees all of it.
 */
#ifndef RM_REGISTRY_H
#define RM_REGISTRY_H

#include <stddef.h>

#include "rm/error.h"

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
	double timeout;		/* seconds; <= 0 means no model override */
	char *multiple_results; /* NULL when absent */
	char *training_precision;
	char *skip_gpu_arch;		     /* comma list or NULL */
	char *dockercontext;		     /* resolved; default "<base>/docker" */
	char *additional_docker_run_options; /* NULL when absent */
	char **env_vars;		     /* NULL-terminated "K=V" list from env_vars */
	size_t n_env_vars;
	char *parser;	 /* log parser name; default "generic" */
	char *tunableop; /* "on", "off" or NULL: the model's own default (issue: run options) */
	/* Host MAD_SECRETS* variables the model explicitly asks to get as build args (the
	 * image history keeps them: warned about at every build). NULL-terminated. */
	char **build_secrets;
	size_t n_build_secrets;
} rm_model;

typedef struct rm_registry {
	rm_model *models;
	size_t n;
} rm_registry;

/* Loads root/models.json (if present) and root/scripts/<dir>/models.json in sorted <dir>
 * order. No models.json anywhere is an error that says so. */
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

const rm_model *rm_registry_find(const rm_registry *reg, const char *name);

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
 * on commas here). A tag matches a model's name, its short name, or any entry of its tags;
 * "all" matches everything; "scope/tag" limits the match to models of scripts/<scope>/;
 * "tag:key=value:key2=value2" also appends " --key value --key2 value2" to the args of the
 * models it matches. The selection keeps registry order and holds each model once. Tags that
 * match nothing are an error naming all of them.
 */
int rm_select(const rm_registry *reg, const char *const *tag_exprs, size_t n_exprs,
	      rm_selection *sel, rm_error *err);
void rm_selection_release(rm_selection *sel);

#endif
