#!/usr/bin/env bash
# Runs the unit tests and one real smoke run under valgrind's memcheck; any error or
# definite leak fails. Usage: tests/valgrind.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
vg=(valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite
	--show-leak-kinds=definite)
status=0
for t in "$build"/test_*; do
	[ -x "$t" ] || continue
	if RM_SOURCE_DIR=$src "${vg[@]}" "$t" >/dev/null; then
		echo "valgrind: $(basename "$t") clean"
	else
		echo "valgrind: $(basename "$t") FAILED"
		status=1
	fi
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$src/models.json" "$src/docker" "$src/scripts" "$work/"
if (cd "$work" && "${vg[@]}" "$build/run_models" --tags smoke -q -o "$work/perf.csv"); then
	echo "valgrind: run_models --tags smoke clean"
else
	echo "valgrind: run_models --tags smoke FAILED"
	status=1
fi
if [ $status = 0 ]; then echo "valgrind: 1 passed, 0 failed"; else echo "valgrind: 0 passed, 1 failed"; fi
exit $status
