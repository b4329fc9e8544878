#!/usr/bin/env bash
# Fault cases (docs/reliability.md): usage: faults.sh CASE RUN_MODELS SOURCE_DIR [HUNG_ENGINE]
# Each case injects its fault itself (kills a process it started, stops a private dockerd,
# mounts a tmpfs, serves a fake socket) and checks what the runner promises: the time to
# recover, no container left, no perf row lost or torn, a reason that names the fault.
set -euo pipefail
case_name=$1
RM=$2
SRC=$3
HUNG=${4:-}
DOCKER_HOST=$("$SRC/tools/ensure-docker.sh")
export DOCKER_HOST
SOCK=${DOCKER_HOST#unix://}
WORK=$(mktemp -d)
cleanup_fns=()
cleanup() {
	local f
	for f in "${cleanup_fns[@]}"; do $f || true; done
	rm -rf "$WORK"
}
trap cleanup EXIT
cd "$WORK"

# shellcheck source=tests/integration/lib.sh
. "$SRC/tests/integration/lib.sh"

now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc -l; }
# Waits up to $2 seconds (default 30) for the live log of model $1 to say "started".
wait_started() {
	for _ in $(seq 1 $((${2:-30} * 10))); do
		grep -q started "$1.live.log" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "the model never started: $(cat err.txt 2>/dev/null)"
}
sleeper() { # NAME: a model that says "started" and sleeps
	script "$1" <<'S'
echo started
sleep 300
S
	entry "$1" "$1" "" | sed 's/^/[/; s/$/]/' | mkmad
}
# A private engine of the case's own (other cases never see its containers): a dockerd, or
# with RM_TEST_ENGINE=podman (tests/integration/podman.sh) a Podman service; sets
# DOCKER_HOST, SOCK and PRIVATE_DIR. Its state goes when the case ends.
private_engine() {
	PRIVATE_DIR=/var/tmp/run_models-fault-$case_name-$$
	if [ "${RM_TEST_ENGINE:-docker}" = podman ]; then
		DOCKER_HOST=$(RM_PODMAN_DIR=$PRIVATE_DIR "$SRC/tools/ensure-podman.sh")
	else
		DOCKER_HOST=$(RM_DOCKER_DIR=$PRIVATE_DIR DOCKER_HOST='' "$SRC/tools/ensure-docker.sh")
	fi
	export DOCKER_HOST
	SOCK=${DOCKER_HOST#unix://}
	cleanup_fns+=(stop_private_engine)
}
stop_private_engine() {
	local pid
	if [ "${RM_TEST_ENGINE:-docker}" = podman ]; then
		$(RM_PODMAN_DIR=$PRIVATE_DIR "$SRC/tools/ensure-podman.sh" --cli) rm -af >/dev/null 2>&1 || true
		RM_PODMAN_DIR=$PRIVATE_DIR "$SRC/tools/ensure-podman.sh" --stop
		$(RM_PODMAN_DIR=$PRIVATE_DIR "$SRC/tools/ensure-podman.sh" --cli) system reset -f >/dev/null 2>&1 || true
		rm -rf "$PRIVATE_DIR"
		return 0
	fi
	pid=$(cat "$PRIVATE_DIR/dockerd.pid" 2>/dev/null) || return 0
	kill "$pid" 2>/dev/null || true
	for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	pkill -f "containerd.*$PRIVATE_DIR" 2>/dev/null || true
	umount "$PRIVATE_DIR"/exec/netns/* 2>/dev/null || true
	rm -rf "$PRIVATE_DIR"
}
# Rows of a CSV file that do not have the header's number of fields (a torn row).
torn_rows() { # FILE
	python3 -c 'import csv,sys
r=list(csv.reader(open(sys.argv[1], newline="")))
print(sum(1 for x in r[1:] if len(x)!=len(r[0])))' "$1"
}

# A fault-injecting proxy (tests/faults/hung_engine.c --fault) in front of the suite's engine,
# on $WORK/p.sock; its fault lines go to proxy.err. The runs of the case go through it with
# DOCKER_HOST=$PROXIED; api/containers_of still ask the engine itself.
proxied() { # FAULT MATCH [NTH]
	[ -n "$HUNG" ] || fail "the hung_engine helper is not built"
	# shellcheck source=tests/faults/lib.sh
	. "$SRC/tests/faults/lib.sh"
	faults_hung_engine_stop
	faults_hung_engine_start "$HUNG" "$WORK/p.sock" --proxy "$SOCK" --fault "$1" --match "$2" \
		--nth "${3:-1}" 2>>"$WORK/proxy.err" || fail "the proxy did not start"
	cleanup_fns+=(faults_hung_engine_stop)
	PROXIED=unix://$WORK/p.sock
}
fired() { grep -q "fault $1" "$WORK/proxy.err" || fail "the proxy's fault '$1' never fired: $(cat "$WORK/proxy.err")"; }

case "$case_name" in
kill9_watchdog)
	# The runner is killed with SIGKILL: its watchdog removes the container at once.
	sleeper it_k9w
	"$RM" --tags it_k9w -o perf.csv 2>err.txt &
	pid=$!
	wait_started it_k9w
	[ "$(containers_of it_k9w)" = 1 ] || fail "no container running"
	t=$(now)
	kill -9 $pid
	for _ in $(seq 1 50); do [ "$(containers_of it_k9w)" = 0 ] && break; sleep 0.1; done
	[ "$(containers_of it_k9w)" = 0 ] || fail "container left 5 s after kill -9"
	echo "recovered in $(since "$t") s"
	grep -q "watchdog of run .*the runner died" err.txt || fail "no word from the watchdog: $(cat err.txt)"
	;;

kill9_reap)
	# Runner and watchdog both killed (the whole tree, as the OOM killer of a cgroup would):
	# the next run of anything removes the leftover and says so. A private engine, so that
	# no other case's run reaps it first.
	private_engine
	sleeper it_k9r
	"$RM" --tags it_k9r -o perf.csv 2>err.txt &
	pid=$!
	wait_started it_k9r 60
	# the watchdog first (the same command line, another pid): killed after the runner, it
	# could still see the runner die and clean up
	for p in $(pgrep -f -- '--tags it_k9r -o perf.csv'); do [ "$p" = $pid ] || kill -9 "$p"; done
	kill -9 $pid
	sleep 0.5
	[ "$(containers_of it_k9r)" = 1 ] || fail "the container should be left: $(containers_of it_k9r)"
	script quick <<'S'
echo "performance: 1 x"
S
	printf '[%s, %s]\n' "$(entry it_k9r sleeper "")" "$(entry it_k9q quick "")" >models.json
	jq '.[0].scripts = "scripts/it_k9r/run.sh"' models.json >m && mv m models.json
	t=$(now)
	"$RM" --tags it_k9q -o perf2.csv 2>err2.txt || fail "next run: $(cat err2.txt)"
	[ "$(containers_of it_k9r)" = 0 ] || fail "the next run left the leftover"
	grep -q "removed leftover container run_models-.*-it_k9r-0 of run .*its runner (pid [0-9]*) is gone" err2.txt ||
		fail "the next run did not say so: $(cat err2.txt)"
	echo "recovered by the next run in $(since "$t") s"
	;;

sighup)
	# A closed terminal or lost SSH session: handled as SIGTERM (exit 129, row kept).
	sleeper it_hup
	"$RM" --tags it_hup -o perf.csv 2>err.txt &
	pid=$!
	wait_started it_hup
	t=$(now)
	kill -HUP $pid
	set +e
	wait $pid
	rc=$?
	set -e
	echo "stopped in $(since "$t") s"
	[ $rc = 129 ] || fail "exit $rc, want 129: $(cat err.txt)"
	[ "$(csv_col perf.csv 1 status)" = FAILURE ] || fail "no FAILURE row: $(cat perf.csv 2>/dev/null)"
	grep -q "interrupted by SIGHUP" perf.csv || fail "reason: $(cat perf.csv)"
	[ "$(containers_of it_hup)" = 0 ] || fail "container left"
	;;

sigpipe)
	# stdout closed under the runner (run_models | head -1): the row is still written.
	script pipe <<'S'
i=0
while [ $i -lt 20000 ]; do echo "line $i"; i=$((i + 1)); done
echo "performance: 7 x"
S
	entry it_pipe pipe "" | sed 's/^/[/; s/$/]/' | mkmad
	set +e
	"$RM" --tags it_pipe --live-output -o perf.csv 2>err.txt | head -1 >/dev/null
	rc=${PIPESTATUS[0]}
	set -e
	[ "$rc" = 0 ] || fail "exit $rc: $(cat err.txt)"
	[ "$(csv_col perf.csv 1 status)" = SUCCESS ] || fail "row lost: $(cat perf.csv 2>/dev/null)"
	[ "$(csv_col perf.csv 1 performance)" = 7 ] || fail "performance"
	;;

hung_engine)
	# An engine that accepts connections, answers /_ping and /version, and never answers
	# anything else; then one that freezes mid-run (a proxy to the real engine, frozen by
	# SIGUSR1): either way one Ctrl-C ends the run within 2 s with a clear message.
	[ -x "$HUNG" ] || fail "the hung_engine helper is not built"
	hung_run() { # MODEL SOCKET: starts the runner, then Ctrl-C once it waits; checks 2 s
		DOCKER_HOST=unix://$2 "$RM" --tags "$1" -o "$1.csv" 2>"$1.err" &
		pid=$!
		if [ -n "${FREEZE:-}" ]; then
			wait_started "$1"
			kill -USR1 "$FREEZE"
		fi
		sleep 2
		kill -0 $pid || fail "the runner did not wait on the engine: $(cat "$1.err")"
		t=$(now)
		kill -INT $pid
		set +e
		wait $pid
		rc=$?
		set -e
		took=$(since "$t")
		echo "$1: stopped in $took s"
		[ $rc = 130 ] || fail "$1: exit $rc: $(cat "$1.err")"
		[ "$(echo "$took < 2.0" | bc)" = 1 ] || fail "$1: took $took s after Ctrl-C"
		grep -q "interrupted by SIGINT" "$1.err" || fail "$1: no message: $(cat "$1.err")"
		# a model that began has its row (the hung engine stops the first at the start)
		if [ -n "${FREEZE:-}" ]; then
			grep -q "interrupted by SIGINT" "$1.csv" || fail "$1: no row: $(cat "$1.csv" 2>/dev/null)"
		fi
	}
	"$HUNG" --ping "$WORK/hung.sock" >hung.out 2>&1 &
	cleanup_fns+=("kill $!")
	"$HUNG" --proxy "$SOCK" "$WORK/proxy.sock" >proxy.out 2>&1 &
	proxy=$!
	cleanup_fns+=("kill -USR2 $proxy" "kill $proxy")
	for _ in $(seq 1 50); do [ -S "$WORK/hung.sock" ] && [ -S "$WORK/proxy.sock" ] && break; sleep 0.1; done
	sleeper it_hung
	hung_run it_hung "$WORK/hung.sock"
	script it_frozen <<'S'
echo started
sleep 300
S
	printf '[%s, %s]\n' "$(entry it_hung it_hung "")" "$(entry it_frozen it_frozen "")" >models.json
	FREEZE=$proxy hung_run it_frozen "$WORK/proxy.sock"
	kill -USR2 $proxy
	# the frozen run's container could not be removed; once the engine answers again, the
	# next run removes it (its runner is gone) and says so
	script it_hq <<'S'
echo "performance: 1 x"
S
	printf '[%s]\n' "$(entry it_hq it_hq "")" >models.json
	"$RM" --tags it_hq -o next.csv 2>next.err || fail "next run: $(cat next.err)"
	[ "$(containers_of it_frozen)" = 0 ] || fail "the frozen run's container is left"
	;;

engine_dies)
	# The engine dies while the model runs: the reason names the lost engine, exit 4, the
	# log is kept.
	private_engine
	sleeper it_die
	"$RM" --tags it_die -o perf.csv 2>err.txt &
	pid=$!
	wait_started it_die 60
	t=$(now)
	kill -9 "$(cat "$PRIVATE_DIR/dockerd.pid")"
	set +e
	wait $pid
	rc=$?
	set -e
	echo "recovered in $(since "$t") s"
	[ $rc = 4 ] || fail "exit $rc, want 4: $(cat err.txt)"
	[ "$(csv_col perf.csv 1 status)" = FAILURE ] || fail "status"
	grep -q "lost the workload's engine" perf.csv || fail "reason: $(cat perf.csv)"
	grep -q started it_die.live.log || fail "log not kept"
	;;

disk_full)
	# The log folder fills up: the run is FAILURE with the reason; a perf.csv on a full disk
	# keeps its earlier rows whole and gets no half row.
	mkdir full
	mount -t tmpfs -o size=256k tmpfs full || fail "cannot mount a tmpfs (needs root)"
	cleanup_fns+=("umount $WORK/full")
	script chatty <<'S'
i=0
while [ $i -lt 20000 ]; do echo "line $i of a chatty workload that fills a small disk"; i=$((i + 1)); done
echo "performance: 5 x"
S
	script ok <<'S'
echo "performance: 6 x"
S
	# rows of over 4 KiB: each needs a page of its own on the tmpfs
	long=$(head -c 5000 /dev/zero | tr '\0' 'a')
	printf '[%s, %s]\n' "$(entry it_full chatty "")" "$(entry it_fullok ok "--pad $long")" | mkmad
	set +e
	"$RM" --tags it_full --log-dir full -o perf.csv 2>err.txt
	rc=$?
	set -e
	[ $rc = 1 ] || fail "exit $rc: $(cat err.txt)"
	[ "$(csv_col perf.csv 1 status)" = FAILURE ] || fail "a full log disk was a $(csv_col perf.csv 1 status)"
	grep -q "cannot write the log .*No space left on device" perf.csv || fail "reason: $(cat perf.csv)"
	# now perf.csv on the full disk: rows written before stay intact, no half row
	rm -f full/*
	"$RM" --tags it_fullok --log-dir . -o full/perf.csv 2>err.txt || fail "first row: $(cat err.txt)"
	head -c $((300 * 1024)) /dev/zero >full/filler 2>/dev/null || true
	set +e
	"$RM" --tags it_fullok --log-dir . -o full/perf.csv 2>err.txt
	rc=$?
	set -e
	[ $rc = 5 ] || fail "exit $rc on a full perf.csv disk: $(cat err.txt)"
	grep -q "No space left on device" err.txt || fail "message: $(cat err.txt)"
	[ "$(wc -l <full/perf.csv)" = 2 ] || fail "perf.csv changed: $(cat full/perf.csv)"
	[ "$(torn_rows full/perf.csv)" = 0 ] || fail "torn row"
	;;

log_per_run)
	# Two runs of one model at once never share a log; <model>.live.log names the latest;
	# a symlink planted under a log's name is replaced, never followed.
	script twice <<'S'
echo "run $MAD_RUN_ID"
sleep 1
echo "performance: 3 x"
S
	entry it_twice twice "" | sed 's/^/[/; s/$/]/' | mkmad
	echo "precious" >victim
	ln -s "$WORK/victim" it_twice.live.log
	"$RM" --tags it_twice -o perf.csv 2>err1.txt &
	p1=$!
	"$RM" --tags it_twice -o perf.csv 2>err2.txt &
	p2=$!
	wait $p1 || fail "run 1: $(cat err1.txt)"
	wait $p2 || fail "run 2: $(cat err2.txt)"
	[ "$(cat victim)" = precious ] || fail "a planted symlink was followed"
	[ "$(ls it_twice.*.live.log | wc -l)" = 2 ] || fail "want 2 logs: $(ls)"
	for f in it_twice.*.live.log; do
		[ "$(grep -c '^run ' "$f")" = 1 ] || fail "$f holds $(grep -c '^run ' "$f") runs"
	done
	[ -L it_twice.live.log ] && grep -q '^run ' it_twice.live.log || fail "no latest link"
	[ "$(csv_col perf.csv 1 log_file)" != "$(csv_col perf.csv 2 log_file)" ] || fail "rows share a log"
	;;

outputs_first)
	# A --log-dir that does not exist is created; an output that cannot be written is
	# refused before any build.
	script out <<'S'
echo "performance: 4 x"
S
	entry it_out out "" | sed 's/^/[/; s/$/]/' | mkmad
	"$RM" --tags it_out --log-dir logs/deep -o perf.csv 2>err.txt || fail "$(cat err.txt)"
	[ -f logs/deep/it_out.live.log ] || fail "log dir not created"
	mkdir ro && chmod 500 ro
	set +e
	"$RM" --tags it_out --log-dir logs2 -o ro/perf.csv 2>err.txt
	rc=$?
	set -e
	chmod 700 ro
	if [ "$(id -u)" != 0 ]; then
		[ $rc = 5 ] || fail "exit $rc: $(cat err.txt)"
		[ ! -e logs2/it_out.build.log ] || fail "built before refusing"
	fi
	echo '"other","header"' >foreign.csv
	set +e
	"$RM" --tags it_out --log-dir logs3 -o foreign.csv 2>err.txt
	rc=$?
	set -e
	[ $rc = 5 ] || fail "exit $rc: $(cat err.txt)"
	grep -q "different header" err.txt || fail "message: $(cat err.txt)"
	[ ! -e logs3/it_out.build.log ] || fail "built before refusing a foreign perf.csv"
	;;

secrets)
	# A multi-line secret is masked line by line, a short one is warned about, and a metric
	# next to a secret is not lost to masking.
	script sec <<'S'
printf '%s\n' "$MAD_SECRETS_KEY" | while read -r l; do echo "key line: $l"; done
echo "performance: 12.5 samples_per_sec"
S
	entry it_sec sec "" | sed 's/^/[/; s/$/]/' | mkmad
	# MAD_SECRETS_TOKEN straddles the figure and its unit: masked first, the line would
	# read "performance: 1***les_per_sec" and the metric would be lost.
	MAD_SECRETS_KEY=$(printf 'first-secret-line\nsecond-secret-line') \
		MAD_SECRETS_TOKEN='2.5 samp' MAD_SECRETS_SHORT=abc \
		"$RM" --tags it_sec -o perf.csv 2>err.txt || fail "$(cat err.txt)"
	if grep -rq 'secret-line\|2\.5 samp' perf.csv ./*.log err.txt; then fail "a secret leaked"; fi
	[ "$(grep -c 'key line: \*\*\*' it_sec.live.log)" = 2 ] || fail "lines not masked: $(cat it_sec.live.log)"
	grep -q 'performance: 1\*\*\*les_per_sec' it_sec.live.log || fail "token not masked in the log"
	grep -q "MAD_SECRETS_SHORT holds a value .* fewer than 6 characters" err.txt || fail "no warning: $(cat err.txt)"
	[ "$(csv_col perf.csv 1 performance)" = 12.5 ] || fail "metric lost: $(cat perf.csv)"
	[ "$(csv_col perf.csv 1 metric)" = samples_per_sec ] || fail "metric name: $(cat perf.csv)"
	;;

long_lines)
	# Issue 22 (1, 2): a line of exactly 65,536 bytes (or a multiple) is one line, so the
	# performance line after it counts; a last line without a line end is read, live and by
	# `parse`; an MLPerf result ending in run_stop without a newline gives its time to train,
	# an aborted one gives none.
	script ll <<'S'
head -c 65536 /dev/zero | tr '\0' x; echo
head -c 131072 /dev/zero | tr '\0' y; echo
echo "performance: 11 samples_per_sec"
S
	script noeol <<'S'
echo "warming up"
printf 'performance: 12 samples_per_sec'
S
	fx=$SRC/tests/parsers/mlperf/amd_mi300x_llama2_70b_lora_result_0
	script mlok <<'S'
cat result.txt
S
	script mlab <<'S'
cat result.txt
S
	sed '/^# /d' "${fx}_no_eol.log" >scripts/mlok/result.txt # keeps the missing line end
	grep -v '^# ' "${fx}_aborted.log" >scripts/mlab/result.txt
	[ "$(tail -c 2 scripts/mlok/result.txt)" = '}}' ] || fail "the fixture ends with a newline"
	printf '[%s, %s, %s, %s]\n' "$(entry it_ll ll "")" "$(entry it_noeol noeol "")" \
		"$(entry it_mlok mlok "" '"parser": "mlperf"')" "$(entry it_mlab mlab "" '"parser": "mlperf"')" | mkmad
	"$RM" --tags it_ll -o perf.csv 2>err.txt || fail "65,536-byte line: exit $?: $(cat err.txt; cat perf.csv)"
	[ "$(csv_col perf.csv 1 performance)" = 11 ] || fail "the line after a 65,536-byte line was lost"
	"$RM" --tags it_noeol -o perf.csv 2>err.txt || fail "no line end: exit $?: $(cat err.txt; cat perf.csv)"
	[ "$(csv_col perf.csv 2 performance)" = 12 ] || fail "the last line without a line end was lost"
	"$RM" parse it_noeol.live.log >parse.csv || fail "parse of the live log: $(cat parse.csv)"
	grep -q '^performance,12,samples_per_sec' parse.csv || fail "parse: $(cat parse.csv)"
	"$RM" parse it_ll.live.log >parse.csv || fail "parse of the long-line log: $(cat parse.csv)"
	grep -q '^performance,11,samples_per_sec' parse.csv || fail "parse: $(cat parse.csv)"
	"$RM" --tags it_mlok -o perf.csv 2>err.txt || fail "MLPerf without a final newline: $(cat err.txt; cat perf.csv)"
	[ "$(csv_col perf.csv 3 performance)" = 33.9308 ] || fail "time to train: $(cat perf.csv)"
	set +e
	"$RM" --tags it_mlab -o perf.csv 2>err.txt
	rc=$?
	set -e
	[ $rc = 1 ] || fail "aborted MLPerf run: exit $rc: $(cat err.txt)"
	[ "$(csv_col perf.csv 4 status)" = FAILURE ] || fail "an aborted run is $(csv_col perf.csv 4 status)"
	grep -q "run_stop status is 'aborted'" perf.csv || fail "reason: $(cat perf.csv)"
	if grep -q time_to_train perf_it_mlab.csv; then fail "an aborted run has a time to train"; fi
	grep -q 'samples_count,3840' perf_it_mlab.csv || fail "samples_count: $(cat perf_it_mlab.csv)"
	;;

wait_held)
	# Issue 29 (10): a /wait the engine holds back. The container has ended: its status is
	# read from the engine (State.ExitCode) within a slice of 10 s, not waited on until a
	# signal ("the script exited with code -1"). The workload still runs past its timeout (it
	# closed its output and sleeps on): a timeout, the container killed, within timeout + 15 s.
	script wq <<'S'
echo "performance: 11 samples_per_sec"
S
	script wl <<'S'
echo "performance: 12 samples_per_sec"
exec >/dev/null 2>&1
sleep 300
S
	printf '[%s, %s]\n' "$(entry it_wq wq "")" "$(entry it_wl wl "")" | mkmad
	"$RM" --tags it_wq,it_wl -o warm.csv --skip-model-run >/dev/null 2>&1 || true # the images, built once
	proxied stall 'POST /containers/*/wait'
	t0=$(now)
	rc=0
	DOCKER_HOST=$PROXIED timeout 60 "$RM" --tags it_wq -o perf.csv >out.txt 2>err.txt || rc=$?
	secs=$(since "$t0")
	fired stall
	echo "recovered in $secs s (ended container)"
	[ $rc = 0 ] || fail "exit $rc, want 0: $(tail -n 3 err.txt) $(cat perf.csv)"
	[ "$(csv_col perf.csv 1 performance)" = 11 ] || fail "row: $(cat perf.csv)"
	[ "$(echo "$secs < 20" | bc)" = 1 ] || fail "took $secs s"
	proxied stall 'POST /containers/*/wait'
	t0=$(now)
	rc=0
	DOCKER_HOST=$PROXIED timeout 90 "$RM" --tags it_wl -o perf2.csv --timeout 5 >out.txt 2>err.txt || rc=$?
	secs=$(since "$t0")
	echo "recovered in $secs s (timeout 5 s)"
	[ $rc = 1 ] || fail "exit $rc, want 1: $(tail -n 3 err.txt)"
	grep -q 'timeout: timed out after 5 s' perf2.csv || fail "reason: $(csv_col perf2.csv 1 reason)"
	[ "$(echo "$secs < 20" | bc)" = 1 ] || fail "took $secs s (timeout 5 s + 15 s)"
	[ "$(containers_of it_wl)" = 0 ] || fail "container left"
	;;

attach_cut)
	# Issue 29 (10): the attach stream is closed while the workload still runs: it is attached
	# again and the figure printed later is read (it used to wait out the whole timeout and
	# blame the model: "no performance figure").
	script ac <<'S'
echo started
sleep 4
echo "performance: 7 samples_per_sec"
S
	entry it_ac ac "" | sed 's/^/[/; s/$/]/' | mkmad
	"$RM" --tags it_ac -o warm.csv --skip-model-run >/dev/null 2>&1 || true
	proxied close-after=1000 'POST /containers/*/attach'
	t0=$(now)
	rc=0
	DOCKER_HOST=$PROXIED timeout 60 "$RM" --tags it_ac -o perf.csv --timeout 30 >out.txt 2>err.txt || rc=$?
	secs=$(since "$t0")
	fired close-after
	echo "recovered in $secs s"
	[ $rc = 0 ] || fail "exit $rc: $(tail -n 3 err.txt) $(csv_col perf.csv 1 reason)"
	[ "$(csv_col perf.csv 1 performance)" = 7 ] || fail "row: $(cat perf.csv)"
	grep -q "output stream ended while it still runs" err.txt || fail "not said: $(cat err.txt)"
	[ "$(echo "$secs < 20" | bc)" = 1 ] || fail "took $secs s"
	;;

create_lost)
	# Issue 29 (11): the answer to /containers/create is lost (the engine made the container):
	# the runner removes it by its name before it exits, not the next run.
	script cl <<'S'
