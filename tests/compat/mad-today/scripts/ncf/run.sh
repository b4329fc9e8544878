#!/bin/bash
# Stand-in for ROCm/MAD's scripts/ncf/run.sh (tests/compat/mad-today/README.md): takes the
# card's arguments, prints what it was given (standin-arg:/standin-env: lines) and
# writes results_ncf.csv.
# POSIX sh: it runs in the busybox stand-in image, whose bash is busybox sh.
set -e
echo "standin: script=ncf/run.sh pwd=$PWD"
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
out=results_ncf.csv
printf 'model,performance,metric\n%s,%s,%s\n' "ncf" "$((RANDOM % 100 + 1)).5" "samples_per_second" >"$out"
echo "standin-result: $out"
