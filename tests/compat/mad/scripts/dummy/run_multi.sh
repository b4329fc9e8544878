#!/bin/bash
# ROCm/MAD's scripts/dummy/run_multi.sh in spirit: four rows of multiple results.
echo "model,temperature,performance,metric
1,$RANDOM,$RANDOM,samples_per_sec
2,$RANDOM,$RANDOM,samples_per_sec
3,$RANDOM,$RANDOM,samples_per_sec
4,$RANDOM,$RANDOM,samples_per_sec" >perf_dummy.csv
