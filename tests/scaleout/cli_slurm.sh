#!/usr/bin/env bash
# The SLURM launcher through the real CLI, on the real two-node cluster and registry of
# fixture.sh, with containers on the real dockerd (every task runs `run_models node-run`):
#   two_node   a two-node job: rank 0's row in perf.csv (deployment_type slurm, nnodes 2,
#              rank 0's own figure), both node logs, MASTER_ADDR/NODE_RANK/NNODES/WORLD_SIZE/
#              MAD_MULTI_NODE_RUNNER in both containers, the batch script kept, COMPLETED
#   cancel     SIGINT mid-job: exit 130, no job and no container left, a FAILURE row
#   array      4 one-node models: one job array, 4 rows
#   fail       rank 1 exits 3: FAILURE with SLURM's state and the rank that failed
#   manifest   build --registry (pushed; a second build reuses), local images removed, run
#              --manifest on SLURM: the nodes pull (the registry's access log shows it); a
#              model the manifest lacks and an image the registry lacks give FAILURE rows
#   alloc      inside `salloc -N 2`: srun directly; SIGINT there leaves no container
#   results    multiple_results copied off rank 0's container, with --repeat 2
#   queued     a job waiting behind another: --timeout and test_duration count from RUNNING
#   errors     a request the partition can never meet, an unknown partition, --dry-run
#   kill9      the submitter killed with SIGKILL: its watchdog cancels the job
#   same_request  one workload, every container setting given: the container request a node
#              makes from the job document (node-run --dry-run) is the local dry run's, but
#              for the run id, the container name and the image (a local build's id)
#   tools      a tool of the folder's tools.json on two nodes: pre script, wrapper, model, post
#              script in each rank's log, each rank's output beside its log; a failing pre
#              script's FAILURE names the tool; node-run's request is the local dry run's
#   timeout    (manual: 60-90 s) slurm.time reached: FAILURE TIMEOUT
# Usage: cli_slurm.sh ENV_FILE RUN_MODELS SOURCE_DIR CASE   (ENV_FILE from fixture.sh start)
# RM_TEST_KEEP=1 keeps the work folder.
set -euo pipefail
env_file=$1 rm_bin=$(realpath "$2") src=$(realpath "$3") case_name=$4
# shellcheck source=/dev/null
. "$env_file"
sock=${DOCKER_HOST#unix://}
work=$(mktemp -d)
run_ids=()

api() { # METHOD PATH
	curl -fsS --unix-socket "$sock" -X "$1" "http://localhost$2"
}
ours() { # RUN_ID: the containers of that run (any state)
	api GET "/containers/json?all=1&filters=$(printf '{"label":["run_models.run=%s"]}' "$1" | jq -sRr @uri)" | jq -r '.[].Id'
}
cleanup() {
	local rid id
	for rid in "${run_ids[@]}"; do
		for id in $(ours "$rid" || true); do api DELETE "/containers/$id?force=1" >/dev/null || true; done
	done
	if [ -n "${RM_TEST_KEEP:-}" ]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
fail() {
	echo "FAIL [$case_name]: $*" >&2
	for f in "$work"/out* "$work"/mad/logs/*.err "$work"/mad/logs/*batch.log; do
		[ -f "$f" ] && { echo "== $f"; tail -n 8 "$f"; } >&2
	done
	exit 1
}
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.2f", b - a}'; }
csv_col() { # FILE N NAME: column NAME of data row N (1 = the first)
	python3 -c 'import csv, sys; print(list(csv.DictReader(open(sys.argv[1])))[int(sys.argv[2]) - 1][sys.argv[3]])' "$@"
}
rows() { python3 -c 'import csv, sys; print(len(list(csv.DictReader(open(sys.argv[1])))))' "$1"; }
run_id_of() { sed -n 's/^run_models: run \([^:]*\): .*/\1/p' "$1" | head -n 1; }
job_of() { sed -n 's/.*submitted slurm job \([0-9]*\).*/\1/p' "$1" | head -n 1; }
no_containers() { # RUN_ID
	local n
	n=$(ours "$1" | grep -c . || true)
	[ "$n" = 0 ] || fail "$n container(s) of run $1 left"
}
job_gone() { # JOB_ID
	[ -z "$(squeue -h -j "$1" -o %i 2>/dev/null)" ] || fail "job $1 still queued"
}
# Waits for a line in a file (at most 30 s).
wait_for() { # PATTERN FILE_GLOB
	local i
	for i in $(seq 1 300); do
		# shellcheck disable=SC2086
		grep -q "$1" $2 2>/dev/null && return 0
		sleep 0.1
	done
	fail "no '$1' in $2 within 30 s"
}

mad=$work/mad
mkdir -p "$mad/docker/smoke"
cp -r "$src/tests/scaleout/mad/." "$mad/"
cp "$src/docker/smoke.Dockerfile" "$src/docker/.dockerignore" "$mad/docker/"
cp "$src/docker/smoke/busybox" "$mad/docker/smoke/busybox"
cd "$mad"
two='{"slurm": {"nodes": 2, "exclusive": false, "time": "5"}, "distributed": {"port": 29511}}'
one='{"slurm": {"exclusive": false, "time": "5"}}'
t0=$(now)

case $case_name in
two_node)
	"$rm_bin" --tags slurm_env -c "$two" --log-dir logs -o perf.csv >"$work/out" 2>&1 || fail "exit $?"
	rid=$(run_id_of "$work/out") job=$(job_of "$work/out")
	run_ids+=("$rid")
	echo "two_node: job $job, run_models done in $(since "$t0") s"
	[ "$(rows perf.csv)" = 1 ] || fail "$(rows perf.csv) rows"
	for c in status:SUCCESS performance:1000.5 deployment_type:slurm nnodes:2 launcher:torchrun \
		gpus_per_node:0 exit_code:0; do
		[ "$(csv_col perf.csv 1 "${c%%:*}")" = "${c#*:}" ] || fail "${c%%:*} is '$(csv_col perf.csv 1 "${c%%:*}")'"
	done
	for r in 0 1; do
		log=logs/slurm_env.node$r.log
		[ -L "$log" ] && [ -f "$log" ] || fail "no $log (link to this run's)"
		grep -q "^model=slurm_env rank=$r master=127.0.0.1:29511 nnodes=2 world=2 gpus=0$" "$log" ||
			fail "rank $r env: $(head -n 1 "$log")"
		grep -q "^runner=torchrun --nnodes=2 --nproc_per_node=0 --node_rank=$r --master_addr=127.0.0.1 --master_port=29511$" "$log" ||
			fail "rank $r runner: $(sed -n 2p "$log")"
		grep -q "^performance: 100$r.5 samples_per_sec" "$log" || fail "rank $r: no performance"
	done
	grep -q '^performance: 1000.5' "logs/slurm_env.$rid.live.log" || fail "the live log is not rank 0's"
	grep -q '^#SBATCH --nodes=2$' "logs/slurm_env.$rid.sbatch" || fail "batch script not kept"
	# each node's provenance (its result file's), under the model in perf.csv's companion
	for r in 0 1; do
		grep -q "^$rid,slurm_env,.*,host,node$r [^,]*\.kernel,$(uname -r)\$" perf.provenance.csv ||
			fail "node $r's provenance: $(grep "node$r" perf.provenance.csv | head -3)"
	done
	scontrol -o show job "$job" | grep -q 'JobState=COMPLETED' || fail "job $job: $(scontrol -o show job "$job")"
	job_gone "$job"
	no_containers "$rid"
	;;
cancel)
	"$rm_bin" --tags slurm_env:steps=300:sleep=0.2 -c "$two" --log-dir logs -o perf.csv >"$work/out" 2>&1 &
	pid=$!
	wait_for '^step 2' 'logs/slurm_env.*.node1.log'
	rid=$(run_id_of "$work/out") job=$(job_of "$work/out")
	run_ids+=("$rid")
	[ "$(ours "$rid" | grep -c .)" = 2 ] || fail "$(ours "$rid" | grep -c .) containers running, want 2"
	tc=$(now)
	kill -INT "$pid"
	rc=0
	wait "$pid" || rc=$?
	echo "cancel: job $job, run_models exited $rc $(since "$tc") s after SIGINT"
	[ "$rc" = 130 ] || fail "exit $rc, want 130"
	job_gone "$job"
	no_containers "$rid"
	[ "$(csv_col perf.csv 1 status)" = FAILURE ] || fail "status $(csv_col perf.csv 1 status)"
	[ "$(csv_col perf.csv 1 reason)" = "interrupted by SIGINT" ] || fail "reason: $(csv_col perf.csv 1 reason)"
	grep -q 'SIGTERM on rank 0' logs/slurm_env.*.node0.err || fail "rank 0 was not stopped by SIGTERM"
	;;
array)
	"$rm_bin" --tags array -c "$one" --log-dir logs -o perf.csv >"$work/out" 2>&1 || fail "exit $?"
	rid=$(run_id_of "$work/out")
	run_ids+=("$rid")
	echo "array: 4 models in $(since "$t0") s"
	[ "$(grep -c 'submitted slurm job' "$work/out")" = 1 ] || fail "not one submission"
	grep -q 'submitted slurm job [0-9]* (4 workload(s))' "$work/out" || fail "not an array of 4"
	grep -q -- '^#SBATCH --array=0-3$' "logs/$rid.array1.sbatch" || fail "no --array=0-3"
	[ "$(rows perf.csv)" = 4 ] || fail "$(rows perf.csv) rows"
	for i in 0 1 2 3; do
		[ "$(csv_col perf.csv $((i + 1)) model)" = "arr_$i" ] || fail "row $((i + 1))"
		[ "$(csv_col perf.csv $((i + 1)) status)" = SUCCESS ] || fail "arr_$i: $(csv_col perf.csv $((i + 1)) reason)"
		grep -q "^model=arr_$i rank=0 master=127.0.0.1:29500 nnodes=1 world=1" "logs/arr_$i.node0.log" || fail "arr_$i log"
	done
	no_containers "$rid"
	;;
