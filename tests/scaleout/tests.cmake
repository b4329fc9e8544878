# Scale-out tests (issue 13): images and registries against a real dockerd and a real
# docker-registry; the SLURM pieces against the real two-node cluster of tests/slurm-cluster.sh.
add_executable(live_images ${CMAKE_SOURCE_DIR}/tests/scaleout/live_images.c)
target_link_libraries(live_images PRIVATE rm)
target_include_directories(live_images PRIVATE ${CMAKE_SOURCE_DIR}/tests/unit)
add_test(NAME scaleout.registry_live
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/scaleout/registry_live.sh
                 $<TARGET_FILE:live_images> ${CMAKE_SOURCE_DIR})
set_tests_properties(scaleout.registry_live PROPERTIES LABELS "integration;scaleout" TIMEOUT 300)

find_program(SHELLCHECK_SCALEOUT shellcheck)
if(SHELLCHECK_SCALEOUT)
  file(GLOB RM_SCALEOUT_SCRIPTS ${CMAKE_SOURCE_DIR}/tests/scaleout/*.sh)
  add_test(NAME lint.shellcheck_scaleout
           COMMAND ${SHELLCHECK_SCALEOUT} -x -S warning ${RM_SCALEOUT_SCRIPTS}
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set_tests_properties(lint.shellcheck_scaleout PROPERTIES LABELS lint)
endif()

# The batch script and the parsers on a real two-node SLURM cluster (started and stopped by
# the test itself, on a free port base), with containers on the real dockerd.
add_executable(slurm_tool ${CMAKE_SOURCE_DIR}/tests/scaleout/slurm_tool.c)
target_link_libraries(slurm_tool PRIVATE rm)
add_test(NAME scaleout.slurm_live
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/scaleout/slurm_live.sh $<TARGET_FILE:slurm_tool>
                 $<TARGET_FILE:run_models> ${CMAKE_SOURCE_DIR})
set_tests_properties(scaleout.slurm_live PROPERTIES LABELS "integration;scaleout;slurm"
                     TIMEOUT 600)

# The SLURM commands from C; and without accounting (final states from scontrol, not sacct).
add_executable(live_slurm ${CMAKE_SOURCE_DIR}/tests/scaleout/live_slurm.c)
target_link_libraries(live_slurm PRIVATE rm)
target_include_directories(live_slurm PRIVATE ${CMAKE_SOURCE_DIR}/tests/unit)
add_dependencies(slurm_tool live_slurm)
add_test(NAME scaleout.slurm_live_nodbd
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/scaleout/slurm_live.sh $<TARGET_FILE:slurm_tool>
                 $<TARGET_FILE:run_models> ${CMAKE_SOURCE_DIR} c_api two_node)
set_tests_properties(scaleout.slurm_live_nodbd PROPERTIES LABELS "integration;scaleout;slurm"
                     TIMEOUT 600 ENVIRONMENT SLURM_TEST_DBD=0)
