# madengine compatibility cases (docs/compat.md): the real run_models binary on a copy of
# tests/compat/dummy (madengine's dummy fixture in shape) against a real Docker engine.
# One ctest test per case of tests/compat/cases.sh. They share image names (ci-dummy_...),
# as madengine's do, so they run one at a time (RESOURCE_LOCK).
set(RM_COMPAT_CASES
    tags_subset tags_union name_is_tag dockerfile_glob discover_static discover_args
    discover_dynamic discover_multiple cli_tags_nargs
    ctx_default ctx_file_1 ctx_all_matching ctx_override ctx_override_file ctx_override_priority
    base_docker_override container_image_override container_image_pull
    docker_env_vars docker_mounts
    data_local data_local_fail data_mirrorlocal data_network data_custom data_custom_fail
    timeout_model timeout_cli timeout_zero timeout_logged
    output_option skip_gpu_arch skip_gpu_arch_nvidia disable_skip_gpu_arch
    multi_results multi_results_columns multi_results_bad_rows multi_results_workspace
    perf_csv_foreign perf_csv_unwritable cli_spellings
    hostile_paths hostile_symlink
    mad_dry_run mad_data_unserved mad_timeout_none mad_container mad_clone_submodules
    mad_perf_csv_madengine mad_perf_csv_crlf
    skip_gpu_arch_nvidia_product scope_rule context_keys cli_madengine_spellings build_pull
    sensitive_mounts
    tools_A tools_stacked tools_log_order tools_builtin_dry_run tools_unknown tools_fail_pre
    tools_fail_post tools_context_scripts tools_config_option tools_builtin_run tools_archive)

# Cases expected to fail (none now: issue 10's phase 2 made every case pass). A case listed
# here runs with WILL_FAIL, so ctest flags the list as out of date when the case passes.
set(RM_COMPAT_PENDING)

foreach(c ${RM_COMPAT_CASES})
  add_test(NAME compat.${c}
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/compat/cases.sh ${c}
                   $<TARGET_FILE:run_models> ${CMAKE_SOURCE_DIR})
  set_tests_properties(compat.${c} PROPERTIES LABELS compat TIMEOUT 300
                       RESOURCE_LOCK compat_images FIXTURES_REQUIRED docker_engine)
  if(c IN_LIST RM_COMPAT_PENDING)
    set_tests_properties(compat.${c} PROPERTIES WILL_FAIL TRUE)
  endif()
endforeach()
