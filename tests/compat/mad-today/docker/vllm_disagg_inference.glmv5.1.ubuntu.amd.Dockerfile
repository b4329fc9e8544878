# CONTEXT {'gpu_vendor': 'AMD', 'guest_os': 'UBUNTU'}
# Stand-in for ROCm/MAD's docker/vllm_disagg_inference.glmv5.1.ubuntu.amd.Dockerfile (094d108; tests/compat/mad-today/README.md):
# its first lines as they are, the build steps after them left out.
ARG BASE_IMAGE=rocm/vllm-dev:ci_base-dedbf6be8b1afa17a6220473b9c8c98242ac1c03
FROM ${BASE_IMAGE}

ENTRYPOINT []
WORKDIR /app
