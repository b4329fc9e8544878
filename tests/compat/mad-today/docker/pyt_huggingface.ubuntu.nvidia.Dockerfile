# CONTEXT {'gpu_vendor': 'NVIDIA', 'guest_os': 'UBUNTU'}
# Stand-in for ROCm/MAD's docker/pyt_huggingface.ubuntu.nvidia.Dockerfile (first lines as in tests/compat/mad, from an older MAD;
# tests/compat/mad-today/README.md), the build steps after them left out.
ARG BASE_DOCKER=nvidia/cuda:12.1.1-cudnn8-devel-ubuntu20.04
FROM $BASE_DOCKER

USER root
ENV WORKSPACE_DIR=/workspace
RUN mkdir -p $WORKSPACE_DIR
WORKDIR $WORKSPACE_DIR
