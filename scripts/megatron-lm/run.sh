#!/bin/bash
# Megatron-LM (ROCm fork) Llama 3.1 pretraining benchmark on rocm/megatron-lm, driven by the
# environment knobs of examples/llama/train_llama3.sh.
#
# Based on:
#   - ROCm docs, "Training a model with Megatron-LM for ROCm"
#     (rocm.docs.amd.com .../training/benchmark-docker/megatron-lm.html): single-node Llama 3.1
#     commands, e.g. `TEE_OUTPUT=1 MBS=2 BS=128 TP=1 TE_FP8=1 SEQ_LENGTH=8192 MODEL_SIZE=8
#     TOTAL_ITERS=50 bash examples/llama/train_llama3.sh`, FSDP=1 RECOMPUTE=1 for 70B, MOCK_DATA,
#     TOKENIZER_MODEL/HF_TOKEN, MASTER_ADDR/NNODES/NODE_RANK for multi-node.
#   - ROCm/Megatron-LM examples/llama/train_llama3.sh: the knobs and their defaults (MBS BS TP PP
#     CP TE_FP8 SEQ_LENGTH MODEL_SIZE TOTAL_ITERS MOCK_DATA FSDP GEMM_TUNING RECOMPUTE ...), its
#     KEY=VALUE arguments, its iteration lines and its own summary (mean of the per-iteration
#     "throughput per GPU" after the first two iterations).
#   - ROCm/MAD scripts/megatron-lm/megatron-lm_benchmark_report.sh: the per-model settings MAD
#     runs (Llama-3.1-8B: MBS=2 BS=128 TP=1 SEQ_LENGTH=8192 FSDP=0 TOTAL_ITERS=50, BF16 and
#     TE_FP8=1; Llama-3.1-70B: MBS=3 BS=24 TP=1 FSDP=1 RECOMPUTE=1 CKPT_FORMAT=torch_dist).
#
# Usage: run.sh --model_repo pyt_megatron_lm_train_llama-3.1-8b|pyt_megatron_lm_train_llama-3.1-70b
#               [KEY=VALUE ...]
# The model preset gives defaults; every knob already in the environment (models.json
# "env_vars", --additional-context docker_env_vars) wins over the preset, and KEY=VALUE
# arguments win over both. MAD_SECRETS_HFTOKEN becomes HF_TOKEN (never printed).
# Output: megatron_train.log (tee of the run), perf_<MAD_MODEL_NAME>.csv, and
#   performance: <mean TFLOP/s per GPU> TFLOPS_per_GPU
set -euo pipefail

usage() {
	cat <<'EOF'
usage: run.sh --model_repo NAME [KEY=VALUE ...]
  NAME: pyt_megatron_lm_train_llama-3.1-8b | pyt_megatron_lm_train_llama-3.1-70b
  KEY=VALUE: a train_llama3.sh knob, e.g. TE_FP8=1 TOTAL_ITERS=20 MBS=4
EOF
}

die() {
	echo "run.sh: error: $*" >&2
	exit 2
}

# The knobs train_llama3.sh reads (the ones this benchmark sets or passes through).
KNOBS="TEE_OUTPUT MBS BS TP PP CP EP TE_FP8 SEQ_LENGTH MODEL_SIZE TOTAL_ITERS MOCK_DATA FSDP
GEMM_TUNING RECOMPUTE CKPT_FORMAT NNODES NODE_RANK MASTER_ADDR MASTER_PORT TOKENIZER_MODEL
DATA_PATH DATA_CACHE_PATH SEQ_PARALLEL NUM_LAYERS"

