#!/usr/bin/env bash
# A private PostgreSQL server for the tests: initdb + pg_ctl in a temp folder, run as an
# unprivileged user, reachable only on a Unix socket in that folder (no TCP port).
#   pg.sh start DIR   makes DIR (must not exist or be empty), starts the server, creates the
#                     database "rm" and prints its URL (postgresql:///rm?host=DIR) last
#   pg.sh stop DIR    stops the server and removes DIR
# As root the server runs as the "postgres" user that Debian's postgresql package creates
# (else "nobody"); as another user it runs as that user. Timings go to stderr.
set -euo pipefail
cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || {
	echo "usage: pg.sh start|stop DIR" >&2
	exit 2
}
bindir=${RM_PG_BINDIR:-}
if [ -z "$bindir" ]; then
	for d in /usr/lib/postgresql/*/bin; do
		[ -x "$d/initdb" ] && bindir=$d
	done
fi
[ -n "$bindir" ] && [ -x "$bindir/initdb" ] || {
	echo "pg.sh: initdb not found: install Debian's postgresql package (or set RM_PG_BINDIR)" >&2
	exit 1
}

as_user() {
	if [ "$(id -u)" = 0 ]; then
		# From "/": the caller's folder may be closed to the server's user.
		(cd / && runuser -u "$user" -- "$@")
	else
		"$@"
	fi
}
user=$(id -un)
if [ "$(id -u)" = 0 ]; then
	user=nobody
	id postgres >/dev/null 2>&1 && user=postgres
fi
now() { date +%s.%N; }

case "$cmd" in
start)
	t0=$(now)
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	[ "$(id -u)" = 0 ] && chown "$user" "$dir"
	as_user "$bindir/initdb" -D "$dir/data" -U rm --auth=trust -E UTF8 --locale=C.UTF-8 \
		--no-sync >"$dir/initdb.log" 2>&1 || {
		cat "$dir/initdb.log" >&2
		exit 1
	}
	t1=$(now)
	# No TCP listener; fsync off: a test database need not survive a power cut.
	as_user "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
		-o "-c listen_addresses= -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
		start >/dev/null || {
		cat "$dir/server.log" >&2
		exit 1
	}
	as_user "$bindir/createdb" -h "$dir" -U rm rm
	t2=$(now)
	printf 'pg.sh: initdb %.2f s, start %.2f s\n' "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t1" | bc)" >&2
	echo "postgresql:///rm?host=$dir&user=rm"
	;;
stop)
	t0=$(now)
	if [ -f "$dir/data/postmaster.pid" ]; then
		as_user "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || true
	fi
	rm -rf "$dir"
	printf 'pg.sh: stop %.2f s\n' "$(echo "$(now) - $t0" | bc)" >&2
	;;
*)
	echo "usage: pg.sh start|stop DIR" >&2
	exit 2
	;;
esac
