#!/usr/bin/env python3
"""flaky_engine: a proxy in front of a real Docker engine that fails chosen requests, for the
retry tests (run_models --retries: an engine error is the machine's, tried again).

    flaky_engine.py UPSTREAM_SOCKET SOCKET 'POST /containers/create' [N]

The first N (default 1) requests whose method and path (without the /v1.NN prefix) start
with the pattern get "500 Internal Server Error" and {"message": "injected by flaky_engine
(1 of N)"}, as dockerd answers a request it failed, without reaching the engine; every other
request is relayed to the engine at UPSTREAM_SOCKET unchanged but for "Connection: close"
(an upgrade, the attach stream, is left as it is), so that each connection carries one
request and every request is seen. Once listening it prints "flaky_engine: ready" on stdout;
each failed request is named on stderr. SIGTERM or SIGINT stops it and removes SOCKET.
"""
import os
import re
import signal
import socket
import socketserver
import sys
import threading

UPSTREAM, PATH, PATTERN = sys.argv[1], sys.argv[2], sys.argv[3]
LEFT = [int(sys.argv[4]) if len(sys.argv) > 4 else 1]
TOTAL = LEFT[0]
LOCK = threading.Lock()


def read_head(sock):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return None, data
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    return head.decode("latin-1"), rest


def relay(src, dst):
    try:
        while True:
            chunk = src.recv(65536)
            if not chunk:
                break
            dst.sendall(chunk)
    except OSError:
        pass
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def matches(request_line):
    method, _, rest = request_line.partition(" ")
    path = rest.split(" ", 1)[0]
    path = re.sub(r"^/v[0-9]+\.[0-9]+", "", path)
    return f"{method} {path}".startswith(PATTERN)


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        client = self.request
        head, rest = read_head(client)
        if head is None:
            return
        lines = head.split("\r\n")
        with LOCK:
            fail = LEFT[0] > 0 and matches(lines[0])
            if fail:
                LEFT[0] -= 1
                n = TOTAL - LEFT[0]
        if fail:
            length = 0
            for h in lines[1:]:
                if h.lower().startswith("content-length:"):
                    length = int(h.split(":", 1)[1])
            while len(rest) < length:
                chunk = client.recv(65536)
                if not chunk:
                    break
                rest += chunk
            body = ('{"message":"injected by flaky_engine (%d of %d)"}\n' % (n, TOTAL)).encode()
            client.sendall(b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\n"
                           b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
            print(f"flaky_engine: {lines[0]}: failed ({n} of {TOTAL})", file=sys.stderr, flush=True)
            return
        upgrade = any(h.lower().startswith("upgrade:") for h in lines[1:])
        if not upgrade:
            lines = [h for h in lines if not h.lower().startswith("connection:")]
            lines.append("Connection: close")
        up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        up.connect(UPSTREAM)
        up.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + rest)
        back = threading.Thread(target=relay, args=(up, client), daemon=True)
        back.start()
        relay(client, up)
        back.join()
        up.close()


class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


def main():
    if os.path.exists(PATH):
        os.unlink(PATH)
    server = Server(PATH, Handler)

    def stop(*_):
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print("flaky_engine: ready", flush=True)
    server.serve_forever()
    os.unlink(PATH)


if __name__ == "__main__":
    main()
