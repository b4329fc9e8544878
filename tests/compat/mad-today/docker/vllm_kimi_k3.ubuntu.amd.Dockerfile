# CONTEXT {'gpu_vendor': 'AMD', 'guest_os': 'UBUNTU'}
# Stand-in for ROCm/MAD's docker/vllm_kimi_k3.ubuntu.amd.Dockerfile (6f863d6; tests/compat/mad-today/README.md):
# its first lines as they are, the build steps after them left out.
# Kept: MAD's refusal to build without MAD_SYSTEM_GPU_ARCHITECTURE (gfx942 or gfx950).
ARG BASE_IMAGE=rocm/vllm-dev:ci_base-0fcd9b99cc9d63202da4c858d8ebc6582c9e2491

FROM ${BASE_IMAGE}

ENTRYPOINT []
WORKDIR /app

ARG MAD_SYSTEM_GPU_ARCHITECTURE
ENV K3_GFX_ARCH=${MAD_SYSTEM_GPU_ARCHITECTURE}
RUN case "${K3_GFX_ARCH}" in \
      gfx942|gfx950) echo "Kimi-K3 image for ${K3_GFX_ARCH}" ;; \
      *) echo "MAD_SYSTEM_GPU_ARCHITECTURE must be gfx942 or gfx950, got '${K3_GFX_ARCH}'" >&2; exit 1 ;; \
    esac && mkdir -p /app && echo "GPU_ARCH=${K3_GFX_ARCH}" >> /app/versions.txt
