# Stand-in for ROCm/MAD's docker/vllm_disagg_inference.ubuntu.amd.Dockerfile (d8a5ad7; tests/compat/mad-today/README.md):
# its first lines as they are, the build steps after them left out.
# MAD's file has no context header at all, and its base comes from BASE_IMAGE, not BASE_DOCKER.
ARG BASE_IMAGE=rocm/vllm-dev:base_torch2.10_triton3.6_rocm7.2_torch_build_20260216
FROM ${BASE_IMAGE}

ENTRYPOINT []

WORKDIR /root