fail)
	rc=0
	"$rm_bin" --tags slurm_env:steps=30:fail_rank=1 -c "$two" --log-dir logs -o perf.csv >"$work/out" 2>&1 || rc=$?
	rid=$(run_id_of "$work/out") job=$(job_of "$work/out")
	run_ids+=("$rid")
	reason=$(csv_col perf.csv 1 reason)
	echo "fail: exit $rc in $(since "$t0") s: $reason"
	[ "$rc" = 1 ] || fail "exit $rc, want 1"
	[ "$reason" = "slurm job $job: FAILED (rank 1 on n2 exited with code 3)" ] || fail "reason: $reason"
	grep -q '^step 1' logs/slurm_env.node1.log || fail "rank 1 log"
	grep -q 'SIGTERM on rank 0' logs/slurm_env.*.node0.err || fail "rank 0 was not stopped"
	no_containers "$rid"
	;;
manifest)
	reg=$RM_TEST_REGISTRY
	"$rm_bin" build --tags mfst --registry "$reg" --manifest man.json --log-dir blogs >"$work/out" 2>&1 || fail "build: exit $?"
	echo "manifest: build and push of 2 images in $(since "$t0") s"
	[ "$(jq '[.built_images[] | select(.status == "SUCCESS" and .reused == false)] | length' man.json)" = 2 ] ||
		fail "manifest: $(cat man.json)"
	curl -fsS "http://$reg/v2/_catalog" | grep -q '"ci-mfst_a_smoke"' || fail "not in the registry's catalog"
	ids=$(jq -r '.built_images[].docker_sha' man.json | sort -u)
	t1=$(now)
	"$rm_bin" build --tags mfst --registry "$reg" --manifest man.json --log-dir blogs >"$work/out2" 2>&1 || fail "build 2: exit $?"
	grep -q "0 image(s) built, 2 up to date" "$work/out2" || fail "second build: $(tail -n 1 "$work/out2")"
	[ "$(jq '[.built_images[] | select(.reused)] | length' man.json)" = 2 ] || fail "not reused"
	echo "manifest: second build (registry has both) in $(since "$t1") s"
	for id in $ids; do
		api DELETE "/images/$id?force=1" >/dev/null || fail "cannot remove $id"
	done
	seen=$(wc -l <"$RM_TEST_REGISTRY_DIR/registry.log")
	t1=$(now)
	"$rm_bin" run --manifest man.json -c "$one" --log-dir logs -o perf.csv >"$work/out3" 2>&1 || fail "run: exit $?"
	rid=$(run_id_of "$work/out3")
	run_ids+=("$rid")
	echo "manifest: run --manifest of 2 models (nodes pull) in $(since "$t1") s"
	[ "$(rows perf.csv)" = 2 ] || fail "$(rows perf.csv) rows"
	for i in 1 2; do
		[ "$(csv_col perf.csv $i status)" = SUCCESS ] || fail "row $i: $(csv_col perf.csv $i reason)"
		case "$(csv_col perf.csv $i docker_image)" in "$reg"/ci-mfst_*_smoke@sha256:*) ;; *) fail "image $(csv_col perf.csv $i docker_image)" ;; esac
	done
	# the engine asks for the manifest by digest (GET, or HEAD when it knows the content)
	tail -n +"$((seen + 1))" "$RM_TEST_REGISTRY_DIR/registry.log" |
		grep -qE '"(GET|HEAD) /v2/ci-mfst_a_smoke/manifests/sha256:' ||
		fail "the registry saw no pull of ci-mfst_a_smoke"
	grep -q "pulling '$reg/ci-mfst_a_smoke@sha256:" logs/mfst_a.*.node0.err || fail "node-run did not pull"
	# a model the manifest lacks; an image the registry lacks
	jq '.built_images["ci-mfst_b_smoke"].digest = "sha256:'"$(printf '0%.0s' $(seq 1 64))"'"' man.json >bad.json
	"$rm_bin" run --manifest bad.json --tags mfst_b,slurm_env -c "$one" --log-dir logs -o bad.csv >"$work/out4" 2>&1 && fail "bad run: exit 0"
	run_ids+=("$(run_id_of "$work/out4")")
	# rows in the order known: the model without an image at once, the other after its job
	echo "manifest: $(csv_col bad.csv 1 reason) / $(csv_col bad.csv 2 reason)"
	[ "$(csv_col bad.csv 1 model)" = slurm_env ] && [ "$(csv_col bad.csv 2 model)" = mfst_b ] || fail "rows"
	case "$(csv_col bad.csv 1 reason)" in *"has no image of this model"*) ;; *) fail "missing model: $(csv_col bad.csv 1 reason)" ;; esac
	case "$(csv_col bad.csv 2 reason)" in *"FAILED"*"rank 0: "*"pulling it failed"*"cannot pull '$reg/ci-mfst_b_smoke@sha256:000"*"the registry does not have it"*) ;; *) fail "missing image: $(csv_col bad.csv 2 reason)" ;; esac
	no_containers "$rid"
	;;
