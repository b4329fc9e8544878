/*
 * A Docker Engine API client: libcurl over the unix socket (or tcp://), JSON with jansson.
 *
 * Connection: the host given, else DOCKER_HOST (unix:///path or tcp://host:port), else
 * unix:///var/run/docker.sock when that socket exists, else the private engine that
 * tools/ensure-docker.sh starts ($RM_DOCKER_DIR/docker.sock, default
 * /var/tmp/run_models-dockerd/docker.sock) when its socket exists.
 * rm_engine_open pings the engine and negotiates the API version: min(the engine's
 * Api-Version header, RM_ENGINE_API_MAX). Every request uses /v<version>/ paths.
 *
 * Errors: an engine error body {"message": "..."} reaches the caller's message with the HTTP
 * status and the request ("POST /containers/create: 404 no such image: ci-x"). An
 * unreachable engine says where it looked and what to do.
 *
 * Cancellation: long calls (build, logs, wait) take an rm_engine_cancel_fn, polled every
 * 100 ms and on every received chunk; when it returns non-zero the transfer is aborted and
 * the call returns RM_ENGINE_CANCELLED. Short calls (create, start, kill, remove, inspect,
 * archive) are bounded by a timeout. Every call also obeys the process-wide interrupt (below).
 */
#ifndef RM_ENGINE_H
#define RM_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "rm/util.h"

/*
 * Incremental decoder for the Docker attach/logs stream.
 *
 * With Tty false the engine multiplexes stdout and stderr: each frame is an 8-byte header
 * {type, 0, 0, 0, size as big-endian uint32} followed by `size` bytes; type 1 stdout,
 * 2 stderr, 3 daemon error text (0 = stdin, treated as stdout). Headers and payloads arrive
 * split at arbitrary points; the decoder keeps at most 8 bytes of state and hands payload
 * pieces to the callback as they come (a frame's payload may arrive in several calls). With
 * raw = 1 (Tty true) every byte is stdout.
 *
 * The decoder has no side effects besides calling cb; it allocates nothing.
 */
/* Type 3: the daemon's own error text, beside RM_STREAM_STDOUT and RM_STREAM_STDERR. */
enum { RM_STREAM_SYSERR = 3 };

typedef rm_output_cb rm_frame_cb;

typedef struct rm_frame_decoder {
	unsigned char hdr[8];
	size_t hdr_len;
	uint32_t remaining;
	int stream;
	int raw;
	int broken; /* set after a header with an unknown type; everything else is dropped */
} rm_frame_decoder;

void rm_frame_init(rm_frame_decoder *d, int raw);
/* Returns 0, or -1 once the stream is broken (unknown frame type). */
int rm_frame_feed(rm_frame_decoder *d, const char *data, size_t len, rm_frame_cb cb, void *ud);
/* Non-zero when the stream ended in the middle of a frame header or payload. */
int rm_frame_incomplete(const rm_frame_decoder *d);

typedef struct json_t json_t;
typedef struct rm_docker rm_docker;

/*
 * Which engine serves the API: Docker's dockerd, or Podman's Docker-compatible service
 * (`podman system service`, rootful or rootless). Podman answers /_ping with a
 * Libpod-Api-Version header, and its /version's Version is Podman's own version (never
 * compare it with Docker's). What differs is in docs/engines.md; the client adapts its
 * requests where the two read a field differently (build's extrahosts). RM_ENGINE_ANY: not
 * known (not asked yet), or either.
 */
typedef enum rm_engine_kind {
	RM_ENGINE_ANY = 0,
	RM_ENGINE_DOCKER,
	RM_ENGINE_PODMAN,
} rm_engine_kind;
/* "docker", "podman": the words of --engine. */
extern const rm_choice rm_engine_words[];
/* "Docker", "Podman" (messages); "the engine" for RM_ENGINE_ANY. */
const char *rm_engine_kind_title(rm_engine_kind k);

#define RM_ENGINE_API_MAX   "1.47"
#define RM_ENGINE_CANCELLED (-2)

typedef int (*rm_engine_cancel_fn)(void *ud);

