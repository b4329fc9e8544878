#!/usr/bin/env bash
# Makes sure a Docker engine answers, and prints the DOCKER_HOST to use.
#
# Uses $DOCKER_HOST or /var/run/docker.sock when an engine answers there. Otherwise starts the
# system engine when systemd runs and has docker.io's unit (the standard socket again).
# Otherwise, when running as root, starts a private dockerd (no bridge network, no iptables)
# with its socket, data and logs under $RM_DOCKER_DIR (default /var/tmp/run_models-dockerd)
# and prints unix://$RM_DOCKER_DIR/docker.sock; run_models looks there by itself when
# DOCKER_HOST is not set and /var/run/docker.sock is not there. The private engine does not
# survive a reboot: run this again. Exit 1 with a message when no engine can be had.
set -euo pipefail

ping() { # $1: unix socket path
	curl -fsS --max-time 3 --unix-socket "$1" http://localhost/_ping >/dev/null 2>&1
}

if [ -n "${DOCKER_HOST:-}" ]; then
	case "$DOCKER_HOST" in
	unix://*) if ping "${DOCKER_HOST#unix://}"; then echo "$DOCKER_HOST"; exit 0; fi ;;
	tcp://*) if curl -fsS --max-time 3 "http://${DOCKER_HOST#tcp://}/_ping" >/dev/null 2>&1; then
		echo "$DOCKER_HOST"; exit 0; fi ;;
	esac
	echo "ensure-docker: DOCKER_HOST=$DOCKER_HOST does not answer; trying the default socket" >&2
fi
if ping /var/run/docker.sock; then
	echo unix:///var/run/docker.sock
	exit 0
fi
if [ -d /run/systemd/system ] && systemctl cat docker.service >/dev/null 2>&1; then
	sudo=""
	[ "$(id -u)" = 0 ] || sudo=sudo
	if $sudo systemctl start docker.service >&2; then
		for _ in $(seq 1 100); do
			if ping /var/run/docker.sock; then
				echo unix:///var/run/docker.sock
				exit 0
			fi
			sleep 0.2
		done
	fi
	echo "ensure-docker: 'systemctl start docker' did not bring up /var/run/docker.sock;" \
		"starting a private engine" >&2
fi

dir=${RM_DOCKER_DIR:-/var/tmp/run_models-dockerd}
sock=$dir/docker.sock
if ping "$sock"; then
	echo "unix://$sock"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "ensure-docker: no Docker engine answers at \$DOCKER_HOST or /var/run/docker.sock," \
		"and starting a private one needs root: start dockerd or set DOCKER_HOST" >&2
	exit 1
fi
if ! command -v dockerd >/dev/null; then
	echo "ensure-docker: dockerd is not installed (apt-get install docker.io)" >&2
	exit 1
fi
mkdir -p "$dir"
rm -f "$sock" "$dir/dockerd.pid"
# The engine outlives this script on purpose: tests and later commands reuse it.
nohup dockerd --host "unix://$sock" --data-root "$dir/data" --exec-root "$dir/exec" \
	--pidfile "$dir/dockerd.pid" --bridge=none --iptables=false --ip-masq=false \
	>"$dir/dockerd.log" 2>&1 </dev/null &
for _ in $(seq 1 100); do
	if ping "$sock"; then
		echo "unix://$sock"
		exit 0
	fi
	sleep 0.2
done
echo "ensure-docker: dockerd did not answer within 20 s; see $dir/dockerd.log" >&2
tail -n 20 "$dir/dockerd.log" >&2 || true
exit 1
