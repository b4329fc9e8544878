#!/usr/bin/env bash
# The long fuzz run (longer than CI's 15 s per harness): every libFuzzer harness in
# tests/fuzz/ runs EXECUTIONS inputs (default 10,000,000), then a table says how it went.
#
#   tools/fuzz-long.sh [EXECUTIONS]
#
#   RM_FUZZ_HARNESSES  which harnesses (default: every tests/fuzz/fuzz_*.c), e.g. "context yaml"
#   RM_FUZZ_JOBS       harnesses run at once (default 2: one per core here)
#   RM_FUZZ_SPLIT      processes per harness, sharing its executions and its corpus (default
#                      1); RM_FUZZ_JOBS=1 RM_FUZZ_SPLIT=2 puts both cores on one slow harness
#   RM_FUZZ_OUT        where logs, grown corpora and crashes go (default build-fuzz-long/run-<time>)
#   RM_FUZZ_MAX_LEN    longest input in bytes (default 4096, as tools/test.sh)
#   RM_FUZZ_BUILD_DIR  build folder (default build-fuzz-long)
#
# Each harness gets exactly EXECUTIONS executions (-runs, split between its processes). fuzz_parsers feeds each input to every parser of rm_parsers[] ("auto"
# included), so its count is also the count of every parser. The processes run under
# nice -n 19. The build is clang with libFuzzer, ASan and UBSan (-fno-sanitize-recover) on
# the whole library, not only on the harness: without -fsanitize=fuzzer-no-link on librm
# the fuzzer sees no coverage of the code under test and ASan checks none of its accesses.
#
# Each harness starts from a copy of tests/fuzz/corpus/<name>/ (the repository is never
# written); new inputs land in $RM_FUZZ_OUT/<name>/corpus, crashes, leaks, timeouts and OOMs
# in $RM_FUZZ_OUT/<name>/crashes/. Exit 0 when no harness crashed, 1 when one did (the
# inputs are kept and the log tail printed), 2 on a usage or build error.
set -euo pipefail

