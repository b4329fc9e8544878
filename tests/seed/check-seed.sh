#!/bin/bash
# Checks of the seed workloads (issue "Per-workload C parsers, perf_<model>.csv, and the seed
# workloads"): what can be verified without AMD GPUs.
#
# usage: check-seed.sh CHECK SOURCE_DIR [RUN_MODELS]
#   syntax      every seed script passes `bash -n`
#   [shellcheck] every seed script passes shellcheck (default severity)
#   dockerfile  every seed Dockerfile has a CONTEXT line naming gpu_vendor AMD in its first 5
#               lines and an ARG BASE_DOCKER= default or a FROM
#   entries     tests/seed/seed-models.json: valid MAD entries (names, required fields, unique,
#               MAD-style tags, parsers known to `RUN_MODELS parse --list-parsers`), their
#               scripts and Dockerfiles exist
#   merged      the seed entries are in SOURCE_DIR/models.json as in seed-models.json
#               (skipped until the lead merges them)
#   list        `run_models list` on a staged copy of the seed registry and, once merged, from
#               SOURCE_DIR: each seed model keeps exactly its AMD Dockerfile for an MI300X
#               AMD/UBUNTU context and drops it (with a warning) for an NVIDIA one
#   mpt         scripts/pyt_mpt30b_training/run.sh against a stub `composer` that replays real
#               Composer output: TunableOp env for on/off, output.txt, CSV, performance line,
#               the secret never shown, a composer crash not hidden
#   mlperf      scripts/mlperf_training/run.sh against a stub run_and_time.sh that replays a
#               real MLPerf result log: time to train and the performance line
# Exit status: 0 pass, 1 fail, 77 skipped (ctest SKIP_RETURN_CODE).
set -euo pipefail

CHECK="${1:?usage: check-seed.sh CHECK SOURCE_DIR [RUN_MODELS]}"
SRC="$(cd "${2:?source dir}" && pwd)"
RUN_MODELS="${3:-}"
case "$RUN_MODELS" in
"" | /*) ;;
*/*) RUN_MODELS="$PWD/$RUN_MODELS" ;;
esac
SEED_JSON="$SRC/tests/seed/seed-models.json"
FIXTURES="$SRC/tests/seed/fixtures"

SEED_SCRIPT_DIRS="scripts/pyt_mpt30b_training scripts/megatron-lm scripts/pytorch_train scripts/mlperf_training"
SEED_DOCKERFILES="docker/pyt_mpt30b_training.ubuntu.amd.Dockerfile docker/megatron_train.ubuntu.amd.Dockerfile
docker/pytorch_train.ubuntu.amd.Dockerfile docker/mlperf_llama2_70b_lora.ubuntu.amd.Dockerfile
docker/mlperf_llama31_8b.ubuntu.amd.Dockerfile"
MI300X_CONTEXT='{"gpu_vendor":"AMD","guest_os":"UBUNTU","MAD_SYSTEM_GPU_ARCHITECTURE":"gfx942","MAD_SYSTEM_NGPUS":8}'
NVIDIA_CONTEXT='{"gpu_vendor":"NVIDIA","guest_os":"UBUNTU","MAD_SYSTEM_NGPUS":8}'

failures=0
fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}
ok() { echo "ok: $*"; }
skip() {
	echo "SKIP: $*"
	exit 77
}
finish() {
	if [ "$failures" -ne 0 ]; then
		echo "$CHECK: $failures failure(s)" >&2
		exit 1
	fi
	echo "$CHECK: all passed"
	exit 0
}
need() {
	command -v "$1" >/dev/null 2>&1 || skip "$1 is not installed"
}

TMP="$(mktemp -d "${TMPDIR:-/tmp}/check-seed.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

seed_scripts() {
	local d
	for d in $SEED_SCRIPT_DIRS; do
		find "$SRC/$d" -type f -name '*.sh' | sort
	done
}

