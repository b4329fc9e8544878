# CONTEXT {'gpu_vendor': 'AMD', 'guest_os': 'UBUNTU'}
ARG BASE_DOCKER=rm-compat-base:1
FROM $BASE_DOCKER
ENV DUMMY_IMAGE=amd
