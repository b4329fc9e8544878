/*
 * Internal to src/docker: the request machinery of engine_api.c, shared with the other files
 * of the Engine API client (images.c). Not a public contract; nothing outside src/docker
 * includes it.
 *
 * One request is a struct req: the caller fills the request part after rm_docker_req_init,
 * then rm_docker_do_request (or rm_docker_json_request) runs it. Return values: 0 for a 2xx
 * answer; RM_DOCKER_CANCELLED when the cancel function asked; -1 otherwise, with err naming
 * the request. r->status then holds the HTTP status (0 when none came) and r->engine_msg the
 * engine's message for a non-2xx answer, so callers can turn some statuses into success or a
 * better message. Request headers (r->headers) never appear in messages: credentials travel
 * there.
 */
#ifndef RM_DOCKER_ENGINE_INTERNAL_H
#define RM_DOCKER_ENGINE_INTERNAL_H

#include <curl/curl.h>

#include "rm/docker.h"
#include "rm/util.h"

#define RM_DOCKER_SHORT_TIMEOUT 60L

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
	/* Extra request headers ("Name: value"), NULL-terminated, or NULL. */
	const char *const *headers;
	/* A 2xx body goes to on_data when set (return -1 and fill err to abort), else into
	 * resp when set (bounded by its max), else nowhere. */
	int (*on_data)(void *ud, const char *p, size_t n);
	void *ud;
	rm_buf *resp;
	rm_docker_cancel_fn cancel;
	void *cancel_ud;

	/* Results. */
	long status;
	char engine_msg[1024]; /* message of a non-2xx answer */
	char api_version[32];  /* Api-Version header, when sent */

	/* Internal. */
	CURL *curl;
	struct curl_slist *hdrs;
	char *url;
	char errbuf[CURL_ERROR_SIZE];
	rm_buf errbody;
	int cancelled, too_big, handler_failed, read_errno;
};

void rm_docker_req_init(struct req *r, const char *method, const char *path, long timeout);
int rm_docker_do_request(rm_docker *d, struct req *r, rm_error *err);
/* A request whose 2xx answer is JSON; *out (caller frees) may be NULL to ignore the answer. */
int rm_docker_json_request(rm_docker *d, struct req *r, json_t **out, rm_error *err);
/* URL-encodes a query value (every reserved character escaped); caller frees. */
char *rm_docker_escape(const char *s);

#endif
