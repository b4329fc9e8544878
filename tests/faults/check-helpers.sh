#!/usr/bin/env bash
# Tests of the fault-injection helpers themselves (a helper that quietly injects nothing
# would let every fault test pass): usage: check-helpers.sh CASE HUNG_ENGINE SOURCE_DIR
# Exit 0 ok, 1 failed, 77 skipped (the case needs root).
set -euo pipefail
case_name=$1
HUNG=$2
SRC=$3
# shellcheck source=tests/faults/lib.sh
. "$SRC/tests/faults/lib.sh"
WORK=$(mktemp -d /var/tmp/rmf.XXXXXX)
cleanup() {
	faults_hung_engine_stop
	if mountpoint -q "$WORK/disk" 2>/dev/null; then faults_tmpfs_umount "$WORK/disk"; fi
	[ ! -d "$WORK/engine" ] || faults_dockerd_cleanup "$WORK/engine"
	rm -rf "$WORK"
}
trap cleanup EXIT

fail() {
	echo "FAIL [$case_name]: $*" >&2
	exit 1
}
need_root() {
	if [ "$(id -u)" != 0 ]; then
		echo "skipped [$case_name]: needs root"
		exit 77
	fi
}
# curl's exit code for a request to SOCKET PATH with a MAX s deadline (28 = timed out).
curl_rc() {
	local rc=0
	curl -sS --max-time "$3" --unix-socket "$1" "http://localhost$2" >"$WORK/body" 2>/dev/null || rc=$?
	echo $rc
}

case "$case_name" in
hung_engine_silent)
	sock=$WORK/hung.sock
	faults_hung_engine_start "$HUNG" "$sock" || fail "did not start"
	start=$(faults_now)
	[ "$(curl_rc "$sock" /_ping 1)" = 28 ] || fail "/_ping did not time out"
	took=$(faults_since "$start")
	[ "$(echo "$took < 3" | bc)" = 1 ] || fail "curl's deadline was not kept: $took s"
	[ "$(curl_rc "$sock" /v1.41/containers/json 1)" = 28 ] || fail "a request was answered"
	# twenty clients at once all hang too, and the engine still exits on SIGTERM
	for _ in $(seq 1 20); do curl -sS --max-time 1 --unix-socket "$sock" http://localhost/_ping >/dev/null 2>&1 & done
	wait_ok=0
	for _ in $(seq 1 20); do wait -n || wait_ok=$((wait_ok + 1)); done
	[ "$wait_ok" = 20 ] || fail "$((20 - wait_ok)) of 20 concurrent requests were answered"
	pid=$FAULTS_HUNG_PID
	faults_hung_engine_stop
	kill -0 "$pid" 2>/dev/null && fail "still running after SIGTERM"
	[ ! -e "$sock" ] || fail "socket left behind"
	;;

