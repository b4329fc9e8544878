#!/usr/bin/env bash
# Parser throughput benchmark: builds a large log per parser by repeating one of its real
# golden fixtures (tests/parsers/<parser>/*.log) to about SIZE_MB, then times
# bench_parsers (read + split into lines + parse, one core, best of 3) and prints a table.
# Goal: >= 200 MB/s for every parser.
#
# Usage: tools/bench-parsers.sh [BUILD_DIR] [SIZE_MB]
#   BUILD_DIR defaults to build-bench (configured Release and built here when missing).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-bench}
size_mb=${2:-128}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [[ ! -x $build/bench_parsers ]]; then
	cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build "$build" --target bench_parsers -j"$(nproc)" >/dev/null
fi

# One representative fixture per parser (the largest real excerpt of each format).
declare -A fixture=(
	[llm_foundry]=llm_foundry/composer_tab_indent_moe.log
	[megatron]=megatron/megatron_lm_issue756_mixtral.log
	[torchtitan]=torchtitan/torchtitan_pr1437_flex.log
	[mlperf]=mlperf/amd_mi300x_llama2_70b_lora_result_0.log
	[hf_trainer]=hf_trainer/hf_chatglm_dict_and_table.log
	[generic]=generic/madengine_tools_context_fix_dummy_prof.log
)
order=(generic llm_foundry megatron torchtitan mlperf hf_trainer auto)

make_big() { # src dst: repeat src until dst reaches size_mb
	local src=$1 dst=$2 target=$((size_mb * 1024 * 1024))
	cp "$src" "$dst.unit"
	# Double the unit until it is ~1 MB, then append it whole.
	while (($(stat -c %s "$dst.unit") < 1048576)); do
		cat "$dst.unit" "$dst.unit" >"$dst.tmp" && mv "$dst.tmp" "$dst.unit"
	done
	: >"$dst"
	while (($(stat -c %s "$dst") < target)); do cat "$dst.unit" >>"$dst"; done
	rm -f "$dst.unit"
}

printf '%-12s %-48s %10s %8s\n' parser "log (repeated fixture)" MB MB/s
for p in "${order[@]}"; do
	f=${fixture[$p]:-megatron/megatron_lm_issue756_mixtral.log}
	make_big "$root/tests/parsers/$f" "$work/big.log"
	read -r _ mbs _ bytes < <("$build/bench_parsers" "$p" "$work/big.log" 3 2>/dev/null)
	printf '%-12s %-48s %10.1f %8.1f\n' "$p" "$f" "$(echo "$bytes / 1000000" | bc -l)" "$mbs"
done