echo "performance: 1 samples_per_sec"
S
	entry it_cl cl "" | sed 's/^/[/; s/$/]/' | mkmad
	"$RM" --tags it_cl -o warm.csv --skip-model-run >/dev/null 2>&1 || true
	proxied cut 'POST /containers/create'
	rc=0
	DOCKER_HOST=$PROXIED timeout 120 "$RM" --tags it_cl -o perf.csv >out.txt 2>err.txt || rc=$?
	fired cut
	[ $rc != 0 ] && [ $rc != 124 ] || fail "exit $rc: $(tail -n 3 err.txt)"
	[ "$(csv_col perf.csv 1 status)" = FAILURE ] || fail "row: $(cat perf.csv)"
	[ "$(containers_of it_cl)" = 0 ] || fail "$(containers_of it_cl) container(s) left after the runner exited"
	;;

wait_dropped)
	# Issue 29 (12): one dropped /wait connection, the engine fine: the exit status comes from
	# the engine, the row is the model's (SUCCESS), not "lost the workload's engine" (exit 4).
	script wd <<'S'
echo "performance: 9 samples_per_sec"
S
	printf '[%s, %s]\n' "$(entry it_wd wd "")" "$(entry it_wd2 wd "")" | mkmad
	"$RM" --tags it_wd,it_wd2 -o warm.csv --skip-model-run >/dev/null 2>&1 || true
	proxied cut 'POST /containers/*/wait'
	rc=0
	DOCKER_HOST=$PROXIED timeout 60 "$RM" --tags it_wd,it_wd2 -o perf.csv >out.txt 2>err.txt || rc=$?
	fired cut
	[ $rc = 0 ] || fail "exit $rc, want 0: $(tail -n 3 err.txt) $(cat perf.csv)"
	[ "$(grep -c ',SUCCESS,' perf.csv)" = 2 ] || fail "rows: $(cat perf.csv)"
	grep -q "lost the workload's engine" perf.csv err.txt && fail "blamed the engine"
	;;

