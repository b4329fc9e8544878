#!/usr/bin/env bash
# The generated batch script on a REAL two-node SLURM cluster (tests/slurm-cluster.sh, with
# slurmdbd so sacct works), with containers on the real dockerd, and the parsers on what the
# real commands print:
#   two_node   both nodes run a container; per-node logs; MASTER_ADDR (NodeAddr: the node
#              names do not resolve here), NODE_RANK, NNODES, WORLD_SIZE and
#              MAD_MULTI_NODE_RUNNER reach the containers; sacct COMPLETED
#   array      four one-node models in one job array, each its own log and model name
#   fail       rank 1 exits 3: rank 0 is stopped, the job ends FAILED, the batch log names
#              rank 1 and code 3 (sacct's ExitCode is the highest of all tasks: 143 -> 15)
#   cancel     scancel mid-job: no job left, no container left on any node, CANCELLED
#   in_allocation  the same script run with bash inside `salloc -N 2`: srun uses the allocation
#   c_api      tests/scaleout/live_slurm.c: submit, queue, cancel, final states from C
# SLURM_TEST_DBD=0 starts the cluster without accounting (sacct fails; scontrol answers).
# Usage: slurm_live.sh SLURM_TOOL RUN_MODELS SOURCE_DIR [CASE...]   (default: every case)
# With RM_SCALEOUT_ENV=FILE (tests/scaleout/fixture.sh start FILE) the fixture's cluster is
# used and left running; else one is started and stopped here: SLURM_TEST_PORT picks the port
# base (default: a free block in 17200-19999). RM_TEST_KEEP=1 keeps the work folder (cluster
# logs, job logs) for a look. ctest runs only c_api: the CLI tests (cli_slurm.sh) cover the
# rest with run_models' own node-run instead of the shell stand-in.
set -euo pipefail
tool=$(realpath "$1") rm_bin=$(realpath "$2") src=$(realpath "$3")
shift 3
cases=${*:-two_node array fail cancel in_allocation c_api}
if [ -n "${RM_SCALEOUT_ENV:-}" ]; then
	# shellcheck source=/dev/null
	. "$RM_SCALEOUT_ENV"
else
	DOCKER_HOST=$("$src/tools/ensure-docker.sh")
	export DOCKER_HOST
