#!/usr/bin/env bash
# The unit tests' structure (tests/unit/check.h): every test of tests/unit/test_*.c is a
# TEST(name), so that it is registered and run; no file has a main() of its own or a test
# function written by hand (`static void test_x(void)`, run only if some test calls it) or
# opts out of the shared main; and each built test program lists exactly the TESTs of its
# source (the registration works with this toolchain). usage: SOURCE BUILD
set -euo pipefail
src=$1
build=$2
status=0 files=0
fail() {
	echo "$1" >&2
	status=1
}
for f in "$src"/tests/unit/test_*.c; do
	name=$(basename "$f" .c)
	files=$((files + 1))
	grep -nHE '^[A-Za-z_].*[^A-Za-z0-9_]main[[:space:]]*\(' "$f" &&
		fail "$f: a main() of its own: the one of check.h runs the TESTs"
	grep -nHE '^[A-Za-z_][A-Za-z0-9_ *]*[^A-Za-z0-9_]test_[A-Za-z0-9_]*[[:space:]]*\(' "$f" &&
		fail "$f: a test function written by hand: write it TEST(name)"
	grep -nHE '^[[:space:]]*#[[:space:]]*(undef|define)[[:space:]]+RM_CHECK_MAIN' "$f" &&
		fail "$f: RM_CHECK_MAIN is CMakeLists.txt's to set"
	want=$(grep -cE '^TEST\([A-Za-z0-9_]+\)' "$f" || true)
	[ "$want" -gt 0 ] || fail "$f: no TEST(name)"
	if [ ! -x "$build/$name" ]; then
		fail "$build/$name: not built"
		continue
	fi
	have=$("$build/$name" --list | wc -l)
	[ "$have" = "$want" ] ||
		fail "$name: $have tests registered, $want TEST()s in $f"
done
[ $status = 0 ] && echo "$files unit test files, every test registered"
exit $status