alloc)
	salloc -Q -N 2 --time=5 "$rm_bin" --tags slurm_env -c "$two" --log-dir logs -o perf.csv >"$work/out" 2>&1 || fail "salloc: exit $?"
	rid=$(run_id_of "$work/out")
	run_ids+=("$rid")
	echo "alloc: done in $(since "$t0") s"
	grep -q 'in allocation [0-9]*' "$work/out" || fail "not run inside the allocation"
	grep -q 'submitted slurm job' "$work/out" && fail "submitted from inside an allocation"
	[ "$(csv_col perf.csv 1 status)" = SUCCESS ] || fail "$(csv_col perf.csv 1 reason)"
	for r in 0 1; do
		grep -q "^model=slurm_env rank=$r master=127.0.0.1:29511 nnodes=2" "logs/slurm_env.node$r.log" || fail "rank $r"
	done
	# Ctrl-C inside the allocation: the step's tasks get SIGTERM and remove their containers.
	salloc -Q -N 2 --time=5 "$rm_bin" --tags slurm_env:steps=301:sleep=0.2 -c "$two" --log-dir logs2 -o perf2.csv >"$work/out2" 2>&1 &
	spid=$!
	wait_for '^step 2' 'logs2/slurm_env.*.node1.log'
	rid=$(run_id_of "$work/out2")
	run_ids+=("$rid")
	kill -INT "$(pgrep -f "^$rm_bin --tags slurm_env:steps=301" | head -n 1)"
	rc=0
	wait "$spid" || rc=$?
	[ "$rc" = 130 ] || fail "exit $rc after SIGINT, want 130"
	no_containers "$rid"
	grep -q 'Exited with exit code 143' logs2/slurm_env.*.batch.log || fail "tasks not stopped with SIGTERM"
	;;
