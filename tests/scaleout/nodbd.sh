#!/usr/bin/env bash
# The SLURM launcher on a cluster WITHOUT accounting (no slurmdbd: sacct fails, final states
# come from scontrol): its own cluster (it cannot share the fixture's), a two-node run and a
# failing rank through the CLI, and the C side of the SLURM commands.
# Usage: nodbd.sh SLURM_TOOL RUN_MODELS SOURCE_DIR
set -euo pipefail
tool=$(realpath "$1") rm_bin=$(realpath "$2") src=$(realpath "$3")
env_file=$(mktemp)
trap 'bash "$src/tests/scaleout/fixture.sh" stop "$env_file"; rm -f "$env_file"' EXIT
SLURM_TEST_DBD=0 bash "$src/tests/scaleout/fixture.sh" start "$env_file"
for c in two_node fail; do
	bash "$src/tests/scaleout/cli_slurm.sh" "$env_file" "$rm_bin" "$src" "$c"
done
RM_SCALEOUT_ENV=$env_file bash "$src/tests/scaleout/slurm_live.sh" "$tool" "$rm_bin" "$src" c_api
