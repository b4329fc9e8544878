#!/usr/bin/env bash
# Integration cases: usage: cases.sh CASE RUN_MODELS SOURCE_DIR
# Each case makes a MAD-style folder (models.json, docker/, scripts/) in a temp dir, runs the
# real binary against the engine at $DOCKER_HOST, and checks exit code, perf.csv, logs and
# leftover containers. Model names are unique per case so parallel cases do not interfere.
set -euo pipefail
case_name=$1
RM=$2
SRC=$3
DOCKER_HOST=$("$SRC/tools/ensure-docker.sh")
export DOCKER_HOST
SOCK=${DOCKER_HOST#unix://}
# The engine's CLI in the hints run_models prints: tests/integration/podman.sh runs some of
# these cases on Podman (RM_TEST_ENGINE=podman).
CLI=${RM_TEST_ENGINE:-docker}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

# shellcheck source=tests/integration/lib.sh
. "$SRC/tests/integration/lib.sh"

case "$case_name" in
engine_up)
	api GET /_ping >/dev/null || fail "engine at $DOCKER_HOST does not answer"
	[ -f "$SRC/docker/smoke/busybox" ] || fail "docker/smoke/busybox missing: run tools/setup.sh"
	;;

no_container_left)
	n=$(api GET "/containers/json?all=1&filters=$(printf '{"label":["run_models=1"]}' | jq -sRr @uri)" |
		jq '[.[] | select(.Labels["run_models.model"] | startswith("it_"))] | length')
	[ "$n" = 0 ] || fail "$n container(s) of the test suite left behind"
	;;

smoke)
	cp -r "$SRC/models.json" "$SRC/docker" "$SRC/scripts" .
	"$RM" --tags smoke -o perf.csv >out.txt 2>err.txt || fail "exit $? $(cat err.txt)"
	[ "$(head -1 perf.csv | tr ',' '\n' | wc -l)" = 39 ] || fail "header is not 29+10 columns"
	head -1 perf.csv | grep -q '^model,n_gpus,nnodes,gpus_per_node,training_precision,pipeline,args,tags,docker_file,base_docker,docker_sha,docker_image,git_commit,machine_name,deployment_type,launcher,gpu_architecture,performance,metric,relative_change,status,build_duration,test_duration,dataname,data_provider_type,data_size,data_download_duration,build_number,additional_docker_run_options,' ||
		fail "header differs from madengine's 29 columns"
	[ "$(csv_col perf.csv 1 status)" = SUCCESS ] || fail "status $(csv_col perf.csv 1 status)"
	[ "$(csv_col perf.csv 1 performance)" = 1234.5 ] || fail "performance"
	[ "$(csv_col perf.csv 1 metric)" = samples_per_sec ] || fail "metric"
	[ "$(csv_col perf.csv 1 docker_image)" = ci-smoke_busybox_smoke ] || fail "image name"
	csv_col perf.csv 1 docker_sha | grep -q '^sha256:' || fail "image id"
	[ "$(csv_col perf.csv 1 git_commit)" = "" ] || fail "git_commit outside a repository"
	git init -q . && git add models.json && git -c user.email=t@t -c user.name=t commit -qm t
	"$RM" --tags smoke -o perf.csv -q 2>/dev/null || fail "run in a repository"
	[ "$(csv_col perf.csv 2 git_commit)" = "$(git rev-parse HEAD)" ] || fail "git_commit: $(csv_col perf.csv 2 git_commit)"
	git pack-refs --all
	"$RM" --tags smoke -o perf.csv -q 2>/dev/null || fail "run with packed refs"
	[ "$(csv_col perf.csv 3 git_commit)" = "$(git rev-parse HEAD)" ] || fail "git_commit from packed-refs"
	grep -q 'step 5/5' smoke_busybox.live.log || fail "live log"
	grep -qE '^(Step|STEP) 1/|is up to date with' smoke_busybox.build.log || fail "build log: $(cat smoke_busybox.build.log)"
	[ "$(containers_of smoke_busybox)" = 0 ] || fail "container left"
	# runs append, never rewrite
	[ "$(wc -l <perf.csv)" = 4 ] || fail "rows were not appended"
	;;

failing_script)
	script crash <<'S'
echo "about to crash"
echo "performance: 5 samples_per_sec"
exit 3
S
	entry it_crash crash "" | sed 's/^/[/; s/$/]/' | mkmad
	set +e
	"$RM" --tags it_crash -o perf.csv 2>err.txt
	rc=$?
	set -e
	[ $rc = 1 ] || fail "exit code $rc, want 1"
	[ "$(csv_col perf.csv 1 status)" = FAILURE ] || fail "status"
	[ "$(csv_col perf.csv 1 exit_code)" = 3 ] || fail "exit_code column"
	grep -q 'exited with code 3' perf.csv || fail "reason"
	[ "$(containers_of it_crash)" = 0 ] || fail "container left"
	;;

timeout)
	script hang <<'S'
echo started
sleep 600
S
	entry it_hang hang "" '"timeout": 3' | sed 's/^/[/; s/$/]/' | mkmad
	start=$(date +%s)
	set +e
	"$RM" --tags it_hang -o perf.csv 2>err.txt
	rc=$?
	set -e
	took=$(($(date +%s) - start))
	[ $rc = 1 ] || fail "exit code $rc"
	grep -q 'timed out after 3 s' perf.csv || fail "reason: $(cat perf.csv)"
	# build (cached) + 3 s budget + kill within 2 s
	[ $took -lt 20 ] || fail "took $took s"
	[ "$(containers_of it_hang)" = 0 ] || fail "container left"
	# --timeout overrides the model's timeout
	"$RM" --tags it_hang --timeout 1 -o perf2.csv 2>/dev/null && fail "should fail"
	grep -q 'timed out after 1 s' perf2.csv || fail "CLI timeout not used"
	;;

multiple_results)
	script multi <<'S'
printf 'model,performance,metric,extra\nresnet50,812.5,images_per_sec,x\nbert,99.25,sequences_per_sec,"a,b"\n' > results.csv
S
	entry it_multi multi "" '"multiple_results": "results.csv"' | sed 's/^/[/; s/$/]/' | mkmad
	"$RM" --tags it_multi -o perf.csv 2>err.txt || fail "exit $?: $(cat err.txt)"
	[ "$(wc -l <perf.csv)" = 3 ] || fail "want 2 rows: $(cat perf.csv)"
	[ "$(csv_col perf.csv 1 model)" = it_multi_resnet50 ] || fail "row 1 name"
	[ "$(csv_col perf.csv 2 performance)" = 99.25 ] || fail "row 2 perf"
	[ "$(csv_col perf.csv 2 metric)" = sequences_per_sec ] || fail "row 2 metric"
	[ "$(head -1 perf.csv | tr ',' '\n' | wc -l)" = 39 ] || fail "extra column changed the header"
	# a second run compares each result row with its own previous row
	"$RM" --tags it_multi -o perf.csv 2>err.txt || fail "second run: $(cat err.txt)"
	[ "$(csv_col perf.csv 1 relative_change)" = "" ] || fail "first run has no baseline"
	[ "$(csv_col perf.csv 3 relative_change)" = "+0.00" ] || fail "row 3: $(csv_col perf.csv 3 relative_change)"
	[ "$(csv_col perf.csv 4 relative_change)" = "+0.00" ] || fail "row 4: $(csv_col perf.csv 4 relative_change)"
	;;

broken_build)
	script ok <<'S'
echo "performance: 1 x"
S
	printf '[%s, %s]\n' "$(entry it_broken ok "")" "$(entry it_after ok "")" | mkmad
	# it_broken gets its own Dockerfile, which fails
	jq '.[0].dockerfile = "docker/broken"' models.json >m && mv m models.json
	printf 'FROM scratch\nCOPY smoke/busybox /bin/busybox\nRUN ["/bin/busybox", "false"]\n' >docker/broken.Dockerfile
	set +e
	"$RM" --tags it -o perf.csv 2>err.txt
	rc=$?
	set -e
	[ $rc = 1 ] || fail "exit code $rc"
	[ "$(csv_col perf.csv 1 model)" = it_broken ] || fail "row 1"
	[ "$(csv_col perf.csv 1 status)" = FAILURE ] || fail "broken status"
	grep -q 'build failed' perf.csv || fail "reason"
	if [ "$CLI" = podman ]; then # buildah says it in the error alone: "exit status 1"
		grep -q 'RUN /bin/busybox false.*exit status 1' perf.csv || fail "reason: $(cat perf.csv)"
	else
		grep -qi 'non-zero' it_broken.build.log || fail "build log: $(cat it_broken.build.log)"
	fi
	[ "$(csv_col perf.csv 2 model)" = it_after ] || fail "the next model did not run"
	[ "$(csv_col perf.csv 2 status)" = SUCCESS ] || fail "next model status"
	;;