fi
sock=${DOCKER_HOST#unix://}

work=$(mktemp -d)
chmod 755 "$work" # munged wants a+x on every folder above its socket
[ -n "${RM_SCALEOUT_ENV:-}" ] || export SLURM_TEST_DIR=$work/slurm
# shellcheck source=tests/slurm-cluster.sh
. "$src/tests/slurm-cluster.sh"
# Our containers carry rm.slurmtest=<this run> (tests/scaleout/node_task.sh): parallel runs share
# the engine and must neither count nor remove each other's.
export RM_SLURMTEST_ID="$$-$RANDOM"
ours() { # the ids of this run's containers
	curl -sS --unix-socket "$sock" "http://localhost/containers/json?all=1&filters=$(printf '{"label":["rm.slurmtest=%s"]}' "$RM_SLURMTEST_ID" | jq -sRr @uri)" | jq -r '.[].Id'
}
cleanup() {
	[ -n "${RM_SCALEOUT_ENV:-}" ] || slurm_stop >/dev/null 2>&1 || true
	ids=$(ours || true)
	for id in $ids; do curl -sS --unix-socket "$sock" -X DELETE "http://localhost/containers/$id?force=1" >/dev/null || true; done
	if [ -n "${RM_TEST_KEEP:-}" ]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
fail() {
	echo "FAIL [$case]: $*" >&2
	for f in "$work"/logs/*; do [ -f "$f" ] && { echo "== $f"; tail -n 5 "$f"; } >&2; done
	exit 1
}
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.2f", b - a}'; }

if [ -z "${SLURM_TEST_PORT:-}" ]; then
	# A block of 100 ports (daemons at +0..+4, srun at +10..+99) where nothing listens.
	for base in $(seq 17200 100 19900 | shuf); do
		busy=0
		for off in 0 1 2 3 4 $(seq 10 99); do
			(exec 3<>"/dev/tcp/127.0.0.1/$((base + off))") 2>/dev/null && { busy=1; break; }
		done
		[ $busy = 0 ] && { SLURM_TEST_PORT=$base; break; }
	done
fi
export SLURM_TEST_PORT
t0=$(now)
slurm_start || { echo "slurm_live: the test cluster did not start" >&2; exit 1; }
echo "cluster up in $(since "$t0") s (port base $SLURM_TEST_PORT)"

# The smoke image (FROM scratch + busybox), built by run_models itself.
mad=$work/mad
mkdir -p "$mad" && cp -r "$src/models.json" "$src/docker" "$src/scripts" "$mad/"
(cd "$mad" && "$rm_bin" --tags smoke -q -o "$work/perf.csv" >"$work/build.log" 2>&1) || { cat "$work/build.log" >&2; false; } ||
	{ echo "slurm_live: cannot build the smoke image" >&2; exit 1; }
image=ci-smoke_busybox_smoke
task=$src/tests/scaleout/node_task.sh

containers_left() { ours | grep -c . || true; }
# Submits the script, prints the job id.
submit() { # SCRIPT_FILE
	local out
	out=$(sbatch --parsable "$1") || fail "sbatch: $out"
	"$tool" sbatch <<<"$out"
}
# Waits until the job has left the queue (at most $2 s); then its final states (sacct, or
# scontrol without accounting; polled: sacct can lag the queue for arrays), one "ID STATE REASON"
# line per job or task.
finish() { # JOB_ID [TIMEOUT] [TASKS]
	local i
	for i in $(seq 1 $((${2:-60} * 10))); do
		[ -z "$(squeue -h -j "$1" -o %i 2>/dev/null)" ] && break
		[ "$i" = $((${2:-60} * 10)) ] && fail "job $1 still queued after ${2:-60} s"
		sleep 0.1
	done
	for i in $(seq 1 50); do
		states=$("$tool" final "$1")
		[ "$(echo "$states" | grep -cE ' (COMPLETED|FAILED|TIMEOUT|CANCELLED|NODE_FAIL) ')" -ge "${3:-1}" ] && break
		sleep 0.2
	done
	# the source (sacct, or scontrol without accounting) is checked, then left out
	echo "$states" | grep -q " ($source)\$" || fail "final states not from $source: $states"
	echo "$states" | sed 's/ ([a-z]*)$//' | sort -V
}
script() { # CONTEXT NAME MODELS -- ARGV...
	local ctx=$1 name=$2 models=$3
	shift 3
	"$tool" script "$ctx" "$work/logs" "$mad" "$name" "$models" "$@" >"$work/logs/$name.sbatch" ||
		fail "no script"
	echo "$work/logs/$name.sbatch"
}

source=sacct
[ "${SLURM_TEST_DBD:-1}" = 0 ] && source=scontrol
mkdir -p "$work/logs"
for case in $cases; do
	rm -f "$work"/logs/*
	t0=$(now)
	case $case in
	two_node)
		s=$(script '{"slurm": {"nodes": 2, "exclusive": false, "time": "5"}, "distributed": {"port": 29511}}' \
			rm-two smoke_busybox -- "$task" "$image" "{model}" 3)
		id=$(submit "$s")
		st=$(finish "$id")
		echo "two_node: job $id done in $(since "$t0") s: $st"
		[ "$st" = "$id COMPLETED slurm job $id: COMPLETED" ] || fail "state: $st"
		for r in 0 1; do
			log=$work/logs/smoke_busybox.node$r.log
			[ -f "$log" ] || fail "no $log"
			grep -q "^model=smoke_busybox rank=$r master=127.0.0.1:29511 nnodes=2 world=2 gpus=0" "$log" ||
				fail "rank $r env: $(head -n 1 "$log")"
			grep -q "^runner=torchrun --nnodes=2 --nproc_per_node=0 --node_rank=$r --master_addr=127.0.0.1 --master_port=29511" "$log" ||
				fail "rank $r runner: $(sed -n 2p "$log")"
			grep -q '^performance: 1234.5 samples_per_sec' "$log" || fail "rank $r: no performance line"
		done
		[ "$(containers_left)" = 0 ] || fail "containers left"
		;;
	array)
		s=$(script '{"slurm": {"exclusive": false, "time": "5"}}' rm-array m0,m1,dir/m2,m3 -- \
			"$task" "$image" "{model}" 2)
		grep -q -- '--array=0-3' "$s" || fail "not an array"
		id=$(submit "$s")
		st=$(finish "$id" 60 4)
		echo "array: job $id done in $(since "$t0") s"
		echo "$st" | sed 's/^/  /'
		[ "$(echo "$st" | grep -c ' COMPLETED ')" = 4 ] || fail "states: $st"
		for m in m0 m1 dir_m2 m3; do
			grep -q "^model=${m/dir_/dir/} rank=0 master=127.0.0.1:29500 nnodes=1 world=1" "$work/logs/$m.node0.log" ||
				fail "$m: $(head -n 1 "$work/logs/$m.node0.log" 2>&1)"
			grep -q '^runner=torchrun --standalone --nproc_per_node=0.$' "$work/logs/$m.node0.log" || fail "$m runner"
		done
		[ "$(containers_left)" = 0 ] || fail "containers left"
		;;
	fail)
		# rank 1 fails after its first step; rank 0 is then stopped by --kill-on-bad-exit
		s=$(script '{"slurm": {"nodes": 2, "exclusive": false, "time": "5"}}' rm-fail smoke_busybox -- \
			"$task" "$image" "{model}" 20 1)
		id=$(submit "$s")
		st=$(finish "$id")
		first=$("$tool" batchlog <"$work/logs/smoke_busybox.batch.log")
		echo "fail: job $id done in $(since "$t0") s: $st; $first"
		[ "${st%% (*}" = "$id FAILED slurm job $id: FAILED" ] || fail "state: $st"
		[ "$first" = "task 1 on n2 exited with code 3" ] || fail "first failure: $first"
		grep -q '^step 1' "$work/logs/smoke_busybox.node0.log" || fail "rank 0 log"
		grep -q 'SIGTERM on rank 0' "$work/logs/smoke_busybox.node0.err" || fail "rank 0 was not stopped"
		[ "$(containers_left)" = 0 ] || fail "containers left"
		;;
	cancel)
		s=$(script '{"slurm": {"nodes": 2, "exclusive": false, "time": "5"}}' rm-cancel smoke_busybox -- \
			"$task" "$image" "{model}" 60)
		id=$(submit "$s")
		for i in $(seq 1 300); do
			grep -q '^step 2' "$work/logs/smoke_busybox.node1.log" 2>/dev/null && break
			[ "$i" = 300 ] && fail "no step 2 on rank 1 within 30 s"
			sleep 0.1
		done
		[ "$(containers_left)" = 2 ] || fail "$(containers_left) containers running, want 2"
		tc=$(now)
		scancel "$id"
		st=$(finish "$id" 30)
		echo "cancel: job $id gone $(since "$tc") s after scancel: $st"
		[ "${st%% (*}" = "$id CANCELLED slurm job $id: CANCELLED" ] || fail "state: $st"
		[ -z "$(squeue -h -j "$id" -o %i)" ] || fail "job still queued"
		[ "$(containers_left)" = 0 ] || fail "containers left after scancel"
		grep -q 'SIGTERM on rank 0' "$work/logs/smoke_busybox.node0.err" || fail "rank 0 was not told"
		;;
	in_allocation)
		# Inside an allocation the same script runs as it is, with bash instead of sbatch:
		# its #SBATCH lines are comments there and its srun uses the allocation.
		s=$(script '{"slurm": {"nodes": 2, "exclusive": false, "time": "5"}}' rm-alloc smoke_busybox -- \
			"$task" "$image" "{model}" 2)
		(cd "$mad" && salloc -Q -N 2 --time=5 bash "$s") >"$work/logs/salloc.out" 2>&1 ||
			fail "salloc: $(cat "$work/logs/salloc.out")"
		echo "in_allocation: done in $(since "$t0") s"
		for r in 0 1; do
			grep -q "^model=smoke_busybox rank=$r master=127.0.0.1:29500 nnodes=2" "$work/logs/smoke_busybox.node$r.log" ||
				fail "rank $r: $(head -n 1 "$work/logs/smoke_busybox.node$r.log" 2>&1)"
		done
		[ "$(containers_left)" = 0 ] || fail "containers left"
		;;
	c_api)
		# The C side (src/launcher/slurm_cmd.c): submit, queue, cancel, final states.
		"$(dirname "$tool")/live_slurm" "$work/logs" "$mad" "$task" "$image" || fail "live_slurm"
		# The cancelled job's stand-in tasks remove their containers on SIGTERM; on a loaded
		# engine the removal can outlast KillWait (5 s), which SIGKILLs the task while the
		# engine still carries out its DELETE: give the engine that long again.
		for _ in $(seq 1 100); do
			[ "$(containers_left)" = 0 ] && break
			sleep 0.2
		done
		[ "$(containers_left)" = 0 ] || fail "containers left"
		;;
	*) fail "unknown case" ;;
	esac
done
echo "slurm_live: $cases passed"
