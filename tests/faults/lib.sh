# shellcheck shell=bash
# Fault injection for integration tests (sourced, not run): a private second dockerd a test
# can kill, a fake engine that hangs, a disk that fills up, a file that cannot be written.
# Every helper returns non-zero with a message on stderr when it could not do its job, so a
# test never goes on believing a fault was injected when it was not. tests/faults/README.md
# shows them in use; tests/faults/check-helpers.sh tests them.
#
# Root is needed for faults_dockerd_* (dockerd itself) and faults_tmpfs_* (mount).
# Helpers report figures in FAULTS_* variables for the caller to read.
# shellcheck disable=SC2034

# ---- small things ----

faults_now() { date +%s.%N; }
# Seconds (one decimal) since a faults_now time.
faults_since() { printf '%.1f' "$(echo "$(faults_now) - $1" | bc)"; }

# Calls the Engine API on a unix socket: faults_api SOCKET METHOD PATH [curl args...]
faults_api() {
	local sock=$1 method=$2 path=$3
	shift 3
	curl -fsS --max-time 30 --unix-socket "$sock" -X "$method" "$@" "http://localhost$path"
}

# Whether an engine answers /_ping on SOCKET within 3 s.
faults_ping() { curl -fsS --max-time 3 --unix-socket "$1" http://localhost/_ping >/dev/null 2>&1; }

# Containers (running or not) labelled run_models.model=MODEL: faults_containers_of SOCKET MODEL
faults_containers_of() {
	local filter
	filter=$(printf '{"label":["run_models.model=%s"]}' "$2" | jq -sRr @uri)
	faults_api "$1" GET "/containers/json?all=1&filters=$filter" | jq length
}

# Force-removes the containers labelled run_models.model=MODEL: faults_remove_containers SOCKET MODEL
faults_remove_containers() {
	local filter id
	filter=$(printf '{"label":["run_models.model=%s"]}' "$2" | jq -sRr @uri)
	for id in $(faults_api "$1" GET "/containers/json?all=1&filters=$filter" | jq -r '.[].Id'); do
		faults_api "$1" DELETE "/containers/$id?force=1&v=1" >/dev/null || return 1
	done
}

# ---- a private dockerd that a test may stop or kill ----
#
# Everything lives in one folder DIR (keep its path short: unix socket paths are limited to
# 107 bytes and containerd's live under DIR/exec): DIR/docker.sock, DIR/data, DIR/exec,
# DIR/dockerd.pid, DIR/dockerd.log. No bridge network and no iptables rules, so it does not
# touch the host's network or another dockerd. Typical use:
#
#   dir=$(mktemp -d /var/tmp/rmf.XXXXXX)
#   faults_dockerd_start "$dir" || exit 1          # DOCKER_HOST=unix://$dir/docker.sock
#   trap 'faults_dockerd_cleanup "$dir"' EXIT
#   faults_build_smoke "$dir/docker.sock" "$SRC"   # optional: run_models builds it anyway
#   ... start run_models with DOCKER_HOST=unix://$dir/docker.sock, then:
#   faults_dockerd_kill "$dir"                     # the engine dies mid-run (kill -9)

# Starts it and waits up to 30 s for /_ping. Sets FAULTS_DOCKERD_PID and
# FAULTS_DOCKERD_START_S (seconds until it answered).
faults_dockerd_start() {
	local dir=$1 sock=$1/docker.sock t0 i
	command -v dockerd >/dev/null || { echo "faults: dockerd is not installed" >&2; return 1; }
	[ "$(id -u)" = 0 ] || { echo "faults: a private dockerd needs root" >&2; return 1; }
	[ ${#sock} -lt 80 ] || { echo "faults: '$dir' is too long a path for the sockets under it" >&2; return 1; }
	mkdir -p "$dir"
	rm -f "$sock" "$dir/dockerd.pid"
	t0=$(faults_now)
	dockerd --host "unix://$sock" --data-root "$dir/data" --exec-root "$dir/exec" \
		--pidfile "$dir/dockerd.pid" --bridge=none --iptables=false --ip-masq=false \
		>>"$dir/dockerd.log" 2>&1 </dev/null &
	FAULTS_DOCKERD_PID=$!
	# not a job of the caller's shell: no "Killed" line when a test kills it
	disown "$FAULTS_DOCKERD_PID" 2>/dev/null || true
	for i in $(seq 1 300); do
		if faults_ping "$sock"; then
			FAULTS_DOCKERD_START_S=$(faults_since "$t0")
			return 0
		fi
		kill -0 "$FAULTS_DOCKERD_PID" 2>/dev/null || break
		[ "$i" -lt 300 ] && sleep 0.1
	done
	echo "faults: the private dockerd in $dir did not answer; its log ends:" >&2
	tail -n 15 "$dir/dockerd.log" >&2
	return 1
}

# The pid of the private dockerd of DIR, or nothing.
faults_dockerd_pid() {
	local pid
	pid=$(cat "$1/dockerd.pid" 2>/dev/null) || return 0
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
	return 0
}

# Stops it the normal way (SIGTERM: it stops its containers and containerd) and waits up to
# 60 s. Sets FAULTS_DOCKERD_STOP_S.
faults_dockerd_stop() {
	local dir=$1 pid t0
	pid=$(faults_dockerd_pid "$dir")
	[ -n "$pid" ] || return 0
	t0=$(faults_now)
	kill -TERM "$pid"
	for _ in $(seq 1 600); do
		kill -0 "$pid" 2>/dev/null || { FAULTS_DOCKERD_STOP_S=$(faults_since "$t0"); return 0; }
		sleep 0.1
	done
	echo "faults: the private dockerd $pid in $dir did not stop within 60 s" >&2
	return 1
}

# The engine dies: SIGKILL to dockerd, nothing else. Its containerd follows it (dockerd
# starts it with a parent-death signal); container shims and containers go on running until
# faults_dockerd_cleanup. Returns once both are gone: a dockerd started while the old
# containerd still exits waits for that one's socket and gives up after 10 s.
faults_dockerd_kill() {
	local pid cpid
	pid=$(faults_dockerd_pid "$1")
	[ -n "$pid" ] || { echo "faults: no private dockerd runs in $1" >&2; return 1; }
	cpid=$(cat "$1/exec/containerd/containerd.pid" 2>/dev/null || true)
	kill -KILL "$pid"
	for _ in $(seq 1 100); do
		if ! kill -0 "$pid" 2>/dev/null && { [ -z "$cpid" ] || ! kill -0 "$cpid" 2>/dev/null; }; then
			return 0
		fi
		sleep 0.1
	done
	echo "faults: dockerd $pid or its containerd ${cpid:-?} still runs 10 s after SIGKILL" >&2
	return 1
}

# The pids of processes started for DIR: dockerd, containerd and shims (DIR in their command
# line) and the processes of containers (their root file system is an overlay under
# DIR/data: a container whose shim was killed lives on as a child of init).
faults_pids_of_dir() {
	local p
	for p in /proc/[0-9]*; do
		case ${p#/proc/} in "$$" | "$BASHPID") continue ;; esac
		# (Only the root mount counts: every process sees the overlay mounts under DIR.)
		if { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null | grep -qF -- "$1/" ||
			awk -v u="upperdir=$1/data/" '$5 == "/" && index($0, u) {f = 1} END {exit !f}' \
				"$p/mountinfo" 2>/dev/null; then
			echo "${p#/proc/}"
		fi
	done
	return 0
}

# Leaves nothing behind, whatever state the engine is in: a dead engine is started again on
# the same folders (it finds its containers and shims again), every container is removed,
# the engine is stopped, and only then the folder goes. Processes of DIR still alive after
# that are killed by pid and mounts under DIR are detached.
faults_dockerd_cleanup() {
	local dir=$1 id p
	[ -d "$dir" ] || return 0
	if [ -z "$(faults_dockerd_pid "$dir")" ] && [ -d "$dir/data" ]; then
		faults_dockerd_start "$dir" 2>/dev/null || true
	fi
	if faults_ping "$dir/docker.sock"; then
		for id in $(faults_api "$dir/docker.sock" GET "/containers/json?all=1" | jq -r '.[].Id'); do
			faults_api "$dir/docker.sock" DELETE "/containers/$id?force=1&v=1" >/dev/null || true
		done
	fi
	faults_dockerd_stop "$dir" || true
	# containerd and the shims may take a moment longer than dockerd to exit
	for _ in $(seq 1 50); do
		[ -n "$(faults_pids_of_dir "$dir")" ] || break
		sleep 0.1
	done
	for p in $(faults_pids_of_dir "$dir"); do
		echo "faults: killing leftover process of $dir: $(ps -o pid=,ppid=,etime=,args= -p "$p" | cut -c1-160)" >&2
		kill -KILL "$p" 2>/dev/null || true
	done
	# Deepest mounts first.
	awk -v d="$dir/" 'index($2, d) == 1 {print $2}' /proc/self/mounts | sort -r |
		while read -r m; do umount -l "$m" 2>/dev/null || true; done
	rm -rf "$dir"
}

# Builds the smoke image (FROM scratch + Debian's static busybox, docker/smoke.Dockerfile)
# in the engine at SOCKET: faults_build_smoke SOCKET SOURCE_DIR [TAG]. Needs
# SOURCE_DIR/docker/smoke/busybox (tools/setup.sh puts it there). Sets FAULTS_BUILD_S.
faults_build_smoke() {
	local sock=$1 src=$2 tag=${3:-ci-smoke_busybox_smoke} t0 out
	[ -f "$src/docker/smoke/busybox" ] || { echo "faults: $src/docker/smoke/busybox missing: run tools/setup.sh" >&2; return 1; }
	t0=$(faults_now)
	out=$(tar -C "$src/docker" -cf - smoke.Dockerfile smoke/busybox |
		curl -sS --max-time 300 --unix-socket "$sock" -X POST -H 'Content-Type: application/x-tar' \
			--data-binary @- "http://localhost/build?t=$tag&dockerfile=smoke.Dockerfile&rm=1") || return 1
	# The build fails inside a 200 stream: look for an error object.
	if ! printf '%s' "$out" | jq -se 'map(select(.error or .errorDetail)) | length == 0' >/dev/null; then
		echo "faults: building $tag failed: $out" >&2
		return 1
	fi
	FAULTS_BUILD_S=$(faults_since "$t0")
}

# ---- a hung engine ----

# Starts hung_engine (tests/faults/hung_engine.c) and waits for its ready line:
#   faults_hung_engine_start BINARY SOCKET [--ping | --proxy UPSTREAM_SOCKET]
# Sets FAULTS_HUNG_PID. SIGUSR1 freezes a --proxy, SIGUSR2 thaws it; kill it with
# faults_hung_engine_stop.
faults_hung_engine_start() {
	local bin=$1 sock=$2 out
	shift 2
	out=$(mktemp)
	"$bin" "$@" "$sock" >"$out" &
	FAULTS_HUNG_PID=$!
	for _ in $(seq 1 50); do
		if grep -q '^hung_engine: ready' "$out"; then
			rm -f "$out"
			return 0
		fi
		kill -0 "$FAULTS_HUNG_PID" 2>/dev/null || break
		sleep 0.1
	done
	rm -f "$out"
	echo "faults: hung_engine did not start on $sock" >&2
	return 1
}

faults_hung_engine_stop() {
	[ -n "${FAULTS_HUNG_PID:-}" ] || return 0
	kill -TERM "$FAULTS_HUNG_PID" 2>/dev/null || true
	wait "$FAULTS_HUNG_PID" 2>/dev/null || true
	FAULTS_HUNG_PID=
}

# ---- a full disk ----
#
# A small tmpfs (root: mount) to hold the log dir and perf.csv; faults_fill leaves it with
# KB kilobytes free (default 0), so a run fails at once or after writing a little:
#
#   faults_tmpfs_mount "$WORK/disk" 2m && faults_fill "$WORK/disk" 16
#   run_models --tags x --log-dir "$WORK/disk" -o "$WORK/disk/perf.csv"
#   faults_tmpfs_umount "$WORK/disk"
#
# Rows written before the disk filled can be checked afterwards: copy a perf.csv in first.
# Space is counted in whole pages: a file whose last page is not full still takes that many
# bytes on a full disk (a short perf.csv row can land), a new file takes none. ext4 blocks
# behave the same.

faults_tmpfs_mount() { # DIR SIZE (e.g. 2m)
	[ "$(id -u)" = 0 ] || { echo "faults: mounting a tmpfs needs root" >&2; return 1; }
	mkdir -p "$1"
	mount -t tmpfs -o "size=$2,mode=0755" faults-tmpfs "$1"
}

faults_tmpfs_umount() { umount "$1" 2>/dev/null || umount -l "$1"; }

faults_fill() { # DIR [KB_TO_LEAVE]
	local dir=$1 leave=${2:-0} avail
	avail=$(df -Pk "$dir" | awk 'NR==2 {print $4}')
	if [ "$avail" -gt "$leave" ]; then
		dd if=/dev/zero of="$dir/.faults-fill" bs=1k count=$((avail - leave)) status=none 2>/dev/null || true
	fi
	# tmpfs counts whole pages: top up byte by byte until nothing more fits when asked for 0.
	if [ "$leave" = 0 ]; then
		while dd if=/dev/zero bs=4096 count=1 status=none >>"$dir/.faults-fill" 2>/dev/null; do :; done
		if printf x 2>/dev/null >>"$dir/.faults-fill"; then
			echo "faults: $dir still takes writes after faults_fill" >&2
			return 1
		fi
	fi
	return 0
}

# ---- a failing disk without root ----
#
# The runner opens its files by path, so a symlink to /dev/full where it will write makes
# every write fail with ENOSPC (opening works; the write or fflush fails):
#
#   faults_failing_file "$WORK/perf.csv"                 # then: run_models -o "$WORK/perf.csv"
#   faults_failing_file "$WORK/logs/<model>.live.log"    # then: --log-dir "$WORK/logs"
#
# Once the runner refuses to follow symlinks in the log dir (issue 14), the second one tests
# that refusal instead. Do not pass /dev/full itself as -o: perf_<model>.csv and
# perf_summary.csv are written beside the output, in /dev.
faults_failing_file() {
	[ -w /dev/full ] || { echo "faults: /dev/full is not writable here" >&2; return 1; }
	mkdir -p "$(dirname "$1")"
	ln -sfn /dev/full "$1"
}
