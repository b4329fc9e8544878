/*
 * hung_engine: a Docker engine that stops answering, for fault-injection tests (the runner
 * must stay interruptible and keep its deadlines when dockerd accepts and then goes silent).
 *
 *   hung_engine SOCKET                    accepts connections, reads every request, never
 *                                         answers anything
 *   hung_engine --ping SOCKET             answers GET/HEAD /_ping and GET /version (with or
 *                                         without a /v1.NN prefix) as Debian 12's dockerd
 *                                         20.10 does (API 1.41), so version negotiation
 *                                         succeeds; then hangs on every other request
 *   hung_engine --proxy UPSTREAM SOCKET   relays every connection to the real engine at the
 *                                         unix socket UPSTREAM until SIGUSR1 freezes it: from
 *                                         then on no byte moves either way and new
 *                                         connections hang, and nothing is closed; SIGUSR2
 *                                         thaws it. For "the engine hangs mid-run".
 *   hung_engine --proxy UPSTREAM --fault F --match 'METHOD PATH' [--nth N] SOCKET
 *                                         the same relay, with one fault on the Nth (default
 *                                         1st) request whose "METHOD PATH" (the path without
 *                                         its /v1.NN prefix and query) matches the fnmatch(3)
 *                                         pattern, e.g. 'GET /_ping', or /wait of any
 *                                         container with a star for its id (every
 *                                         request is a connection of its own: run_models opens
 *                                         one per call). F is one of
 *                                           stall        the request goes to the engine, its
 *                                                        answer never comes back (the
 *                                                        connection stays open)
 *                                           cut          the request goes to the engine, the
 *                                                        connection is closed when its answer
 *                                                        starts (a lost response)
 *                                           drop         the connection is closed before the
 *                                                        request reaches the engine
 *                                           delay=MS     the request is held MS ms, then relayed
 *                                           close-after=MS  relayed, then closed MS ms after
 *                                                        the answer started (a stream cut early)
 *                                         Each fault that fires is named on stderr
 *                                         ("hung_engine: fault stall: POST /v1.41/...").
 *
 * Once listening it prints one line on stdout, "hung_engine: ready pid=N socket=PATH
 * mode=M", so a script can wait for it. Each request it refuses to answer is named on stderr.
 * SIGTERM or SIGINT closes every connection, removes SOCKET and exits 0.
 *
 * One thread, one ppoll() loop; the signals are blocked except inside ppoll, so none is lost
 * between a check and the wait.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <time.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_CONNS 128
#define REQ_MAX	  16384	      /* request head kept for parsing (--ping) */
#define BUF_SIZE  (64 * 1024) /* per direction (--proxy) */

enum mode { SILENT, PING, PROXY };
enum fault { F_NONE, F_STALL, F_CUT, F_DROP, F_DELAY, F_CLOSE_AFTER };

/* The one fault of --fault: what, on which request, and how many matched so far. */
static struct {
	enum fault what;
	long ms;
	const char *match;
	long nth, seen;
} fault_cfg = {F_NONE, 0, NULL, 1, 0};

struct conn {
	int fd;		  /* the client; -1 when the slot is free */
	int up;		  /* --proxy: the upstream engine */
	int hung;	  /* --ping: a request we will never answer came */
	size_t len;	  /* bytes in buf */
	char *buf;	  /* --ping: request head; --proxy: client to upstream */
	char *back;	  /* --proxy: upstream to client */
	size_t blen;	  /* bytes in back */
	int c_eof;	  /* the client sent EOF */
	int u_eof;	  /* the upstream sent EOF */
	int shut_up;	  /* the upstream's write side was shut after c_eof */
	int shut_cli;	  /* the client's write side was shut after u_eof */
	int classified;	  /* --fault: its request line was read */
	enum fault fault; /* the fault this connection gets, or F_NONE */
	double at;	  /* F_DELAY: relay from then; F_CLOSE_AFTER: close then (0: not yet) */
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile sig_atomic_t stop_sig, frozen;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		frozen = 1;
	else if (sig == SIGUSR2)
		frozen = 0;
	else
		stop_sig = sig;
}

static void die(const char *what)
{
	fprintf(stderr, "hung_engine: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int fill_addr(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path)) {
		fprintf(stderr, "hung_engine: socket path longer than %zu bytes: %s\n",
			sizeof(sa->sun_path) - 1, path);
		return -1;
	}
	memcpy(sa->sun_path, path, strlen(path) + 1);
	return 0;
}

static void set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		die("fcntl");
}

