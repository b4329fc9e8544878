# CONTEXT {'ctx_test': '2'}
ARG BASE_DOCKER=rm-compat-base:1
FROM $BASE_DOCKER

ENV ctxtest=2