results)
	# multiple_results from rank 0 (rank 1 writes other figures), twice (--repeat 2: the
	# first run in the submission, the second submitted on its own)
	"$rm_bin" --tags multi --repeat 2 -c "$two" --log-dir logs -o perf.csv >"$work/out" 2>&1 || fail "exit $?"
	run_ids+=("$(run_id_of "$work/out")")
	echo "results: 2 runs of 2 results in $(since "$t0") s"
	[ "$(grep -c 'submitted slurm job' "$work/out")" = 2 ] || fail "not 2 submissions"
	[ "$(rows perf.csv)" = 4 ] || fail "$(rows perf.csv) rows"
	for i in 1 3; do
		[ "$(csv_col perf.csv $i model)" = multi_alpha ] && [ "$(csv_col perf.csv $i performance)" = 100 ] ||
			fail "row $i: $(csv_col perf.csv $i model) $(csv_col perf.csv $i performance) $(csv_col perf.csv $i reason)"
		[ "$(csv_col perf.csv $((i + 1)) model)" = multi_beta ] && [ "$(csv_col perf.csv $((i + 1)) metric)" = ms ] ||
			fail "row $((i + 1))"
		[ "$(csv_col perf.csv $i repeat)" = $(((i + 1) / 2)) ] || fail "row $i repeat"
	done
	;;