/* Listens on path; a stale socket file is replaced, a live one or any other file is not. */
static int listen_on(const char *path)
{
	struct sockaddr_un sa;
	struct stat st;
	int fd;

	if (fill_addr(&sa, path) < 0)
		exit(2);
	if (lstat(path, &st) == 0) {
		int probe = socket(AF_UNIX, SOCK_STREAM, 0);
		if (!S_ISSOCK(st.st_mode)) {
			fprintf(stderr, "hung_engine: %s exists and is not a socket\n", path);
			exit(2);
		}
		if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			fprintf(stderr, "hung_engine: something already listens on %s\n", path);
			exit(2);
		}
		if (probe >= 0)
			close(probe);
		unlink(path);
	}
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0)
		die("socket");
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die(path);
	if (listen(fd, 64) < 0)
		die("listen");
	set_nonblock(fd);
	return fd;
}

static int connect_upstream(const char *path)
{
	struct sockaddr_un sa;
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	if (fd < 0 || fill_addr(&sa, path) < 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "hung_engine: cannot reach the upstream engine %s: %s\n", path,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	set_nonblock(fd);
	return fd;
}

static void drop(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	if (c->up >= 0)
		close(c->up);
	free(c->buf);
	free(c->back);
	memset(c, 0, sizeof(*c));
	c->fd = c->up = -1;
}

/* Small answers on a fresh connection: a short write is retried, never waited for long. */
static void send_all(int fd, const char *p, size_t n)
{
	for (int tries = 0; n && tries < 1000; tries++) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w > 0) {
			p += w;
			n -= (size_t)w;
		} else if (w < 0 && errno != EAGAIN && errno != EINTR) {
			return;
		} else {
			usleep(1000);
		}
	}
}

static const char ping_head[] = "HTTP/1.1 200 OK\r\n"
				"Api-Version: 1.41\r\n"
				"Cache-Control: no-cache, no-store, must-revalidate\r\n"
				"Content-Type: text/plain; charset=utf-8\r\n"
				"Docker-Experimental: false\r\n"
				"Ostype: linux\r\n"
				"Pragma: no-cache\r\n"
				"Server: Docker/20.10.24+dfsg1 (linux)\r\n"
				"Content-Length: 2\r\n\r\n";

static const char version_body[] =
    "{\"Platform\":{\"Name\":\"\"},\"Version\":\"20.10.24+dfsg1\",\"ApiVersion\":\"1.41\","
    "\"MinAPIVersion\":\"1.12\",\"GitCommit\":\"hung_engine\",\"GoVersion\":\"go1.19.8\","
    "\"Os\":\"linux\",\"Arch\":\"amd64\",\"KernelVersion\":\"hung_engine\","
    "\"BuildTime\":\"2023-01-01T00:00:00.000000000+00:00\"}\n";

/* The path of a request line without a "/v1.NN" prefix and without the query. */
static int path_is(const char *path, size_t n, const char *want)
{
	size_t wl = strlen(want);

	if (n > 2 && path[0] == '/' && path[1] == 'v' && path[2] >= '0' && path[2] <= '9') {
		size_t i = 2;
		while (i < n && ((path[i] >= '0' && path[i] <= '9') || path[i] == '.'))
			i++;
		path += i;
		n -= i;
	}
	for (size_t i = 0; i < n; i++)
		if (path[i] == '?') {
			n = i;
			break;
		}
	return n == wl && memcmp(path, want, wl) == 0;
}

/* --ping and silent: answers the complete request heads in c->buf that may be answered;
 * the first one that may not makes the connection hang for good. Request bodies only come
 * with requests that hang, so a head ends each request that is answered. */
