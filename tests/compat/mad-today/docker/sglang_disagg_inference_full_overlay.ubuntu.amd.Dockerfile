# CONTEXT {'gpu_vendor': 'AMD', 'guest_os': 'UBUNTU'}
# Stand-in for ROCm/MAD's docker/sglang_disagg_inference_full_overlay.ubuntu.amd.Dockerfile (not read; 1e066d3 listed; tests/compat/mad-today/README.md):
# its first lines as they are, the build steps after them left out.
# Header assumed the same as its oci-rdma62 variant's (that file says it derives from this one).
ARG BASE_DOCKER=lmsysorg/sglang:v0.5.12.post1-rocm720-mi30x
FROM $BASE_DOCKER

SHELL ["/bin/bash", "-o", "pipefail", "-c"]
USER root
