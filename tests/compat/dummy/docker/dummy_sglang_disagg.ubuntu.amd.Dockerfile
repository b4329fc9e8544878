# CONTEXT {'gpu_vendor': 'AMD'}
FROM rm-compat-base:1
RUN false
