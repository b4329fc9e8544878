#!/bin/bash
# Stand-in for ROCm/MAD's scripts/dummy/run_multi.sh (tests/compat/mad-today/README.md): takes the
# card's arguments, prints what it was given (standin-arg:/standin-env: lines) and
# writes four rows to perf_dummy.csv and copies it to ../, as MAD's does.
# POSIX sh: it runs in the busybox stand-in image, whose bash is busybox sh.
set -e
echo "standin: script=dummy/run_multi.sh pwd=$PWD"
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
printf 'model,performance,metric\n' >perf_dummy.csv
for i in 1 2 3 4; do echo "$i,$((RANDOM % 100 + 1)),samples_per_sec" >>perf_dummy.csv; done
cp perf_dummy.csv ../
echo "standin-result: perf_dummy.csv"
