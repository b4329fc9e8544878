# CONTEXT {'gpu_vendor': 'AMD', 'guest_os': 'UBUNTU'}
# Stand-in for ROCm/MAD's docker/vllm_disagg_inference.glmv53flash.gfx942.ubuntu.amd.Dockerfile (5f31d19; tests/compat/mad-today/README.md):
# its first lines as they are, the build steps after them left out.
ARG BASE_IMAGE=rocm/vllm-dev:ci_base-build-01a0d6a8-b743-4bb5-802c-af6a7d97bf88@sha256:bd7f0c9b672659e6a0cbd9c110858b1a9e509229f7546d7fc42a52bdc57ae7e3
FROM ${BASE_IMAGE}
ARG BASE_IMAGE

ENTRYPOINT []
WORKDIR /app