static void serve(struct conn *c, enum mode mode)
{
	while (!c->hung) {
		char *end = memmem(c->buf, c->len, "\r\n\r\n", 4);
		char *sp1, *sp2, *eol;
		size_t head;

		if (!end) {
			if (c->len == REQ_MAX) { /* a head this long: not a client we serve */
				c->hung = 1;
				fprintf(stderr,
					"hung_engine: request head over %d bytes: hanging\n",
					REQ_MAX);
			}
			return;
		}
		head = (size_t)(end - c->buf) + 4;
		eol = memmem(c->buf, head, "\r\n", 2);
		sp1 = memchr(c->buf, ' ', (size_t)(eol - c->buf));
		sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
		if (mode == PING && sp1 && sp2) {
			size_t mlen = (size_t)(sp1 - c->buf), plen = (size_t)(sp2 - sp1 - 1);
			int get = mlen == 3 && memcmp(c->buf, "GET", 3) == 0;
			int headm = mlen == 4 && memcmp(c->buf, "HEAD", 4) == 0;

			if ((get || headm) && path_is(sp1 + 1, plen, "/_ping")) {
				send_all(c->fd, ping_head, sizeof(ping_head) - 1);
				if (get)
					send_all(c->fd, "OK", 2);
				goto next;
			}
			if (get && path_is(sp1 + 1, plen, "/version")) {
				char h[256];
				int n = snprintf(h, sizeof(h),
						 "HTTP/1.1 200 OK\r\nApi-Version: 1.41\r\n"
						 "Content-Type: application/json\r\n"
						 "Server: Docker/20.10.24+dfsg1 (linux)\r\n"
						 "Content-Length: %zu\r\n\r\n",
						 sizeof(version_body) - 1);
				send_all(c->fd, h, (size_t)n);
				send_all(c->fd, version_body, sizeof(version_body) - 1);
				goto next;
			}
		}
		c->hung = 1;
		fprintf(stderr, "hung_engine: %.*s: hanging\n", (int)(eol - c->buf), c->buf);
		return;
	next:
		memmove(c->buf, c->buf + head, c->len - head);
		c->len -= head;
	}
}

/* --fault: once the request line is in c->buf, whether this connection gets the fault. */
static void classify(struct conn *c)
{
	char line[2048], *sp1, *sp2, *path, *q;
	char *eol = memmem(c->buf, c->len, "\r\n", 2);
	size_t ll;

	if (c->classified || fault_cfg.what == F_NONE)
		return;
	if (!eol) {
		if (c->len < sizeof(line))
			return;
		c->classified = 1; /* no request line: relayed as it is */
		return;
	}
	c->classified = 1;
	ll = (size_t)(eol - c->buf) < sizeof(line) - 1 ? (size_t)(eol - c->buf) : sizeof(line) - 1;
	memcpy(line, c->buf, ll);
	line[ll] = '\0';
	sp1 = strchr(line, ' ');
	sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	if (!sp1 || !sp2)
		return;
	*sp2 = '\0';
	path = sp1 + 1;
	if ((q = strchr(path, '?')))
		*q = '\0';
	if (path[0] == '/' && path[1] == 'v' && path[2] >= '0' && path[2] <= '9') {
		char *slash = strchr(path + 1, '/');
		if (slash)
			memmove(path, slash, strlen(slash) + 1);
	}
	*sp1 = ' ';
	memmove(sp1 + 1, path, strlen(path) + 1);
	if (fnmatch(fault_cfg.match, line, 0) != 0 || ++fault_cfg.seen != fault_cfg.nth)
		return;
	c->fault = fault_cfg.what;
	if (c->fault == F_DELAY)
		c->at = now_s() + (double)fault_cfg.ms / 1000.0;
	fprintf(stderr, "hung_engine: fault %s: %.*s\n",
		c->fault == F_STALL   ? "stall"
		: c->fault == F_CUT   ? "cut"
		: c->fault == F_DROP  ? "drop"
		: c->fault == F_DELAY ? "delay"
				      : "close-after",
		(int)(eol - c->buf), c->buf);
}

/* --proxy: moves what it can each way, without blocking; returns -1 when the connection is
 * finished (both sides closed, or an error, or a fault closed it). */
