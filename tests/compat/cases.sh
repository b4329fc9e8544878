#!/usr/bin/env bash
# madengine compatibility cases: usage: cases.sh CASE RUN_MODELS SOURCE_DIR
# Each case copies tests/compat/dummy (a folder in the shape of madengine's
# tests/fixtures/dummy) to a temp dir, runs the real binary against the engine at
# $DOCKER_HOST on a stand-in AMD host (two gfx942 GPUs: fake sysfs and device nodes), and
# checks what madengine's own test of the same scenario checks: the verdict (status) and
# the perf rows (model names, values, columns). docs/compat.md maps each case to
# madengine's test; tests/compat/tests.cmake lists the cases that wait for runner changes.
set -euo pipefail
case_name=$1
RM=$2
SRC=$3
DOCKER_HOST=$("$SRC/tools/ensure-docker.sh")
export DOCKER_HOST
SOCK=${DOCKER_HOST#unix://}
WORK=$(mktemp -d)
trap '[ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"' EXIT

fail() {
	echo "FAIL [$case_name]: $*" >&2
	exit 1
}
api() { # METHOD PATH [curl args]
	local m=$1 p=$2
	shift 2
	curl -fsS --unix-socket "$SOCK" -X "$m" "http://localhost$p" "$@"
}
# The value of column NAME in row N (1 = first data row).
csv_col() { # FILE N NAME
	python3 - "$@" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
n = int(sys.argv[2])
print(rows[n - 1].get(sys.argv[3], "") if len(rows) >= n else "")
PY
}
rows() { # FILE: number of data rows
	python3 -c 'import csv,sys; print(len(list(csv.DictReader(open(sys.argv[1], newline="")))))' "$1"
}
# model:status pairs of all rows, space separated
verdicts() { # FILE
	python3 -c 'import csv,sys; print(" ".join(r["model"]+":"+r["status"] for r in csv.DictReader(open(sys.argv[1], newline=""))))' "$1"
}

# The base image of the fixture's Dockerfiles: scratch + busybox, built once per engine.
base_image() { # TAG [ENV_LINE]
	api GET "/images/$1/json" >/dev/null 2>&1 && return 0
	local ctx=$WORK/base-$RANDOM
	mkdir -p "$ctx"
	cp "$SRC/docker/smoke/busybox" "$ctx/busybox"
	cat >"$ctx/Dockerfile" <<EOF
FROM scratch
COPY busybox /bin/busybox
RUN ["/bin/busybox", "--install", "-s", "/bin"]
RUN printf '#!/bin/sh\nexec /bin/sh "\$@"\n' > /bin/bash && chmod 755 /bin/bash && mkdir -p /tmp /myworkspace && echo "video:x:44:" > /etc/group && echo "root:x:0:0:root:/root:/bin/sh" > /etc/passwd
${2:-}
EOF
	tar -C "$ctx" -cf "$ctx.tar" . &&
		api POST "/build?t=$1&rm=1" -H 'Content-Type: application/x-tar' --data-binary "@$ctx.tar" >"$ctx.log" ||
		fail "cannot build $1"
	grep -q errorDetail "$ctx.log" && fail "building $1: $(cat "$ctx.log")"
	return 0
}

[ -f "$SRC/docker/smoke/busybox" ] || fail "docker/smoke/busybox missing: run tools/setup.sh"
base_image rm-compat-base:1
# mad_* cases run on tests/compat/mad (ROCm/MAD's registry), the others on madengine's fixture
fixture=dummy
case "$case_name" in mad_*) fixture=mad ;; esac
if [ "$fixture" = mad ] && ! api GET "/images/rm-compat-mad:1/json" >/dev/null 2>&1; then
	# the stand-in for MAD's ROCm images: the base, and a git that makes no network calls
	mkdir -p "$WORK/mad-image"
	cp "$SRC/tests/compat/mad/stand-in/git" "$WORK/mad-image/git"
	printf 'FROM rm-compat-base:1\nCOPY git /usr/bin/git\n' >"$WORK/mad-image/Dockerfile"
	tar -C "$WORK/mad-image" -cf "$WORK/mad-image.tar" . &&
		api POST "/build?t=rm-compat-mad:1&rm=1" -H 'Content-Type: application/x-tar' \
			--data-binary "@$WORK/mad-image.tar" >"$WORK/mad-image.log" || fail "cannot build rm-compat-mad:1"
	grep -q errorDetail "$WORK/mad-image.log" && fail "building rm-compat-mad:1: $(cat "$WORK/mad-image.log")"
fi
# MAD's Dockerfiles keep their real base images: real runs build on the stand-in instead
MADBASE='{"docker_build_arg": {"BASE_DOCKER": "rm-compat-mad:1"}}'
MI300X='{"gpu_vendor": "AMD", "MAD_SYSTEM_GPU_ARCHITECTURE": "gfx942", "MAD_SYSTEM_NGPUS": 8}'
cd "$WORK"
cp -r "$SRC/tests/compat/$fixture" folder
cd folder
# A stand-in AMD host: two gfx942 GPUs (fake sysfs, device nodes that are /dev/null).
mkdir -p "$WORK/dev/dri"
for i in 1 2; do
	mkdir -p "$WORK/sys/class/kfd/kfd/topology/nodes/$i"
	printf 'simd_count 304\ngfx_target_version 90402\ndrm_render_minor %d\n' $((127 + i)) \
		>"$WORK/sys/class/kfd/kfd/topology/nodes/$i/properties"
done
mkdir -p "$WORK/sys/class/kfd/kfd/topology/nodes/0"
printf 'cpu_cores_count 8\nsimd_count 0\ngfx_target_version 0\n' >"$WORK/sys/class/kfd/kfd/topology/nodes/0/properties"
mknod "$WORK/dev/kfd" c 1 3 && mknod "$WORK/dev/dri/renderD128" c 1 3 && mknod "$WORK/dev/dri/renderD129" c 1 3 &&
	mknod "$WORK/dev/fuse" c 1 3 ||
	fail "mknod"
HOSTCTX="{\"docker_device_root\": \"$WORK/dev\"}"
# the stand-in GPU's product name (sysfs) and ROCm version (madengine's MAD_SYSTEM_* facts)
mkdir -p "$WORK/sys/class/drm/renderD128/device" "$WORK/rocm/.info"
echo "AMD Instinct MI300X OAM" >"$WORK/sys/class/drm/renderD128/device/product_name"
echo "6.4.1-120" >"$WORK/rocm/.info/version"
export ROCM_PATH=$WORK/rocm

# run_models on the stand-in host; output in out.txt/err.txt, exit code in $rc
rc=0
rm_run() {
	set +e
	RM_SYSFS_ROOT=$WORK/sys "$RM" "$@" --additional-context "$HOSTCTX" >out.txt 2>err.txt
	rc=$?
	set -e
}
# the same with the host context given first (for cases passing their own context)
rm_run_ctx() { # CTX ARGS...
	local ctx=$1
	shift
	set +e
	RM_SYSFS_ROOT=$WORK/sys "$RM" "$@" --additional-context "$HOSTCTX" --additional-context "$ctx" >out.txt 2>err.txt
	rc=$?
	set -e
}
want_rc() { [ "$rc" = "$1" ] || fail "exit code $rc, want $1: $(cat err.txt) $(cat perf.csv 2>/dev/null)"; }
# Each extended regex matches a whole line of FILE, each on a later line than the one before.
in_order() { # FILE REGEX...
	local f=$1 at=0 n
	shift
	for re in "$@"; do
		n=$(tail -n +"$((at + 1))" "$f" | grep -nE -m1 -- "^($re)\$" | cut -d: -f1 || true)
		[ -n "$n" ] || fail "'$re' is not in $f after line $at: $(cat "$f")"
		at=$((at + n))
	done
}
# A model that prints the tools' variables and its args (the tools cases)
tools_model() {
	printf '#!/bin/bash\necho "model sees STUB_PROFILER=$STUB_PROFILER STUB_LEVEL=$STUB_LEVEL ROCBLAS_LAYER=$ROCBLAS_LAYER args [$*]"\n[ -z "$ROCBLAS_LOG_BENCH_PATH" ] || echo "./rocblas-bench -f gemm" > "$ROCBLAS_LOG_BENCH_PATH"\necho "performance: 5 samples_per_second"\n' >scripts/dummy/run_tools.sh
	jq '. + [(.[] | select(.name == "dummy") | .name = "dummy_tools" |
		.scripts = "scripts/dummy/run_tools.sh" | .args = "--batch 8" | .tags = ["dummy_tools"])]' models.json >m && mv m models.json
}
want_verdicts() { # EXPECTED [FILE]
	local got
	got=$(verdicts "${2:-perf.csv}")
	[ "$got" = "$1" ] || fail "verdicts '$got', want '$1'; $(cat err.txt)"
}

