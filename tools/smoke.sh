#!/usr/bin/env bash
# The README's first command: set up, then run the smoke model end to end and print the
# perf.csv row it wrote.
set -euo pipefail
cd "$(dirname "$0")/.."
DOCKER_HOST=$(tools/setup.sh | tail -n 1)
export DOCKER_HOST
build=${RM_BUILD_DIR:-build}
out=$(mktemp -d)
"$build/run_models" --tags smoke --live-output -o "$out/perf.csv" --log-dir "$out"
echo
echo "== $out/perf.csv"
cat "$out/perf.csv"
