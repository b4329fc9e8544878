#!/usr/bin/env bash
# Writes a perf.csv of NIGHTS nightly runs of configured models (the columns of run_models'
# perf.csv a history needs, config and config_key included), deterministic (awk's srand):
#   grid        one model in a 2x2 sweep (batch_size 8/16 x precision fp16/bf16), 1 % noise,
#               each configuration its own level; grid[batch_size=16,precision=bf16] is 10 %
#               slower from night STEP on (0: never)
#   alternate   --tunableop on on odd nights, off on even ones; on is 20 % faster; the on
#               configuration is 10 % slower on its last 3 nights when DROP is 1
# The legacy file (LEGACY=1) has the same values with no configuration columns: the rows of a
# perf.csv written before configurations (a grid point's arguments in args, as the tag form
# grid:batch_size=8 gave them).
#   gen-configs.sh NIGHTS STEP DROP [LEGACY]
set -euo pipefail
awk -v N="$1" -v S="$2" -v D="$3" -v L="${4:-0}" 'function gauss() { return sqrt(-2 * log(1 - rand())) * cos(6.283185307179586 * rand()) }
function row(model, perf, config, key, tunableop, args) {
	if (L) printf "%s,%.3f,samples_per_second,SUCCESS,mi300x-01,gfx942,8,%s,%s,%s,%s\n", model, perf, day, run, tunableop, args
	else printf "%s,%.3f,samples_per_second,SUCCESS,mi300x-01,gfx942,8,%s,%s,%s,\"%s\",%s\n", model, perf, day, run, tunableop, config, key
}
BEGIN {
	srand(31)
	if (L) print "model,performance,metric,status,machine_name,gpu_architecture,n_gpus,timestamp,run_id,tunableop,args"
	else print "model,performance,metric,status,machine_name,gpu_architecture,n_gpus,timestamp,run_id,tunableop,config,config_key"
	for (n = 1; n <= N; n++) {
		t = 1704070800 + (n - 1) * 86400
		day = strftime("%Y-%m-%dT%H:%M:%SZ", t, 1)
		run = sprintf("%s-%04d", strftime("%Y%m%dT%H%M%SZ", t, 1), n)
		for (b = 8; b <= 16; b += 8)
			for (p = 0; p < 2; p++) {
				prec = p ? "bf16" : "fp16"
				v = b * 100 * (p ? 1.5 : 1)
				if (b == 16 && p && S && n >= S) v *= 0.9
				row("grid", v * (1 + 0.01 * gauss()),
				    sprintf("{\"\"batch_size\"\":\"\"%d\"\",\"\"precision\"\":\"\"%s\"\"}", b, prec),
				    sprintf("grid%d%s", b, prec), "", sprintf("--batch_size %d --precision %s", b, prec))
			}
		on = n % 2
		v = on ? 1200 : 1000
		if (on && D && n > N - 6) v *= 0.9
		row("alternate", v * (1 + 0.01 * gauss()),
		    sprintf("{\"\"tunableop\"\":\"\"%s\"\"}", on ? "on" : "off"),
		    on ? "alt-on" : "alt-off", on ? "on" : "off", "")
	}
}'
