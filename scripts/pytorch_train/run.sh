#!/bin/bash
# PyTorch training benchmarks on rocm/pytorch-training: Llama 3.1 8B/70B pretraining with
# torchtitan (BF16, and FP8 for 8B), Llama 3.1 full-weight and LoRA fine-tuning with torchtune,
# and FLUX.1-dev training with FluxBenchmark.
#
# Based on:
#   - ROCm docs, "Training a model with ROCm PyTorch" (rocm.docs.amd.com .../training/
#     benchmark-docker/pytorch-training.html): `pytorch_benchmark_report.sh -t $training_mode
#     -m $model_repo -p $datatype -s $sequence_length`, modes pretrain/finetune_fw/finetune_lora,
#     models Llama-3.1-8B, Llama-3.1-70B, Flux, "only Llama 3.1 8B supports FP8".
#   - ROCm/MAD scripts/pytorch_train/pytorch_benchmark_report.sh, pytorch_benchmark_setup.sh,
#     Torchtune_Tester.sh, pytorch_benchmark_report.py: the settings MAD runs (torchtitan: 50
#     steps, warm-up 10, log every step, compile, FSDP over all GPUs, full activation
#     checkpointing, batch 18 for 8B and 4 for 70B; torchtune: llama3_1 recipes, packed, compile,
#     batch 16 (8B) / 4 (70B), 20 steps, tokens/s/GPU averaged over the last half of the steps;
#     FLUX: FluxBenchmark launcher.py and its runs_summary.csv avg_fps), and the environment they
#     export (HF_HOME, ROCBLAS_USE_HIPBLASLT, HIP_FORCE_DEV_KERNARG, GPU_MAX_HW_QUEUES, ...).
#   - ROCm/MAD scripts/pytorch_train/torchtitan_scripts/llama3_8b-FP8.toml for the FP8 settings
#     (converters = ["float8"], FSDP float8 all-gather, precomputed scales, batch 4, no AC).
# Differences from the peer: the image's torchtitan config is copied, not edited in place, and a
# missing key is added to its own TOML section (the peer appended it to whatever section came
# last); the token reaches tools through HF_TOKEN only (never on a command line, never printed);
# a failing trainer is not hidden by `| tee`; a figure is printed only when one was parsed.
#
# Usage: run.sh -t pretrain|finetune_fw|finetune_lora -m Llama-3.1-8B|Llama-3.1-70B|Flux
#               [-p BF16|FP8] [-s 2048..8192] [-b BATCH]
# Output: pytorch_train.log, perf_<MAD_MODEL_NAME>.csv, and one line
#   pretrain Llama:  performance: <mean TFLOP/s per GPU after warm-up> TFLOPS_per_GPU
#   finetune:        performance: <mean tokens/s per GPU, last half> tokens_per_sec_per_GPU
#   Flux:            performance: <avg_fps> FPS_per_GPU
set -euo pipefail

usage() {
	cat <<'EOF'
usage: run.sh -t MODE -m MODEL [-p BF16|FP8] [-s SEQ_LEN] [-b BATCH]
  -t  pretrain | finetune_fw | finetune_lora
  -m  Llama-3.1-8B | Llama-3.1-70B | Flux
  -p  BF16 (default) | FP8 (pretrain Llama-3.1-8B only)
  -s  sequence length, 2048..8192 (default 8192)
  -b  per-GPU batch size (default: the benchmark's)
EOF
}

die() {
	echo "run.sh: error: $*" >&2
	exit 2
}

TRAINING_MODE=""
MODEL=""
DATATYPE="BF16"
SEQ_LEN="8192"
BATCH_SIZE=""
while getopts ":t:m:p:s:b:h" opt; do
	case "$opt" in
	t) TRAINING_MODE="$OPTARG" ;;
	m) MODEL="$OPTARG" ;;
	p) DATATYPE="$OPTARG" ;;
	s) SEQ_LEN="$OPTARG" ;;
	b) BATCH_SIZE="$OPTARG" ;;
	h)
		usage
		exit 0
		;;
	:) usage >&2 && die "option -$OPTARG needs a value" ;;
	*) usage >&2 && die "unknown option -$OPTARG" ;;
	esac
done
shift $((OPTIND - 1))
[ "$#" -eq 0 ] || die "unexpected argument '$1'"

