#!/usr/bin/env bash
# SLURM benchmark (issue 13): the overhead of the SLURM path against a local run of the same
# model, and a 50-model job array, on the real two-node test cluster and registry
# (tests/scaleout/fixture.sh; the real dockerd).
#
#   first line   run_models started -> the workload's first line (the workload prints the
#                kernel's uptime, which the host reads too: no flush delay in the figure)
#   end to end   run_models started -> it exited (the row written)
#   sbatch->line the same first line, from the "submitted slurm job" message (SLURM only)
# for: local (the Docker launcher), SLURM one node, SLURM two nodes; the workload is
# tests/scaleout/mad's slurm_env (3 steps of 0.3 s). Then N models (default 50) from one
# build manifest as one job array: submission -> last row, end to end, rows lost (must be 0).
#
# Usage: tools/bench-slurm.sh [BUILD_DIR]   (default build; RUNS=5 runs each, N=50 models)
# RM_SCALEOUT_ENV=FILE reuses a running fixture (fixture.sh start FILE); else one is started
# and stopped here.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
runs=${RUNS:-5} n_models=${N:-50}
rm_bin=$build/run_models
work=$(mktemp -d)
env_file=${RM_SCALEOUT_ENV:-$work/fixture.env}
cleanup() {
	[ -n "${RM_SCALEOUT_ENV:-}" ] || bash "$root/tests/scaleout/fixture.sh" stop "$env_file"
	rm -rf "$work"
}
trap cleanup EXIT
[ -n "${RM_SCALEOUT_ENV:-}" ] || bash "$root/tests/scaleout/fixture.sh" start "$env_file"
# shellcheck source=/dev/null
. "$env_file"

mad=$work/mad
mkdir -p "$mad/docker/smoke"
cp -r "$root/tests/scaleout/mad/." "$mad/"
cp "$root/docker/smoke.Dockerfile" "$root/docker/.dockerignore" "$mad/docker/"
cp "$root/docker/smoke/busybox" "$mad/docker/smoke/busybox"
cd "$mad"

uptime_now() { cut -d' ' -f1 /proc/uptime; }
# Runs run_models with stderr lines stamped with the uptime; prints "FIRST END SUBMIT_TO_FIRST".
timed() { # LOGDIR ARGS...
	local logs=$1 t0 t1 first sub
	shift
	t0=$(uptime_now)
	"$rm_bin" "$@" --log-dir "$logs" -o "$logs.csv" 2>&1 |
		while IFS= read -r line; do printf '%s %s\n' "$(uptime_now)" "$line"; done >"$logs.err"
	t1=$(uptime_now)
	first=$(sed -n 's/^started=//p' "$logs"/*.*.live.log | head -n 1)
	sub=$(sed -n 's/^\([0-9.]*\) run_models: submitted slurm job.*/\1/p' "$logs.err" | head -n 1)
	grep -q ',SUCCESS,' "$logs.csv" || { cat "$logs.err" >&2; exit 1; }
	awk -v a="$t0" -v b="$t1" -v f="$first" -v s="${sub:-}" \
		'BEGIN{printf "%.2f %.2f %s\n", f - a, b - a, s == "" ? "-" : sprintf("%.2f", f - s)}'
}
# min / median / max of a column of numbers
stats() { sort -n | awk '{v[NR]=$1} END{printf "%.2f / %.2f / %.2f", v[1], v[int((NR+1)/2)], v[NR]}'; }
bench() { # LABEL ARGS...
	local label=$1 i
	shift
	: >"$work/t"
	for i in $(seq "$runs"); do timed "$work/$label.$i" "$@" >>"$work/t"; done
	local sub=-
	grep -q ' -$' "$work/t" || sub=$(cut -d' ' -f3 "$work/t" | stats)
	printf '%-22s %-22s %-22s %s\n' "$label" "$(cut -d' ' -f1 "$work/t" | stats)" \
		"$(cut -d' ' -f2 "$work/t" | stats)" "$sub"
}

"$rm_bin" --tags slurm_env -q -o "$work/warm.csv" --log-dir "$work/warm" >/dev/null 2>&1 # the image, once
echo "== overhead: slurm_env (3 steps of 0.3 s), $runs runs each; seconds, min / median / max"
printf '%-22s %-22s %-22s %s\n' "" "to first line" "end to end" "sbatch to first line"
bench local --tags slurm_env
bench slurm_1_node --tags slurm_env -c '{"slurm": {"exclusive": false, "time": "10"}}'
bench slurm_2_nodes --tags slurm_env -c '{"slurm": {"nodes": 2, "exclusive": false, "time": "10"}}'

# N models of one image: one build pushed, a manifest naming it N times, one array.
jq -n --argjson n "$n_models" '[range($n) | {name: ("b_\(.)"), dockerfile: "docker/smoke",
	scripts: "scripts/slurm_env/run.sh", n_gpus: "-1", owner: "bench", training_precision: "",
	tags: ["bench"], args: "--steps 2 --sleep 0.2", timeout: 300, parser: "generic"}]' >models.json
"$rm_bin" build --tags b_0 --registry "$RM_TEST_REGISTRY" --manifest one.json --log-dir "$work/b" -q
jq --argjson n "$n_models" '. as $d | (.built_images | to_entries[0].value) as $img |
	.built_images = ([range($n) | {key: "ci-b_\(.)_smoke", value: ($img + {docker_image: "ci-b_\(.)_smoke"})}] | from_entries) |
	.built_models = ([range($n) | {key: "ci-b_\(.)_smoke", value: {name: "b_\(.)"}}] | from_entries)' one.json >many.json
logs=$work/array
t0=$(uptime_now)
"$rm_bin" run --manifest many.json -c '{"slurm": {"exclusive": false, "time": "10"}}' --log-dir "$logs" \
	-o "$logs.csv" 2>&1 | while IFS= read -r line; do printf '%s %s\n' "$(uptime_now)" "$line"; done >"$logs.err"
t1=$(uptime_now)
sub=$(sed -n 's/^\([0-9.]*\) run_models: submitted slurm job.*/\1/p' "$logs.err" | head -n 1)
last=$(grep "run_models: model 'b_[0-9]*': " "$logs.err" | tail -n 1 | cut -d' ' -f1)
ok=$(python3 -c 'import csv, sys; r = list(csv.DictReader(open(sys.argv[1]))); print(len({x["model"] for x in r if x["status"] == "SUCCESS"}), len(r))' "$logs.csv")
echo "== $n_models models, one job array (8 one-CPU slots on 2 nodes), from a manifest"
awk -v a="$t0" -v s="$sub" -v l="$last" -v e="$t1" -v ok="${ok% *}" -v rows="${ok#* }" -v n="$n_models" \
	'BEGIN{printf "submission to last row %.2f s; end to end %.2f s; rows %d of %d SUCCESS (%d rows), lost %d\n", l - s, e - a, ok, n, rows, n - ok}'
[ "${ok% *}" = "$n_models" ] || { tail -n 20 "$logs.err" >&2; exit 1; }
