#!/usr/bin/env bash
# Set-up on Debian 12 (root or sudo). Safe to run again: a second run changes nothing and
# takes seconds. One line per step on stderr; the details (apt, cmake, the compiler) go to
# $RM_BUILD_DIR/setup.log. The last line on stdout is the engine's address (DOCKER_HOST).
#
#   tools/setup.sh          what running needs, nothing else: the packages to build and run,
#                           run_models built and installed on PATH with its man page and bash
#                           completion, the smoke image's busybox, a Docker engine
#   tools/setup.sh --tests  what the tests need: the same packages plus the test-only ones
#                           (servers and browsers of the results and scale-out suites, the
#                           compilers and checkers of tools/test.sh), every test target built;
#                           nothing installed (the tests use the build folder's binary)
#
#   RM_BUILD_DIR   build folder (default build)
#   RM_CMAKE_ARGS  extra cmake arguments (e.g. -DRM_SANITIZE=ON)
#   RM_PREFIX      where to install (default /usr/local: bin/ is on every login shell's PATH)
#
# The engine: $DOCKER_HOST or /var/run/docker.sock when one answers; else the system engine
# when systemd can start it; else a private dockerd under /var/tmp/run_models-dockerd
# (tools/ensure-docker.sh), which run_models finds by itself when DOCKER_HOST is not set.
set -euo pipefail
cd "$(dirname "$0")/.."

tests=0
case "${1:-}" in
--tests) tests=1 ;;
"") ;;
*)
	echo "usage: tools/setup.sh [--tests]" >&2
	exit 2
	;;
esac

# shellcheck source=tools/lib.sh
. tools/lib.sh

build=${RM_BUILD_DIR:-build}
prefix=${RM_PREFIX:-/usr/local}
mkdir -p "$build"
log=$build/setup.log
: >"$log"

# step NAME COMMAND...: runs the command with its output in the log; prints one line.
# The command prints its one-line result on fd 3.
step() {
	local name=$1 t0 rc result
	shift
	t0=$(date +%s)
	echo "== $name" >>"$log"
	set +e
	result=$("$@" 3>&1 >>"$log" 2>&1)
	rc=$?
	set -e
	if [ $rc != 0 ]; then
		printf '  %-9s FAILED%s (see %s):\n' "$name" "${result:+: $result}" "$log" >&2
		tail -n 15 "$log" | sed 's/^/    /' >&2
		exit 1
	fi
	printf '  %-9s %s%s\n' "$name" "$result" \
		"$([ $(($(date +%s) - t0)) -ge 5 ] && echo " ($(($(date +%s) - t0)) s)")" >&2
}

# What building and running need.
run_packages=(build-essential cmake pkg-config libcurl4-openssl-dev libjansson-dev
	libarchive-dev libyaml-dev libssl-dev libyajl-dev libsqlite3-dev libpq-dev libxml2-dev
	docker.io busybox-static curl)
# What only the tests need: jq and python3 (the cases and the terminal checks), tmux (a real
# terminal at 80 columns), the SQLite and PostgreSQL servers, JUnit validation, the report in
# Chromium, a private image registry and a two-node SLURM cluster (slurmdbd on MariaDB so that
# sacct works), tools/test.sh's compilers, checkers and timers, and Podman for the cases on
# its Docker-compatible API (tools/ensure-podman.sh; uidmap's newuidmap for the rootless case,
# slirp4netns and fuse-overlayfs as Debian's podman wants them).
test_packages=(jq python3 tmux groff-base man-db sqlite3 postgresql libxml2-utils chromium
	docker-registry slurm-wlm munge slurmdbd mariadb-server clang valgrind shellcheck
	clang-format time bc podman uidmap slirp4netns fuse-overlayfs)

packages() {
	local want=("${run_packages[@]}") missing
	[ $tests = 1 ] && want+=("${test_packages[@]}")
	missing=$(missing_packages "${want[@]}")
	if [ -z "$missing" ]; then
		echo "${#want[@]} present" >&3
		return 0
	fi
	# shellcheck disable=SC2086
	ensure_packages $missing
	echo "installed$missing" >&3
}

compile() {
	local targets=(--target run_models run_models_docs)
	[ $tests = 1 ] && targets=()
	# shellcheck disable=SC2086
	cmake -S . -B "$build" ${RM_CMAKE_ARGS:-}
	cmake --build "$build" -j"$(nproc)" "${targets[@]}"
	echo "$build/run_models$([ $tests = 1 ] && echo " and the tests")" >&3
}

install_it() {
	local sudo=""
	mkdir -p "$prefix" 2>/dev/null || true
	[ -w "$prefix" ] || sudo=sudo
	$sudo cmake --install "$build" --prefix "$prefix"
	local where
	where=$(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin command -v run_models || true)
	if [ "$where" != "$prefix/bin/run_models" ]; then
		echo "$prefix/bin/run_models (not what a login shell finds first: ${where:-none}; add $prefix/bin to PATH)" >&3
	else
		echo "$prefix/bin/run_models, man run_models, bash completion" >&3
	fi
}

engine() {
	local host dir=${RM_DOCKER_DIR:-/var/tmp/run_models-dockerd}
	host=$(tools/ensure-docker.sh 3>&-) # the engine it may start must not hold fd 3
	echo "$host" >"$build/docker-host"
	if [ "$host" = "${DOCKER_HOST:-}" ]; then
		echo "$host (your DOCKER_HOST)" >&3
	elif [ "$host" = unix:///var/run/docker.sock ]; then
		echo "system engine at $host" >&3
	elif [ "$host" = "unix://$dir/docker.sock" ]; then
		echo "private dockerd in $dir (run_models finds it)" >&3
	else
		echo "$host (set DOCKER_HOST=$host in new shells)" >&3
	fi
}

# The smoke image is FROM scratch plus Debian's static busybox: no registry needed. Copied
# only when it differs, with its own time: a new mtime would change the build context's
# fingerprint and rebuild the image on every set-up.
smoke_context() {
	if cmp -s /bin/busybox docker/smoke/busybox; then
		echo "docker/smoke/busybox up to date" >&3
	else
		install -D -p -m 755 /bin/busybox docker/smoke/busybox
		echo "docker/smoke/busybox copied" >&3
	fi
}

echo "run_models set-up$([ $tests = 1 ] && echo " for the tests") (details: $log)" >&2
step packages packages
step build compile
[ $tests = 1 ] || step install install_it
step smoke smoke_context
step engine engine
cat "$build/docker-host"
