#!/bin/bash
# Stand-in for ROCm/MAD's scripts/pytorch_train/run.sh (tests/compat/mad-today/README.md): takes the
# card's arguments, prints what it was given (standin-arg:/standin-env: lines) and
# writes perf_<model>.csv, the model named from --model_repo as MAD's does.
# POSIX sh: it runs in the busybox stand-in image, whose bash is busybox sh.
set -e
echo "standin: script=pytorch_train/run.sh pwd=$PWD"
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
case $repo in
pyt_train_flux) m=Flux ;; pyt_train_stable-diffusion-xl) m=Stable-Diffusion-XL ;; pyt_train_dlrm) m=DLRM ;;
pyt_train_mochi-1) m=Mochi-1 ;; pyt_train_hunyuan-video) m=Hunyuan-video ;; pyt_train_wan2_1-i2v) m=Wan2_1-i2v ;;
*) echo "unknown --model_repo '$repo'"; exit 1 ;;
esac
out=perf_$m.csv
printf 'model,performance,metric\n%s,%s,%s\n' "$m" "$((RANDOM % 100 + 1)).5" "samples_per_second" >"$out"
echo "standin-result: $out"
