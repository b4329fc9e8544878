#!/usr/bin/env bash
# The same runs on Podman's Docker-compatible API (docs/engines.md): usage:
#   podman.sh CASE RUN_MODELS SOURCE_DIR
# Against the tests' private rootful Podman service (tools/ensure-podman.sh: Debian's podman,
# its own storage). A case named SCRIPT:NAME is the case NAME of tests/integration/SCRIPT.sh
# (cases, faults) or tests/compat/cases.sh (compat), run unchanged with the engine switched
# (DOCKER_HOST at Podman's socket, RM_TEST_ENGINE=podman for the hints they check); the
# others are Podman's own: the engine found without DOCKER_HOST, doctor, NVIDIA GPUs as CDI
# devices, the build manifest through a registry, a suite with JUnit and the gate, rootless.
set -euo pipefail
case_name=$1
RM=$2
SRC=$3
DOCKER_HOST=$("$SRC/tools/ensure-podman.sh")
export DOCKER_HOST RM_TEST_ENGINE=podman
SOCK=${DOCKER_HOST#unix://}

case "$case_name" in
cases:* | faults:*)
	exec bash "$SRC/tests/integration/${case_name%%:*}.sh" "${case_name#*:}" "$RM" "$SRC"
	;;
compat:*)
	exec bash "$SRC/tests/compat/cases.sh" "${case_name#*:}" "$RM" "$SRC"
	;;
esac

WORK=$(mktemp -d)
cleanup_fns=()
cleanup() {
	local f
	for f in "${cleanup_fns[@]}"; do $f || true; done
	rm -rf "$WORK"
}
trap cleanup EXIT
cd "$WORK"
# shellcheck source=tests/integration/lib.sh
. "$SRC/tests/integration/lib.sh"

podman_cli() { # the podman CLI on the tests' service's storage
	# shellcheck disable=SC2046 # words on purpose
	$("$SRC/tools/ensure-podman.sh" --cli) "$@"
}
free_port() {
	for p in $(shuf -i 15000-15999 -n 50); do
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || {
			echo "$p"
			return
		}
	done
	fail "no free port"
}

case "$case_name" in
engine_up)
	api GET /_ping >/dev/null || fail "Podman at $DOCKER_HOST does not answer"
	[ -f "$SRC/docker/smoke/busybox" ] || fail "docker/smoke/busybox missing: run tools/setup.sh"
	;;

no_container_left)
	n=$(api GET "/containers/json?all=1&filters=$(printf '{"label":["run_models=1"]}' | jq -sRr @uri)" |
		jq '[.[] | select(.Labels["run_models.model"] | startswith("it_"))] | length')
	[ "$n" = 0 ] || fail "$n container(s) of the Podman cases left behind"
	;;

engine_found)
	# DOCKER_HOST unset, no Docker socket (neither /var/run/docker.sock nor the private
	# dockerd's): Podman's rootful socket is found by itself. In a mount namespace of the
	# case's own, /run is empty but for /run/podman/podman.sock, the tests' service.
	cp -r "$SRC/models.json" "$SRC/docker" "$SRC/scripts" .
	cat >inner.sh <<EOF
set -e
mount -t tmpfs none /run
mkdir -p /run/podman
touch /run/podman/podman.sock
mount --bind "$SOCK" /run/podman/podman.sock
unset DOCKER_HOST
export RM_DOCKER_DIR=$WORK/no-dockerd XDG_RUNTIME_DIR=$WORK/no-xdg
"$RM" doctor >doctor.txt 2>&1 || true
"$RM" --tags smoke -o perf.csv >out.txt 2>err.txt
EOF
	unshare -m --propagation private bash inner.sh || fail "run: $(cat err.txt 2>/dev/null)"
	grep -q "^OK    docker           Podman [0-9.]*, rootful (Docker API 1\.[0-9]*) at unix:///run/podman/podman.sock" doctor.txt ||
		fail "doctor: $(cat doctor.txt)"
	grep -q "run_models: run .*: 1 model(s), Podman [0-9.]* (Docker API 1\.[0-9]*) at unix:///run/podman/podman.sock" err.txt ||
		fail "banner: $(cat err.txt)"
	[ "$(csv_col perf.csv 1 status)" = SUCCESS ] || fail "smoke: $(cat perf.csv)"
	;;

