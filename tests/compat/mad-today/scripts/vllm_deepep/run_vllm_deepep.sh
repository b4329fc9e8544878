#!/bin/bash
# Stand-in for ROCm/MAD's scripts/vllm_deepep/run_vllm_deepep.sh (tests/compat/mad-today/README.md): takes the
# card's arguments, prints what it was given (standin-arg:/standin-env: lines) and
# writes perf_vllm_deepep.csv.
# POSIX sh: it runs in the busybox stand-in image, whose bash is busybox sh.
set -e
echo "standin: script=vllm_deepep/run_vllm_deepep.sh pwd=$PWD"
for a in "$@"; do echo "standin-arg: $a"; done
env | sort | sed 's/^/standin-env: /'
repo='' workload=''
while [ "$#" -gt 0 ]; do
	case $1 in
	--model_repo) repo=$2 ;;
	--workload) workload=$2 ;;
	esac
	if [ "$#" -gt 1 ]; then shift 2; else shift; fi
done
echo "standin-opts: model_repo=$repo workload=$workload"
out=perf_vllm_deepep.csv
printf 'model,performance,metric\n%s,%s,%s\n' "${MODEL_REPO:-unknown}_${ALL2ALL_BACKEND:-unknown}" "$((RANDOM % 100 + 1)).5" "tok/s" >"$out"
echo "standin-result: $out"
