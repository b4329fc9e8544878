#!/usr/bin/env bash
# Parser throughput benchmark. bench_parsers walks the parser table (rm_parsers[]): for each
# parser it repeats the largest real golden fixture of tests/parsers/<parser>/ into a log of
# about SIZE_MB, and times that parser and "auto" on it (read + split into lines + parse, one
# core, best of 3). It runs twice, at SIZE_MB and SIZE_MB/4, to show that the peak RSS does
# not grow with the log. Goal: >= 300 MB/s for every parser.
#
# Usage: tools/bench-parsers.sh [BUILD_DIR] [SIZE_MB]
#   BUILD_DIR defaults to build-bench (configured Release and built here when missing).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-bench}
size_mb=${2:-128}

if [[ ! -x $build/bench_parsers ]]; then
	cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build "$build" --target bench_parsers -j2 >/dev/null
fi

"$build/bench_parsers" "$root/tests/parsers" "$size_mb" 3
small=$((size_mb / 4 > 0 ? size_mb / 4 : 1))
"$build/bench_parsers" "$root/tests/parsers" "$small" 1 | tail -n 1
