# Fault-injection helpers for the integration tests of issue 14 (tests/faults/README.md),
# and tests that the helpers themselves work: a helper that silently does nothing would make
# every fault test pass.
add_executable(hung_engine ${CMAKE_SOURCE_DIR}/tests/faults/hung_engine.c)

foreach(c hung_engine_silent hung_engine_ping hung_engine_proxy proxy_faults private_dockerd
          full_disk failing_disk)
  add_test(NAME faults.${c}
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/faults/check-helpers.sh ${c}
                   $<TARGET_FILE:hung_engine> ${CMAKE_SOURCE_DIR})
  # 77: the case needs root (a mount, a second dockerd) and is skipped without it.
  set_tests_properties(faults.${c} PROPERTIES LABELS faults TIMEOUT 180 SKIP_RETURN_CODE 77)
endforeach()
# The private dockerd case starts a second engine: keep it out of the way of the others.
set_tests_properties(faults.private_dockerd PROPERTIES RUN_SERIAL TRUE)

# The lint tests in tests/lint/ do not look in tests/faults/ (tools/*.sh they do check).
find_program(SHELLCHECK shellcheck)
if(SHELLCHECK)
  file(GLOB RM_FAULT_SCRIPTS ${CMAKE_SOURCE_DIR}/tests/faults/*.sh)
  add_test(NAME lint.shellcheck_faults COMMAND ${SHELLCHECK} -x -S warning ${RM_FAULT_SCRIPTS}
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set_tests_properties(lint.shellcheck_faults PROPERTIES LABELS lint)
else()
  rm_tool_missing_test(lint.shellcheck_faults shellcheck lint)
endif()
find_program(CLANG_FORMAT clang-format)
if(CLANG_FORMAT)
  add_test(NAME lint.clang_format_faults
           COMMAND ${CLANG_FORMAT} --dry-run -Werror ${CMAKE_SOURCE_DIR}/tests/faults/hung_engine.c
                   ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz_context.c)
  set_tests_properties(lint.clang_format_faults PROPERTIES LABELS lint)
else()
  rm_tool_missing_test(lint.clang_format_faults clang-format lint)
endif()
