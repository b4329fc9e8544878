# CONTEXT {'gpu_vendor': 'AMD', 'guest_os': 'UBUNTU'}
# ROCm/MAD's docker/pyt_vllm.ubuntu.amd.Dockerfile, its first lines as they are; the steps after
# them fetch packages from the network and are left out here (tests/compat/mad/README.md).
ARG BASE_DOCKER=docker.io/rocm/vllm:rocm6.4.1_vllm_0.10.1_20250909
FROM $BASE_DOCKER

USER root
ENV WORKSPACE_DIR=/workspace
RUN mkdir -p $WORKSPACE_DIR
WORKDIR $WORKSPACE_DIR
