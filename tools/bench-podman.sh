#!/usr/bin/env bash
# The runner on Podman against `podman run --rm` of the same image and script, measured side
# by side in one run (tools/bench.sh's section 1, on Podman's Docker-compatible API; issue
# 28's goal: a cached model within 1.3x):
#   a cached model end to end (build skipped, create, scripts copied in, attach, wait, parse,
#   the CSV row, the removal) vs `podman run --rm` of the image with the scripts bound in.
# Median of RUNS (default 9), the two interleaved. The engine: $DOCKER_HOST when it is a
# Podman socket, else the tests' private rootful service (tools/ensure-podman.sh), with the
# podman CLI on the same storage and configuration.
# Usage: tools/bench-podman.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:-build}" && pwd)
runs=${RUNS:-9}
command -v podman >/dev/null || { echo "bench-podman: needs podman (apt-get install podman)" >&2; exit 1; }
if [ -n "${DOCKER_HOST:-}" ] && curl -fsS -D - -o /dev/null --max-time 3 --unix-socket "${DOCKER_HOST#unix://}" \
	http://localhost/_ping 2>/dev/null | grep -qi '^libpod-api-version:'; then
	# a Podman service of the caller's: its CLI with the default storage
	cli=(podman)
else
	DOCKER_HOST=$(tools/ensure-podman.sh)
	read -r -a cli <<<"$(tools/ensure-podman.sh --cli)"
fi
export DOCKER_HOST

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r models.json docker scripts "$work/"
cd "$work"
"$build/run_models" --tags smoke -q -o warm.csv >/dev/null 2>&1 # builds the image once
image=ci-smoke_busybox_smoke

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
now() { date +%s.%N; }
elapsed() { echo "$(now) - $1" | bc -l; }
raw_run() {
	"${cli[@]}" run --rm --network host -v "$work/scripts/smoke:/myworkspace/smoke_busybox:ro" \
		-w /myworkspace/smoke_busybox "$image" bash run.sh "$@"
}
raw_run --steps 5 >/dev/null # warms the CLI's caches too
# After a container ends, conmon starts `podman container cleanup` (its own process, which
# takes the storage's locks): the next command, ours or the CLI's, would wait on it. Each
# timing starts once the last one's clean-up is over, so neither pays for the other's.
settle() {
	for _ in $(seq 1 50); do
		pgrep -f 'podman.* container cleanup' >/dev/null || return 0
		sleep 0.02
	done
}

echo "== cached model end to end on $("$build/run_models" doctor 2>/dev/null | sed -n 's/^OK    docker           \(Podman [^ ,]*\).*/\1/p') at $DOCKER_HOST, median of $runs"
: >t_raw
: >t_rm
for _ in $(seq 1 "$runs"); do
	settle
	t=$(now); raw_run --steps 5 >/dev/null; elapsed "$t" >>t_raw
	settle
	t=$(now); "$build/run_models" --tags smoke -q -o perf.csv >/dev/null 2>&1; elapsed "$t" >>t_rm
done
raw=$(median <t_raw)
rm_=$(median <t_rm)
printf 'podman run --rm:         %.3f s\nrun_models --tags smoke: %.3f s\nratio: %.2fx (goal <= 1.3x)\n' \
	"$raw" "$rm_" "$(echo "$rm_ / $raw" | bc -l)"
cut -d, -f1,18,19,21,22,23 perf.csv
