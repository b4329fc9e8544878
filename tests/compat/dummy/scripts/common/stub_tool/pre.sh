#!/bin/bash
# A stand-in profiler's set-up: says what it got and where it runs.
echo "stub pre: args [$*] in $(basename "$PWD")"