slow_engine)
	# Held (issue 29's pass): slow answers to /_ping, /start, PUT /archive and the attach: the
	# run waits for them and succeeds.
	script se <<'S'
echo "performance: 3 samples_per_sec"
S
	entry it_se se "" | sed 's/^/[/; s/$/]/' | mkmad
	"$RM" --tags it_se -o warm.csv --skip-model-run >/dev/null 2>&1 || true
	for m in 'GET /_ping' 'POST /containers/*/start' 'PUT /containers/*/archive' 'POST /containers/*/attach'; do
		proxied delay=2000 "$m"
		rc=0
		DOCKER_HOST=$PROXIED timeout 60 "$RM" --tags it_se -o perf.csv >out.txt 2>err.txt || rc=$?
		fired delay
		[ $rc = 0 ] || fail "$m delayed: exit $rc: $(tail -n 3 err.txt)"
	done
	[ "$(grep -c ',SUCCESS,' perf.csv)" = 4 ] || fail "rows: $(cat perf.csv)"
	;;

name_collide)
	# Issue 29 (14): models 'a/b' and 'a_b' in one run would share their logs, image tags
	# and model dirs (the second failed "cannot create the log ... it exists already"):
	# refused before any build, naming both; each alone runs.
	script nc <<'S'
echo "performance: 1 samples_per_sec"
S
	printf '[%s, %s]\n' "$(entry it_nc/x nc "")" "$(entry it_nc_x nc "")" | mkmad
	rc=0
	"$RM" --tags it -o perf.csv --log-dir logs >out.txt 2>err.txt || rc=$?
	[ $rc = 5 ] || fail "exit $rc, want 5: $(cat err.txt)"
	grep -q "models 'it_nc/x' and 'it_nc_x' would share their log files and image tag ('it_nc_x')" err.txt ||
		fail "message: $(cat err.txt)"
	if ls logs/*.build.log >/dev/null 2>&1; then fail "built before refusing"; fi
	"$RM" --tags it_nc_x -o perf.csv >out.txt 2>err.txt || fail "alone: $(cat err.txt)"
	;;

build_timeout)
	# Issue 29 (16): a build that never ends (RUN sleep) is stopped by --build-timeout: a
	# FAILURE row naming the build, within the limit + 15 s, no build container left.
	script bt <<'S'
echo "performance: 1 samples_per_sec"
S
	entry it_bt bt "" | sed 's|docker/smoke|docker/forever|; s/^/[/; s/$/]/' | mkmad
	cat >docker/forever.Dockerfile <<'D'
FROM scratch
COPY smoke/busybox /bin/busybox
RUN ["/bin/busybox", "--install", "-s", "/bin"]
RUN echo "forever $(date +%s%N)" && sleep 99994
D
	left() { api GET "/containers/json?all=1" | jq '[.[] | select(.Command | test("sleep 99994"))] | length'; }
	t0=$(now)
	rc=0
	timeout 120 "$RM" --tags it_bt -o perf.csv --build-timeout 5 >out.txt 2>err.txt || rc=$?
	secs=$(since "$t0")
	echo "recovered in $secs s"
	[ $rc = 1 ] || fail "exit $rc, want 1: $(tail -n 3 err.txt)"
	grep -q "the build of 'ci-it_bt_forever' from 'docker/forever.Dockerfile' took longer than 5 s (--build-timeout)" perf.csv ||
		fail "reason: $(csv_col perf.csv 1 reason)"
	[ "$(echo "$secs < 20" | bc)" = 1 ] || fail "took $secs s"
	for _ in $(seq 1 50); do [ "$(left)" = 0 ] && break; sleep 0.2; done
	[ "$(left)" = 0 ] || fail "the build's container is left: $(left)"
	;;

tools_bulk)
	# Issue 29 (13): a tool whose outputs glob matches 20,000 files. They are listed with a
	# shell builtin and copied in bulk (tar), after the model's time ended (the timeout and
	# test_duration are the model's): all 20,000 come back and the run is a SUCCESS. A run
	# stopped by its timeout announces no outputs (docs/tools.md), not a part of them.
	script tb <<'S'
mkdir -p out
i=0
while [ $i -lt 20000 ]; do : >"out/f$i"; i=$((i + 1)); done
echo "performance: 2 samples_per_sec"
S
	script tbs <<'S'
mkdir -p out
i=0
while [ $i -lt 300 ]; do : >"out/f$i"; i=$((i + 1)); done
sleep 300
S
	printf '[%s, %s]\n' "$(entry it_tb tb "")" "$(entry it_tbs tbs "")" | mkmad
	mkdir -p prof
	echo '{"tools": {"many": {"outputs": ["out/*"]}}}' >prof/tools.json
	ctx='{"tools": [{"name": "many"}]}'
	"$RM" --tags it_tb -o warm.csv --skip-model-run >/dev/null 2>&1 || true # the image, built once
	t0=$(now)
	rc=0
	# a timeout the model keeps easily (about 1 s) and the gathering would not (20 s per file
	# copied one by one before issue 29: timed out with part of the files announced)
	timeout 300 "$RM" --tags it_tb -o perf.csv --timeout 12 --tools-config prof/tools.json \
		--additional-context "$ctx" >out.txt 2>err.txt || rc=$?
	echo "recovered in $(since "$t0") s"
	[ $rc = 0 ] || fail "exit $rc: $(tail -n 3 err.txt) $(csv_col perf.csv 1 reason)"
	run=$(csv_col perf.csv 1 run_id)
	n=$(find "it_tb.$run.tools/many/out" -type f 2>/dev/null | wc -l)
	[ "$n" = 20000 ] || fail "$n of 20000 files came back"
	dur=$(csv_col perf.csv 1 test_duration)
	echo "test_duration $dur s"
	[ "$(echo "$dur < 10" | bc)" = 1 ] || fail "the gathering was charged to the model: test_duration $dur s"
	rc=0
	timeout 120 "$RM" --tags it_tbs -o perf2.csv --timeout 5 --tools-config prof/tools.json \
		--additional-context "$ctx" >out2.txt 2>err2.txt || rc=$?
	[ $rc = 1 ] || fail "exit $rc, want 1"
	grep -q 'timeout: timed out after 5 s' perf2.csv || fail "reason: $(csv_col perf2.csv 1 reason)"
	grep -q "the tools' outputs are in" err2.txt && fail "a timed-out run announced outputs"
	[ -z "$(find . -path '*it_tbs.*.tools*' -type f | head -n 1)" ] || fail "a timed-out run left outputs"
	;;

low_inputs)
	# Issue 29, the low ones: clear messages at once instead of a late failure or a hang.
	script li <<'S'
echo "performance: 1 samples_per_sec"
S
	long=it_$(printf 'x%.0s' $(seq 1 230))
	printf '[%s, %s]\n' "$(entry it_li li "")" "$(entry "$long" li "")" | mkmad
	refused() { # WANT_RC PATTERN ARGS...
		local want=$1 pat=$2 rc=0
		shift 2
		timeout 20 "$RM" "$@" >out.txt 2>err.txt </dev/null || rc=$?
		[ $rc = "$want" ] || fail "$*: exit $rc, want $want: $(cat err.txt)"
		grep -q -- "$pat" err.txt || fail "$*: message: $(cat err.txt)"
	}
	refused 5 "(233 characters) makes log file names longer than the 255 bytes" --tags "$long" -o perf.csv --log-dir logs
	if ls logs/*.build.log >/dev/null 2>&1; then fail "built before refusing the long name"; fi
	refused 2 "--repeat takes a whole number from 1 to 1000000, not '-1'" --tags it_li --repeat -1
	refused 2 "--repeat takes a whole number from 1 to 1000000, not '0'" --tags it_li --repeat 0
	refused 2 "--history-window takes a whole number from 2 to 200, not '0'" --tags it_li --history-window 0
	mkfifo nobody.fifo
	printf 'suite: s\ninclude: [nobody.fifo]\nentries:\n  - tags: [it_li]\n' >s.yaml
	refused 3 "include: 'nobody.fifo' is empty" run --suite s.yaml -o perf.csv
	refused 3 "'nobody.fifo'" --tags it_li -o perf.csv -f nobody.fifo
	refused 3 "'nobody.fifo' is empty" --tags it_li -o perf.csv --references nobody.fifo
	printf 'suite: s\nentries:\n  - tags: [it_li]\n    repeat: 2.5\n' >r.yaml
	refused 3 "repeat: must be a whole number from 1 to 1000000, not 2.5" suite r.yaml
	;;

manifest_per_run)
	# Issue 29 (7): two runs with CI outputs in one folder, the second started 0.5 s after
	# the first. Each keeps its own manifest (run.<run id>.json) and its own gate: the first
	# has a regression and exits 6 as it does alone (it used to read the second's run.json,
	# say "is of run B", turn the gate off and exit 0), and its archive holds its manifest.
	script cm <<'S'
echo "performance: $(cat value.txt) samples_per_sec"
S
	script cq <<'S'
echo "performance: 5 samples_per_sec"
S
	printf '[%s, %s]\n' "$(entry it_cm cm "")" "$(entry it_cmq cq "")" | mkmad
	echo 100 >scripts/cm/value.txt
	for i in 1 2 3 4 5 6; do
		echo $((100 + i % 2)) >scripts/cm/value.txt
		"$RM" --tags it_cm -o perf.csv 2>>hist.txt >/dev/null || fail "history run $i: $(tail -n 3 hist.txt)"
	done
	printf 'echo "performance: 70 samples_per_sec"\nsleep 4\n' >scripts/cm/run.sh
	set +e
	"$RM" --tags it_cm -o perf.csv --fail-on-regression 5 --archive a.tar.gz >outa.txt 2>erra.txt &
	pa=$!
	sleep 0.5
	"$RM" --tags it_cmq -o perf.csv --fail-on-regression 5 --archive b.tar.gz >outb.txt 2>errb.txt &
	pb=$!
	wait $pa
	rca=$?
	wait $pb
	rcb=$?
	set -e
	[ $rca = 6 ] || fail "the first run: exit $rca, want 6 (its regression): $(tail -n 3 erra.txt)"
	[ $rcb = 0 ] || fail "the second run: exit $rcb, want 0: $(tail -n 3 errb.txt)"
	grep -q "is of run" erra.txt errb.txt && fail "a run read the other's manifest: $(grep 'is of run' erra.txt errb.txt)"
	ida=$(sed -n 's/.*run \([0-9TZ-]*-[0-9a-f]*\): 1 model.*/\1/p' erra.txt | head -n 1)
	[ -n "$ida" ] && [ -f "run.$ida.json" ] || fail "no run.<id>.json of the first run: $(ls)"
	[ -L run.json ] || fail "run.json is not the link to the latest: $(ls -l run.json)"
	mkdir ua && tar -xzf a.tar.gz -C ua
	m=$(find ua -name 'run.*.json')
	[ "$(jq -r .run_id "$m")" = "$ida" ] || fail "the first run's archive holds another run's manifest: $m"
	;;

