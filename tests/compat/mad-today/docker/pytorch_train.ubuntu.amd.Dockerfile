# CONTEXT {'gpu_vendor': 'AMD', 'guest_os': 'UBUNTU'}
# Stand-in for ROCm/MAD's docker/pytorch_train.ubuntu.amd.Dockerfile (first lines as in tests/compat/mad, from an older MAD;
# tests/compat/mad-today/README.md), the build steps after them left out.
ARG BASE_DOCKER=rocm/pytorch-training:v25.5
FROM $BASE_DOCKER

USER root
ENV WORKSPACE_DIR=/workspace
RUN mkdir -p $WORKSPACE_DIR
WORKDIR $WORKSPACE_DIR
