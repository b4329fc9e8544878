# CONTEXT {'gpu_vendor': 'AMD', 'guest_os': 'UBUNTU'}
# Stand-in for ROCm/MAD's docker/pyt_atom.ubuntu.amd.Dockerfile (not read; tests/compat/mad-today/README.md):
# its first lines as they are, the build steps after them left out.
# CONTEXT and base follow MAD's documented convention (docs/adding-a-model.md); the real default base is not known here.
ARG BASE_DOCKER=rocm/pytorch
FROM $BASE_DOCKER
