# CONTEXT {'gpu_vendor': 'AMD', 'guest_os': 'UBUNTU'}
# Stand-in for ROCm/MAD's docker/vllm_disagg_inference.dsv4.ubuntu.amd.Dockerfile (14baf22; tests/compat/mad-today/README.md):
# its first lines as they are, the build steps after them left out.
ARG BASE_IMAGE=rocm/pytorch-private:vllm-recent-source-basem-v0290-aiter-10f8874-mori07bdace-tk@sha256:49e87adaece784e040dde49b79852b0fdbc515696619d559296a9397ecfd9137
FROM ${BASE_IMAGE}

ENTRYPOINT []
WORKDIR /app