case "$case_name" in

# --- registry and selection (madengine tests/test_tags.py, tests/test_discover.py) -------
tags_subset) # test_can_select_model_subset_with_commandline_tag_argument
	rm_run --tags dummy_group_1 --live-output
	want_rc 0
	want_verdicts "dummy:SUCCESS dummy2:SUCCESS"
	[ "$(csv_col perf.csv 1 docker_image)" = ci-dummy_dummy.ubuntu.amd ] || fail "image $(csv_col perf.csv 1 docker_image)"
	[ "$(csv_col perf.csv 2 docker_image)" = ci-dummy2_dummy.ubuntu.amd ] || fail "image 2"
	grep -q "ci-dummy_dummy" out.txt err.txt || fail "live output does not name the image"
	;;
tags_union) # test_all_models_matching_any_tag_selected_with_multiple_tags
	rm_run --tags dummy_group_1,dummy_group_2
	want_rc 0
	# madengine runs dummy2 twice (both tags pick it); it runs once here, on purpose
	want_verdicts "dummy:SUCCESS dummy2:SUCCESS dummy3:SUCCESS"
	;;
name_is_tag) # test_model_names_are_automatically_tags (exit 3 before: 'dummy' refused)
	rm_run --tags dummy
	want_rc 0
	want_verdicts "dummy:SUCCESS"
	[ "$(csv_col perf.csv 1 docker_file)" = docker/dummy.ubuntu.amd.Dockerfile ] || fail "docker_file"
	;;
dockerfile_glob) # docker/dummy.* takes dummy's files only, not dummy_sglang*'s (RUN false)
	RM_SYSFS_ROOT=$WORK/sys "$RM" list --tags dummy --additional-context "$HOSTCTX" --format json >list.txt
	[ "$(jq -r '.[].dockerfile' list.txt)" = docker/dummy.ubuntu.amd.Dockerfile ] || fail "list: $(cat list.txt)"
	rm_run --tags dummy_group_1
	want_rc 0
	[ "$(rows perf.csv)" = 2 ] || fail "rows"
	;;
discover_static) # test_discover.py::test_static
	rm_run --tags dummy2/model2
	want_rc 0
	want_verdicts "dummy2/model2:SUCCESS"
	[ "$(csv_col perf.csv 1 docker_image)" = ci-dummy2_model2_dummy.ubuntu.amd ] || fail "image"
	[ -f dummy2_model2.live.log ] || [ -f dummy2_model2_dummy.ubuntu.amd.live.log ] || fail "log name: $(ls)"
	;;
discover_args) # test_discover.py::test_additional_args
	rm_run --tags dummy2/model2:batch-size=32
	want_rc 0
	want_verdicts "dummy2/model2:SUCCESS"
	csv_col perf.csv 1 args | grep -q -- "--batch-size 32" || fail "args: $(csv_col perf.csv 1 args)"
	;;
discover_dynamic) # test_discover.py::test_dynamic (opt-in: it runs the folder's Python)
	rm_run --tags dummy3/model4
	[ "$rc" = 3 ] || fail "not refused without the opt-in: $rc"
	grep -q "scripts/dummy3/get_models_json.py" err.txt || fail "refusal does not name the file: $(cat err.txt)"
	grep -q "RM_DYNAMIC_REGISTRY=run" err.txt || fail "refusal does not say what to do"
	RM_DYNAMIC_REGISTRY=run rm_run --tags dummy3/model4
	want_rc 0
	want_verdicts "dummy3/model4:SUCCESS"
	[ "$(csv_col perf.csv 1 docker_file)" = scripts/dummy3/docker/dummy.ubuntu.amd.Dockerfile ] || fail "docker_file"
	[ "$(csv_col perf.csv 1 docker_image)" = ci-dummy3_model4_dummy.ubuntu.amd ] || fail "image"
	;;
discover_multiple) # test_discover.py::test_multiple (three --tags; madengine: --tags a b c)
	RM_DYNAMIC_REGISTRY=run rm_run --tags dummy_test_group_1 --tags dummy_test_group_2 --tags dummy_test_group_3
	want_rc 0
	want_verdicts "dummy:SUCCESS dummy2/model1:SUCCESS dummy2/model2:SUCCESS dummy3/model3:SUCCESS dummy3/model4:SUCCESS"
	;;
cli_tags_nargs) # madengine/MAD spelling: --tags a b c (argparse nargs='+')
	RM_DYNAMIC_REGISTRY=run rm_run --tags dummy_test_group_1 dummy_test_group_2 dummy_test_group_3
	want_rc 0
	want_verdicts "dummy:SUCCESS dummy2/model1:SUCCESS dummy2/model2:SUCCESS dummy3/model3:SUCCESS dummy3/model4:SUCCESS"
	;;

# --- contexts and Dockerfile choice (tests/e2e/test_run_workflows.py::TestContexts) -------
ctx_default) # test_dockerfile_picked_on_detected_context[None-0]: no ctx_test file
	rm_run --tags dummy_ctxtest
	want_rc 0
	want_verdicts "dummy_ctxtest:SUCCESS"
	[ "$(csv_col perf.csv 1 performance)" = 0 ] || fail "performance $(csv_col perf.csv 1 performance)"
	;;
ctx_file_1) # test_dockerfile_picked_on_detected_context[1-1]: ctx_test file says 1
	echo 1 >ctx_test
	rm_run --tags dummy_ctxtest
	want_rc 0
	want_verdicts "dummy_ctxtest:SUCCESS"
	[ "$(csv_col perf.csv 1 performance)" = 1 ] || fail "performance"
	;;
ctx_all_matching) # test_all_dockerfiles_matching_context_executed: ctx_test file says 2
	echo 2 >ctx_test
	rm_run --tags dummy_ctxtest
	want_rc 0
	want_verdicts "dummy_ctxtest:SUCCESS dummy_ctxtest:SUCCESS"
	[ "$(csv_col perf.csv 1 docker_file) $(csv_col perf.csv 2 docker_file)" = \
		"docker/dummy_ctxtest.ctx2a.ubuntu.amd.Dockerfile docker/dummy_ctxtest.ctx2b.ubuntu.amd.Dockerfile" ] ||
		fail "docker_file columns"
	[ "$(csv_col perf.csv 1 performance)$(csv_col perf.csv 2 performance)" = 22 ] || fail "performance"
	;;
ctx_override) # test_can_override_context_with_additionalContext_commandline
	rm_run_ctx "{'ctx_test': '1'}" --tags dummy_ctxtest
	want_rc 0
	want_verdicts "dummy_ctxtest:SUCCESS"
	[ "$(csv_col perf.csv 1 performance)" = 1 ] || fail "performance"
	;;
ctx_override_file) # test_can_override_context_with_additionalContextFile_commandline
	echo '{ "ctx_test": "1" }' >ctx.json
	set +e
	RM_SYSFS_ROOT=$WORK/sys "$RM" --tags dummy_ctxtest --additional-context "$HOSTCTX" --additional-context-file ctx.json >out.txt 2>err.txt
	rc=$?
	set -e
	want_rc 0
	want_verdicts "dummy_ctxtest:SUCCESS"
	[ "$(csv_col perf.csv 1 performance)" = 1 ] || fail "performance"
	;;
ctx_override_priority) # test_additionalContext_commandline_overrides_additionalContextFile
	echo '{ "ctx_test": "2" }' >ctx.json
	set +e
	RM_SYSFS_ROOT=$WORK/sys "$RM" --tags dummy_ctxtest --additional-context-file ctx.json \
		--additional-context "$HOSTCTX" --additional-context "{'ctx_test': '1'}" >out.txt 2>err.txt
	rc=$?
	set -e
	want_rc 0
	want_verdicts "dummy_ctxtest:SUCCESS"
	[ "$(csv_col perf.csv 1 performance)" = 1 ] || fail "performance"
	;;
base_docker_override) # test_base_docker_override
	base_image rm-compat-alt:1 'ENV BASE_MARK=alt'
	rm_run_ctx "{'docker_build_arg': {'BASE_DOCKER': 'rm-compat-alt:1'}}" --tags dummy_ctxtest
	want_rc 0
	want_verdicts "dummy_ctxtest:SUCCESS"
	[ "$(csv_col perf.csv 1 performance)" = 0 ] || fail "performance"
	[ "$(csv_col perf.csv 1 base_docker)" = rm-compat-alt:1 ] || fail "base_docker $(csv_col perf.csv 1 base_docker)"
	;;