# All in one function, read whole before it runs: editing this file during a run of hours
# (bash reads scripts as it goes) cannot break the run.
main() {
	cd "$(dirname "$0")/.."

	runs=${1:-10000000}
	case "$runs" in
	'' | *[!0-9]*)
		echo "usage: tools/fuzz-long.sh [EXECUTIONS]  (a positive number, default 10000000)" >&2
		exit 2
		;;
	esac
	[ "$runs" -gt 0 ] || { echo "fuzz-long: EXECUTIONS must be positive" >&2; exit 2; }
	jobs=${RM_FUZZ_JOBS:-2}
	split=${RM_FUZZ_SPLIT:-1}
	case "$split" in '' | *[!0-9]* | 0) echo "fuzz-long: RM_FUZZ_SPLIT must be a positive number" >&2; exit 2 ;; esac
	max_len=${RM_FUZZ_MAX_LEN:-4096}
	build=${RM_FUZZ_BUILD_DIR:-build-fuzz-long}
	out=${RM_FUZZ_OUT:-$build/run-$(date +%Y%m%dT%H%M%S)}
	if [ -n "${RM_FUZZ_HARNESSES:-}" ]; then
		read -r -a harnesses <<<"$RM_FUZZ_HARNESSES"
	else
		harnesses=()
		for f in tests/fuzz/fuzz_*.c; do
			n=$(basename "$f" .c)
			harnesses+=("${n#fuzz_}")
		done
	fi
	for h in "${harnesses[@]}"; do
		[ -f "tests/fuzz/fuzz_$h.c" ] || { echo "fuzz-long: no harness tests/fuzz/fuzz_$h.c" >&2; exit 2; }
	done
	command -v clang >/dev/null || { echo "fuzz-long: clang is not installed (apt-get install clang)" >&2; exit 2; }

	echo "== building the harnesses in $build (clang, libFuzzer, ASan+UBSan on librm too)" >&2
	targets=()
	for h in "${harnesses[@]}"; do targets+=("fuzz_$h"); done
	mkdir -p "$build"
	blog=$build/fuzz-long-build.log
	if ! { CC=clang cmake -S . -B "$build" -DRM_FUZZ=ON -DRM_SANITIZE=ON \
		-DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$blog" 2>&1 &&
		cmake --build "$build" -j2 --target "${targets[@]}" >>"$blog" 2>&1; }; then
		tail -n 30 "$blog" >&2
		echo "fuzz-long: build failed; see $blog" >&2
		exit 2
	fi

	mkdir -p "$out"
	out=$(cd "$out" && pwd)
	# The context harness writes its input to a temp file twice per execution: keep that off
	# the disk when a tmpfs is at hand.
	if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
		export TMPDIR=/dev/shm
	fi
	export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

	# Runs one harness as $split processes sharing one corpus folder (each picks up the
	# others' new inputs), each with its share of the executions; the figures go to
	# $out/<name>/result as "executions seconds crashes new_entries exit_code".
	fuzz_one() {
		local h=$1 dir=$out/$1 start end rc=0 before after execs=0 crashes i n r e ps=()
		mkdir -p "$dir/corpus" "$dir/crashes"
		cp -r "tests/fuzz/corpus/$h/." "$dir/corpus/"
		before=$(find "$dir/corpus" -type f | wc -l)
		start=$(date +%s.%N)
		for i in $(seq 1 "$split"); do
			n=$((runs / split + (i <= runs % split ? 1 : 0)))
			# -close_fd_mask=2: the code under test may warn on stderr (context
			# overrides do); libFuzzer and the sanitizers keep writing their reports
			# to a copy of it.
			nice -n 19 "$build/fuzz_$h" -runs="$n" -max_len="$max_len" -timeout=10 \
				-rss_limit_mb=2048 -close_fd_mask=2 -print_final_stats=1 -reload=1 \
				-artifact_prefix="$dir/crashes/" "$dir/corpus" >"$dir/log.$i" 2>&1 &
			ps+=($!)
		done
		for i in "${!ps[@]}"; do
			r=0
			wait "${ps[$i]}" || r=$?
			[ "$r" = 0 ] || rc=$r
			e=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log.$((i + 1))" | tail -n 1)
			# After a crash libFuzzer may not print its final stats: take the last
			# "#N" status line.
			[ -n "$e" ] || e=$(grep -o '^#[0-9]*' "$dir/log.$((i + 1))" | tail -n 1 | tr -d '#')
			execs=$((execs + ${e:-0}))
		done
		end=$(date +%s.%N)
		after=$(find "$dir/corpus" -type f | wc -l)
		crashes=$(find "$dir/crashes" -type f | wc -l)
		echo "$execs $(echo "$end - $start" | bc) $crashes $((after - before)) $rc" >"$dir/result"
	}

	echo "== $runs executions per harness, $jobs at a time, $split process(es) each: ${harnesses[*]}; output in $out" >&2
	pids=()
	for h in "${harnesses[@]}"; do
		while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
			wait -n || true
		done
		echo "   fuzz_$h started $(date +%T)" >&2
		fuzz_one "$h" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || true; done

	status=0
	printf '%-10s %12s %10s %10s %8s %12s\n' harness executions seconds exec/s crashes new_entries
	for h in "${harnesses[@]}"; do
		read -r execs secs crashes new rc <"$out/$h/result"
		rate=$(echo "scale=0; $execs / ($secs + 0.001)" | bc)
		printf '%-10s %12s %10.1f %10s %8s %12s\n' "$h" "$execs" "$secs" "$rate" "$crashes" "$new"
		if [ "$crashes" != 0 ] || [ "$rc" != 0 ] || [ "$execs" -lt "$runs" ]; then
			status=1
		fi
	done
	[[ " ${harnesses[*]} " != *" parsers "* ]] ||
		echo "(parsers: every input goes to each of the parsers in rm_parsers[], so each parser ran as often)"
	for h in "${harnesses[@]}"; do
		read -r execs _ crashes _ rc <"$out/$h/result"
		if [ "$crashes" != 0 ] || [ "$rc" != 0 ] || [ "$execs" -lt "$runs" ]; then
			echo "== fuzz_$h: exit $rc after $execs executions; kept: $(find "$out/$h/crashes" -type f | tr '\n' ' ')" >&2
			tail -n 40 "$out/$h"/log.* >&2
			echo "   reproduce: $build/fuzz_$h <input>; replay build: build/replay_$h <input>" >&2
		fi
	done
	echo "new inputs: $out/<harness>/corpus; to keep the useful ones: $build/fuzz_<harness> -merge=1 tests/fuzz/corpus/<harness> $out/<harness>/corpus" >&2
	exit $status
}
main "$@"
