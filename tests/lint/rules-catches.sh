#!/usr/bin/env bash
# lint.rules must fail on each rule broken: a copy of src/ with an exit() in util, an Engine
# API call in the runner, a SLURM_ variable in the runner, a search of an error's message, and
# a public declaration with no definition.
set -euo pipefail
root=${1:?usage: rules-catches.sh ROOT LIBRM} lib=${2:?usage: rules-catches.sh ROOT LIBRM}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
plant() { # WHAT FILE TEXT PATTERN
	local out
	rm -rf "$tmp/t"
	mkdir -p "$tmp/t"
	cp -r "$root/src" "$root/include" "$tmp/t/"
	printf '%s\n' "$3" >>"$tmp/t/$2"
	if out=$(bash "$root/tests/lint/rules.sh" "$tmp/t" "$lib" 2>&1); then
		fail "$1: the lint passed"
	fi
	grep -q -- "$4" <<<"$out" || fail "$1: not named: $out"
	echo "ok: $1"
}
plant "exit() in util" src/util/util.c 'static void planted(void) { exit(3); }' 'src/util/util.c calls exit()'
plant "the Engine API in the runner" src/runner/run.c 'static void planted(void) { rm_engine_ping(0, 0); }' 'src/runner/run.c calls the Engine API'
plant "SLURM_ in the runner" src/runner/run.c 'static const char *planted = 0; /* */ static void p2(void) { planted = getenv(SLURM_JOB_ID); }' 'src/runner/run.c knows a launcher'
plant "a message searched" src/suite/run.c 'static int planted(rm_error *err) { return strstr(err->msg, "x") != 0; }' 'src/suite/run.c searches an error'
plant "a declaration without a definition" include/rm/util.h 'int rm_planted_nowhere(void);' 'defined nowhere: rm_planted_nowhere'
