#!/usr/bin/env bash
# The scale-out tests' shared servers (a ctest fixture): one real two-node SLURM cluster
# (tests/slurm-cluster.sh, with slurmdbd unless SLURM_TEST_DBD=0) and one docker-registry
# (tests/registry.sh), each on a free loopback port block, under one folder of their own.
#
#   fixture.sh start ENV_FILE   # writes ENV_FILE: the exports the tests source
#   fixture.sh stop ENV_FILE    # stops both (by PID), removes the folder and ENV_FILE
#
# The tests (cli_slurm.sh, slurm_live.sh) source ENV_FILE: SLURM_TEST_DIR, SLURM_TEST_PORT,
# SLURM_CONF, DOCKER_HOST, RM_TEST_REGISTRY (127.0.0.1:PORT) and RM_TEST_REGISTRY_DIR.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
cmd=${1:-} env_file=${2:-}
[ -n "$env_file" ] || { echo "usage: $0 start|stop ENV_FILE" >&2; exit 2; }

free_block() { # a base with nothing listening on base+0..4 and base+10..99
	local base off busy
	for base in $(seq 17200 100 19900 | shuf); do
		busy=0
		for off in 0 1 2 3 4 $(seq 10 99); do
			(exec 3<>"/dev/tcp/127.0.0.1/$((base + off))") 2>/dev/null && { busy=1; break; }
		done
		[ $busy = 0 ] && { echo "$base"; return 0; }
	done
	return 1
}
free_port() {
	local p
	for p in $(shuf -i 15000-15999 -n 50); do
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
	done
	return 1
}

case $cmd in
start)
	DOCKER_HOST=$("$src/tools/ensure-docker.sh")
	export DOCKER_HOST
	dir=$(mktemp -d /tmp/rm-scaleout.XXXXXX)
	chmod 755 "$dir" # munged wants a+x on every folder above its socket
	export SLURM_TEST_DIR=$dir/slurm SLURM_TEST_PORT=${SLURM_TEST_PORT:-$(free_block)}
	t0=$(date +%s.%N)
	# shellcheck source=tests/slurm-cluster.sh
	. "$src/tests/slurm-cluster.sh"
	# On a loaded machine a daemon can miss its start-up window: once more from scratch,
	# and never leave half a cluster behind.
	if ! slurm_start; then
		echo "fixture: the test cluster did not start; once more" >&2
		tail -n 3 "$SLURM_TEST_DIR"/log/*.log >&2 2>/dev/null || true
		slurm_stop >/dev/null 2>&1 || true
		slurm_start || { slurm_stop >/dev/null 2>&1; rm -rf "$dir"; echo "fixture: the test cluster did not start" >&2; exit 1; }
	fi
	t1=$(date +%s.%N)
	# shellcheck source=tests/registry.sh
	. "$src/tests/registry.sh"
	port=$(free_port)
	registry_start "$dir/registry" "$port" || { slurm_stop; rm -rf "$dir"; exit 1; }
	cat >"$env_file" <<EOF
export RM_FIXTURE_DIR=$dir
export SLURM_TEST_DIR=$SLURM_TEST_DIR SLURM_TEST_PORT=$SLURM_TEST_PORT SLURM_CONF=$SLURM_CONF
export SLURM_TEST_DBD=${SLURM_TEST_DBD:-1}
export DOCKER_HOST=$DOCKER_HOST
export RM_TEST_REGISTRY=127.0.0.1:$port RM_TEST_REGISTRY_DIR=$dir/registry
EOF
	awk -v a="$t0" -v b="$t1" -v c="$(date +%s.%N)" -v p="$SLURM_TEST_PORT" -v r="$port" \
		'BEGIN{printf "fixture: cluster up in %.2f s (ports %d+), registry in %.2f s (port %d)\n", b - a, p, c - b, r}'
	;;
stop)
	[ -f "$env_file" ] || exit 0
	# shellcheck source=/dev/null
	. "$env_file"
	# shellcheck source=tests/slurm-cluster.sh
	. "$src/tests/slurm-cluster.sh"
	# shellcheck source=tests/registry.sh
	. "$src/tests/registry.sh"
	slurm_stop || true
	registry_stop "$RM_TEST_REGISTRY_DIR" || true
	[ -n "${RM_TEST_KEEP:-}" ] && echo "fixture: kept $RM_FIXTURE_DIR" || rm -rf "$RM_FIXTURE_DIR"
	rm -f "$env_file"
	;;
*) echo "usage: $0 start|stop ENV_FILE" >&2; exit 2 ;;
esac
