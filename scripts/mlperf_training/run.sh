#!/bin/bash
# MLPerf Training reproduction on AMD's submission images (rocm/amd-mlperf:*_training_5.1):
# Llama 2 70B LoRA fine-tuning (GovReport) and Llama 3.1 8B pretraining (C4).
#
# Based on:
#   - mlcommons/training_results_v5.1, AMD/benchmarks/llama2_70b_lora/implementations/*/README.md
#     and run_with_docker.sh, AMD/benchmarks/llama31_8b/implementations/*/README.md,
#     run_with_docker.sh and config_MI355X_1x8x1_8b.sh: the image keeps the code in
#     /workspace/code; a trial is `source config_<system>.sh` then `SEED=$RANDOM bash
#     ./run_and_time.sh`, repeated NEXP times (10 for a submission), each log kept as
#     result_<i>.txt; data and model are mounted at /data and /ckpt (70B LoRA) or /data and
#     /model (8B); the 8B flow runs mlperf_logging's compliance checker (ruleset 5.1.0).
#   - AMD ROCm blog "Reproducing AMD MLPerf Training v5.1 Submission Result".
#   - MLPerf Training rules: time to train = run_stop - run_start of a successful run; a score
#     takes 10 runs, drops the fastest and the slowest and averages the other 8.
# This script is what run_with_docker.sh does INSIDE the container (the runner starts the
# container itself): host-side steps (dropping the page cache, runtime_tunables.sh) are not
# possible from here and are left to the host.
#
# Usage: run.sh --benchmark llama2_70b_lora|llama31_8b [--nexp N] [--config config_X.sh]
# Environment: NEXP (default 1), MLPERF_CONFIG, MLPERF_CODE_DIR (default /workspace/code),
#   CHECK_COMPLIANCE (default 1 for llama31_8b), MAD_SECRETS_HFTOKEN -> HF_TOKEN,
#   MLPERF_SKIP_MOUNT_CHECK=1 (do not require the data mount points; for tests).
# Output: result_<i>.txt per trial, perf_<MAD_MODEL_NAME>.csv (one row per trial and the score),
#   performance: <score> minutes   (time to train; lower is better)
set -euo pipefail

usage() {
	cat <<'EOF'
usage: run.sh --benchmark llama2_70b_lora|llama31_8b [--nexp N] [--config FILE]
  --benchmark  which MLPerf Training benchmark the image holds
  --nexp       number of trials (default $NEXP or 1; 10 for an MLPerf score)
  --config     config_<system>.sh in the image's code folder (default: by GPU architecture)
EOF
}

die() {
	echo "run.sh: error: $*" >&2
	exit 2
}

BENCHMARK=""
NEXP="${NEXP:-1}"
CONFIG="${MLPERF_CONFIG:-}"
while [ "$#" -gt 0 ]; do
	case "$1" in
	--benchmark | --nexp | --config)
		[ "$#" -ge 2 ] || die "option $1 needs a value"
		case "$1" in
		--benchmark) BENCHMARK="$2" ;;
		--nexp) NEXP="$2" ;;
		--config) CONFIG="$2" ;;
		esac
		shift 2
		;;
	-h | --help)
		usage
		exit 0
		;;
	*)
		usage >&2
		die "unknown argument '$1'"
		;;
	esac
done
[[ "$NEXP" =~ ^[1-9][0-9]*$ ]] || die "--nexp must be a positive integer, not '$NEXP'"

ARCH="${MAD_SYSTEM_GPU_ARCHITECTURE:-gfx942}"
case "$BENCHMARK" in
llama2_70b_lora)
	case "$ARCH" in gfx950*) default_config=config_MI355X_1x8x1.sh ;; *) default_config=config_MI300X_1x8x1.sh ;; esac
	required_paths="/data /ckpt"
	CHECK_COMPLIANCE="${CHECK_COMPLIANCE:-0}"
	;;
llama31_8b)
	case "$ARCH" in gfx950*) default_config=config_MI355X_1x8x1_8b.sh ;; *) default_config=config_MI300X_1x8x1_8b.sh ;; esac
	required_paths="/data /model"
	CHECK_COMPLIANCE="${CHECK_COMPLIANCE:-1}"
	;;
"") usage >&2 && die "--benchmark is required" ;;
*) die "unknown benchmark '$BENCHMARK'" ;;
esac
CONFIG="${CONFIG:-$default_config}"

export_hf_token() {
	local xtrace_was_on=0
	case $- in *x*) xtrace_was_on=1 ;; esac
	{ set +x; } 2>/dev/null
	if [ -n "${MAD_SECRETS_HFTOKEN:-}" ]; then
		export HF_TOKEN="$MAD_SECRETS_HFTOKEN"
	fi
	if [ "$xtrace_was_on" = 1 ]; then set -x; fi
}
export_hf_token

