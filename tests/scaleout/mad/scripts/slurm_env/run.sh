#!/bin/bash
# The SLURM tests' workload (tests/scaleout/cli_slurm.sh): prints what the batch script put in
# the container's environment, then STEPS steps of SLEEP seconds, then the performance line.
#   --steps N      default 3
#   --sleep S      seconds a step (default 0.3)
#   --fail_rank R  rank R exits 3 after its first step
#   --tunableop X  accepted (run_models passes it with --tunableop on|off)
steps=3 sleep=0.3 fail_rank=-1
while [ $# -gt 0 ]; do
	case "$1" in
	--steps) steps=$2; shift 2 ;;
	--sleep) sleep=$2; shift 2 ;;
	--fail_rank) fail_rank=$2; shift 2 ;;
	--tunableop) shift 2 ;;
	*) echo "slurm_env: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
# when the workload started, in the kernel's uptime (the host's clock too): for tools/bench-slurm.sh
echo "started=$(cut -d' ' -f1 /proc/uptime)"
echo "model=$MAD_MODEL_NAME rank=$NODE_RANK master=$MASTER_ADDR:$MASTER_PORT nnodes=$NNODES world=$WORLD_SIZE gpus=$GPUS_PER_NODE"
echo "runner=$MAD_MULTI_NODE_RUNNER"
i=1
while [ "$i" -le "$steps" ]; do
	echo "step $i/$steps: loss 2.$((9 - i % 10))"
	[ "$NODE_RANK" = "$fail_rank" ] && { echo "slurm_env: rank $NODE_RANK fails" >&2; exit 3; }
	i=$((i + 1))
	sleep "$sleep"
done
echo "performance: $((1000 + ${NODE_RANK:-0})).5 samples_per_sec"
