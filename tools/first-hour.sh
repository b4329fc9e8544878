#!/usr/bin/env bash
# The first hour of a new user, measured: a fresh clone, the README's first command
# (tools/smoke.sh) twice, then `run_models --tags smoke` in a new login shell with a clean
# environment. Prints the figures; exit 1 when a promise is broken:
#   - the first command exits 0 with at most 30 lines of output, ending with the run's
#     result (its table, perf.csv and the log);
#   - run again, it builds nothing (the image is up to date);
#   - a login shell with nothing set finds run_models on PATH and the engine.
#
#   tools/first-hour.sh [REPOSITORY]   (default: this one; its committed HEAD is cloned)
#   RM_PREFIX   where the first command installs (default /usr/local, which a login shell's
#               PATH has; another prefix is put on the login shell's PATH here)
set -euo pipefail
src=${1:-$(cd "$(dirname "$0")/.." && pwd)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
	echo "first-hour: FAIL: $*" >&2
	exit 1
}

git clone -q "$src" "$work/clone"
cd "$work/clone"
run() { # N: runs the first command, its output in out.N; sets secs
	local t0 t1
	t0=$(date +%s.%N)
	tools/smoke.sh >"$work/out.$1" 2>&1 </dev/null || {
		cat "$work/out.$1" >&2
		fail "tools/smoke.sh (run $1) exited $?"
	}
	t1=$(date +%s.%N)
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}')
}
run 1
first=$secs
lines=$(wc -l <"$work/out.1")
run 2
second=$secs

echo "== tools/smoke.sh in a fresh clone, first run ($first s, $lines lines):"
cat "$work/out.1"
echo "== second run ($second s, $(wc -l <"$work/out.2") lines):"
cat "$work/out.2"
[ "$lines" -le 30 ] || fail "the first run printed $lines lines (at most 30)"
grep -qE '^smoke_busybox +SUCCESS +1234.5 +samples_per_sec' "$work/out.1" || fail "no result row"
grep -q "^results: $work/clone/perf.csv" "$work/out.1" || fail "no perf.csv path"
grep -q "^log: .*smoke_busybox.live.log" "$work/out.1" || fail "no log path"
grep -q "is up to date; build skipped" "$work/out.2" || fail "the second run rebuilt the image"
if grep -q "building 'ci-" "$work/out.2"; then fail "the second run built an image"; fi

# A new login shell, nothing set: run_models on PATH, the engine found.
prefix=${RM_PREFIX:-/usr/local}
login="run_models --tags smoke -o $work/login.csv --log-dir $work/login-logs"
[ "$prefix" = /usr/local ] || login="PATH=$prefix/bin:\$PATH $login"
env -i bash -lc "cd '$work/clone' && $login" >"$work/login.out" 2>&1 ||
	{
		cat "$work/login.out" >&2
		fail "'run_models --tags smoke' in a clean login shell"
	}
echo "== env -i bash -lc 'run_models --tags smoke' (a clean login shell):"
cat "$work/login.out"
echo "first-hour: ok: first run $first s and $lines lines, second run $second s without a build, a clean login shell runs it"
