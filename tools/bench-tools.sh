#!/usr/bin/env bash
# What a profiling tool costs a run (docs/tools.md), measured in the same run as the same
# model without it: the cached smoke model end to end (build cached, run, parse, CSV row),
#   plain   no tool
#   tool    a tool of the folder's tools.json: a pre script, a command prefix, a post
#           script, and an output of SIZE_MB (default 100) MiB that its prefix writes and the
#           runner copies back beside the log
# Median (and min/max) of RUNS (default 5), interleaved. Usage: tools/bench-tools.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:-build}" && pwd)
runs=${RUNS:-5}
size=${SIZE_MB:-100}
DOCKER_HOST=${DOCKER_HOST:-$(tools/ensure-docker.sh)}
export DOCKER_HOST

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r models.json docker scripts "$work/"
cd "$work"
mkdir -p scripts/common
printf '#!/bin/bash\necho "bench tool $1"\n' >scripts/common/say.sh
printf '#!/bin/bash\n"$@"\nrc=$?\nmkdir -p bench_out\ndd if=/dev/zero of=bench_out/trace.bin bs=1048576 count=%s 2>/dev/null\nexit $rc\n' \
	"$size" >scripts/common/wrap.sh
cat >scripts/common/tools.json <<'EOF'
{"tools": {"bench_tool": {"pre_scripts": [{"path": "scripts/common/say.sh", "args": "pre"}],
  "cmd": "bash ../scripts/common/wrap.sh", "env_vars": {"BENCH_TOOL": "1"},
  "post_scripts": [{"path": "scripts/common/say.sh", "args": "post"}],
  "outputs": ["bench_out"]}}}
EOF
"$build/run_models" --tags smoke -q -o warm.csv >/dev/null 2>&1 # builds the image once

now() { date +%s.%N; }
stats() { sort -n | awk '{a[NR]=$1} END {printf "%.2f %.2f %.2f\n", a[int((NR+1)/2)], a[1], a[NR]}'; }
: >t_plain
: >t_tool
for _ in $(seq 1 "$runs"); do
	t0=$(now)
	"$build/run_models" --tags smoke -q -o plain.csv --log-dir plain >/dev/null 2>&1
	echo "$(now) - $t0" | bc -l >>t_plain
	t0=$(now)
	"$build/run_models" --tags smoke -q -o tool.csv --log-dir tool \
		--additional-context '{"tools": [{"name": "bench_tool"}]}' >/dev/null 2>&1
	echo "$(now) - $t0" | bc -l >>t_tool
done
got=$(find tool -name trace.bin -size "${size}M" | wc -l)
[ "$got" = "$runs" ] || { echo "bench-tools: $got of $runs runs brought their ${size} MiB back" >&2; exit 1; }
read -r pm pmin pmax < <(stats <t_plain)
read -r tm tmin tmax < <(stats <t_tool)
echo "end to end, median (min-max) of $runs runs, seconds:"
echo "  plain                          $pm ($pmin-$pmax)"
echo "  tool, ${size} MiB output copied back  $tm ($tmin-$tmax)"
awk -v p="$pm" -v t="$tm" 'BEGIN {printf "  ratio tool / plain             %.2f\n", t / p}'