queued)
	# Both nodes taken by a job of 4 s: ours waits in the queue, longer than its --timeout
	# of 3 s, which counts from when it runs (as test_duration does).
	blocker=$(sbatch --parsable -N 2 --exclusive --time=5 -o /dev/null --wrap 'sleep 4')
	"$rm_bin" --tags slurm_env --timeout 3 -c "$two" --log-dir logs -o perf.csv >"$work/out" 2>&1 || fail "exit $?"
	run_ids+=("$(run_id_of "$work/out")")
	echo "queued: behind job $blocker, done in $(since "$t0") s, test_duration $(csv_col perf.csv 1 test_duration) s"
	grep -q 'PENDING (' "$work/out" || fail "it never waited in the queue"
	[ "$(csv_col perf.csv 1 status)" = SUCCESS ] || fail "$(csv_col perf.csv 1 reason)"
	awk -v d="$(csv_col perf.csv 1 test_duration)" 'BEGIN{exit !(d < 3)}' || fail "test_duration counts the queue"
	;;
errors)
	rc=0
	"$rm_bin" --tags slurm_env -c '{"slurm": {"nodes": 3, "exclusive": false}}' --log-dir logs -o perf.csv >"$work/out" 2>&1 || rc=$?
	run_ids+=("$(run_id_of "$work/out")")
	reason=$(csv_col perf.csv 1 reason)
	echo "errors: 3 nodes: $reason"
	[ "$rc" = 1 ] || fail "exit $rc"
	case "$reason" in *"stayed PENDING with reason Partition"*": cancelled") ;; *) fail "reason: $reason" ;; esac
	job_gone "$(job_of "$work/out")"
	rc=0
	"$rm_bin" --tags slurm_env -c '{"slurm": {"partition": "nosuch"}}' --log-dir logs -o perf2.csv >"$work/out2" 2>&1 || rc=$?
	[ "$rc" = 1 ] || fail "unknown partition: exit $rc"
	case "$(csv_col perf2.csv 1 reason)" in *"Invalid partition name"*) ;; *) fail "reason: $(csv_col perf2.csv 1 reason)" ;; esac
	"$rm_bin" --tags slurm_env -c "$two" --dry-run >"$work/out3" 2>&1 || fail "dry run: exit $?"
	for want in '    #SBATCH --nodes=2' '    #SBATCH --no-requeue' '    export MASTER_PORT=29511' \
		"node-run --job $mad/"; do
		grep -qF -- "$want" "$work/out3" || fail "dry run lacks '$want'"
	done
	;;