case "$TRAINING_MODE" in
pretrain | finetune_fw | finetune_lora) ;;
"") usage >&2 && die "-t is required" ;;
*) die "unsupported training mode '$TRAINING_MODE'" ;;
esac
case "$MODEL" in
Llama-3.1-8B | Llama-3.1-70B) ;;
Flux) [ "$TRAINING_MODE" = pretrain ] || die "Flux supports only -t pretrain" ;;
"") usage >&2 && die "-m is required" ;;
*) die "unsupported model '$MODEL'" ;;
esac
case "$DATATYPE" in
BF16) ;;
FP8)
	if [ "$TRAINING_MODE" != pretrain ] || [ "$MODEL" != Llama-3.1-8B ]; then
		die "FP8 is supported for -t pretrain -m Llama-3.1-8B only"
	fi
	;;
*) die "datatype must be BF16 or FP8, not '$DATATYPE'" ;;
esac
if ! [[ "$SEQ_LEN" =~ ^[0-9]+$ ]] || [ "$SEQ_LEN" -lt 2048 ] || [ "$SEQ_LEN" -gt 8192 ]; then
	die "sequence length must be between 2048 and 8192, not '$SEQ_LEN'"
fi
[ -z "$BATCH_SIZE" ] || [[ "$BATCH_SIZE" =~ ^[1-9][0-9]*$ ]] || die "bad batch size '$BATCH_SIZE'"

# Hugging Face token for the gated Llama / FLUX repositories: never traced or printed; the
# Hugging Face libraries read it from HF_TOKEN.
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

# Environment of pytorch_benchmark_report.sh.
export HF_HOME="${HF_HOME:-/workspace/huggingface}"
export ROCBLAS_USE_HIPBLASLT=1
export DISABLE_ADDMM_CUDA_LT=0
export HIP_FORCE_DEV_KERNARG=1
export TORCH_NCCL_HIGH_PRIORITY=0
export GPU_MAX_HW_QUEUES=8
export WANDB_DISABLED=true

RUN_DIR="$PWD"
LOG_FILE="$RUN_DIR/pytorch_train.log"
MODEL_NAME="${MAD_MODEL_NAME:-pyt_train_${MODEL}_${TRAINING_MODE}_${DATATYPE}}"
PERF_CSV="$RUN_DIR/perf_${MODEL_NAME}.csv"
NGPUS="${MAD_RUNTIME_NGPUS:-${MAD_SYSTEM_NGPUS:-8}}"
[[ "$NGPUS" =~ ^[1-9][0-9]*$ ]] || NGPUS=8

echo "======== hyper params start ========"
printf '%-18s %s\n' "training mode:" "$TRAINING_MODE" "model:" "$MODEL" "datatype:" "$DATATYPE" \
	"sequence length:" "$SEQ_LEN" "batch size:" "${BATCH_SIZE:-default}" "GPUs:" "$NGPUS" \
	"HF token:" "$HF_TOKEN_STATE"
echo "========= hyper params end ========="

# Runs "$@" with its output teed to LOG_FILE; a failure of the command is not hidden by tee.
run_logged() {
	set +e
	"$@" 2>&1 | tee -a "$LOG_FILE"
	local status=("${PIPESTATUS[@]}")
	set -e
	if [ "${status[0]}" -ne 0 ]; then
		echo "run.sh: error: '$1' exited with status ${status[0]}; see $LOG_FILE" >&2
		exit "${status[0]}"
	fi
}

CSV_HEADER="model,performance,metric,source,timestamp"
csv_init() {
	if [ -s "$PERF_CSV" ] && [ "$(head -n 1 "$PERF_CSV")" != "$CSV_HEADER" ]; then
		mv -f "$PERF_CSV" "$PERF_CSV.old"
	fi
	[ -s "$PERF_CSV" ] || echo "$CSV_HEADER" >"$PERF_CSV"
	TIMESTAMP="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
}
csv_row() { # name value metric source
	[ -z "$2" ] || [ "$2" = "-" ] || echo "$1,$2,$3,$4,$TIMESTAMP" >>"$PERF_CSV"
}
report() { # value metric
	if [ -z "$1" ] || [ "$1" = "-" ]; then
		echo "run.sh: error: no $2 figure found; see $LOG_FILE" >&2
		exit 1
	fi
	echo "performance: $1 $2"
}

