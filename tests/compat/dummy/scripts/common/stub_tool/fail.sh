#!/bin/bash
# A tool script that fails.
echo "stub fail: giving up ($*)"
exit 3
