/*
 * Shared by the Docker launcher's files (docker.c: containers; docker_image.c: images).
 */
#ifndef RM_LAUNCHER_DOCKER_INTERNAL_H
#define RM_LAUNCHER_DOCKER_INTERNAL_H

#include <stdio.h>

#include "rm/docker.h"
#include "rm/launcher.h"

struct docker_launcher {
	rm_launcher_config cfg;
	rm_docker *d; /* NULL in a dry run */
	char *where;
};

int rm_docker_launcher_prepare(void *state, const rm_image_req *req, char **image_id, int *cached,
			       rm_error *err);
void rm_docker_launcher_plan(void *state, const rm_image_req *req, const rm_job_spec *spec,
			     FILE *out);

extern const rm_launcher_ops rm_launcher_docker;

#endif