same_request)
	ctx='{"docker_env_vars": {"A": "1", "B": "two words"}, "docker_mounts": {"/mnt/x": "/tmp"}, "docker_cpus": "0"}'
	slurm_ctx=$(jq -c --argjson s "$one" '. + $s' <<<"$ctx")
	flags=(--tags slurm_env:steps=2 --tunableop on --shm-size 2G --timeout 120 --log-dir logs)
	MAD_SECRETS_TOKEN=s3cr3t-value "$rm_bin" "${flags[@]}" -c "$slurm_ctx" -o perf.csv >"$work/out" 2>&1 || fail "slurm run: exit $?"
	rid=$(run_id_of "$work/out")
	run_ids+=("$rid")
	[ "$(csv_col perf.csv 1 status)" = SUCCESS ] || fail "slurm run: $(csv_col perf.csv 1 reason)"
	doc=logs/$rid.job.json
	[ -f "$doc" ] || fail "no job document $doc"
	grep -q s3cr3t-value "$doc" && fail "the job document holds a secret's value"
	key=$(jq -r '.workloads | keys[0]' "$doc")
	image=$(jq -r ".workloads[\"$key\"].image" "$doc")
	MAD_SECRETS_TOKEN=s3cr3t-value NODE_RANK=0 "$rm_bin" node-run --job "$doc" --workload "$key" --dry-run \
		>"$work/out2" 2>&1 || fail "node-run --dry-run: exit $?"
	MAD_SECRETS_TOKEN=s3cr3t-value "$rm_bin" "${flags[@]}" -c "$ctx" --dry-run >"$work/out3" 2>&1 ||
		fail "local dry run: exit $?"
	lrid=$(sed -n 's/.*run \([0-9TZ]*-[0-9]*-[0-9a-f]*\).*/\1/p' "$work/out3" | head -n 1)
	norm() { # FILE RUN_ID: the docker run line, with what differs by nature made constant
		grep -m1 '^  docker run ' "$1" | sed -e "s/$2/RUN/g" -e 's/ --name [^ ]*//' \
			-e "s|$image|IMAGE|" -e 's| ci-slurm_env_smoke | IMAGE |'
	}
	node=$(norm "$work/out2" "$rid")
	local_line=$(norm "$work/out3" "${lrid:-none}")
	[ -n "$node" ] || fail "node-run --dry-run printed no docker run line"
	for want in "--shm-size 2147483648" "-e 'B=two words'" "-v /tmp:/mnt/x" "--cpuset-cpus 0" \
		"-e MAD_SECRETS_TOKEN=***" "PYTORCH_TUNABLEOP_ENABLED=1" "--steps 2"; do
		grep -qF -- "$want" <<<"$node" || fail "node's request lacks '$want': $node"
	done
	[ "$node" = "$local_line" ] || fail "requests differ:
