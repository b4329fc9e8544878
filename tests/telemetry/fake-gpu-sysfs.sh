#!/usr/bin/env bash
# Writes a fake sysfs tree of AMD GPUs for telemetry tests and benchmarks (point
# RM_SYSFS_ROOT at it): the KFD topology (a CPU node, then one gfx942 node per GPU with its
# render node renderD<128+i>), and under /class/drm/renderD<N>/device what amdgpu exposes:
# hwmon/hwmon<i>/power1_average (microwatts), temp1..3_input (millidegrees: edge, junction,
# memory), mem_info_vram_used (bytes), gpu_busy_percent and pp_dpm_sclk (the current level
# starred). The layout follows the amdgpu documentation ("GPU Power/Thermal Controls and
# Monitoring", https://docs.kernel.org/gpu/amdgpu/thermal.html).
#
# Usage: fake-gpu-sysfs.sh ROOT [GPUS [WATTS [BUSY [SCLK_MHZ]]]]   (defaults 2 100 100 2100)
# WATTS may be a comma list, one per GPU ("300,100"); the last one counts for the rest.
# Environment: POWER_FILE=power1_input writes that file instead of power1_average.
# Rewriting an existing tree updates the values in place (same files), as a driver would.
set -euo pipefail
root=$1 gpus=${2:-2} watts=${3:-100} busy=${4:-100} sclk=${5:-2100}
power_file=${POWER_FILE:-power1_average}
nodes=$root/class/kfd/kfd/topology/nodes
mkdir -p "$nodes/0"
printf 'cpu_cores_count 8\nsimd_count 0\ngfx_target_version 0\n' >"$nodes/0/properties"
for i in $(seq 0 $((gpus - 1))); do
	minor=$((128 + i))
	mkdir -p "$nodes/$((i + 1))"
	printf 'cpu_cores_count 0\nsimd_count 1216\ngfx_target_version 90402\ndrm_render_minor %d\n' \
		"$minor" >"$nodes/$((i + 1))/properties"
	dev=$root/class/drm/renderD$minor/device
	hw=$dev/hwmon/hwmon$i
	mkdir -p "$hw"
	# printf with > rewrites the same inode, as sysfs attributes stay the same files
	w=$(echo "$watts" | awk -F, -v i=$((i + 1)) '{ print (i <= NF ? $i : $NF) }')
	printf '%d\n' "$(awk -v w="$w" 'BEGIN { printf "%d", w * 1000000 }')" >"$hw/$power_file"
	printf '45000\n' >"$hw/temp1_input"
	printf '65000\n' >"$hw/temp2_input"
	printf '55000\n' >"$hw/temp3_input"
	printf '%d\n' $((1024 * 1048576 * (i + 1))) >"$dev/mem_info_vram_used"
	printf '%d\n' "$busy" >"$dev/gpu_busy_percent"
	# the DPM levels, the current one starred; a clock between levels is shown as the
	# middle level, as fine-grained DPM (MI200/MI300) does
	case $sclk in
	500) printf '0: 500Mhz *\n1: 1200Mhz\n2: 2100Mhz\n' ;;
	1200) printf '0: 500Mhz\n1: 1200Mhz *\n2: 2100Mhz\n' ;;
	2100) printf '0: 500Mhz\n1: 1200Mhz\n2: 2100Mhz *\n' ;;
	*) printf '0: 500Mhz\n1: %dMhz *\n2: 2100Mhz\n' "$sclk" ;;
	esac >"$dev/pp_dpm_sclk"
done
