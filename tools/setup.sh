#!/usr/bin/env bash
# One-time set-up on Debian 12: installs what is missing, builds run_models, prepares the
# smoke image's context and makes sure a Docker engine answers. Prints the DOCKER_HOST to use
# on its last line. Safe to run again.
#   RM_BUILD_DIR   build folder (default build)
#   RM_CMAKE_ARGS  extra cmake arguments (e.g. -DRM_SANITIZE=ON)
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=tools/lib.sh
. tools/lib.sh
ensure_packages build-essential cmake pkg-config libcurl4-openssl-dev libjansson-dev \
	libarchive-dev libyaml-dev libssl-dev libyajl-dev docker.io busybox-static curl jq python3
# Results tests: the SQLite and PostgreSQL backends, JUnit validation, the report in Chromium.
ensure_packages libsqlite3-dev libpq-dev libxml2-dev libxml2-utils sqlite3 postgresql chromium
# Scale-out tests: a private image registry, and a two-node SLURM cluster on this host
# (tests/registry.sh, tests/slurm-cluster.sh; slurmdbd on MariaDB so that sacct works).
ensure_packages docker-registry slurm-wlm munge slurmdbd mariadb-server

build=${RM_BUILD_DIR:-build}
# shellcheck disable=SC2086
cmake -S . -B "$build" ${RM_CMAKE_ARGS:-} >&2
cmake --build "$build" -j"$(nproc)" >&2

# The smoke image is FROM scratch plus Debian's static busybox: no registry needed.
install -D -m 755 /bin/busybox docker/smoke/busybox

tools/ensure-docker.sh
