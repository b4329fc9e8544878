#!/usr/bin/env bash
# What a user sees: usage: terminal.sh CASE RUN_MODELS SOURCE_DIR [BUILD_DIR]
# A real terminal of 80 columns is tmux's (what it shows is read back with capture-pane); raw
# terminal bytes come from script(1), which gives the command a pty.
set -euo pipefail
case_name=$1
RM=$2
SRC=$3
BUILD=${4:-}
DOCKER_HOST=$("$SRC/tools/ensure-docker.sh")
export DOCKER_HOST
SOCK=${DOCKER_HOST#unix://}
WORK=$(mktemp -d)
TMUX_SOCKET=rm-terminal-$$
trap 'tmux -L "$TMUX_SOCKET" kill-server 2>/dev/null || true; rm -rf "$WORK"' EXIT
cd "$WORK"

# shellcheck source=tests/integration/lib.sh
. "$SRC/tests/integration/lib.sh"

# in_tmux COLS COMMAND: runs COMMAND in a COLS x 24 terminal; waits for it to end.
in_tmux() {
	local cols=$1
	shift
	tmux -L "$TMUX_SOCKET" new-session -d -x "$cols" -y 24 -s t \
		"cd '$WORK' && $* ; echo \"EXIT=\$?\" >'$WORK/exit'; sleep 600"
	for _ in $(seq 1 300); do
		[ -s "$WORK/exit" ] && return 0
		sleep 0.2
	done
	fail "'$*' did not end in the terminal"
}
session=t
screen() { # what the terminal shows (-J: a row that wrapped joined to the next)
	tmux -L "$TMUX_SOCKET" capture-pane -p -t "$session" "$@"
}
# on_pty COMMAND: its output as a terminal of 80 columns gets it, raw bytes.
on_pty() {
	command script -qec "stty cols 80 rows 24; $*" /dev/null # not lib.sh's script()
}
sgr=$'\033\\[[0-9;]*m'

case "$case_name" in
status_line)
	# A name long enough that the status line is wider than 80 columns.
	name=it_status_line_with_a_name_long_enough_to_pass_eighty_columns_on_its_own
	script tick <<'S'
for i in 1 2 3 4 5; do echo "step $i/5"; sleep 1; done
echo "performance: 1 x"
S
	entry "$name" tick "" | sed 's/^/[/; s/$/]/' | mkmad
	in_tmux 80 "'$RM' --tags $name -o perf.csv --log-dir logs"
	grep -q "EXIT=0" exit || fail "$(cat exit): $(screen)"
	shown=$(screen)
	# the status line is gone at the end, and left no row behind
	[ "$(echo "$shown" | grep -c "\[$name\]")" = 0 ] || fail "stale status rows:
$shown"
	# every message starts its own row (none printed after a status line)
	screen -J | grep -q "^run_models: model '$name': SUCCESS" || fail "message not on its own row:
$shown"
	echo "$shown" | awk 'length($0) > 80 {bad = 1} END {exit bad}' || fail "a row wider than 80"
	# while it runs: one status row, within the width
	session=t2
	tmux -L "$TMUX_SOCKET" new-session -d -x 80 -y 24 -s t2 "cd '$WORK' && '$RM' --tags $name -o perf.csv --log-dir logs; sleep 600"
	for _ in $(seq 1 50); do
		screen | grep -q "^\[$name" && break
		sleep 0.2
	done
	sleep 1.5
	mid=$(screen)
	[ "$(echo "$mid" | grep -c "\[$name")" = 1 ] || fail "not one status row mid-run:
$mid"
	echo "$mid" | grep "^\[$name" | awk 'length($0) >= 80 {bad = 1} END {exit bad}' || fail "status row too wide"
	;;

colour)
	script bad <<'S'
echo "performance: 1 x"
exit 3
S
	script good <<'S'
