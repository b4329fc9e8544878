#!/usr/bin/env bash
# Speed and memory of the runner against the raw Docker CLI on the same image and script,
# measured in the same run (issue: core runner):
#   1. a cached model end to end (build cached, run, parse, CSV row) vs `docker run --rm`;
#   2. a container printing N lines (default 200,000, ~20 MB): wall time vs
#      `docker run > /dev/null`, and the runner's peak RSS (GNU time's %M);
#   3. GPU telemetry: a model that sleeps TELEMETRY_SECONDS (default 10) on a fake host of
#      TELEMETRY_GPUS (default 8) AMD GPUs (tests/telemetry/fake-gpu-sysfs.sh), run with
#      --telemetry on and off, interleaved: the runner's CPU (user + system) and peak RSS,
#      the difference as a share of one core over the run, and the readings per second;
#      then the sampler alone (bench_telemetry, tests/unit/bench_telemetry.c) for the same
#      seconds and GPUs, AMD on that tree and NVIDIA through the stand-in nvidia-smi
#      (tests/telemetry/nvidia-smi): readings per second per GPU of each.
# Median of RUNS (default 5). Usage: tools/bench.sh [BUILD_DIR [OTHER_BUILD_DIR]]
#   4. Provenance (docs/nightly.md, "Comparing two runs"): the host's part alone
#      (bench_provenance, tests/unit/bench_provenance.c: an NVIDIA host through the stand-in
#      nvidia-smi, an AMD host of TELEMETRY_GPUS GPUs on a fake sysfs), which a run collects
#      in a thread while its images build, and each model's part, from the note the runner
#      writes in the run's log, over RUNS runs of the smoke model: the median milliseconds.
# ONLY=telemetry runs section 3 alone, ONLY=provenance section 4.
# With OTHER_BUILD_DIR (e.g. a build of an earlier commit) both binaries are measured in the
# same run, interleaved, and compared.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
build=$(cd "${1:-build}" && pwd)
other=
[ -n "${2:-}" ] && other=$(cd "$2" && pwd)
runs=${RUNS:-5}
lines=${LINES:-200000}
command -v docker >/dev/null || { echo "bench: needs the docker CLI (docker.io)" >&2; exit 1; }
[ -x /usr/bin/time ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null
DOCKER_HOST=${DOCKER_HOST:-$(tools/ensure-docker.sh)}
export DOCKER_HOST

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r models.json docker scripts "$work/"
cd "$work"
"$build/run_models" --tags smoke -q -o warm.csv >/dev/null 2>&1 # builds the image once
image=ci-smoke_busybox_smoke

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
now() { date +%s.%N; }
elapsed() { echo "$(now) - $1" | bc -l; }

raw_run() { # extra script args...
	docker run --rm --network host -v "$work/scripts/smoke:/myworkspace/smoke_busybox:ro" \
		-w /myworkspace/smoke_busybox "$image" bash run.sh "$@"
}

only=${ONLY:-}
telemetry_bench() {
	local secs=${TELEMETRY_SECONDS:-10} gpus=${TELEMETRY_GPUS:-8} d=$work/telemetry mode
	echo "== 3. telemetry: $gpus GPUs at 10 Hz, a $secs s run, --telemetry on vs off, median of $runs"
	mkdir -p "$d/docker/smoke" "$d/scripts/sleep" "$d/dev/dri"
	cp docker/smoke.Dockerfile docker/.dockerignore "$d/docker/"
	cp docker/smoke/busybox "$d/docker/smoke/"
	# AMD containers join the video group: the image needs one
	{ cat docker/smoke.Dockerfile; echo 'RUN echo "video:x:44:" > /etc/group && echo "root:x:0:0:root:/root:/bin/sh" > /etc/passwd'; } >"$d/docker/gpu.Dockerfile"
	printf 'sleep %s\necho "performance: 1 samples_per_sec"\n' "$secs" >"$d/scripts/sleep/run.sh"
	echo '[{"name":"bench_telemetry","dockerfile":"docker/gpu","scripts":"scripts/sleep/run.sh","n_gpus":"-1","owner":"bench","tags":["bench"],"args":"","timeout":0}]' >"$d/models.json"
	mknod "$d/dev/kfd" c 1 3
	mknod "$d/dev/fuse" c 1 3
	for i in $(seq 0 $((gpus - 1))); do mknod "$d/dev/dri/renderD$((128 + i))" c 1 3; done
	"$src/tests/telemetry/fake-gpu-sysfs.sh" "$d/sys" "$gpus" 750
	(
		cd "$d"
		ctx="{\"docker_device_root\": \"$d/dev\"}"
		RM_SYSFS_ROOT=$d/sys "$build/run_models" --tags bench_telemetry -q -o warm.csv --additional-context "$ctx" >/dev/null 2>&1
		: >t_on
		: >t_off
		for _ in $(seq 1 "$runs"); do
			for mode in on off; do
				# getrusage of the child: CPU to the microsecond (GNU time prints 10 ms steps)
				RM_SYSFS_ROOT=$d/sys python3 -c '
import resource, subprocess, sys, time
t = time.monotonic()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.6f %.6f %d %.3f" % (r.ru_utime, r.ru_stime, r.ru_maxrss, time.monotonic() - t))' \
					"$build/run_models" --tags bench_telemetry -q -o perf.csv --telemetry "$mode" \
					--additional-context "$ctx" >>"t_$mode"
			done
		done
		readings=$(tail -n +2 bench_telemetry.telemetry.csv | wc -l)
		window=$(tail -n 1 bench_telemetry.telemetry.csv | cut -d, -f1)
		awk -v runs="$runs" -v readings="$readings" -v window="$window" -v gpus="$gpus" '
			function median(a, n,   i, j, t) {
				for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
				return a[int((n + 1) / 2)]
			}
			FILENAME == "t_on" { con[FNR] = $1 + $2; rss_on[FNR] = $3; wall[FNR] = $4 }
			FILENAME == "t_off" { coff[FNR] = $1 + $2; rss_off[FNR] = $3 }
			END {
				c1 = median(con, runs); c0 = median(coff, runs); w = median(wall, runs)
				r1 = median(rss_on, runs); r0 = median(rss_off, runs)
				printf "runner CPU (user+sys): on %.4f s, off %.4f s; ratio on/off %.2fx\n", c1, c0, c1 / c0
				printf "overhead: %.4f s of CPU over a %.1f s run = %.3f %% of one core (goal < 1 %%)\n", c1 - c0, w, 100 * (c1 - c0) / w
				printf "peak RSS: on %d KiB, off %d KiB (+%d KiB); ratio %.2fx\n", r1, r0, r1 - r0, r1 / r0
				printf "readings: %d in %.1f s = %.1f per second per GPU (%d GPUs; goal >= 10)\n", readings, window, readings / window / gpus, gpus
			}' t_on t_off
	)
	PATH=$src/tests/telemetry:$PATH "$build/bench_telemetry" "$secs" "$gpus" "$d/sys"
}
provenance_bench() {
	local gpus=${TELEMETRY_GPUS:-8} d=$work/provenance
	echo "== 4. provenance: the host's (a thread of its own) and each model's, median of $runs"
	"$src/tests/telemetry/fake-gpu-sysfs.sh" "$d/sys" "$gpus" 750
	PATH=$src/tests/telemetry:$PATH "$build/bench_provenance" "$runs" "$gpus" "$d/sys" "$src"
	(
		mkdir -p "$d/logs"
		for _ in $(seq 1 "$runs"); do
			"$build/run_models" --tags smoke -q -o "$d/prov.csv" --log-dir "$d/logs" >/dev/null 2>&1
		done
		find "$d/logs" -type f -name '*.live.log' -exec grep -h "run_models: provenance:" {} + |
			sed 's/.* \([0-9]*\) values .* in \([0-9.]*\) ms/\2 \1/' | sort -n |
			awk '{ a[NR] = $1; v = $2 } END { printf "each model: %d values in %.1f ms (median of %d runs; min %.1f, max %.1f)\n", v, a[int((NR + 1) / 2)], NR, a[1], a[NR] }'
	)
}
if [ "$only" = telemetry ]; then
	telemetry_bench
	exit 0
fi
if [ "$only" = provenance ]; then
	provenance_bench
	exit 0
fi

echo "== 1. cached model end to end, median of $runs"
: >t_raw
: >t_rm
: >t_other
for _ in $(seq 1 "$runs"); do
	t=$(now); raw_run --steps 5 >/dev/null; elapsed "$t" >>t_raw
	t=$(now); "$build/run_models" --tags smoke -q -o perf.csv >/dev/null 2>&1; elapsed "$t" >>t_rm
	if [ -n "$other" ]; then
		t=$(now); "$other/run_models" --tags smoke -q -o perf.csv >/dev/null 2>&1; elapsed "$t" >>t_other
	fi
done
raw=$(median <t_raw)
rm_=$(median <t_rm)
printf 'docker run --rm:        %.3f s\nrun_models --tags smoke: %.3f s\nratio: %.2fx (goal <= 1.25x)\n' \
	"$raw" "$rm_" "$(echo "$rm_ / $raw" | bc -l)"
if [ -n "$other" ]; then
	o=$(median <t_other)
	printf 'other build:            %.3f s, ratio %.2fx; this build / other: %.2fx\n' \
		"$o" "$(echo "$o / $raw" | bc -l)" "$(echo "$rm_ / $o" | bc -l)"
fi

echo "== 2. $lines lines of output, median of $runs"
jq --arg a "--steps 5 --lines $lines" '.[0].args = $a | .[0].timeout = 0' models.json >m && mv m models.json
: >t_raw
: >t_rm
: >t_other
: >rss
: >rss_other
for _ in $(seq 1 "$runs"); do
	t=$(now); raw_run --steps 5 --lines "$lines" >/dev/null; elapsed "$t" >>t_raw
	t=$(now)
	/usr/bin/time -f %M -o rss1 "$build/run_models" --tags smoke -q -o perf.csv >/dev/null 2>&1
	elapsed "$t" >>t_rm
	cat rss1 >>rss
	if [ -n "$other" ]; then
		t=$(now)
		/usr/bin/time -f %M -o rss1 "$other/run_models" --tags smoke -q -o perf.csv >/dev/null 2>&1
		elapsed "$t" >>t_other
		cat rss1 >>rss_other
	fi
done
raw=$(median <t_raw)
rm_=$(median <t_rm)
log_mb=$(du -m smoke_busybox.live.log | cut -f1)
printf 'docker run > /dev/null: %.3f s\nrun_models:             %.3f s (log %s MB)\nratio: %.2fx (goal <= 1.5x)\npeak RSS: %s KiB max over runs (goal < 32768)\n' \
	"$raw" "$rm_" "$log_mb" "$(echo "$rm_ / $raw" | bc -l)" "$(sort -n rss | tail -1)"
if [ -n "$other" ]; then
	o=$(median <t_other)
	printf 'other build:            %.3f s, ratio %.2fx, peak RSS %s KiB; this build / other: %.2fx\n' \
		"$o" "$(echo "$o / $raw" | bc -l)" "$(sort -n rss_other | tail -1)" "$(echo "$rm_ / $o" | bc -l)"
fi
tail -1 perf.csv | cut -d, -f1,18,19,21
telemetry_bench
provenance_bench
