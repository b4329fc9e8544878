#!/usr/bin/env bash
# Makes sure a private rootful Podman service answers (Debian's podman, `podman system
# service`), and prints the DOCKER_HOST of its Docker-compatible socket. The tests' Podman
# engine, as tools/ensure-docker.sh starts the tests' dockerd: run_models never needs it (it
# finds /run/podman/podman.sock or the user's $XDG_RUNTIME_DIR/podman/podman.sock itself).
#
# Everything lives under $RM_PODMAN_DIR (default /var/tmp/run_models-podman): the socket, the
# image and container storage (--root, --runroot: nothing shared with the host's own Podman),
# the service's log and its configuration:
#   containers.conf   default_ulimits at this machine's hard limits: rootful Podman gives
#                     containers nofile and nproc limits of 1048576, which its runtime cannot
#                     set where the service lacks CAP_SYS_RESOURCE (a container, a sandbox:
#                     "error setting rlimit type 7: operation not permitted")
#   registries.conf   127.0.0.1 (the tests' registries) is insecure (plain HTTP), as every
#                     dockerd treats loopback registries; Podman wants it said
# Not surviving a reboot: run it again. Exit 1 with a message when no service can be had.
#
#   ensure-podman.sh          start (or find) it; prints unix://$RM_PODMAN_DIR/podman.sock
#   ensure-podman.sh --cli    prints the podman command line that uses the same storage and
#                             configuration (for `podman run` beside run_models: tools/bench-podman.sh)
#   ensure-podman.sh --stop   stops it (by pid) and leaves the storage
set -euo pipefail

dir=${RM_PODMAN_DIR:-/var/tmp/run_models-podman}
sock=$dir/podman.sock
cli="env CONTAINERS_CONF=$dir/containers.conf CONTAINERS_REGISTRIES_CONF=$dir/registries.conf podman --root $dir/storage --runroot $dir/run"

ping() {
	curl -fsS --max-time 3 --unix-socket "$sock" http://localhost/_ping >/dev/null 2>&1
}

case "${1:-}" in
--cli)
	echo "$cli"
	exit 0
	;;
--stop)
	pid=$(cat "$dir/podman.pid" 2>/dev/null || true)
	[ -n "$pid" ] && kill "$pid" 2>/dev/null || true
	rm -f "$dir/podman.pid"
	exit 0
	;;
"") ;;
*)
	echo "usage: tools/ensure-podman.sh [--cli | --stop]" >&2
	exit 2
	;;
esac

if ping; then
	echo "unix://$sock"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "ensure-podman: the tests' Podman service runs as root (a rootless one is" \
		"'podman system service' as your user: run_models finds its socket)" >&2
	exit 1
fi
if ! command -v podman >/dev/null; then
	echo "ensure-podman: podman is not installed (tools/setup.sh --tests installs it)" >&2
	exit 1
fi
mkdir -p "$dir"
nofile=$(ulimit -Hn)
nproc=$(ulimit -Hu)
[ "$nofile" = unlimited ] && nofile=1048576
# Podman lowers its own process limit to 32768 where it cannot keep more.
if [ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ]; then nproc=32768; fi
printf '[containers]\ndefault_ulimits = ["nofile=%s:%s", "nproc=%s:%s"]\n' \
	"$nofile" "$nofile" "$nproc" "$nproc" >"$dir/containers.conf"
printf '[[registry]]\nlocation = "127.0.0.1"\ninsecure = true\n' >"$dir/registries.conf"
rm -f "$sock" "$dir/podman.pid"
# The service outlives this script on purpose: tests and later commands reuse it.
(
	ulimit -Su "$nproc" && ulimit -Hu "$nproc"
	# shellcheck disable=SC2086 # $cli is words on purpose
	exec nohup $cli system service --time=0 "unix://$sock" >"$dir/podman.log" 2>&1 </dev/null
) &
echo $! >"$dir/podman.pid"
for _ in $(seq 1 100); do
	if ping; then
		echo "unix://$sock"
		exit 0
	fi
	sleep 0.2
done
echo "ensure-podman: podman system service did not answer within 20 s; see $dir/podman.log" >&2
tail -n 20 "$dir/podman.log" >&2 || true
exit 1
