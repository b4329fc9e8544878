#!/usr/bin/env bash
# Measures the nightly outputs at scale:
#   - the HTML report at 500 models x 90 nights: file size, time to write it, and headless
#     Chromium's time from navigation start to the first frame after load (an instrumented
#     copy of the page logs performance.now()), plus the wall time of a full screenshot;
#   - the export rate for 100,000 perf.csv rows into a fresh SQLite file and a fresh private
#     PostgreSQL server (tests/results/pg.sh), first export and a re-export (all conflicts);
#   - a 20-model suite on the Docker engine (`run --suite`), with and without the CI outputs;
#   - the history gate (with `history` as the second argument, only this): `report ci` over
#     500 models x 90 nights, and `report html` and `report ci` over 1,000,000 rows (peak
#     RSS: the history is streamed into per-series state), each against awk reading the same
#     file in the same run.
#   - sweeps (with `sweeps` as the second argument, only this): expanding a suite's sweep of
#     10,000 points (`run_models suite`, which loads, checks, enumerates and prints them all as
#     JSON; and detect_sim expand: the load and the expansion alone, in process), and the gate over 500 models x 20 configurations x 90 nights (detect_sim gate:
#     900,000 rows streamed into the history, the last night's 10,000 configurations judged;
#     peak RSS against 30 and 360 nights of the same series), then `report ci` through the
#     binary on the same history as a perf.csv.
# Wall times on a shared machine depend on its load, so CPU times are printed too.
#   tools/bench-report.sh [BUILD_DIR] [history|sweeps]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
rm_bin=$build/run_models
work=$(mktemp -d)
pgdir=""
cleanup() {
	[ -n "$pgdir" ] && bash "$src/tests/results/pg.sh" stop "$pgdir" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
timed() { # LABEL CMD...: prints wall, user and sys seconds
	local label=$1
	shift
	/usr/bin/time -f "$label: %e s wall, %U s user, %S s sys, %M KiB max RSS" "$@"
}
echo "== machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

history() {
	# report ci exits 1 here (gen-perf's models fail some nights): only its figures count
	quiet() { grep -v -e '^report:' -e '^Command exited'; }
	echo "== history gate: 500 models x 90 nights"
	bash "$src/tests/results/gen-perf.sh" 500 90 >hist.csv
	echo "hist.csv: $(($(wc -l <hist.csv) - 1)) rows"
	for i in 1 2 3; do
		timed "report ci, round $i" "$rm_bin" report ci hist.csv --fail-on-regression 5 \
			--no-step-summary 2>&1 | quiet || true
		timed "awk reading it (reference), round $i" awk -F, '{n += NF} END {print n}' \
			hist.csv 2>&1 >/dev/null | quiet || true
	done
	"$build/detect_sim" speed 500 90 | sed 's/^/the detector alone: /'
	echo "== history: 1,000,000 rows (1,000 models x 1,000 nights)"
	bash "$src/tests/results/gen-perf.sh" 1000 1000 >big1m.csv
	echo "big1m.csv: $(($(wc -l <big1m.csv) - 1)) rows, $(wc -c <big1m.csv) bytes"
	timed "report html" "$rm_bin" report html big1m.csv -o big1m.html 2>&1 | quiet || true
	echo "big1m.html: $(wc -c <big1m.html) bytes"
	timed "report ci" "$rm_bin" report ci big1m.csv --fail-on-regression 5 --no-step-summary \
		2>&1 | quiet || true
	timed "report ci --html" "$rm_bin" report ci big1m.csv --html ci.html --no-step-summary \
		2>&1 | quiet || true
	timed "awk reading it (reference)" awk -F, '{n += NF} END {print n}' big1m.csv 2>&1 \
		>/dev/null | quiet || true
}
sweeps() {
	echo "== a sweep of 10,000 points (10 x 10 x 10 x 10)"
	{
		printf 'entries:\n  - name: big\n    models: [m]\n    sweep:\n'
		for d in batch_size seq_len env.NCCL_MIN_NCHANNELS n_gpus; do
			printf '      %s: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n' "$d"
		done
	} >sweep.yaml
	for i in 1 2 3 4 5; do
		t0=$(date +%s.%N)
		"$rm_bin" suite sweep.yaml >points.json
		echo "run_models suite (10,000 points loaded, enumerated, printed), round $i: $(echo "$(date +%s.%N) - $t0" | bc) s wall"
	done
	echo "points.json: $(jq '.entries[0].points | length' points.json) points, $(wc -c <points.json) bytes"
	for i in 1 2 3 4 5; do "$build/detect_sim" expand sweep.yaml; done
	{ timed "run_models suite, the last round's CPU" "$rm_bin" suite sweep.yaml >/dev/null; } 2>&1
	echo "== the gate over configurations: 500 models x 20 configurations"
	for nights in 90 30 360; do
		"$build/detect_sim" gate 500 20 "$nights"
	done
	echo "== report ci through the binary: 500 models x 20 configurations x 90 nights"
	awk 'function gauss() { return sqrt(-2 * log(1 - rand())) * cos(6.283185307179586 * rand()) }
	BEGIN {
		srand(3)
		print "model,performance,metric,status,machine_name,gpu_architecture,timestamp,run_id,config,config_key"
		for (n = 1; n <= 90; n++)
			for (m = 0; m < 500; m++)
				for (c = 0; c < 20; c++)
					printf "m%04d,%.3f,samples_per_second,SUCCESS,host,gfx942,2024-%02d-%02dT01:00:00Z,run-%03d,\"{\"\"bs\"\":\"\"%d\"\"}\",k%02d\n", \
					       m, 100 * (c + 1) * (1 + 0.01 * gauss()), 1 + int((n - 1) / 28), 1 + (n - 1) % 28, n, 8 * (c + 1), c
	}' >configs.csv
	echo "configs.csv: $(($(wc -l <configs.csv) - 1)) rows, $(wc -c <configs.csv) bytes"
	timed "report ci over it" "$rm_bin" report ci configs.csv --fail-on-regression 5 \
		--no-step-summary 2>&1 | grep -v '^Command exited' || true
	{ timed "awk reading it (reference)" awk -F, '{n += NF} END {print n}' configs.csv >/dev/null; } 2>&1
}
if [ "${2:-}" = sweeps ]; then
	sweeps
	exit 0
fi
if [ "${2:-}" = history ]; then
	history
	exit 0
fi

echo "== HTML report, 500 models x 90 nights"
bash "$src/tests/results/gen-perf.sh" 500 90 >perf.csv
echo "perf.csv: $(($(wc -l <perf.csv) - 1)) rows, $(wc -c <perf.csv) bytes"
timed "report html" "$rm_bin" report html perf.csv -o report.html 2>&1 | grep -v '^report:'
echo "report.html: $(wc -c <report.html) bytes ($(gzip -c report.html | wc -c) gzipped)"
chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome)
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
	--disable-background-networking --disable-component-update --disable-sync
	--enable-logging=stderr --v=0)
