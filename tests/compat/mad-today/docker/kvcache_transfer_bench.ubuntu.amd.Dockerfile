# CONTEXT {'gpu_vendor': 'AMD', 'guest_os': 'UBUNTU'}
# Stand-in for ROCm/MAD's docker/kvcache_transfer_bench.ubuntu.amd.Dockerfile (70f83fd; tests/compat/mad-today/README.md):
# its first lines as they are, the build steps after them left out.
ARG BASE_DOCKER=lmsysorg/sglang:v0.5.20-rocm10-mi30x
FROM $BASE_DOCKER
ENV PYTHONPATH=/sgl-workspace/mori:/sgl-workspace/aiter
WORKDIR /sgl-workspace
