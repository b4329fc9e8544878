/*
 * Shared by context.c (overrides) and detect.c (the host's GPUs).
 */
#ifndef RM_CONTEXT_INTERNAL_H
#define RM_CONTEXT_INTERNAL_H

#include <sys/stat.h>

#include <jansson.h>

#include "rm/context.h"

/* Each fills vendor, count, architecture and render nodes when it finds GPUs. */
void rm_context__detect_kfd(rm_context *ctx, const char *sysfs_root);
void rm_context__detect_rocminfo(rm_context *ctx);
void rm_context__detect_nvidia_smi(rm_context *ctx);
/* The GPU's product name and the HIP/CUDA version, once the vendor is known. */
void rm_context__detect_facts(rm_context *ctx, const char *sysfs_root, int use_tools);
/* cdi.c: the CDI specs of /etc/cdi and /var/run/cdi and their devices. */
void rm_context__detect_cdi(rm_context *ctx);

/* dockerfile_scan.c: what one Dockerfile says; dockerfile.c caches it per file. */
#define MAX_ARGS 64

struct arg_defaults {
	char *name[MAX_ARGS];
	char *value[MAX_ARGS];
	size_t n;
};

/* What a candidate says, independent of the context: cached per file. */
struct scan {
	char *path;
	struct stat st;		  /* when it was read */
	double checked;		  /* rm_now() of the last stat */
	json_t *context_req;	  /* or NULL */
	struct arg_defaults args; /* ARGs seen before the first FROM */
	char *from_raw;		  /* the first FROM's image, unexpanded, or NULL */
	int declares_base;	  /* "ARG BASE_DOCKER" before the first FROM */
	char *error;		  /* a malformed CONTEXT line: the message, re-reported each use */
};

/* Reads the CONTEXT filter, the ARG defaults and the first FROM of the file at path. */
int rm_context__scan_file(const char *path, struct scan *sc, rm_error *err);
void rm_context__scan_release(struct scan *sc);
/* The base image: the context's docker_build_arg BASE_DOCKER, else the ARG default, else
 * the FROM with ARGs expanded; NULL when none. */
char *rm_context__effective_base(const struct scan *sc, const rm_context *ctx);

#endif
