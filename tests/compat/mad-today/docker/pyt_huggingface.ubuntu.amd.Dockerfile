# CONTEXT {'gpu_vendor': 'AMD', 'guest_os': 'UBUNTU'}
# Stand-in for ROCm/MAD's docker/pyt_huggingface.ubuntu.amd.Dockerfile (first lines as in tests/compat/mad, from an older MAD;
# tests/compat/mad-today/README.md), the build steps after them left out.
ARG BASE_DOCKER=docker.io/rocm/pytorch:latest
FROM $BASE_DOCKER

USER root
ENV WORKSPACE_DIR=/workspace
RUN mkdir -p $WORKSPACE_DIR
WORKDIR $WORKSPACE_DIR
