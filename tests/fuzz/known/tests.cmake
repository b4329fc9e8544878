# Known bugs found by the fuzzers and not fixed yet: tests/fuzz/known/<harness>/<input>.
# Each input is replayed as a test that passes only while the harness still aborts on it
# (SIGABRT, exit 134 through sh): the suite stays green while the bug is there, and the test
# turns red the day the bug is fixed, the reminder to move the input into
# tests/fuzz/corpus/<harness>/ as a regression case. Any other failure (a missing binary,
# a different crash) is red too.
file(GLOB RM_KNOWN_INPUTS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/fuzz/known/*/*)
foreach(input ${RM_KNOWN_INPUTS})
  get_filename_component(dir ${input} DIRECTORY)
  get_filename_component(harness ${dir} NAME)
  get_filename_component(case ${input} NAME)
  if(NOT TARGET replay_${harness} OR case MATCHES "\\.(md|cmake)$")
    continue()
  endif()
  add_test(NAME fuzz_known.${harness}.${case}
           COMMAND sh -c "\"$0\" \"$1\" >/dev/null 2>&1; rc=$?; echo \"exit $rc (want 134)\"; [ $rc = 134 ]"
                   $<TARGET_FILE:replay_${harness}> ${input})
  set_tests_properties(fuzz_known.${harness}.${case} PROPERTIES LABELS fuzz)
endforeach()
