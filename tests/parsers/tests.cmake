# Parser tests, included by the top CMakeLists.txt. All walk or follow the parser table.
#   parsers.golden  every real log fixture under tests/parsers/<parser>/ (and none/) -> exact
#                   `parse --format csv` output, and auto's pick (the folder's parser)
#   parsers.units   cleaning / number / key / warm-up / rank / broken-line / auto rules on
#                   small synthetic lines
#   parsers.cli_*   the `run_models parse` subcommand: exit codes, --list-parsers, --explain
# bench_parsers is built but not run by ctest: tools/bench-parsers.sh drives it.

set(RM_PARSER_FIXTURES ${CMAKE_SOURCE_DIR}/tests/parsers)

add_executable(parsers_golden ${RM_PARSER_FIXTURES}/golden.c)
target_link_libraries(parsers_golden PRIVATE rm)
add_test(NAME parsers.golden COMMAND parsers_golden ${RM_PARSER_FIXTURES})

add_executable(parsers_units ${RM_PARSER_FIXTURES}/test_parser_units.c)
target_link_libraries(parsers_units PRIVATE rm)
target_include_directories(parsers_units PRIVATE ${CMAKE_SOURCE_DIR}/tests/unit
                                                 ${CMAKE_SOURCE_DIR}/src/parsers)
add_test(NAME parsers.units COMMAND parsers_units ${RM_PARSER_FIXTURES})

add_executable(bench_parsers ${RM_PARSER_FIXTURES}/bench_parsers.c)
target_link_libraries(bench_parsers PRIVATE rm)

# exit 0: a figure was found
add_test(NAME parsers.cli_found
         COMMAND run_models parse --parser megatron
                 ${RM_PARSER_FIXTURES}/megatron/megatron_lm_issue756_mixtral.log)
# exit 1: no figure (the wrong parser; a log no parser recognises)
add_test(NAME parsers.cli_nothing
         COMMAND run_models parse --parser mlperf
                 ${RM_PARSER_FIXTURES}/megatron/megatron_lm_issue756_mixtral.log)
add_test(NAME parsers.cli_unrecognised
         COMMAND run_models parse ${RM_PARSER_FIXTURES}/none/torchtitan_pr1317_model_print.log)
set_tests_properties(parsers.cli_nothing parsers.cli_unrecognised PROPERTIES WILL_FAIL TRUE)
add_test(NAME parsers.cli_json
         COMMAND run_models parse --format json
                 ${RM_PARSER_FIXTURES}/torchtitan/torchtitan_pr1437_flex.log)
set_tests_properties(parsers.cli_json PROPERTIES
  PASS_REGULAR_EXPRESSION "\"aggregate\": \"mean\"")
add_test(NAME parsers.cli_list COMMAND run_models parse --list-parsers)
set_tests_properties(parsers.cli_list PROPERTIES
  PASS_REGULAR_EXPRESSION "generic\nllm_foundry\nmegatron\nnemo\ntorchtitan\nmlperf\nhf_trainer\nauto\n")
add_test(NAME parsers.cli_explain
         COMMAND run_models parse --explain
                 ${RM_PARSER_FIXTURES}/nemo/nemo_speech_pr10128_progress_printer.log)
set_tests_properties(parsers.cli_explain PROPERTIES
  PASS_REGULAR_EXPRESSION "nemo +300 +3  taken at line 6: reached 300.*torchtitan +0 +0  dropped: no line matched")
add_test(NAME parsers.cli_warmup_bad COMMAND run_models parse --warmup x
                 ${RM_PARSER_FIXTURES}/nemo/nemo_speech_pr10128_progress_printer.log)
set_tests_properties(parsers.cli_warmup_bad PROPERTIES WILL_FAIL TRUE)

set_tests_properties(parsers.golden parsers.units parsers.cli_found parsers.cli_nothing
                     parsers.cli_unrecognised parsers.cli_json parsers.cli_list
                     parsers.cli_explain parsers.cli_warmup_bad PROPERTIES LABELS parsers)