container_image_override) # test_docker_image_override: MAD_CONTAINER_IMAGE skips the build
	rm_run_ctx "{'docker_env_vars': {'ctxtest': '1'}, 'MAD_CONTAINER_IMAGE': 'rm-compat-base:1'}" --tags dummy_ctxtest
	want_rc 0
	want_verdicts "dummy_ctxtest:SUCCESS"
	[ "$(csv_col perf.csv 1 performance)" = 1 ] || fail "performance"
	[ "$(csv_col perf.csv 1 docker_image)" = rm-compat-base:1 ] || fail "docker_image $(csv_col perf.csv 1 docker_image)"
	[ ! -f dummy_ctxtest.build.log ] || fail "it built anyway"
	[ -z "$(csv_col perf.csv 1 docker_file)" ] || fail "docker_file $(csv_col perf.csv 1 docker_file)"
	# an image the engine lacks: the model's FAILURE, saying what to do
	rm -f perf.csv
	rm_run_ctx "{'MAD_CONTAINER_IMAGE': 'rm-compat-absent:1'}" --tags dummy
	want_rc 1
	want_verdicts "dummy:FAILURE"
	csv_col perf.csv 1 reason | grep -q "pulling it failed" || fail "reason: $(csv_col perf.csv 1 reason)"
	;;
container_image_pull) # an image the engine lacks is pulled first, as docker run does (here from
	# a private registry on 127.0.0.1)
	# shellcheck source=tests/registry.sh
	. "$SRC/tests/registry.sh"
	port=
	for p in $(shuf -i 15000-15999 -n 50); do
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || {
			port=$p
			break
		}
	done
	[ -n "$port" ] || fail "no free port for the registry"
	trap 'registry_stop "$WORK/registry" >/dev/null 2>&1; rm -rf "$WORK"' EXIT
	registry_start "$WORK/registry" "$port" >/dev/null || fail "cannot start the registry"
	ref=127.0.0.1:$port/rm-compat-pull
	api POST "/images/rm-compat-base:1/tag?repo=$ref&tag=1" >/dev/null
	api POST "/images/$ref/push?tag=1" -H 'X-Registry-Auth: e30=' >push.log
	! grep -q errorDetail push.log || fail "push: $(cat push.log)"
	api DELETE "/images/$ref:1" >/dev/null
	rm_run_ctx "{'docker_env_vars': {'ctxtest': '1'}, 'MAD_CONTAINER_IMAGE': '$ref:1'}" --tags dummy_ctxtest
	api DELETE "/images/$ref:1" >/dev/null 2>&1 || true
	want_rc 0
	want_verdicts "dummy_ctxtest:SUCCESS"
	[ "$(csv_col perf.csv 1 docker_image)" = "$ref:1" ] || fail "docker_image $(csv_col perf.csv 1 docker_image)"
	grep -q "/v2/rm-compat-pull/manifests/.*UpstreamClient(run_models)" "$WORK/registry/registry.log" || fail "not pulled: $(cat "$WORK/registry/registry.log")"
	;;
docker_env_vars) # test_docker_env_vars_override
	rm_run_ctx "{'docker_env_vars': {'ctxtest': '1'}}" --tags dummy_ctxtest
	want_rc 0
	want_verdicts "dummy_ctxtest:SUCCESS"
	[ "$(csv_col perf.csv 1 performance)" = 1 ] || fail "performance"
	;;
docker_mounts) # test_docker_mounts_mount_host_paths_in_docker_container
	rm_run_ctx "{'docker_env_vars': {'MAD_DATAHOME': '/data'}, 'docker_mounts': {'/data': '/tmp'}}" --tags dummy_mountpath
	want_rc 0
	want_verdicts "dummy_mountpath:SUCCESS"
	;;

# --- data providers (tests/e2e/test_data_workflows.py) --------------------------------------
data_local) # test_local_data_provider_runs_successfully
	rm_run --tags dummy_data_local
	want_rc 0
	want_verdicts "dummy_data_local:SUCCESS"
	[ "$(csv_col perf.csv 1 dataname)" = dummy_data_local ] || fail "dataname"
	[ "$(csv_col perf.csv 1 data_provider_type)" = local ] || fail "data_provider_type"
	[ -n "$(csv_col perf.csv 1 data_size)" ] || fail "data_size empty"
	[ "$(csv_col perf.csv 1 data_download_duration)" = 0 ] || fail "data_download_duration"
	;;
data_local_fail) # test_model_executes_even_if_data_provider_fails: the model runs without
	# its data (warned about, naming the data and why), its script says so and fails
	rm_run_ctx "{'docker_env_vars': {'MAD_DATAHOME': '/data'}}" --tags dummy_data_local_fail
	want_rc 1
	want_verdicts "dummy_data_local_fail:FAILURE"
	grep -q "is NOT mounted" dummy_data_local_fail.live.log || fail "the model did not run: $(cat dummy_data_local_fail.live.log)"
	grep -q "data 'dummy_data_local_fail': no provider serves it (local: '/tmp/nonexistent' does not exist); it runs without that data" err.txt ||
		fail "no warning: $(cat err.txt)"
	[ -z "$(csv_col perf.csv 1 dataname)$(csv_col perf.csv 1 data_provider_type)$(csv_col perf.csv 1 data_size)" ] ||
		fail "data columns filled"
	;;
data_mirrorlocal) # test_local_data_provider_mirrorlocal_does_not_mirror_data
	mkdir dataLocal
	rm_run --tags dummy_data_local --force-mirror-local "$PWD/dataLocal"
	want_rc 0
	want_verdicts "dummy_data_local:SUCCESS"
	[ ! -e dataLocal/dummy_data_local ] || fail "local data was mirrored"
	;;
data_network) # dummy_data_aws: not in data.json (madengine: KeyError, FAILURE)
	rm_run --tags dummy_data_aws
	want_rc 1
	want_verdicts "dummy_data_aws:FAILURE"
	csv_col perf.csv 1 reason | grep -q "data 'dummy_data_aws' is not in" || fail "reason: $(csv_col perf.csv 1 reason)"
	;;

data_custom) # a custom provider: its script runs in the container, in its home, before the model
	mkdir -p scripts/common/data
	printf '#!/bin/bash\necho "fetched $*" > fetched.txt\nsleep 1\n' >scripts/common/data/get.sh
	printf '#!/bin/bash\ngrep -q "fetched --to x" "$MAD_DATAHOME/fetched.txt" || exit 1\necho "performance: 7 samples_per_second"\n' \
		>scripts/dummy/run_data_custom.sh
	jq '. + {"dummy_data_custom": {"custom": {"path": "scripts/common/data/get.sh", "args": "--to x"}}}' \
		data.json >d && mv d data.json
	jq '. + [(.[] | select(.name == "dummy_data_local") | .name = "dummy_data_custom" |
		.scripts = "scripts/dummy/run_data_custom.sh" | .data = "dummy_data_custom")]' models.json >m && mv m models.json
	rm_run --tags dummy_data_custom
	want_rc 0
	want_verdicts "dummy_data_custom:SUCCESS"
	[ "$(csv_col perf.csv 1 data_provider_type)" = custom ] || fail "data_provider_type"
	[ "$(csv_col perf.csv 1 data_download_duration)" -ge 1 ] || fail "duration $(csv_col perf.csv 1 data_download_duration)"
	# --force-mirror-local: the data stays on the host, in DIR/<dataname>
	mkdir mirror
	rm -f perf.csv
	rm_run --tags dummy_data_custom --force-mirror-local "$PWD/mirror"
	want_rc 0
	want_verdicts "dummy_data_custom:SUCCESS"
	grep -q "fetched --to x" mirror/dummy_data_custom/fetched.txt || fail "not mirrored: $(ls -R mirror)"
	[ -n "$(csv_col perf.csv 1 data_size)" ] || fail "data_size empty"
	;;
data_custom_fail) # the custom script fails: FAILURE saying so, the model does not run
	mkdir -p scripts/common/data
	printf '#!/bin/bash\necho "no data today"\nexit 3\n' >scripts/common/data/get.sh
	jq '. + {"dummy_data_custom": {"custom": {"path": "scripts/common/data/get.sh"}}}' data.json >d && mv d data.json
	jq '(.[] | select(.name == "dummy") | .data) = "dummy_data_custom"' models.json >m && mv m models.json
	rm_run --tags dummy
	want_rc 1
	want_verdicts "dummy:FAILURE"
	csv_col perf.csv 1 reason | grep -q "data 'dummy_data_custom': a custom provider's script exited with code 3" ||
		fail "reason: $(csv_col perf.csv 1 reason)"
	grep -q "no data today" dummy.live.log || fail "the script's output is not in the log"
	! grep -q "performance:" dummy.live.log || fail "the model ran"
	;;

