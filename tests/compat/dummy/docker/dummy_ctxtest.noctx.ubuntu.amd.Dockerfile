# CONTEXT {'ctx_test': 'None'}
ARG BASE_DOCKER=rm-compat-base:1
FROM $BASE_DOCKER

ENV ctxtest=0