MODEL_REPO=""
overrides=()
while [ "$#" -gt 0 ]; do
	case "$1" in
	--model_repo)
		[ "$#" -ge 2 ] || die "option --model_repo needs a value"
		MODEL_REPO="$2"
		shift 2
		;;
	--model_repo=*) MODEL_REPO="${1#*=}" && shift ;;
	-h | --help)
		usage
		exit 0
		;;
	[A-Z]*=*)
		key="${1%%=*}"
		case " $(echo "$KNOBS" | tr '\n' ' ') " in
		*" $key "*) overrides+=("$1") ;;
		*) die "unknown knob '$key' (known: $(echo "$KNOBS" | tr '\n' ' '))" ;;
		esac
		shift
		;;
	*)
		usage >&2
		die "unknown argument '$1'"
		;;
	esac
done

# Presets: defaults only; the environment and KEY=VALUE arguments override them.
preset() { # KEY VALUE
	if [ -z "${!1:-}" ]; then
		printf -v "$1" '%s' "$2"
	fi
}
case "$MODEL_REPO" in
pyt_megatron_lm_train_llama-3.1-8b | Llama-3.1-8B)
	preset MODEL_SIZE 8
	preset MBS 2
	preset BS 128
	preset TP 1
	preset TE_FP8 0
	preset SEQ_LENGTH 8192
	preset FSDP 0
	;;
pyt_megatron_lm_train_llama-3.1-70b | Llama-3.1-70B)
	preset MODEL_SIZE 70
	preset MBS 3
	preset BS 24
	preset TP 1
	preset TE_FP8 0
	preset SEQ_LENGTH 8192
	preset FSDP 1
	preset RECOMPUTE 1
	preset CKPT_FORMAT torch_dist
	;;
"") usage >&2 && die "--model_repo is required" ;;
*) die "unknown --model_repo '$MODEL_REPO'" ;;
esac
preset TOTAL_ITERS 50
preset MOCK_DATA 1
preset TEE_OUTPUT 1
for kv in "${overrides[@]+"${overrides[@]}"}"; do
	printf -v "${kv%%=*}" '%s' "${kv#*=}"
done
for key in $KNOBS; do
	if [ -n "${!key:-}" ]; then
		export "${key?}"
	fi
done

# Hugging Face token for the gated Llama 3.1 tokenizer: never traced or printed.
export_hf_token() {
	local xtrace_was_on=0
	case $- in *x*) xtrace_was_on=1 ;; esac
	{ set +x; } 2>/dev/null
	if [ -n "${MAD_SECRETS_HFTOKEN:-}" ]; then
		export HF_TOKEN="$MAD_SECRETS_HFTOKEN"
	fi
	HF_TOKEN_STATE="not provided"
	if [ -n "${HF_TOKEN:-}" ]; then HF_TOKEN_STATE="provided"; fi
	if [ "$xtrace_was_on" = 1 ]; then set -x; fi
}
export_hf_token

RUN_DIR="$PWD"
MEGATRON_LM_DIR="${MEGATRON_LM_DIR:-/workspace/Megatron-LM}"
TRAIN_SCRIPT="examples/llama/train_llama3.sh"
LOG_FILE="$RUN_DIR/megatron_train.log"
MODEL_NAME="${MAD_MODEL_NAME:-$MODEL_REPO}"
PERF_CSV="$RUN_DIR/perf_${MODEL_NAME}.csv"
WARMUP_ITERS="${PERF_WARMUP_ITERS:-2}"

[ -f "$MEGATRON_LM_DIR/$TRAIN_SCRIPT" ] ||
	die "$MEGATRON_LM_DIR/$TRAIN_SCRIPT not found (set MEGATRON_LM_DIR to the Megatron-LM checkout)"

echo "======== hyper params start ========"
printf '%-16s %s\n' "model_repo:" "$MODEL_REPO"
for key in $KNOBS; do
	[ "$key" = TOKENIZER_MODEL ] || [ -z "${!key:-}" ] || printf '%-16s %s\n' "$key:" "${!key}"
done
printf '%-16s %s\n' "HF token:" "$HF_TOKEN_STATE"
echo "========= hyper params end ========="