# --- timeouts (tests/test_custom_timeouts.py, scaled down: dummy_sleep has timeout 4) ------
timeout_model) # test_timeout_in_model_timesout_correctly
	start=$(date +%s)
	rm_run --tags dummy_sleep
	took=$(($(date +%s) - start))
	want_rc 1
	want_verdicts "dummy_sleep:FAILURE"
	[ "$took" -lt 20 ] || fail "took $took s"
	csv_col perf.csv 1 reason | grep -q '^timeout' || fail "reason: $(csv_col perf.csv 1 reason)"
	# stopped within 2 s of the model's 4 s
	awk -v d="$(csv_col perf.csv 1 test_duration)" 'BEGIN { exit !(d >= 4 && d < 6) }' ||
		fail "test_duration $(csv_col perf.csv 1 test_duration)"
	;;
timeout_cli) # test_timeout_in_commandline_timesout_correctly, CLI over the model's
	start=$(date +%s)
	rm_run --tags dummy_sleep --timeout 2
	took=$(($(date +%s) - start))
	want_rc 1
	want_verdicts "dummy_sleep:FAILURE"
	[ "$took" -lt 15 ] || fail "took $took s"
	;;
timeout_zero) # --timeout 0: none, over the model's 4 s
	jq '(.[] | select(.name == "dummy_sleep") | .args) = "6"' models.json >m && mv m models.json
	rm_run --tags dummy_sleep --timeout 0
	want_rc 0
	want_verdicts "dummy_sleep:SUCCESS"
	;;
timeout_logged) # test_default_model_timeout_2hrs / test_can_override_timeout_in_model
	rm_run --tags dummy --live-output
	grep -q "Setting timeout to 7200 seconds" dummy*.live.log || fail "default timeout not stated"
	rm_run --tags dummy_timeout
	grep -q "Setting timeout to 360 seconds" dummy_timeout*.live.log || fail "model timeout not stated"
	rm_run --tags dummy_timeout --timeout 120
	grep -q "Setting timeout to 120 seconds" dummy_timeout*.live.log || fail "CLI timeout not stated"
	;;

# --- tests/test_misc.py ---------------------------------------------------------------------
output_option) # test_output_commandline_argument_writes_csv_correctly
	rm_run --tags dummy -o perf_test.csv
	want_rc 0
	want_verdicts "dummy:SUCCESS" perf_test.csv
	[ ! -f perf.csv ] || fail "perf.csv written too"
	;;
skip_gpu_arch) # test_commandline_argument_skip_gpu_arch (gfx942 host)
	rm_run --tags dummy_skip_gpu_arch
	want_rc 0
	want_verdicts "dummy_skip_gpu_arch:SKIPPED"
	;;
skip_gpu_arch_nvidia) # the same list names A100: an NVIDIA A100 host skips it too
	rm_run_ctx '{"gpu_vendor": "NVIDIA", "MAD_SYSTEM_GPU_ARCHITECTURE": "NVIDIA A100-SXM4-80GB", "MAD_SYSTEM_NGPUS": 1}' --tags dummy_skip_gpu_arch
	want_rc 0
	want_verdicts "dummy_skip_gpu_arch:SKIPPED"
	;;
disable_skip_gpu_arch) # test_commandline_argument_disable_skip_gpu_arch_fail
	rm_run --tags dummy_skip_gpu_arch --disable-skip-gpu-arch
	want_rc 0
	want_verdicts "dummy_skip_gpu_arch:SUCCESS"
	;;
multi_results) # test_output_multi_results: one row per CSV row, named <model>_<row>
	rm_run --tags dummy_multi
	want_rc 0
	want_verdicts "dummy_multi_1:SUCCESS dummy_multi_2:SUCCESS dummy_multi_3:SUCCESS dummy_multi_4:SUCCESS"
	[ "$(csv_col perf.csv 4 metric)" = samples_per_sec ] || fail "metric"
	csv_col perf.csv 1 performance | grep -qE '^[0-9]+$' || fail "performance"
	;;
multi_results_columns) # the same test: the CSV beside perf.csv, 4x4, its extra column kept
	rm_run --tags dummy_multi
	want_rc 0
	python3 - <<'PY' || fail "perf_dummy.csv is not the model's 4 rows x 4 columns"
import csv
rows = list(csv.DictReader(open("perf_dummy.csv", newline="")))
assert len(rows) == 4 and list(rows[0]) == ["model", "temperature", "performance", "metric"]
PY
	grep -q temperature perf_dummy_multi.csv || fail "temperature not kept in perf_dummy_multi.csv"
	;;
multi_results_bad_rows) # a row without a number is FAILURE with a reason; no CSV is FAILURE
	printf '#!/bin/bash\nprintf "model,performance,metric\\na,1.5,x\\nb,,x\\nc,oops,x\\n" > perf_dummy.csv\n' >scripts/dummy/run_multi.sh
	rm_run --tags dummy_multi
	want_rc 1
	want_verdicts "dummy_multi_a:SUCCESS dummy_multi_b:FAILURE dummy_multi_c:FAILURE"
	[ -n "$(csv_col perf.csv 2 reason)" ] || fail "no reason"
	printf '#!/bin/bash\necho no csv\n' >scripts/dummy/run_multi.sh
	rm -f perf.csv
	rm_run --tags dummy_multi
	want_rc 1
	want_verdicts "dummy_multi:FAILURE"
	;;
multi_results_workspace) # madengine looks in the run's folder first: ../ of the model dir
	printf '#!/bin/bash\nprintf "model,performance,metric\\na,1.5,x\\n" > ../perf_dummy.csv\n' >scripts/dummy/run_multi.sh
	rm_run --tags dummy_multi
	want_rc 0
	want_verdicts "dummy_multi_a:SUCCESS"
	;;

# --- output file, CLI spellings ---------------------------------------------------------------
perf_csv_foreign) # refused before any build, saying what to do
	echo "a,b,c" >perf.csv
	start=$(date +%s)
	rm_run --tags dummy
	[ "$rc" = 5 ] || fail "exit $rc"
	grep -q "perf.csv" err.txt || fail "message: $(cat err.txt)"
	[ ! -f dummy.build.log ] && [ ! -f dummy_dummy.ubuntu.amd.build.log ] || fail "it built first"
	[ "$(cat perf.csv)" = "a,b,c" ] || fail "perf.csv changed"
	;;
perf_csv_unwritable) # a perf.csv that cannot be written: refused before any build
	mkdir perf.csv
	rm_run --tags dummy
	[ "$rc" = 5 ] || fail "exit $rc"
	[ ! -f dummy.build.log ] && [ ! -f dummy_dummy.ubuntu.amd.build.log ] || fail "it built first"
	;;
cli_spellings) # madengine/MAD option spellings
	rm_run --tags dummy --live_output -o perf_a.csv
	want_rc 0
	rm_run --model_name dummy -o perf_b.csv
	want_rc 0
	rm_run -t dummy -l -c "{'ctx_test': '1'}" -o perf_c.csv
	want_rc 0
	rm_run --tags dummy --skip-model-run -o perf_d.csv
	want_rc 0
	[ ! -f perf_d.csv ] || [ "$(rows perf_d.csv)" = 0 ] || fail "--skip-model-run ran the model"
	;;

# --- a hostile or careless folder (issue 14), refused before any build ------------------------
hostile_paths)
	jq '.[0].scripts = "../../etc/passwd"' models.json >m && mv m models.json
	rm_run --tags dummy
	[ "$rc" = 3 ] || fail "exit $rc"
	grep -q "field 'scripts' ('../../etc/passwd') leaves the folder" err.txt || fail "message: $(cat err.txt)"
	cp "$SRC/tests/compat/dummy/models.json" models.json
	jq '.[0].timeout = 31536001' models.json >m && mv m models.json
	rm_run --tags dummy
	[ "$rc" = 3 ] || fail "timeout over a year: exit $rc"
	grep -q "field 'timeout'" err.txt || fail "message: $(cat err.txt)"
	[ ! -f perf.csv ] || fail "something ran"
	;;
hostile_symlink) # a symlink out of the folder, a folder where a script is expected: the
	# model's FAILURE row, before its build (other selected models still run)
	ln -s /etc scripts/evil
	jq '.[0].scripts = "scripts/evil/passwd"' models.json >m && mv m models.json
	rm_run --tags dummy,dummy2
	want_rc 1
	want_verdicts "dummy:FAILURE dummy2:SUCCESS"
	csv_col perf.csv 1 reason | grep -q "outside the folder" || fail "reason: $(csv_col perf.csv 1 reason)"
	grep -q "outside the folder" err.txt || fail "message: $(cat err.txt)"
	[ -z "$(ls dummy.*build.log dummy_dummy*.build.log 2>/dev/null)" ] || fail "it built first: $(ls)"
	[ "$(csv_col perf.csv 1 docker_sha)" = "" ] || fail "an image was made"
	cp "$SRC/tests/compat/dummy/models.json" models.json
	rm -f perf.csv
	mkdir scripts/dummy/dir.sh
	jq '.[0].scripts = "scripts/dummy/dir.sh"' models.json >m && mv m models.json
	rm_run --tags dummy
	want_rc 1
	want_verdicts "dummy:FAILURE"
	csv_col perf.csv 1 reason | grep -q "is a folder, and it must be a file" || fail "reason: $(csv_col perf.csv 1 reason)"
	;;

