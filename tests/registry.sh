#!/usr/bin/env bash
# A private image registry for tests (Debian's docker-registry, distribution 2.8): plain HTTP on
# 127.0.0.1:PORT, storage, config, pid and log in DIR. Every dockerd treats 127.0.0.0/8 as an
# insecure registry, so pushes and pulls need no daemon setting.
#
#   registry.sh start [DIR [PORT]]   # idempotent; prints the address (127.0.0.1:PORT) last
#   registry.sh stop [DIR]           # stops it (by PID) and removes the stored images
#   registry.sh status [DIR [PORT]]  # exit 0 when it answers
# or source it and call registry_start / registry_stop / registry_status.
#
# RM_REGISTRY_DIR   default /tmp/run_models-registry (when DIR is not given)
# RM_REGISTRY_PORT  default 15000 (when PORT is not given)
# The access log (DIR/registry.log, even at level warn) shows every manifest and blob GET and
# PUT: a test can tell that a run really pulled.

_registry_dir() { echo "${1:-${RM_REGISTRY_DIR:-/tmp/run_models-registry}}"; }
_registry_port() { echo "${1:-${RM_REGISTRY_PORT:-15000}}"; }
_registry_alive() { # PIDFILE: its process runs (a zombie does not count)
	local pid st
	pid=$(cat "$1" 2>/dev/null) && [ -n "$pid" ] && st=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null) &&
		[ "${st%% *}" != Z ]
}

registry_status() { # [DIR [PORT]]
	local d p
	d=$(_registry_dir "${1:-}"); p=$(_registry_port "${2:-}")
	_registry_alive "$d/registry.pid" && curl -fsS --max-time 2 "http://127.0.0.1:$p/v2/" >/dev/null 2>&1
}

registry_start() { # [DIR [PORT]]
	local d p
	d=$(_registry_dir "${1:-}"); p=$(_registry_port "${2:-}")
	registry_status "$d" "$p" && return 0
	registry_stop "$d" >/dev/null 2>&1
	if ! command -v docker-registry >/dev/null; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker-registry >/dev/null 2>&1 ||
			{ echo "registry_start: apt-get install docker-registry failed (apt-get update first?)" >&2; return 1; }
	fi
	mkdir -p "$d/data" || return 1
	printf 'version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: %s\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:%s\n' \
		"$d/data" "$p" >"$d/config.yml"
	setsid docker-registry serve "$d/config.yml" >"$d/registry.log" 2>&1 </dev/null &
	echo $! >"$d/registry.pid"
	for _ in $(seq 1 100); do # 10 s
		curl -fsS --max-time 2 "http://127.0.0.1:$p/v2/" >/dev/null 2>&1 && return 0
		_registry_alive "$d/registry.pid" || break
		sleep 0.1
	done
	echo "registry_start: no registry answers on 127.0.0.1:$p: $(tail -n 2 "$d/registry.log")" >&2
	registry_stop "$d"
	return 1
}

registry_stop() { # [DIR]
	local d i
	d=$(_registry_dir "${1:-}")
	[ -d "$d" ] || return 0
	if _registry_alive "$d/registry.pid"; then
		kill "$(cat "$d/registry.pid")" 2>/dev/null
		for i in $(seq 1 50); do
			_registry_alive "$d/registry.pid" || break
			[ "$i" = 50 ] && kill -9 "$(cat "$d/registry.pid")" 2>/dev/null
			sleep 0.1
		done
	fi
	rm -f "$d/registry.pid"
	rm -rf "$d/data" # the stored images; config and log stay for a look
	return 0
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	cmd=${1:-}
	shift || true
	case "$cmd" in
	start) registry_start "$@" && echo "127.0.0.1:$(_registry_port "${2:-}")" ;;
	stop) registry_stop "$@" ;;
	status) registry_status "$@" ;;
	*) echo "usage: $0 start|stop|status [DIR [PORT]]" >&2; exit 2 ;;
	esac
fi
