# CONTEXT {'gpu_vendor': 'AMD', 'guest_os': 'UBUNTU'}
# ROCm PyTorch training image (torchtitan, torchtune, FluxBenchmark) for the pyt_train_*
# benchmarks of scripts/pytorch_train/run.sh.
# Based on: ROCm docs "Training a model with ROCm PyTorch" (rocm/pytorch-training, benchmark
# folders /workspace/torchtitan, /workspace/torchtune, /workspace/FluxBenchmark) and ROCm/MAD
# docker/pytorch_train.ubuntu.amd.Dockerfile (rocm/pytorch-training:v25.5).
ARG BASE_DOCKER=rocm/pytorch-training:v25.5
FROM $BASE_DOCKER

USER root
ENV WORKSPACE_DIR=/workspace
WORKDIR /workspace

# Record the software configuration of the image in the build log.
RUN python3 -c 'import torch; print("torch", torch.__version__, "hip", torch.version.hip)' && \
    ls -d /workspace/torchtitan /workspace/torchtune /workspace/FluxBenchmark 2>/dev/null || true