# set_toml FILE SECTION KEY VALUE: sets KEY where the file already has it (preferring SECTION),
# else adds it under [SECTION] (creating the section at the end when missing).
set_toml() {
	awk -v sec="$2" -v key="$3" -v val="$4" '
		{ line[NR] = $0 }
		END {
			cur = ""; hdr = 0; in_sec = 0; any = 0
			for (i = 1; i <= NR; i++) {
				l = line[i]
				if (l ~ /^[ \t]*\[[^\[\]]+\][ \t]*(#.*)?$/) {
					s = l; sub(/^[ \t]*\[/, "", s); sub(/\].*$/, "", s); cur = s
					if (cur == sec && !hdr) hdr = i
				} else if (l ~ ("^[ \t]*" key "[ \t]*=")) {
					if (cur == sec && !in_sec) in_sec = i
					if (!any) any = i
				}
			}
			target = in_sec ? in_sec : any
			for (i = 1; i <= NR; i++) {
				if (i == target) print key " = " val; else print line[i]
				if (!target && i == hdr) print key " = " val
			}
			if (!target && !hdr) { print ""; print "[" sec "]"; print key " = " val }
		}
	' "$1" >"$1.tmp"
	mv -f "$1.tmp" "$1"
}

# ---------------------------------------------------------------------------------------------
pretrain_llama() {
	local dir="${TORCHTITAN_DIR:-/workspace/torchtitan}" flavor base cfg batch ac
	case "$MODEL" in
	Llama-3.1-8B) flavor=8b ;;
	Llama-3.1-70B) flavor=70b ;;
	esac
	cd "$dir" || die "torchtitan not found at $dir (set TORCHTITAN_DIR)"
	for base in "torchtitan/models/llama3/train_configs/llama3_${flavor}.toml" \
		"train_configs/llama3_${flavor}.toml" ""; do
		[ -z "$base" ] || [ -f "$base" ] && break
	done
	[ -n "$base" ] || die "no llama3_${flavor}.toml in $dir"

	# Tokenizer (Llama 3.1 family), read by the Hugging Face hub client with HF_TOKEN.
	if [ ! -f assets/tokenizer/original/tokenizer.model ] && [ ! -f assets/tokenizer/tokenizer.json ] &&
		[ ! -d assets/hf/Llama-3.1-8B ]; then
		if [ -f scripts/download_tokenizer.py ]; then
			run_logged python3 scripts/download_tokenizer.py --repo_id meta-llama/Llama-3.1-8B
		elif [ -f scripts/download_hf_assets.py ]; then
			run_logged python3 scripts/download_hf_assets.py --repo_id meta-llama/Llama-3.1-8B --assets tokenizer
		fi
	fi

	cfg="$RUN_DIR/torchtitan_llama3_${flavor}_${DATATYPE}.toml"
	cp "$base" "$cfg"
	if [ "$DATATYPE" = FP8 ]; then
		batch="${BATCH_SIZE:-4}"
		ac='"none"'
	else
		case "$flavor" in 8b) batch="${BATCH_SIZE:-18}" ;; 70b) batch="${BATCH_SIZE:-4}" ;; esac
		ac='"full"'
	fi
	set_toml "$cfg" metrics log_freq 1
	set_toml "$cfg" metrics enable_tensorboard false
	set_toml "$cfg" profiling enable_profiling false
	set_toml "$cfg" training steps 50
	set_toml "$cfg" lr_scheduler warmup_steps 10
	set_toml "$cfg" training seq_len "$SEQ_LEN"
	set_toml "$cfg" training batch_size "$batch"
	set_toml "$cfg" training compile true
	set_toml "$cfg" parallelism data_parallel_replicate_degree 1
	set_toml "$cfg" parallelism data_parallel_shard_degree -1
	set_toml "$cfg" parallelism tensor_parallel_degree 1
	set_toml "$cfg" activation_checkpoint mode "$ac"
	if [ "$DATATYPE" = FP8 ]; then
		set_toml "$cfg" model converters '["float8"]'
		set_toml "$cfg" float8 enable_fsdp_float8_all_gather true
		set_toml "$cfg" float8 precompute_float8_dynamic_scale_for_fsdp true
		set_toml "$cfg" float8 force_recompute_fp8_weight_in_bwd true
	else
		set_toml "$cfg" model converters '[]'
	fi
	echo "torchtitan config: $cfg (from $dir/$base)"

	run_logged env CONFIG_FILE="$cfg" NGPU="$NGPUS" bash run_train.sh

	# torchtitan step lines (colours stripped): "step: N  loss: X  memory: ...GiB(...%)
	# tps: 1,234  tflops: X  mfu: X%". Mean over the steps after PERF_SKIP_STEPS (default 10,
	# the warm-up and compile steps); nan/inf ignored.
	local summary tflops tps loss n
	summary="$(awk -v skip="${PERF_SKIP_STEPS:-10}" '
		function num(line, name,    i, s) {
			i = index(line, name); if (i == 0) return ""
			s = substr(line, i + length(name)); sub(/^[ \t]+/, "", s)
			if (match(s, /^[0-9][0-9,]*([.][0-9]+)?/)) { s = substr(s, 1, RLENGTH); gsub(/,/, "", s); return s }
			return ""
		}
		{
			gsub(/\033\[[0-9;]*[A-Za-z]/, ""); gsub(/\r/, "")
			if (!match($0, /step:[ \t]*[0-9]+/)) next
			st = substr($0, RSTART, RLENGTH); sub(/step:[ \t]*/, "", st); st += 0
			l = num($0, "loss:"); if (l != "") last_loss = l
			tf = num($0, "tflops:"); tp = num($0, "tps:")
			if (st <= skip || tf == "") next
			tf_sum += tf; n++
			if (tp != "") { tp_sum += tp; tp_n++ }
		}
		END { printf "%s %s %s %d\n", (n ? sprintf("%.2f", tf_sum / n) : "-"),
			(tp_n ? sprintf("%.1f", tp_sum / tp_n) : "-"), (last_loss != "" ? last_loss : "-"), n }
	' "$LOG_FILE")"
	read -r tflops tps loss n <<<"$summary"
	csv_init
	csv_row tflops_per_gpu "$tflops" TFLOPS_per_GPU "torchtitan mean after step ${PERF_SKIP_STEPS:-10} ($n steps)"
	csv_row tokens_per_gpu "$tps" tokens_per_sec_per_GPU "torchtitan mean after step ${PERF_SKIP_STEPS:-10}"
	csv_row loss "$loss" loss "torchtitan last step"
	report "$tflops" TFLOPS_per_GPU
}

