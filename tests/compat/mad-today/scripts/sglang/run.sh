#!/bin/bash
# Stand-in for ROCm/MAD's scripts/sglang/run.sh (tests/compat/mad-today/README.md): takes the
# card's arguments, prints what it was given (standin-arg:/standin-env: lines) and
# writes perf_<model_repo basename>.csv.
# POSIX sh: it runs in the busybox stand-in image, whose bash is busybox sh.
set -e
echo "standin: script=sglang/run.sh pwd=$PWD"
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
[ -n "$repo" ] || { echo "--model_repo is required"; exit 1; }
out=perf_${repo##*/}.csv
printf 'model,performance,metric\n%s,%s,%s\n' "${repo##*/}_latency" "$((RANDOM % 100 + 1)).5" "ms" >"$out"
echo "standin-result: $out"