node:  $node
local: $local_line"
	echo "same_request: the node's request is the local one ($(wc -c <<<"$node") bytes)"
	;;
tools)
	# every rank runs the tools (the folder's tools.json); outputs come back per rank; a
	# failing tool script is the row's reason; the node's request is the local dry run's
	mkdir -p scripts/common
	printf '#!/bin/bash\necho "rank tool $1 rank $NODE_RANK"\n' >scripts/common/say.sh
	printf '#!/bin/bash\necho "rank tool wraps rank $NODE_RANK ($RANK_TOOL)"\n"$@"\nrc=$?\necho "trace of rank $NODE_RANK" > rank_trace.txt\nexit $rc\n' \
		>scripts/common/wrap.sh
	printf '#!/bin/bash\necho "rank tool fails on rank $NODE_RANK"\nexit 4\n' >scripts/common/fail.sh
	cat >scripts/common/tools.json <<'EOF'
{"tools": {
  "rank_tool": {"pre_scripts": [{"path": "scripts/common/say.sh", "args": "pre"}],
                "cmd": "bash ../scripts/common/wrap.sh", "env_vars": {"RANK_TOOL": "on"},
                "post_scripts": [{"path": "scripts/common/say.sh", "args": "post"}],
                "outputs": ["rank_trace.txt"]},
  "fail_tool": {"pre_scripts": [{"path": "scripts/common/fail.sh"}]}}}
EOF
	ctx=$(jq -c '. + {"tools": [{"name": "rank_tool"}]}' <<<"$two")
	"$rm_bin" --tags slurm_env:steps=2 -c "$ctx" --log-dir logs -o perf.csv >"$work/out" 2>&1 || fail "exit $?"
	rid=$(run_id_of "$work/out")
	run_ids+=("$rid")
	[ "$(csv_col perf.csv 1 status)" = SUCCESS ] || fail "$(csv_col perf.csv 1 reason)"
	for r in 0 1; do
		log=logs/slurm_env.$rid.node$r.log
		n=0
		for want in "rank tool pre rank $r" "rank tool wraps rank $r \\(on\\)" "model=slurm_env rank=$r .*" \
			"performance: 100$r.5 samples_per_sec" "rank tool post rank $r"; do
			m=$(tail -n +"$((n + 1))" "$log" | grep -nE -m1 "^$want\$" | cut -d: -f1 || true)
			[ -n "$m" ] || fail "rank $r: no '$want' after line $n of $log: $(cat "$log")"
			n=$((n + m))
		done
		[ "$(cat "logs/slurm_env.$rid.node$r.tools/rank_tool/rank_trace.txt" 2>/dev/null)" = "trace of rank $r" ] ||
			fail "rank $r's output: $(find logs -path '*.tools*')"
	done
	grep -q "^run_models: rank 0: the tools' outputs are in " "logs/slurm_env.$rid.live.log" ||
		fail "the live log does not say where rank 0's outputs are"
	no_containers "$rid"
	# a pre script failing on every rank: FAILURE naming the tool and the phase
	rc=0
	ctx=$(jq -c '. + {"tools": [{"name": "fail_tool"}]}' <<<"$two")
	"$rm_bin" --tags slurm_env:steps=2 -c "$ctx" --log-dir logs -o perf2.csv >"$work/out" 2>&1 || rc=$?
	rid=$(run_id_of "$work/out")
	run_ids+=("$rid")
	[ "$rc" = 1 ] || fail "exit $rc, want 1"
	csv_col perf2.csv 1 reason | grep -qF "tool 'fail_tool': pre script 'scripts/common/fail.sh' exited with code 4" ||
		fail "reason: $(csv_col perf2.csv 1 reason)"
	no_containers "$rid"
	# the container a node makes is the local one
	ctx=$(jq -c '. + {"tools": [{"name": "rank_tool"}]}' <<<"$one")
	"$rm_bin" --tags slurm_env:steps=2 -c "$ctx" --log-dir logs -o perf3.csv >"$work/out" 2>&1 || fail "exit $?"
	rid=$(run_id_of "$work/out")
	run_ids+=("$rid")
	doc=logs/$rid.job.json
	key=$(jq -r '.workloads | keys[0]' "$doc")
	image=$(jq -r ".workloads[\"$key\"].image" "$doc")
	NODE_RANK=0 "$rm_bin" node-run --job "$doc" --workload "$key" --dry-run >"$work/out2" 2>&1 ||
		fail "node-run --dry-run: exit $?"
	"$rm_bin" --tags slurm_env:steps=2 -c '{"tools": [{"name": "rank_tool"}]}' --log-dir logs --dry-run \
		>"$work/out3" 2>&1 || fail "local dry run: exit $?"
	lrid=$(sed -n 's/.*run \([0-9TZ]*-[0-9]*-[0-9a-f]*\).*/\1/p' "$work/out3" | head -n 1)
	tnorm() { # FILE RUN_ID
		grep -m1 '^  docker run ' "$1" | sed -e "s/$2/RUN/g" -e 's/ --name [^ ]*//' \
			-e "s|$image|IMAGE|" -e 's| ci-slurm_env_smoke | IMAGE |'
	}
	node=$(tnorm "$work/out2" "$rid")
	local_line=$(tnorm "$work/out3" "${lrid:-none}")
	grep -qF "RANK_TOOL=on" <<<"$node" && grep -qF "../scripts/common/wrap.sh" <<<"$node" ||
		fail "the node's request has no tool: $node"
	[ "$node" = "$local_line" ] || fail "requests differ:
