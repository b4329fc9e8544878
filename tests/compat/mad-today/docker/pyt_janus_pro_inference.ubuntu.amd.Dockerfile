# CONTEXT {'gpu_vendor': 'AMD', 'guest_os': 'UBUNTU'}
# Stand-in for ROCm/MAD's docker/pyt_janus_pro_inference.ubuntu.amd.Dockerfile (not read; tests/compat/mad-today/README.md):
# its first lines as they are, the build steps after them left out.
# CONTEXT, base and the MAD_SYSTEM_GPU_ARCHITECTURE opt-in as MAD's docs/adding-a-model.md describes this file.
ARG BASE_DOCKER=rocm/pytorch
FROM $BASE_DOCKER
ARG MAD_SYSTEM_GPU_ARCHITECTURE
ENV HIP_ARCHITECTURES=${MAD_SYSTEM_GPU_ARCHITECTURE}