broken_registry)
	printf '[\n  {"name": "it_x",\n   "dockerfile": "docker/smoke" \n   "scripts": "x"}\n]\n' | mkmad
	set +e
	"$RM" --tags it_x -o perf.csv 2>err.txt
	rc=$?
	set -e
	[ $rc = 3 ] || fail "exit code $rc, want 3"
	grep -q "models.json" err.txt || fail "file not named: $(cat err.txt)"
	grep -q "line 4" err.txt || fail "line not named: $(cat err.txt)"
	[ ! -e perf.csv ] || fail "perf.csv written"
	# a missing field names the model and the field
	printf '[{"name": "it_x", "dockerfile": "docker/smoke", "scripts": "x", "owner": "o", "tags": [], "args": ""}]' >models.json
	"$RM" --tags it_x -o perf.csv 2>err.txt && fail "should fail"
	grep -q "it_x" err.txt && grep -q "n_gpus" err.txt || fail "field not named: $(cat err.txt)"
	;;

unknown_tag)
	entry it_known ok "" | sed 's/^/[/; s/$/]/' | mkmad
	set +e
	"$RM" --tags nosuchtag,alsonot -o perf.csv 2>err.txt
	rc=$?
	set -e
	[ $rc = 3 ] || fail "exit code $rc"
	grep -q "nosuchtag" err.txt && grep -q "alsonot" err.txt || fail "tags not named: $(cat err.txt)"
	;;

keep_alive)
	script ka <<'S'
echo "performance: 2 x"
S
	entry it_keep ka "" | sed 's/^/[/; s/$/]/' | mkmad
	"$RM" --tags it_keep --keep-alive -o perf.csv 2>err.txt || fail "exit $?"
	n=$(containers_of it_keep)
	ids=$(api GET "/containers/json?all=1&filters=$(printf '{"label":["run_models.model=it_keep"]}' | jq -sRr @uri)" | jq -r '.[].Id')
	for id in $ids; do api DELETE "/containers/$id?force=1" >/dev/null; done
	[ "$n" = 1 ] || fail "$n containers kept, want 1"
	grep -q "$CLI rm -f" err.txt || fail "no hint how to remove it: $(cat err.txt)"
	;;

sigint | sigterm)
	sig=INT
	want=130
	[ "$case_name" = sigterm ] && sig=TERM && want=143
	script sleepy <<'S'
echo "started"
sleep 600
S
	entry "it_$case_name" sleepy "" | sed 's/^/[/; s/$/]/' | mkmad
	"$RM" --tags "it_$case_name" -o perf.csv >out.txt 2>err.txt &
	pid=$!
	trap 'kill -9 $pid 2>/dev/null || true; rm -rf "$WORK"' EXIT
	for _ in $(seq 1 100); do
		grep -q started "it_$case_name.live.log" 2>/dev/null && break
		sleep 0.2
	done
	grep -q started "it_$case_name.live.log" || fail "never started: $(cat err.txt)"
	kill -"$sig" $pid
	set +e
	wait $pid
	rc=$?
	set -e
	[ $rc = $want ] || fail "exit code $rc, want $want: $(cat err.txt)"
	[ "$(csv_col perf.csv 1 status)" = FAILURE ] || fail "no FAILURE row"
	grep -q "interrupted by SIG$sig" perf.csv || fail "reason"
	[ "$(containers_of "it_$case_name")" = 0 ] || fail "container left"
	;;

dead_daemon)
	entry it_dead ok "" | sed 's/^/[/; s/$/]/' | mkmad
	set +e
	DOCKER_HOST=unix://$WORK/no.sock "$RM" --tags it_dead -o perf.csv 2>err.txt
	rc=$?
	set -e
	[ $rc = 4 ] || fail "exit code $rc, want 4: $(cat err.txt)"
	grep -q "no.sock" err.txt || fail "socket not named: $(cat err.txt)"
	;;

stdout_only_last_wins)
	script perf <<'S'
echo "performance: 1 samples_per_sec"
echo "performance: 999 samples_per_sec" >&2
echo "performance: 42.5 samples_per_sec"
echo "done"
S
	entry it_last perf "" | sed 's/^/[/; s/$/]/' | mkmad
	"$RM" --tags it_last -o perf.csv 2>err.txt || fail "exit $?"
	[ "$(csv_col perf.csv 1 performance)" = 42.5 ] || fail "picked $(csv_col perf.csv 1 performance)"
	grep -q "performance: 999" it_last.live.log || fail "stderr not in the log"
	;;

keep_model_dir)
	script kmd <<'S'
echo "output of the model" > output.txt
echo "performance: 3 x"
S
	entry it_kmd kmd "" | sed 's/^/[/; s/$/]/' | mkmad
	mkdir logs
	"$RM" --tags it_kmd --keep-model-dir --log-dir logs -o perf.csv 2>err.txt || fail "exit $?: $(cat err.txt)"
	grep -q "output of the model" logs/it_kmd/output.txt || fail "model dir not kept"
	[ -f logs/it_kmd/run.sh ] || fail "scripts not in the model dir"
	;;

secret_env)
	script sec <<'S'
[ "$MAD_SECRETS_HFTOKEN" = "hf_s3cr3t_value" ] && echo "secret arrived"
[ "$MAD_MODEL_NAME" = it_secret ] && echo "name arrived"
[ "$FROM_CONTEXT" = ctx ] && echo "context env arrived"
echo "performance: 1 x"
S
	entry it_secret sec "" | sed 's/^/[/; s/$/]/' | mkmad
	MAD_SECRETS_HFTOKEN=hf_s3cr3t_value "$RM" --tags it_secret -o perf.csv \
		--additional-context '{"docker_env_vars": {"FROM_CONTEXT": "ctx"}}' 2>err.txt || fail "exit $?"
	grep -q "secret arrived" it_secret.live.log || fail "secret did not reach the container"
	grep -q "name arrived" it_secret.live.log || fail "MAD_MODEL_NAME"
	grep -q "context env arrived" it_secret.live.log || fail "docker_env_vars"
	if grep -rq hf_s3cr3t_value perf.csv it_secret.build.log err.txt; then fail "secret leaked"; fi
	;;

list_command)
	printf '[%s, %s]\n' "$(entry it_l1 a "")" "$(entry it_l2 b "")" | mkmad
	jq '.[1].tags = ["other"]' models.json >m && mv m models.json
	# a header and aligned columns
	out=$("$RM" list --tags it)
	[ "$(echo "$out" | wc -l)" = 2 ] || fail "list: $out"
	echo "$out" | head -1 | grep -qE '^model +dockerfile +parser +tags$' || fail "list header: $out"
	echo "$out" | tail -1 | grep -qE '^it_l1 +docker/smoke.Dockerfile +generic +it$' || fail "list line: $out"
	# where each field starts, on both lines
	starts='{p = 1; for (i = 1; i <= NF; i++) {s = index(substr($0, p), $i) + p - 1; printf "%d ", s; p = s + length($i)}}'
	[ "$(echo "$out" | head -1 | awk "$starts")" = "$(echo "$out" | tail -1 | awk "$starts")" ] ||
		fail "columns not aligned: $out"
	# for scripts
	[ "$("$RM" list --tags it --format csv)" = "$(printf 'model,dockerfile,parser,tags\nit_l1,docker/smoke.Dockerfile,generic,it')" ] ||
		fail "csv: $("$RM" list --tags it --format csv)"
	"$RM" list --tags it --format json | jq -e '. == [{"model": "it_l1", "dockerfile": "docker/smoke.Dockerfile", "parser": "generic", "tags": ["it"]}]' >/dev/null ||
		fail "json: $("$RM" list --tags it --format json)"
	"$RM" list --format yaml 2>err.txt && fail "--format yaml accepted"
	grep -q "'table', 'csv' or 'json'" err.txt || fail "format error: $(cat err.txt)"
	grep -q "^it_l2 " <<<"$("$RM" --list --tags it_l2)" || fail "--list"
	;;

args_are_argv)
	script argv <<'S'
for a in "$@"; do echo "arg=[$a]"; done
echo "performance: 1 x"
S
	entry it_argv argv "" | sed 's/^/[/; s/$/]/' | mkmad
	jq --arg a "--a 'two words' \$(touch /tmp/pwned)" '.[0].args = $a' models.json >m && mv m models.json
	"$RM" --tags 'it_argv:extra=yes' -o perf.csv 2>err.txt || fail "exit $?: $(cat err.txt)"
	grep -qx 'arg=\[two words\]' it_argv.live.log || fail "quoting: $(cat it_argv.live.log)"
	grep -qx 'arg=\[$(touch\]' it_argv.live.log || fail "no literal \$(: $(cat it_argv.live.log)"
	grep -qx 'arg=\[--extra\]' it_argv.live.log && grep -qx 'arg=\[yes\]' it_argv.live.log ||
		fail "tag args not appended: $(cat it_argv.live.log)"
	;;