ci_outputs_through)
	# Issue 29 (8): CI outputs are written through what the user names, never replaced by a
	# file: a symlink given to --summary-markdown stays a link (its file gets the summary), a
	# FIFO given to --junit stays a FIFO (its reader gets the XML), a character device (as
	# /dev/stdout is; a stand-in node here, so a failure cannot replace the real one) stays
	# one; a FIFO nobody reads is an error at once, not a hang.
	bash "$SRC/tests/results/gen-perf.sh" 3 4 >perf.csv
	: >real.md
	ln -s real.md link.md
	mkfifo j.fifo
	mknod out.dev c 1 3 || fail "mknod"
	timeout 20 cat j.fifo >fifo_got.xml &
	reader=$!
	sleep 0.3
	timeout 30 "$RM" report ci perf.csv --summary-markdown link.md --junit j.fifo --archive out.dev \
		--html r.html --no-step-summary >out.txt 2>err.txt || fail "exit $?: $(cat err.txt)"
	wait $reader || true
	[ -L link.md ] && [ "$(readlink link.md)" = real.md ] || fail "the symlink was replaced: $(ls -l link.md)"
	grep -q 'regression' real.md || fail "the summary did not reach the link's file: $(cat real.md)"
	[ -p j.fifo ] || fail "the FIFO was replaced: $(ls -l j.fifo)"
	grep -q '<testsuites' fifo_got.xml || fail "the FIFO's reader got no JUnit: $(head -c 200 fifo_got.xml)"
	[ -c out.dev ] || fail "the character device was replaced: $(ls -l out.dev)"
	t0=$(now)
	rc=0
	timeout 20 "$RM" report ci perf.csv --junit j.fifo --no-step-summary >out2.txt 2>err2.txt || rc=$?
	[ $rc != 124 ] || fail "a FIFO nobody reads hung the run"
	[ $rc != 0 ] && grep -q "no process reads that FIFO" err2.txt || fail "exit $rc: $(cat err2.txt)"
	[ -p j.fifo ] || fail "the FIFO was replaced after the error"
	echo "recovered in $(since "$t0") s"
	;;