# --- a registry in the shape of ROCm/MAD's (tests/compat/mad, issue 19) ----------------------
mad_dry_run) # every model of MAD's registry passes the dry run on an MI300X context, with
	# madengine's run options and environment on every container line
	rm_run_ctx "$MI300X" --tags all --dry-run
	want_rc 0
	[ "$(grep -c '^  docker run ' out.txt)" = 37 ] || fail "$(grep -c '^  docker run ' out.txt) of 37 models: $(grep would out.txt | head -3)"
	! grep -q "would" out.txt || fail "$(grep would out.txt | head -3)"
	[ "$(grep -c "timeout none," out.txt)" = 34 ] || fail "timeout -1 is not none: $(grep -c "timeout none," out.txt)"
	[ "$(grep -c '^  docker build --network=host --pull ' out.txt)" = 37 ] || fail "builds do not pull"
	for want in " -u root " " --group-add video " " --cap-add SYS_PTRACE --cap-add SYS_ADMIN " \
		" --security-opt seccomp=unconfined --security-opt apparmor=unconfined " ":/dev/fuse " \
		" -e MAD_GUEST_OS=UBUNTU " " -e 'MAD_MULTI_NODE_RUNNER=torchrun --standalone --nproc_per_node=" \
		" -e 'MAD_SYSTEM_GPU_PRODUCT_NAME=AMD Instinct MI300X OAM' " " -e MAD_SYSTEM_HIP_VERSION=6.4 " \
		" -e JENKINS_BUILD_NUMBER=0 " " -e MAD_MODEL_NAME="; do
		[ "$(grep '^  docker run ' out.txt | grep -cF -- "$want")" = 37 ] || fail "not on every line: '$want'"
	done
	# every model but dummy_multi (n_gpus 1) gets the host's 8 GPUs
	[ "$(grep '^  docker run ' out.txt | grep -c "'MAD_MULTI_NODE_RUNNER=torchrun --standalone --nproc_per_node=8'")" = 36 ] ||
		fail "MAD_MULTI_NODE_RUNNER"
	[ "$(grep '^  docker run ' out.txt | grep -c ' -e MAD_OUTPUT_CSV=perf_')" = 35 ] || fail "MAD_OUTPUT_CSV"
	[ "$(grep '^  docker run ' out.txt | grep -c ' -e MAD_DATANAME=huggingface ')" = 29 ] || fail "MAD_DATANAME"
	# once a run, not once a model (29 of them name it): issue 30
	[ "$(grep -c "data 'huggingface': no provider serves it (data.json lists no provider for it); it runs without that data.*so does every other model of this run that names it" err.txt)" = 1 ] ||
		fail "warnings: $(head -3 err.txt)"
	# NVIDIA: MAD's nvidia Dockerfile, madengine's NVIDIA options
	rm_run_ctx '{"gpu_vendor": "NVIDIA", "MAD_SYSTEM_NGPUS": 8, "MAD_SYSTEM_GPU_PRODUCT_NAME": "NVIDIA H100 80GB HBM3"}' \
		--tags pyt_huggingface_gpt2 --dry-run
	want_rc 0
	line=$(grep '^  docker run ' out.txt)
	for want in " -u root " " --cap-add SYS_PTRACE --cap-add SYS_ADMIN --cap-add SYS_NICE " \
		" --security-opt apparmor=unconfined " "/dev/fuse " " --gpus all " \
		" -e 'MAD_SYSTEM_GPU_PRODUCT_NAME=NVIDIA H100 80GB HBM3' "; do
		grep -qF -- "$want" <<<"$line" || fail "NVIDIA: no '$want': $line"
	done
	! grep -q -- "--group-add video" <<<"$line" || fail "NVIDIA joins the video group"
	grep -q "dockerfile: docker/pyt_huggingface.ubuntu.nvidia.Dockerfile" out.txt || fail "NVIDIA Dockerfile"
	;;
mad_data_unserved) # "data": "huggingface" (no provider): warned about, the model runs (its
	# script fetches its own weights), MAD_DATANAME set, MAD_DATAHOME not, data columns empty
	rm_run_ctx "$MADBASE" --tags pyt_vllm_llama-3.1-8b
	want_rc 0
	want_verdicts "pyt_vllm_llama-3.1-8b_Llama-3.1-8B-Instruct_latency_float16_tp1:SUCCESS pyt_vllm_llama-3.1-8b_Llama-3.1-8B-Instruct_throughput_float16_tp1:SUCCESS"
	grep -q "model 'pyt_vllm_llama-3.1-8b': data 'huggingface': no provider serves it (data.json lists no provider for it); it runs without that data" err.txt ||
		fail "no warning: $(cat err.txt)"
	log=pyt_vllm_llama-3.1-8b.live.log
	grep -q "^env: MAD_DATANAME=huggingface$" $log || fail "MAD_DATANAME: $(grep env: $log)"
	! grep -q "MAD_DATAHOME" $log || fail "MAD_DATAHOME set"
	grep -q "no data mounted: the weights of meta-llama/Llama-3.1-8B-Instruct come from the Hugging Face hub" $log || fail "script: $(cat $log)"
	grep -q "no provider serves it; the model runs without it" $log || fail "the log does not say so"
	[ -z "$(csv_col perf.csv 1 dataname)$(csv_col perf.csv 1 data_provider_type)$(csv_col perf.csv 1 data_size)$(csv_col perf.csv 1 data_download_duration)" ] ||
		fail "data columns filled"
	;;
mad_timeout_none) # "timeout": -1 is no time limit, as the registry means it; --timeout -1 too
	rm_run_ctx "$MADBASE" --tags pyt_megatron_lm_train_llama-2-7b
	want_rc 0
	grep -q "Setting timeout to 0 seconds. (none: the run is never stopped)" pyt_megatron_lm_train_llama-2-7b.live.log ||
		fail "$(grep -i timeout pyt_megatron_lm_train_llama-2-7b.live.log)"
	rm_run_ctx "$MADBASE" --tags dummy_multi --timeout -1 -o perf2.csv
	want_rc 0
	grep -q "Setting timeout to 0 seconds. (none" dummy_multi.live.log || fail "--timeout -1"
	rm_run_ctx "$MADBASE" --tags pyt_megatron_lm_train_llama-2-7b --timeout 30 -o perf3.csv
	want_rc 0
	grep -q "Setting timeout to 30 seconds.$" pyt_megatron_lm_train_llama-2-7b.live.log || fail "--timeout 30"
	;;
mad_container) # the container madengine makes, on the engine: run options and environment
	BUILD_NUMBER=42 rm_run_ctx "$MADBASE" --tags pyt_train_llama-3.1-8b --keep-alive
	ids=$(api GET "/containers/json?all=1&filters=$(printf '{"label":["run_models.model=pyt_train_llama-3.1-8b"]}' | jq -sRr @uri)" | jq -r '.[].Id')
	[ -n "$ids" ] || fail "no container kept"
	info=$(api GET "/containers/$(head -1 <<<"$ids")/json")
	for id in $ids; do api DELETE "/containers/$id?force=1" >/dev/null; done
	want_rc 0
	want_verdicts "pyt_train_llama-3.1-8b_pyt_train_llama-3.1-8b:SUCCESS"
	[ "$(jq -r .Config.User <<<"$info")" = root ] || fail "user"
	[ "$(jq -r '.HostConfig.CapAdd | sort | join(",")' <<<"$info")" = "CAP_SYS_ADMIN,CAP_SYS_PTRACE" ] ||
		[ "$(jq -r '.HostConfig.CapAdd | sort | join(",")' <<<"$info")" = "SYS_ADMIN,SYS_PTRACE" ] || fail "caps: $(jq -c .HostConfig.CapAdd <<<"$info")"
	jq -e '.HostConfig.SecurityOpt | index("apparmor=unconfined") and index("seccomp=unconfined")' <<<"$info" >/dev/null ||
		fail "security: $(jq -c .HostConfig.SecurityOpt <<<"$info")"
	jq -e '[.HostConfig.Devices[].PathInContainer] | index("/dev/fuse")' <<<"$info" >/dev/null || fail "no /dev/fuse"
	[ "$(jq -r '.HostConfig.GroupAdd | join(",")' <<<"$info"),$(jq -r .HostConfig.IpcMode <<<"$info"),$(jq -r .HostConfig.NetworkMode <<<"$info")" = video,host,host ] ||
		fail "group, ipc, network"
	log=pyt_train_llama-3.1-8b.live.log
	for want in "env: MAD_GUEST_OS=UBUNTU" "env: MAD_SYSTEM_GPU_PRODUCT_NAME=AMD Instinct MI300X OAM" \
		"env: MAD_SYSTEM_HIP_VERSION=6.4" "env: MAD_MULTI_NODE_RUNNER=torchrun --standalone --nproc_per_node=2" \
		"env: MAD_OUTPUT_CSV=perf_Llama-3.1-8B.csv" "env: JENKINS_BUILD_NUMBER=42" "env: MAD_RUNTIME_NGPUS=2" \
		"whoami: 0" "launch: torchrun --standalone --nproc_per_node=2 train.py --model_repo pyt_train_llama-3.1-8b"; do
		grep -qxF "$want" $log || fail "log lacks '$want': $(grep -E 'env:|launch|whoami' $log)"
	done
	# the context overrides what the host says
	rm_run_ctx "{\"docker_build_arg\": {\"BASE_DOCKER\": \"rm-compat-mad:1\"}, \"docker_env_vars\": {\"MAD_GUEST_OS\": \"CENTOS\", \"MAD_SYSTEM_HIP_VERSION\": \"7.0\", \"MAD_MULTI_NODE_RUNNER\": \"mylauncher\"}}" \
		--tags pyt_train_llama-3.1-8b -o perf2.csv
	want_rc 0
	grep -qx "env: MAD_GUEST_OS=CENTOS" $log && grep -qx "env: MAD_SYSTEM_HIP_VERSION=7.0" $log &&
		grep -qx "launch: mylauncher train.py --model_repo pyt_train_llama-3.1-8b" $log || fail "overrides: $(grep -E 'env:|launch' $log)"
	;;
