#!/bin/bash
# Stand-in for ROCm/MAD's scripts/pyt_janus_pro_inference/run.sh (tests/compat/mad-today/README.md): takes the
# card's arguments, prints what it was given (standin-arg:/standin-env: lines) and
# writes perf_pyt_janus_pro_inference.csv.
# POSIX sh: it runs in the busybox stand-in image, whose bash is busybox sh.
set -e
echo "standin: script=pyt_janus_pro_inference/run.sh pwd=$PWD"
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
out=perf_pyt_janus_pro_inference.csv
printf 'model,performance,metric\n%s,%s,%s\n' "janus_pro" "$((RANDOM % 100 + 1)).5" "tok/s" >"$out"
echo "standin-result: $out"
