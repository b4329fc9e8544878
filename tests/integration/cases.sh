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
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

fail() {
	echo "FAIL [$case_name]: $*" >&2
	exit 1
}
api() { # METHOD PATH
	curl -fsS --unix-socket "$SOCK" -X "$1" "http://localhost$2"
}
# Containers labelled with this model name (running or not).
containers_of() {
	api GET "/containers/json?all=1&filters=$(printf '{"label":["run_models.model=%s"]}' "$1" | jq -sRr @uri)" | jq length
}
# The value of column NAME in row N (1 = first data row) of a CSV without embedded newlines.
csv_col() { # FILE N NAME
	awk -v n="$2" -v name="$3" -F, 'NR==1{for(i=1;i<=NF;i++) if($i==name) c=i; next}
		NR==n+1{print $c}' "$1"
}
# Makes a MAD folder with the smoke image; models.json from stdin; scripts written by caller.
mkmad() {
	mkdir -p docker/smoke scripts
	cp "$SRC/docker/smoke.Dockerfile" "$SRC/docker/.dockerignore" docker/
	cp "$SRC/docker/smoke/busybox" docker/smoke/busybox
	cat >models.json
}
script() { # DIR, body from stdin
	mkdir -p "scripts/$1"
	cat >"scripts/$1/run.sh"
}
entry() { # NAME DIR ARGS [EXTRA_JSON]
	printf '{"name":"%s","dockerfile":"docker/smoke","scripts":"scripts/%s/run.sh","n_gpus":"-1","owner":"ci","tags":["it"],"args":"%s"%s}' \
		"$1" "$2" "$3" "${4:+,$4}"
}

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
	[ "$(head -1 perf.csv | tr ',' '\n' | wc -l)" = 36 ] || fail "header is not 29+7 columns"
	head -1 perf.csv | grep -q '^model,n_gpus,nnodes,gpus_per_node,training_precision,pipeline,args,tags,docker_file,base_docker,docker_sha,docker_image,git_commit,machine_name,deployment_type,launcher,gpu_architecture,performance,metric,relative_change,status,build_duration,test_duration,dataname,data_provider_type,data_size,data_download_duration,build_number,additional_docker_run_options,' ||
		fail "header differs from madengine's 29 columns"
	[ "$(csv_col perf.csv 1 status)" = SUCCESS ] || fail "status $(csv_col perf.csv 1 status)"
	[ "$(csv_col perf.csv 1 performance)" = 1234.5 ] || fail "performance"
	[ "$(csv_col perf.csv 1 metric)" = samples_per_sec ] || fail "metric"
	[ "$(csv_col perf.csv 1 docker_image)" = ci-smoke_busybox_smoke ] || fail "image name"
	csv_col perf.csv 1 docker_sha | grep -q '^sha256:' || fail "image id"
	grep -q 'step 5/5' smoke_busybox.live.log || fail "live log"
	grep -q 'Step' smoke_busybox.build.log || fail "build log"
	[ "$(containers_of smoke_busybox)" = 0 ] || fail "container left"
	# a second run appends, never rewrites
	"$RM" --tags smoke -o perf.csv -q 2>/dev/null || fail "second run"
	[ "$(wc -l <perf.csv)" = 3 ] || fail "rows were not appended"
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
	[ "$(head -1 perf.csv | tr ',' '\n' | wc -l)" = 36 ] || fail "extra column changed the header"
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
	grep -qi 'non-zero' it_broken.build.log || fail "build log: $(cat it_broken.build.log)"
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
	grep -q "docker rm -f" err.txt || fail "no hint how to remove it"
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
	out=$("$RM" list --tags it)
	[ "$(echo "$out" | wc -l)" = 1 ] || fail "list: $out"
	echo "$out" | grep -q "^it_l1	docker/smoke.Dockerfile	generic	it$" || fail "list line: $out"
	"$RM" --list --tags it_l2 | grep -q "^it_l2	" || fail "--list"
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

*)
	fail "unknown case"
	;;
esac
echo "ok: $case_name"
