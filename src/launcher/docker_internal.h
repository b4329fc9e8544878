/*
 * Shared by the Docker launcher's files (docker.c: containers; docker_image.c: images).
 */
#ifndef RM_LAUNCHER_DOCKER_INTERNAL_H
#define RM_LAUNCHER_DOCKER_INTERNAL_H

#include <stdio.h>

#include "rm/engine.h"
#include "rm/launcher.h"

struct docker_launcher {
	rm_launcher_config cfg;
	rm_docker *d; /* NULL in a dry run */
	char *where;
	/* Docker or Podman: the engine's ping, or in a dry run --engine or a quick ping */
	rm_engine_kind kind;
	int rootless, cgroup_v1; /* Podman's: a user's service; on cgroup v1 (no limits) */
	/* This runner, in the labels of everything it makes (run_models.host, .pid,
	 * .pid_start), so that a later run can tell whether it is gone. */
	char host[256];
	char pid[32];
	char pid_start[32];
	/* base images already pulled (or tried) in this run: once each */
	char **pulled;
	size_t n_pulled;
};

/* The name our builds add to /etc/hosts of the engine's build containers (extrahosts):
 * "run-models-build.<pid>.<pid_start>.<host>", so that the next run can tell the build
 * container an engine kept after it died (labels reach only the image) and whether its
 * runner is gone. Caller frees. */
#define RM_DOCKER_BUILD_MARK "run-models-build."
char *rm_launcher__docker_build_mark(const struct docker_launcher *dl);

/* "docker" or "podman": the CLI of the engine, in the commands messages suggest. */
const char *rm_launcher__docker_cli(const struct docker_launcher *dl);

/* Adds the run's and the runner's labels to a labels object. */
void rm_launcher__docker_label(const struct docker_launcher *dl, json_t *labels);

/* The image's fingerprint (64 hex digits): build context metadata, Dockerfile name, build
 * args, base image id. */
int rm_launcher__docker_fingerprint(struct docker_launcher *dl, const rm_image_req *req,
				    char out[65], rm_error *err);

int rm_launcher__docker_prepare(void *state, const rm_image_req *req, char **image_id, int *cached,
				rm_error *err);
/* --dry-run: the build and run lines, the workload rendered for a host whose context is
 * ctx (spec NULL: the build only). */
void rm_launcher__docker_plan(const rm_context *ctx, const rm_image_req *req,
			      const rm_job_spec *spec, FILE *out);

extern const rm_launcher_ops rm_launcher_docker;

#endif
