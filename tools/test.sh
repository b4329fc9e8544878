#!/usr/bin/env bash
# The README's second command (and what CI runs): set up, then the whole test suite. Each
# stage prints its time, and a table of all of them comes at the end, so a slow stage is
# seen before it costs a submission (CI must stay under 45 minutes on 2 cores):
#   setup     packages (tools/setup.sh --tests: the test-only ones too), the build of every
#             test, a Docker engine
#   tests     a normal build: unit, golden, fuzz-corpus replay, lint, and the integration,
#             fault, compatibility, results (SQLite, PostgreSQL, Chromium) and scale-out
#             (SLURM, registry) suites against real servers, and the Podman cases on a
#             private Podman service (tools/ensure-podman.sh, docs/engines.md) (ctest)
#   matrix    gcc and clang at every build type, warnings are errors (tools/build-matrix.sh)
#   asan      the same suite built with ASan+UBSan (-fno-sanitize-recover)
#   fuzz      a clang build of the libFuzzer harnesses; each runs RM_FUZZ_SECONDS (15)
#   valgrind  memcheck (leaks are errors) over the unit tests and real runs
# After the tests and asan stages, tidy removes the dangling images the suite leaves on the
# tests' engines (each case rebuilds its ci-it_* tags; the replaced images stay behind, about
# 200 a pass on Podman, whose image list slows down past a thousand of them).
# RM_TEST_QUICK=1 runs setup and tests only.
set -euo pipefail
cd "$(dirname "$0")/.."


stages=()
stage() { # NAME COMMAND...: runs the command (in a subshell, with set -e), prints and records its time
	local name=$1 t0 t1 rc
	shift
	echo "== $name"
	t0=$(date +%s)
	set +e
	(
		set -e
		"$@"
	)
	rc=$?
	set -e
	t1=$(date +%s)
	stages+=("$(printf '%-9s %4d s  %s' "$name" $((t1 - t0)) "$([ $rc = 0 ] && echo ok || echo FAILED)")")
	echo "== $name: $((t1 - t0)) s$([ $rc = 0 ] || echo ", FAILED ($rc)")"
	return $rc
}
report() {
	echo "== stage times"
	printf '  %s\n' "${stages[@]}"
}
trap report EXIT

setup() {
	RM_BUILD_DIR=build tools/setup.sh --tests >/dev/null
}

tests() {
	(cd build && ctest --output-on-failure -j2)
}

asan() {
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DRM_SANITIZE=ON >/dev/null
	cmake --build build-asan -j"$(nproc)" >/dev/null
	(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j2)
}

fuzz() {
	# The library too is instrumented (coverage, ASan+UBSan), not only the harnesses:
	# otherwise libFuzzer sees almost no coverage and the sanitizers check nothing in librm.
	local f name corpus targets=()
	for f in tests/fuzz/fuzz_*.c; do targets+=("$(basename "$f" .c)"); done
	CC=clang cmake -S . -B build-fuzz -DRM_FUZZ=ON -DRM_SANITIZE=ON \
		-DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link -DCMAKE_BUILD_TYPE=Debug >/dev/null
	cmake --build build-fuzz -j"$(nproc)" --target "${targets[@]}" >/dev/null
	for f in build-fuzz/fuzz_*; do
		name=$(basename "$f")
		corpus=$(mktemp -d)
		cp -r "tests/fuzz/corpus/${name#fuzz_}/." "$corpus/"
		"$f" -max_total_time="${RM_FUZZ_SECONDS:-15}" -max_len=4096 -print_final_stats=1 "$corpus" >"$corpus.log" 2>&1 ||
			{ tail -n 40 "$corpus.log"; echo "fuzz: $name FAILED"; return 1; }
		echo "fuzz: $name $(grep -o 'stat::number_of_executed_units: [0-9]*' "$corpus.log" | cut -d' ' -f2) runs, no crash"
		rm -rf "$corpus" "$corpus.log"
	done
}

tidy() { # prunes dangling images on the tests' dockerd and, when it answers, their Podman
	local host sock n
	for host in "$DOCKER_HOST" "unix://${RM_PODMAN_DIR:-/var/tmp/run_models-podman}/podman.sock"; do
		sock=${host#unix://}
		[ -S "$sock" ] || continue
		n=$(curl -fsS --max-time 600 --unix-socket "$sock" -X POST \
			'http://localhost/images/prune?filters=%7B%22dangling%22%3A%5B%22true%22%5D%7D' |
			jq -r '"\(.ImagesDeleted // [] | map(select(.Deleted)) | length) images and layers, \((.SpaceReclaimed // 0) / 1048576 | floor) MiB"') ||
			n="nothing (the engine did not answer)"
		echo "tidy: $host: dangling images removed: $n"
	done
}

stage setup setup
DOCKER_HOST=$(tools/ensure-docker.sh)
export DOCKER_HOST
echo "Docker engine: $DOCKER_HOST"
stage tests tests
stage tidy tidy
[ "${RM_TEST_QUICK:-0}" = 1 ] && exit 0
stage matrix tools/build-matrix.sh
stage asan asan
stage tidy tidy
stage fuzz fuzz
stage valgrind tests/valgrind.sh build
