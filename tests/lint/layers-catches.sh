#!/usr/bin/env bash
# lint.layers must fail when a lower module includes an upper one: a copy of the tree with
# "rm/runner.h" planted in util, "rm/suite.h" in a launcher's header, a "../cmd/" include in
# the engine, and a folder the table does not name; each must be reported, one at a time.
set -euo pipefail
root=${1:?usage: layers-catches.sh ROOT}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

fresh() {
	rm -rf "$tmp/t"
	mkdir -p "$tmp/t"
	cp -r "$root/src" "$root/include" "$root/docs" "$tmp/t/"
}
expect() { # WHAT PATTERN: the lint fails and names PATTERN
	local out
	if out=$(bash "$root/tests/lint/layers.sh" "$tmp/t" 2>&1); then
		fail "$1: the lint passed: $out"
	fi
	grep -q -- "$2" <<<"$out" || fail "$1: not named: $out"
	echo "ok: $1"
}

fresh
bash "$root/tests/lint/layers.sh" "$tmp/t" >/dev/null || fail "the copy itself does not pass"
printf '#include "rm/runner.h"\n' >>"$tmp/t/src/util/util.c"
expect "util including the runner" 'src/util/util.c includes "rm/runner.h"'

fresh
sed -i '0,/#include "rm\/util.h"/s||#include "rm/util.h"\n#include "rm/suite.h"|' "$tmp/t/include/rm/launcher.h"
expect "a public header including an upper one" 'include/rm/launcher.h includes "rm/suite.h"'

fresh
printf '#include "../cmd/cmd.h"\n' >>"$tmp/t/src/engine/frame.c"
expect "a relative include of an upper folder" 'src/engine/frame.c includes "cmd/cmd.h"'

fresh
mkdir "$tmp/t/src/newthing"
expect "a folder the table does not name" 'src/newthing is not in'
