#!/usr/bin/env bash
# The cases are called by name ("fault_$c") and HUNG is for the cases still to be written.
# shellcheck disable=SC2317,SC2034
# Fault injection against the real binary and a real Docker engine (issue 14): runs each
# fault case and prints one table row per case:
#
#   fault | time to recover | containers left | rows lost | result | note
#
#   time to recover   seconds from the fault to the runner's exit (or to its giving up)
#   containers left   containers of the case's model still on the engine afterwards
#   rows lost         perf.csv rows the case expected and did not find (torn rows count)
#   result            ok | FAIL (an expectation did not hold: the note says which) | todo
#
#   tools/faults.sh [CASE...]      (default: every case; tools/faults.sh --list names them)
#
#   RM_BIN       the binary (default build/run_models; built with tools/setup.sh)
#   DOCKER_HOST  the engine (tools/ensure-docker.sh finds or starts one)
#
# Adding a case is one function and one line: write fault_<name>, which runs in its own
# temp folder (the current directory) with its own model names and ends with one call of
#   row SECONDS CONTAINERS ROWS_LOST RESULT "note"
# (use "-" where a column does not apply), and add <name> to CASES below. failed, wait_for,
# good_rows and the helpers of tests/faults/lib.sh (a private dockerd to kill, a hung engine, a full
# disk) are at hand. Exit 1 when a case FAILed, else 0 (todo rows do not fail).
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$(pwd)
# shellcheck source=tests/faults/lib.sh
. tests/faults/lib.sh

CASES=(
	sigint
	sigterm
	concurrent_10
	malformed_inputs
	kill9_runner
	kill9_all
	sighup
	sigpipe
	hung_engine_ctrl_c
	engine_dies
	full_disk
	same_model_shared_log
	outputs_first
	secrets
	hostile_paths
	long_lines
	secret_outputs
	output_clash
	results_limits
	oom_removed
	keep_dir_nodes
	perf_symlink
	engine_dies_build
	formula_cells
	no_fuse
	manifest_per_run
	ci_outputs_through
	gpu_detect_hang
	wait_held
	attach_cut
	create_lost
	wait_dropped
	slow_engine
	name_collide
	build_timeout
	tools_bulk
	perf_csv_faults
	low_inputs
)

RM=${RM_BIN:-$SRC/build/run_models}
HUNG=${RM_HUNG_ENGINE:-$(dirname "$RM")/hung_engine}

# ---- what every case uses ----