hung_engine_ping)
	sock=$WORK/hung.sock
	faults_hung_engine_start "$HUNG" "$sock" --ping || fail "did not start"
	curl -fsS -D "$WORK/head" --max-time 2 --unix-socket "$sock" http://localhost/_ping >"$WORK/body" ||
		fail "/_ping not answered"
	[ "$(cat "$WORK/body")" = OK ] || fail "/_ping body: $(cat "$WORK/body")"
	grep -qi '^Api-Version: 1.41' "$WORK/head" || fail "no Api-Version header: $(cat "$WORK/head")"
	curl -fsSI --max-time 2 --unix-socket "$sock" http://localhost/_ping >/dev/null || fail "HEAD /_ping"
	v=$(curl -fsS --max-time 2 --unix-socket "$sock" http://localhost/v1.41/version | jq -r .ApiVersion) ||
		fail "/version not answered"
	[ "$v" = 1.41 ] || fail "/version says $v"
	# two requests on one connection: the first answered, the second hangs
	rc=0
	curl -sS --max-time 2 --unix-socket "$sock" http://localhost/_ping \
		http://localhost/v1.41/containers/create >"$WORK/body" 2>/dev/null || rc=$?
	[ $rc = 28 ] || fail "second request on a kept-alive connection: curl exit $rc"
	[ "$(curl_rc "$sock" /v1.41/images/json 1)" = 28 ] || fail "/images/json was answered"
	faults_hung_engine_stop
	[ ! -e "$sock" ] || fail "socket left behind"
	;;

hung_engine_proxy)
	# needs a real engine to relay to: the suite's ($DOCKER_HOST or tools/ensure-docker.sh)
	up=$("$SRC/tools/ensure-docker.sh" 2>/dev/null) || { echo "skipped: no engine"; exit 77; }
	up=${up#unix://}
	sock=$WORK/proxy.sock
	faults_hung_engine_start "$HUNG" "$sock" --proxy "$up" || fail "did not start"
	rc=$(curl_rc "$sock" /_ping 5)
	[ "$rc" = 0 ] || fail "ping through the proxy: curl exit $rc"
	[ "$(cat "$WORK/body")" = OK ] || fail "ping through the proxy: $(cat "$WORK/body")"
	faults_api "$sock" GET /v1.41/version | jq -e .ApiVersion >/dev/null || fail "/version through the proxy"
	# a response bigger than the relay's buffer arrives whole
	n=$(faults_api "$sock" GET "/v1.41/images/json?all=1" | jq length) || fail "images through the proxy"
	# (not compared with a direct listing: parallel cases build and remove images meanwhile)
	[ "$n" -ge 1 ] || fail "no image through the proxy"
	kill -USR1 "$FAULTS_HUNG_PID"
	sleep 0.2
	[ "$(curl_rc "$sock" /_ping 1)" = 28 ] || fail "frozen proxy answered"
	kill -USR2 "$FAULTS_HUNG_PID"
	sleep 0.2
	[ "$(curl_rc "$sock" /_ping 5)" = 0 ] || fail "thawed proxy does not answer"
	faults_hung_engine_stop
	[ ! -e "$sock" ] || fail "socket left behind"
	;;

proxy_faults)
	# the fault-injecting proxy (issue 29): each fault hits the chosen request only
	up=$("$SRC/tools/ensure-docker.sh" 2>/dev/null) || { echo "skipped: no engine"; exit 77; }
	up=${up#unix://}
	sock=$WORK/proxy.sock
	faults_hung_engine_start "$HUNG" "$sock" --proxy "$up" --fault drop --match 'GET /_ping' \
		--nth 2 2>"$WORK/err" || fail "did not start"
	[ "$(curl_rc "$sock" /_ping 5)" = 0 ] || fail "the first ping was not relayed"
	[ "$(curl_rc "$sock" /v1.41/_ping 5)" = 52 ] || fail "the second ping was not dropped"
	[ "$(curl_rc "$sock" /_ping 5)" = 0 ] || fail "the third ping was not relayed"
	grep -q 'fault drop: GET /v1.41/_ping' "$WORK/err" || fail "the fault was not named: $(cat "$WORK/err")"
	faults_hung_engine_stop
	faults_hung_engine_start "$HUNG" "$sock.2" --proxy "$up" --fault stall --match 'GET /version' \
		2>"$WORK/err" || fail "did not start"
	[ "$(curl_rc "$sock.2" /_ping 5)" = 0 ] || fail "another request was not relayed"
	[ "$(curl_rc "$sock.2" /version 1)" = 28 ] || fail "the stalled request was answered"
	faults_hung_engine_stop
	faults_hung_engine_start "$HUNG" "$sock.3" --proxy "$up" --fault cut --match 'GET /version' \
		2>"$WORK/err" || fail "did not start"
	[ "$(curl_rc "$sock.3" /version 5)" = 52 ] || fail "the answer was not cut"
	faults_hung_engine_stop
	faults_hung_engine_start "$HUNG" "$sock.4" --proxy "$up" --fault delay=1000 --match 'GET /_ping' \
		2>"$WORK/err" || fail "did not start"
	start=$(faults_now)
	[ "$(curl_rc "$sock.4" /_ping 5)" = 0 ] || fail "the delayed request was not answered"
	took=$(faults_since "$start")
	[ "$(echo "$took >= 0.9" | bc)" = 1 ] || fail "not delayed: $took s"
	faults_hung_engine_stop
	;;

private_dockerd)
	need_root
	dir=$WORK/engine
	faults_dockerd_start "$dir" || fail "did not start"
	echo "private dockerd answered after $FAULTS_DOCKERD_START_S s"
	rc=$(curl_rc "$dir/docker.sock" /_ping 3)
	[ "$rc" = 0 ] || fail "no /_ping: curl exit $rc"
	[ "$(cat "$WORK/body")" = OK ] || fail "/_ping: $(cat "$WORK/body")"
	faults_build_smoke "$dir/docker.sock" "$SRC" faults-smoke || fail "smoke image build"
	echo "smoke image built in $FAULTS_BUILD_S s"
	id=$(faults_api "$dir/docker.sock" POST /containers/create -H 'Content-Type: application/json' \
		-d '{"Image": "faults-smoke", "Cmd": ["sleep", "600"], "StopTimeout": 1, "Labels": {"run_models.model": "faults_check"}, "HostConfig": {"NetworkMode": "none"}}' |
		jq -r .Id) || fail "create"
	faults_api "$dir/docker.sock" POST "/containers/$id/start" >/dev/null || fail "start"
	[ "$(faults_containers_of "$dir/docker.sock" faults_check)" = 1 ] || fail "container not listed"
	# the fault: kill -9 of the engine with a container running; the socket stops answering
	faults_dockerd_kill "$dir" || fail "kill"
	! faults_ping "$dir/docker.sock" || fail "killed engine still answers"
	# cleanup brings it back, removes the container and stops it: nothing of it is left
	faults_dockerd_cleanup "$dir"
	[ ! -e "$dir" ] || fail "$dir left behind"
	[ -z "$(faults_pids_of_dir "$dir")" ] || fail "processes left: $(faults_pids_of_dir "$dir")"
	# and a plain start and stop, timed
	faults_dockerd_start "$dir" || fail "second start"
	faults_dockerd_stop "$dir" || fail "stop"
	echo "second start $FAULTS_DOCKERD_START_S s, stop $FAULTS_DOCKERD_STOP_S s"
	! faults_ping "$dir/docker.sock" || fail "stopped engine still answers"
	faults_dockerd_cleanup "$dir"
	;;

