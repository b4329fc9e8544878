#!/usr/bin/env bash
# Registry benchmark: generates MAD registries of N models (default 10,000 and 130,000; all
# sharing one Dockerfile, as real registries share a few dozen), then times
# `run_models list --tags all` (load, select every model, choose its Dockerfiles, print)
# against `python3 -c 'import json; json.load(...)'` on the same file, in the same run, and
# reports wall time and CPU time (user + system), best of RUNS, and peak RSS (/usr/bin/time).
# On a shared machine wall time follows the load; CPU time is what to compare then.
# Goals: 10,000 models under 50 ms; 130,000 under 2 s and 200 MB; and linear: the CPU time
# per model at the largest size at most 3 times that at the smallest (a loader quadratic in
# the models makes it 13 times from 10,000 to 130,000), else the script exits 1. That check
# was a time limit in tests/unit/test_registry.c, where a loaded machine failed it.
#
# Usage: tools/bench-registry.sh [BUILD_DIR] [N...]
#   BUILD_DIR defaults to build-bench (configured Release and built here when missing).
#   RUNS (default 3) runs per measurement.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build-bench}" 2>/dev/null && pwd || echo "${1:-$root/build-bench}")
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 130000)
runs=${RUNS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# shellcheck source=tools/lib.sh
. "$root/tools/lib.sh"
ensure_packages time python3

if [[ ! -x $build/run_models ]]; then
	cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build "$build" --target run_models -j2 >/dev/null
fi

# best-of-N wall seconds, best CPU seconds and max RSS (KiB) of a command run in $1
measure() { # DIR CMD...
	local dir=$1 best="" cpu="" rss=0 t u s r c
	shift
	for _ in $(seq "$runs"); do
		(cd "$dir" && /usr/bin/time -f '%e %U %S %M' -o "$work/t" "$@" >/dev/null 2>"$work/err") ||
			{ cat "$work/err" >&2; exit 1; }
		read -r t u s r <"$work/t"
		c=$(echo "$u + $s" | bc)
		if [ -z "$best" ] || [ "$(echo "$t < $best" | bc)" = 1 ]; then best=$t; fi
		if [ -z "$cpu" ] || [ "$(echo "$c < $cpu" | bc)" = 1 ]; then cpu=$c; fi
		[ "$r" -gt "$rss" ] && rss=$r
	done
	echo "$best $cpu $rss"
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
printf '%-9s %-7s | %-34s | %-34s\n' models "file" "run_models list --tags all" "python3 json.load"
printf '%-9s %-7s | %-34s | %-34s\n' "" "" "wall ms   cpu ms   peak RSS" "wall ms   cpu ms   peak RSS"
per_model=() # run_models' CPU microseconds per model, one per size
for n in "${sizes[@]}"; do
	d=$work/r$n
	mkdir -p "$d/docker/smoke" "$d/scripts/smoke"
	cp "$root/docker/smoke.Dockerfile" "$d/docker/"
	printf 'echo "performance: 1 x"\n' >"$d/scripts/smoke/run.sh"
	python3 - "$n" "$d/models.json" <<'PY'
import json, sys
n = int(sys.argv[1])
json.dump([{"name": "model_%d" % i, "dockerfile": "docker/smoke",
            "scripts": "scripts/smoke/run.sh", "n_gpus": "1",
            "owner": "mad.support@amd.com", "training_precision": "fp16",
            "tags": ["bench", "group_%d" % (i % 100), "pyt"], "args": "--steps %d" % i,
            "timeout": 3600, "multiple_results": "", "url": ""} for i in range(n)],
          open(sys.argv[2], "w"), indent=2)
PY
	size=$(du -h "$d/models.json" | cut -f1)
	read -r rt rc rr < <(measure "$d" "$build/run_models" list --tags all)
	read -r pt pc pr < <(measure "$d" python3 -c 'import json; json.load(open("models.json"))')
	lines=$(cd "$d" && "$build/run_models" list --tags all | grep -c "^model_")
	[ "$lines" = "$n" ] || { echo "list printed $lines lines for $n models" >&2; exit 1; }
	printf '%-9s %-7s | %7.0f  %7.0f  %7.1f MiB       | %7.0f  %7.0f  %7.1f MiB\n' "$n" "$size" \
		"$(echo "$rt * 1000" | bc)" "$(echo "$rc * 1000" | bc)" "$(echo "scale=1; $rr / 1024" | bc)" \
		"$(echo "$pt * 1000" | bc)" "$(echo "$pc * 1000" | bc)" "$(echo "scale=1; $pr / 1024" | bc)"
	per_model+=("$(echo "scale=3; $rc * 1000000 / $n" | bc)")
done
if [ ${#sizes[@]} -gt 1 ]; then
	first=${per_model[0]} last=${per_model[${#per_model[@]} - 1]}
	# CPU time has 10 ms steps: a small registry can read 0
	if [ "$(echo "$first > 0" | bc)" = 1 ]; then
		ratio=$(echo "scale=2; $last / $first" | bc)
		echo "CPU per model: ${first} us at ${sizes[0]} models, ${last} us at ${sizes[${#sizes[@]} - 1]}: ${ratio}x (goal <= 3: linear)"
		if [ "$(echo "$ratio > 3" | bc)" = 1 ]; then
			echo "the registry's cost grows faster than its size" >&2
			exit 1
		fi
	fi
fi
