#!/usr/bin/env bash
# Secret masking benchmark: bench_mask (tests/unit/bench_mask.c) feeds SIZE_MB of log lines,
# each holding a secret, through the masker in 16 KiB pieces, best of 3, in process CPU
# time. Goal: >= 100 MB/s (the masker is on every log stream).
#
# Usage: tools/bench-mask.sh [BUILD_DIR] [SIZE_MB]
#   BUILD_DIR defaults to build-bench (configured Release and built here when missing).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-bench}
size_mb=${2:-200}

if [[ ! -x $build/bench_mask ]]; then
	cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build "$build" --target bench_mask -j2 >/dev/null
fi
"$build/bench_mask" "$size_mb" 3
