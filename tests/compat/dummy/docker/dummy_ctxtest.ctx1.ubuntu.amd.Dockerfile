# CONTEXT {'ctx_test': '1'}
ARG BASE_DOCKER=rm-compat-base:1
FROM $BASE_DOCKER

ENV ctxtest=1
