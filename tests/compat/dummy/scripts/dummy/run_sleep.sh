#!/bin/bash
sleep "$1"
echo "performance: $RANDOM samples_per_second"
