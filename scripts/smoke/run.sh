#!/bin/bash
# Smoke workload: proves the runner end to end (build, run, stream, parse, record) on any
# host. It prints a few training-like lines and the MAD performance line.
#   --steps N    how many step lines to print (default 5)
#   --lines N    print N filler lines first (for the streaming benchmark)
steps=5
lines=0
while [ $# -gt 0 ]; do
	case "$1" in
	--steps) steps=$2; shift 2 ;;
	--lines) lines=$2; shift 2 ;;
	*) echo "smoke: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
echo "smoke: model ${MAD_MODEL_NAME:-?}, vendor ${MAD_GPU_VENDOR:-?}, ${MAD_RUNTIME_NGPUS:-0} GPU(s)"
if [ "$lines" -gt 0 ]; then
	# ~100 bytes a line
	seq 1 "$lines" | sed 's/^/filler line of the streaming benchmark: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx /'
fi
i=1
while [ "$i" -le "$steps" ]; do
	echo "step $i/$steps: loss 2.$((9 - i % 10))"
	i=$((i + 1))
done
echo "performance: 1234.5 samples_per_sec"
