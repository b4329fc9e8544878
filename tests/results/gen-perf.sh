#!/usr/bin/env bash
# Writes a synthetic perf.csv (run_models' 36 columns) to stdout: MODELS models over NIGHTS
# nightly runs, REPEATS rows per model and night. Deterministic. Half the models report a
# throughput (samples_per_second), half a time (time_ms); every 7th model fails one night in
# nine; on the last night model 3 is 12 % slower (a planted regression).
#   gen-perf.sh MODELS NIGHTS [REPEATS]
set -euo pipefail
models=${1:?usage: gen-perf.sh MODELS NIGHTS [REPEATS]}
nights=${2:?usage: gen-perf.sh MODELS NIGHTS [REPEATS]}
repeats=${3:-1}
awk -v M="$models" -v N="$nights" -v R="$repeats" 'BEGIN {
	OFS = ","
	print "model,n_gpus,nnodes,gpus_per_node,training_precision,pipeline,args,tags,docker_file," \
	      "base_docker,docker_sha,docker_image,git_commit,machine_name,deployment_type,launcher," \
	      "gpu_architecture,performance,metric,relative_change,status,build_duration," \
	      "test_duration,dataname,data_provider_type,data_size,data_download_duration," \
	      "build_number,additional_docker_run_options,timestamp,run_id,repeat,reason,tunableop," \
	      "exit_code,log_file"
	srand(42)
	for (n = 1; n <= N; n++) {
		# one run per night, 2024-01-01 onwards
		t = 1704070800 + (n - 1) * 86400
		day = strftime("%Y-%m-%dT%H:%M:%SZ", t, 1)
		run = sprintf("%s-%d-%04x", strftime("%Y%m%dT%H%M%SZ", t, 1), 1000 + n, n)
		for (m = 1; m <= M; m++) {
			name = sprintf("model_%03d", m)
			for (r = 1; r <= R; r++) {
				base = 100 + m
				noise = (rand() - 0.5) * 0.02 * base
				trend = 1 + 0.001 * n
				if (m % 2) { metric = "samples_per_second"; v = base * trend + noise }
				else { metric = "time_ms"; v = base / trend + noise }
				if (m == 3 && n == N) v = v * 0.88
				status = "SUCCESS"; reason = ""; perf = sprintf("%.3f", v); code = 0
				if (m % 7 == 0 && n % 9 == 0) {
					status = "FAILURE"; perf = ""; metric = ""; code = 1
					reason = "\"script exited 1: out of memory, see \"\"log\"\"\""
				}
				print name, 8, 1, 8, "bf16", "", "--steps 100", "nightly", \
				      "docker/" name ".Dockerfile", "rocm/pytorch", "sha256:abc", "ci-" name, \
				      "0123456789abcdef0123456789abcdef01234567", "mi300x-01", "local", \
				      "docker", "gfx942", perf, metric, "", status, "3.2", \
				      sprintf("%.3f", 60 + m % 13), "", "", "", "", "", "", day, run, r, \
				      reason, "off", code, name ".live.log"
			}
		}
	}
}'
