# The project's own shell scripts pass shellcheck (warnings and errors), and the C sources
# are clang-formatted, when those tools are installed (tools/test.sh installs them).
find_program(SHELLCHECK shellcheck)
if(SHELLCHECK)
  file(GLOB RM_SHELL_SCRIPTS ${CMAKE_SOURCE_DIR}/tools/*.sh ${CMAKE_SOURCE_DIR}/tests/*.sh
       ${CMAKE_SOURCE_DIR}/tests/integration/*.sh ${CMAKE_SOURCE_DIR}/tests/lint/*.sh
       ${CMAKE_SOURCE_DIR}/tests/compat/*.sh ${CMAKE_SOURCE_DIR}/tests/results/*.sh
       ${CMAKE_SOURCE_DIR}/scripts/smoke/*.sh ${CMAKE_SOURCE_DIR}/tests/telemetry/*.sh
       ${CMAKE_SOURCE_DIR}/tests/telemetry/nvidia-smi
       ${CMAKE_SOURCE_DIR}/.ci/run)
  add_test(NAME lint.shellcheck COMMAND ${SHELLCHECK} -x -S warning ${RM_SHELL_SCRIPTS}
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set_tests_properties(lint.shellcheck PROPERTIES LABELS lint)
else()
  rm_tool_missing_test(lint.shellcheck shellcheck lint)
endif()
find_program(CLANG_FORMAT clang-format)
if(CLANG_FORMAT)
  file(GLOB_RECURSE RM_C_SOURCES ${CMAKE_SOURCE_DIR}/src/*.c ${CMAKE_SOURCE_DIR}/src/*.h
       ${CMAKE_SOURCE_DIR}/include/*.h)
  add_test(NAME lint.clang_format COMMAND ${CLANG_FORMAT} --dry-run -Werror ${RM_C_SOURCES})
  set_tests_properties(lint.clang_format PROPERTIES LABELS lint)
else()
  rm_tool_missing_test(lint.clang_format clang-format lint)
endif()
# The README's option table and --help come from the one option table (src/cmd/options.c).
add_test(NAME lint.options_table
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/lint/options-table.sh ${CMAKE_SOURCE_DIR}
                 $<TARGET_FILE:run_models>)
set_tests_properties(lint.options_table PROPERTIES LABELS lint)
# Every public header compiles alone, as git's hdr-check does: a header includes what it
# uses.
list(TRANSFORM DEPS_INCLUDE_DIRS PREPEND "-I" OUTPUT_VARIABLE RM_HDR_CHECK_FLAGS)
add_test(NAME lint.header_check
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/lint/header-check.sh ${CMAKE_SOURCE_DIR}
                 ${CMAKE_C_COMPILER} ${RM_HDR_CHECK_FLAGS})
set_tests_properties(lint.header_check PROPERTIES LABELS lint)
# No function in src/ over 80 lines (tests/lint/function-length.sh).
add_test(NAME lint.function_length
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/lint/function-length.sh ${CMAKE_SOURCE_DIR} 80)
set_tests_properties(lint.function_length PROPERTIES LABELS lint)
# Every unit test is a TEST(name) that its program registers and runs (tests/unit/check.h).
add_test(NAME lint.unit_tests
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/lint/unit-tests.sh ${CMAKE_SOURCE_DIR}
                 ${CMAKE_BINARY_DIR})
set_tests_properties(lint.unit_tests PROPERTIES LABELS lint)
# The layer order of docs/architecture.md (its module table, top down): no file includes the
# header of a module above its own; the second test shows the lint fails on a planted one.
add_test(NAME lint.layers COMMAND bash ${CMAKE_SOURCE_DIR}/tests/lint/layers.sh ${CMAKE_SOURCE_DIR})
add_test(NAME lint.layers_catches
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/lint/layers-catches.sh ${CMAKE_SOURCE_DIR})
set_tests_properties(lint.layers lint.layers_catches PROPERTIES LABELS lint)
# The rules docs/architecture.md states for the whole tree (tests/lint/rules.sh), and that the
# lint fails on each one broken.
add_test(NAME lint.rules COMMAND bash ${CMAKE_SOURCE_DIR}/tests/lint/rules.sh ${CMAKE_SOURCE_DIR}
                                 $<TARGET_FILE:rm>)
add_test(NAME lint.rules_catches
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/lint/rules-catches.sh ${CMAKE_SOURCE_DIR}
                 $<TARGET_FILE:rm>)
set_tests_properties(lint.rules lint.rules_catches PROPERTIES LABELS lint)
