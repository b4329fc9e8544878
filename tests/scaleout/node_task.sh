#!/usr/bin/env bash
# What one SLURM task runs in tests/scaleout/slurm_live.sh, standing in for run_models' own
# per-node mode until it exists: one container on this node's engine (Engine API over
# $DOCKER_HOST with curl), given every variable the batch script listed in $RM_SLURM_ENV plus
# NODE_RANK; its output streamed to stdout (srun writes it to <model>.node<R>.log); on
# SIGTERM (scancel) the container is removed before the task exits. Containers are labelled
# rm.slurmtest=$RM_SLURMTEST_ID (one id per test run: runs in parallel share the engine).
# Usage: node_task.sh IMAGE MODEL [STEPS] [FAIL_RANK]   (FAIL_RANK exits 3 after its first step)
set -u
image=$1 model=$2 steps=${3:-3} fail_rank=${4:--1}
sock=${DOCKER_HOST#unix://}
api() { # METHOD PATH [JSON]
	curl -sS --unix-socket "$sock" -X "$1" -H 'Content-Type: application/json' ${3:+-d "$3"} \
		"http://localhost/v1.41$2"
}
env_json=$(for n in $RM_SLURM_ENV; do printf '%s=%s\n' "$n" "${!n-}"; done |
	jq -R . | jq -s --arg m "$model" --arg s "$steps" --arg f "$fail_rank" \
		'. + ["RM_TEST_MODEL=" + $m, "STEPS=" + $s, "FAIL_RANK=" + $f]')
run=${RM_SLURMTEST_ID:-0}
name="rm-slurmtest-$run-${SLURM_JOB_ID}-${NODE_RANK}"
body=$(jq -n --arg img "$image" --argjson env "$env_json" --arg node "${SLURMD_NODENAME:-}" --arg run "$run" '{
	Image: $img, Env: $env, Tty: true,
	Labels: {"rm.slurmtest": $run, "rm.slurmtest.node": $node},
	HostConfig: {NetworkMode: "host"},
	Cmd: ["sh", "-c", "echo \"model=$RM_TEST_MODEL rank=$NODE_RANK master=$MASTER_ADDR:$MASTER_PORT nnodes=$NNODES world=$WORLD_SIZE gpus=$GPUS_PER_NODE\"; echo \"runner=$MAD_MULTI_NODE_RUNNER\"; i=1; while [ $i -le $STEPS ]; do echo step $i; [ \"$NODE_RANK\" = \"$FAIL_RANK\" ] && exit 3; i=$((i+1)); sleep 0.5; done; echo \"performance: 1234.5 samples_per_sec\"; exit 0"]}')
id=$(api POST "/containers/create?name=$name" "$body" | jq -r '.Id // empty')
[ -n "$id" ] || { echo "node_task: cannot create a container from $image on ${SLURMD_NODENAME:-?}" >&2; exit 1; }
remove() { api DELETE "/containers/$id?force=1" >/dev/null; }
trap 'echo "node_task: SIGTERM on rank $NODE_RANK: removing ${id:0:12}" >&2; remove; exit 143' TERM INT
api POST "/containers/$id/start" >/dev/null
curl -sS -N --unix-socket "$sock" "http://localhost/v1.41/containers/$id/logs?follow=1&stdout=1&stderr=1" &
wait $!
code=$(api POST "/containers/$id/wait" | jq -r '.StatusCode')
remove
exit "${code:-1}"
