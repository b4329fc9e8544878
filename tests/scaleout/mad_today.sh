#!/usr/bin/env bash
# Today's ROCm/MAD multi-node cards (issue 30) through the real CLI, on the real two-node
# cluster and registry of fixture.sh, with the stand-ins of tests/compat/mad-today (MAD's
# real card files; launchers that gather the nodes with srun and start one container a node
# with `srun docker run`, as MAD's do) and containers on the real dockerd:
#   save         no registry: the image saved beside the logs, loaded on both nodes, both
#                hold the built image's id; the card's slurm.nodes gives --nodes=2 with no
#                node count in the context; the script ran on the batch host, not in a
#                container, with the card's env_vars and the context's over them; its results
#                reach perf.csv; nothing left (job, containers, the saved image)
#   registry     build --registry, run --manifest: every node pulls (srun docker pull), both
#                hold the pushed image's id; the results reach perf.csv
#   placeholder  the context leaves DOCKER_IMAGE_NAME "<supply-your-image>": a FAILURE row
#                naming the card and the variable, nothing built or submitted
#   mismatch     distributed.nnodes 3 (context) against the card's slurm.nodes 2: a FAILURE
#                row naming both, nothing submitted
#   no_results   the script writes no results: a FAILURE row saying where it looked
#   node_fails   one node's container exits 1: a FAILURE row naming the node
#   image_mismatch  node n2's engine answers another image id (a docker shim on PATH that
#                lies for n2): a FAILURE row naming n2 and both ids; the script never ran
#   cancel       SIGINT mid-job: exit 130, a FAILURE row, no job, no container left
#   dry_run      every card of the folder on an MI300X context: each multi-node card shows its
#                batch script (44: one is SKIPPED), none would fail, 13 SKIPPED (skip_gpu_arch)
# Usage: mad_today.sh ENV_FILE RUN_MODELS SOURCE_DIR CASE   (ENV_FILE from fixture.sh start)
set -euo pipefail
env_file=$1 rm_bin=$(realpath "$2") src=$(realpath "$3") case_name=$4
# shellcheck source=/dev/null
. "$env_file"
sock=${DOCKER_HOST#unix://}
work=$(mktemp -d)
run_ids=()

api() { # METHOD PATH
	curl -fsS --unix-socket "$sock" -X "$1" "http://localhost$2"
}
standins() { # JOB: the stand-in launchers' containers of that job (any state)
	api GET "/containers/json?all=1" | jq -r --arg p "/standin_$1_" '.[] | select(.Names[] | startswith($p)) | .Id'
}
ours() { # RUN_ID: the containers the runner made for that run (any state)
	api GET "/containers/json?all=1&filters=$(printf '{"label":["run_models.run=%s"]}' "$1" | jq -sRr @uri)" | jq -r '.[].Id'
}
cleanup() {
	local rid id
	for rid in "${run_ids[@]}"; do
		for id in $(ours "$rid" || true); do api DELETE "/containers/$id?force=1" >/dev/null || true; done
	done
	if [ -n "${RM_TEST_KEEP:-}" ]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
fail() {
	echo "FAIL [$case_name]: $*" >&2
	for f in "$work"/out* "$work"/mad/logs/*batch.log "$work"/mad/logs/*.steps; do
		[ -f "$f" ] && { echo "== $f"; tail -n 12 "$f"; } >&2
	done
	exit 1
}
csv_col() { # FILE N NAME: column NAME of data row N (1 = the first)
	python3 -c 'import csv, sys; print(list(csv.DictReader(open(sys.argv[1])))[int(sys.argv[2]) - 1][sys.argv[3]])' "$@"
}
rows() { python3 -c 'import csv, sys; print(len(list(csv.DictReader(open(sys.argv[1])))))' "$1"; }
run_id_of() { sed -n 's/^run_models: run \([^:]*\): .*/\1/p' "$1" | head -n 1; }
job_of() { sed -n 's/.*submitted slurm job \([0-9]*\).*/\1/p' "$1" | head -n 1; }
nothing_left() { # RUN_ID JOB
	local n
	n=$(ours "$1" | grep -c . || true)
	[ "$n" = 0 ] || fail "$n container(s) of run $1 left"
	if [ -n "$2" ]; then
		n=$(standins "$2" | grep -c . || true)
		[ "$n" = 0 ] || fail "$n stand-in container(s) of job $2 left"
		[ -z "$(squeue -h -j "$2" -o %i 2>/dev/null)" ] || fail "job $2 still queued"
	fi
}
no_job_of() { # RUN_ID: SLURM never saw a job of this run
	[ -z "$(squeue -h -a -o '%k' | grep "run_models.run=$1" || true)" ] || fail "a job of run $1 is queued"
	grep -q 'submitted slurm job' "$work/out" && fail "a job was submitted"
	return 0
}

mad=$work/mad
mkdir -p "$mad/shared"
cp -r "$src/tests/compat/mad-today/." "$mad/"
# The images' base: static busybox on scratch (no registry, no network).
mkdir -p "$work/base"
cp "$src/docker/smoke/busybox" "$work/base/busybox"
printf 'FROM scratch\nCOPY busybox /bin/busybox\nRUN ["/bin/busybox", "--install", "-s", "/bin"]\n' \
	>"$work/base/Dockerfile"
base=rm-mad-today-base:1
docker build -q -t "$base" "$work/base" >/dev/null 2>&1 || fail "cannot build the base image"
cd "$mad"
card=vllm_dissag/pyt_vllm_disagg_nixl_deepseek-v3
# An MI300X host's context; the test cluster has no GPU GRES (gpus_per_node 0) and no
# node count: the card's slurm.nodes (2) sizes the job.
ctx() { # [EXTRA JSON MEMBERS of env_vars] [EXTRA top-level members]
	printf '{"gpu_vendor": "AMD", "guest_os": "UBUNTU", "MAD_SYSTEM_GPU_ARCHITECTURE": "gfx942",
	  "MAD_SYSTEM_NGPUS": 0, "slurm": {"exclusive": false, "time": "5", "gpus_per_node": 0},
	  "docker_build_arg": {"BASE_IMAGE": "%s", "BASE_DOCKER": "%s"},
	  "env_vars": {"LOG_PATH": "%s"%s}%s}' "$base" "$base" "$mad/shared" "${1:-}" "${2:-}"
}
run() { # OUT ARGS...: run_models; records the run id
	local out=$1 rc=0
	shift
	"$rm_bin" "$@" --log-dir logs -o perf.csv >"$out" 2>&1 || rc=$?
	run_ids+=("$(run_id_of "$out")")
	return $rc
}
image_ids_agree() { # STEPS WANT: both nodes report WANT
	local n
	n=$(grep -c "^image n[12] $2\$" "$1" || true)
	[ "$n" = 2 ] || fail "the nodes' image ids are not $2: $(cat "$1")"
}

case $case_name in
save)
	run "$work/out" --tags "$card" -c "$(ctx ', "BENCHMARK_COMBINATIONS": "2048/2048"')" ||
		fail "exit $?"
	rid=${run_ids[-1]} job=$(job_of "$work/out")
	[ "$(rows perf.csv)" = 2 ] || fail "$(rows perf.csv) rows"
	for r in 1 2; do
		for c in status:SUCCESS nnodes:2 deployment_type:slurm launcher:slurm_multi; do
			[ "$(csv_col perf.csv $r "${c%%:*}")" = "${c#*:}" ] || fail "row $r ${c%%:*} is '$(csv_col perf.csv $r "${c%%:*}")'"
		done
	done
	[ "$(csv_col perf.csv 1 performance)" = 800.5 ] || fail "performance $(csv_col perf.csv 1 performance)"
	script=logs/vllm_dissag_pyt_vllm_disagg_nixl_deepseek-v3.$rid.sbatch
	grep -q '^#SBATCH --nodes=2$' "$script" || fail "not 2 nodes: $(grep SBATCH "$script")"
	grep -q 'docker load -i' "$script" || fail "no docker load in the batch script"
	built=$(docker image inspect -f '{{.Id}}' ci-vllm_dissag_pyt_vllm_disagg_nixl_deepseek-v3_vllm_disagg_inference.ubuntu.amd)
	image_ids_agree "logs/vllm_dissag_pyt_vllm_disagg_nixl_deepseek-v3.$rid.steps" "$built"
	blog=logs/vllm_dissag_pyt_vllm_disagg_nixl_deepseek-v3.$rid.batch.log
	grep -q "^standin: launcher=vllm_dissag/run_xPyD_models.slurm job=$job .*pwd=$mad/scripts/vllm_dissag$" "$blog" ||
		fail "the script did not run on the batch host in its folder: $(grep '^standin:' "$blog")"
	grep -q '^standin-env: BENCHMARK_COMBINATIONS=2048/2048$' "$blog" || fail "the context's env_vars did not win"
	grep -q '^standin-env: MODEL_NAME=DeepSeek-V3$' "$blog" || fail "the card's env_vars are missing"
	# a local build goes to the nodes by its id (a tag may move between the save and the load)
	grep -q "^standin-env: DOCKER_IMAGE_NAME=$built\$" "$blog" || fail "DOCKER_IMAGE_NAME is not the built image's id"
	grep -q 'NODE_RANK=1 node=n2' "$blog" || fail "no container on n2"
	[ -z "$(ls logs/*.image.tar 2>/dev/null)" ] || fail "the saved image is left: $(ls logs/*.image.tar)"
	nothing_left "$rid" "$job"
	;;
registry)
	"$rm_bin" build --tags "$card" -c "$(ctx)" --registry "$RM_TEST_REGISTRY" \
		--manifest manifest.json >"$work/out.build" 2>&1 || fail "build: exit $?"
	ref=$(jq -r '.built_images | to_entries[0].value.registry_image' manifest.json)
	[ "${ref#"$RM_TEST_REGISTRY"/}" != "$ref" ] || fail "not pushed: $ref"
	pushed=$(docker image inspect -f '{{.Id}}' "$ref")
	run "$work/out" --manifest manifest.json -c "$(ctx)" || fail "exit $?"
	rid=${run_ids[-1]} job=$(job_of "$work/out")
	script=logs/vllm_dissag_pyt_vllm_disagg_nixl_deepseek-v3.$rid.sbatch
	grep -q 'docker pull' "$script" || fail "no docker pull in the batch script"
	image_ids_agree "logs/vllm_dissag_pyt_vllm_disagg_nixl_deepseek-v3.$rid.steps" "$pushed"
	[ "$(rows perf.csv)" = 2 ] && [ "$(csv_col perf.csv 2 status)" = SUCCESS ] || fail "rows: $(cat perf.csv)"
	case $(csv_col perf.csv 1 docker_image) in # the pushed reference, pinned to its digest
	"${ref%:*}"@sha256:*) ;;
	*) fail "docker_image $(csv_col perf.csv 1 docker_image)" ;;
	esac
	nothing_left "$rid" "$job"
	;;