# The case's table row; the last call wins.
row() { # SECONDS CONTAINERS ROWS_LOST RESULT NOTE
	printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" >"$ROW_FILE"
}
# A failed expectation: its text goes into the note and the case's result is FAIL.
#   [ "$rc" = 130 ] || failed "exit $rc, want 130"
FAILS=()
failed() { FAILS+=("$1"); }
result() { # ok or FAIL, from the expectations checked so far
	if [ ${#FAILS[@]} = 0 ]; then echo ok; else echo FAIL; fi
}
note() { # the failed expectations, or the text given
	if [ ${#FAILS[@]} = 0 ]; then echo "$*"; else (IFS=';'; echo "${FAILS[*]}"); fi
}

# A MAD folder with the smoke image and models.json from stdin.
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
entry() { # NAME DIR [EXTRA_JSON]
	printf '{"name":"%s","dockerfile":"docker/smoke","scripts":"scripts/%s/run.sh","n_gpus":"-1","owner":"ci","tags":["flt"],"args":""%s}' \
		"$1" "$2" "${3:+,$3}"
}
# Data rows of a perf.csv that have as many fields as its header (a torn row does not).
good_rows() { # FILE
	[ -f "$1" ] || { echo 0; return; }
	python3 -c 'import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
print(sum(1 for r in rows[1:] if len(r) == len(rows[0])))' "$1"
}
containers() { faults_containers_of "$SOCK" "$1"; }
# Waits up to 30 s for a line matching PATTERN in FILE.
wait_for() { # FILE PATTERN
	for _ in $(seq 1 150); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.2
	done
	return 1
}

# ---- cases that hold today ----

# Ctrl-C (or SIGTERM) mid-run: the container is killed and removed, a FAILURE row says why,
# the exit code is 128 + the signal.
signal_case() { # SIG WANT_RC MODEL
	local sig=$1 want=$2 m=$3 pid rc=0 t0 secs
	script sleepy <<'S'
echo "started"
sleep 600
S
	entry "$m" sleepy | sed 's/^/[/; s/$/]/' | mkmad
	"$RM" --tags "$m" -o perf.csv >out.txt 2>err.txt &
	pid=$!
	wait_for "$m.live.log" started || { kill -9 "$pid"; row - - - FAIL "never started: $(tail -n 1 err.txt)"; return; }
	t0=$(faults_now)
	kill -"$sig" "$pid"
	wait "$pid" || rc=$?
	secs=$(faults_since "$t0")
	local left lost
	left=$(containers "$m")
	lost=$((1 - $(good_rows perf.csv)))
	[ "$rc" = "$want" ] || failed "exit $rc, want $want"
	grep -q "interrupted by SIG$sig" perf.csv 2>/dev/null || failed "no 'interrupted by SIG$sig' row"
	[ "$left" = 0 ] || failed "$left container(s) left"
	[ "$(echo "$secs <= 5" | bc)" = 1 ] || failed "took $secs s"
	row "$secs" "$left" "$lost" "$(result)" "$(note "exit $rc")"
}
fault_sigint() { signal_case INT 130 flt_sigint; }
fault_sigterm() { signal_case TERM 143 flt_sigterm; }

# Ten runners at once, each its own model, all appending to one perf.csv: ten whole rows.
fault_concurrent_10() {
	local i t0 secs pids=() rcs=0 models=()
	script quick <<'S'
echo "performance: 1 samples_per_sec"
S
	for i in $(seq 1 10); do models+=("$(entry "flt_conc$i" quick)"); done
	(IFS=,; echo "[${models[*]}]") | mkmad
	# each model has its own image: build them first, so the ten runs race on the CSV
	"$RM" --tags flt -o warmup.csv -q >/dev/null 2>&1 || true
	t0=$(faults_now)
	for i in $(seq 1 10); do
		"$RM" --tags "flt_conc$i" -o perf.csv -q >"out$i.txt" 2>&1 &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || rcs=$((rcs + 1)); done
	secs=$(faults_since "$t0")
	local good left=0
	good=$(good_rows perf.csv)
	for i in $(seq 1 10); do left=$((left + $(containers "flt_conc$i"))); done
	[ "$rcs" = 0 ] || failed "$rcs runner(s) failed"
	[ "$good" = 10 ] || failed "$((10 - good)) row(s) lost or torn"
	[ "$left" = 0 ] || failed "$left container(s) left"
	[ "$(grep -c "^model," perf.csv)" = 1 ] || failed "header written more than once"
	row "$secs" "$left" "$((10 - good))" "$(result)" "$(note "10 runs in $secs s (time = all ten)")"
}

# Bad input of every kind: a clear error and a documented exit code (2, 3 or 5), never a crash,
# never a container, never a row.
fault_malformed_inputs() {
	local n=0 bad=() rc b
	script ok <<'S'
echo "performance: 1 x"
S
	entry flt_mal ok | sed 's/^/[/; s/$/]/' | mkmad
	cp models.json good.json
	try() { # LABEL WANT_RCS ARGS... (models.json as left by the caller)
		local label=$1 want=$2
		shift 2
		n=$((n + 1))
		rc=0
		"$RM" "$@" >out.txt 2>err.txt </dev/null || rc=$?
		if ! [[ " $want " == *" $rc "* ]] || [ ! -s err.txt ]; then
			bad+=("$label: exit $rc")
		fi
		cp good.json models.json
	}
	printf '[{"name": "flt_mal", ' >models.json && try "truncated json" 3 --tags flt_mal -o perf.csv
	: >models.json && try "empty models.json" 3 --tags flt_mal -o perf.csv
	head -c 4096 /dev/urandom >models.json && try "binary models.json" 3 --tags flt_mal -o perf.csv
	printf '%0.s[' $(seq 1 5000) >models.json && try "5000 nested arrays" 3 --tags flt_mal -o perf.csv
	echo '{"name": "x"}' >models.json && try "object, not array" 3 --tags flt_mal -o perf.csv
	jq '.[0].n_gpus = "lots"' good.json >models.json && try "n_gpus text" 3 --tags flt_mal -o perf.csv
	jq '.[0].n_gpus = "99999999999999999999"' good.json >models.json && try "n_gpus overflow" 3 --tags flt_mal -o perf.csv
	jq '.[0].name = ""' good.json >models.json && try "empty name" 3 --tags flt_mal -o perf.csv
	jq '.[0].tags = "flt"' good.json >models.json && try "tags not a list" 3 --tags flt_mal -o perf.csv
	jq '.[0].timeout = "soon"' good.json >models.json && try "timeout text" 3 --tags flt_mal -o perf.csv
	jq '. + .' good.json >models.json && try "duplicate model" 3 --tags flt_mal -o perf.csv
	rm models.json && try "no models.json" 3 --tags flt_mal -o perf.csv
	try "bad context json" 3 --tags flt_mal -o perf.csv --additional-context '{"gpu_vendor": '
	try "context not an object" 3 --tags flt_mal -o perf.csv --additional-context '[1, 2]'
	try "context bad gpus" 3 --tags flt_mal -o perf.csv --additional-context '{"docker_gpus": "3-1"}'
	try "context @missing" 3 --tags flt_mal -o perf.csv --additional-context @nonexistent.json
	printf 'docker_env_vars: [unclosed\n' >bad.yaml && try "bad yaml file" 3 --tags flt_mal -o perf.csv --additional-context-file bad.yaml
	printf 'a: &x 1\nb: *x\n' >alias.yaml && try "yaml alias" 3 --tags flt_mal -o perf.csv --additional-context-file alias.yaml
	try "unknown tag" 3 --tags no_such_tag -o perf.csv
	try "unknown option" 2 --tags flt_mal --no-such-option
	try "timeout text" 2 --tags flt_mal --timeout soon -o perf.csv
	try "repeat zero" 2 --tags flt_mal --repeat 0 -o perf.csv
	try "tunableop maybe" 2 --tags flt_mal --tunableop maybe -o perf.csv
	try "score unknown" 2 --tags flt_mal --repeat 2 --score best -o perf.csv
	echo "not,our,header" >other.csv && try "foreign perf.csv" "3 5" --tags flt_mal -o other.csv
	local left
	left=$(containers flt_mal)
	[ "$left" = 0 ] || failed "$left container(s) left"
	[ ! -s perf.csv ] || failed "a row was written"
	for b in "${bad[@]}"; do failed "$b"; done
	row - "$left" - "$(result)" "$(note "$n inputs: each a message and a documented exit code")"
}

# ---- the issue 14 faults: the integration cases of tests/integration/faults.sh ----
# Each case there injects its fault, checks that no container is left and no row is lost or
# torn (it fails otherwise), and prints how long recovery took; the row takes those.

integration_case() { # CASE NOTE: runs tests/integration/faults.sh CASE, one table row
	local out rc=0 secs
	out=$(bash "$SRC/tests/integration/faults.sh" "$1" "$RM" "$SRC" "$HUNG" 2>&1) || rc=$?
	secs=$(echo "$out" | grep -oE '(recovered|stopped)[a-z ]* in [0-9.]+ s' | grep -oE '[0-9.]+' |
		sort -n | tail -n 1)
	secs=${secs:--}
	[ "$secs" = - ] || secs=$(printf '%.2f' "$secs")
	if [ "$rc" = 0 ]; then
		row "$secs" 0 0 ok "$2"
	else
		row "$secs" - - FAIL "$(echo "$out" | grep -m1 'FAIL' || echo "exit $rc")"
	fi
}
fault_kill9_runner() { integration_case kill9_watchdog "kill -9 of the runner: its watchdog removes the container"; }
fault_kill9_all() { integration_case kill9_reap "kill -9 of runner and watchdog: the next run removes the leftover and says so"; }
fault_sighup() { integration_case sighup "SIGHUP as SIGTERM: exit 129, FAILURE row"; }
fault_sigpipe() { integration_case sigpipe "stdout closed (| head -1): the row is written"; }
fault_hung_engine_ctrl_c() { integration_case hung_engine "hung engine at start, and frozen mid-run: one Ctrl-C ends the run in under 2 s (the longer of the two)"; }
fault_engine_dies() { integration_case engine_dies "private dockerd killed mid-run: reason names the lost engine, exit 4, log kept"; }
fault_full_disk() { integration_case disk_full "full tmpfs: the live log fails the run; a full perf.csv disk keeps its rows whole, exit 5"; }
fault_same_model_shared_log() { integration_case log_per_run "two runs of one model at once: a log each, the latest linked, a planted symlink not followed"; }
fault_outputs_first() { integration_case outputs_first "missing --log-dir created; foreign or unwritable perf.csv refused before any build"; }
fault_secrets() { integration_case secrets "multi-line secret masked line by line, short one warned about, metric not lost"; }
# issue 22
fault_long_lines() { integration_case long_lines "65,536-byte line, last line without a line end, MLPerf run_stop without newline / aborted: figures right, live and parse"; }
fault_secret_outputs() { integration_case secret_outputs "secret as a tag argument: in no file of the run (run.json, JUnit, report, archive unpacked)"; }
fault_output_clash() { integration_case output_clash "-o perf_<model>.csv, model 'summary' with --repeat, foreign perf_<model>.csv, --html over perf.csv: refused before any build, exit 5"; }
fault_results_limits() { integration_case results_limits "multiple_results over 16 MiB, a symlink, a folder: reasons that say so"; }
fault_oom_removed() { integration_case oom_removed "OOM kill and a container removed by someone else: reasons that say so, exit 1"; }
fault_keep_dir_nodes() { integration_case keep_dir_nodes "--keep-model-dir: no device node, FIFO or socket made on the host"; }
fault_perf_symlink() { integration_case perf_symlink "dangling perf.csv / perf_<model>.csv symlink: not followed, refused before any build, exit 5"; }
fault_engine_dies_build() { integration_case engine_dies_build "private dockerd killed during a build: exit 4 naming the engine; the next run reaps the build container"; }
fault_formula_cells() { integration_case formula_cells "formula text from the workload defused with a leading ', numbers and args unchanged"; }
# issue 29: the fourth adversarial pass (the engine faults through the fault-injecting proxy,
# tests/faults/hung_engine.c --fault)
fault_no_fuse() {
	local out rc=0
	out=$(bash "$SRC/tests/integration/cases.sh" no_fuse "$RM" "$SRC" 2>&1) || rc=$?
	if [ "$rc" = 0 ]; then
		row - 0 0 ok "host without /dev/fuse: left out, one warning, doctor says so"
	else
		row - - - FAIL "$(echo "$out" | grep -m1 'FAIL' || echo "exit $rc")"
	fi
}
fault_manifest_per_run() { integration_case manifest_per_run "two runs in one folder 0.5 s apart: each its own run.<id>.json, gate (exit 6) and archive"; }
fault_ci_outputs_through() { integration_case ci_outputs_through "symlink, FIFO, character device as CI outputs: written through, never replaced; a FIFO nobody reads: an error, no hang"; }
fault_gpu_detect_hang() { integration_case gpu_detect_hang "rocminfo/nvidia-smi that hang: stopped after 10 s or at once on Ctrl-C (run and doctor), no child left; a FIFO for KFD properties not read"; }
fault_wait_held() { integration_case wait_held "proxy stalls /wait: the ended container's status from the engine; one still running: timeout 5 s + < 15 s, killed"; }
fault_attach_cut() { integration_case attach_cut "proxy closes the attach stream after 1 s: attached again, the later figure read"; }
fault_create_lost() { integration_case create_lost "proxy cuts the /containers/create answer: the container made anyway is removed by name before exit"; }
fault_wait_dropped() { integration_case wait_dropped "proxy cuts one /wait: status from the engine, SUCCESS, not a lost engine"; }
fault_slow_engine() { integration_case slow_engine "proxy delays /_ping, /start, PUT /archive, attach by 2 s: SUCCESS each"; }
fault_name_collide() { integration_case name_collide "models 'a/b' and 'a_b' in one run: refused before any build, exit 5"; }
fault_build_timeout() { integration_case build_timeout "RUN sleep with --build-timeout 5: FAILURE naming the build, no build container left"; }
fault_tools_bulk() { integration_case tools_bulk "20,000 tool outputs gathered in bulk after the model's time; a timed-out run announces none"; }
fault_low_inputs() { integration_case low_inputs "230-character name, --repeat -1/0, --history-window 0, FIFO include/-f/--references, repeat: 2.5: a message at once"; }
fault_perf_csv_faults() {
	local out rc=0 state
	state=$(mktemp -d)
	out=$(bash "$SRC/tests/results/cases.sh" perf_csv_faults "$RM" "$SRC" - "$state/pg" 2>&1) || rc=$?
	rm -rf "$state"
	if [ "$rc" = 0 ]; then
		row - 0 0 ok "stray quote, repeated header, reused run id, CR-only, BOM, 1e20/1e300, accepted with a stray quote: verdict right, named"
	else
		row - - - FAIL "$(echo "$out" | grep -m1 'FAIL' || echo "exit $rc")"
	fi
}

fault_hostile_paths() {
	local out rc=0
	out=$(bash "$SRC/tests/compat/cases.sh" hostile_paths "$RM" "$SRC" 2>&1) || rc=$?
	[ "$rc" = 0 ] && out=$(bash "$SRC/tests/compat/cases.sh" hostile_symlink "$RM" "$SRC" 2>&1) || rc=$?
	if [ "$rc" = 0 ]; then
		row - 0 0 ok "paths out of the folder, symlinks out, bad numbers: refused before any build, field named"
	else
		row - - - FAIL "$(echo "$out" | grep -m1 'FAIL' || echo "exit $rc")"
	fi
}

# ---- the table ----

# One function, read whole before it runs: editing this file during a run cannot break it.
main() {

	if [ "${1:-}" = --list ]; then
		printf '%s\n' "${CASES[@]}"
		exit 0
	fi
	selected=("$@")
	[ ${#selected[@]} != 0 ] || selected=("${CASES[@]}")
	for c in "${selected[@]}"; do
		declare -F "fault_$c" >/dev/null || { echo "faults: no case '$c' (tools/faults.sh --list)" >&2; exit 2; }
	done
	[ -x "$RM" ] || { echo "faults: $RM not built (tools/setup.sh)" >&2; exit 2; }
	[ -f docker/smoke/busybox ] || { echo "faults: docker/smoke/busybox missing (tools/setup.sh)" >&2; exit 2; }
	DOCKER_HOST=$(tools/ensure-docker.sh)
	export DOCKER_HOST
	SOCK=${DOCKER_HOST#unix://}

	TOP=$(mktemp -d)
	trap 'rm -rf "$TOP"' EXIT
	status=0
	printf '%-22s %8s %10s %9s %-6s %s\n' fault recover_s containers rows_lost result note >"$TOP/table"
	for c in "${selected[@]}"; do
		echo "faults: $c ..." >&2
		mkdir -p "$TOP/$c"
		ROW_FILE=$TOP/$c.row
		printf '%s\t%s\t%s\t%s\t%s\n' - - - FAIL "the case wrote no row" >"$ROW_FILE"
		# Each case in a subshell in its own folder: a failure or an exit stays in the case.
		(cd "$TOP/$c" && "fault_$c") || true
		IFS=$'\t' read -r secs left lost res what <"$ROW_FILE"
		printf '%-22s %8s %10s %9s %-6s %s\n' "$c" "$secs" "$left" "$lost" "$res" "$what" >>"$TOP/table"
		[ "$res" != FAIL ] || status=1
		# Whatever a case left on the engine goes, once counted.
		for m in $(jq -r '.[].name' "$TOP/$c/models.json" 2>/dev/null || true); do
			faults_remove_containers "$SOCK" "$m" || true
		done
	done
	cat "$TOP/table"
	exit $status
}
main "$@"