/*
 * The process-wide interrupt (rm_interrupt_set in rm/util.h; Ctrl-C, SIGTERM, SIGHUP): once
 * it is pending, every call waiting on the engine gives up within 100 ms with
 * RM_ENGINE_CANCELLED, whatever its own deadline; calls made afterwards (the clean-up: kill,
 * remove) get at most 1.5 s each, and once one of them goes unanswered the engine counts as
 * hung and the rest fail at once. So one Ctrl-C ends a run within about 2 s even when the
 * engine accepts connections and never answers.
 */

/* host: NULL = $DOCKER_HOST or the default socket. */
int rm_engine_open(rm_docker **out, const char *host, rm_error *err);
/* The same with a ping of at most 3 s: for a dry run that only asks what the engine is. */
int rm_engine_open_quick(rm_docker **out, const char *host, rm_error *err);
void rm_engine_close(rm_docker *d);
const char *rm_engine_api_version(const rm_docker *d); /* e.g. "1.41" */
const char *rm_engine_host(const rm_docker *d);	       /* what we connected to */
/* RM_ENGINE_DOCKER or RM_ENGINE_PODMAN, from the ping of rm_engine_open. */
rm_engine_kind rm_engine_get_kind(const rm_docker *d);
/* Podman's facts, from its socket (no request): *rootless, a user's service (its socket is
 * the user's, not root's); *cgroup_v1, this host's cgroups are v1. Both 0 for Docker or an
 * engine on tcp://. */
void rm_engine_podman_facts(rm_docker *d, int *rootless, int *cgroup_v1);
/* Podman's version from its ping ("4.3.1"), or NULL (Docker: ask /version). */
const char *rm_engine_product_version(const rm_docker *d);
/* The address rm_engine_open uses without a host: $DOCKER_HOST, else the first socket of
 * /var/run/docker.sock, the private dockerd's ($RM_DOCKER_DIR/docker.sock), Podman's
 * rootful /run/podman/podman.sock and the user's rootless
 * $XDG_RUNTIME_DIR/podman/podman.sock that this user can open (read and write), else the
 * first of them that exists, else unix:///var/run/docker.sock. Caller frees. */
char *rm_engine_default_host(void);

/* GET /version; *out owned by caller (json_decref). */
int rm_engine_version(rm_docker *d, json_t **out, rm_error *err);
/* GET /_ping: 0 when the engine answers (within 20 s), else -1. */
int rm_engine_ping(rm_docker *d, rm_error *err);

typedef struct rm_build_opts {
	const char *context_tar; /* path of a tar file written by rm_tar_build_context */
	const char *dockerfile;	 /* name inside the tar */
	const char *tag;
	json_t *buildargs; /* object of strings, or NULL */
	int nocache;
	const char *networkmode; /* "host" or NULL */
	json_t *labels;		 /* image labels, object of strings, or NULL */
	/* "name:ip" added to /etc/hosts of the build's RUN containers, or NULL: a mark the
	 * classic builder puts on the containers it makes (labels reach only the image) */
	const char *extrahosts;
	/* Each line of build output (the "stream" texts, split at '\n'), for the build log. */
	void (*on_line)(void *ud, const char *line, size_t len);
	void *ud;
	rm_engine_cancel_fn cancel;
	void *cancel_ud;
} rm_build_opts;

#define RM_BUILD_OPTS_INIT                                                                         \
	{                                                                                          \
		.context_tar = NULL, .dockerfile = NULL, .tag = NULL, .buildargs = NULL,           \
		.nocache = 0, .networkmode = NULL, .labels = NULL, .extrahosts = NULL,             \
		.on_line = NULL, .ud = NULL, .cancel = NULL, .cancel_ud = NULL                     \
	}

/* POST /build (classic builder, version=1). Fails when the status is not 200, when any
 * object carries error/errorDetail (the message is returned), or when no aux ID came.
 * *image_id receives the last aux ID ("sha256:..."). */
int rm_engine_build(rm_docker *d, const rm_build_opts *opts, char **image_id, rm_error *err);

/* GET /images/{name}/json; *out owned by caller. 404 -> -1 with "no such image". */
int rm_engine_image_inspect(rm_docker *d, const char *name, json_t **out, rm_error *err);

/* POST /containers/create?name=N with body (not consumed); *id receives the id. */
int rm_engine_create(rm_docker *d, const char *name, json_t *body, char **id, rm_error *err);
int rm_engine_start(rm_docker *d, const char *id, rm_error *err);
/* PUT /containers/{id}/archive?path=P with the tar file at tar_path as body. */
int rm_engine_put_archive(rm_docker *d, const char *id, const char *path, const char *tar_path,
			  rm_error *err);