static int relay(struct conn *c, short cre, short ure)
{
	ssize_t n;

	if ((cre & (POLLIN | POLLHUP)) && !c->c_eof && c->len < BUF_SIZE) {
		n = recv(c->fd, c->buf + c->len, BUF_SIZE - c->len, 0);
		if (n > 0)
			c->len += (size_t)n;
		else if (n == 0 || (errno != EAGAIN && errno != EINTR))
			c->c_eof = 1;
	}
	if ((ure & (POLLIN | POLLHUP)) && !c->u_eof && c->blen < BUF_SIZE) {
		n = recv(c->up, c->back + c->blen, BUF_SIZE - c->blen, 0);
		if (n > 0)
			c->blen += (size_t)n;
		else if (n == 0 || (errno != EAGAIN && errno != EINTR))
			c->u_eof = 1;
	}
	classify(c);
	if (c->fault == F_DROP)
		return -1;
	if (c->fault == F_CUT && c->blen)
		return -1; /* the answer started: it is lost */
	if (c->fault == F_CLOSE_AFTER && c->blen && c->at == 0)
		c->at = now_s() + (double)fault_cfg.ms / 1000.0;
	if (c->fault == F_CLOSE_AFTER && c->at > 0 && now_s() >= c->at)
		return -1;
	if (c->fault == F_STALL)
		c->blen = 0; /* the answer is read and never passed on */
	if (c->len && (fault_cfg.what == F_NONE || c->classified) &&
	    !(c->fault == F_DELAY && now_s() < c->at)) {
		n = send(c->up, c->buf, c->len, MSG_NOSIGNAL);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		if (n > 0) {
			memmove(c->buf, c->buf + n, c->len - (size_t)n);
			c->len -= (size_t)n;
		}
	}
	if (c->blen) {
		n = send(c->fd, c->back, c->blen, MSG_NOSIGNAL);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		if (n > 0) {
			memmove(c->back, c->back + n, c->blen - (size_t)n);
			c->blen -= (size_t)n;
		}
	}
	/* Half-closes are passed on once everything before them was. */
	if (c->c_eof && !c->len && !c->shut_up) {
		shutdown(c->up, SHUT_WR);
		c->shut_up = 1;
	}
	if (c->fault == F_STALL && c->c_eof)
		return -1; /* the client gave up on the answer that never came */
	if (c->u_eof && !c->blen && !c->shut_cli && c->fault != F_STALL) {
		shutdown(c->fd, SHUT_WR);
		c->shut_cli = 1;
	}
	return c->shut_up && c->shut_cli ? -1 : 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: hung_engine [--ping | --proxy UPSTREAM_SOCKET [--fault F --match "
			"'METHOD PATH' [--nth N]]] SOCKET\n");
	exit(2);
}

static void parse_fault(const char *f)
{
	if (!strcmp(f, "stall"))
		fault_cfg.what = F_STALL;
	else if (!strcmp(f, "cut"))
		fault_cfg.what = F_CUT;
	else if (!strcmp(f, "drop"))
		fault_cfg.what = F_DROP;
	else if (!strncmp(f, "delay=", 6))
		fault_cfg.what = F_DELAY, fault_cfg.ms = atol(f + 6);
	else if (!strncmp(f, "close-after=", 12))
		fault_cfg.what = F_CLOSE_AFTER, fault_cfg.ms = atol(f + 12);
	else
		usage();
}

/* The ppoll timeout while a fault's clock runs (a delay, a close-after), else none. */
static struct timespec *fault_timeout(const struct conn *conns, struct timespec *ts)
{
	double soonest = 0;

	for (int i = 0; i < MAX_CONNS; i++)
		if (conns[i].fd >= 0 && conns[i].at > 0 &&
		    (conns[i].fault == F_DELAY || conns[i].fault == F_CLOSE_AFTER) &&
		    (soonest == 0 || conns[i].at < soonest))
			soonest = conns[i].at;
	if (soonest == 0)
		return NULL;
	soonest -= now_s();
	if (soonest < 0)
		soonest = 0;
	ts->tv_sec = (time_t)soonest;
	ts->tv_nsec = (long)((soonest - (double)ts->tv_sec) * 1e9) + 1000000;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
	return ts;
}

int main(int argc, char **argv)
{
	enum mode mode = SILENT;
	const char *path = NULL, *upstream = NULL;
	static struct conn conns[MAX_CONNS];
	struct pollfd pfd[1 + 2 * MAX_CONNS];
	struct sigaction sa;
	sigset_t block, none;
	int lfd, was_frozen = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--ping") == 0) {
			mode = PING;
		} else if (strcmp(argv[i], "--proxy") == 0 && i + 1 < argc) {
			mode = PROXY;
			upstream = argv[++i];
		} else if (strcmp(argv[i], "--fault") == 0 && i + 1 < argc) {
			parse_fault(argv[++i]);
		} else if (strcmp(argv[i], "--match") == 0 && i + 1 < argc) {
			fault_cfg.match = argv[++i];
		} else if (strcmp(argv[i], "--nth") == 0 && i + 1 < argc) {
			fault_cfg.nth = atol(argv[++i]);
		} else if (argv[i][0] == '-' || path) {
			usage();
		} else {
			path = argv[i];
		}
	}
	if (!path || (fault_cfg.what != F_NONE && (mode != PROXY || !fault_cfg.match)))
		usage();

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGUSR2);
	sigemptyset(&none);
	if (sigprocmask(SIG_BLOCK, &block, NULL) < 0 || sigaction(SIGTERM, &sa, NULL) < 0 ||
	    sigaction(SIGINT, &sa, NULL) < 0 || sigaction(SIGUSR1, &sa, NULL) < 0 ||
	    sigaction(SIGUSR2, &sa, NULL) < 0)
		die("signals");
	signal(SIGPIPE, SIG_IGN);

	for (int i = 0; i < MAX_CONNS; i++)
		conns[i].fd = conns[i].up = -1;
	lfd = listen_on(path);
	printf("hung_engine: ready pid=%ld socket=%s mode=%s\n", (long)getpid(), path,
	       mode == SILENT ? "silent"
	       : mode == PING ? "ping"
			      : "proxy");
	fflush(stdout);

	while (!stop_sig) {
		int n = 0, used = 0;
		int idx[1 + 2 * MAX_CONNS]; /* pfd index -> conn index */

		if (frozen != was_frozen) {
			was_frozen = frozen;
			fprintf(stderr, "hung_engine: %s\n", was_frozen ? "frozen" : "thawed");
		}
		for (int i = 0; i < MAX_CONNS; i++)
			used += conns[i].fd >= 0;
		if (used < MAX_CONNS && !(mode == PROXY && frozen)) {
			pfd[n] = (struct pollfd){.fd = lfd, .events = POLLIN};
			idx[n++] = -1;
		}
		for (int i = 0; i < MAX_CONNS; i++) {
			struct conn *c = &conns[i];
			if (c->fd < 0)
				continue;
			if (mode != PROXY) {
				/* Keep reading (and dropping, once hung) so a client never blocks
				 * on a full socket: it waits for an answer, as with a hung dockerd.
				 */
				pfd[n] = (struct pollfd){.fd = c->fd, .events = POLLIN};
				idx[n++] = i;
				continue;
			}
			if (frozen)
				continue;
			pfd[n] = (struct pollfd){
			    .fd = c->fd,
			    .events = (short)((!c->c_eof && c->len < BUF_SIZE ? POLLIN : 0) |
					      (c->blen ? POLLOUT : 0))};
			idx[n++] = i;
			int held = (fault_cfg.what != F_NONE && !c->classified) ||
				   (c->fault == F_DELAY && now_s() < c->at);
			pfd[n] = (struct pollfd){
			    .fd = c->up,
			    .events = (short)((!c->u_eof && c->blen < BUF_SIZE ? POLLIN : 0) |
					      (c->len && !held ? POLLOUT : 0))};
			idx[n++] = i;
		}
		struct timespec ts;
		if (ppoll(pfd, (nfds_t)n, mode == PROXY ? fault_timeout(conns, &ts) : NULL, &none) <
		    0) {
			if (errno == EINTR)
				continue;
			die("ppoll");
		}
		for (int k = 0; k < n; k++) {
			struct conn *c;
			int i = idx[k];

			if (i >= 0 && mode == PROXY) {
				/* A connection's two pollfds are adjacent, the client's first:
				 * handle both at the client's. */
				short ure = k + 1 < n ? pfd[k + 1].revents : 0;
				c = &conns[i];
				if (c->fd < 0 || pfd[k].fd != c->fd)
					continue;
				if ((pfd[k].revents || ure || (c->at > 0 && now_s() >= c->at)) &&
				    relay(c, pfd[k].revents, ure) < 0)
					drop(c);
				continue;
			}
			if (!pfd[k].revents)
				continue;
			if (i < 0) {
				int fd = accept(lfd, NULL, NULL);
				int slot = 0;
				if (fd < 0)
					continue;
				while (conns[slot].fd >= 0)
					slot++;
				c = &conns[slot];
				c->fd = fd;
				c->buf = malloc(mode == PROXY ? BUF_SIZE : REQ_MAX);
				if (!c->buf)
					die("malloc");
				if (mode == PROXY) {
					c->back = malloc(BUF_SIZE);
					if (!c->back)
						die("malloc");
					set_nonblock(fd);
					c->up = connect_upstream(upstream);
					if (c->up < 0)
						drop(c);
				}
				continue;
			}
			c = &conns[i];
			if (c->fd < 0)
				continue; /* dropped earlier in this round */
			char scratch[4096];
			char *dst = c->hung ? scratch : c->buf + c->len;
			size_t room = c->hung ? sizeof(scratch) : REQ_MAX - c->len;
			ssize_t r = read(c->fd, dst, room);
			if (r <= 0) {
				if (r == 0 || (errno != EINTR && errno != EAGAIN))
					drop(c);
				continue;
			}
			if (!c->hung) {
				c->len += (size_t)r;
				serve(c, mode);
			}
		}
	}
	for (int i = 0; i < MAX_CONNS; i++)
		if (conns[i].fd >= 0)
			drop(&conns[i]);
	close(lfd);
	unlink(path);
	fprintf(stderr, "hung_engine: %s: exiting\n", strsignal(stop_sig));
	return 0;
}
