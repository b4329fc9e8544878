#!/bin/bash
# Stand-in for ROCm/MAD's scripts/vllm/run.sh: the same arguments and checks, and a
# perf_<model>.csv as its vllm_benchmark_report.sh writes (a row per scenario); no vLLM.
set -e
. ./mad_env.sh
if [ "${MAD_SYSTEM_GPU_ARCHITECTURE#*gfx94}" = "$MAD_SYSTEM_GPU_ARCHITECTURE" ]; then
	echo "Unsuported GPU arch detected, please use supported MI300X GPUs"
	exit 1
fi
while [ "$#" -gt 0 ]; do
	case $1 in
	--model_repo) MODEL_NAME=$2 ;;
	--test_option) TEST_OPTION=$2 ;;
	--num_gpu) N_GPUS=$2 ;;
	--datatype) DTYPE=$2 ;;
	--tunableop) TUNABLEOP=$2 ;;
	*) echo "Unknown parameter passed: $1"; exit 1 ;;
	esac
	shift 2
done
if [ -z "$MAD_DATAHOME" ]; then
	echo "no data mounted: the weights of $MODEL_NAME come from the Hugging Face hub (stand-in)"
fi
csv=perf_${MODEL_NAME##*/}.csv
echo "model,performance,metric" >"$csv"
for s in $(echo "$TEST_OPTION" | tr ',' ' '); do
	echo "${MODEL_NAME##*/}_${s}_${DTYPE}_tp${N_GPUS},$((RANDOM % 50 + 1)).5,$s" >>"$csv"
done
echo "tunableop $TUNABLEOP, wrote $csv"