build_cache)
	script bc <<'S'
echo "performance: 1 x"
S
	entry it_cache bc "" | sed 's/^/[/; s/$/]/' | mkmad
	# its own Dockerfile, so that no other case shares the image
	sed 's/mkdir -p \/tmp/mkdir -p \/cache-test \/tmp/' docker/smoke.Dockerfile >docker/cache.Dockerfile
	jq '.[0].dockerfile = "docker/cache"' models.json >m && mv m models.json
	"$RM" --tags it_cache -o perf.csv 2>err1.txt || fail "run 1: $(cat err1.txt)"
	"$RM" --tags it_cache -o perf.csv 2>err2.txt || fail "run 2"
	grep -q "up to date; build skipped" err2.txt || fail "unchanged context was rebuilt: $(cat err2.txt)"
	[ "$(csv_col perf.csv 1 docker_sha)" = "$(csv_col perf.csv 2 docker_sha)" ] || fail "image id changed"
	echo "# changed" >>docker/cache.Dockerfile
	"$RM" --tags it_cache -o perf.csv 2>err3.txt || fail "run 3"
	grep -q "building 'ci-it_cache_cache'" err3.txt || fail "a changed Dockerfile did not rebuild"
	"$RM" --tags it_cache --clean-docker-cache -o perf.csv 2>err4.txt || fail "run 4"
	grep -q "building 'ci-it_cache_cache'" err4.txt || fail "--clean-docker-cache did not rebuild"
	grep -q "Step 3/[0-9]* : RUN" it_cache.build.log && ! grep -q "Using cache" it_cache.build.log ||
		fail "--clean-docker-cache used the layer cache"
	;;

dry_run_mi300x)
	cp -r "$SRC/models.json" "$SRC/docker" "$SRC/scripts" .
	ctx='{"gpu_vendor":"AMD","guest_os":"UBUNTU","MAD_SYSTEM_GPU_ARCHITECTURE":"gfx942","MAD_SYSTEM_NGPUS":8}'
	# no engine is contacted: a dead DOCKER_HOST does not matter
	DOCKER_HOST=unix://$WORK/none.sock MAD_SECRETS_HFTOKEN=hf_dry_s3cret \
		"$RM" --tags pyt_mpt30b_training --dry-run --tunableop on --additional-context "$ctx" >on.txt 2>err.txt ||
		fail "dry run on: $(cat err.txt)"
	for want in "docker/pyt_mpt30b_training.ubuntu.amd.Dockerfile" "--build-arg MAD_SYSTEM_GPU_ARCHITECTURE=gfx942" \
		"--device /dev/kfd" "--device /dev/dri" "--group-add video" "--cap-add SYS_PTRACE" \
		"--security-opt seccomp=unconfined" "--ipc host" "--network host" "-e MAD_SYSTEM_NGPUS=8" \
		"-e PYTORCH_TUNABLEOP_ENABLED=1" "-e PYTORCH_TUNABLEOP_TUNING=1" \
		"PYTORCH_TUNABLEOP_FILENAME=/run_models/tunableop/" "-e MAD_SECRETS_HFTOKEN=***" \
		"bash run.sh --model_repo mosaicml/mpt-30b --test_option throughput --tunableop on"; do
		grep -qF -- "$want" on.txt || fail "dry run on lacks '$want': $(cat on.txt)"
	done
	grep -q -- "--tunableop off" on.txt && fail "the model's --tunableop off was not replaced"
	grep -q hf_dry_s3cret on.txt err.txt && fail "secret printed"
	DOCKER_HOST=unix://$WORK/none.sock "$RM" --tags pyt_mpt30b_training -n --tunableop off \
		--additional-context "$ctx" >off.txt 2>err.txt || fail "dry run off"
	grep -qF -- "-e PYTORCH_TUNABLEOP_ENABLED=0" off.txt || fail "off env: $(cat off.txt)"
	grep -qF -- "run.sh --model_repo mosaicml/mpt-30b --test_option throughput --tunableop off" off.txt || fail "off args"
	grep -q "TUNABLEOP_FILENAME" off.txt && fail "off still points at a results file"
	[ ! -e perf.csv ] || fail "a dry run wrote perf.csv"
	;;

secret_nowhere)
	script leak <<'S'
[ "$MAD_SECRETS_HFTOKEN" = "hf_n0where_VALUE" ] && echo "secret arrived"
echo "printing it: $MAD_SECRETS_HFTOKEN"
echo "to stderr: $MAD_SECRETS_HFTOKEN" >&2
sleep 2
echo "performance: 7 samples_per_sec"
S
	entry it_leak leak "" | sed 's/^/[/; s/$/]/' | mkmad
	MAD_SECRETS_HFTOKEN=hf_n0where_VALUE "$RM" --tags it_leak -o perf.csv >out.txt 2>err.txt &
	pid=$!
	trap 'kill -9 $pid 2>/dev/null || true; rm -rf "$WORK"' EXIT
	sleep 1.5
	if ps -eo args | grep -v grep | grep -q hf_n0where_VALUE; then fail "secret in the process list"; fi
	wait $pid || fail "run failed: $(cat err.txt)"
	grep -q "secret arrived" it_leak.live.log || fail "secret did not reach the container"
	grep -q "printing it: \*\*\*" it_leak.live.log || fail "stdout not masked: $(cat it_leak.live.log)"
	grep -q "to stderr: \*\*\*" it_leak.live.log || fail "stderr not masked"
	if grep -rq --exclude-dir=scripts hf_n0where_VALUE . ; then fail "secret on disk: $(grep -rl --exclude-dir=scripts hf_n0where_VALUE .)"; fi
	if grep -q hf_n0where_VALUE out.txt err.txt; then fail "secret printed"; fi
	api GET "/images/ci-it_leak_smoke/history" | grep -q hf_n0where_VALUE && fail "secret in image history"
	;;

repeat_summary)
	script rep <<'S'
n=$(cat /counter/n 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > /counter/n
echo "performance: $n samples_per_sec"
S
	entry it_rep rep "" | sed 's/^/[/; s/$/]/' | mkmad
	mkdir counter
	"$RM" --tags it_rep --repeat 3 -o perf.csv --additional-context "{\"docker_mounts\": {\"/counter\": \"$WORK/counter\"}}" >out.txt 2>err.txt ||
		fail "exit $?: $(cat err.txt)"
	[ "$(wc -l <perf.csv)" = 4 ] || fail "want 3 rows: $(cat perf.csv)"
	[ "$(csv_col perf.csv 3 repeat)" = 3 ] || fail "repeat column"
	[ "$(csv_col perf.csv 2 performance)" = 2 ] || fail "second run value"
	[ "$(csv_col perf.csv 1 relative_change)" = "" ] || fail "first row has no baseline"
	[ "$(csv_col perf.csv 2 relative_change)" = "+100.00" ] || fail "relative_change 1->2: $(csv_col perf.csv 2 relative_change)"
	[ "$(csv_col perf.csv 3 relative_change)" = "+50.00" ] || fail "relative_change 2->3"
	[ "$(grep -c 'Step 1/' it_rep.build.log)" = 1 ] || true
	[ -f it_rep.r3.live.log ] || fail "per-repeat logs"
	row=$(grep '^[^,]*,[^,]*,it_rep,performance,' perf_summary.csv) || fail "no summary row: $(cat perf_summary.csv)"
	echo "$row" | grep -q ',last,3,2,2,1,1,3,' || fail "statistics: $row"
	grep -q "performance (last)" out.txt || fail "summary not printed: $(cat out.txt)"
	;;

no_fuse)
	# Issue 29: a host without /dev/fuse (containers in containers, minimal VMs). madengine
	# adds the device to every GPU run and the engine then refuses to start the container
	# ("error gathering device information while adding custom device /dev/fuse"); it is
	# left out with one warning per run, and doctor says so. Stand-in nodes without fuse.
	mkdir -p dev/dri sys/class/kfd/kfd/topology/nodes/0 sys/class/kfd/kfd/topology/nodes/1
	mknod dev/kfd c 1 3 && mknod dev/dri/renderD128 c 1 3 || fail "mknod"
	printf 'cpu_cores_count 8\nsimd_count 0\ngfx_target_version 0\n' >sys/class/kfd/kfd/topology/nodes/0/properties
	printf 'simd_count 304\ngfx_target_version 90402\ndrm_render_minor 128\n' >sys/class/kfd/kfd/topology/nodes/1/properties
	script nofuse <<'S'
