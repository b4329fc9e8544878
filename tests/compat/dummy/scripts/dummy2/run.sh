#!/bin/bash
echo "performance: $RANDOM samples_per_second"