gpu_detect_hang)
	# Issue 29 (9): GPU detection has a deadline. A rocminfo and an nvidia-smi that hang (a
	# driver in a bad state) are stopped after 10 s, named once, and the run goes on; the
	# first Ctrl-C stops them at once (run and doctor), and no child stays behind; a KFD
	# "properties" that blocks (a FIFO) is not read.
	script gd <<'S'
echo "performance: 1 samples_per_sec"
S
	entry it_gd gd "" | sed 's/^/[/; s/$/]/' | mkmad
	mkdir -p bin
	for t in rocminfo nvidia-smi; do printf '#!/bin/sh\nexec sleep 987654\n' >"bin/$t"; done
	chmod +x bin/*
	left() { pgrep -f 'sleep 987654' | wc -l; }
	# Ctrl-C during detection: run
	PATH=$WORK/bin:$PATH "$RM" --tags it_gd -o perf.csv >out.txt 2>err.txt &
	pid=$!
	for _ in $(seq 1 50); do [ "$(left)" -gt 0 ] && break; sleep 0.1; done
	[ "$(left)" -gt 0 ] || fail "the fake rocminfo never ran: $(cat err.txt)"
	t0=$(now)
	kill -INT $pid
	for _ in $(seq 1 50); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
	if kill -0 $pid 2>/dev/null; then kill -9 $pid; pkill -9 -f 'sleep 987654' || true; fail "run still detecting 5 s after Ctrl-C"; fi
	rc=0
	wait $pid || rc=$?
	echo "run stopped in $(since "$t0") s"
	[ $rc = 130 ] || fail "run: exit $rc after Ctrl-C, want 130: $(cat err.txt)"
	sleep 0.3
	[ "$(left)" = 0 ] || { pkill -9 -f 'sleep 987654' || true; fail "the detection tool stayed behind"; }
	# Ctrl-C during detection: doctor
	PATH=$WORK/bin:$PATH "$RM" doctor >doc.txt 2>&1 &
	pid=$!
	for _ in $(seq 1 50); do [ "$(left)" -gt 0 ] && break; sleep 0.1; done
	kill -INT $pid
	for _ in $(seq 1 50); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
	if kill -0 $pid 2>/dev/null; then kill -9 $pid; pkill -9 -f 'sleep 987654' || true; fail "doctor still running 5 s after Ctrl-C"; fi
	rc=0
	wait $pid || rc=$?
	[ $rc = 130 ] || fail "doctor: exit $rc after Ctrl-C, want 130: $(tail -n 3 doc.txt)"
	sleep 0.3
	[ "$(left)" = 0 ] || { pkill -9 -f 'sleep 987654' || true; fail "doctor left the tool behind"; }
	# no signal: each hanging tool is stopped after 10 s and the run goes on
	t0=$(now)
	rc=0
	PATH=$WORK/bin:$PATH timeout 60 "$RM" --tags it_gd -o perf.csv >out.txt 2>err.txt || rc=$?
	secs=$(since "$t0")
	echo "run with hanging tools recovered in $secs s"
	[ $rc = 0 ] || fail "exit $rc: $(tail -n 3 err.txt)"
	grep -q "'rocminfo' did not answer within 10 s" err.txt || fail "the hang is not named: $(cat err.txt)"
	[ "$(echo "$secs < 35" | bc)" = 1 ] || fail "took $secs s"
	[ "$(left)" = 0 ] || { pkill -9 -f 'sleep 987654' || true; fail "a tool stayed behind"; }
	# a KFD properties file that blocks
	mkdir -p sys/class/kfd/kfd/topology/nodes/0
	mkfifo sys/class/kfd/kfd/topology/nodes/0/properties
	rc=0
	RM_SYSFS_ROOT=$WORK/sys timeout 20 "$RM" --tags it_gd -o perf.csv -n >out.txt 2>err.txt || rc=$?
	[ $rc = 0 ] || fail "a FIFO for KFD properties: exit $rc: $(tail -n 3 err.txt)"
	grep -q "properties' is not a regular file" err.txt || fail "the FIFO is not named: $(cat err.txt)"
	;;

secret_outputs)
	# Issue 22 (3): a secret given as a tag argument is in no file the run writes: perf CSVs,
	# logs, run.json, JUnit, summary, report and the archive CI uploads (read inside).
	script targ <<'S'
echo "args: $*"
echo "performance: 3 samples_per_sec"
S
	entry it_targ targ "" | sed 's/^/[/; s/$/]/' | mkmad
	MAD_SECRETS_TOK=tok_SeCrEt_4711 "$RM" --tags "it_targ:tok=tok_SeCrEt_4711" -o out/perf.csv \
		--log-dir out/logs --junit out/j.xml --summary-markdown out/s.md --html out/r.html \
		--archive out/a.tar.gz >out.txt 2>err.txt || fail "exit $?: $(cat err.txt)"
	[ -f out/run.json ] && [ -f out/a.tar.gz ] || fail "outputs missing: $(ls out)"
	grep -q 'args: .*tok' out/logs/it_targ.live.log || fail "the argument did not reach the script"
	mkdir unpacked && tar -xzf out/a.tar.gz -C unpacked
	# the run's own manifest, run.<run id>.json (run.json links the latest run's: issue 29)
	[ "$(find unpacked -name 'run.*.json' | wc -l)" = 1 ] || fail "no manifest in the archive"
	if grep -rl tok_SeCrEt_4711 out unpacked out.txt err.txt; then fail "the secret is in a file the run wrote"; fi
	grep -q 'it_targ:tok=\*\*\*' out/run.json || fail "run.json does not name the tag: $(cat out/run.json)"
	;;

output_clash)
	# Issue 22 (4): output names that clash are refused before any image is built, naming
	# the file: -o perf_<model>.csv of a model of the run, a model named "summary" with
	# --repeat (perf_summary.csv), another tool's perf_<model>.csv, --html over perf.csv.
	script oc <<'S'
echo "performance: 2 samples_per_sec"
S
	printf '[%s, %s]\n' "$(entry it_oc oc "")" "$(entry summary oc "")" | mkmad
	refused() { # LOG_DIR PATTERN ARGS...: exit 5, the message matches, nothing built
		local logs=$1 pat=$2 rc
		shift 2
		set +e
		"$RM" --log-dir "$logs" "$@" >out.txt 2>err.txt
		rc=$?
		set -e
		[ $rc = 5 ] || fail "$*: exit $rc, want 5: $(cat err.txt)"
		grep -q "$pat" err.txt || fail "$*: message: $(cat err.txt)"
		if ls "$logs"/*.build.log >/dev/null 2>&1; then fail "$*: built before refusing"; fi
	}
	refused l1 "output clash: 'perf_it_oc.csv' would be both the perf CSV (-o) and the metrics of model 'it_oc'" \
		--tags it_oc -o perf_it_oc.csv
	refused l2 "'out/perf_summary.csv' would be both the summary of the repeated runs (perf_summary.csv) and the metrics of model 'summary'" \
		--tags summary --repeat 2 -o out/perf.csv
	echo '"name","value"' >perf_it_oc.csv
	refused l3 "'perf_it_oc.csv' exists with a different header" --tags it_oc -o perf.csv
	rm perf_it_oc.csv
	refused l4 "'perf.csv' (the perf CSV (-o)) and './perf.csv' (--html) are one file" \
		--tags it_oc -o perf.csv --html ./perf.csv
	[ ! -e perf.csv ] || fail "perf.csv was written: $(cat perf.csv)"
	# Issue 29 (6): a CI output over the --export sqlite: database would replace its history
	sqlite3 hist.db 'CREATE TABLE keep(x); INSERT INTO keep VALUES (42);'
	for o in --archive --html --junit --summary-markdown; do
		refused "l_$o" "'./hist.db' ($o) and 'hist.db' (the database of --export sqlite:hist.db) are one file" \
			--tags it_oc -o perf.csv --export sqlite:hist.db "$o" ./hist.db
		[ "$(sqlite3 hist.db 'SELECT x FROM keep')" = 42 ] || fail "$o replaced the database"
	done
	[ ! -e perf.csv ] || fail "perf.csv was written: $(cat perf.csv)"
	# the same run without the clash goes through, its report written
	"$RM" --tags it_oc --repeat 2 -o perf.csv --html report.html 2>err.txt || fail "$(cat err.txt)"
	[ -s report.html ] && [ "$(csv_col perf_summary.csv 1 model)" = it_oc ] || fail "outputs missing"
	;;

perf_symlink)
	# Issue 22 (8): perf.csv (or a perf_<model>.csv) as a dangling symlink is not followed:
	# refused before any build, its target never created (as the logs refuse symlinks).
	script ps <<'S'
echo "performance: 6 samples_per_sec"
S
	entry it_psym ps "" | sed 's/^/[/; s/$/]/' | mkmad
	mkdir outside
	ln -s "$WORK/outside/created" perf.csv
	set +e
	"$RM" --tags it_psym -o perf.csv --log-dir l1 2>err.txt
	rc=$?
	set -e
	[ $rc = 5 ] || fail "exit $rc, want 5: $(cat err.txt)"
	grep -q "'perf.csv' is a symbolic link to '$WORK/outside/created', which does not exist: it is not followed" err.txt ||
		fail "message: $(cat err.txt)"
	[ ! -e outside/created ] || fail "the symlink was followed"
	if ls l1/*.build.log >/dev/null 2>&1; then fail "built before refusing"; fi
	rm perf.csv
	ln -s "$WORK/outside/metrics" perf_it_psym.csv
	set +e
	"$RM" --tags it_psym -o perf.csv --log-dir l2 2>err.txt
	rc=$?
	set -e
	[ $rc = 5 ] && [ ! -e outside/metrics ] || fail "perf_<model>.csv: exit $rc: $(cat err.txt)"
	;;

results_limits)
	# Issue 22 (5): a multiple_results file over the 16 MiB limit (under and over the
	# engine's 32 MiB copy limit), a symlink and a folder each get a reason that says so,
	# not "the script wrote no such file".
	script big <<'S'
printf 'model,performance,metric\n' > results.csv
head -c 16777216 /dev/zero | tr '\0' 'a' >> results.csv
S
	script huge <<'S'
head -c 41943040 /dev/zero > results.csv
S
	script link <<'S'
printf 'model,performance,metric\nm,1,x\n' > /tmp/real.csv
ln -s /tmp/real.csv results.csv
S
	script dir <<'S'
mkdir results.csv
S
	mr='"multiple_results": "results.csv"'
	printf '[%s, %s, %s, %s]\n' "$(entry it_rbig big "" "$mr")" "$(entry it_rhuge huge "" "$mr")" \
		"$(entry it_rlink link "" "$mr")" "$(entry it_rdir dir "" "$mr")" | mkmad
	reason_of() { # MODEL PATTERN
		set +e
		"$RM" --tags "$1" -o "$1.csv" 2>"$1.err"
		rc=$?
		set -e
		[ $rc = 1 ] || fail "$1: exit $rc: $(cat "$1.err")"
		[ "$(csv_col "$1.csv" 1 status)" = FAILURE ] || fail "$1: status"
		grep -q "$2" "$1.csv" || fail "$1: reason: $(csv_col "$1.csv" 1 reason)"
		if grep -q "wrote no such file" "$1.csv"; then fail "$1: called missing"; fi
	}
	reason_of it_rbig "multiple_results 'results.csv': 'results.csv' is 16777241 bytes, over the limit of 16777216 bytes (16 MiB)"
	reason_of it_rhuge "multiple_results 'results.csv': .*'/myworkspace/it_rhuge/results.csv' in the container is over the limit of 16842752 bytes (16 MiB)"
	reason_of it_rlink "multiple_results 'results.csv': 'results.csv' is a symbolic link (to '/tmp/real.csv'), not a file: it is not followed"
	reason_of it_rdir "multiple_results 'results.csv': 'results.csv' is a folder, not a file"
	;;

oom_removed)
	# Issue 22 (6): an out-of-memory kill reads as such (the engine's State.OOMKilled), and
	# a container removed by someone else mid-run reads as such (exit 1, not a lost engine),
	# neither as "the script exited with code 137".
	script oom <<'S'
echo started
sleep 3
exec dd if=/dev/zero of=/dev/null bs=256M count=1
echo "performance: 1 samples_per_sec"
S
	printf '[%s, %s]\n' "$(entry it_oom oom "")" "$(entry it_gone sleeper "")" | mkmad
	script sleeper <<'S'
echo started
sleep 300
S
	cid_of() { # MODEL: the id of its running container
		api GET "/containers/json?filters=$(printf '{"label":["run_models.model=%s"]}' "$1" | jq -sRr @uri)" | jq -r '.[0].Id'
	}
	"$RM" --tags it_oom -o perf.csv 2>err.txt &
	pid=$!
	wait_started it_oom 60
	# a memory limit the workload's next step cannot live with
	curl -fsS --unix-socket "$SOCK" -X POST -H 'Content-Type: application/json' \
		-d '{"Memory": 67108864, "MemorySwap": 67108864}' \
		"http://localhost/containers/$(cid_of it_oom)/update" >/dev/null || fail "cannot set a memory limit"
	set +e
	wait $pid
	rc=$?
	set -e
	[ $rc = 1 ] || fail "OOM: exit $rc: $(cat err.txt)"
	grep -q "out of memory: the kernel killed the workload" perf.csv || fail "OOM reason: $(csv_col perf.csv 1 reason)"
	[ "$(csv_col perf.csv 1 exit_code)" = 137 ] || fail "exit_code column: $(csv_col perf.csv 1 exit_code)"
	"$RM" --tags it_gone -o perf.csv 2>err.txt &
	pid=$!
	wait_started it_gone 60
	api DELETE "/containers/$(cid_of it_gone)?force=1" >/dev/null
	set +e
	wait $pid
	rc=$?
	set -e
	[ $rc = 1 ] || fail "removed: exit $rc: $(cat err.txt)"
	grep -q "the container was removed while the workload ran" perf.csv || fail "removed reason: $(csv_col perf.csv 2 reason)"
	if grep -q "exited with code 137" perf.csv; then fail "reads as an exit code"; fi
	[ "$(containers_of it_gone)" = 0 ] || fail "container left"
	;;

keep_dir_nodes)
	# Issue 22 (7): --keep-model-dir never recreates the device nodes or FIFOs a script
	# made in its model dir on the host (a block device node 0644 on the host is a disk
	# anyone can read); its files are kept.
	script knodes <<'S'
mknod disk b 8 0 && chmod 644 disk
mknod tty c 5 0
mkfifo fifo
ln disk disk.hardlink
echo "kept" > result.txt
ls -l
echo "performance: 3 samples_per_sec"
S
	entry it_knodes knodes "" | sed 's/^/[/; s/$/]/' | mkmad
	"$RM" --tags it_knodes --keep-model-dir --log-dir logs -o perf.csv 2>err.txt || fail "exit $?: $(cat err.txt)"
	grep -q '^brw-r--r--.* disk$' logs/it_knodes.live.log || fail "the script made no device node: $(cat logs/it_knodes.live.log)"
	grep -q kept logs/it_knodes/result.txt || fail "model dir not kept: $(cat err.txt)"
	[ -z "$(find logs -type b -o -type c -o -type p -o -type s)" ] || fail "special files on the host: $(find logs -type b -o -type c -o -type p)"
	grep -q "left out 4 device node(s), FIFO(s) or socket(s) of its model dir" err.txt || fail "no word of it: $(cat err.txt)"
	;;

engine_dies_build)
	# Issue 22 (10): the engine dies during a build: the documented engine loss (exit 4,
	# the reason names the engine), and the build's container, which the engine keeps when
	# it comes back, is removed by the next run.
	# shellcheck source=tests/faults/lib.sh
	. "$SRC/tests/faults/lib.sh"
	edir=$(mktemp -d /var/tmp/rmb.XXXXXX)/e
	faults_dockerd_start "$edir" || fail "cannot start a private dockerd"
	cleanup_fns+=("faults_dockerd_cleanup $edir")
	DOCKER_HOST=unix://$edir/docker.sock
	SOCK=$edir/docker.sock
	script bdie <<'S'
echo "performance: 1 samples_per_sec"
S
	printf '[%s, %s]\n' "$(entry it_bdie bdie "" | sed 's|docker/smoke|docker/slow|')" \
		"$(entry it_bnext bdie "")" | mkmad
	cat >docker/slow.Dockerfile <<'D'
FROM scratch
COPY smoke/busybox /bin/busybox
RUN ["/bin/busybox", "--install", "-s", "/bin"]
RUN echo building-slowly && sleep 300
D
	"$RM" --tags it_bdie -o perf.csv 2>err.txt &
	pid=$!
	left() { api GET "/containers/json?all=1" | jq '[.[] | select(.Command | test("building-slowly"))] | length'; }
	for _ in $(seq 1 600); do [ "$(left)" = 1 ] && break; sleep 0.1; done
	[ "$(left)" = 1 ] || fail "the build never reached its RUN step: $(cat err.txt)"
	t=$(now)
	faults_dockerd_kill "$edir" || fail "cannot kill the engine"
	set +e
	wait $pid
	rc=$?
	set -e
	echo "recovered in $(since "$t") s"
	[ $rc = 4 ] || fail "exit $rc, want 4: $(cat err.txt)"
	[ "$(csv_col perf.csv 1 status)" = FAILURE ] || fail "status: $(cat perf.csv)"
	grep -q "lost the engine at unix://$edir/docker.sock while building" perf.csv ||
		fail "reason: $(csv_col perf.csv 1 reason)"
	# the engine comes back with the build's container; the next run removes it
	faults_dockerd_start "$edir" || fail "cannot restart the engine"
	[ "$(left)" = 1 ] || fail "the engine kept no build container to reap: $(api GET '/containers/json?all=1')"
	"$RM" --tags it_bnext -o next.csv 2>next.txt || fail "next run: $(cat next.txt)"
	[ "$(left)" = 0 ] || fail "the build container is left after the next run"
	grep -q "removed leftover build container .* of a build whose runner (pid $pid) is gone" next.txt ||
		fail "the next run did not say so: $(cat next.txt)"
	;;

retries)
	# --retries: an engine error on container create (a proxy in front of the engine fails
	# the first POST /containers/create with a 500, tests/faults/flaky_engine.py) is the
	# machine's: tried again, each attempt its row, the last one attempt 2; a script that
	# exits 1 is the model's: never tried again. JUnit marks the first as flaky, as Maven
	# Surefire writes it (<flakyFailure>).
	python3 "$SRC/tests/faults/flaky_engine.py" "$SOCK" "$WORK/flaky.sock" 'POST /containers/create' 1 \
		>flaky.out 2>flaky.err &
	proxy=$!
	cleanup_fns+=("kill $proxy")
	for _ in $(seq 1 50); do grep -q ready flaky.out 2>/dev/null && break; sleep 0.1; done
	script rtok <<'S'
echo "performance: 42 samples_per_sec"
S
	script rtbad <<'S'
echo "no figure today"
exit 1
S
	printf '[%s, %s]\n' "$(entry it_rtok rtok "")" "$(entry it_rtbad rtbad "")" | mkmad
	set +e
	DOCKER_HOST=unix://$WORK/flaky.sock "$RM" --tags it_rtok,it_rtbad -o perf.csv --retries 2 \
		--retry-wait 0 --junit junit.xml >out.txt 2>err.txt
	rc=$?
	set -e
	[ $rc = 1 ] || fail "exit $rc, want 1 (it_rtbad failed): $(cat err.txt)"
	grep -q "POST /v1.[0-9]*/containers/create.*failed (1 of 1)" flaky.err || fail "nothing injected: $(cat flaky.err)"
	rows() { python3 -c 'import csv,sys
for r in csv.DictReader(open("perf.csv", newline="")):
	print(r["model"], r["attempt"], r["status"], r["reason"][:60])'; }
	[ "$(rows | awk '{print $1, $2, $3}')" = "$(printf 'it_rtok 1 FAILURE\nit_rtok 2 SUCCESS\nit_rtbad 1 FAILURE')" ] ||
		fail "rows: $(rows)"
	grep -q "^it_rtok 1 FAILURE POST /containers/create: 500 injected by flaky_engine" <<<"$(rows)" || fail "reason: $(rows)" # (grep -q on a pipe: a broken pipe)
	grep -q "model 'it_rtok': attempt 1 of 3 failed for a reason of the machine: .*; trying again in 0 s" err.txt ||
		fail "the retry was not said: $(cat err.txt)"
	grep -q "model 'it_rtbad'.*trying again" err.txt && fail "a script's exit code was retried"
	ls it_rtok.*.a2.live.log >/dev/null || fail "attempt 2 has no log of its own: $(ls)"
	xmllint --noout --schema "$SRC/tests/results/junit.xsd" junit.xml || fail "JUnit invalid: $(cat junit.xml)"
	python3 - junit.xml <<'P' || fail "JUnit: $(cat junit.xml)"
import sys, xml.etree.ElementTree as ET
s = ET.parse(sys.argv[1]).getroot().find("testsuite")
cases = {c.get("name"): c for c in s.findall("testcase")}
assert sorted(cases) == ["it_rtbad", "it_rtok"], sorted(cases)
ok, bad = cases["it_rtok"], cases["it_rtbad"]
assert ok.find("failure") is None, "the flaky test failed"
flaky = ok.findall("flakyFailure")
assert len(flaky) == 1 and "injected by flaky_engine" in flaky[0].get("message"), flaky
assert flaky[0].find("stackTrace") is not None
assert bad.find("failure") is not None and not bad.findall("rerunFailure")
assert s.get("tests") == "2" and s.get("failures") == "1", s.attrib
P
	[ "$(containers_of it_rtok)" = 0 ] && [ "$(containers_of it_rtbad)" = 0 ] || fail "containers left"
	;;

formula_cells)
	# Issue 22 (12): workload text that a spreadsheet would run as a formula (a metric name
	# from the log, a multiple_results metric) is written with a leading "'"; every number
	# (a negative one too) and everything from models.json (args "--batch-size 8") is
	# written as it is, so a CSV reader gets the same values.
	script fcell <<'S'
