# CONTEXT {'gpu_vendor': 'AMD', 'guest_os': 'UBUNTU'}
# Megatron-LM for ROCm (Llama 3.1 8B/70B pretraining benchmarks, scripts/megatron-lm/run.sh).
# Based on: ROCm docs "Training a model with Megatron-LM for ROCm" (rocm/megatron-lm images,
# Megatron-LM checkout in /workspace/Megatron-LM, examples/llama/train_llama3.sh) and ROCm/MAD
# docker/megatron_train.ubuntu.amd.Dockerfile (rocm/megatron-lm:v25.9_gfx942). The tag is
# architecture specific: on MI355X (gfx950) build with
#   --additional-context '{"docker_build_arg": {"BASE_DOCKER": "rocm/megatron-lm:v25.9_gfx950"}}'
ARG BASE_DOCKER=rocm/megatron-lm:v25.9_gfx942
FROM $BASE_DOCKER

USER root
ENV WORKSPACE_DIR=/workspace
WORKDIR /workspace

# The benchmark drives this script; fail the build early if the image does not have it.
RUN test -f /workspace/Megatron-LM/examples/llama/train_llama3.sh

# Record the software configuration of the image in the build log.
RUN pip3 list 2>/dev/null | grep -i -E '^(torch|transformer[-_]engine|megatron|flash[-_]attn|triton) ' || true
