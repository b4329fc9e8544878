#!/usr/bin/env bash
# Images and registries against a real dockerd and a real registry: starts a private
# docker-registry on a free loopback port (tests/registry.sh), runs live_images against it,
# checks in the registry's own catalog and access log that the image was pushed and pulled,
# and stops the registry (also on failure).
# Usage: registry_live.sh LIVE_IMAGES_BINARY SOURCE_DIR
set -euo pipefail
bin=$1
src=$2
DOCKER_HOST=$("$src/tools/ensure-docker.sh")
export DOCKER_HOST
busybox=$src/docker/smoke/busybox
[ -x "$busybox" ] || busybox=/bin/busybox
[ -x "$busybox" ] || { echo "registry_live: no busybox (run tools/setup.sh)" >&2; exit 1; }

work=$(mktemp -d)
# shellcheck source=tests/registry.sh
. "$src/tests/registry.sh"
trap 'registry_stop "$work/registry"; rm -rf "$work"' EXIT

# A free port in 15000-15999 (RM_TEST_REGISTRY_PORT picks one).
port=${RM_TEST_REGISTRY_PORT:-}
if [ -z "$port" ]; then
	for p in $(shuf -i 15000-15999 -n 50); do
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { port=$p; break; }
	done
fi
[ -n "$port" ] || { echo "registry_live: no free port" >&2; exit 1; }
t0=$(date +%s.%N)
registry_start "$work/registry" "$port"
echo "registry up on 127.0.0.1:$port in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b - a}') s"

RM_TEST_REGISTRY=127.0.0.1:$port "$bin" "$busybox"

# What the registry itself saw: the repository in its catalog, manifest PUT and GETs.
curl -fsS "http://127.0.0.1:$port/v2/_catalog" | grep -q '"rm-test-images"' ||
	{ echo "FAIL: rm-test-images not in the registry's catalog" >&2; exit 1; }
grep -q 'PUT /v2/rm-test-images/manifests/fp' "$work/registry/registry.log" ||
	{ echo "FAIL: no manifest PUT in the registry log" >&2; exit 1; }
grep -q 'GET /v2/rm-test-images/manifests/' "$work/registry/registry.log" ||
	{ echo "FAIL: no manifest GET (pull) in the registry log" >&2; exit 1; }
echo "registry_live: pushed and pulled through 127.0.0.1:$port"
