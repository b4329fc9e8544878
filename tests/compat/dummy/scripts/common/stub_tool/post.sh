#!/bin/bash
# A stand-in profiler's collection step.
echo "stub post: args [$*], trace: $(cat stub_output/trace.txt 2>/dev/null)"