placeholder)
	run "$work/out" --tags "$card" -c "$(ctx ', "DOCKER_IMAGE_NAME": "<supply-your-image>"')" &&
		fail "exit 0"
	rid=${run_ids[-1]}
	[ "$(csv_col perf.csv 1 status)" = FAILURE ] || fail "status $(csv_col perf.csv 1 status)"
	csv_col perf.csv 1 reason | grep -q "model '$card': env_vars 'DOCKER_IMAGE_NAME' is '<supply-your-image>', a placeholder" ||
		fail "reason: $(csv_col perf.csv 1 reason)"
	grep -q 'building' "$work/out" && fail "built before refusing"
	no_job_of "$rid"
	nothing_left "$rid" ""
	;;
mismatch)
	run "$work/out" --tags "$card" -c "$(ctx '' ', "distributed": {"nnodes": 3}')" && fail "exit 0"
	rid=${run_ids[-1]}
	csv_col perf.csv 1 reason |
		grep -q "slurm.nodes 2 (card '$card') and distributed.nnodes 3 (the context) disagree" ||
		fail "reason: $(csv_col perf.csv 1 reason)"
	no_job_of "$rid"
	nothing_left "$rid" ""
	;;
no_results)
	run "$work/out" --tags sglang_disagg/pyt_sglang_disagg_mori_io_qwen3-32b \
		-c "$(ctx ', "STANDIN_NO_RESULTS": "1"' ', "distributed": {"nnodes": 2}')" && fail "exit 0"
	rid=${run_ids[-1]} job=$(job_of "$work/out")
	[ -n "$job" ] || fail "not submitted"
	grep -q '^#SBATCH --nodes=2$' logs/*."$rid".sbatch || fail "the context's nnodes did not size it"
	csv_col perf.csv 1 reason | grep -q "no results: the card's script wrote no CSV .*looked at .*$mad/shared/$job/perf.csv" ||
		fail "reason: $(csv_col perf.csv 1 reason)"
	nothing_left "$rid" "$job"
	;;
node_fails)
	run "$work/out" --tags "$card" -c "$(ctx ', "STANDIN_FAIL_RANK": "1"')" && fail "exit 0"
	rid=${run_ids[-1]} job=$(job_of "$work/out")
	csv_col perf.csv 1 reason | grep -q "the card's script exited with code 1 (its step's rank 1 on node n2 exited with code 1" ||
		fail "reason: $(csv_col perf.csv 1 reason)"
	nothing_left "$rid" "$job"
	;;
image_mismatch)
	# The nodes share this machine's engine: a docker shim that answers another id on n2.
	mkdir -p "$work/shim"
	real_docker=$(command -v docker)
	cat >"$work/shim/docker" <<SHIM
#!/bin/sh
if [ "\$1 \$2" = "image inspect" ] && [ "\${SLURMD_NODENAME:-}" = n2 ]; then
	echo sha256:0000000000000000000000000000000000000000000000000000000000000000
	exit 0
fi
exec "$real_docker" "\$@"
SHIM
	chmod +x "$work/shim/docker"
	PATH=$work/shim:$PATH run "$work/out" --tags "$card" -c "$(ctx)" && fail "exit 0"
	rid=${run_ids[-1]} job=$(job_of "$work/out")
	csv_col perf.csv 1 reason | grep -q "the image is not on every node: node n2 holds sha256:0000" ||
		fail "reason: $(csv_col perf.csv 1 reason)"
	grep -q '^standin:' logs/*."$rid".batch.log && fail "the card's script ran"
	nothing_left "$rid" "$job"
	;;
cancel)
	"$rm_bin" --tags "$card" -c "$(ctx ', "STANDIN_SLEEP": "300"')" --log-dir logs -o perf.csv \
		>"$work/out" 2>&1 &
	pid=$!
	for _ in $(seq 1 300); do
		grep -q 'NODE_RANK=1' logs/*.batch.log 2>/dev/null && break
		sleep 0.1
	done
	grep -q 'NODE_RANK=1' logs/*.batch.log || fail "the containers never started"
	rid=$(run_id_of "$work/out") job=$(job_of "$work/out")
	run_ids+=("$rid")
	kill -INT "$pid"
	rc=0
	wait "$pid" || rc=$?
	[ "$rc" = 130 ] || fail "exit $rc"
	[ "$(csv_col perf.csv 1 status)" = FAILURE ] || fail "no FAILURE row"
	for _ in $(seq 1 200); do # the stand-ins' trap removes their containers on scancel's TERM
		[ -z "$(standins "$job")" ] && break
		sleep 0.1
	done
	nothing_left "$rid" "$job"
	;;
dry_run)
	rc=0
	"$rm_bin" --tags all --dry-run -c '{"gpu_vendor": "AMD", "guest_os": "UBUNTU", "MAD_SYSTEM_GPU_ARCHITECTURE": "gfx942", "MAD_SYSTEM_NGPUS": 8}' \
		>"$work/out" 2>"$work/out.err" || rc=$?
	[ "$rc" = 0 ] || fail "exit $rc: $(tail -n 3 "$work/out.err")"
	n=$(grep -c '^model ' "$work/out")
	[ "$n" = 134 ] || fail "$n cards"
	n=$(grep -c 'the card.s script starts its own containers' "$work/out")
	[ "$n" = 44 ] || fail "$n batch scripts"
	n=$(grep -c 'would be SKIPPED' "$work/out")
	[ "$n" = 13 ] || fail "$n skipped"
	if grep -q 'would fail\|would be FAILURE' "$work/out"; then fail "$(grep -m 3 'would fail\|would be FAILURE' "$work/out")"; fi
	# MAD's rule: one Dockerfile a running card (212 with `<prefix>.*`); the 14 cards of
	# docker/vllm_disagg_inference build its .ubuntu.amd one only
	n=$(grep -c '^  dockerfile: ' "$work/out")
	[ "$n" = 121 ] || fail "$n Dockerfiles built, not MAD's 121"
	n=$(grep -c '^  dockerfile: docker/vllm_disagg_inference.ubuntu.amd.Dockerfile (.*no CONTEXT line' "$work/out")
	[ "$n" = 14 ] || fail "$n cards build vllm_disagg_inference.ubuntu.amd (no CONTEXT line said)"
	n=$(grep -c 'warning' "$work/out.err" || true)
	echo "dry_run: 134 cards, 44 batch scripts, 13 skipped, $n warning line(s)"
	;;
*) fail "no case $case_name" ;;
esac
echo "ok [$case_name]"
