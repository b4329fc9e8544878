# Sourced by the stand-in scripts: what madengine's container gives a model, for the tests
# to read in the live log.
env | grep -E '^(MAD_|JENKINS_BUILD_NUMBER=|ROCM_PATH=|RAY_EXPERIMENTAL_NOSET_HIP_VISIBLE_DEVICES=)' | sort | sed 's/^/env: /'
echo "whoami: $(id -u)"
