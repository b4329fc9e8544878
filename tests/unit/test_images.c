/*
 * Images and registries (src/engine/images.c): reference parsing, X-Registry-Auth from the
 * environment, config.json and credential helpers (secrets never in a message), and tag,
 * push, pull, distribution lookups and removal against the table-driven fake engine.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "check.h"
#include "fake_engine.h"
#include "rm/engine.h"
#include "rm/util.h"
#include "testfs.h"

static char *tmp;

/* ---- pure helpers ---- */

static void check_split(const char *ref, const char *repo, const char *tag)
{
	char *r = NULL, *t = NULL;
	CHECK(rm_image_ref_split(ref, &r, &t) == 0);
	CHECK_STR(r, repo);
	if (tag)
		CHECK_STR(t, tag);
	else
		CHECK(t == NULL);
	free(r);
	free(t);
}

SETUP()
{
	tmp = tfs_tmpdir("images");
	signal(SIGPIPE, SIG_IGN);
}

TEARDOWN()
{
	tfs_rm_tree(tmp);
	free(tmp);
}

TEST(refs)
{
	char *r, *t;

	check_split("127.0.0.1:5000/ci-smoke:abc123", "127.0.0.1:5000/ci-smoke", "abc123");
	check_split("127.0.0.1:5000/ci-smoke", "127.0.0.1:5000/ci-smoke", NULL);
	check_split("localhost:5000/team/x/y:v1.2", "localhost:5000/team/x/y", "v1.2");
	check_split("busybox", "busybox", NULL);
	check_split("busybox:1.36", "busybox", "1.36");
	check_split("reg:5000/a@sha256:0123", "reg:5000/a", "sha256:0123");
	CHECK(rm_image_ref_split("", &r, &t) < 0);
	CHECK(rm_image_ref_split("x:", &r, &t) < 0);
	CHECK(rm_image_ref_split("x@", &r, &t) < 0);
	CHECK(rm_image_ref_split("@sha256:1", &r, &t) < 0);
	CHECK(r == NULL && t == NULL);

	struct {
		const char *ref, *reg;
	} regs[] = {
	    {"127.0.0.1:5000/x:t", "127.0.0.1:5000"},
	    {"registry.example.com/team/x", "registry.example.com"},
	    {"localhost/x", "localhost"},
	    {"library/busybox", "docker.io"},
	    {"busybox:1", "docker.io"},
	    {"localhost", "docker.io"},
	};
	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++) {
		char *g = rm_image_ref_registry(regs[i].ref);
		CHECK_STR(g, regs[i].reg);
		free(g);
	}

	CHECK(rm_image_tag_valid("0123456789abcdef"));
	CHECK(rm_image_tag_valid("v1.2_rc-3"));
	CHECK(!rm_image_tag_valid(""));
	CHECK(!rm_image_tag_valid(NULL));
	CHECK(!rm_image_tag_valid(".x"));
	CHECK(!rm_image_tag_valid("-x"));
	CHECK(!rm_image_tag_valid("a/b"));
	CHECK(!rm_image_tag_valid("a:b"));
	char long_tag[130];
	memset(long_tag, 'a', sizeof(long_tag) - 1);
	long_tag[129] = '\0';
	CHECK(!rm_image_tag_valid(long_tag));
	long_tag[128] = '\0';
	CHECK(rm_image_tag_valid(long_tag));
}

/* ---- credentials ---- */

/* The JSON object inside an X-Registry-Auth value (base64url). */
static json_t *decode_auth(const char *v)
{
	size_t n = strlen(v);
	char *std = rm_xstrdup(v);
	unsigned char *out = rm_xmalloc(n + 1);
	for (size_t i = 0; i < n; i++)
		std[i] = std[i] == '-' ? '+' : std[i] == '_' ? '/' : std[i];
	int len = EVP_DecodeBlock(out, (unsigned char *)std, (int)n);
	while (len > 0 && out[len - 1] == '\0')
		len--;
	json_t *j = len > 0 ? json_loadb((char *)out, (size_t)len, 0, NULL) : NULL;
	free(std);
	free(out);
	return j;
}

