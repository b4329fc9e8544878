# CONTEXT {'gpu_vendor': 'AMD', 'guest_os': 'UBUNTU'}
# MLPerf Training v5.1 Llama 3.1 8B pretraining (C4), AMD submission image.
# Based on: mlcommons/training_results_v5.1 AMD/benchmarks/llama31_8b/implementations/
# */README.md (`docker pull rocm/amd-mlperf:llama31_8b_training_5.1`; code in /workspace/code;
# preprocessed C4 data mounted at /data, tokenizer/model folder at /model).
ARG BASE_DOCKER=rocm/amd-mlperf:llama31_8b_training_5.1
FROM $BASE_DOCKER

USER root
WORKDIR /workspace/code

# The benchmark entry point scripts/mlperf_training/run.sh runs, trial after trial.
RUN test -f /workspace/code/run_and_time.sh && ls /workspace/code/config_*.sh