mad_clone_submodules) # a model with a url: cloned with its submodules (stand-in git records it)
	rm_run_ctx "$MADBASE" --tags pyt_huggingface_gpt2
	want_rc 0
	want_verdicts "pyt_huggingface_gpt2:SUCCESS"
	grep -q "stand-in git: clone --quiet --recurse-submodules -- https://github.com/huggingface/transformers /myworkspace/transformers" \
		pyt_huggingface_gpt2.live.log || fail "clone: $(grep stand-in pyt_huggingface_gpt2.live.log)"
	;;
mad_perf_csv_madengine) # a perf.csv madengine wrote (its 29 columns): header kept, rows fill it
	hdr="model,n_gpus,nnodes,gpus_per_node,training_precision,pipeline,args,tags,docker_file,base_docker,docker_sha,docker_image,git_commit,machine_name,deployment_type,launcher,gpu_architecture,performance,metric,relative_change,status,build_duration,test_duration,dataname,data_provider_type,data_size,data_download_duration,build_number,additional_docker_run_options"
	printf '%s\ndummy_multi_1,1,1,1,,,,dummies,docker/dummy.ubuntu.amd.Dockerfile,rocm/pytorch,sha256:1,ci-dummy_multi_dummy.ubuntu.amd,,%s,local,docker,gfx942,100,samples_per_sec,,SUCCESS,1.0,2.0,,,,,0,\n' "$hdr" "$(hostname)" >perf.csv
	rm_run_ctx "$MADBASE" --tags dummy_multi
	want_rc 0
	[ "$(head -1 perf.csv)" = "$hdr" ] || fail "header changed: $(head -1 perf.csv)"
	[ "$(rows perf.csv)" = 5 ] || fail "rows: $(cat perf.csv)"
	want_verdicts "dummy_multi_1:SUCCESS dummy_multi_1:SUCCESS dummy_multi_2:SUCCESS dummy_multi_3:SUCCESS dummy_multi_4:SUCCESS"
	[ "$(csv_col perf.csv 2 gpu_architecture),$(csv_col perf.csv 2 deployment_type),$(csv_col perf.csv 2 metric)" = "gfx942,local,samples_per_sec" ] ||
		fail "columns by name: $(sed -n 3p perf.csv)"
	[ -n "$(csv_col perf.csv 2 relative_change)" ] || fail "no relative_change against madengine's row"
	grep -q "has another tool's header (madengine's or MAD's, 29 columns): it is kept" err.txt || fail "no word: $(cat err.txt)"
	python3 - <<'PY' || fail "perf_dummy_multi.csv: $(cat perf_dummy_multi.csv)"
import csv
rows = [r for r in csv.DictReader(open("perf_dummy_multi.csv", newline="")) if r["aggregate"] == "perf.csv"]
assert {"run_id", "timestamp"}.isdisjoint(r["metric"] for r in rows)
assert {r["model"] for r in rows if r["metric"] == "log_file"} == {"dummy_multi_%d" % i for i in (1, 2, 3, 4)}
PY
	;;
mad_perf_csv_crlf) # a perf.csv MAD's tools/run_models.py wrote (csv.DictWriter: CRLF): kept
	hdr="model,pipeline,tags,args,docker_file,base_docker,docker_sha,docker_image,machine_name,host_os,gpu_architecture,n_gpus,training_precision,performance,metric,status,build_duration,test_duration,git_commit,relative_change"
	printf '%s\r\ndummy_multi,,dummies,,docker/dummy.ubuntu.amd.Dockerfile,rocm/pytorch,sha256:1,ci-dummy_multi,node,HOST_UBUNTU,gfx942,8,,,,SUCCESS,1,2,,\r\n' "$hdr" >perf.csv
	rm_run_ctx "$MADBASE" --tags dummy_multi
	want_rc 0
	[ "$(head -1 perf.csv)" = "$hdr"$'\r' ] || fail "header changed"
	[ "$(rows perf.csv)" = 5 ] || fail "rows: $(cat -A perf.csv)"
	[ "$(grep -c $'\r$' perf.csv)" = "$(wc -l <perf.csv)" ] || fail "line ends mixed: $(cat -A perf.csv)"
	[ "$(csv_col perf.csv 5 status)" = SUCCESS ] || fail "status"
	;;

# --- issue 19 on madengine's fixture ---------------------------------------------------------
skip_gpu_arch_nvidia_product) # an NVIDIA host as nvidia-smi describes it (sm_80, "NVIDIA
	# A100-SXM4-80GB"): skip_gpu_arch's "A100" names its product, as madengine compares it
	mkdir -p "$WORK/bin" "$WORK/nosys"
	printf '#!/bin/sh\necho "NVIDIA A100-SXM4-80GB, 8.0"\n' >"$WORK/bin/nvidia-smi"
	chmod 755 "$WORK/bin/nvidia-smi"
	set +e
	PATH=$WORK/bin:$PATH RM_SYSFS_ROOT=$WORK/nosys "$RM" --tags dummy_skip_gpu_arch >out.txt 2>err.txt
	rc=$?
	set -e
	want_rc 0
	want_verdicts "dummy_skip_gpu_arch:SKIPPED"
	csv_col perf.csv 1 reason | grep -q "names this host's GPU 'NVIDIA A100-SXM4-80GB'" || fail "reason: $(csv_col perf.csv 1 reason)"
	[ "$(csv_col perf.csv 1 gpu_architecture)" = sm_80 ] || fail "arch $(csv_col perf.csv 1 gpu_architecture)"
	;;
scope_rule) # madengine's rule: an unscoped name never selects a scoped model
	rm_run --tags model2
	[ "$rc" = 3 ] || fail "exit $rc: $(cat perf.csv 2>/dev/null)"
	grep -q "no model matches tag 'model2' (names are whole, as in madengine: the model is 'dummy2/model2', give --tags dummy2/model2)" err.txt ||
		fail "message: $(cat err.txt)"
	rm_run --tags dummy2/model2
	want_rc 0
	want_verdicts "dummy2/model2:SUCCESS"
	;;
context_keys) # a key nobody reads is named; Kubernetes is refused, pointing at SLURM
	rm_run_ctx '{"k8s": {"namespace": "bench"}}' --tags dummy
	[ "$rc" = 3 ] || fail "k8s: exit $rc"
	grep -q "context key 'k8s': run_models does not deploy to Kubernetes" err.txt && grep -q "'slurm' key" err.txt ||
		fail "message: $(cat err.txt)"
	[ ! -f perf.csv ] || fail "something ran"
	rm_run_ctx '{"gpu_vendr": "AMD", "rocenv_mode": "full"}' --tags dummy
	want_rc 0
	grep -q "context key 'gpu_vendr' is not one run_models knows.*(did you mean 'gpu_vendor'?)" err.txt || fail "typo: $(cat err.txt)"
	grep -q "context key 'rocenv_mode' has no effect in run_models" err.txt || fail "rocenv_mode: $(cat err.txt)"
	;;