/* GET /containers/{id}/archive?path=P, the tar written to out_fd (at most max_bytes). A
 * missing path returns -1 with err->kind RM_ERR_INPUT and "no such file". */
int rm_engine_get_archive(rm_docker *d, const char *id, const char *path, int out_fd,
			  size_t max_bytes, rm_error *err);

/* GET /images/{name}/get: the image as `docker save` writes it (a tar), to out_fd. */
int rm_engine_image_save(rm_docker *d, const char *name, int out_fd, rm_error *err);

/* GET /containers/{id}/logs?follow=1&stdout=1&stderr=1: decoded (tty selects raw mode) and
 * handed to cb piece by piece until the container stops or cancel says so. */
int rm_engine_logs(rm_docker *d, const char *id, int tty, rm_frame_cb cb, void *ud,
		   rm_engine_cancel_fn cancel, void *cancel_ud, rm_error *err);
/* POST /containers/{id}/attach?stream=1, then start once the engine has answered, then the
 * output decoded and handed to cb until the container's streams close (it stops) or cancel
 * says so. Replaces start + logs: no output is lost and the engine does less work. */
int rm_engine_attach_start(rm_docker *d, const char *id, int tty, rm_frame_cb cb, void *ud,
			   rm_engine_cancel_fn cancel, void *cancel_ud, rm_error *err);
/* POST /containers/{id}/wait?condition=... ; *status receives StatusCode. */
int rm_engine_wait(rm_docker *d, const char *id, const char *condition, long *status,
		   rm_engine_cancel_fn cancel, void *cancel_ud, rm_error *err);
/* POST /containers/{id}/kill?signal=S; a container that is not running is not an error. */
int rm_engine_kill(rm_docker *d, const char *id, const char *signal, rm_error *err);
/* DELETE /containers/{id}?force=1&v=1; a container already gone is not an error. */
int rm_engine_remove(rm_docker *d, const char *id, rm_error *err);
/* GET /containers/{id}/json; *out owned by caller. */
int rm_engine_inspect(rm_docker *d, const char *id, json_t **out, rm_error *err);
/* How a container ended, from GET /containers/{id}/json: *gone = 1 when someone removed it
 * (the engine no longer knows it, 404, or its State.Status is "removing": a forced removal
 * says so before it kills), *oom_killed from State.OOMKilled. Returns 0, or -1 when the
 * engine cannot say (unreachable, another error). */
int rm_engine_container_end(rm_docker *d, const char *id, int *gone, int *oom_killed,
			    rm_error *err);
/* The same inspection, with whether the container still runs and its State.ExitCode (meant
 * once it does not run): how a wait that did not answer, or whose connection dropped, is
 * settled without blaming the engine (issue 29). */
typedef struct rm_container_state {
	int gone;	/* removed (404 or "removing") */
	int running;	/* State.Running (or "restarting", "paused": not ended) */
	int oom_killed; /* State.OOMKilled */
	long exit_code; /* State.ExitCode */
} rm_container_state;
int rm_engine_container_state(rm_docker *d, const char *id, rm_container_state *out, rm_error *err);
/* POST /containers/{id}/attach?stream=1 to a container that already runs (no start): its
 * output from now on, decoded into cb until it ends or cancel says so. For a stream that was
 * cut while the workload still runs. */
int rm_engine_attach(rm_docker *d, const char *id, int tty, rm_frame_cb cb, void *ud,
		     rm_engine_cancel_fn cancel, void *cancel_ud, rm_error *err);
/* GET /containers/json?all=1&filters={"label":[label]}: ids (NULL-terminated, free with
 * rm_strv_free). */
int rm_engine_list_by_label(rm_docker *d, const char *label, char ***ids, size_t *n, rm_error *err);
/* The same listing as the engine gives it: an array of {Id, Names, Labels, State, ...};
 * label NULL lists every container; *out owned by caller. */
int rm_engine_list_containers(rm_docker *d, const char *label, json_t **out, rm_error *err);

