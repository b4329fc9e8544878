# Parser tests, included by the top CMakeLists.txt.
#   parsers.golden  real log fixtures -> exact `parse --format csv` output, and auto's pick
#   parsers.units   the cleaning / number / series rules on small synthetic lines
#   parsers.cli_*   the `run_models parse` subcommand's exit codes
# bench_parsers is built but not run by ctest: tools/bench-parsers.sh drives it.

add_executable(parsers_golden ${CMAKE_SOURCE_DIR}/tests/parsers/golden.c)
target_link_libraries(parsers_golden PRIVATE rm)
add_test(NAME parsers.golden COMMAND parsers_golden ${CMAKE_SOURCE_DIR}/tests/parsers)
set_tests_properties(parsers.golden PROPERTIES LABELS parsers)

add_executable(parsers_units ${CMAKE_SOURCE_DIR}/tests/parsers/test_parser_units.c)
target_link_libraries(parsers_units PRIVATE rm)
target_include_directories(parsers_units PRIVATE ${CMAKE_SOURCE_DIR}/tests/unit
                                                 ${CMAKE_SOURCE_DIR}/src/parsers)
add_test(NAME parsers.units COMMAND parsers_units)
set_tests_properties(parsers.units PROPERTIES LABELS parsers)

add_executable(bench_parsers ${CMAKE_SOURCE_DIR}/tests/parsers/bench_parsers.c)
target_link_libraries(bench_parsers PRIVATE rm)

add_test(NAME parsers.cli_found
         COMMAND run_models parse --parser megatron
                 ${CMAKE_SOURCE_DIR}/tests/parsers/megatron/megatron_lm_issue756_mixtral.log)
add_test(NAME parsers.cli_nothing
         COMMAND run_models parse --parser mlperf
                 ${CMAKE_SOURCE_DIR}/tests/parsers/megatron/megatron_lm_issue756_mixtral.log)
set_tests_properties(parsers.cli_nothing PROPERTIES WILL_FAIL TRUE)
add_test(NAME parsers.cli_json
         COMMAND run_models parse --format json
                 ${CMAKE_SOURCE_DIR}/tests/parsers/torchtitan/torchtitan_pr1437_flex.log)
set_tests_properties(parsers.cli_found parsers.cli_nothing parsers.cli_json
                     PROPERTIES LABELS parsers)
