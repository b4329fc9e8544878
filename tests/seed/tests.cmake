# Seed workloads (docker/*.Dockerfile, scripts/{pyt_mpt30b_training,megatron-lm,pytorch_train,
# mlperf_training}, tests/seed/seed-models.json): the checks that need no GPU. Driver:
# tests/seed/check-seed.sh CHECK SOURCE_DIR RUN_MODELS; exit 77 = skipped (tool, binary or
# merge missing), with the reason on stdout.
find_program(RM_SEED_BASH bash)
if(RM_SEED_BASH)
  foreach(check syntax shellcheck dockerfile entries merged list mpt mlperf)
    add_test(NAME seed.${check}
             COMMAND ${RM_SEED_BASH} ${CMAKE_SOURCE_DIR}/tests/seed/check-seed.sh ${check}
                     ${CMAKE_SOURCE_DIR} $<TARGET_FILE:run_models>
             WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
    set_tests_properties(seed.${check} PROPERTIES
      LABELS seed
      SKIP_RETURN_CODE 77
      TIMEOUT 300
      ENVIRONMENT "RM_SOURCE_DIR=${CMAKE_SOURCE_DIR};RM_BUILD_DIR=${CMAKE_BINARY_DIR}")
  endforeach()
endif()