/* ---- images and registries (src/engine/images.c) ----
 *
 * References are "[HOST[:PORT]/]NAME[:TAG]" or "...NAME@sha256:...". Images built for a
 * registry are named "HOST:PORT/<image>:<fingerprint>".
 *
 * Credentials: rm_engine_auth makes the X-Registry-Auth value (base64url of a JSON auth
 * object) for a registry host, from, in order: RM_REGISTRY_USER and RM_REGISTRY_PASSWORD;
 * the Docker client configuration ($DOCKER_CONFIG/config.json, else ~/.docker/config.json):
 * its credHelpers entry for the host, its credsStore, then its "auths" entry for the host
 * (keys matched as the docker CLI does: exactly, or once stripped of http(s):// and any
 * path); else no credentials, "e30=" ({}), which the engine needs even for an open registry.
 * The value is a secret: it travels only in the request header, never in a message, a log
 * or an argv; free it with rm_engine_auth_free (which wipes it).
 */

/* Splits a reference into the repository ("HOST:PORT/a/b") and the tag or digest ("t" or
 * "sha256:..."; NULL when the reference names neither). Caller frees both. -1 when ref is
 * empty or ends in ':' or '@'. */
int rm_image_ref_split(const char *ref, char **repo, char **tag);
/* The registry host of a reference: its first component when that has a '.' or a ':' or is
 * "localhost", else "docker.io". Caller frees. */
char *rm_image_ref_registry(const char *ref);
/* Whether s is a valid tag: 1-128 of [A-Za-z0-9_.-], not starting with '.' or '-'. */
int rm_image_tag_valid(const char *s);

/* *value (the X-Registry-Auth header value) for registry host; -1 when a configured source
 * is broken (unreadable config.json, a credential helper that failed, only one of the two
 * RM_REGISTRY_* variables set). *source, when not NULL, names where it came from
 * ("RM_REGISTRY_USER", "credHelpers", "credsStore", "config.json", "none"), for messages. */
int rm_engine_auth(const char *registry, char **value, const char **source, rm_error *err);
void rm_engine_auth_free(char *value);

typedef struct rm_image_xfer_opts {
	const char *auth; /* X-Registry-Auth value; NULL sends "e30=" */
	/* Progress lines ("<layer>: Pushed", "Status: ..."), never progress bars. */
	void (*on_line)(void *ud, const char *line, size_t len);
	void *ud;
	rm_engine_cancel_fn cancel;
	void *cancel_ud;
} rm_image_xfer_opts;

#define RM_IMAGE_XFER_OPTS_INIT                                                                    \
	{                                                                                          \
		.auth = NULL, .on_line = NULL, .ud = NULL, .cancel = NULL, .cancel_ud = NULL       \
	}

/* POST /images/{source}/tag?repo=R&tag=T: source (a name or an id) also becomes ref. */
int rm_engine_image_tag(rm_docker *d, const char *source, const char *ref, rm_error *err);
/* POST /images/{repo}/push?tag=T for ref (which must carry a tag). Fails when the status is
 * not 200 or any object of the stream carries error/errorDetail (its message is returned),
 * or no digest came; *digest (caller frees) receives the aux Digest ("sha256:..."). */
int rm_engine_image_push(rm_docker *d, const char *ref, const rm_image_xfer_opts *o, char **digest,
			 rm_error *err);
/* POST /images/create?fromImage=R&tag=T: pulls ref (a tag or a digest; without either the
 * engine would pull every tag, so that is refused). Errors as for push; a reference the
 * registry does not have is err->kind RM_ERR_INPUT. *digest, when not NULL, receives the
 * "Digest: sha256:..." the engine reported (NULL when it said none). */
int rm_engine_image_pull(rm_docker *d, const char *ref, const rm_image_xfer_opts *o, char **digest,
			 rm_error *err);
/* GET /distribution/{ref}/json: asks the registry (through the engine, nothing pulled) for
 * the manifest digest of ref. Returns 0 and *digest (caller frees); 1 when the registry does
 * not have ref (a 404 or "manifest unknown"); -1 on any other failure (registry unreachable,
 * unauthorized). auth as in rm_image_xfer_opts. */
int rm_engine_distribution_digest(rm_docker *d, const char *ref, const char *auth, char **digest,
				  rm_error *err);
/* DELETE /images/{name}: removes a tag (and the image when it was its last name; force
 * removes it even when containers use it). An image already gone is not an error. */
int rm_engine_image_remove(rm_docker *d, const char *name, int force, rm_error *err);

#endif