cli_madengine_spellings) # madengine's and MAD's spellings: their meaning, or a pointer
	rm_run --tags dummy --verbose --cleanup-perf --ignore-deprecated --timeout -1 -o perf_a.csv
	want_rc 0
	rm_run --tags dummy -v --log_level WARNING -o perf_b.csv
	want_rc 0
	! grep -q "run_models: model 'dummy'" err.txt || fail "--log_level WARNING printed info: $(cat err.txt)"
	rm_run --tags dummy --summary-output summary.json
	[ "$rc" = 2 ] || fail "--summary-output: exit $rc"
	grep -q -- "--junit FILE or --summary-markdown FILE" err.txt || fail "no pointer: $(cat err.txt)"
	rm_run --tags dummy --log-level LOUD
	[ "$rc" = 2 ] || fail "--log-level LOUD: exit $rc"
	;;
build_pull) # builds pull a newer base image as madengine's --pull; --no-pull does not; a
	# registry out of reach is warned about and the engine's copy built on
	# shellcheck source=tests/registry.sh
	. "$SRC/tests/registry.sh"
	port=
	for p in $(shuf -i 15000-15999 -n 50); do
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || {
			port=$p
			break
		}
	done
	[ -n "$port" ] || fail "no free port for the registry"
	trap 'registry_stop "$WORK/registry" >/dev/null 2>&1; rm -rf "$WORK"' EXIT
	registry_start "$WORK/registry" "$port" >/dev/null || fail "cannot start the registry"
	ref=127.0.0.1:$port/rm-compat-pullbase:1
	base_image rm-compat-base-one:1 'ENV BASE_MARK=one'
	base_image rm-compat-base-two:1 'ENV BASE_MARK=two'
	push() { # LOCAL: pushes it as $ref
		api POST "/images/$1/tag?repo=${ref%:1}&tag=1" >/dev/null
		api POST "/images/${ref%:1}/push?tag=1" -H 'X-Registry-Auth: e30=' >push.log
		! grep -q errorDetail push.log || fail "push: $(cat push.log)"
	}
	push rm-compat-base-one:1 # the engine's copy is "one", from the registry
	printf "# CONTEXT {'gpu_vendor': 'AMD'}\nARG BASE_DOCKER=%s\nFROM \$BASE_DOCKER\n" "$ref" >docker/pulled.ubuntu.amd.Dockerfile
	printf '#!/bin/bash\necho "base $BASE_MARK"\necho "performance: 1 x"\n' >scripts/dummy/run_pulled.sh
	jq '. + [(.[] | select(.name == "dummy") | .name = "pulled" | .dockerfile = "docker/pulled" | .scripts = "scripts/dummy/run_pulled.sh")]' models.json >m && mv m models.json
	rm_run --tags pulled
	want_rc 0
	grep -q "^base one" pulled.live.log || fail "first run: $(cat pulled.live.log)"
	push rm-compat-base-two:1 # a newer base in the registry; the engine keeps "one"
	api POST "/images/rm-compat-base-one:1/tag?repo=${ref%:1}&tag=1" >/dev/null
	rm_run --tags pulled --no-pull -o perf2.csv
	want_rc 0
	grep -q "^base one" pulled.live.log || fail "--no-pull used a newer base: $(cat pulled.live.log)"
	rm_run --tags pulled -o perf3.csv
	want_rc 0
	grep -q "^base two" pulled.live.log || fail "the newer base was not pulled: $(cat pulled.live.log) $(cat pulled.build.log)"
	grep -q "base image '$ref' pulled from 127.0.0.1:$port" pulled*.build.log || fail "build log: $(cat pulled*.build.log)"
	registry_stop "$WORK/registry" >/dev/null 2>&1
	rm_run --tags pulled -o perf4.csv
	want_rc 0
	grep -q "warning: cannot pull base image '$ref' from 127.0.0.1:$port .*building on the engine's copy" err.txt ||
		fail "no warning: $(cat err.txt)"
	api DELETE "/images/$ref" >/dev/null 2>&1 || true
	;;
sensitive_mounts) # issue 22 item 11: the folder asks to bind the host's root: refused before
	# the build, naming the model and the field, unless the user allows it
	jq '(.[] | select(.name == "dummy") | .additional_docker_run_options) = "-v /:/host:ro"' models.json >m && mv m models.json
	printf '#!/bin/bash\ntest -f /host/etc/hostname && echo "performance: 1 x"\n' >scripts/dummy/run_host.sh
	jq '(.[] | select(.name == "dummy") | .scripts) = "scripts/dummy/run_host.sh"' models.json >m && mv m models.json
	rm_run --tags dummy
	want_rc 1
	want_verdicts "dummy:FAILURE"
	csv_col perf.csv 1 reason | grep -q "model 'dummy': field 'additional_docker_run_options': option '-v' '/:/host:ro' binds the host's root folder into the container; remove it, or give --allow-sensitive-mounts" ||
		fail "reason: $(csv_col perf.csv 1 reason)"
	[ -z "$(ls dummy*.build.log 2>/dev/null)" ] || fail "it built first"
	rm -f perf.csv
	rm_run --tags dummy --allow-sensitive-mounts
	want_rc 0
	want_verdicts "dummy:SUCCESS"
	# data.json's local path: the host's root, read-write
	jq '.dummy_data_local.local = {"path": "/", "readwrite": "true"}' data.json >d && mv d data.json
	rm -f perf.csv
	rm_run --tags dummy_data_local
	want_rc 1
	csv_col perf.csv 1 reason | grep -q "data 'dummy_data_local': provider 'local': path '/' is the host's root folder" ||
		fail "reason: $(csv_col perf.csv 1 reason)"
	;;

# --- profiling tools (tests/e2e/test_profiling_workflows.py; docs/tools.md) -----------------
tools_A) # test_toolA_runs_correctly: pre_script A, cmd_A, post_script A in the live log
	rm_run_ctx "{'tools': [{'name': 'test_tools_A'}]}" --tags dummy --live-output
	want_rc 0
	want_verdicts "dummy:SUCCESS"
	in_order dummy.live.log "pre_script A" "cmd_A" "performance: .*" "post_script A"
	grep -q "run_models: tool 'test_tools_A' (scripts/common/tools.json)" dummy.live.log ||
		fail "the log does not say which tool ran: $(cat dummy.live.log)"
	;;
tools_stacked) # test_stackable_design_runs_correctly: tools [A, B] in madengine's order
	rm_run_ctx "{'tools': [{'name': 'test_tools_A'}, {'name': 'test_tools_B'}]}" --tags dummy
	want_rc 0
	want_verdicts "dummy:SUCCESS"
	in_order dummy.live.log "pre_script B" "pre_script A" "cmd_B" "cmd_A" "performance: .*" \
		"post_script A" "post_script B"
	;;
tools_log_order) # a tool of the folder's tools.json: pre script with its args, the wrapper
	# around the model, the tool's environment in the model, the post script; its files on
	# the host beside the log
	tools_model
	rm_run_ctx "{'tools': [{'name': 'stub_profiler'}]}" --tags dummy_tools
	want_rc 0
	want_verdicts "dummy_tools:SUCCESS"
	[ "$(csv_col perf.csv 1 performance)" = 5 ] || fail "performance $(csv_col perf.csv 1 performance)"
	in_order dummy_tools.live.log \
		"run_models: tool 'stub_profiler': pre script 'scripts/common/stub_tool/pre.sh --out 'trace dir' -v'" \
		"stub pre: args \[--out trace dir -v\] in dummy_tools" \
		"stub wrapper: runs \[bash run_tools.sh --batch 8\]" \
		"model sees STUB_PROFILER=on STUB_LEVEL=3 ROCBLAS_LAYER= args \[--batch 8\]" \
		"stub wrapper: the command exited with 0" \
		"stub post: args \[collect\], trace: trace of dummy_tools" \
		"run_models: tool stub_profiler: nothing matches no_such_\*.db" \
		"run_models: the tools' outputs are in .*"
	run_id=$(csv_col perf.csv 1 run_id)
	dir=dummy_tools.$run_id.tools/stub_profiler
	[ "$(cat "$dir/stub_output/trace.txt" 2>/dev/null)" = "trace of dummy_tools" ] ||
		fail "the tool's file is not on the host: $(find . -name '*.tools' -o -name trace.txt)"
	[ -f "$dir/stub_kernels.csv" ] || fail "stub_*.csv not copied: $(ls -R "$dir")"
	grep -q "the tools' outputs are in" err.txt || fail "the runner does not say where the outputs are"
	;;
