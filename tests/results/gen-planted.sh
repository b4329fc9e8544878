#!/usr/bin/env bash
# Writes a perf.csv (run_models' 36 columns) of NIGHTS nightly runs with planted histories,
# one model each, deterministic (awk's srand(7), normal noise by Box-Muller):
#   step_persist  -10 % six nights before the last, still there       (must fail)
#   drift         3 % worse each of the last 10 nights                 (must fail)
#   fresh_step    -15 % in the last run only                           (must fail)
#   lower_rose    a time (lower is better) +12 % for the last 5 nights (must fail)
#   two_runs      only the last two nights, -40 %                      (must fail)
#   noisy         stable, 6 % noise, judged at a 5 % threshold         (must pass; unstable)
#   outlier       one night at -50 % in the middle of the history      (must pass)
#   improved      +20 % for the last 6 nights                          (must pass; better)
#   steady        stable, 0.5 % noise                                  (must pass)
# Runs are <date>T01:00:00Z-<night>; night N's run id is printed by `run_of N` in cases.sh.
#   gen-planted.sh [NIGHTS]
set -euo pipefail
nights=${1:-30}
awk -v N="$nights" 'function gauss() { return sqrt(-2 * log(1 - rand())) * cos(6.283185307179586 * rand()) }
BEGIN {
	OFS = ","
	print "model,n_gpus,nnodes,gpus_per_node,training_precision,pipeline,args,tags,docker_file," \
	      "base_docker,docker_sha,docker_image,git_commit,machine_name,deployment_type,launcher," \
	      "gpu_architecture,performance,metric,relative_change,status,build_duration," \
	      "test_duration,dataname,data_provider_type,data_size,data_download_duration," \
	      "build_number,additional_docker_run_options,timestamp,run_id,repeat,reason,tunableop," \
	      "exit_code,log_file"
	srand(7)
	split("step_persist drift fresh_step lower_rose two_runs noisy outlier improved steady", m, " ")
	for (n = 1; n <= N; n++) {
		t = 1704070800 + (n - 1) * 86400
		day = strftime("%Y-%m-%dT%H:%M:%SZ", t, 1)
		run = sprintf("%s-%04d", strftime("%Y%m%dT%H%M%SZ", t, 1), n)
		commit = sprintf("c0ffee%034d", n)
		for (k = 1; k <= 9; k++) {
			name = m[k]; metric = "samples_per_second"; sd = 0.005; v = 1000
			if (name == "step_persist" && n > N - 6) v = 900
			if (name == "drift" && n > N - 10) v = 1000 * 0.97 ^ (n - (N - 10))
			if (name == "fresh_step" && n == N) v = 850
			if (name == "lower_rose") { metric = "time_ms"; v = (n > N - 5) ? 112 : 100 }
			if (name == "two_runs") { if (n < N - 1) continue; v = (n == N) ? 600 : 1000 }
			if (name == "noisy") sd = 0.06
			if (name == "outlier" && n == int(N / 2)) v = 500
			if (name == "improved" && n > N - 6) v = 1200
			perf = sprintf("%.3f", v * (1 + sd * gauss()))
			print name, 8, 1, 8, "bf16", "", "", "nightly", "docker/" name ".Dockerfile", \
			      "rocm/pytorch", "sha256:abc", "ci-" name, commit, "mi300x-01", "local", \
			      "docker", "gfx942", perf, metric, "", "SUCCESS", "3.2", "60", "", "", "", \
			      "", "", "", day, run, 1, "", "off", 0, name ".live.log"
		}
	}
}'