# ---------------------------------------------------------------------------------------------
check_syntax() {
	local f
	for f in $(seed_scripts) "$SRC/tests/seed/check-seed.sh"; do
		if bash -n "$f"; then ok "bash -n ${f#"$SRC"/}"; else fail "bash -n ${f#"$SRC"/}"; fi
	done
}

check_shellcheck() {
	need shellcheck
	local f
	for f in $(seed_scripts) "$SRC/tests/seed/check-seed.sh"; do
		if shellcheck "$f"; then ok "shellcheck ${f#"$SRC"/}"; else fail "shellcheck ${f#"$SRC"/}"; fi
	done
}

check_dockerfile() {
	local f rel
	for rel in $SEED_DOCKERFILES; do
		f="$SRC/$rel"
		if [ ! -f "$f" ]; then
			fail "$rel is missing"
			continue
		fi
		if head -n 5 "$f" | grep -Eq "^#[[:space:]]*CONTEXT[[:space:]]*\{.*'gpu_vendor'[[:space:]]*:[[:space:]]*'AMD'"; then
			ok "$rel: CONTEXT names gpu_vendor AMD"
		else
			fail "$rel: no '# CONTEXT {...'gpu_vendor': 'AMD'...}' line in its first 5 lines"
		fi
		if grep -Eq '^[[:space:]]*ARG[[:space:]]+BASE_DOCKER=[^[:space:]]+' "$f" ||
			grep -Eq '^[[:space:]]*FROM[[:space:]]+[^[:space:]]+' "$f"; then
			ok "$rel: ARG BASE_DOCKER or FROM"
		else
			fail "$rel: neither ARG BASE_DOCKER=<image> nor FROM"
		fi
	done
}

