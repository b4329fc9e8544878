/*
 * The build manifest: what `run_models build` built (and pushed), read by `run_models run
 * --manifest`, which then builds nothing. The layout is madengine's build_manifest.json, so
 * tools reading one read the other:
 *
 *   {"built_images": {"<image>": {"docker_image", "registry_image", "digest", "dockerfile",
 *                                 "base_docker", "docker_sha", "fingerprint",
 *                                 "build_duration", "push_duration", "reused", "status",
 *                                 "reason"}},
 *    "built_models": {"<image>": {"name": "<model>", ...the models.json entry}},
 *    "context": {...}, "deployment_config": {...}, "registry": "HOST:PORT",
 *    "run_models_version": "..."}
 *
 * where <image> is the local image name (rm_image_name: "ci-<model>_<stem>"). Entries
 * madengine wrote have no "status" and count as built. Credentials are never written.
 *
 * Ownership: the manifest owns its strings; rm_manifest_release frees them.
 */
#ifndef RM_MANIFEST_H
#define RM_MANIFEST_H

#include <stddef.h>

#include "rm/error.h"

typedef struct json_t json_t;

typedef struct rm_manifest_image {
	char *key;	      /* the local image name, "ci-smoke_busybox_smoke" */
	char *model;	      /* the model's name (built_models[key].name) */
	char *dockerfile;     /* or NULL */
	char *base_image;     /* base_docker, or NULL */
	char *registry_image; /* "HOST:PORT/ci-...:<fingerprint>", or NULL when not pushed */
	char *digest;	      /* "sha256:...", or NULL */
	char *image_id;	      /* docker_sha: the id on the build host, or NULL */
	int failed;	      /* status FAILURE: its build or push failed */
	char *reason;	      /* why, or NULL */
} rm_manifest_image;

typedef struct rm_manifest {
	char *path;
	rm_manifest_image *images; /* in the file's order */
	size_t n;
} rm_manifest;

/* Reads path; a file that is not a manifest (no built_images object, an entry without
 * its model) is an error naming the file and the entry. */
int rm_manifest_load(rm_manifest *m, const char *path, rm_error *err);
void rm_manifest_release(rm_manifest *m);

/* What to run for an entry (caller frees): "<registry repo>@<digest>" when it was pushed
 * (a digest pins what runs even if the tag moves), else its registry_image, else the local
 * image name. */
char *rm_manifest_image_ref(const rm_manifest_image *mi);

/* Whether the manifest names model (any entry, built or failed). */
int rm_manifest_has_model(const rm_manifest *m, const char *model);

/* ---- writing (run_models build) ---- */

/* A new manifest document; registry may be NULL. context and deployment are copied (NULL:
 * empty objects). */
json_t *rm_manifest_new(const char *registry, json_t *context, json_t *deployment);
/* Adds (or replaces) the entry of mi->key: image facts from mi, the model entry from
 * model_json (an object, taken), the figures given. */
void rm_manifest_add(json_t *doc, const rm_manifest_image *mi, json_t *model_json,
		     const char *fingerprint, double build_s, double push_s, int reused);
/* Writes doc to path atomically (a temporary file renamed over it). */
int rm_manifest_write(json_t *doc, const char *path, rm_error *err);

#endif
