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
  file(GLOB RM_SCALEOUT_SCRIPTS ${CMAKE_SOURCE_DIR}/tests/scaleout/*.sh
       ${CMAKE_SOURCE_DIR}/tests/scaleout/mad/scripts/*/*.sh)
  add_test(NAME lint.shellcheck_scaleout
           COMMAND ${SHELLCHECK_SCALEOUT} -x -S warning ${RM_SCALEOUT_SCRIPTS}
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set_tests_properties(lint.shellcheck_scaleout PROPERTIES LABELS lint)
else()
  rm_tool_missing_test(lint.shellcheck_scaleout shellcheck lint)
endif()

# One real two-node SLURM cluster and one registry for every SLURM test (a fixture: started
# once, stopped after the last), with containers on the real dockerd.
set(RM_SCALEOUT_ENV ${CMAKE_BINARY_DIR}/scaleout-fixture.env)
add_test(NAME scaleout.fixture_start
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/scaleout/fixture.sh start ${RM_SCALEOUT_ENV})
set_tests_properties(scaleout.fixture_start PROPERTIES FIXTURES_SETUP scaleout_servers
                     LABELS "integration;scaleout;slurm" TIMEOUT 120)
add_test(NAME scaleout.fixture_stop
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/scaleout/fixture.sh stop ${RM_SCALEOUT_ENV})
set_tests_properties(scaleout.fixture_stop PROPERTIES FIXTURES_CLEANUP scaleout_servers
                     LABELS "integration;scaleout;slurm" TIMEOUT 120)

# The SLURM launcher through the real CLI (tests/scaleout/cli_slurm.sh; its `timeout` case,
# 60-90 s of waiting for SLURM's time limit, is run by hand).
set(RM_SLURM_CASES two_node cancel array fail manifest alloc results queued errors kill9
    same_request tools)
foreach(c ${RM_SLURM_CASES})
  add_test(NAME scaleout.slurm_${c}
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/scaleout/cli_slurm.sh ${RM_SCALEOUT_ENV}
                   $<TARGET_FILE:run_models> ${CMAKE_SOURCE_DIR} ${c})
  set_tests_properties(scaleout.slurm_${c} PROPERTIES LABELS "integration;scaleout;slurm"
                       TIMEOUT 300 FIXTURES_REQUIRED "scaleout_servers;docker_engine")
endforeach()

# Today's ROCm/MAD multi-node cards (tests/scaleout/mad_today.sh, issue 30): the card's
# script on the batch host, the image on every node, results, and the refusals. They build
# the same cards' ci-* tags on the one test engine and read a tag's image id after a run, so
# they run one at a time (RESOURCE_LOCK): a case built beside another moves the tag between
# its run and its check (scaleout.mad_save failed so under ctest -j2).
set(RM_MAD_TODAY_CASES save registry placeholder mismatch no_results node_fails image_mismatch
    cancel dry_run)
foreach(c ${RM_MAD_TODAY_CASES})
  add_test(NAME scaleout.mad_${c}
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/scaleout/mad_today.sh ${RM_SCALEOUT_ENV}
                   $<TARGET_FILE:run_models> ${CMAKE_SOURCE_DIR} ${c})
  set_tests_properties(scaleout.mad_${c} PROPERTIES LABELS "integration;scaleout;slurm"
                       TIMEOUT 300 FIXTURES_REQUIRED "scaleout_servers;docker_engine"
                       RESOURCE_LOCK mad_card_images)
endforeach()

# The SLURM commands from C (submit, queue, cancel, final states) on the same cluster; and
# on a cluster without accounting (final states from scontrol, not sacct), which needs one
# of its own.
add_executable(slurm_tool ${CMAKE_SOURCE_DIR}/tests/scaleout/slurm_tool.c)
target_link_libraries(slurm_tool PRIVATE rm)
add_executable(live_slurm ${CMAKE_SOURCE_DIR}/tests/scaleout/live_slurm.c)
target_link_libraries(live_slurm PRIVATE rm)
target_include_directories(live_slurm PRIVATE ${CMAKE_SOURCE_DIR}/tests/unit)
add_dependencies(slurm_tool live_slurm)
add_test(NAME scaleout.slurm_live
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/scaleout/slurm_live.sh $<TARGET_FILE:slurm_tool>
                 $<TARGET_FILE:run_models> ${CMAKE_SOURCE_DIR} c_api)
set_tests_properties(scaleout.slurm_live PROPERTIES LABELS "integration;scaleout;slurm"
                     TIMEOUT 300 ENVIRONMENT RM_SCALEOUT_ENV=${RM_SCALEOUT_ENV}
                     FIXTURES_REQUIRED "scaleout_servers;docker_engine")
add_test(NAME scaleout.slurm_nodbd
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/scaleout/nodbd.sh $<TARGET_FILE:slurm_tool>
                 $<TARGET_FILE:run_models> ${CMAKE_SOURCE_DIR})
set_tests_properties(scaleout.slurm_nodbd PROPERTIES LABELS "integration;scaleout;slurm"
                     TIMEOUT 300 FIXTURES_REQUIRED docker_engine)