ls /dev/kfd /dev/fuse 2>&1
echo "performance: 1 x"
S
	printf '[%s, %s]\n' "$(entry it_nofuse1 nofuse "")" "$(entry it_nofuse2 nofuse "")" >models.json
	mkdir -p docker && cp "$SRC/docker/smoke.Dockerfile" "$SRC/docker/.dockerignore" docker/ && mkdir -p docker/smoke &&
		cp "$SRC/docker/smoke/busybox" docker/smoke/
	{ cat docker/smoke.Dockerfile; echo 'RUN echo "video:x:44:" > /etc/group && echo "root:x:0:0:root:/root:/bin/sh" > /etc/passwd'; } >docker/gpu.Dockerfile
	jq '.[].dockerfile = "docker/gpu"' models.json >m && mv m models.json
	RM_SYSFS_ROOT=$WORK/sys "$RM" --tags it_nofuse1,it_nofuse2 -o perf.csv \
		--additional-context "{\"docker_device_root\": \"$WORK/dev\"}" 2>err.txt || fail "exit $?: $(cat err.txt) $(cat perf.csv)"
	[ "$(grep -c 'no /dev/fuse' err.txt)" = 1 ] || fail "want one warning for the run: $(cat err.txt)"
	[ "$(grep -c ',SUCCESS,' perf.csv)" = 2 ] || fail "rows: $(cat perf.csv)"
	grep -q "^/dev/kfd" it_nofuse1.live.log || fail "kfd missing: $(cat it_nofuse1.live.log)"
	grep -q "/dev/fuse: No such file" it_nofuse1.live.log || fail "fuse given: $(cat it_nofuse1.live.log)"
	RM_DEV_ROOT=$WORK/dev "$RM" doctor >doc.txt 2>&1 || true
	grep -q "^WARN  fuse .*has no '$WORK/dev/fuse'" doc.txt || fail "doctor: $(grep fuse doc.txt)"
	"$RM" doctor >doc2.txt 2>&1 || true
	[ -c /dev/fuse ] && { grep -q "^OK    fuse" doc2.txt || fail "doctor on this host: $(grep fuse doc2.txt)"; }
	;;

devices)
	# stand-in GPU nodes (copies of /dev/null) and a fake sysfs with two gfx942 GPUs
	mkdir -p dev/dri sys/class/kfd/kfd/topology/nodes/0 sys/class/kfd/kfd/topology/nodes/1 sys/class/kfd/kfd/topology/nodes/2
	mknod dev/kfd c 1 3 && mknod dev/dri/renderD128 c 1 3 && mknod dev/dri/renderD129 c 1 3 &&
		mknod dev/fuse c 1 3 || fail "mknod"
	printf 'cpu_cores_count 8\nsimd_count 0\ngfx_target_version 0\n' >sys/class/kfd/kfd/topology/nodes/0/properties
	for i in 1 2; do
		printf 'simd_count 304\ngfx_target_version 90402\ndrm_render_minor %d\n' $((127 + i)) >sys/class/kfd/kfd/topology/nodes/$i/properties
	done
	script dev <<'S'
ls /dev/kfd /dev/dri/ 2>&1
echo "ngpus=$MAD_RUNTIME_NGPUS arch=$MAD_SYSTEM_GPU_ARCHITECTURE vendor=$MAD_GPU_VENDOR"
echo "performance: 1 x"
S
	entry it_dev dev "" '"n_gpus": "1"' | sed 's/"n_gpus":"-1",//; s/^/[/; s/$/]/' | mkmad
	# AMD containers join the video group: the image needs one
	{ cat docker/smoke.Dockerfile; echo 'RUN echo "video:x:44:" > /etc/group && echo "root:x:0:0:root:/root:/bin/sh" > /etc/passwd'; } >docker/gpu.Dockerfile
	jq '.[0].dockerfile = "docker/gpu"' models.json >m && mv m models.json
	RM_SYSFS_ROOT=$WORK/sys "$RM" --tags it_dev -o perf.csv \
		--additional-context "{\"docker_device_root\": \"$WORK/dev\"}" 2>err.txt || fail "exit $?: $(cat err.txt) $(cat perf.csv)"
	grep -q "renderD128" it_dev.live.log || fail "renderD128 missing: $(cat it_dev.live.log)"
	grep -q "renderD129" it_dev.live.log && fail "GPU 2 given to a 1-GPU model"
	grep -q "^/dev/kfd" it_dev.live.log || fail "kfd missing"
	grep -q "ngpus=1 arch=gfx942 vendor=AMD" it_dev.live.log || fail "env: $(cat it_dev.live.log)"
	# asking for more GPUs than the host has fails before any build
	jq '.[0].n_gpus = "4"' models.json >m && mv m models.json
	RM_SYSFS_ROOT=$WORK/sys "$RM" --tags it_dev -o perf2.csv 2>err.txt && fail "4 GPUs on a 2-GPU host"
	grep -q "needs 4 GPUs and the context has 2" perf2.csv || fail "reason: $(cat perf2.csv)"
	;;

telemetry)
	# A stand-in AMD host: two GPUs (fake sysfs written by tests/telemetry/fake-gpu-sysfs.sh,
	# device nodes that are /dev/null); GPU 0 draws 300 W, GPU 1 is held at 100 W, and the
	# model runs on GPU 1 alone (docker_gpus).
	mkdir -p dev/dri
	mknod dev/kfd c 1 3 && mknod dev/dri/renderD128 c 1 3 && mknod dev/dri/renderD129 c 1 3 &&
		mknod dev/fuse c 1 3 || fail "mknod"
	"$SRC/tests/telemetry/fake-gpu-sysfs.sh" "$WORK/sys" 2 300,100
	script tpow <<'S'
