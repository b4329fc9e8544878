/*
 * The docker CLI command lines equivalent to what run_models sends to the Engine API, for
 * --dry-run: a user can read them, or paste them on a host with the docker CLI.
 * Every word is shell-quoted when it needs it (single quotes, ' as '\'').
 */
#ifndef RM_CMDLINE_H
#define RM_CMDLINE_H

typedef struct json_t json_t;

/* Appends s to a new string quoted for a POSIX shell when needed. Caller frees. */
char *rm_shell_quote(const char *s);

/* "docker build --network=host [--no-cache] -t TAG -f DOCKERFILE [--build-arg K=V ...]
 * [--label K=V ...] CONTEXT". buildargs and labels are objects of strings or NULL. */
char *rm_build_cmdline(const char *tag, const char *dockerfile, const char *context,
		       json_t *buildargs, json_t *labels, int nocache);

/* "docker run --rm --name NAME ..." from a POST /containers/create body: --network, --ipc,
 * -u, --group-add, --cap-add, --security-opt, --device (host:container:perms), --gpus
 * (DeviceRequests: all, or "device=0,2"), --shm-size (bytes rendered as such), --cpuset-cpus,
 * --privileged, --init, --ulimit, -v (Binds), -e K=V (Env), --label, -w, IMAGE, Cmd... */
char *rm_run_cmdline(json_t *create_body, const char *name);

#endif
