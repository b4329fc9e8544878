#!/bin/bash
# Stand-in for ROCm/MAD's run script of this folder: it trains through the launcher
# madengine names in MAD_MULTI_NODE_RUNNER and writes the results file madengine names in
# MAD_OUTPUT_CSV (both must be set: `set -u` as the real scripts are strict).
set -eu
. ./mad_env.sh
echo "launch: $MAD_MULTI_NODE_RUNNER train.py $*"
echo "model,performance,metric" >"$MAD_OUTPUT_CSV"
echo "${2:-model},$((RANDOM % 500 + 100)),tflops_per_gpu" >>"$MAD_OUTPUT_CSV"
