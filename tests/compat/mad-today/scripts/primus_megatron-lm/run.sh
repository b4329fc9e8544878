#!/bin/bash
# Stand-in for ROCm/MAD's scripts/primus_megatron-lm/run.sh (tests/compat/mad-today/README.md): takes the
# card's arguments, prints what it was given (standin-arg:/standin-env: lines) and
# writes perf_primus-megatron-Llama-3.1-<size>.csv.
# POSIX sh: it runs in the busybox stand-in image, whose bash is busybox sh.
set -e
echo "standin: script=primus_megatron-lm/run.sh pwd=$PWD"
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
size=${repo##*llama-3.1-}
[ -n "$size" ] && [ "$size" != "$repo" ] || { echo "unknown --model_repo '$repo'"; exit 1; }
size=$(echo "$size" | tr b B)
out=perf_primus-megatron-Llama-3.1-$size.csv
printf 'model,performance,metric\n%s,%s,%s\n' "Llama-3.1-$size" "$((RANDOM % 100 + 1)).5" "TFLOP/s/GPU" >"$out"
echo "standin-result: $out"
