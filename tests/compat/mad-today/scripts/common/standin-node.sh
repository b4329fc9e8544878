#!/bin/bash
# One SLURM task of a stand-in launcher (common/cluster.sh): pulls the image (a failed pull is
# tolerated, as in MAD's launchers), records the image ID this node holds in
# $LOG_PATH/<job>/image_NODE<rank>.txt, then runs one container that prints its NODE_RANK;
# rank 0 writes $PERF_ROWS to /run_logs/<job>/perf.csv ($LOG_PATH mounted at /run_logs, as MAD
# does). STANDIN_FAIL_RANK=<r>: that rank's container exits 1.
rank=${SLURM_PROCID:-0}
name=standin_${JOB}_${rank}
trap 'docker rm -f "$name" >/dev/null 2>&1; exit 143' TERM INT
docker pull "$DOCKER_IMAGE_NAME" >/dev/null 2>&1 || echo "node $rank: docker pull failed (tolerated)"
docker image inspect -f '{{.Id}}' "$DOCKER_IMAGE_NAME" >"$LOG_PATH/$JOB/image_NODE$rank.txt" ||
	echo "node $rank: image $DOCKER_IMAGE_NAME is not on this node"
# shellcheck disable=SC2016 # expanded by the container's shell
docker run --rm --name "$name" --network host -e NODE_RANK="$rank" -e NODE_NAME="${SLURMD_NODENAME:-}" \
	-e IPADDRS -e MODEL_NAME -e xP -e yD -e JOB -e PERF_ROWS -e STANDIN_FAIL_RANK -e STANDIN_SLEEP \
	-v "$LOG_PATH:/run_logs" "$DOCKER_IMAGE_NAME" sh -c '
echo "NODE_RANK=$NODE_RANK node=$NODE_NAME ipaddrs=$IPADDRS model=$MODEL_NAME xP=$xP yD=$yD"
sleep "${STANDIN_SLEEP:-0}"
if [ "$NODE_RANK" = "$STANDIN_FAIL_RANK" ]; then echo "node $NODE_RANK: failing on purpose"; exit 1; fi
if [ "$NODE_RANK" = 0 ] && [ -n "$PERF_ROWS" ]; then printf "%s\n" "$PERF_ROWS" >"/run_logs/$JOB/perf.csv"; fi' &
wait $!
