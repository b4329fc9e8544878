# shellcheck shell=bash
# Stand-in for ROCm/MAD's scripts/common/cluster.sh, which MAD's multi-node launchers source
# (tests/compat/mad-today/README.md). Like MAD's, every site value is ${VAR:-default}, so the
# environment wins; the standin_* functions are the launchers' steps in miniature.
SHARED_MOUNT=${SHARED_MOUNT:-/shared_inference}
LOG_PATH=${LOG_PATH:-$SHARED_MOUNT/${USER:-root}/model_blog_logs}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}
xP=${xP:-1}
yD=${yD:-1}
JOB=${SLURM_JOB_ID:-local}
export LOG_PATH GPUS_PER_NODE xP yD JOB

standin_report() { # LAUNCHER ARGS...: what the launcher was given, one "key: value" a line
	echo "standin: launcher=$1 job=$JOB host=$(hostname) pwd=$PWD"
	shift
	local a
	for a in "$@"; do echo "standin-arg: $a"; done
	env | sort | sed 's/^/standin-env: /'
}
standin_need_image() {
	case ${DOCKER_IMAGE_NAME:-} in
	'') echo "Error: DOCKER_IMAGE_NAME is not set" && exit 1 ;;
	'<'*) echo "Error: DOCKER_IMAGE_NAME is a placeholder: $DOCKER_IMAGE_NAME" && exit 1 ;;
	esac
}
standin_need_nodes() { # N WHY
	if [ "${SLURM_NNODES:-0}" -lt "$1" ]; then
		echo "Error: topology needs $1 nodes ($2) but the allocation has ${SLURM_NNODES:-0}"
		exit 1
	fi
}
# PERF_ROWS: the perf.csv rank 0 writes, in the 29-column schema of MAD's parse_to_csv.py.
# STANDIN_NO_RESULTS=1: none (MAD's vLLM launchers then exit 1).
standin_perf_rows() { # NNODES DEPLOYMENT_TYPE PIPELINE TAGS
	PERF_ROWS=
	if [ "${STANDIN_NO_RESULTS:-0}" != 1 ]; then
		PERF_ROWS="model,n_gpus,nnodes,gpus_per_node,training_precision,pipeline,args,tags,docker_file,base_docker,docker_sha,docker_image,git_commit,machine_name,deployment_type,launcher,gpu_architecture,performance,metric,relative_change,status,build_duration,test_duration,dataname,data_provider_type,data_size,data_download_duration,build_number,additional_docker_run_options"
		local con
		# shellcheck disable=SC2089,SC2090 # the quotes are the CSV's (the tags field holds a comma)
		for con in 8 16; do
			PERF_ROWS+=$'\n'"${MODEL_NAME:-standin},$(($1 * GPUS_PER_NODE)),$1,$GPUS_PER_NODE,,$3,,\"$4\",,,,$DOCKER_IMAGE_NAME,,${SLURM_JOB_NODELIST:-},$2,slurm_multi,${PERF_GPU_ARCH:-gfx942},$((con * 100)).5,tok/s (isl=1024 osl=1024 con=$con),,SUCCESS,,,,,,,,"
		done
	fi
	# shellcheck disable=SC2090
	export PERF_ROWS
}
# One srun task a node: the node addresses first (srun hostname), then one container per node
# (common/standin-node.sh). Fails when a task fails.
standin_run_nodes() { # N
	IPADDRS=$(srun -N "$1" -n "$1" --ntasks-per-node=1 -l hostname | sort -n | sed 's/^[0-9]*: *//' | paste -sd, -)
	echo "standin-nodes: $IPADDRS"
	export IPADDRS
	mkdir -p "$LOG_PATH/$JOB"
	srun -N "$1" -n "$1" --ntasks-per-node=1 -l bash "$STANDIN_COMMON/standin-node.sh"
}
standin_results() { # [COPY...]: $LOG_PATH/<job>/perf.csv, copied where MAD's launcher copies it
	local src=$LOG_PATH/$JOB/perf.csv dst
	if [ ! -s "$src" ]; then
		echo "ERROR: no perf CSV at $src"
		return 1
	fi
	echo "standin-result: $src"
	for dst in "$@"; do
		mkdir -p "$(dirname "$dst")" && cp "$src" "$dst" && echo "standin-result: $dst"
	done
}
