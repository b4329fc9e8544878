#!/bin/bash
# madengine's scripts/common/test_echo.sh: prints its arguments.
echo "$@"