node:  $node
local: $local_line"
	;;
kill9)
	"$rm_bin" --tags slurm_env:steps=300:sleep=0.2 -c "$two" --log-dir logs -o perf.csv >"$work/out" 2>&1 &
	pid=$!
	wait_for '^step 2' 'logs/slurm_env.*.node1.log'
	rid=$(run_id_of "$work/out") job=$(job_of "$work/out")
	run_ids+=("$rid")
	tk=$(now)
	kill -9 "$pid"
	wait "$pid" 2>/dev/null || true
	for i in $(seq 1 150); do
		[ -z "$(squeue -h -j "$job" -o %i)" ] && [ -z "$(ours "$rid")" ] && break
		[ "$i" = 150 ] && fail "job $job or its containers still there 15 s after kill -9"
		sleep 0.1
	done
	echo "kill9: job $job and its containers gone $(since "$tk") s after SIGKILL"
	grep -q 'watchdog of run' "$work/out" || fail "no word from the watchdog"
	;;
timeout)
	rc=0
	"$rm_bin" --tags slurm_env:steps=1000 -c '{"slurm": {"nodes": 2, "exclusive": false, "time": "1"}}' \
		--log-dir logs -o perf.csv >"$work/out" 2>&1 || rc=$?
	rid=$(run_id_of "$work/out") job=$(job_of "$work/out")
	run_ids+=("$rid")
	echo "timeout: exit $rc after $(since "$t0") s: $(csv_col perf.csv 1 reason)"
	[ "$(csv_col perf.csv 1 reason)" = "slurm job $job: TIMEOUT (it reached its time limit (slurm.time))" ] ||
		fail "reason: $(csv_col perf.csv 1 reason)"
	no_containers "$rid"
	;;
*) fail "unknown case" ;;
esac
echo "cli_slurm $case_name: passed in $(since "$t0") s"