sleep 2
echo "performance: 500 samples_per_sec"
S
	entry it_tpow tpow "" '"n_gpus": "1"' | sed 's/"n_gpus":"-1",//; s/^/[/; s/$/]/' | mkmad
	{ cat docker/smoke.Dockerfile; echo 'RUN echo "video:x:44:" > /etc/group && echo "root:x:0:0:root:/root:/bin/sh" > /etc/passwd'; } >docker/gpu.Dockerfile
	jq '.[0].dockerfile = "docker/gpu"' models.json >m && mv m models.json
	ctx="{\"docker_device_root\": \"$WORK/dev\", \"docker_gpus\": \"1\"}"
	RM_SYSFS_ROOT=$WORK/sys "$RM" --tags it_tpow -o perf.csv --additional-context "$ctx" 2>err.txt ||
		fail "exit $?: $(cat err.txt) $(cat perf.csv)"
	metric() { awk -F, -v m="$1" '$4 == m { v = $5 } END { print v }' perf_it_tpow.csv; }
	unit() { awk -F, -v m="$1" '$4 == m { v = $6 } END { print v }' perf_it_tpow.csv; }
	dur=$(csv_col perf.csv 1 test_duration)
	awk -v p="$(metric gpu_power_avg_w)" 'BEGIN { exit !(p > 99 && p < 101) }' ||
		fail "gpu_power_avg_w $(metric gpu_power_avg_w), want 100: $(cat perf_it_tpow.csv)"
	awk -v e="$(metric gpu_energy_j)" -v d="$dur" 'BEGIN { exit !(e > 0.95 * 100 * d && e < 1.05 * 100 * d) }' ||
		fail "gpu_energy_j $(metric gpu_energy_j), want 100 W x $dur s"
	awk -v x="$(metric performance_per_watt)" 'BEGIN { exit !(x > 4.95 && x < 5.05) }' ||
		fail "performance_per_watt $(metric performance_per_watt), want 500 / 100"
	[ "$(unit performance_per_watt)" = "samples_per_sec/W" ] || fail "unit $(unit performance_per_watt)"
	[ "$(metric gpu_power_max_w)" = 100 ] || fail "gpu_power_max_w $(metric gpu_power_max_w)"
	[ "$(metric gpu_vram_max_mib)" = 2048 ] || fail "VRAM of GPU 1: $(metric gpu_vram_max_mib)"
	[ "$(metric gpu_util_avg_pct)" = 100 ] && [ "$(metric gpu_temp_max_c)" = 65 ] ||
		fail "busy/temperature: $(cat perf_it_tpow.csv)"
	[ "$(metric gpu_throttle_pct)" = 0 ] || fail "throttled at a steady clock"
	# the time series beside the log: GPU 1's readings only, at 10 per second
	[ -L it_tpow.telemetry.csv ] || fail "no stable link to the time series"
	head -1 it_tpow.telemetry.csv | grep -qx 't_s,gpu,power_w,temp_c,vram_mib,util_pct,sclk_mhz,power_limit_w,throttle' || fail "series header"
	# gpu_metrics read, no throttle reason: each cause at 0, the 750 W limit kept
	[ "$(metric gpu_throttle_power_cap_pct)" = 0 ] && [ "$(metric gpu_throttle_thermal_pct)" = 0 ] ||
		fail "causes without a reason: $(cat perf_it_tpow.csv)"
	[ "$(metric gpu_power_limit_w)" = 750 ] || fail "gpu_power_limit_w $(metric gpu_power_limit_w)"
	rows=$(tail -n +2 it_tpow.telemetry.csv | wc -l)
	[ "$(tail -n +2 it_tpow.telemetry.csv | cut -d, -f2 | sort -u)" = 1 ] || fail "a GPU the run does not use was sampled"
	awk -v n="$rows" -v d="$dur" 'BEGIN { exit !(n >= 8 * d) }' || fail "$rows readings in $dur s"
	grep -q "run_models: telemetry: sampling AMD GPU(s) 1 every 100 ms" it_tpow.live.log || fail "log: $(cat it_tpow.live.log)"
	grep -q "power 100.0 W average" it_tpow.live.log || fail "log summary"
	# throttling: the clock falls from 2100 to 1400 MHz while the GPU stays 100 % busy
	(sleep 1.2 && "$SRC/tests/telemetry/fake-gpu-sysfs.sh" "$WORK/sys" 2 300,100 100 1400) &
	RM_SYSFS_ROOT=$WORK/sys "$RM" --tags it_tpow -o perf.csv --additional-context "$ctx" 2>err.txt ||
		fail "exit $?: $(cat err.txt)"
	wait
	awk -v t="$(metric gpu_throttle_pct)" 'BEGIN { exit !(t > 10 && t < 90) }' ||
		fail "gpu_throttle_pct $(metric gpu_throttle_pct)"
	grep -q "GPU 1's clock fell from 2100 MHz to 1400 MHz at" it_tpow.live.log || fail "no throttle note: $(grep telemetry it_tpow.live.log)"
	grep -q "model 'it_tpow': GPU 1's clock fell" err.txt || fail "throttling not said on the terminal"
	grep -q "GPU 1's clock fell.*; the driver named no cause" it_tpow.live.log || fail "cause: $(grep telemetry it_tpow.live.log)"
	# why, from gpu_metrics: a hotspot temperature limit (SMU_THROTTLER_TEMP_HOTSPOT_BIT) in
	# every busy reading is a thermal note, a warning, and the share in perf_<model>.csv
	THROTTLE=0x1000000000 "$SRC/tests/telemetry/fake-gpu-sysfs.sh" "$WORK/sys" 2 300,100
	RM_SYSFS_ROOT=$WORK/sys "$RM" --tags it_tpow -o perf.csv --additional-context "$ctx" 2>err.txt ||
		fail "exit $?: $(cat err.txt)"
	[ "$(metric gpu_throttle_thermal_pct)" = 100 ] && [ "$(metric gpu_throttle_power_cap_pct)" = 0 ] ||
		fail "thermal share: $(tail -n 20 perf_it_tpow.csv)"
	grep -q "telemetry: GPU 1: thermal slowdown from .* s, in 100% of busy readings: a problem, check the cooling" it_tpow.live.log ||
		fail "no thermal note: $(grep telemetry it_tpow.live.log)"
	grep -q "warning: model 'it_tpow': GPU 1: thermal slowdown" err.txt || fail "thermal not warned: $(cat err.txt)"
	grep "^t_s\|thermal" it_tpow.telemetry.csv | sed -n 2p | grep -q ',1,.*,750,thermal$' || fail "series: $(sed -n 2p it_tpow.telemetry.csv)"
	# --telemetry off: no figures, no series
	"$SRC/tests/telemetry/fake-gpu-sysfs.sh" "$WORK/sys" 2 300,100
	rm -f it_tpow.telemetry.csv
	RM_SYSFS_ROOT=$WORK/sys "$RM" --tags it_tpow -o perf.csv --telemetry off --additional-context "$ctx" 2>err.txt ||
		fail "exit $?: $(cat err.txt)"
	run4=$(csv_col perf.csv 4 run_id)
	grep "$run4" perf_it_tpow.csv | grep -q gpu_ && fail "--telemetry off sampled"
	[ -e it_tpow.telemetry.csv ] && fail "--telemetry off wrote a series"
	# --telemetry on where nothing can be read: the run goes on and says why
	rm -r "$WORK/sys/class/drm"
	RM_SYSFS_ROOT=$WORK/sys "$RM" --tags it_tpow -o perf.csv --telemetry on --additional-context "$ctx" 2>err.txt ||
		fail "exit $?: $(cat err.txt)"
	grep -q "telemetry on, but nothing is sampled: GPU 1: no readable sensor" err.txt || fail "no warning: $(cat err.txt)"
	[ "$(csv_col perf.csv 5 status)" = SUCCESS ] || fail "status without telemetry"
	;;

telemetry_nvidia)
	# The real H100's readings of a bf16 GEMM (tests/telemetry/h100/nvsmi-load-events.csv,
	# driver 580.159.04: every busy reading at the 700 W power cap, clocks_event_reasons.active
	# 0x4) replayed by the stand-in nvidia-smi through a whole run: the share at the power cap
	# in perf_<model>.csv, and a note that names the 700 W limit as an expected cause, said,
	# not warned about. Docker takes an NVIDIA GPU request (DeviceRequests) only when its
	# dockerd finds nvidia-container-runtime-hook on its PATH, so the case runs a private
	# dockerd with a stand-in hook that does nothing (as the H100 check did, without the
	# Container Toolkit: ../shared/gpu/README.md).
	# shellcheck source=tests/faults/lib.sh
	. "$SRC/tests/faults/lib.sh"
	mkdir -p bin dev sys
	printf '#!/bin/sh\nexit 0\n' >bin/nvidia-container-runtime-hook
	chmod +x bin/nvidia-container-runtime-hook
	mknod dev/fuse c 1 3 || fail "mknod"
	edir=$(mktemp -d /var/tmp/rmn.XXXXXX)/e
	PATH="$WORK/bin:$PATH" faults_dockerd_start "$edir" || fail "cannot start a private dockerd"
	trap 'faults_dockerd_cleanup "$edir"; rm -rf "$WORK"' EXIT
	export DOCKER_HOST=unix://$edir/docker.sock
	SOCK=$edir/docker.sock
	script gemm <<'S'
sleep 4
echo "performance: 676.68 TFLOPS"
S
	entry it_tnv gemm "" '"n_gpus": "1"' | sed 's/"n_gpus":"-1",//; s/^/[/; s/$/]/' | mkmad
	{ cat docker/smoke.Dockerfile; echo 'RUN echo "root:x:0:0:root:/root:/bin/sh" > /etc/passwd'; } >docker/gpu.Dockerfile
	jq '.[0].dockerfile = "docker/gpu"' models.json >m && mv m models.json
	PATH="$SRC/tests/telemetry:$PATH" RM_SYSFS_ROOT=$WORK/sys \
		FAKE_NVSMI_REPLAY=$SRC/tests/telemetry/h100/nvsmi-load-events.csv FAKE_NVSMI_REPLAY_MS=5 \
		"$RM" --tags it_tnv -o perf.csv --additional-context "{\"docker_device_root\": \"$WORK/dev\"}" \
		2>err.txt || fail "exit $?: $(cat err.txt) $(cat perf.csv)"
	metric() { awk -F, -v m="$1" '$4 == m { v = $5 } END { print v }' perf_it_tnv.csv; }
	[ "$(metric gpu_throttle_power_cap_pct)" = 100 ] || fail "power cap share: $(cat perf_it_tnv.csv)"
	[ "$(metric gpu_throttle_thermal_pct)" = 0 ] && [ "$(metric gpu_power_limit_w)" = 700 ] ||
		fail "thermal share, limit: $(cat perf_it_tnv.csv)"
	grep -q "telemetry: GPU 0's clock fell from .*; cause: the power cap (the GPU at its 700 W limit) in 100% of busy readings: expected under full load, not a fault" it_tnv.live.log ||
		fail "note: $(grep telemetry it_tnv.live.log)"
	grep -q "model 'it_tnv': GPU 0's clock fell" err.txt || fail "not said on the terminal: $(cat err.txt)"
	grep -q "warning: model 'it_tnv': GPU 0" err.txt && fail "an expected cause warned about: $(cat err.txt)"
	[ "$(tail -n +2 it_tnv.telemetry.csv | grep -c ',700,power_cap$')" = 100 ] || fail "series: $(head -3 it_tnv.telemetry.csv)"
	;;

