#!/usr/bin/env bash
# Speed and memory of the runner against the raw Docker CLI on the same image and script,
# measured in the same run (issue: core runner):
#   1. a cached model end to end (build cached, run, parse, CSV row) vs `docker run --rm`;
#   2. a container printing N lines (default 200,000, ~20 MB): wall time vs
#      `docker run > /dev/null`, and the runner's peak RSS (GNU time's %M).
# Median of RUNS (default 5). Usage: tools/bench.sh [BUILD_DIR [OTHER_BUILD_DIR]]
# With OTHER_BUILD_DIR (e.g. a build of an earlier commit) both binaries are measured in the
# same run, interleaved, and compared.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:-build}" && pwd)
other=
[ -n "${2:-}" ] && other=$(cd "$2" && pwd)
runs=${RUNS:-5}
lines=${LINES:-200000}
command -v docker >/dev/null || { echo "bench: needs the docker CLI (docker.io)" >&2; exit 1; }
[ -x /usr/bin/time ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null
DOCKER_HOST=${DOCKER_HOST:-$(tools/ensure-docker.sh)}
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

raw_run() { # extra script args...
	docker run --rm --network host -v "$work/scripts/smoke:/myworkspace/smoke_busybox:ro" \
		-w /myworkspace/smoke_busybox "$image" bash run.sh "$@"
}

echo "== 1. cached model end to end, median of $runs"
: >t_raw
: >t_rm
: >t_other
for _ in $(seq 1 "$runs"); do
	t=$(now); raw_run --steps 5 >/dev/null; elapsed "$t" >>t_raw
	t=$(now); "$build/run_models" --tags smoke -q -o perf.csv >/dev/null 2>&1; elapsed "$t" >>t_rm
	if [ -n "$other" ]; then
		t=$(now); "$other/run_models" --tags smoke -q -o perf.csv >/dev/null 2>&1; elapsed "$t" >>t_other
	fi
done
raw=$(median <t_raw)
rm_=$(median <t_rm)
printf 'docker run --rm:        %.3f s\nrun_models --tags smoke: %.3f s\nratio: %.2fx (goal <= 1.25x)\n' \
	"$raw" "$rm_" "$(echo "$rm_ / $raw" | bc -l)"
if [ -n "$other" ]; then
	o=$(median <t_other)
	printf 'other build:            %.3f s, ratio %.2fx; this build / other: %.2fx\n' \
		"$o" "$(echo "$o / $raw" | bc -l)" "$(echo "$rm_ / $o" | bc -l)"
fi

echo "== 2. $lines lines of output, median of $runs"
jq --arg a "--steps 5 --lines $lines" '.[0].args = $a | .[0].timeout = 0' models.json >m && mv m models.json
: >t_raw
: >t_rm
: >t_other
: >rss
: >rss_other
for _ in $(seq 1 "$runs"); do
	t=$(now); raw_run --steps 5 --lines "$lines" >/dev/null; elapsed "$t" >>t_raw
	t=$(now)
	/usr/bin/time -f %M -o rss1 "$build/run_models" --tags smoke -q -o perf.csv >/dev/null 2>&1
	elapsed "$t" >>t_rm
	cat rss1 >>rss
	if [ -n "$other" ]; then
		t=$(now)
		/usr/bin/time -f %M -o rss1 "$other/run_models" --tags smoke -q -o perf.csv >/dev/null 2>&1
		elapsed "$t" >>t_other
		cat rss1 >>rss_other
	fi
done
raw=$(median <t_raw)
rm_=$(median <t_rm)
log_mb=$(du -m smoke_busybox.live.log | cut -f1)
printf 'docker run > /dev/null: %.3f s\nrun_models:             %.3f s (log %s MB)\nratio: %.2fx (goal <= 1.5x)\npeak RSS: %s KiB max over runs (goal < 32768)\n' \
	"$raw" "$rm_" "$log_mb" "$(echo "$rm_ / $raw" | bc -l)" "$(sort -n rss | tail -1)"
if [ -n "$other" ]; then
	o=$(median <t_other)
	printf 'other build:            %.3f s, ratio %.2fx, peak RSS %s KiB; this build / other: %.2fx\n' \
		"$o" "$(echo "$o / $raw" | bc -l)" "$(sort -n rss_other | tail -1)" "$(echo "$rm_ / $o" | bc -l)"
fi
tail -1 perf.csv | cut -d, -f1,18,19,21
