# CONTEXT {'gpu_vendor': 'AMD', 'guest_os': 'UBUNTU'}
# ROCm/MAD's docker/pytorch_train.ubuntu.amd.Dockerfile, its first lines as they are; the steps after
# them fetch packages from the network and are left out here (tests/compat/mad/README.md).
ARG BASE_DOCKER=rocm/pytorch-training:v25.5
FROM $BASE_DOCKER

USER root
ENV WORKSPACE_DIR=/workspace
RUN mkdir -p $WORKSPACE_DIR
WORKDIR $WORKSPACE_DIR
