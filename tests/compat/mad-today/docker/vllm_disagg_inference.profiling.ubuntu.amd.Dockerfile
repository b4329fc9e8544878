# CONTEXT {'gpu_vendor': 'AMD', 'guest_os': 'UBUNTU'}
# Stand-in for ROCm/MAD's docker/vllm_disagg_inference.profiling.ubuntu.amd.Dockerfile (eddfb7e; tests/compat/mad-today/README.md):
# its first lines as they are, the build steps after them left out.
# Two stages as in MAD's (perfetto_builder, then runtime); their steps are left out.
ARG BASE_IMAGE=rocm/vllm-dev:ci_base-0fcd9b99cc9d63202da4c858d8ebc6582c9e2491
FROM ${BASE_IMAGE} AS perfetto_builder
FROM ${BASE_IMAGE} AS runtime

ENTRYPOINT []
WORKDIR /app
