# CONTEXT {'gpu_vendor': 'AMD', 'guest_os': 'UBUNTU'}
# Stand-in for ROCm/MAD's docker/sglang_disagg_inference.ubuntu.amd.Dockerfile (0593888; tests/compat/mad-today/README.md):
# its first lines as they are, the build steps after them left out.
ARG BASE_DOCKER=docker.io/lmsysorg/sglang:v0.5.2rc1-rocm700-mi30x
FROM $BASE_DOCKER

ARG GPU_ARCH=gfx942
WORKDIR /sgl-workspace
