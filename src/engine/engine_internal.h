/*
 * Shared by the Engine API client's files: engine_api.c (connection, requests), engine_build.c,
 * engine_containers.c (containers, images, archives), engine_streams.c (logs, attach, wait)
 * and images.c (tag, push, pull, registry lookups).
 */
#ifndef RM_ENGINE_ENGINE_INTERNAL_H
#define RM_ENGINE_ENGINE_INTERNAL_H

#include <curl/curl.h>

#include "rm/engine.h"
#include "rm/util.h"

#define DEFAULT_HOST "unix:///var/run/docker.sock"
/* Where tools/ensure-docker.sh keeps a private engine (RM_DOCKER_DIR overrides it). */
#define PRIVATE_ENGINE_DIR "/var/tmp/run_models-dockerd"
/* Podman's system service as root (podman.socket); a user's is under $XDG_RUNTIME_DIR. */
#define PODMAN_ROOTFUL_SOCKET "/run/podman/podman.sock"
#define CONNECT_TIMEOUT	      10L
#define SHORT_TIMEOUT	      60L
#define LONG_TIMEOUT	      300L /* remove (volumes, big layers) and archive copies */
#define PING_TIMEOUT	      20L
#define PODMAN_WAIT_INTERVAL  "20ms" /* how often Podman's own wait looks at the container */
#define QUICK_PING_TIMEOUT    3L     /* rm_engine_open_quick: a dry run asking what the engine is */
/* After an interrupt (Ctrl-C), each clean-up call gets at most this long. */
#define CLEANUP_TIMEOUT_MS 1500L
/* How often a waiting request looks at its cancel function and the interrupt (ms). */
#define POLL_MS		    100
#define MAX_JSON_RESPONSE   (16u * 1024 * 1024)
#define MAX_ERROR_BODY	    (64u * 1024)
#define MAX_BUILD_JSON_LINE (1024u * 1024)
#define MAX_BUILD_TEXT_LINE (64u * 1024)

struct rm_docker {
	char *host;	 /* what we connected to, for messages */
	char *unix_path; /* NULL for tcp */
	char *base;	 /* "http://localhost", "http://host:port" or "https://host:port" */
	char *tls_ca, *tls_cert, *tls_key;
	char version[16];
	/* What answers: Docker, or Podman (its /_ping sends Libpod-Api-Version), and Podman's
	 * own version from that header ("" for Docker: /version has it). */
	rm_engine_kind kind;
	char product_version[32];
	int curl_ready;
	/* A clean-up call after an interrupt got no answer: the engine is hung, and further
	 * calls fail at once instead of each waiting for its deadline. */
	int hung;
};

/* One HTTP exchange. Callers fill the request part; do_request fills the rest. */
struct req {
	const char *method;
	const char *path; /* with query, without the /v1.NN prefix */
	int unversioned;  /* /_ping */
	const char *content_type;
	const char *body; /* in-memory body (POST), or NULL for an empty one */
	size_t body_len;
	int upload_fd; /* file body when >= 0 */
	curl_off_t upload_size;
	long timeout; /* seconds; 0 for long streams */
	/* Extra request headers ("Name: value"), NULL-terminated, or NULL. They never appear in
	 * a message: credentials travel there (X-Registry-Auth). */
	const char *const *headers;
	/* A 2xx body goes to on_data when set (return -1 and fill err to abort), else into
	 * resp when set (bounded by its max), else nowhere. */
	int (*on_data)(void *ud, const char *p, size_t n);
	void *ud;
	rm_buf *resp;
	rm_engine_cancel_fn cancel;
	void *cancel_ud;
	int decode_any; /* json_request: a scalar answer (Podman's wait: the exit code) is JSON too
			 */
	/* Made after the interrupt came (a clean-up call): a short deadline, not cancelled by
	 * the interrupt. Set by rm_engine__req_prepare. */
	int after_interrupt;
	long timeout_ms; /* what applies: timeout, or the clean-up deadline */

	/* Results. */
	long status;
	long sent;		 /* bytes of the request sent: 0 when no connection was made */
	char engine_msg[1024];	 /* message of a non-2xx answer */
	int engine_json;	 /* it came as {"message": ...} (not a router's plain text) */
	char api_version[32];	 /* Api-Version header, when sent */
	char libpod_version[32]; /* Libpod-Api-Version header: Podman sent it */
	char path_stat[2048];	 /* X-Docker-Container-Path-Stat (HEAD /archive), base64 */

	/* Internal. */
	CURL *curl;
	struct curl_slist *hdrs;
	char *url;
	char errbuf[CURL_ERROR_SIZE];
	rm_buf errbody;
	int cancelled, too_big, handler_failed, read_errno;
};

/* URL-escapes s (query values, path parts); caller frees. */
char *rm_engine__escape(const char *s);
int rm_engine__is_2xx(long status);
void rm_engine__req_init(struct req *r, const char *method, const char *path, long timeout);
/* Sets up r->curl for the request; the transfer is run by the caller (easy or multi). */
int rm_engine__req_prepare(rm_docker *d, struct req *r, rm_error *err);
/* Interprets the end of a transfer; see do_request for the return values. */
int rm_engine__req_complete(rm_docker *d, struct req *r, CURLcode rc, rm_error *err);
void rm_engine__req_cleanup(struct req *r);
/* Runs one request. Returns 0 for a 2xx answer; RM_ENGINE_CANCELLED when the cancel
 * function asked; -1 otherwise, with err naming the request. */
int rm_engine__do_request(rm_docker *d, struct req *r, rm_error *err);
/* Whether r must stop now: its own cancel function, or the interrupt (for a request made
 * before it came). Sets r->cancelled. */
int rm_engine__should_stop(struct req *r);
/* A JSON-lines stream (build, push, pull: one object per line, chunks cut anywhere) split into
 * objects for on_object; line holds the part of a line not yet ended. Returns 0, or -1 when
 * a line grows past line->max (err says "<what> is longer than N bytes"). */
int rm_engine__json_lines(rm_buf *line, const char *p, size_t n,
			  void (*on_object)(void *ud, const char *s, size_t len), void *ud,
			  const char *what, rm_error *err);
/* A request whose 2xx answer is JSON; *out may be NULL to ignore the answer. */
int rm_engine__json_request(rm_docker *d, struct req *r, json_t **out, rm_error *err);

/* ---- Podman (podman.c) ---- */

/* Whether Podman's version is at least major.minor (an unknown version is not). */
int rm_engine__podman_at_least(const rm_docker *d, long major, long minor);
/* POST /containers/create on Podman for a body that asks for CDI devices (a DeviceRequests
 * entry with Driver "cdi"): Podman before 5.4 drops DeviceRequests in its Docker API
 * without a word, so the body is sent to its own API (/libpod/containers/create) as the
 * spec it means; 5.4 and later read them, and get the body as it is. A DeviceRequests entry
 * of another driver (Docker's NVIDIA runtime) is refused: Podman would drop it. Returns 1
 * when the body needs none of this (the caller sends it), 0 with *id, or -1. */
int rm_engine__podman_create(rm_docker *d, const char *name, json_t *body, char **id,
			     rm_error *err);

#endif