# ---------------------------------------------------------------------------------------------
check_entries() {
	need jq
	jq -e 'type == "array" and length > 0' "$SEED_JSON" >/dev/null || {
		fail "$SEED_JSON is not a non-empty JSON array"
		return
	}
	# The parser names come from the binary's parser table, not from a list kept here.
	local problems parsers=null names
	if [ -n "$RUN_MODELS" ] && [ -x "$RUN_MODELS" ] && names="$("$RUN_MODELS" parse --list-parsers)"; then
		parsers="$(printf '%s\n' "$names" | jq -R . | jq -cs .)"
	else
		echo "note: no run_models binary; parser names are not checked"
	fi
	problems="$(jq -r --argjson parsers "$parsers" '
		def req: ["name","dockerfile","scripts","n_gpus","owner","tags","args"];
		.[] as $m | ($m.name // "?") as $n |
		(req[] | select($m[.] == null) | "\($n): missing required field \(.)"),
		(select(($m.name | type) != "string" or ($m.name | test("^[a-z]+_[a-z0-9_.\\-]+$") | not))
			| "\($n): name does not match ^[a-z]+_[a-z0-9_.\\-]+$"),
		(["dockerfile","scripts","owner","args","n_gpus"][] as $f
			| select($m[$f] != null and ($m[$f] | type) != "string") | "\($n): \($f) is not a string"),
		(select(($m.n_gpus | type) == "string" and ($m.n_gpus | test("^(-1|[1-9][0-9]*)$") | not))
			| "\($n): n_gpus \($m.n_gpus) is not \"-1\" or a count"),
		(select(($m.tags | type) != "array" or ($m.tags | length) == 0
				or ($m.tags | map(type == "string" and test("^[a-z0-9][a-z0-9_.\\-]*$")) | all | not))
			| "\($n): tags must be a non-empty array of lower-case MAD-style labels"),
		(select($parsers != null and $m.parser != null and ([$m.parser] | inside($parsers) | not))
			| "\($n): unknown parser \($m.parser)"),
		(select($m.parser == null) | "\($n): no parser (seed entries name theirs)"),
		(select($m.tunableop != null and ($m.tunableop != "on" and $m.tunableop != "off"))
			| "\($n): tunableop must be on or off"),
		(select($m.timeout != null and ($m.timeout | type) != "number") | "\($n): timeout is not a number"),
		(select($m.env_vars != null and (($m.env_vars | type) != "object"
				or ($m.env_vars | to_entries | map(.value | type == "string") | all | not)))
			| "\($n): env_vars must be an object of strings")
	' "$SEED_JSON")"
	if [ -n "$problems" ]; then
		while IFS= read -r line; do fail "$line"; done <<<"$problems"
	else
		ok "every entry has the required fields, valid names, tags, parsers"
	fi
	local dups
	dups="$(jq -r '[.[].name] | group_by(.) | map(select(length > 1) | .[0]) | .[]' "$SEED_JSON")"
	if [ -n "$dups" ]; then fail "duplicate names: $dups"; else ok "names are unique"; fi
	local name df sc n
	while IFS=$'\t' read -r name df sc; do
		n="$(find "$SRC/$(dirname "$df")" -maxdepth 1 -name "$(basename "$df").*Dockerfile" 2>/dev/null | wc -l)"
		if [ "$n" -ge 1 ]; then ok "$name: $n Dockerfile candidate(s) for $df"; else fail "$name: no $df.*Dockerfile"; fi
		if [ -f "$SRC/$sc" ] || [ -f "$SRC/$sc/run.sh" ]; then ok "$name: script $sc"; else fail "$name: script $sc missing"; fi
	done < <(jq -r '.[] | [.name, .dockerfile, .scripts] | @tsv' "$SEED_JSON")
	# The MPT entry is specified exactly by the issue.
	if jq -e '.[] | select(.name == "pyt_mpt30b_training")
			| .dockerfile == "docker/pyt_mpt30b_training" and .n_gpus == "-1" and .timeout == -1
			and .parser == "llm_foundry" and .dockercontext == "docker"
			and .args == "--model_repo mosaicml/mpt-30b --test_option throughput --tunableop off"
			and ((.tags | sort) == (["composer","mosaic","pyt","training"]))' "$SEED_JSON" >/dev/null; then
		ok "pyt_mpt30b_training entry as specified"
	else
		fail "pyt_mpt30b_training entry differs from the specification"
	fi
}

# 0 when every seed entry is in SOURCE_DIR/models.json with the same content.
seed_merged() {
	[ -f "$SRC/models.json" ] || return 1
	jq -e --slurpfile seed "$SEED_JSON" '
		(map({key: .name, value: .}) | from_entries) as $top
		| all($seed[0][]; . as $m | $top[$m.name] == $m)' "$SRC/models.json" >/dev/null 2>&1
}
seed_absent() {
	[ -f "$SRC/models.json" ] || return 0
	jq -e --slurpfile seed "$SEED_JSON" '
		[.[].name] as $top | all($seed[0][]; .name as $n | ($top | index($n)) == null)' \
		"$SRC/models.json" >/dev/null 2>&1
}

check_merged() {
	need jq
	if seed_merged; then
		ok "every entry of tests/seed/seed-models.json is in models.json unchanged"
	elif seed_absent; then
		skip "the seed entries are not merged into $SRC/models.json yet (tests/seed/seed-models.json)"
	else
		local name
		for name in $(jq -r '.[].name' "$SEED_JSON"); do
			if ! jq -e --arg n "$name" --slurpfile seed "$SEED_JSON" \
				'(map(select(.name == $n)) | .[0]) == ($seed[0][] | select(.name == $n))' \
				"$SRC/models.json" >/dev/null; then
				fail "models.json: entry $name is missing or differs from tests/seed/seed-models.json"
			fi
		done
	fi
}

# ---------------------------------------------------------------------------------------------
# list_expect DIR: runs `run_models list` in DIR for every seed model and checks the lines.
list_expect() {
	local dir="$1" where="$2" name df parser tags expected out rc line
	while IFS=$'\t' read -r name df parser tags; do
		expected="$name"$'\t'"$df.ubuntu.amd.Dockerfile"$'\t'"$parser"$'\t'"$tags"
		rc=0
		(cd "$dir" && set -o pipefail && "$RUN_MODELS" list --tags "$name" --additional-context "$MI300X_CONTEXT" --format json | jq -r '.[] | [.model, (.dockerfile // "-"), .parser, (.tags | join(","))] | @tsv') \
			>"$TMP/out" 2>"$TMP/err" || rc=$?
		out="$(cat "$TMP/out")"
		if [ "$rc" -eq 0 ] && [ "$out" = "$expected" ]; then
			ok "$where: $name -> $df.ubuntu.amd.Dockerfile for MI300X AMD/UBUNTU"
		else
			fail "$where: list --tags $name (AMD/UBUNTU gfx942) exit $rc, got [$out] want [$expected]; stderr: $(cat "$TMP/err")"
		fi
		rc=0
		(cd "$dir" && set -o pipefail && "$RUN_MODELS" list --tags "$name" --additional-context "$NVIDIA_CONTEXT" --format json | jq -r '.[] | [.model, (.dockerfile // "-"), .parser, (.tags | join(","))] | @tsv') \
			>"$TMP/out" 2>"$TMP/err" || rc=$?
		line="$(cat "$TMP/out")"
		expected="$name"$'\t-\t'"$parser"$'\t'"$tags"
		if [ "$rc" -eq 0 ] && [ "$line" = "$expected" ] && grep -q "$name" "$TMP/err"; then
			ok "$where: $name has no Dockerfile for NVIDIA (warned)"
		else
			fail "$where: list --tags $name (NVIDIA) exit $rc, got [$line] want [$expected], stderr [$(cat "$TMP/err")]"
		fi
	done < <(jq -r '.[] | [.name, .dockerfile, .parser, (.tags | join(","))] | @tsv' "$SEED_JSON")
}

check_list() {
	need jq
	if [ -z "$RUN_MODELS" ] || [ ! -x "$RUN_MODELS" ]; then
		skip "no run_models binary given (build the run_models target)"
	fi
	if ! "$RUN_MODELS" list --help >/dev/null 2>&1; then
		skip "this run_models has no working 'list' command yet (src/cmd/cmd_list.c)"
	fi
	# Staged registry: the seed entries alone, with the real docker/ and scripts/ folders.
	local stage="$TMP/stage"
	mkdir -p "$stage"
	cp "$SEED_JSON" "$stage/models.json"
	ln -s "$SRC/docker" "$stage/docker"
	ln -s "$SRC/scripts" "$stage/scripts"
	list_expect "$stage" "staged seed registry"
	# All seed models in one call: one line each, exit 0.
	local n
	n="$(cd "$stage" && "$RUN_MODELS" list --tags all --additional-context "$MI300X_CONTEXT" --format json 2>"$TMP/err" | jq length)"
	if [ "$n" -eq "$(jq length "$SEED_JSON")" ]; then ok "list --tags all: one line per seed model"; else fail "list --tags all printed $n lines"; fi
	if [ -s "$TMP/err" ]; then
		fail "the seed registry does not load cleanly: $(cat "$TMP/err")"
	else
		ok "the seed registry loads without errors or warnings"
	fi
	if seed_merged; then
		list_expect "$SRC" "source models.json"
	else
		echo "note: seed entries not merged into $SRC/models.json yet; checked the staged registry only"
	fi
}

# ---------------------------------------------------------------------------------------------
# A stub `composer` that prints a fixture (minus its "# " source header) and records the
# TunableOp environment it was started with.
make_composer_stub() {
	mkdir -p "$TMP/bin"
	cat >"$TMP/bin/composer" <<'EOF'
#!/bin/bash
{
	echo "argv: $*"
	for v in PYTORCH_TUNABLEOP_ENABLED PYTORCH_TUNABLEOP_TUNING PYTORCH_TUNABLEOP_FILENAME \
		TORCHINDUCTOR_MAX_AUTOTUNE HIP_FORCE_DEV_KERNARG; do
		echo "$v=${!v-<unset>}"
	done
	echo "HF_TOKEN_MATCHES=$([ "${HF_TOKEN:-}" = "${EXPECT_HF_TOKEN:-}" ] && echo yes || echo no)"
} >"$STUB_ENV_FILE"
awk 'started || !/^# / { started = 1; print }' "$STUB_FIXTURE"
exit "${STUB_EXIT:-0}"
EOF
	chmod +x "$TMP/bin/composer"
}

# run_mpt CASE_DIR ARGS...: runs the MPT script in CASE_DIR with the stub; output in CASE_DIR/out.
run_mpt() {
	local dir="$1"
	shift
	mkdir -p "$dir"
	(
		cd "$dir"
		export PATH="$TMP/bin:$PATH" STUB_ENV_FILE="$dir/stub.env" LOAD_MODEL_FROM_COMPOSER=on \
			LLM_FOUNDRY_DIR="$TMP/no-llm-foundry" MAD_SYSTEM_GPU_ARCHITECTURE=gfx942 \
			MAD_SECRETS_HFTOKEN="$SECRET" EXPECT_HF_TOKEN="$SECRET"
		bash -x "$SRC/scripts/pyt_mpt30b_training/run.sh" "$@"
	) >"$dir/out" 2>&1
}

# cross_check PARSER LOG VALUE: the runner's own parser (`run_models parse`) finds the figure the
# script printed in the log the script wrote. Not run without a run_models binary.
cross_check() {
	local out rc=0
	if [ -z "$RUN_MODELS" ] || [ ! -x "$RUN_MODELS" ]; then
		echo "note: no run_models binary; the $1 parser cross-check is not run"
		return
	fi
	out="$("$RUN_MODELS" parse --parser "$1" --format csv "$2" 2>&1)" || rc=$?
	if [ "$rc" -ne 0 ] && grep -qi 'unknown parser\|unknown command' <<<"$out"; then
		echo "note: this run_models has no '$1' parser yet; cross-check not run"
	elif [ "$rc" -eq 0 ] && grep -q "^performance,$3," <<<"$out"; then
		ok "run_models parse --parser $1 finds performance $3 in ${2##*/}"
	else
		fail "run_models parse --parser $1 ${2##*/}: exit $rc, $(grep '^performance,' <<<"$out" || echo "$out" | tail -n 2)"
	fi
}

expect_line() { # file line description
	if grep -qxF -- "$2" "$1"; then ok "$3"; else fail "$3: no line '$2' in ${1#"$TMP"/}"; fi
}

check_mpt() {
	make_composer_stub
	SECRET="hf_seedTEST$$secretVALUE"
	export STUB_FIXTURE="$FIXTURES/composer_mpt30b_rocm_blog.log"
	local d rc

	# --tunableop off (the models.json default), tab-indented variant of the fixture too.
	d="$TMP/off"
	rc=0
	run_mpt "$d" --model_repo mosaicml/mpt-30b --test_option throughput --tunableop off || rc=$?
	[ "$rc" -eq 0 ] || fail "tunableop off: run.sh exited $rc: $(tail -n 5 "$d/out")"
	expect_line "$d/stub.env" "PYTORCH_TUNABLEOP_ENABLED=0" "off: PYTORCH_TUNABLEOP_ENABLED=0"
	expect_line "$d/stub.env" "PYTORCH_TUNABLEOP_TUNING=0" "off: PYTORCH_TUNABLEOP_TUNING=0"
	expect_line "$d/stub.env" "TORCHINDUCTOR_MAX_AUTOTUNE=0" "off: TORCHINDUCTOR_MAX_AUTOTUNE=0"
	expect_line "$d/stub.env" "HIP_FORCE_DEV_KERNARG=1" "off: HIP_FORCE_DEV_KERNARG=1 as the guide runs composer"
	expect_line "$d/stub.env" "HF_TOKEN_MATCHES=yes" "HF_TOKEN comes from MAD_SECRETS_HFTOKEN"
	if grep -q 'variables.model_name=mosaicml/mpt-30b' "$d/stub.env" &&
		grep -q 'scripts/train/train.py .*mpt-30b-instruct.yaml' "$d/stub.env"; then
		ok "composer runs train.py with mpt-30b-instruct.yaml and --model_repo"
	else
		fail "composer argv: $(head -n 1 "$d/stub.env")"
	fi
	if cmp -s <(awk 'started || !/^# / { started = 1; print }' "$STUB_FIXTURE") "$d/output.txt"; then
		ok "output.txt holds composer's whole output"
	else
		fail "output.txt differs from composer's output"
	fi
	expect_line "$d/out" "performance: 1.4307 samples_per_sec" "performance line has the LAST throughput"
	if [ "$(grep -c '^performance:' "$d/out")" -eq 1 ]; then ok "exactly one performance line"; else fail "performance line count"; fi
	cross_check llm_foundry "$d/output.txt" 1.4307
	local csv="$d/perf_pyt_mpt30b_training.csv"
	if [ -f "$csv" ] && [ "$(head -n 1 "$csv")" = "model,performance,metric,source_key,timestamp" ]; then
		ok "CSV header"
	else
		fail "CSV header: $(head -n 1 "$csv" 2>/dev/null)"
	fi
	local got want
	got="$(tail -n +2 "$csv" | cut -d, -f1-4)"
	want="throughput,1.4307,samples_per_sec,throughput/samples_per_sec
throughput_per_device,0.1788,samples_per_sec_per_device,throughput/device/samples_per_sec
language_cross_entropy,8.4361,cross_entropy,metrics/train/LanguageCrossEntropy
train_loss,8.3177,loss,loss/train/total"
	if [ "$got" = "$want" ]; then ok "CSV rows: last value of each metric"; else fail "CSV rows: [$got]"; fi
	if tail -n +2 "$csv" | cut -d, -f5 | grep -Eqv '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$'; then
		fail "CSV timestamps"
	fi

	# Second run in the same folder appends under the one header.
	rc=0
	run_mpt "$d" --tunableop off || rc=$?
	if [ "$rc" -eq 0 ] && [ "$(grep -c '^model,' "$csv")" -eq 1 ] && [ "$(wc -l <"$csv")" -eq 9 ]; then
		ok "a second run appends rows under the same header"
	else
		fail "second run: exit $rc, $(wc -l <"$csv") lines"
	fi

	# --tunableop on, default results file.
	d="$TMP/on"
	rc=0
	run_mpt "$d" --model_repo mosaicml/mpt-30b --test_option throughput --tunableop on || rc=$?
	[ "$rc" -eq 0 ] || fail "tunableop on: run.sh exited $rc"
	expect_line "$d/stub.env" "PYTORCH_TUNABLEOP_ENABLED=1" "on: PYTORCH_TUNABLEOP_ENABLED=1"
	expect_line "$d/stub.env" "PYTORCH_TUNABLEOP_TUNING=1" "on: PYTORCH_TUNABLEOP_TUNING=1"
	expect_line "$d/stub.env" "PYTORCH_TUNABLEOP_FILENAME=$d/tunableop_results%d.csv" \
		"on: default PYTORCH_TUNABLEOP_FILENAME in the run folder"

	# --tunableop on with a results file given by the runner: kept.
	d="$TMP/on-file"
	rc=0
	PYTORCH_TUNABLEOP_FILENAME=/persist/tunableop/mpt30b_%d.csv run_mpt "$d" --tunableop on || rc=$?
	[ "$rc" -eq 0 ] || fail "tunableop on + FILENAME: run.sh exited $rc"
	expect_line "$d/stub.env" "PYTORCH_TUNABLEOP_FILENAME=/persist/tunableop/mpt30b_%d.csv" \
		"on: PYTORCH_TUNABLEOP_FILENAME from the environment is kept"

	# Misspelled names of the peer never appear.
	if grep -rEq 'TUNEABLE[A-Z_]*=' "$SRC/scripts/pyt_mpt30b_training"; then
		fail "a misspelled PYTORCH_TUNEABLEOP_* variable is set in the script"
	else
		ok "no misspelled PYTORCH_TUNEABLEOP_* variable is set"
	fi
	if grep -q 'TUNEABLE' "$TMP/on/stub.env" "$TMP/off/stub.env"; then fail "TUNEABLE in composer env"; fi

	# Bad values are usage errors, before anything runs.
	d="$TMP/bad"
	rc=0
	run_mpt "$d" --tunableop maybe || rc=$?
	if [ "$rc" -eq 2 ] && [ ! -f "$d/stub.env" ]; then ok "--tunableop maybe is rejected"; else fail "--tunableop maybe: exit $rc"; fi
	rc=0
	run_mpt "$TMP/bad2" --frobnicate || rc=$?
	if [ "$rc" -eq 2 ]; then ok "unknown argument is rejected"; else fail "unknown argument: exit $rc"; fi

	# A composer crash is not hidden by tee, and gives no performance line.
	d="$TMP/crash"
	rc=0
	STUB_EXIT=3 run_mpt "$d" --tunableop off || rc=$?
	if [ "$rc" -eq 3 ] && ! grep -q '^performance:' "$d/out"; then
		ok "composer failure (exit 3) fails the script, no performance line"
	else
		fail "composer failure: exit $rc"
	fi

	# No throughput in the log: no performance line, non-zero exit.
	d="$TMP/nothroughput"
	grep -v 'throughput/samples_per_sec' "$STUB_FIXTURE" >"$TMP/nothroughput.log"
	rc=0
	STUB_FIXTURE="$TMP/nothroughput.log" run_mpt "$d" --tunableop off || rc=$?
	if [ "$rc" -ne 0 ] && ! grep -q '^performance:' "$d/out"; then
		ok "no throughput logged: no performance line, exit $rc"
	else
		fail "no throughput logged: exit $rc, $(grep '^performance:' "$d/out")"
	fi

	# Composer's ConsoleLogger indents with a tab: same figures.
	d="$TMP/tabs"
	sed 's/^         Train /\t Train /' "$STUB_FIXTURE" >"$TMP/tabs.log"
	rc=0
	STUB_FIXTURE="$TMP/tabs.log" run_mpt "$d" --tunableop off || rc=$?
	expect_line "$d/out" "performance: 1.4307 samples_per_sec" "tab-indented Composer lines"

	# The secret's value appears in no output, log or file of any case (run under bash -x).
	if grep -rqF -- "$SECRET" "$TMP"/off "$TMP"/on "$TMP"/on-file "$TMP"/crash "$TMP"/tabs "$TMP"/bad; then
		fail "the MAD_SECRETS_HFTOKEN value leaked: $(grep -rlF -- "$SECRET" "$TMP" | head -n 3)"
	else
		ok "MAD_SECRETS_HFTOKEN's value appears in no output (bash -x included)"
	fi
}

# ---------------------------------------------------------------------------------------------
check_mlperf() {
	local code="$TMP/code" d="$TMP/mlperf" rc
	mkdir -p "$code" "$d"
	cat >"$code/run_and_time.sh" <<'EOF'
#!/bin/bash
echo "stub run_and_time.sh: DGXSYSTEM=${DGXSYSTEM:-} SEED=${SEED:-}"
awk 'started || !/^# / { started = 1; print }' "$STUB_FIXTURE"
EOF
	printf 'export DGXSYSTEM=MI300X_1x8x1\nexport NEXP_FROM_CONFIG=yes\n' >"$code/config_MI300X_1x8x1.sh"
	export STUB_FIXTURE="$FIXTURES/mlperf_llama2_70b_lora_mi300x_result_0.log"

	# Without the data mounts the script stops with a clear message.
	rc=0
	(cd "$d" && MLPERF_CODE_DIR="$code" bash "$SRC/scripts/mlperf_training/run.sh" \
		--benchmark llama2_70b_lora --nexp 1) >"$d/out0" 2>&1 || rc=$?
	if [ "$rc" -eq 2 ] && grep -q 'docker_mounts' "$d/out0"; then
		ok "missing /data or /ckpt: exit 2 naming docker_mounts"
	else
		# The machine may really have a /data and /ckpt; then this case says nothing.
		if [ -d /data ] && [ -d /ckpt ]; then ok "(host has /data and /ckpt; mount check not exercised)"; else fail "missing mounts: exit $rc"; fi
	fi

	# The trial loop, with the mount check off (this host has no prepared data).
	rc=0
	(cd "$d" && MLPERF_CODE_DIR="$code" MLPERF_SKIP_MOUNT_CHECK=1 NEXP=3 \
		bash "$SRC/scripts/mlperf_training/run.sh" --benchmark llama2_70b_lora) \
		>"$d/out" 2>&1 || rc=$?
	[ "$rc" -eq 0 ] || fail "mlperf run.sh exited $rc: $(tail -n 5 "$d/out")"
	expect_line "$d/out" "trial 1: time to train 33.9308 minutes" "time to train from run_start/run_stop of a real log"
	expect_line "$d/out" "performance: 33.9308 minutes" "score of 3 trials (drop fastest and slowest)"
	cross_check mlperf "$d/result_1.txt" 33.9308
	if [ -f "$d/result_3.txt" ] && grep -q 'DGXSYSTEM=MI300X_1x8x1' "$d/result_1.txt"; then
		ok "one result_<i>.txt per trial, config sourced"
	else
		fail "result files / config"
	fi
	if [ "$(head -n 1 "$d/perf_mlperf_llama2_70b_lora.csv")" = "model,performance,metric,source,timestamp" ] &&
		grep -q '^time_to_train,33.9308,minutes,' "$d/perf_mlperf_llama2_70b_lora.csv"; then
		ok "CSV header and score row"
	else
		fail "CSV: $(cat "$d/perf_mlperf_llama2_70b_lora.csv" 2>/dev/null)"
	fi

	# A run that never reaches a successful run_stop gives no performance line.
	grep -v '"run_stop"' "$STUB_FIXTURE" >"$TMP/unconverged.log"
	rc=0
	(cd "$d" && STUB_FIXTURE="$TMP/unconverged.log" MLPERF_CODE_DIR="$code" MLPERF_SKIP_MOUNT_CHECK=1 \
		bash "$SRC/scripts/mlperf_training/run.sh" --benchmark llama2_70b_lora --nexp 1) >"$d/out2" 2>&1 || rc=$?
	if [ "$rc" -eq 1 ] && ! grep -q '^performance:' "$d/out2"; then
		ok "no run_stop: no performance line, exit 1"
	else
		fail "no run_stop: exit $rc"
	fi
}

case "$CHECK" in
syntax) check_syntax ;;
shellcheck) check_shellcheck ;;
dockerfile) check_dockerfile ;;
entries) check_entries ;;
merged) check_merged ;;
list) check_list ;;
mpt) check_mpt ;;
mlperf) check_mlperf ;;
*)
	echo "check-seed.sh: unknown check '$CHECK'" >&2
	exit 2
	;;
esac
finish