# ---------------------------------------------------------------------------------------------
finetune_llama() {
	local dir="${TORCHTUNE_DIR:-/workspace/torchtune}" size method recipe mbs model_dir config
	local ckpt_dir="${TORCHTUNE_CKPT_DIR:-/tmp/torchtune_checkpoints}" metrics_log tput
	case "$MODEL" in
	Llama-3.1-8B) size=8B mbs="${BATCH_SIZE:-16}" ;;
	Llama-3.1-70B) size=70B mbs="${BATCH_SIZE:-4}" ;;
	esac
	case "$TRAINING_MODE" in
	finetune_fw) method=full recipe=full_finetune_distributed ;;
	finetune_lora) method=lora recipe=lora_finetune_distributed ;;
	esac
	cd "$dir" || die "torchtune not found at $dir (set TORCHTUNE_DIR)"
	config="$dir/recipes/configs/llama3_1/${size}_${method}.yaml"
	[ -f "$config" ] || die "torchtune recipe config $config not found"
	model_dir="${MODEL_DIR:-$dir/models/Llama-3.1-${size}-Instruct}"
	if [ ! -f "$model_dir/original/tokenizer.model" ]; then
		local hf_cli=hf
		command -v hf >/dev/null 2>&1 || hf_cli=huggingface-cli
		run_logged "$hf_cli" download "meta-llama/Llama-3.1-${size}-Instruct" \
			--local-dir "$model_dir" --exclude 'original/*.pth'
	fi
	# The image's dataset preparation (WikiText), as pytorch_benchmark_setup.sh runs it.
	if [ -f dataset.py ]; then
		run_logged python3 dataset.py
	fi

	local logs="$RUN_DIR/torchtune_logs"
	mkdir -p "$logs"
	run_logged tune run --nproc_per_node "$NGPUS" "$recipe" --config "$config" \
		log_peak_memory_stats=True output_dir="$logs" \
		checkpointer.checkpoint_dir="$model_dir" checkpointer.output_dir="$ckpt_dir" \
		tokenizer.path="$model_dir/original/tokenizer.model" tokenizer.max_seq_len="$SEQ_LEN" \
		gradient_accumulation_steps=1 max_steps_per_epoch=20 epochs=1 dataset.packed=True \
		fsdp_cpu_offload=False batch_size="$mbs" enable_activation_checkpointing=True \
		compile=True seed=42
	rm -rf "$ckpt_dir" # the fine-tuned weights are not part of the benchmark

	# torchtune's DiskLogger file ("Writing logs to <file>"), lines "Step N | ...
	# tokens_per_second_per_gpu:X ...": mean over the last half of the steps (MAD's rule).
	metrics_log="$(sed -n 's/.*Writing logs to \([^ ]*\).*/\1/p' "$LOG_FILE" | tail -n 1)"
	if [ -z "$metrics_log" ] || [ ! -f "$metrics_log" ]; then
		metrics_log="$(find "$logs" -name 'log_*.txt' -newer "$LOG_FILE.start" 2>/dev/null | sort | tail -n 1)"
	fi
	if [ -z "$metrics_log" ] || [ ! -f "$metrics_log" ]; then
		die "torchtune metrics log not found (see $LOG_FILE)"
	fi
	tput="$(grep -o 'tokens_per_second_per_gpu:[0-9.]*' "$metrics_log" | cut -d: -f2 | awk '
		$1 ~ /^[0-9]+([.][0-9]*)?$/ { v[++n] = $1 }
		END { if (n) { s = 0; c = 0; for (i = int(n / 2) + 1; i <= n; i++) { s += v[i]; c++ }
			printf "%.1f\n", s / c } }')"
	csv_init
	csv_row tokens_per_gpu "$tput" tokens_per_sec_per_GPU "torchtune mean of the last half of the steps"
	report "$tput" tokens_per_sec_per_GPU
}

