# CONTEXT {'gpu_vendor': 'AMD', 'guest_os': 'UBUNTU'}
# MPT-30B fine-tuning with MosaicML LLM Foundry / Composer on AMD Instinct (MI300X).
# Based on: ROCm docs "Training MPT-30B with LLM Foundry and ROCm" (rocm/pytorch-training:v25.5,
# ROCm 6.3.4, PyTorch 2.7.0a0) and ROCm/MAD docker/pyt_mpt30b_training.ubuntu.amd.Dockerfile
# (Composer v0.28.0 + LLM Foundry v0.17.1 for PyTorch >= 2.5, installed editable from git with
# their torch requirement pinned to the ROCm build already in the image).
ARG BASE_DOCKER=rocm/pytorch-training:v25.5
FROM $BASE_DOCKER

ARG COMPOSER_VERSION=v0.28.0
ARG LLM_FOUNDRY_VERSION=v0.17.1

USER root
WORKDIR /workspace
SHELL ["/bin/bash", "-o", "pipefail", "-c"]

# Record the PyTorch build the image ships: pip must never replace it with a CUDA wheel.
RUN python -c 'import torch; print("torch", torch.__version__, "hip", torch.version.hip)'

# numpy is reinstalled by the packages below at the version they need; blinker is a distutils
# package pip cannot uninstall when mlflow pulls a newer one (the peer image removes both too).
RUN pip uninstall -y numpy || true; \
    apt-get remove -y python3-blinker || true

# Composer and LLM Foundry from their release tags, with the torch/torchvision requirements
# rewritten to the versions installed in the base image.
RUN TORCH_VERSION="$(python -c 'import torch; print(torch.__version__)')" && \
    TORCHVISION_VERSION="$(pip show torchvision 2>/dev/null | awk '/^Version:/ {print $2}')" && \
    git clone --depth 1 --branch "${COMPOSER_VERSION}" https://github.com/mosaicml/composer.git /workspace/composer && \
    cd /workspace/composer && \
    sed -i "s/'torch>=[^']*'/'torch==${TORCH_VERSION}'/" setup.py && \
    if [ -n "${TORCHVISION_VERSION}" ]; then \
        sed -i "s/'torchvision>=[^']*'/'torchvision==${TORCHVISION_VERSION}'/" setup.py; \
    fi && \
    pip install --no-cache-dir -e '.[libcloud,wandb,oci,gcs,mlflow]' && \
    git clone --depth 1 --branch "${LLM_FOUNDRY_VERSION}" https://github.com/mosaicml/llm-foundry.git /workspace/llm-foundry && \
    cd /workspace/llm-foundry && \
    sed -i "s/'torch[<>=][^']*'/'torch==${TORCH_VERSION}'/" setup.py && \
    pip install --no-cache-dir -e . && \
    python -c 'import torch, composer, llmfoundry; print("composer", composer.__version__, "llmfoundry", llmfoundry.__version__, "torch", torch.__version__)'

# Hugging Face cache (model weights, datasets); mount a host folder here to keep it between runs.
ENV HF_HOME=/data/llm-foundry
