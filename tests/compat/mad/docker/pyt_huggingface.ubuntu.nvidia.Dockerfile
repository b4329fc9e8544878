# CONTEXT {'gpu_vendor': 'NVIDIA', 'guest_os': 'UBUNTU'}
# ROCm/MAD's docker/pyt_huggingface.ubuntu.nvidia.Dockerfile, its first lines as they are; the steps after
# them fetch packages from the network and are left out here (tests/compat/mad/README.md).
ARG BASE_DOCKER=nvidia/cuda:12.1.1-cudnn8-devel-ubuntu20.04
FROM $BASE_DOCKER

USER root
ENV WORKSPACE_DIR=/workspace
RUN mkdir -p $WORKSPACE_DIR
WORKDIR $WORKSPACE_DIR