sed 's|<meta http-equiv="Content-Security-Policy"[^>]*>||;
	s|</body>|<script>addEventListener("load",()=>requestAnimationFrame(()=>setTimeout(()=>console.log("rendered "+performance.now().toFixed(0)+" ms"),0)))</script></body>|' \
	report.html >timed.html
for i in 1 2 3; do
	"$chrome" "${flags[@]}" --user-data-dir="$work/p$i" --dump-dom "file://$work/timed.html" \
		2>&1 >/dev/null | grep -o 'rendered [0-9]* ms' | sed "s/^/chromium run $i: /"
done
start=$(date +%s.%N)
"$chrome" "${flags[@]}" --user-data-dir="$work/ps" --window-size=1280,900 \
	--screenshot="$work/shot.png" "file://$work/report.html" >/dev/null 2>&1
echo "chromium screenshot, wall incl. browser start: $(echo "$(date +%s.%N) - $start" | bc) s"

history

echo "== export, 100,000 rows"
bash "$src/tests/results/gen-perf.sh" 1000 100 >big.csv
echo "big.csv: $(($(wc -l <big.csv) - 1)) rows"
timed "sqlite first export" "$rm_bin" export --db "sqlite:$work/r.db" big.csv
timed "sqlite re-export" "$rm_bin" export --db "sqlite:$work/r.db" big.csv
pgdir=$(mktemp -d /tmp/rm-pg-bench-XXXXXX)
url=$(bash "$src/tests/results/pg.sh" start "$pgdir")
timed "postgresql first export" "$rm_bin" export --db "$url" big.csv
timed "postgresql re-export" "$rm_bin" export --db "$url" big.csv

echo "== 20 small models on the Docker engine, with and without the CI outputs"
DOCKER_HOST=$("$src/tools/ensure-docker.sh")
export DOCKER_HOST
mkdir -p suite/docker/smoke suite/scripts/m
cp "$src/docker/smoke.Dockerfile" "$src/docker/.dockerignore" suite/docker/
cp "$src/docker/smoke/busybox" suite/docker/smoke/busybox
printf 'for i in 1 2 3 4 5; do echo "step $i"; sleep 0.2; done\necho "performance: $1 samples_per_second"\n' >suite/scripts/m/run.sh
{
	printf '['
	for i in $(seq 1 20); do
		[ "$i" = 1 ] || printf ','
		printf '{"name":"bench_m%02d","dockerfile":"docker/smoke","scripts":"scripts/m/run.sh","n_gpus":"-1","owner":"ci","tags":["bench"],"args":"%d"}' "$i" $((100 + i))
	done
	printf ']'
} >suite/models.json
cd suite
printf 'suite: bench\nentries:\n  - tags: [bench]\n' >bench.yaml
"$rm_bin" --tags bench -o warm.csv -q >/dev/null 2>&1 || true # build the images once
# The same 20 models, 3 rounds of: --tags (no suite), --suite (one run id, run.json with the
# doctor's findings, the selection checked first), and --suite with every CI output (JUnit,
# summary, HTML report, archive, export to SQLite and PostgreSQL); the runner times its
# end-of-run step itself ("CI outputs of run ... in X s").
for round in 1 2 3; do
	for mode in tags suite ci; do
		rm -rf out
		sel=(--suite bench.yaml)
		[ "$mode" = tags ] && sel=(--tags bench)
		extra=()
		[ "$mode" = ci ] && extra=(--junit out/junit.xml --summary-markdown out/summary.md
			--html out/report.html --archive out/run.tar.gz --export "sqlite:$work/suite.db"
			--export "$url" --no-step-summary)
		start=$(date +%s.%N)
		"$rm_bin" run "${sel[@]}" -o out/perf.csv --log-dir out/logs --no-progress \
			"${extra[@]}" >/dev/null 2>err.txt
		wall=$(echo "$(date +%s.%N) - $start" | bc)
		step=$(grep -o 'CI outputs of run [^ ]* in [0-9.]* s' err.txt | awk '{print $(NF-1)}' || true)
		echo "round $round, $mode: $wall s wall${step:+, of which the CI outputs step $step s}"
	done
done
