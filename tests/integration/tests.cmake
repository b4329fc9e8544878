# Integration tests: the real run_models binary against a real Docker engine
# (tools/ensure-docker.sh finds one or starts a private dockerd). One ctest test per case
# in tests/integration/cases.sh; the last one checks that the suite left no container.
set(RM_INTEGRATION_CASES
    smoke failing_script timeout multiple_results broken_build broken_registry unknown_tag
    keep_alive sigint sigterm dead_daemon stdout_only_last_wins keep_model_dir
    secret_env list_command args_are_argv build_cache
    dry_run_mi300x secret_nowhere repeat_summary devices keep_alive_running gpu_less_seed
    context_file tunableop_run progress_plain doctor workload_parser double_sigint
    build_secret mlperf_score telemetry telemetry_node_run telemetry_nvidia preflight
    provenance_compare no_fuse)
foreach(c ${RM_INTEGRATION_CASES})
  add_test(NAME integration.${c}
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/integration/cases.sh ${c}
                   $<TARGET_FILE:run_models> ${CMAKE_SOURCE_DIR})
  set_tests_properties(integration.${c} PROPERTIES LABELS integration TIMEOUT 300
                       FIXTURES_REQUIRED docker_engine)
endforeach()
add_test(NAME integration.engine_up
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/integration/cases.sh engine_up
                 $<TARGET_FILE:run_models> ${CMAKE_SOURCE_DIR})
set_tests_properties(integration.engine_up PROPERTIES FIXTURES_SETUP docker_engine
                     LABELS integration)
add_test(NAME integration.no_container_left
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/integration/cases.sh no_container_left
                 $<TARGET_FILE:run_models> ${CMAKE_SOURCE_DIR})
set_tests_properties(integration.no_container_left PROPERTIES FIXTURES_CLEANUP docker_engine
                     LABELS integration)

# Fault cases (docs/reliability.md): each injects its fault itself. hung_engine needs the
# fake engine of tests/faults (HUNG_ENGINE below, when that helper is built).
set(RM_FAULT_CASES kill9_watchdog kill9_reap sighup sigpipe engine_dies disk_full log_per_run
                   outputs_first secrets hung_engine long_lines
                   secret_outputs output_clash perf_symlink results_limits
                   oom_removed keep_dir_nodes engine_dies_build formula_cells
                   manifest_per_run ci_outputs_through gpu_detect_hang
                   wait_held attach_cut create_lost wait_dropped slow_engine
                   name_collide build_timeout tools_bulk low_inputs retries)
foreach(c ${RM_FAULT_CASES})
  add_test(NAME fault.${c}
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/integration/faults.sh ${c}
                   $<TARGET_FILE:run_models> ${CMAKE_SOURCE_DIR}
                   $<$<TARGET_EXISTS:hung_engine>:$<TARGET_FILE:hung_engine>>)
  set_tests_properties(fault.${c} PROPERTIES LABELS "integration;fault" TIMEOUT 300
                       FIXTURES_REQUIRED docker_engine)
endforeach()

# What a user sees (tests/integration/terminal.sh): the status line at 80 columns in a real
# terminal (tmux), colour on a terminal and never with NO_COLOR, --color never or a pipe, the
# summary tables within 80 columns, --help wrapped, the man page and the bash completion, the
# engine found without DOCKER_HOST.
set(RM_TERMINAL_CASES status_line colour summary help_width man_page completion engine_found)
foreach(c ${RM_TERMINAL_CASES})
  add_test(NAME terminal.${c}
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/integration/terminal.sh ${c}
                   $<TARGET_FILE:run_models> ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR})
  set_tests_properties(terminal.${c} PROPERTIES LABELS "integration;terminal" TIMEOUT 120
                       FIXTURES_REQUIRED docker_engine)
endforeach()

# Every README command line that needs no GPU and no cluster runs as written.
add_test(NAME integration.readme
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/integration/readme.sh $<TARGET_FILE:run_models>
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(integration.readme PROPERTIES LABELS integration TIMEOUT 300
                     FIXTURES_REQUIRED docker_engine)

# The first hour (tools/first-hour.sh): a fresh clone of the committed HEAD, the README's first
# command twice (at most 30 lines, the second without a build), then a clean login shell. It
# installs under the build folder, not /usr/local. The smoke image is shared with the cases
# that run the shipped smoke model: they must not rebuild it between the two runs.
add_test(NAME firsthour.fresh_clone
         COMMAND env RM_PREFIX=${CMAKE_BINARY_DIR}/first-hour-prefix
                 bash ${CMAKE_SOURCE_DIR}/tools/first-hour.sh ${CMAKE_SOURCE_DIR})
set_tests_properties(firsthour.fresh_clone PROPERTIES LABELS "integration;firsthour" TIMEOUT 900
                     FIXTURES_REQUIRED docker_engine RESOURCE_LOCK smoke_image)
set_tests_properties(integration.smoke integration.gpu_less_seed integration.readme
                     PROPERTIES RESOURCE_LOCK smoke_image)

# The same runs on Podman's Docker-compatible API (tests/integration/podman.sh, docs/engines.md):
# a private rootful Podman service (tools/ensure-podman.sh); the cases above that need no
# Docker-only feature, unchanged with the engine switched (SCRIPT:CASE), then Podman's own.
# Few and fast: CI runs them on 2 cores.
set(RM_PODMAN_CASES
    cases:smoke cases:failing_script cases:broken_build cases:timeout cases:sigint
    cases:secret_nowhere cases:telemetry cases:multiple_results cases:keep_alive
    cases:keep_model_dir cases:devices faults:secrets faults:results_limits faults:kill9_reap
    compat:tools_log_order compat:build_pull
    engine_found doctor same_row nvidia_cdi manifest suite_gate rootless)
foreach(c ${RM_PODMAN_CASES})
  string(REPLACE ":" "." n ${c})
  add_test(NAME podman.${n}
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/integration/podman.sh ${c}
                   $<TARGET_FILE:run_models> ${CMAKE_SOURCE_DIR})
  set_tests_properties(podman.${n} PROPERTIES LABELS "integration;podman" TIMEOUT 300
                       FIXTURES_REQUIRED podman_engine SKIP_RETURN_CODE 77)
endforeach()
add_test(NAME podman.engine_up
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/integration/podman.sh engine_up
                 $<TARGET_FILE:run_models> ${CMAKE_SOURCE_DIR})
set_tests_properties(podman.engine_up PROPERTIES FIXTURES_SETUP podman_engine
                     LABELS "integration;podman")
add_test(NAME podman.no_container_left
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/integration/podman.sh no_container_left
                 $<TARGET_FILE:run_models> ${CMAKE_SOURCE_DIR})
set_tests_properties(podman.no_container_left PROPERTIES FIXTURES_CLEANUP podman_engine
                     LABELS "integration;podman")
# same_row runs the smoke model on both engines: it shares the shipped smoke image's lock.
set_tests_properties(podman.same_row PROPERTIES FIXTURES_REQUIRED "podman_engine;docker_engine"
                     RESOURCE_LOCK smoke_image)
