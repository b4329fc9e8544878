/*
 * Data providers: a model's `data` field (a name, or a comma list of names) resolved against
 * the folder's data.json (and the context's "data" key, which overrides it) into a plan the
 * runner carries out: what to bind-mount where, what MAD_DATAHOME and MAD_DATANAME say, and
 * the perf.csv columns dataname, data_provider_type, data_size, data_download_duration.
 *
 * data.json, as madengine reads it:
 *   {"<dataname>": {"<provider>": {"path": ..., "home": ..., "readwrite": "true",
 *                                   "mirrorlocal": ..., "args": ...}, ...}, ...}
 * Providers are tried in madengine's order, custom, local, minio, nas, aws; the first one
 * available serves the data:
 *   local   "path" (a host path; relative ones are relative to the folder) bind-mounted at
 *           "home" (default /data_dlm_<i>, i the name's position in the model's list),
 *           read-only unless "readwrite" is "true". Available when the path exists;
 *           "mirrorlocal" is an error, as in madengine.
 *   custom  "path" is a script inside the folder (refused when it leaves it) that the runner
 *           runs in the container, in "home", with "args", before the model; with
 *           "mirrorlocal", <mirrorlocal>/<dataname> is bind-mounted read-write at "home" so
 *           the data stays on the host for the next run.
 *   minio, nas, aws   need the network (S3 through the AWS CLI, NAS over SSH/sshfs, MinIO's
 *           S3) and credentials madengine keeps in its own constants; run_models does not
 *           fetch from them: they count as unavailable (the warning names them and says to
 *           mirror the data to a local path).
 * A name that no provider serves (MAD's {"huggingface": {}} lists none; a local path that
 * does not exist) is left out of the plan, as madengine leaves it: the model runs without
 * it (its script may fetch its own data), the runner warns naming it and why each provider
 * could not serve it, and the data columns stay empty for it. A name data.json does not
 * have is an error (madengine fails on it too).
 * Differences from madengine, on purpose: with a "home" MAD_DATAHOME is that home
 * (madengine mounts at home but exports home_<i>); the index i is per model, not a counter
 * over the whole process.
 *
 * Ownership: configs and plans own their strings; the _release functions free them.
 */
#ifndef RM_DATA_H
#define RM_DATA_H

#include <stddef.h>

#include "rm/util.h"

typedef struct json_t json_t;

typedef struct rm_data_config {
	json_t *obj;  /* {dataname: {provider: {...}}}; an empty object without data.json */
	char *source; /* the file read, or NULL when there was none */
} rm_data_config;

/* Reads data.json at path; a missing file gives an empty config (source NULL). A JSON error
 * names the file, line and column; a wrong shape names the entry. */
int rm_data_config_load(rm_data_config *cfg, const char *path, rm_error *err);
/* madengine's context override: every dataname of `data` (an object of the same shape)
 * replaces the file's entry of that name. `what` names the source in messages. */
int rm_data_config_apply(rm_data_config *cfg, const json_t *data, const char *what, rm_error *err);
/* --force-mirror-local PATH: sets "mirrorlocal" on every provider except local. */
void rm_data_config_force_mirror_local(rm_data_config *cfg, const char *path);
void rm_data_config_release(rm_data_config *cfg);

typedef struct rm_data_source {
	char *dataname;
	char *provider;	 /* "local" or "custom" */
	char *home;	 /* the folder in the container (its part of MAD_DATAHOME) */
	char *host_path; /* absolute bind-mount source, or NULL when nothing is mounted */
	int read_only;
	int create_host_path; /* mirrorlocal: the runner creates host_path (mkdir -p) first */
	char *script;	      /* custom: the script, relative to the folder, or NULL */
	char *script_args;    /* custom: its "args", or "" */
} rm_data_source;

typedef struct rm_data_plan {
	rm_data_source *sources; /* the names a provider serves, in the data field's order */
	size_t n;
	char *datahome;	     /* MAD_DATAHOME: the homes joined by ',' (NULL when n is 0) */
	char *dataname;	     /* the dataname column: the names served, joined by ',' */
	char *provider_type; /* the data_provider_type column: providers joined by ',' */
} rm_data_plan;

/*
 * Resolves a model's data field (root: the registry root, for relative paths and custom
 * scripts). An unknown name, no data.json, or a wrong provider configuration is an error
 * naming the name. Names no provider serves are left out of the plan; *unserved then
 * receives a message naming each and, for each provider tried, why it could not serve it
 * (NULL when every name is served; caller frees).
 */
int rm_data_resolve(const rm_data_config *cfg, const char *data_field, const char *root,
		    rm_data_plan *plan, char **unserved, rm_error *err);
void rm_data_plan_release(rm_data_plan *plan);

/*
 * The data_size column for a host path, as `du -sh` prints it ("4.0K", "12M", "1.5G"):
 * blocks of the tree, symlinks not followed. A tree of more than max_entries files, or one
 * that takes longer than max_seconds to walk, gives "" and -1 (a size must never stall a
 * run); so does an unreadable path.
 */
int rm_data_size(const char *path, size_t max_entries, double max_seconds, char *buf, size_t size);

#endif