echo "performance: 2 x"
S
	printf '[%s, %s]\n' "$(entry it_colour_bad bad "")" "$(entry it_colour_good good "")" | mkmad
	jq '.[1].tags = ["it_good"]' models.json >m && mv m models.json
	# a terminal: the failing model's status is red, the good one's green, "warning:" yellow
	on_pty "'$RM' --tags it_colour_bad,it_good -o perf.csv" >tty.txt 2>&1 || true
	grep -q $'\033\\[1;31mFAILURE' tty.txt || fail "FAILURE not red on a terminal: $(cat -v tty.txt)"
	grep -q $'\033\\[32mSUCCESS' tty.txt || fail "SUCCESS not green on a terminal"
	grep -q $'\033\\[33mwarning:' tty.txt || fail "warning not yellow on a terminal"
	# NO_COLOR, --color never, or output that is not a terminal: plain
	on_pty "NO_COLOR=1 '$RM' --tags it_colour_bad -o perf.csv" >nocolor.txt 2>&1 || true
	grep -q FAILURE nocolor.txt || fail "no FAILURE with NO_COLOR"
	if grep -q "$sgr" nocolor.txt; then fail "colour despite NO_COLOR: $(cat -v nocolor.txt)"; fi
	on_pty "'$RM' --tags it_colour_bad -o perf.csv --color never" >never.txt 2>&1 || true
	if grep -q "$sgr" never.txt; then fail "colour despite --color never"; fi
	"$RM" --tags it_colour_bad -o perf.csv >piped.txt 2>&1 && fail "should fail"
	grep -q FAILURE piped.txt || fail "no FAILURE piped"
	if grep -q "$sgr" piped.txt; then fail "colour when piped: $(cat -v piped.txt)"; fi
	"$RM" --tags it_colour_bad -o perf.csv --color always >always.txt 2>&1 && fail "should fail"
	grep -q $'\033\\[1;31mFAILURE' always.txt || fail "--color always gave no colour"
	"$RM" --tags it_colour_bad --color sometimes 2>err.txt && fail "--color sometimes accepted"
	grep -q "'auto', 'always' or 'never'" err.txt || fail "$(cat err.txt)"
	;;

summary)
	script sum <<'S'
echo "performance: 123.456789 samples_per_second_per_gpu_in_a_long_unit_name"
S
	script sumbad <<'S'
exit 1
S
	printf '[%s, %s]\n' "$(entry it_summary_with_a_rather_long_model_name_for_the_table sum "")" \
		"$(entry it_summary_bad sumbad "")" | mkmad
	"$RM" --tags it -o perf.csv --log-dir logs >out.txt 2>err.txt && fail "should fail"
	awk 'length($0) > 80 {bad = 1} END {exit bad}' out.txt || fail "summary wider than 80: $(cat out.txt)"
	grep -qE '^model +status +performance +metric +duration$' out.txt || fail "no table header: $(cat out.txt)"
	# at 80 columns the long metric and then the long name are cut, marked with ~
	grep -qE '^it_summary_with_a_rather_[a-z_]*~ +SUCCESS +123.457 +samples_[a-z_]*~ ' out.txt || fail "success row: $(cat out.txt)"
	grep -qE '^it_summary_bad +FAILURE ' out.txt || fail "failure row: $(cat out.txt)"
	grep -qx "results: perf.csv" out.txt || fail "perf.csv path: $(cat out.txt)"
	grep -qx "logs:    logs/" out.txt || fail "logs path: $(cat out.txt)"
	# --repeat: the statistics within 80 columns
	"$RM" --tags it_summary_with_a_rather_long_model_name_for_the_table --repeat 3 -o perf.csv >rep.txt 2>err.txt || fail "repeat: $(cat err.txt)"
	grep -q "performance (last)" rep.txt || fail "no repeat summary: $(cat rep.txt)"
	awk 'length($0) > 80 {bad = 1} END {exit bad}' rep.txt || fail "repeat summary wider than 80: $(cat rep.txt)"
	# -q: nothing on stdout
	"$RM" --tags it_summary_bad -o perf.csv -q >q.txt 2>/dev/null && fail "should fail"
	[ ! -s q.txt ] || fail "-q printed: $(cat q.txt)"
	;;

help_width)
	# piped: 80 columns, for every command
	for c in "" run list parse doctor "report html" "report ci" "report compare" "report sweep" export suite build completion; do
		# shellcheck disable=SC2086 # the command's words
		"$RM" $c --help >help.txt || fail "$c --help"
		awk 'length($0) > 80 {print; bad = 1} END {exit bad}' help.txt || fail "'$c --help' wider than 80 columns when piped"
	done
	# a terminal of 60 columns: wrapped to 60
	in_tmux 60 "'$RM' run --help >/dev/tty; '$RM' run --help | wc -l >lines"
	screen | awk 'length($0) > 60 {bad = 1} END {exit bad}' || fail "wider than the terminal"
	on_pty "stty cols 60; '$RM' run --help" | tr -d '\r' | awk 'length($0) > 60 {bad = 1} END {exit bad}' ||
		fail "run --help wider than a 60-column terminal"
	;;

