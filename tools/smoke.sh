#!/usr/bin/env bash
# The README's first command: sets up what running needs (tools/setup.sh: packages, the
# build, run_models installed on PATH, a Docker engine), then runs the smoke model end to end
# with the installed run_models, as a new shell would: it ends with the run's table, the
# perf.csv and the log. Run again, it takes seconds and builds nothing.
#   RM_PREFIX  where to install (default /usr/local)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
host=$(tools/setup.sh)
# run_models finds the standard socket and the private engine by itself; only an engine
# elsewhere needs DOCKER_HOST (setup said so).
if [ -n "${DOCKER_HOST:-}" ] && [ "$DOCKER_HOST" != "$host" ]; then
	export DOCKER_HOST=$host
fi
rm=${RM_PREFIX:-/usr/local}/bin/run_models
echo
"$rm" --tags smoke -o "$root/perf.csv" --log-dir "$root/logs"
echo
echo "Next: run_models --help, man run_models, run_models list (from this folder)"
