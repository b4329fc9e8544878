#!/usr/bin/env bash
# Builds everything (library, binary, tests) with each compiler at each build type, the way
# packagers do, with warnings as errors (CMakeLists.txt adds -Werror): a warning only one
# optimisation level shows (gcc's -Werror=nonnull at -O3, say) fails here, not on a user's
# machine.
#
#   tools/build-matrix.sh
#
#   RM_MATRIX_CC     compilers (default "gcc clang"; one that is not installed fails)
#   RM_MATRIX_TYPES  build types (default "Debug RelWithDebInfo Release MinSizeRel")
#   RM_MATRIX_DIR    where the builds go (default build-matrix), one folder <cc>-<type> each,
#                    kept between runs so a second run only rebuilds what changed (cmake
#                    configures a folder once; the build re-runs it when CMake files change)
#   RM_MATRIX_TEST   1: also run the unit tests of each build (ctest -L unit)
#
# Every build runs even after one fails; a table gives each one's result and seconds. Exit 0
# when all built without an error or a warning (compiler, linker or CMake), else 1.
set -euo pipefail
cd "$(dirname "$0")/.."

read -r -a compilers <<<"${RM_MATRIX_CC:-gcc clang}"
read -r -a types <<<"${RM_MATRIX_TYPES:-Debug RelWithDebInfo Release MinSizeRel}"
top=${RM_MATRIX_DIR:-build-matrix}
mkdir -p "$top"

now() { date +%s.%N; }

results=()
status=0
t0=$(now)
for cc in "${compilers[@]}"; do
	for type in "${types[@]}"; do
		dir=$top/$cc-$type
		log=$PWD/$dir.log
		start=$(now)
		result=ok
		: >"$log"
		# Keep going after an error so that the log lists every file that fails.
		keep_going=(-k)
		[ ! -f "$dir/build.ninja" ] || keep_going=(-k 0)
		if ! command -v "$cc" >/dev/null; then
			result="no $cc"
		elif [ ! -f "$dir/CMakeCache.txt" ] &&
			! CC=$cc cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE="$type" >>"$log" 2>&1; then
			result="cmake failed"
		elif ! cmake --build "$dir" -j2 -- "${keep_going[@]}" >>"$log" 2>&1; then
			result="build failed"
		elif grep -qiE 'warning:|CMake Warning' "$log"; then
			# -Werror covers the compiler; the linker's and CMake's warnings do not stop a build.
			result=warnings
		elif [ "${RM_MATRIX_TEST:-0}" = 1 ] &&
			! (cd "$dir" && ctest -L unit -j2 --output-on-failure >>"$log" 2>&1); then
			result="unit tests failed"
		fi
		secs=$(echo "$(now) - $start" | bc)
		results+=("$(printf '%-6s %-15s %-18s %7.1f' "$cc" "$type" "$result" "$secs")")
		echo "build-matrix: $cc $type: $result ($(printf '%.1f' "$secs") s)" >&2
		if [ "$result" != ok ]; then
			status=1
			grep -iE -m 15 'error|warning' "$log" >&2 || tail -n 15 "$log" >&2
			echo "  (full log: $log)" >&2
		fi
	done
done
total=$(echo "$(now) - $t0" | bc)

printf '%-6s %-15s %-18s %7s\n' cc type result seconds
printf '%s\n' "${results[@]}"
printf '%-6s %-15s %-18s %7.1f\n' total "" "" "$total"
exit $status