man_page)
	[ -n "$BUILD" ] || fail "no build folder given"
	man=$BUILD/run_models.1
	[ -f "$man" ] || fail "no man page in $BUILD (target run_models_docs)"
	"$RM" --help=man | cmp -s - "$man" || fail "$man is not what run_models --help=man prints"
	warnings=$(groff -man -Tutf8 -ww -z "$man" 2>&1)
	[ -z "$warnings" ] || fail "groff: $warnings"
	text=$(MANWIDTH=80 man -l "$man" 2>/dev/null | col -b)
	for o in $("$RM" run --help=markdown | grep -o -- '--[a-z][a-z_-]*' | sort -u); do
		grep -qF -- "$(echo "$o" | sed 's/-/\\-/g')" "$man" || fail "man page lacks $o"
	done
	for c in "run_models list" "run_models doctor" "run_models report ci" "run_models build"; do
		echo "$text" | grep -q "$c" || fail "man page lacks $c"
	done
	# each command's usage line is the man page's synopsis
	for c in run list parse doctor "report html" "report ci" "report compare" "report sweep" export suite build completion; do
		# shellcheck disable=SC2086
		u=$("$RM" $c --help | awk 'NR == 1 {sub(/^usage: /, ""); print}')
		grep -qF -- "$(echo "$u" | sed 's/-/\\-/g')" "$man" || fail "synopsis of '$c' differs from its --help: $u"
	done
	;;

completion)
	[ -n "$BUILD" ] || fail "no build folder given"
	cp -r "$SRC/models.json" "$SRC/docker" "$SRC/scripts" .
	mkdir bin
	ln -s "$RM" bin/run_models
	cat >comp.sh <<EOF
. '$BUILD/run_models.bash'
PATH=$WORK/bin:\$PATH
c() { COMP_WORDS=("\$@"); COMP_CWORD=\$((\${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _run_models; echo "\${COMPREPLY[*]}"; }
EOF
	comp() { bash -c ". ./comp.sh; c $*"; }
	[ "$(comp run_models li)" = list ] || fail "command: $(comp run_models li)"
	[ "$(comp run_models --ta)" = --tags ] || fail "option: $(comp run_models --ta)"
	[ "$(comp run_models --tags smo)" = "smoke_busybox smoke" ] || fail "tags: $(comp run_models --tags smo)"
	[ "$(comp run_models --tags smoke mlperf_llama3)" = mlperf_llama31_8b_training ] || fail "second tag"
	[ "$(comp run_models --tags smoke,mlpe)" = "smoke,mlperf_llama2_70b_lora_training smoke,mlperf smoke,mlperf_llama31_8b_training" ] ||
		fail "comma list: $(comp run_models --tags smoke,mlpe)"
	[ "$(comp run_models list --format "''")" = "table csv json" ] || fail "list --format"
	[ "$(comp run_models doctor --format "''")" = "text json" ] || fail "doctor --format"
	[ "$(comp run_models --color "''")" = "auto always never" ] || fail "--color"
	[ "$(comp run_models report "''")" = "html ci compare sweep" ] || fail "report"
	[ "$(comp run_models report ci --ju)" = --junit ] || fail "report ci options"
	;;

engine_found)
	# Without DOCKER_HOST: the standard socket when it is there, else the private engine's
	# (here a link to this engine's socket, in RM_DOCKER_DIR).
	mkdir eng
	ln -s "$SOCK" eng/docker.sock
	env -u DOCKER_HOST RM_DOCKER_DIR="$WORK/eng" "$RM" doctor >doc.txt 2>&1 || true
	if [ -S /var/run/docker.sock ]; then
		grep -q "^OK    docker.*unix:///var/run/docker.sock" doc.txt || fail "standard socket: $(cat doc.txt)"
	else
		grep -q "^OK    docker.*unix://$WORK/eng/docker.sock" doc.txt || fail "private engine not found: $(cat doc.txt)"
		# nothing there: the message names the standard socket
		env -u DOCKER_HOST RM_DOCKER_DIR="$WORK/none" "$RM" doctor >doc2.txt 2>&1 && fail "no engine, doctor passed"
		grep -q "^FAIL  docker.*/var/run/docker.sock" doc2.txt || fail "$(cat doc2.txt)"
	fi
	# DOCKER_HOST wins
	DOCKER_HOST=unix://$WORK/none.sock RM_DOCKER_DIR="$WORK/eng" "$RM" doctor >doc3.txt 2>&1 && fail "dead DOCKER_HOST passed"
	grep -q "none.sock" doc3.txt || fail "$(cat doc3.txt)"
	;;

*)
	fail "unknown case"
	;;
esac
echo "ok: $case_name"
