#!/bin/bash
if mount | grep -q "${MAD_DATAHOME:-/nowhere} "; then
    echo "${MAD_DATAHOME} is mounted"
    echo "performance: $RANDOM samples_per_second"
else
    echo "${MAD_DATAHOME} is NOT mounted"
    exit 1
fi