# ---------------------------------------------------------------------------------------------
pretrain_flux() {
	local dir="${FLUX_DIR:-/workspace/FluxBenchmark}" summary fps tflops
	cd "$dir" || die "FluxBenchmark not found at $dir (set FLUX_DIR)"
	if [ -f requirements.txt ]; then
		run_logged pip3 install --no-cache-dir -r requirements.txt
	fi
	# Model and dataset (black-forest-labs/FLUX.1-dev, bghira/pseudo-camera-10k); the peer
	# runs it twice because the first attempt can stop half-way.
	if ! make download_assets; then
		run_logged make download_assets
	fi
	run_logged python3 launcher.py
	summary="$(find ./outputs/runs -type f -name runs_summary.csv -newer "$LOG_FILE.start" 2>/dev/null | sort | tail -n 1)"
	[ -n "$summary" ] || die "FluxBenchmark wrote no runs_summary.csv (see $LOG_FILE)"
	read -r fps tflops < <(awk -F, '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		NF { fps = (("avg_fps" in col) ? $col["avg_fps"] : ""); tf = (("avg_tflops" in col) ? $col["avg_tflops"] : "") }
		END { printf "%s %s\n", (fps ~ /^[0-9]+([.][0-9]*)?([eE][-+]?[0-9]+)?$/ ? fps : "-"),
			(tf ~ /^[0-9]+([.][0-9]*)?([eE][-+]?[0-9]+)?$/ ? tf : "-") }' "$summary")
	csv_init
	csv_row fps_per_gpu "$fps" FPS_per_GPU "FluxBenchmark runs_summary.csv avg_fps"
	csv_row tflops_per_gpu "$tflops" TFLOPS_per_GPU "FluxBenchmark runs_summary.csv avg_tflops"
	report "$fps" FPS_per_GPU
}

: >"$LOG_FILE"
touch "$LOG_FILE.start"
case "$TRAINING_MODE:$MODEL" in
pretrain:Flux) pretrain_flux ;;
pretrain:*) pretrain_llama ;;
finetune_*) finetune_llama ;;
esac
