# Results and CI outputs, tested with their real consumers: one database test body against
# SQLite and a private PostgreSQL server (tests/results/pg.sh), JUnit against the schema
# with xmllint, the HTML report in headless Chromium, `report ci` end to end through the
# binary, and a real run on the Docker engine with a planted regression.
add_executable(results_db_body ${CMAKE_SOURCE_DIR}/tests/results/db_body.c)
target_link_libraries(results_db_body PRIVATE rm)
target_include_directories(results_db_body PRIVATE ${CMAKE_SOURCE_DIR}/tests/unit)

set(RM_RESULTS_ARGS $<TARGET_FILE:run_models> ${CMAKE_SOURCE_DIR}
    $<TARGET_FILE:results_db_body> ${CMAKE_BINARY_DIR}/results-pg.state)
function(rm_results_case name)
  add_test(NAME results.${name}
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/results/cases.sh ${name} ${RM_RESULTS_ARGS})
  set_tests_properties(results.${name} PROPERTIES LABELS results TIMEOUT 300 ${ARGN})
endfunction()

rm_results_case(pg_start FIXTURES_SETUP postgres)
rm_results_case(pg_stop FIXTURES_CLEANUP postgres)
rm_results_case(db_sqlite)
rm_results_case(db_postgresql FIXTURES_REQUIRED postgres)
rm_results_case(db_migrate_v2 FIXTURES_REQUIRED postgres)
rm_results_case(export_both FIXTURES_REQUIRED postgres)
rm_results_case(junit_schema)
rm_results_case(html_chromium)
rm_results_case(html_power)
rm_results_case(html_layout)
rm_results_case(perf_csv_faults)
rm_results_case(report_ci)
rm_results_case(history_gate)
rm_results_case(accept)
rm_results_case(references)
rm_results_case(history_memory)
rm_results_case(suite_command)
rm_results_case(config_gate)
rm_results_case(mad_cells)
rm_results_case(sweep_errors)
rm_results_case(docker_regression)
set_tests_properties(results.docker_regression PROPERTIES FIXTURES_REQUIRED "docker_engine;postgres")
rm_results_case(suite_run)
rm_results_case(sweep_run)
set_tests_properties(results.sweep_run PROPERTIES FIXTURES_REQUIRED docker_engine)
set_tests_properties(results.suite_run PROPERTIES FIXTURES_REQUIRED "docker_engine;postgres")

# The detector's simulations (false alarms, power, delay, calibration): built, not run by
# ctest; tools/detect-sim.sh drives it.
add_executable(detect_sim ${CMAKE_SOURCE_DIR}/tests/results/detect_sim.c)
target_link_libraries(detect_sim PRIVATE rm)