echo 'performance: -7.25 =cmd|calc!A0'
S
	script fmulti <<'S'
printf 'model,performance,metric\nrow1,-3.5,@SUM(1+1)\nrow2,2,+cmd|calc\n' > results.csv
S
	printf '[%s, %s]\n' "$(entry it_fcell fcell "--batch-size 8")" \
		"$(entry it_fmulti fmulti "" '"multiple_results": "results.csv"')" | mkmad
	"$RM" --tags it_fcell -o perf.csv 2>err.txt || fail "exit $?: $(cat err.txt)"
	"$RM" --tags it_fmulti -o perf.csv 2>err.txt || fail "exit $?: $(cat err.txt)"
	python3 - perf.csv perf_it_fcell.csv <<'P' || fail "$(cat perf.csv perf_it_fcell.csv)"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
want = [("it_fcell", -7.25, "'=cmd|calc!A0"),
        ("it_fmulti_row1", -3.5, "'@SUM(1+1)"), ("it_fmulti_row2", 2.0, "'+cmd|calc")]
for r, (model, perf, metric) in zip(rows, want):
    assert r["model"] == model, r["model"]
    assert float(r["performance"]) == perf, r["performance"]
    assert r["metric"] == metric, r["metric"]
assert rows[0]["args"] == "--batch-size 8", rows[0]["args"]
def number(c):
    try:
        float(c)
        return True
    except ValueError:
        return False
# nothing a spreadsheet would run, but numbers and the models.json args
formula = [c for r in rows for c in r.values()
           if c and c[0] in "=+-@" and not number(c) and c != "--batch-size 8"]
assert not formula, formula
m = list(csv.DictReader(open(sys.argv[2], newline="")))
assert any(x["metric"] == "'=cmd|calc!A0" and float(x["value"]) == -7.25 for x in m), m
P
	;;

*)
	fail "unknown case"
	;;
esac
echo "ok [$case_name]"