preflight)
	# The pre-flight check before a model's container starts (--preflight on; a suite's
	# default): GPU 1, the model's, has 4 GiB of VRAM in use (a fake AMD host): the model is
	# not run, SKIPPED with the finding as its reason; doctor --gpus says the same. With
	# --retries the check is the machine's: the memory freed during the wait, the second
	# attempt runs.
	mkdir -p dev/dri
	mknod dev/kfd c 1 3 && mknod dev/dri/renderD128 c 1 3 && mknod dev/dri/renderD129 c 1 3 &&
		mknod dev/fuse c 1 3 || fail "mknod"
	VRAM_MIB=200,4096 "$SRC/tests/telemetry/fake-gpu-sysfs.sh" "$WORK/sys" 2
	script pf <<'S'
echo "the model ran"
echo "performance: 1 samples_per_sec"
S
	entry it_pf pf "" '"n_gpus": "1"' | sed 's/"n_gpus":"-1",//; s/^/[/; s/$/]/' | mkmad
	{ cat docker/smoke.Dockerfile; echo 'RUN echo "video:x:44:" > /etc/group && echo "root:x:0:0:root:/root:/bin/sh" > /etc/passwd'; } >docker/gpu.Dockerfile
	jq '.[0].dockerfile = "docker/gpu"' models.json >m && mv m models.json
	ctx="{\"docker_device_root\": \"$WORK/dev\", \"docker_gpus\": \"1\"}"
	RM_SYSFS_ROOT=$WORK/sys "$RM" --tags it_pf -o perf.csv --preflight on --telemetry off \
		--additional-context "$ctx" 2>err.txt || fail "exit $?: $(cat err.txt)"
	[ "$(csv_col perf.csv 1 status)" = SKIPPED ] || fail "status: $(cat perf.csv)"
	grep -q "pre-flight: GPU 1: 4096 MiB of VRAM in use before the run (memory)" perf.csv || fail "reason: $(cat perf.csv)"
	grep -q "the model ran" it_pf.live.log && fail "the model ran on a GPU in use"
	grep -q "run_models: pre-flight: GPU 1: 4096 MiB" it_pf.live.log || fail "log: $(cat it_pf.live.log)"
	set +e
	RM_SYSFS_ROOT=$WORK/sys "$RM" doctor --gpus >doctor.txt 2>&1
	rc=$?
	set -e
	[ $rc = 1 ] && grep -q "^FAIL  memory  *GPU 1: 4096 MiB" doctor.txt || fail "doctor --gpus: exit $rc: $(cat doctor.txt)"
	grep -q "GPU 0" doctor.txt && fail "doctor --gpus: GPU 0 is fine: $(cat doctor.txt)"
	# the memory is freed while the runner waits to try again
	(sleep 1 && VRAM_MIB=200 "$SRC/tests/telemetry/fake-gpu-sysfs.sh" "$WORK/sys" 2) &
	RM_SYSFS_ROOT=$WORK/sys "$RM" --tags it_pf -o perf.csv --preflight on --telemetry off --retries 1 \
		--retry-wait 3 --additional-context "$ctx" 2>err.txt || fail "exit $?: $(cat err.txt)"
	wait
	[ "$(csv_col perf.csv 2 status) $(csv_col perf.csv 2 attempt)" = "SKIPPED 1" ] &&
		[ "$(csv_col perf.csv 3 status) $(csv_col perf.csv 3 attempt)" = "SUCCESS 2" ] || fail "attempts: $(cat perf.csv)"
	grep -q "attempt 1 of 2 was skipped for a reason of the machine: pre-flight: GPU 1" err.txt || fail "$(cat err.txt)"
	;;

provenance_compare)
	# What made each run, and report compare of two runs that differ in one environment
	# variable and the driver version (the stand-in nvidia-smi's: the H100's identity,
	# tests/telemetry/h100/nvsmi-identity.csv, with FAKE_NVSMI_DRIVER). The model uses no
	# GPU (n_gpus 0), so the shared engine runs it without the NVIDIA runtime. The second
	# run is a suite run with CI outputs: run.json and the SQLite export get the provenance,
	# a secret's value reaches none of them.
	mkdir -p dev && mknod dev/fuse c 1 3 || fail "mknod"
	script knob <<'S'
if [ "$MY_KNOB" = 2 ]; then echo "performance: 90 samples_per_sec"; else echo "performance: 100 samples_per_sec"; fi
S
	entry it_prov knob "" '"n_gpus": "0"' | sed 's/"n_gpus":"-1",//; s/^/[/; s/$/]/' | mkmad
	{ cat docker/smoke.Dockerfile; echo 'RUN echo "root:x:0:0:root:/root:/bin/sh" > /etc/passwd'; } >docker/gpu.Dockerfile
	jq '.[0].dockerfile = "docker/gpu"' models.json >m && mv m models.json
	run() { # DRIVER KNOB [ARGS...]
		local drv=$1 knob=$2
		shift 2
		PATH="$SRC/tests/telemetry:$PATH" RM_SYSFS_ROOT=$WORK/nosys FAKE_NVSMI_DRIVER=$drv \
			MAD_SECRETS_TOKEN=tok_Secret_42 "$RM" --tags it_prov -o perf.csv --telemetry off "$@" \
			--additional-context "{\"docker_device_root\": \"$WORK/dev\", \"docker_env_vars\": {\"MY_KNOB\": \"$knob\", \"ECHO\": \"tok_Secret_42\"}}" \
			2>err.txt || fail "exit $?: $(cat err.txt)"
	}
	run 580.159.04 1
	run 580.172.01 2 --junit junit.xml --export "sqlite:$WORK/r.db"
	a=$(csv_col perf.csv 1 run_id)
	b=$(csv_col perf.csv 2 run_id)
	[ -f perf.provenance.csv ] || fail "no provenance file"
	grep -q "^$a,,,driver and firmware,driver,580.159.04$" perf.provenance.csv || fail "driver: $(grep driver perf.provenance.csv)"
	grep -q "^$a,,,driver and firmware,gpu0.uuid,GPU-6813fe43-8968-07f7-726f-58d958045d80$" perf.provenance.csv || fail "uuid"
	grep -q "^$a,it_prov,docker/gpu.Dockerfile,image,id,sha256:" perf.provenance.csv || fail "image id: $(cat perf.provenance.csv)"
	grep -q "^$a,it_prov,docker/gpu.Dockerfile,image,dockerfile_sha256,sha256:" perf.provenance.csv || fail "dockerfile hash"
	grep -q "^$a,it_prov,docker/gpu.Dockerfile,environment,MAD_SECRETS_TOKEN,\*\*\*$" perf.provenance.csv || fail "secret variable"
	grep -q "^$a,it_prov,docker/gpu.Dockerfile,environment,ECHO,\*\*\*$" perf.provenance.csv || fail "secret value"
	grep -q "^$a,,,host,kernel,$(uname -r)$" perf.provenance.csv || fail "kernel"
	for f in perf.provenance.csv run.json r.db; do grep -q tok_Secret_42 "$f" && fail "the secret is in $f"; done
	# run.json and the database hold it too
	jq -e --arg k "it_prov	docker/gpu.Dockerfile" '.provenance[$k].groups.environment.MY_KNOB == "2" and
		.provenance[""].groups["driver and firmware"].driver == "580.172.01"' run.json >/dev/null ||
		fail "run.json: $(jq .provenance run.json)"
	[ "$(sqlite3 r.db "select value from provenance where run_id = '$b' and grp = 'environment' and name = 'MY_KNOB'")" = 2 ] ||
		fail "database: $(sqlite3 r.db 'select * from provenance' | head)"
	[ "$(sqlite3 r.db "select value from provenance where run_id = '$b' and model = '' and name = 'gpu0.serial'")" = 1752624021220 ] ||
		fail "database: serial"
	# the comparison names both differences and the metric's change with its verdict
	"$RM" report compare "$a" "$b" perf.csv >cmp.txt 2>cmp.err || fail "compare: $(cat cmp.err)"
	grep -q "it_prov samples_per_sec: 100 -> 90 (-10.00%): regression" cmp.txt || fail "metric: $(cat cmp.txt)"
	grep -A3 "^  driver and firmware:" cmp.txt | grep -q "(the host) driver: 580.159.04 -> 580.172.01" || fail "driver: $(cat cmp.txt)"
	grep -A20 "^  environment:" cmp.txt | grep -q "it_prov \[docker/gpu.Dockerfile\] MY_KNOB: 1 -> 2" || fail "env: $(cat cmp.txt)"
	[ "$(grep -c -- ' -> ' cmp.txt)" = 5 ] || fail "more differences than made: $(cat cmp.txt)"
	"$RM" report compare "$a" "$b" perf.csv --format json >cmp.json || fail "json"
	jq -e '.metrics[0].change_pct < -9.9 and .metrics[0].verdict == "regression" and
		(.differences.environment | map(select(.name == "MY_KNOB" and .a == "1" and .b == "2")) | length == 1)' cmp.json >/dev/null ||
		fail "json: $(cat cmp.json)"
	grep -q '^| it_prov | samples_per_sec | 100 | 90 | -10.00% | regression' <<<"$("$RM" report compare "$a" "$b" perf.csv --format markdown)" ||
		fail "markdown"
	# the HTML report's run details: the latest run's provenance
	"$RM" report html perf.csv -o report.html 2>/dev/null || fail "report html"
	grep -q '<details id="run-details"><summary><h2>Run details</h2> ('"$b"': what made it)' report.html &&
		grep -q '<td>driver and firmware</td><td>(the host)</td><td>driver</td><td><code>580.172.01</code>' report.html ||
		fail "run details: $(grep -o 'run-details.\{0,300\}' report.html)"
	# from the database: run 1 exported too, the same differences
	"$RM" export --db "sqlite:$WORK/r.db" perf.csv 2>/dev/null || fail "export"
	"$RM" report compare "$a" "$b" "sqlite:$WORK/r.db" >db.txt || fail "compare from the database"
	grep -q "(the host) driver: 580.159.04 -> 580.172.01" db.txt && grep -q "MY_KNOB: 1 -> 2" db.txt || fail "db: $(cat db.txt)"
	;;

