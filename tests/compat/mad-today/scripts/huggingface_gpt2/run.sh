#!/bin/bash
# Stand-in for ROCm/MAD's scripts/huggingface_gpt2/run.sh (tests/compat/mad-today/README.md): takes the
# card's arguments, prints what it was given (standin-arg:/standin-env: lines) and
# prints the performance line MAD's prints.
# POSIX sh: it runs in the busybox stand-in image, whose bash is busybox sh.
set -e
echo "standin: script=huggingface_gpt2/run.sh pwd=$PWD"
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
echo "performance: $((RANDOM % 100 + 100)) samples_per_second"