doctor)
	# Doctor names Podman and its version (Podman's /version Version, never Docker's).
	"$RM" doctor >doc.txt 2>&1 || true
	want=$(api GET /version | jq -r .Version)
	grep -q "^OK    docker           Podman $want, rootful" doc.txt || fail "doctor: $(grep docker doc.txt)"
	grep -q "CDI devices" doc.txt || fail "no word of CDI: $(grep docker doc.txt)"
	"$RM" doctor --format json | jq -e '.[] | select(.check == "docker") | .detail | test("^Podman ")' >/dev/null ||
		fail "json"
	;;

same_row)
	# The smoke model's perf.csv row on Podman has the same fields as on Docker: the same
	# header, and every column but the times, ids and paths equal.
	cp -r "$SRC/models.json" "$SRC/docker" "$SRC/scripts" .
	"$RM" --tags smoke -o podman.csv 2>err.txt || fail "podman: $(cat err.txt)"
	DOCKER_HOST=$("$SRC/tools/ensure-docker.sh") "$RM" --tags smoke -o docker.csv 2>err.txt ||
		fail "docker: $(cat err.txt)"
	[ "$(head -1 podman.csv)" = "$(head -1 docker.csv)" ] || fail "headers differ"
	strip() { # the columns that differ by nature: docker_sha, build/test durations, timestamp, run_id, log_file
		python3 -c 'import csv,sys
r = list(csv.DictReader(open(sys.argv[1])))[0]
for k in ("docker_sha", "build_duration", "test_duration", "timestamp", "run_id", "log_file"): r[k] = ""
print(r)' "$1"
	}
	[ "$(strip podman.csv)" = "$(strip docker.csv)" ] ||
		fail "rows differ: $(strip podman.csv) vs $(strip docker.csv)"
	csv_col podman.csv 1 docker_sha | grep -q '^sha256:' || fail "image id"
	;;

nvidia_cdi)
	# An NVIDIA GPU request on Podman is a CDI device, in the dry run and on the engine. A
	# stand-in CDI spec (kind nvidia.com/gpu: devices 0 and all, a device node that is
	# /dev/null's and a variable each) is bound at /run/cdi in a mount namespace of the
	# case's own, where its own Podman service runs (a spec dir is read by the service).
	mkdir -p cdi dev docker/smoke scripts/nv
	mknod dev/nvidia0 c 1 3
	cat >cdi/stand-in-nvidia.yaml <<EOF
cdiVersion: "0.5.0"
kind: "nvidia.com/gpu"
devices:
- name: "0"
  containerEdits:
    env: ["STANDIN_GPU=0"]
    deviceNodes: [{path: "/dev/nvidia0", hostPath: "$WORK/dev/nvidia0"}]
- name: "all"
  containerEdits:
    env: ["STANDIN_GPU=all"]
    deviceNodes: [{path: "/dev/nvidia0", hostPath: "$WORK/dev/nvidia0"}]
EOF
	cp "$SRC/docker/smoke.Dockerfile" "$SRC/docker/.dockerignore" docker/
	cp "$SRC/docker/smoke/busybox" docker/smoke/
	{ cat docker/smoke.Dockerfile; echo 'RUN echo "root:x:0:0:root:/root:/bin/sh" > /etc/passwd'; } >docker/gpu.Dockerfile
	printf 'echo "gpu=$STANDIN_GPU vendor=$MAD_GPU_VENDOR"\nls /dev/nvidia0\necho "performance: 1 x"\n' >scripts/nv/run.sh
	entry it_nv nv "" | sed 's/^/[/; s/$/]/; s|docker/smoke|docker/gpu|' >models.json
	ctx='{"gpu_vendor": "NVIDIA", "MAD_SYSTEM_NGPUS": 2, "MAD_SYSTEM_GPU_ARCHITECTURE": "sm_90"}'
	# Without a spec (this host has none): refused in the dry run, with what to do
	if [ ! -e /etc/cdi ] && [ ! -e /var/run/cdi ]; then
		"$RM" --tags it_nv -n --engine podman -c "$ctx" >none.txt 2>&1 || true
		grep -q "would be FAILURE: NVIDIA GPUs on Podman are CDI devices and this host has no CDI spec .*nvidia-ctk cdi generate" none.txt ||
			fail "no spec: $(cat none.txt)"
	fi
	# Docker's request stays Docker's
	"$RM" --tags it_nv -n --engine docker -c "$ctx" >docker.txt 2>&1 || fail "docker dry run"
	grep -q -- "docker run --rm .* --gpus all " docker.txt || fail "docker: $(cat docker.txt)"
	[ -d /run/cdi ] || mkdir /run/cdi # a mount point only: it stays empty outside the namespace
	pdir=/var/tmp/run_models-podman-cdi-$$
	cat >inner.sh <<EOF