telemetry_node_run)
	# What each SLURM task runs (run_models node-run) samples its node's GPUs itself: the
	# series beside the node's log, the figures in its result file (the submitter merges
	# every node's). Driven here without SLURM, from a job document written by hand.
	mkdir -p dev/dri logs
	mknod dev/kfd c 1 3 && mknod dev/dri/renderD128 c 1 3 && mknod dev/dri/renderD129 c 1 3 &&
		mknod dev/fuse c 1 3 || fail "mknod"
	"$SRC/tests/telemetry/fake-gpu-sysfs.sh" "$WORK/sys" 2 250
	script tnode <<'S'
sleep 1
echo "performance: 7 samples_per_sec"
S
	entry it_tnode tnode "" '"n_gpus": "1"' | sed 's/"n_gpus":"-1",//; s/^/[/; s/$/]/' | mkmad
	{ cat docker/smoke.Dockerfile; echo 'RUN echo "video:x:44:" > /etc/group && echo "root:x:0:0:root:/root:/bin/sh" > /etc/passwd'; } >docker/gpu.Dockerfile
	jq '.[0].dockerfile = "docker/gpu"' models.json >m && mv m models.json
	ctx="{\"docker_device_root\": \"$WORK/dev\"}"
	RM_SYSFS_ROOT=$WORK/sys "$RM" --tags it_tnode --skip-model-run --additional-context "$ctx" 2>err.txt ||
		fail "build: $(cat err.txt)"
	jobdoc() { # SETTINGS_JSON
		jq -n --arg root "$WORK" --arg ctx "$ctx" --argjson set "$1" '{schema: 1, run_id: "R1",
			root: $root, log_dir: ($root + "/logs"), context_files: [], contexts: [$ctx],
			workloads: {k: {model: "it_tnode", image: "ci-it_tnode_gpu", run_id: "R1",
				log_dir: ($root + "/logs"), n_gpus: 1, gpus: "1", timeout: 60,
				settings: $set, pull: false, log_base: ($root + "/logs/it_tnode.R1")}}}' >job.json
	}
	jobdoc '{}'
	RM_SYSFS_ROOT=$WORK/sys NODE_RANK=0 "$RM" node-run --job job.json --workload k >node.out 2>node.err ||
		fail "node-run: exit $?: $(cat node.err)"
	res=logs/it_tnode.R1.node0.result.json
	jq -e '.exit_code == 0' "$res" >/dev/null || fail "result: $(cat "$res")"
	jq -e '.telemetry.power_avg_w > 249 and .telemetry.power_avg_w < 251 and .telemetry.n_gpus == 1' "$res" >/dev/null ||
		fail "telemetry in the result file: $(cat "$res")"
	jq -e '.telemetry.energy_j > 200 and .telemetry.vram_max_mib == 2048' "$res" >/dev/null || fail "energy, VRAM: $(cat "$res")"
	series=logs/it_tnode.R1.node0.telemetry.csv
	[ "$(tail -n +2 "$series" | cut -d, -f2 | sort -u)" = 1 ] || fail "series: $(head -3 "$series")"
	[ "$(tail -n +2 "$series" | wc -l)" -ge 8 ] || fail "few readings: $(wc -l <"$series")"
	# the setting travels in the job document
	rm "$res" "$series"
	jobdoc '{"telemetry": "off"}'
	RM_SYSFS_ROOT=$WORK/sys NODE_RANK=0 "$RM" node-run --job job.json --workload k >node.out 2>node.err ||
		fail "node-run off: exit $?: $(cat node.err)"
	grep -q "performance: 7" node.out || fail "the workload's output is not on the node's stdout: $(cat node.out)"
	jq -e 'has("telemetry") | not' "$res" >/dev/null || fail "--telemetry off sampled: $(cat "$res")"
	[ -e "$series" ] && fail "--telemetry off wrote a series"
	# --preflight on travels too: the node checks its own GPUs before the container starts;
	# GPU 1 (the workload's) with 4 GiB in use fails the node, named, and its result file
	# says so (the submitter's --retries may try the job again)
	rm -f "$res"
	VRAM_MIB=200,4096 "$SRC/tests/telemetry/fake-gpu-sysfs.sh" "$WORK/sys" 2 250
	jobdoc '{"preflight": "on", "telemetry": "off"}'
	set +e
	RM_SYSFS_ROOT=$WORK/sys NODE_RANK=0 SLURMD_NODENAME=gpu-n7 "$RM" node-run --job job.json --workload k >node.out 2>node.err
	rc=$?
	set -e
	[ $rc != 0 ] || fail "node-run ran on a GPU in use: $(cat node.err)"
	grep -q "pre-flight on node gpu-n7: GPU 1: 4096 MiB of VRAM in use before the run" node.err || fail "not named: $(cat node.err)"
	jq -e '.preflight == true' "$res" >/dev/null || fail "result: $(cat "$res")"
	grep -q "performance: 7" node.out && fail "the workload ran: $(cat node.out)"
	;;

keep_alive_running)
	script kar <<'S'
echo "performance: 2 x"
exit 0
S
	entry it_kar kar "" | sed 's/^/[/; s/$/]/' | mkmad
	"$RM" --tags it_kar --keep-alive -o perf.csv 2>err.txt || fail "exit $?: $(cat err.txt)"
	ids=$(api GET "/containers/json?all=1&filters=$(printf '{"label":["run_models.model=it_kar"]}' | jq -sRr @uri)" | jq -r '.[].Id')
	running=$(for id in $ids; do api GET "/containers/$id/json" | jq -r .State.Running; done)
	for id in $ids; do api DELETE "/containers/$id?force=1" >/dev/null; done
	[ "$running" = true ] || fail "container not running: '$running'"
	[ "$(csv_col perf.csv 1 status)" = SUCCESS ] || fail "status $(cat perf.csv)"
	grep -q "$CLI exec -it" err.txt || fail "no hint how to enter it"
	;;

gpu_less_seed)
	cp -r "$SRC/models.json" "$SRC/docker" "$SRC/scripts" .
	set +e
	"$RM" --tags pyt_mpt30b_training,smoke -o perf.csv 2>err.txt
	rc=$?
	set -e
	[ $rc = 1 ] || fail "exit $rc"
	grep -q "pyt_mpt30b_training.*FAILURE.*is for AMD GPUs" perf.csv || fail "reason: $(cat perf.csv)"
	grep -q "^smoke_busybox,.*SUCCESS" perf.csv || fail "smoke did not run"
	;;

context_file)
	script cf <<'S'
echo "from yaml: $FROM_YAML, override: $OVER"
echo "performance: 1 x"
S
	entry it_cf cf "" | sed 's/^/[/; s/$/]/' | mkmad
	printf 'docker_env_vars:\n  FROM_YAML: "yes it is"\n  OVER: file\n' >ctx.yaml
	"$RM" --tags it_cf -o perf.csv --additional-context-file ctx.yaml \
		--additional-context '{"docker_env_vars": {"OVER": "cli"}}' 2>err.txt || fail "exit $?: $(cat err.txt)"
	grep -q "from yaml: yes it is, override: cli" it_cf.live.log || fail "$(cat it_cf.live.log)"
	printf 'docker_env_vars: [unclosed\n' >bad.yaml
	"$RM" --tags it_cf -o perf.csv --additional-context-file bad.yaml 2>err.txt && fail "bad yaml accepted"
	grep -q "bad.yaml" err.txt && grep -q "line" err.txt || fail "yaml error: $(cat err.txt)"
	;;