full_disk)
	need_root
	faults_tmpfs_mount "$WORK/disk" 2m || fail "mount"
	mountpoint -q "$WORK/disk" || fail "not a mount point"
	echo "row 1" >"$WORK/disk/perf.csv" || fail "write before filling"
	faults_fill "$WORK/disk" 16 || fail "fill leaving 16 KB"
	avail=$(df -Pk "$WORK/disk" | awk 'NR==2 {print $4}')
	[ "$avail" -le 16 ] || fail "$avail KB free, want at most 16"
	head -c 8192 /dev/zero >"$WORK/disk/small" || fail "8 KB did not fit in 16 KB"
	faults_fill "$WORK/disk" || fail "fill"
	if echo "row 2" >"$WORK/disk/new.csv" 2>"$WORK/err"; then fail "a new file took a write on a full disk"; fi
	grep -q "No space left on device" "$WORK/err" || fail "error: $(cat "$WORK/err")"
	# an existing file's last page still has room (see faults_fill): a short append may
	# succeed, a longer one fails
	if head -c 8192 /dev/zero >>"$WORK/disk/perf.csv" 2>"$WORK/err"; then fail "8 KB appended on a full disk"; fi
	[ "$(head -n 1 "$WORK/disk/perf.csv")" = "row 1" ] || fail "earlier content changed"
	faults_tmpfs_umount "$WORK/disk"
	! mountpoint -q "$WORK/disk" || fail "still mounted"
	;;

failing_disk)
	faults_failing_file "$WORK/logs/m.live.log" || fail "symlink"
	if echo x >>"$WORK/logs/m.live.log" 2>"$WORK/err"; then fail "a write to /dev/full succeeded"; fi
	grep -q "No space left on device" "$WORK/err" || fail "error: $(cat "$WORK/err")"
	# opening for append works: only the write fails, as the runner will see it
	(exec 3>>"$WORK/logs/m.live.log") || fail "open failed"
	;;

*)
	fail "unknown case"
	;;
esac
echo "ok: $case_name"