RUN_DIR="$PWD"
CODE_DIR="${MLPERF_CODE_DIR:-/workspace/code}"
MODEL_NAME="${MAD_MODEL_NAME:-mlperf_${BENCHMARK}}"
PERF_CSV="$RUN_DIR/perf_${MODEL_NAME}.csv"

[ -f "$CODE_DIR/run_and_time.sh" ] || die "$CODE_DIR/run_and_time.sh not found (set MLPERF_CODE_DIR)"
if [ ! -f "$CODE_DIR/$CONFIG" ]; then
	echo "run.sh: error: $CODE_DIR/$CONFIG not found; configs in the image:" >&2
	(cd "$CODE_DIR" && ls config_*.sh) >&2 || true
	echo "run.sh: choose one with --config (or MLPERF_CONFIG)" >&2
	exit 2
fi
[ "${MLPERF_SKIP_MOUNT_CHECK:-0}" = 1 ] && required_paths=""
for p in $required_paths; do
	if [ ! -d "$p" ] || [ -z "$(ls -A "$p" 2>/dev/null)" ]; then
		echo "run.sh: error: $p is missing or empty: mount the prepared data there, e.g." \
			"--additional-context '{\"docker_mounts\": {\"$p\": \"<host folder>\"}}'" \
			"(see the benchmark README for the download and preprocessing steps)" >&2
		exit 2
	fi
done

# Each trial runs in a fresh shell that sources the system config, as docker exec --env does.
scores=()
for i in $(seq 1 "$NEXP"); do
	log="$RUN_DIR/result_${i}.txt"
	echo "Beginning trial $i of $NEXP ($BENCHMARK, $CONFIG)"
	set +e
	(
		cd "$CODE_DIR"
		set +u
		# shellcheck disable=SC1090 # the config lives in the image, chosen at run time
		source "./$CONFIG"
		SEED="$RANDOM" bash ./run_and_time.sh
	) 2>&1 | tee "$log"
	status=("${PIPESTATUS[@]}")
	set -e
	if [ "${status[0]}" -ne 0 ]; then
		echo "run.sh: warning: trial $i: run_and_time.sh exited with status ${status[0]}" >&2
	fi
	if [ "$CHECK_COMPLIANCE" = 1 ]; then
		python3 -m mlperf_logging.compliance_checker --usage training --ruleset "${MLPERF_RULESET:-5.1.0}" \
			--log_output "$RUN_DIR/compliance_${i}.out" "$log" ||
			echo "run.sh: warning: trial $i did not pass the compliance checker (see compliance_${i}.out)" >&2
	fi
	# Time to train of this trial, in minutes, when its run_stop says success.
	ttt="$(awk '
		/:::MLLOG/ {
			sub(/\r$/, "")
			t = $0; sub(/.*"time_ms":[ ]*/, "", t); sub(/[^0-9.].*/, "", t)
			if ($0 ~ /"key":[ ]*"run_start"/) start = t
			if ($0 ~ /"key":[ ]*"run_stop"/) {
				stop = t
				st = $0; if (sub(/.*"status":[ ]*"/, "", st)) { sub(/".*/, "", st); status = st }
			}
		}
		END { if (start != "" && stop != "" && status == "success") printf "%.4f\n", (stop - start) / 60000 }
	' "$log")"
	if [ -n "$ttt" ]; then
		echo "trial $i: time to train $ttt minutes"
		scores+=("$ttt")
	else
		echo "run.sh: warning: trial $i has no successful run_start/run_stop pair" >&2
	fi
done

CSV_HEADER="model,performance,metric,source,timestamp"
if [ -s "$PERF_CSV" ] && [ "$(head -n 1 "$PERF_CSV")" != "$CSV_HEADER" ]; then
	mv -f "$PERF_CSV" "$PERF_CSV.old"
fi
[ -s "$PERF_CSV" ] || echo "$CSV_HEADER" >"$PERF_CSV"
timestamp="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
n=0
for s in "${scores[@]+"${scores[@]}"}"; do
	n=$((n + 1))
	echo "trial_$n,$s,minutes,time to train (run_stop - run_start),$timestamp" >>"$PERF_CSV"
done
if [ "${#scores[@]}" -eq 0 ]; then
	echo "run.sh: error: no trial converged (no successful run_stop); no performance to report" >&2
	exit 1
fi
# MLPerf rule: with at least 3 successful trials drop the fastest and the slowest; mean of the rest.
score="$(printf '%s\n' "${scores[@]}" | sort -g | awk '
	{ v[++n] = $1 }
	END { lo = 1; hi = n; if (n >= 3) { lo = 2; hi = n - 1 }
		s = 0; for (i = lo; i <= hi; i++) s += v[i]; printf "%.4f\n", s / (hi - lo + 1) }')"
echo "time_to_train,$score,minutes,score of ${#scores[@]} successful trial(s) of $NEXP,$timestamp" >>"$PERF_CSV"
if [ "${#scores[@]}" -lt "$NEXP" ]; then
	echo "run.sh: warning: only ${#scores[@]} of $NEXP trials converged" >&2
fi
echo "performance: $score minutes"
