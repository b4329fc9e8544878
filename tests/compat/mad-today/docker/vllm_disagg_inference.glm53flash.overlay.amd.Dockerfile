# Stand-in for ROCm/MAD's docker/vllm_disagg_inference.glm53flash.overlay.amd.Dockerfile (bddf0e2; tests/compat/mad-today/README.md):
# its first lines as they are, the build steps after them left out.
# MAD's file has no context header; its first line, a BuildKit syntax directive, is left out.
ARG BASE_IMAGE=rocmshared/vllm-glm53-flash:ionic-aiter-tip-clrfix
FROM ${BASE_IMAGE}