set -e
mount --bind "$WORK/cdi" /run/cdi
export DOCKER_HOST=\$(RM_PODMAN_DIR=$pdir "$SRC/tools/ensure-podman.sh")
trap 'RM_PODMAN_DIR=$pdir "$SRC/tools/ensure-podman.sh" --stop' EXIT
"$RM" --tags it_nv -n -c '$ctx' >dry.txt 2>&1
"$RM" --tags it_nv -n -c '{"gpu_vendor": "NVIDIA", "MAD_SYSTEM_NGPUS": 2, "docker_gpus": "0"}' >dry0.txt 2>&1
"$RM" --tags it_nv -o perf.csv -c '$ctx' >out.txt 2>err.txt || true
cp it_nv.live.log all.log 2>/dev/null || true
"$RM" --tags it_nv -o perf.csv -c '{"gpu_vendor": "NVIDIA", "MAD_SYSTEM_NGPUS": 2, "docker_gpus": "0"}' >out0.txt 2>err0.txt || true
cp it_nv.live.log one.log 2>/dev/null || true
"$RM" --tags it_nv -o perf.csv -c '{"gpu_vendor": "NVIDIA", "MAD_SYSTEM_NGPUS": 2, "docker_gpus": "1"}' >out1.txt 2>err1.txt || true
EOF
	cleanup_pdir() { rm -rf "$pdir"; }
	cleanup_fns+=(cleanup_pdir)
	unshare -m --propagation private bash inner.sh || fail "inner: $(cat err.txt 2>/dev/null)"
	grep -q "rendered for Podman" dry.txt || fail "dry run engine: $(head -3 dry.txt)"
	grep -q -- "podman run --rm .* --device nvidia.com/gpu=all " dry.txt || fail "dry run: $(cat dry.txt)"
	grep -q -- "--gpus" dry.txt && fail "Docker's request on Podman: $(cat dry.txt)"
	grep -q -- "--device nvidia.com/gpu=0 " dry0.txt || fail "dry run, GPU 0: $(cat dry0.txt)"
	[ "$(csv_col perf.csv 1 status)" = SUCCESS ] || fail "all GPUs: $(cat perf.csv) $(cat err.txt)"
	grep -q "gpu=all vendor=NVIDIA" all.log && grep -q "^/dev/nvidia0" all.log || fail "container: $(cat all.log)"
	[ "$(csv_col perf.csv 2 status)" = SUCCESS ] || fail "GPU 0: $(cat perf.csv)"
	grep -q "gpu=0 vendor=NVIDIA" one.log || fail "GPU 0's device: $(cat one.log)"
	# a device the specs lack: refused before the build, saying what to do
	[ "$(csv_col perf.csv 3 status)" = FAILURE ] || fail "GPU 1: $(cat perf.csv)"
	grep -q "CDI specs have no 'nvidia.com/gpu=1'" perf.csv || fail "reason: $(csv_col perf.csv 3 reason)"
	[ "$(csv_col perf.csv 3 build_duration)" = 0 ] || [ "$(csv_col perf.csv 3 build_duration)" = 0.000 ] ||
		fail "built before refusing: $(csv_col perf.csv 3 build_duration)"
	;;

manifest)
	# The build manifest through a registry: build --registry pushes (Podman reports the
	# digest in its status text, and has no /distribution to ask the registry first), the
	# local image goes, run --manifest pulls it back and runs it.
	. "$SRC/tests/registry.sh"
	port=$(free_port)
	registry_stop_here() { registry_stop "$WORK/registry" >/dev/null 2>&1; }
	cleanup_fns+=(registry_stop_here)
	registry_start "$WORK/registry" "$port" >/dev/null || fail "cannot start the registry"
	script man <<'S'
