# CONTEXT {'gpu_vendor': 'AMD', 'guest_os': 'UBUNTU'}
# MLPerf Training v5.1 Llama 2 70B LoRA fine-tuning, AMD submission image.
# Based on: mlcommons/training_results_v5.1 AMD/benchmarks/llama2_70b_lora/implementations/
# */README.md (`docker pull rocm/amd-mlperf:llama2_70b_training_5.1`; code in /workspace/code;
# data and model prepared with scripts/prepare_data_and_model.sh and mounted at /data and /ckpt).
ARG BASE_DOCKER=rocm/amd-mlperf:llama2_70b_training_5.1
FROM $BASE_DOCKER

USER root
WORKDIR /workspace/code

# The benchmark entry point scripts/mlperf_training/run.sh runs, trial after trial.
RUN test -f /workspace/code/run_and_time.sh && ls /workspace/code/config_*.sh
