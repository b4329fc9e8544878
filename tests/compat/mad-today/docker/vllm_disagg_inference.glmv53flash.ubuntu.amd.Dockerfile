# CONTEXT {'gpu_vendor': 'AMD', 'guest_os': 'UBUNTU'}
# Stand-in for ROCm/MAD's docker/vllm_disagg_inference.glmv53flash.ubuntu.amd.Dockerfile (not read; bddf0e2 listed; tests/compat/mad-today/README.md):
# its first lines as they are, the build steps after them left out.
# CONTEXT assumed as in its gfx942 sibling; the real default base is not known here.
ARG BASE_IMAGE=rocm/vllm-dev:not-read
FROM ${BASE_IMAGE}

ENTRYPOINT []
WORKDIR /app
