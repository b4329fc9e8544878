#!/bin/bash
echo "performance: ${ctxtest} context"