static void check_auth(const char *registry, const char *user, const char *pass, const char *token,
		       const char *source)
{
	rm_error err = RM_ERROR_INIT;
	char *v = NULL;
	const char *src = NULL;

	CHECK(rm_engine_auth(registry, &v, &src, &err) == 0);
	if (!v) {
		fprintf(stderr, "auth for %s: %s\n", registry, err.msg);
		return;
	}
	CHECK_STR(src, source);
	CHECK(strchr(v, '+') == NULL && strchr(v, '/') == NULL); /* base64url */
	json_t *j = decode_auth(v);
	CHECK(j != NULL);
	CHECK_STR(json_string_value(json_object_get(j, "serveraddress")), registry);
	if (user)
		CHECK_STR(json_string_value(json_object_get(j, "username")), user);
	else
		CHECK(json_object_get(j, "username") == NULL);
	if (pass)
		CHECK_STR(json_string_value(json_object_get(j, "password")), pass);
	if (token)
		CHECK_STR(json_string_value(json_object_get(j, "identitytoken")), token);
	json_decref(j);
	rm_engine_auth_free(v);
}

TEST(auth)
{
	rm_error err = RM_ERROR_INIT;
	char *v = NULL, *dir = rm_xasprintf("%s/dockercfg", tmp);
	char *bin = rm_xasprintf("%s/bin", tmp);
	char *path = rm_xasprintf("%s:%s", bin, getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	const char *src;

	unsetenv("RM_REGISTRY_USER");
	unsetenv("RM_REGISTRY_PASSWORD");
	setenv("PATH", path, 1);

	/* Nothing configured: {} (the engine needs a header even for an open registry). */
	setenv("DOCKER_CONFIG", dir, 1);
	CHECK(rm_engine_auth("127.0.0.1:5000", &v, &src, &err) == 0);
	CHECK_STR(v, "e30=");
	CHECK_STR(src, "none");
	rm_engine_auth_free(v);

	/* The environment wins; both variables or neither. */
	setenv("RM_REGISTRY_USER", "envuser", 1);
	setenv("RM_REGISTRY_PASSWORD", "env+pass/word?", 1);
	check_auth("127.0.0.1:5000", "envuser", "env+pass/word?", NULL, "RM_REGISTRY_USER");
	unsetenv("RM_REGISTRY_PASSWORD");
	CHECK(rm_engine_auth("127.0.0.1:5000", &v, &src, &err) < 0);
	CHECK(strstr(err.msg, "RM_REGISTRY_USER") && strstr(err.msg, "RM_REGISTRY_PASSWORD"));
	CHECK(v == NULL);
	unsetenv("RM_REGISTRY_USER");

	/* config.json: "auth" is base64 of user:password (the password may hold ':'); keys match
	 * exactly or stripped of scheme and path; identitytoken travels along. */
	tfs_put(dir, "config.json",
		"{\"auths\": {"
		"\"127.0.0.1:5000\": {\"auth\": \"dXNlcjpwYTpzcw==\"},"
		"\"https://reg.example.com/v2/\": {\"username\": \"u2\", \"password\": \"p2\"},"
		"\"tok.example.com\": {\"identitytoken\": \"idtok\"},"
		"\"https://index.docker.io/v1/\": {\"auth\": \"aHViOmh1YnB3\"},"
		"\"bad.example.com\": {\"auth\": \"c2VjcmV0LXdpdGhvdXQtY29sb24=\"},"
		"\"empty.example.com\": {}"
		"}}");
	check_auth("127.0.0.1:5000", "user", "pa:ss", NULL, "config.json");
	check_auth("reg.example.com", "u2", "p2", NULL, "config.json");
	check_auth("tok.example.com", NULL, NULL, "idtok", "config.json");
	check_auth("docker.io", "hub", "hubpw", NULL, "config.json");
	CHECK(rm_engine_auth("other:5000", &v, &src, &err) == 0);
	CHECK_STR(v, "e30=");
	rm_engine_auth_free(v);
	CHECK(rm_engine_auth("empty.example.com", &v, &src, &err) == 0);
	CHECK_STR(v, "e30=");
	rm_engine_auth_free(v);
	/* A broken entry is an error that never shows the stored value. */
	CHECK(rm_engine_auth("bad.example.com", &v, &src, &err) < 0);
	CHECK(strstr(err.msg, "bad.example.com") && strstr(err.msg, "docker login"));
	CHECK(strstr(err.msg, "c2VjcmV0") == NULL && strstr(err.msg, "secret") == NULL);

	/* Credential helpers: credHelpers per host, then credsStore, then auths. */
	tfs_put(bin, "docker-credential-rmtest",
		"#!/bin/sh\n[ \"$1\" = get ] || exit 9\nserver=$(cat)\ncase \"$server\" in\n"
		"127.0.0.1:5001) echo "
		"'{\"ServerURL\":\"x\",\"Username\":\"huser\",\"Secret\":\"hsecret\"}' ;;\n"
		"127.0.0.1:5002) echo "
		"'{\"ServerURL\":\"x\",\"Username\":\"<token>\",\"Secret\":\"tok123\"}' ;;\n"
		"127.0.0.1:5000) echo 'credentials not found in native keychain'; exit 1 ;;\n"
		"*) echo \"helper broke for $server\" >&2; exit 2 ;;\nesac\n");
	char *helper = rm_xasprintf("%s/docker-credential-rmtest", bin);
	chmod(helper, 0755);
	tfs_put(
	    dir, "config.json",
	    "{\"credHelpers\": {\"127.0.0.1:5001\": \"rmtest\", \"127.0.0.1:5009\": \"rmtest\"},"
	    " \"credsStore\": \"rmtest\","
	    " \"auths\": {\"127.0.0.1:5000\": {\"auth\": \"dXNlcjpwYTpzcw==\"}}}");
	check_auth("127.0.0.1:5001", "huser", "hsecret", NULL, "credHelpers");
	check_auth("127.0.0.1:5002", NULL, NULL, "tok123", "credsStore");
	/* The store has nothing for it: the auths entry is used. */
	check_auth("127.0.0.1:5000", "user", "pa:ss", NULL, "config.json");
	CHECK(rm_engine_auth("127.0.0.1:5009", &v, &src, &err) < 0);
	CHECK(strstr(err.msg, "docker-credential-rmtest get") && strstr(err.msg, "helper broke"));
	tfs_put(dir, "config.json", "{\"credsStore\": \"rm-missing-helper\"}");
	CHECK(rm_engine_auth("127.0.0.1:5000", &v, &src, &err) < 0);
	CHECK(strstr(err.msg, "docker-credential-rm-missing-helper") != NULL);

	/* A config that is not JSON names the file and line. */
	tfs_put(dir, "config.json", "{\n\"auths\": {,}\n}");
	CHECK(rm_engine_auth("127.0.0.1:5000", &v, &src, &err) < 0);
	CHECK(strstr(err.msg, "config.json' line 2") != NULL);

	unsetenv("DOCKER_CONFIG");
	free(helper);
	free(dir);
	free(bin);
	free(path);
}

/* ---- the Engine API calls, against the fake engine ---- */

#define PUSH_OK                                                                                    \
	"{\"status\":\"The push refers to repository [127.0.0.1:5000/ci-x]\"}\r\n"                 \
	"{\"status\":\"Preparing\",\"progressDetail\":{},\"id\":\"aaa\"}\r\n"                      \
	"{\"status\":\"Pushing\",\"progressDetail\":{\"current\":512,\"total\":1024},"             \
	"\"progress\":\"[=====>    ]\",\"id\":\"aaa\"}\r\n"                                        \
	"{\"status\":\"Pushed\",\"progressDetail\":{},\"id\":\"aaa\"}\r\n"                         \
	"{\"status\":\"t1: digest: sha256:d1 size: 527\"}\r\n"                                     \
	"{\"progressDetail\":{},\"aux\":{\"Tag\":\"t1\",\"Digest\":\"sha256:d1\",\"Size\":527}}"   \
	"\r\n"

#define PUSH_REFUSED                                                                               \
	"{\"status\":\"The push refers to repository [127.0.0.1:5999/ci-x]\"}\r\n"                 \
	"{\"errorDetail\":{\"message\":\"Get \\\"http://127.0.0.1:5999/v2/\\\": dial tcp "         \
	"127.0.0.1:5999: connect: connection refused\"},\"error\":\"Get ...\"}\r\n"

#define PULL_OK                                                                                    \
	"{\"status\":\"Pulling from ci-x\",\"id\":\"t1\"}\r\n"                                     \
	"{\"status\":\"Pulling fs layer\",\"progressDetail\":{},\"id\":\"aaa\"}\r\n"               \
	"{\"status\":\"Downloading\",\"progressDetail\":{\"current\":1,\"total\":2},\"id\":"       \
	"\"aaa\"}\r\n"                                                                             \
	"{\"status\":\"Pull complete\",\"progressDetail\":{},\"id\":\"aaa\"}\r\n"                  \
	"{\"status\":\"Digest: sha256:d1\"}\r\n"                                                   \
	"{\"status\":\"Status: Downloaded newer image for 127.0.0.1:5000/ci-x:t1\"}\r\n"

static const fake_route routes[] = {
    {"POST", "/images/ci-x:latest/tag?repo=127.0.0.1%3A5000%2Fci-x&tag=t1", 201, "", 0, NULL},
    {"POST", "/images/missing/tag*", 404, "{\"message\":\"No such image: missing:latest\"}", 0,
     NULL},
    {"POST", "/images/127.0.0.1:5000/ci-x/push?tag=t1", 200, PUSH_OK, 0, NULL},
    {"POST", "/images/127.0.0.1:5999/ci-x/push?tag=t1", 200, PUSH_REFUSED, 0, NULL},
    {"POST", "/images/127.0.0.1:5000/nodigest/push?tag=t1", 200, "{\"status\":\"done\"}", 0, NULL},
    {"POST", "/images/127.0.0.1:5000/gone/push?tag=t1", 404,
     "{\"message\":\"An image does not exist locally with the tag: 127.0.0.1:5000/gone\"}", 0,
     NULL},
    {"POST", "/images/127.0.0.1:5000/slow/push*", 0, "", 0, NULL},
    {"POST", "/images/create?fromImage=127.0.0.1%3A5000%2Fci-x&tag=t1", 200, PULL_OK, 0, NULL},
    {"POST", "/images/create?fromImage=127.0.0.1%3A5000%2Fci-x&tag=sha256%3Ad1", 200, PULL_OK, 0,
     NULL},
    {"POST", "/images/create?fromImage=127.0.0.1%3A5000%2Fci-x&tag=missing", 404,
     "{\"message\":\"manifest for 127.0.0.1:5000/ci-x:missing not found: manifest unknown: "
     "manifest unknown\"}",
     0, NULL},
    {"POST", "/images/create?fromImage=127.0.0.1%3A5000%2Fci-x&tag=instream", 200,
     "{\"errorDetail\":{\"message\":\"manifest unknown\"},\"error\":\"manifest unknown\"}\r\n", 0,
     NULL},
    {"GET", "/distribution/127.0.0.1:5000/ci-x:t1/json", 200,
     "{\"Descriptor\":{\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\","
     "\"digest\":\"sha256:d1\",\"size\":527},\"Platforms\":[{\"architecture\":\"amd64\"}]}",
     0, NULL},
    {"GET", "/distribution/127.0.0.1:5000/ci-x:none/json", 404,
     "{\"message\":\"manifest unknown: manifest unknown\"}", 0, NULL},
    {"GET", "/distribution/127.0.0.1:5000/ci-x:nodigest/json", 200, "{\"Descriptor\":{}}", 0, NULL},
    {"GET", "/distribution/127.0.0.1:5999/ci-x:t1/json", 500,
     "{\"message\":\"Get \\\"http://127.0.0.1:5999/v2/\\\": dial tcp: connection refused\"}", 0,
     NULL},
    {"DELETE", "/images/127.0.0.1:5000/ci-x:t1", 200, "[{\"Untagged\":\"x\"}]", 0, NULL},
    {"DELETE", "/images/gone?force=1", 404, "{\"message\":\"No such image: gone\"}", 0, NULL},
    {"DELETE", "/images/busy", 409, "{\"message\":\"conflict: unable to remove repository\"}", 0,
     NULL},
    {NULL, NULL, 0, NULL, 0, NULL},
};

static void on_line(void *ud, const char *line, size_t len)
{
	rm_buf *b = ud;
	rm_buf_add(b, line, len);
	rm_buf_addch(b, '|');
}

TEST(engine)
{
	rm_error err = RM_ERROR_INIT;
	rm_docker *d = NULL;
	char *sock = rm_xasprintf("%s/fake.sock", tmp), *logp = rm_xasprintf("%s/fake.log", tmp);
	char *host = rm_xasprintf("unix://%s", sock), *digest = NULL, *log = NULL;
	pid_t pid = fake_start(sock, routes, logp);
	rm_buf lines = RM_BUF_INIT(1 << 20);
	rm_image_xfer_opts xo = {.auth = "c2VjcmV0LWF1dGg=", .on_line = on_line, .ud = &lines};

	if (rm_engine_open(&d, host, &err) < 0) {
		fprintf(stderr, "fake engine: %s\n", err.msg);
		CHECK(0);
		goto out;
	}

	/* tag */
	CHECK(rm_engine_image_tag(d, "ci-x:latest", "127.0.0.1:5000/ci-x:t1", &err) == 0);
	CHECK(rm_engine_image_tag(d, "missing", "127.0.0.1:5000/ci-x:t1", &err) < 0);
	CHECK(err.kind == RM_ERR_INPUT && strstr(err.msg, "'missing': no such image"));
	CHECK(rm_engine_image_tag(d, "ci-x", "127.0.0.1:5000/ci-x@sha256:1", &err) < 0);

	/* push: progress lines without bars, the aux digest, the header as given */
	CHECK(rm_engine_image_push(d, "127.0.0.1:5000/ci-x:t1", &xo, &digest, &err) == 0);
	CHECK_STR(digest, "sha256:d1");
	CHECK_STR(rm_buf_str(&lines),
		  "The push refers to repository [127.0.0.1:5000/ci-x]|"
		  "aaa: Preparing|aaa: Pushed|t1: digest: sha256:d1 size: 527|");
	free(digest);
	digest = NULL;
	/* a failure inside the 200 stream */
	CHECK(rm_engine_image_push(d, "127.0.0.1:5999/ci-x:t1", NULL, &digest, &err) < 0);
	CHECK(strstr(err.msg, "pushing '127.0.0.1:5999/ci-x:t1': ") &&
	      strstr(err.msg, "connection refused"));
	CHECK(digest == NULL);
	CHECK(rm_engine_image_push(d, "127.0.0.1:5000/nodigest:t1", NULL, &digest, &err) < 0);
	CHECK(strstr(err.msg, "no digest") != NULL);
	CHECK(rm_engine_image_push(d, "127.0.0.1:5000/gone:t1", NULL, &digest, &err) < 0);
	CHECK(err.kind == RM_ERR_INPUT && strstr(err.msg, "no such local image"));
	/* refused before any request: no tag, or a digest */
	CHECK(rm_engine_image_push(d, "127.0.0.1:5000/ci-x", NULL, &digest, &err) < 0);
	CHECK(strstr(err.msg, "HOST:PORT/NAME:TAG") != NULL);
	CHECK(rm_engine_image_push(d, "127.0.0.1:5000/ci-x@sha256:1", NULL, &digest, &err) < 0);
	/* cancellation, once the engine has the push it never answers: the client hangs up */
	fake_cancel slow = {logp, "POST /v1.41/images/127.0.0.1:5000/slow/push"};
	rm_image_xfer_opts co = {.cancel = fake_cancel_once_logged, .cancel_ud = &slow};
	CHECK(rm_engine_image_push(d, "127.0.0.1:5000/slow:t1", &co, &digest, &err) ==
	      RM_ENGINE_CANCELLED);
	CHECK(fake_wait_logged(logp, "closed by the client: POST /v1.41/images/127.0.0.1:5000/slow/"
				     "push") == 0);

	/* pull: by tag and by digest; the digest reported; not there = RM_ERR_INPUT */
	rm_buf_reset(&lines);
	CHECK(rm_engine_image_pull(d, "127.0.0.1:5000/ci-x:t1", &xo, &digest, &err) == 0);
	CHECK_STR(digest, "sha256:d1");
	CHECK(strstr(rm_buf_str(&lines), "aaa: Pull complete|") != NULL);
	CHECK(strstr(rm_buf_str(&lines), "Downloading") == NULL);
	free(digest);
	digest = NULL;
	CHECK(rm_engine_image_pull(d, "127.0.0.1:5000/ci-x@sha256:d1", NULL, NULL, &err) == 0);
	CHECK(rm_engine_image_pull(d, "127.0.0.1:5000/ci-x:missing", NULL, &digest, &err) < 0);
	CHECK(err.kind == RM_ERR_INPUT && strstr(err.msg, "the registry does not have it"));
	CHECK(rm_engine_image_pull(d, "127.0.0.1:5000/ci-x:instream", NULL, &digest, &err) < 0);
	CHECK(err.kind == RM_ERR_INPUT && strstr(err.msg, "manifest unknown"));
	CHECK(rm_engine_image_pull(d, "127.0.0.1:5000/ci-x", NULL, &digest, &err) < 0);
	CHECK(strstr(err.msg, "name a tag or a digest") != NULL);

	/* distribution: found, not there (1, no error), broken answers and failures (-1) */
	CHECK(rm_engine_distribution_digest(d, "127.0.0.1:5000/ci-x:t1", NULL, &digest, &err) == 0);
	CHECK_STR(digest, "sha256:d1");
	free(digest);
	digest = NULL;
	CHECK(rm_engine_distribution_digest(d, "127.0.0.1:5000/ci-x:none",
					    "c2VjcmV0LWF1dGg=", &digest, &err) == 1);
	CHECK(digest == NULL && err.kind == RM_ERR_NONE);
	CHECK(rm_engine_distribution_digest(d, "127.0.0.1:5000/ci-x:nodigest", NULL, &digest,
					    &err) < 0);
	CHECK(strstr(err.msg, "Descriptor.digest") != NULL);
	CHECK(rm_engine_distribution_digest(d, "127.0.0.1:5999/ci-x:t1", NULL, &digest, &err) < 0);
	CHECK(strstr(err.msg, "500") && strstr(err.msg, "connection refused"));

	/* remove: gone is fine, a conflict is not */
	CHECK(rm_engine_image_remove(d, "127.0.0.1:5000/ci-x:t1", 0, &err) == 0);
	CHECK(rm_engine_image_remove(d, "gone", 1, &err) == 0);
	CHECK(rm_engine_image_remove(d, "busy", 0, &err) < 0);
	CHECK(strstr(err.msg, "409") != NULL);

	/* What went over the wire: names unescaped in paths, the auth header on every push,
	 * pull and distribution request ({} when none), and never in a message. */
	log = NULL;
	CHECK(rm_read_file(logp, 1 << 24, &log, NULL, &err) == 0);
	if (log) {
		CHECK(strstr(log,
			     "POST /v1.41/images/127.0.0.1:5000/ci-x/push?tag=t1 HTTP/1.1\r\n") !=
		      NULL);
		const char *push = strstr(log, "/ci-x/push?tag=t1");
		CHECK(push && strstr(push, "X-Registry-Auth: c2VjcmV0LWF1dGg=\r\n") &&
		      strstr(push, "X-Registry-Auth") < strstr(push, "body="));
		const char *refused = strstr(log, "/images/127.0.0.1:5999/ci-x/push");
		CHECK(refused && strstr(refused, "X-Registry-Auth: e30=\r\n"));
		const char *none = strstr(log, "/distribution/127.0.0.1:5000/ci-x:none/json");
		CHECK(none && strstr(none, "X-Registry-Auth: c2VjcmV0LWF1dGg=\r\n"));
		CHECK(strstr(log, "POST /v1.41/images/create?fromImage=127.0.0.1%3A5000%2Fci-x&tag="
				  "sha256%3Ad1 HTTP/1.1") != NULL);
		CHECK(strstr(log, "DELETE /v1.41/images/gone?force=1 HTTP/1.1") != NULL);
		CHECK(strstr(log, "Content-Length: 0\r\n") != NULL);
	}
	CHECK(strstr(err.msg, "c2VjcmV0") == NULL);
out:
	free(log);
	rm_buf_release(&lines);
	rm_engine_close(d);
	fake_stop(pid);
	free(sock);
	free(logp);
	free(host);
}
