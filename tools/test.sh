#!/usr/bin/env bash
# The README's second command (and what CI runs): set up, then the whole test suite:
#   1. a normal build: unit, golden, fuzz-corpus replay and integration tests (ctest);
#   2. the same suite built with ASan+UBSan (-fno-sanitize-recover);
#   3. valgrind (memcheck, leaks are errors) over the unit tests and one real run.
# RM_TEST_QUICK=1 runs step 1 only.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=tools/lib.sh
. tools/lib.sh
ensure_packages clang valgrind shellcheck time bc

DOCKER_HOST=$(RM_BUILD_DIR=build tools/setup.sh | tail -n 1)
export DOCKER_HOST
echo "== Docker engine: $DOCKER_HOST"

echo "== test suite (build)"
(cd build && ctest --output-on-failure -j2)

[ "${RM_TEST_QUICK:-0}" = 1 ] && exit 0

echo "== test suite under ASan+UBSan (build-asan)"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DRM_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$(nproc)" >/dev/null
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j2)

echo "== clang build with the libFuzzer harnesses; each fuzzer runs ${RM_FUZZ_SECONDS:-15} s"
CC=clang cmake -S . -B build-fuzz -DRM_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-fuzz -j"$(nproc)" >/dev/null
for f in build-fuzz/fuzz_*; do
	name=$(basename "$f")
	corpus=$(mktemp -d)
	cp -r "tests/fuzz/corpus/${name#fuzz_}/." "$corpus/"
	"$f" -max_total_time="${RM_FUZZ_SECONDS:-15}" -max_len=4096 -print_final_stats=1 "$corpus" >"$corpus.log" 2>&1 ||
		{ tail -n 40 "$corpus.log"; echo "fuzz: $name FAILED"; exit 1; }
	echo "fuzz: $name $(grep -o 'stat::number_of_executed_units: [0-9]*' "$corpus.log" | cut -d' ' -f2) runs, no crash"
	rm -rf "$corpus" "$corpus.log"
done

echo "== valgrind"
tests/valgrind.sh build
