#!/usr/bin/env bash
# Runs the unit tests and one real smoke run under valgrind's memcheck; any error or
# definite leak fails. Usage: tests/valgrind.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
vg=(valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite
	--child-silent-after-fork=yes
	--show-leak-kinds=definite)
status=0
dbdir=$(mktemp -d)
for t in "$build"/test_* "$build"/results_db_body; do
	[ -x "$t" ] || continue
	args=()
	[ "$(basename "$t")" = results_db_body ] && args=("sqlite:$dbdir/body.db")
	if RM_SOURCE_DIR=$src "${vg[@]}" "$t" "${args[@]}" >/dev/null; then
		echo "valgrind: $(basename "$t") clean"
	else
		echo "valgrind: $(basename "$t") FAILED"
		status=1
	fi
done
work=$(mktemp -d)
trap 'rm -rf "$work" "$dbdir"' EXIT
cp -r "$src/models.json" "$src/docker" "$src/scripts" "$work/"
printf 'suite: vg\nentries:\n  - tags: [smoke]\n    repeat: 2\n    additional_context: {docker_env_vars: {VG: "1"}}\n' >"$work/s.yaml"
ctx='{"gpu_vendor":"AMD","guest_os":"UBUNTU","MAD_SYSTEM_GPU_ARCHITECTURE":"gfx942","MAD_SYSTEM_NGPUS":8}'
# What a SLURM task runs, without a cluster: node-run from a job file written here.
cat >"$work/job.json" <<JOB
{"schema": 1, "run_id": "vg", "root": "$work", "log_dir": "$work", "context_files": [],
 "contexts": [], "workloads": {"smoke-0": {"model": "smoke_busybox", "run_id": "vg",
 "image": "ci-smoke_busybox_smoke", "log_dir": "$work",
 "timeout": 60, "env": [["VG", "1"]],
 "secrets": ["MAD_SECRETS_VG"], "settings": {"shm_size": 1048576}, "pull": true,
 "tools": {"tools": ["vg_tool"], "sources": ["built in"],
  "pre": [{"tool": "vg_tool", "path": null, "text": "echo pre > vg_out.txt", "args": "a"}],
  "post": [], "wrap": "echo w &&", "env": [["VG_TOOL", "1"]],
  "outputs": [["vg_tool", "vg_*.txt"]], "copies": []},
 "log_base": "$work/smoke.vg"}}}
JOB
bash "$src/tests/results/gen-planted.sh" 30 >"$work/planted.csv"
printf 'steady: {samples_per_second: {value: 1100, lower: 5}}\n' >"$work/refs.yaml"
# A tool of the folder's tools.json (scripts copied in, outputs copied out), for the run below.
mkdir -p "$work/scripts/common"
printf '#!/bin/bash\necho "vg tool $*" > vg_out.txt\n' >"$work/scripts/common/vg.sh"
printf '{"tools": {"vg_tool": {"pre_scripts": [{"path": "scripts/common/vg.sh", "args": "pre"}], "cmd": "echo vg &&", "env_vars": {"VG_TOOL": 1}, "post_scripts": [{"path": "scripts/common/vg.sh", "args": "post"}], "outputs": ["vg_out.txt"]}}}\n' \
	>"$work/scripts/common/tools.json"
while read -r label; do
	read -r -a cmd
	if (cd "$work" && MAD_SECRETS_VG=vg_secret_value "${vg[@]}" "$build/run_models" "${cmd[@]}" >/dev/null 2>&1); then
		echo "valgrind: run_models $label clean"
	else
		echo "valgrind: run_models $label FAILED"
		status=1
	fi
done <<EOF
--tags smoke
--tags smoke -q -o $work/perf.csv
--tags smoke --repeat 2
--tags smoke --repeat 2 -q -o $work/perf.csv
dry run of the seed workloads on an MI300X context
--tags all --dry-run --tunableop on --additional-context $ctx
list
list --tags all
dry run on SLURM (two nodes: the batch script)
--tags smoke --dry-run --additional-context {"slurm":{"nodes":2}}
build without a registry, writing a manifest
build --tags smoke --manifest $work/man.json -q
run from the manifest
--manifest $work/man.json -q -o $work/perf.csv
tools (the folder's and a built-in; the outputs copied back)
--tags smoke -q -o $work/perf_tools.csv --additional-context {"tools":[{"name":"vg_tool"},{"name":"rocblas_trace"}]}
dry run with tools
--tags smoke --dry-run --additional-context {"tools":[{"name":"rpd"},{"name":"vg_tool"}]}
node-run (one SLURM task's container)
node-run --job $work/job.json --workload smoke-0
parse
parse --parser auto $src/tests/parsers/mlperf/amd_mi300x_llama2_70b_lora_result_0.log
report ci over the smoke runs (gate, JUnit, summary, HTML, archive, SQLite export)
report ci $work/perf.csv --junit $work/j.xml --summary-markdown $work/s.md --html $work/r.html --archive $work/a.tar.gz --export sqlite:$work/r.db --fail-on-regression 5 --no-step-summary
report html
report html $work/perf.csv -o $work/r2.html
export (again: nothing new)
export --db sqlite:$work/r.db $work/perf.csv
run --suite with every output, a CSV baseline and the gate
run --suite $work/s.yaml -o $work/perf.csv --log-dir $work/logs -q --junit $work/j2.xml --summary-markdown $work/s2.md --html $work/r3.html --archive $work/a2.tar.gz --export sqlite:$work/r.db --baseline $work/perf.csv --fail-on-regression 90 --no-step-summary
run --suite --list
run --suite $work/s.yaml --list
run --suite --dry-run
run --suite $work/s.yaml --dry-run
suite
suite $work/s.yaml
the history gate on planted histories, with references (gate off: exit 0)
report ci $work/planted.csv --references $work/refs.yaml --junit $work/pj.xml --summary-markdown $work/ps.md --html $work/pr.html --no-step-summary
accept a step (the companion file)
accept $work/planted.csv --model step_persist --reason vg
EOF
if [ $status = 0 ]; then echo "valgrind: 1 passed, 0 failed"; else echo "valgrind: 0 passed, 1 failed"; fi
exit $status