tunableop_run)
	script tun <<'S'
echo "enabled=$PYTORCH_TUNABLEOP_ENABLED tuning=$PYTORCH_TUNABLEOP_TUNING args=$*"
f=$(printf "$PYTORCH_TUNABLEOP_FILENAME" 0)
echo "Validator,PT_VERSION,2.5" > "$f" && echo "wrote $f"
echo "performance: 1 x"
S
	entry it_tun tun "--steps 1 --tunableop off" | sed 's/^/[/; s/$/]/' | mkmad
	"$RM" --tags it_tun --tunableop on -o perf.csv 2>err.txt || fail "exit $?: $(cat err.txt)"
	grep -q "enabled=1 tuning=1 args=--steps 1 --tunableop on$" it_tun.live.log || fail "$(cat it_tun.live.log)"
	[ -f tunableop/it_tun/tunableop_results0.csv ] || fail "tuned results did not survive: $(ls -R tunableop 2>&1)"
	[ "$(csv_col perf.csv 1 tunableop)" = on ] || fail "tunableop column"
	# TunableOp is a setting with its own column: the args column does not repeat it
	[ "$(csv_col perf.csv 1 args)" = "--steps 1" ] || fail "args column: $(csv_col perf.csv 1 args)"
	"$RM" --tags it_tun -o perf.csv 2>err.txt || fail "second run"
	[ "$(csv_col perf.csv 2 tunableop)" = off ] || fail "without the flag the model decides"
	;;

progress_plain)
	script prog <<'S'
for i in 1 2 3; do echo "step $i"; sleep 1; done
echo "performance: 1 x"
S
	entry it_prog prog "" | sed 's/^/[/; s/$/]/' | mkmad
	"$RM" --tags it_prog --progress-interval 1 -o perf.csv 2>err.txt || fail "exit $?"
	grep -q "run_models: \[it_prog\] running 0:0[0-9]" err.txt || fail "no progress lines: $(cat err.txt)"
	if grep -q "\[it_prog\] running" it_prog.live.log; then fail "progress in the log"; fi
	;;

doctor)
	"$RM" doctor >doc.txt 2>&1 || fail "doctor on this host: $(cat doc.txt)"
	grep -q "^OK    docker" doc.txt || fail "docker not OK: $(cat doc.txt)"
	grep -q "numa_balancing" doc.txt || fail "no numa check"
	"$RM" doctor --format json | jq -e 'length > 3' >/dev/null || fail "json"
	set +e
	DOCKER_HOST=unix://$WORK/none.sock "$RM" doctor >doc2.txt 2>&1
	rc=$?
	set -e
	[ $rc = 1 ] || fail "exit $rc with a dead engine"
	grep -q "^FAIL  docker" doc2.txt || fail "$(cat doc2.txt)"
	;;

workload_parser)
	# a container replaying a real Composer log (tests/parsers fixture, source in its header)
	mkdir -p scripts/mpt
	grep -v '^# ' "$SRC/tests/parsers/llm_foundry/rocm_blog_mpt30b_1node.log" >scripts/mpt/composer.log
	script mpt <<'S'
cat composer.log
S
	entry it_mpt mpt "" '"parser": "llm_foundry"' | sed 's/^/[/; s/$/]/' | mkmad
	"$RM" --tags it_mpt -o perf.csv 2>err.txt || fail "exit $?: $(cat err.txt)"
	[ "$(csv_col perf.csv 1 performance)" = 1.4307 ] || fail "performance $(csv_col perf.csv 1 performance)"
	[ "$(csv_col perf.csv 1 metric)" = samples_per_sec ] || fail "metric"
	head -1 perf_it_mpt.csv | grep -qx 'timestamp,run_id,model,metric,value,unit,step,aggregate' || fail "perf_it_mpt.csv header"
	grep -q ',it_mpt,throughput/samples_per_sec,1.4307,samples/s,3,last$' perf_it_mpt.csv || fail "$(cat perf_it_mpt.csv)"
	grep -q ',it_mpt,throughput/device/samples_per_sec,0.1788,samples/s,3,last$' perf_it_mpt.csv || fail "per device"
	grep -q ',it_mpt,metrics/train/LanguageCrossEntropy,8.4361,,3,last$' perf_it_mpt.csv || fail "LanguageCrossEntropy"
	grep -q ',it_mpt,loss/train/total,8.3177,,3,last$' perf_it_mpt.csv || fail "loss"
	# the same log re-parsed from the live log gives the same figure
	grep -qx 'performance,1.4307,samples_per_sec,,last' <<<"$("$RM" parse --parser llm_foundry it_mpt.live.log)" || fail "parse"
	;;

double_sigint)
	script dsig <<'S'
echo "started"
sleep 600
S
	entry it_dsig dsig "" | sed 's/^/[/; s/$/]/' | mkmad
	"$RM" --tags it_dsig -o perf.csv >out.txt 2>err.txt &
	pid=$!
	cleanup_dsig() {
		kill -9 $pid 2>/dev/null || true
		for id in $(api GET "/containers/json?all=1&filters=$(printf '{"label":["run_models.model=it_dsig"]}' | jq -sRr @uri)" | jq -r '.[].Id'); do
			api DELETE "/containers/$id?force=1" >/dev/null || true
		done
		rm -rf "$WORK"
	}
	trap cleanup_dsig EXIT
	for _ in $(seq 1 100); do
		grep -q started it_dsig.live.log 2>/dev/null && break
		sleep 0.2
	done
	kill -INT $pid
	kill -INT $pid
	start=$(date +%s)
	set +e
	wait $pid
	rc=$?
	set -e
	[ $rc = 130 ] || fail "exit $rc, want 130"
	[ $(($(date +%s) - start)) -le 2 ] || fail "the second Ctrl-C did not exit at once"
	;;

build_secret)
	script bs <<'S'
echo "performance: 1 x"
S
	entry it_bsec bs "" '"build_secrets": ["MAD_SECRETS_BUILDTOK"]' | sed 's/^/[/; s/$/]/' | mkmad
	{ cat docker/smoke.Dockerfile; echo 'ARG MAD_SECRETS_BUILDTOK'; echo 'RUN echo "token seen: $MAD_SECRETS_BUILDTOK"'; } >docker/bsec.Dockerfile
	jq '.[0].dockerfile = "docker/bsec"' models.json >m && mv m models.json
	MAD_SECRETS_BUILDTOK=bt_v4lue_123 "$RM" --tags it_bsec --clean-docker-cache -o perf.csv 2>err.txt || fail "exit $?: $(cat err.txt)"
	grep -q "passing secret 'MAD_SECRETS_BUILDTOK' as a build arg because its field 'build_secrets' asks" err.txt ||
		fail "no warning: $(cat err.txt)"
	grep -q "token seen: \*\*\*" it_bsec.build.log || fail "build log: $(cat it_bsec.build.log)"
	if grep -rq bt_v4lue_123 perf.csv it_bsec.build.log it_bsec.live.log err.txt; then fail "secret leaked"; fi
	;;

mlperf_score)
	grep -v '^# ' "$SRC/tests/parsers/mlperf/amd_mi300x_llama2_70b_lora_result_0.log" >mllog.txt
	mkdir -p scripts/ml && mv mllog.txt scripts/ml/
	script ml <<'S'
cat mllog.txt
S
	entry it_ml ml "" '"parser": "mlperf"' | sed 's/^/[/; s/$/]/' | mkmad
	"$RM" --tags it_ml --repeat 3 --score mlperf --warmup 0 -o perf.csv >out.txt 2>err.txt || fail "exit $?: $(cat err.txt)"
	[ "$(csv_col perf.csv 3 performance)" = 33.9308 ] || fail "time to train: $(cat perf.csv)"
	[ "$(csv_col perf.csv 1 metric)" = time_to_train_min ] || fail "metric"
	grep -q ',it_ml,performance,time_to_train_min,last,3,33.9308,33.9308,0,33.9308,33.9308,33.9308,"mlperf: drop fastest and slowest, mean of the rest"$' perf_summary.csv ||
		fail "score row: $(cat perf_summary.csv)"
	grep -q "MLPerf scores take 10 runs; this one has 3" err.txt || fail "no 10-run warning"
	;;

*)
	fail "unknown case"
	;;
esac
echo "ok: $case_name"