echo "performance: 3 samples_per_sec"
S
	entry it_pman man "" | sed 's/^/[/; s/$/]/' | mkmad
	"$RM" build --tags it_pman --registry "127.0.0.1:$port" --manifest m.json >out.txt 2>err.txt ||
		fail "build: $(cat err.txt)"
	ref=$(jq -r '.built_images | to_entries[0].value.registry_image // empty' m.json)
	[ -n "$ref" ] || ref=$(jq -r '[.. | strings | select(test("^127.0.0.1:'"$port"'/"))][0]' m.json)
	echo "$ref" | grep -q "@sha256:\|:[0-9a-f]\{16\}" || fail "manifest: $(cat m.json)"
	grep -q "PUT /v2/ci-it_pman_smoke/manifests/" "$WORK/registry/registry.log" || fail "not pushed"
	for i in $(api GET /images/json | jq -r '.[] | select(.RepoTags // [] | map(test("it_pman")) | any) | .Id'); do
		api DELETE "/images/$i?force=1" >/dev/null
	done
	"$RM" run --manifest m.json -o perf.csv >out.txt 2>err.txt || fail "run: $(cat err.txt)"
	[ "$(csv_col perf.csv 1 status)" = SUCCESS ] || fail "status: $(cat perf.csv)"
	grep -q "GET /v2/ci-it_pman_smoke/manifests/" "$WORK/registry/registry.log" || fail "not pulled"
	;;

suite_gate)
	# A suite on Podman: one run id, JUnit (validated), and the regression gate tripped by a
	# slower run (exit 6).
	command -v xmllint >/dev/null || fail "xmllint is not installed (tools/setup.sh --tests)"
	# the figure from a file beside the script: the model's args are its configuration
	script sg <<'S'
echo "performance: $(cat figure) samples_per_second"
S
	echo 100 >scripts/sg/figure
	entry it_psg sg "" | sed 's/^/[/; s/$/]/' | mkmad
	mkdir suites
	printf 'suite: pod\nentries:\n  - tags: [it_psg]\n    repeat: 2\n' >suites/s.yaml
	"$RM" run --suite suites/s.yaml -o perf.csv --junit j1.xml --fail-on-regression 5 >out.txt 2>err.txt ||
		fail "first night: $(cat err.txt)"
	xmllint --noout --schema "$SRC/tests/results/junit.xsd" j1.xml || fail "junit invalid"
	echo 70 >scripts/sg/figure
	set +e
	"$RM" run --suite suites/s.yaml -o perf.csv --junit j2.xml --fail-on-regression 5 >out.txt 2>err.txt
	rc=$?
	set -e
	[ $rc = 6 ] || fail "exit $rc, want 6 (regression): $(cat err.txt)"
	xmllint --noout --schema "$SRC/tests/results/junit.xsd" j2.xml || fail "junit invalid"
	grep -q '<failure type="regression"' j2.xml || fail "no regression in junit: $(cat j2.xml)"
	[ "$(cut -d, -f31 perf.csv | sed 1d | sort -u | wc -l)" = 2 ] || fail "one run id per night"
	;;