tools_builtin_dry_run) # rocprofv3: built in (the folder's tools.json lacks it), wraps the command
	rm_run_ctx "{'tools': [{'name': 'rocprofv3'}]}" --tags dummy --dry-run
	want_rc 0
	grep -q "tools: rocprofv3 (built in)" out.txt || fail "dry run: $(cat out.txt)"
	grep -qF "command: rocprofv3 --runtime-trace -d ./rocprof_output -- bash run.sh" out.txt ||
		fail "rocprofv3 does not wrap the command: $(cat out.txt)"
	grep -qF "outputs of rocprofv3: rocprof_output -> ./dummy." out.txt || fail "outputs: $(cat out.txt)"
	grep -qF "'rocprofv3 --runtime-trace -d ./rocprof_output --' 2 bash run.sh 0 1 rocprofv3 rocprof_output" out.txt ||
		fail "the docker run line does not carry the wrapper: $(cat out.txt)"
	[ ! -f perf.csv ] || fail "a dry run wrote rows"
	# the stacked pair, in madengine's order, and a tool's env_vars from the context
	rm_run_ctx "{'tools': [{'name': 'test_tools_A'}, {'name': 'rocprofv3', 'env_vars': {'ROCPROF_X': '1'}}]}" --tags dummy --dry-run
	want_rc 0
	grep -qF "command: rocprofv3 --runtime-trace -d ./rocprof_output -- echo cmd_A && bash run.sh" out.txt ||
		fail "stacked: $(cat out.txt)"
	grep -qF "tool env: ROCPROF_X=1" out.txt || fail "env: $(cat out.txt)"
	grep -qF "copied in: scripts/common -> /myworkspace/scripts/common" out.txt || fail "copies: $(cat out.txt)"
	;;
tools_unknown) # refused before any build, naming the tool and the known ones
	rm_run_ctx "{'tools': [{'name': 'test_tools_A'}, {'name': 'rocprof_v9'}]}" --tags dummy
	[ "$rc" = 3 ] || fail "exit $rc: $(cat err.txt)"
	grep -q "unknown tool 'rocprof_v9'" err.txt || fail "message: $(cat err.txt)"
	grep -q "known tools: test_tools_A, test_tools_B, .*rocprofv3, .*rocblas_trace" err.txt ||
		fail "the known tools are not named: $(cat err.txt)"
	[ -z "$(ls ./*.build.log 2>/dev/null)" ] || fail "it built first: $(ls)"
	[ ! -f perf.csv ] || fail "a row was written"
	# a context entry with a key madengine does not have
	rm_run_ctx "{'tools': [{'name': 'rocprofv3', 'env': {'A': '1'}}]}" --tags dummy
	[ "$rc" = 3 ] || fail "exit $rc: $(cat err.txt)"
	grep -q "tool 'rocprofv3': unknown key 'env'" err.txt || fail "message: $(cat err.txt)"
	;;
tools_fail_pre) # a failing pre script: FAILURE naming the tool and the phase, no model run
	rm_run_ctx "{'tools': [{'name': 'stub_fail_pre'}]}" --tags dummy
	want_rc 1
	want_verdicts "dummy:FAILURE"
	csv_col perf.csv 1 reason | grep -qF "tool 'stub_fail_pre': pre script 'scripts/common/stub_tool/fail.sh pre' exited with code 3" ||
		fail "reason: $(csv_col perf.csv 1 reason)"
	csv_col perf.csv 1 reason | grep -q "the model did not run" || fail "reason: $(csv_col perf.csv 1 reason)"
	grep -q "stub fail: giving up (pre)" dummy.live.log || fail "the script's output is not in the log"
	! grep -q "performance:" dummy.live.log || fail "the model ran"
	;;
tools_fail_post) # a failing post script: FAILURE naming the tool and the phase, after the model
	rm_run_ctx "{'tools': [{'name': 'stub_fail_post'}]}" --tags dummy
	want_rc 1
	want_verdicts "dummy:FAILURE"
	csv_col perf.csv 1 reason | grep -qF "tool 'stub_fail_post': post script 'scripts/common/stub_tool/fail.sh post' exited with code 3" ||
		fail "reason: $(csv_col perf.csv 1 reason)"
	in_order dummy.live.log "performance: .*" "stub fail: giving up \(post\)"
	;;
tools_context_scripts) # the context's own pre_scripts, encapsulate_script and post_scripts,
	# and a tool around them (madengine: the tool's pre first, its post last)
	ctx="{'pre_scripts': [{'path': 'scripts/common/test_echo.sh', 'args': 'ctx pre'}],
	      'encapsulate_script': 'echo ctx wrap && ',
	      'post_scripts': [{'path': 'scripts/common/test_echo.sh', 'args': 'ctx post'}]"
	rm_run_ctx "$ctx}" --tags dummy
	want_rc 0
	in_order dummy.live.log "ctx pre" "ctx wrap" "performance: .*" "ctx post"
	rm_run_ctx "$ctx, 'tools': [{'name': 'test_tools_A'}]}" --tags dummy
	want_rc 0
	in_order dummy.live.log "pre_script A" "ctx pre" "cmd_A" "ctx wrap" "performance: .*" \
		"ctx post" "post_script A"
	# a tool script named as the model's own script runs where it is: the model's stays
	printf '#!/bin/bash\necho "a pre script called run.sh, in $(basename "$PWD")"\n' >scripts/common/run.sh
	rm_run_ctx "{'pre_scripts': [{'path': 'scripts/common/run.sh'}]}" --tags dummy
	want_rc 0
	want_verdicts "dummy:SUCCESS dummy:SUCCESS dummy:SUCCESS"
	in_order dummy.live.log "a pre script called run.sh, in dummy" "performance: .*"
	# a script that leaves the folder, one that is missing: refused before any build
	rm_run_ctx "{'pre_scripts': [{'path': '../x.sh'}]}" --tags dummy
	[ "$rc" = 3 ] || fail "exit $rc"
	grep -q "context key 'pre_scripts': 'pre_scripts' item 1: 'path' must be a path inside the MAD folder" err.txt ||
		fail "message: $(cat err.txt)"
	rm_run_ctx "{'post_scripts': [{'path': 'scripts/common/nothere.sh'}]}" --tags dummy
	[ "$rc" = 3 ] || fail "exit $rc"
	grep -q "script 'scripts/common/nothere.sh': No such file" err.txt || fail "message: $(cat err.txt)"
	;;
tools_config_option) # --tools-config: another file; its definitions win over the built-ins
	mkdir -p prof
	cp scripts/common/test_echo.sh prof/echo.sh
	echo '{"tools": {"rocprofv3": {"pre_scripts": [{"path": "prof/echo.sh", "args": "my rocprofv3 pre"}],
	       "cmd": "echo my rocprofv3 && "}}}' >prof/tools.json
	rm_run_ctx "{'tools': [{'name': 'rocprofv3'}]}" --tags dummy --tools-config prof/tools.json
	want_rc 0
	in_order dummy.live.log "run_models: tool 'rocprofv3' \(prof/tools.json\)" "my rocprofv3 pre" \
		"my rocprofv3" "performance: .*"
	rm_run_ctx "{'tools': [{'name': 'rocprofv3'}]}" --tags dummy --tools-config prof/none.json
	[ "$rc" = 3 ] || fail "exit $rc"
	grep -q "tools-config 'prof/none.json': no such file" err.txt || fail "message: $(cat err.txt)"
	echo '{"tools": {"x": {"outputs": ["../up"]}}}' >prof/bad.json
	rm_run_ctx "{'tools': [{'name': 'x'}]}" --tags dummy --tools-config prof/bad.json
	[ "$rc" = 3 ] || fail "exit $rc"
	grep -q "'prof/bad.json': tool 'x': 'outputs' item 1 must be a glob with no '..' part" err.txt ||
		fail "message: $(cat err.txt)"
	;;
tools_builtin_run) # a built-in trace on the real engine: its variables reach the model, the
	# library's log file (an absolute glob) comes back
	tools_model
	rm_run_ctx "{'tools': [{'name': 'rocblas_trace'}]}" --tags dummy_tools
	want_rc 0
	grep -q "model sees .*ROCBLAS_LAYER=6" dummy_tools.live.log || fail "env: $(cat dummy_tools.live.log)"
	run_id=$(csv_col perf.csv 1 run_id)
	grep -q "rocblas-bench" "dummy_tools.$run_id.tools/rocblas_trace/myworkspace/rocblas_bench.log" ||
		fail "rocblas_bench.log not copied: $(find . -path '*.tools*')"
	;;
tools_archive) # --archive holds the tools' outputs beside the logs, one folder per repeat
	tools_model
	rm_run_ctx "{'tools': [{'name': 'stub_profiler'}]}" --tags dummy_tools --repeat 2 --archive run.tar.gz
	want_rc 0
	want_verdicts "dummy_tools:SUCCESS dummy_tools:SUCCESS"
	tar tzf run.tar.gz >list.txt
	for r in 1 2; do
		grep -q "\.r$r\.tools/stub_profiler/stub_output/trace.txt$" list.txt || fail "archive, run $r: $(cat list.txt)"
	done
	;;

*)
	fail "unknown case"
	;;
esac
echo "ok [$case_name]"
