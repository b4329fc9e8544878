#!/usr/bin/env bash
# The README's command lines run as written. usage: readme.sh RUN_MODELS SOURCE_DIR
#
# Every indented line of README.md that starts with `run_models` or `tools/` is a command
# (a line ending in a backslash goes on on the next one). Those whose comment says (GPU) or
# (cluster) need hardware or servers this host has not; tools/smoke.sh and tools/test.sh are
# the first-hour test's and CI's. Every other one runs, in the README's order, in a copy of
# the repository's folder (models.json, docker/, scripts/, suites/, examples/) with the
# binary on PATH as `run_models`, and must exit 0. Every path a command names that is not an
# output of an earlier one must exist in the repository.
set -euo pipefail
RM=$1
SRC=$2
DOCKER_HOST=$("$SRC/tools/ensure-docker.sh")
export DOCKER_HOST
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() {
	echo "FAIL [readme]: $*" >&2
	exit 1
}

# The commands, one a line, continuations joined.
awk '
	/^    (run_models|tools\/)/ || cont {
		line = cont ? line " " $0 : $0
		if ($0 ~ /\\$/) { sub(/\\$/, "", line); cont = 1; next }
		cont = 0
		sub(/^ +/, "", line); gsub(/  +/, " ", line)
		print line
	}' "$SRC/README.md" >"$WORK/commands"
[ "$(wc -l <"$WORK/commands")" -ge 15 ] || fail "only $(wc -l <"$WORK/commands") commands found in README.md"

mkdir "$WORK/repo" "$WORK/bin"
cp -r "$SRC/models.json" "$SRC/docker" "$SRC/scripts" "$SRC/suites" "$SRC/examples" "$WORK/repo/"
ln -s "$RM" "$WORK/bin/run_models"
cd "$WORK/repo"

ran=0
skipped=0
while IFS= read -r cmd; do
	case "$cmd" in
	*"# (GPU)"* | *"(GPU)"* | *"# (cluster)"*)
		skipped=$((skipped + 1))
		continue
		;;
	tools/*)
		script=${cmd%% *}
		[ -x "$SRC/$script" ] || fail "README names '$script', which is not an executable file"
		continue
		;;
	esac
	# the files a command reads (suites/, examples/) are in the repository
	for word in $cmd; do
		case "$word" in
		suites/* | examples/*) [ -f "$SRC/$word" ] || fail "README names '$word', which does not exist: $cmd" ;;
		esac
	done
	echo "== $cmd"
	set +e
	PATH="$WORK/bin:$PATH" bash -c "$cmd" >"$WORK/out" 2>&1
	rc=$?
	set -e
	if [ $rc != 0 ]; then
		tail -n 30 "$WORK/out" >&2
		fail "exit $rc: $cmd"
	fi
	ran=$((ran + 1))
done <"$WORK/commands"
[ $ran -ge 12 ] || fail "only $ran README commands ran"
[ $skipped -le 8 ] || fail "$skipped README commands are marked (GPU) or (cluster): too many to trust"
echo "ok: readme ($ran commands ran, $skipped need a GPU or a cluster)"