rootless)
	# An ordinary user with their own rootless Podman service, found without DOCKER_HOST at
	# $XDG_RUNTIME_DIR/podman/podman.sock: smoke, a failing script's row, Ctrl-C with nothing
	# left. The user is made here (useradd; subuid/subgid ranges for its user namespace).
	user=rmtest-podman
	id "$user" >/dev/null 2>&1 || useradd -m -s /bin/bash "$user" || fail "useradd"
	grep -q "^$user:" /etc/subuid || echo "$user:300000:65536" >>/etc/subuid
	grep -q "^$user:" /etc/subgid || echo "$user:300000:65536" >>/etc/subgid
	command -v newuidmap >/dev/null || fail "newuidmap missing (package uidmap)"
	uid=$(id -u "$user")
	xdg=/tmp/run_models-rootless-$uid
	mkdir -p "$xdg" && chown "$user" "$xdg" && chmod 700 "$xdg"
	udir=$(su -s /bin/bash "$user" -c 'mktemp -d')
	cp "$RM" "$udir/run_models"
	cp -r "$SRC/models.json" "$SRC/docker" "$SRC/scripts" "$udir/"
	mkdir -p "$udir/scripts/crash" "$udir/scripts/sleepy"
	printf 'echo "performance: 5 x"\nexit 3\n' >"$udir/scripts/crash/run.sh"
	printf 'echo started\nsleep 300\n' >"$udir/scripts/sleepy/run.sh"
	jq --argjson a "$(entry it_rlcrash crash "")" --argjson b "$(entry it_rlsig sleepy "")" '. + [$a, $b]' \
		"$udir/models.json" >"$udir/m" && mv "$udir/m" "$udir/models.json"
	chown -R "$user" "$udir"
	as_user() { su -s /bin/bash "$user" -c "cd $udir && export XDG_RUNTIME_DIR=$xdg && unset DOCKER_HOST && $1"; }
	stop_user_service() { # the service, the images it built, and the user namespace's pause process
		pkill -u "$user" -f "podman system service" 2>/dev/null || true
		as_user "podman image prune -a -f >/dev/null 2>&1" || true
		pkill -u "$user" 2>/dev/null || true
		for _ in $(seq 1 30); do pgrep -u "$user" >/dev/null || break; sleep 0.1; done
		pkill -KILL -u "$user" 2>/dev/null || true
		rm -rf "$udir" "$xdg"
	}
	cleanup_fns+=(stop_user_service)
	if ! as_user "podman info >info.txt 2>&1"; then
		echo "SKIP: rootless Podman cannot run here: $(tail -n 3 "$udir/info.txt")"
		exit 77
	fi
	as_user "(podman system service --time=0 >service.log 2>&1 &)"
	for _ in $(seq 1 100); do [ -S "$xdg/podman/podman.sock" ] && break; sleep 0.1; done
	[ -S "$xdg/podman/podman.sock" ] || fail "no rootless socket: $(cat "$udir/service.log")"
	as_user "./run_models --tags smoke -o perf.csv >out.txt 2>err.txt" || fail "smoke: $(cat "$udir/err.txt")"
	grep -q "Podman [0-9.]* (Docker API 1\.[0-9]*) at unix://$xdg/podman/podman.sock" "$udir/err.txt" ||
		fail "not the user's socket: $(cat "$udir/err.txt")"
	[ "$(csv_col "$udir/perf.csv" 1 status)" = SUCCESS ] || fail "smoke: $(cat "$udir/perf.csv")"
	as_user "./run_models doctor >doctor.txt 2>&1" || true
	grep -q "^OK    docker           Podman [0-9.]*, rootless" "$udir/doctor.txt" || fail "doctor: $(cat "$udir/doctor.txt")"
	as_user "./run_models --tags it_rlcrash -o perf.csv >out.txt 2>err.txt" && fail "a failing script passed"
	[ "$(csv_col "$udir/perf.csv" 2 exit_code)" = 3 ] || fail "exit_code: $(cat "$udir/perf.csv")"
	# Ctrl-C: the user's container is removed
	as_user "(./run_models --tags it_rlsig -o perf.csv >out.txt 2>err.txt & echo \$! >pid)"
	for _ in $(seq 1 100); do grep -q started "$udir/it_rlsig.live.log" 2>/dev/null && break; sleep 0.2; done
	grep -q started "$udir/it_rlsig.live.log" || fail "never started: $(cat "$udir/err.txt")"
	kill -INT "$(cat "$udir/pid")"
	for _ in $(seq 1 50); do kill -0 "$(cat "$udir/pid")" 2>/dev/null || break; sleep 0.1; done
	grep -q "interrupted by SIGINT" "$udir/perf.csv" || fail "no row: $(cat "$udir/perf.csv")"
	left=$(curl -fsS --unix-socket "$xdg/podman/podman.sock" "http://localhost/containers/json?all=1" | jq length)
	[ "$left" = 0 ] || fail "$left container(s) left"
	;;

*)
	fail "unknown case"
	;;
esac
echo "ok: $case_name"