set +e
(cd "$MEGATRON_LM_DIR" && bash "$TRAIN_SCRIPT") 2>&1 | tee "$LOG_FILE"
status=("${PIPESTATUS[@]}")
set -e
if [ "${status[0]}" -ne 0 ]; then
	echo "run.sh: error: $TRAIN_SCRIPT exited with status ${status[0]}; see $LOG_FILE" >&2
	exit "${status[0]}"
fi

# Iteration lines: "iteration N/ M | ... elapsed time per iteration (ms): X | throughput per GPU
# (TFLOP/s/GPU): Y | ... lm loss: Z |". Some builds print "current/average" pairs (the current
# value is taken), some lines carry ANSI colours or CRs; nan/inf values are ignored. The
# performance figure is the mean over the iterations after the first WARMUP_ITERS (default 2,
# the rule train_llama3.sh's own summary uses), one value per iteration number.
summary="$(awk -v warmup="$WARMUP_ITERS" '
	function field(line, name,    i, s) {
		i = index(line, name)
		if (i == 0) return ""
		s = substr(line, i + length(name))
		sub(/^[ \t]+/, "", s)
		if (match(s, /^[-+]?[0-9]+([.][0-9]*)?([eE][-+]?[0-9]+)?/)) return substr(s, 1, RLENGTH)
		return ""
	}
	{
		gsub(/\033\[[0-9;]*[A-Za-z]/, "")
		gsub(/\r/, "")
		if (!match($0, /iteration[ \t]+[0-9]+[ \t]*\/[ \t]*[0-9]+/)) next
		it = substr($0, RSTART, RLENGTH); sub(/^iteration[ \t]+/, "", it); sub(/[ \t]*\/.*/, "", it)
		it += 0
		tf = field($0, "throughput per GPU (TFLOP/s/GPU):")
		ms = field($0, "elapsed time per iteration (ms):")
		loss = field($0, "lm loss:")
		if (loss != "") last_loss = loss
		# one line per iteration: the first with a finite throughput (other nodes may print nan)
		if (tf == "" || (it in seen)) next
		seen[it] = 1
		if (it <= warmup) next
		tf_sum += tf; tf_n++
		if (ms != "") { ms_sum += ms; ms_n++ }
	}
	/^tokens\/GPU\/s: / { v = $2; if (v ~ /^[0-9]+([.][0-9]*)?$/) tokens = v }
	END {
		printf "%s %s %s %s %d\n", (tf_n ? sprintf("%.2f", tf_sum / tf_n) : "-"),
			(ms_n ? sprintf("%.1f", ms_sum / ms_n) : "-"), (last_loss != "" ? last_loss : "-"),
			(tokens != "" ? tokens : "-"), tf_n
	}
' "$LOG_FILE")"
read -r tflops elapsed_ms lm_loss tokens_per_gpu n_iters <<<"$summary"

CSV_HEADER="model,performance,metric,source,timestamp"
if [ -s "$PERF_CSV" ] && [ "$(head -n 1 "$PERF_CSV")" != "$CSV_HEADER" ]; then
	mv -f "$PERF_CSV" "$PERF_CSV.old"
fi
[ -s "$PERF_CSV" ] || echo "$CSV_HEADER" >"$PERF_CSV"
timestamp="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
row() { # name value metric source
	[ "$2" = "-" ] || echo "$1,$2,$3,$4,$timestamp" >>"$PERF_CSV"
}
row throughput_per_gpu "$tflops" TFLOPS_per_GPU "mean after iteration $WARMUP_ITERS ($n_iters iterations)"
row elapsed_time_per_iteration "$elapsed_ms" ms "mean after iteration $WARMUP_ITERS"
row tokens_per_gpu "$tokens_per_gpu" tokens_per_sec_per_GPU "train_llama3.sh summary"
row lm_loss "$lm_loss" loss "last iteration"

if [ "$tflops" = "-" ]; then
	echo "run.sh: error: no finite 'throughput per GPU' after iteration $WARMUP_ITERS in $LOG_FILE" >&2
	exit 1
fi
echo "performance: $tflops TFLOPS_per_GPU"
