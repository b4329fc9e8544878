#!/usr/bin/env bash
# Writes a fake sysfs tree of AMD GPUs for telemetry tests and benchmarks (point
# RM_SYSFS_ROOT at it): the KFD topology (a CPU node, then one gfx942 node per GPU with its
# render node renderD<128+i>), and under /class/drm/renderD<N>/device what amdgpu exposes:
# hwmon/hwmon<i>/power1_average (microwatts), power1_cap (the power limit, microwatts),
# temp1..3_input (millidegrees: edge, junction, memory), mem_info_vram_used (bytes),
# gpu_busy_percent, pp_dpm_sclk (the current level starred) and gpu_metrics. The layout
# follows the amdgpu documentation ("GPU Power/Thermal Controls and Monitoring",
# https://docs.kernel.org/gpu/amdgpu/thermal.html). gpu_metrics is the binary struct
# gpu_metrics_v1_3 of the kernel's drivers/gpu/drm/amd/include/kgd_pp_interface.h: 120 bytes,
# its header (structure_size 120, format_revision 1, content_revision 3), zeros, and at
# byte 112 indep_throttle_status (little-endian u64; bits SMU_THROTTLER_*_BIT of
# drivers/gpu/drm/amd/pm/swsmu/inc/amdgpu_smu.h: 0 PPT0, 22 EDC_GFX, 36 TEMP_HOTSPOT, ...).
#
# Usage: fake-gpu-sysfs.sh ROOT [GPUS [WATTS [BUSY [SCLK_MHZ]]]]   (defaults 2 100 100 2100)
# WATTS may be a comma list, one per GPU ("300,100"); the last one counts for the rest.
# Environment: POWER_FILE=power1_input writes that file instead of power1_average;
#              THROTTLE=0x1000000000 sets indep_throttle_status (default 0: no reason);
#              POWER_CAP_W the power limit (default 750);
#              VRAM_MIB the VRAM in use, a comma list as WATTS (default GPU i: 1024 x (i+1)).
# Rewriting an existing tree updates the values in place (same files), as a driver would.
set -euo pipefail
root=$1 gpus=${2:-2} watts=${3:-100} busy=${4:-100} sclk=${5:-2100}
power_file=${POWER_FILE:-power1_average}
throttle=$((${THROTTLE:-0}))
# gpu_metrics_v1_3 with indep_throttle_status = $throttle, as printf escapes
metrics='\x78\x00\x01\x03'
for _ in $(seq 4 111); do metrics="$metrics\\x00"; done
for b in 0 1 2 3 4 5 6 7; do metrics="$metrics$(printf '\\x%02x' $(((throttle >> (8 * b)) & 255)))"; done
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
	printf '%d\n' "$(awk -v w="${POWER_CAP_W:-750}" 'BEGIN { printf "%d", w * 1000000 }')" >"$hw/power1_cap"
	printf "$metrics" >"$dev/gpu_metrics"
	printf '45000\n' >"$hw/temp1_input"
	printf '65000\n' >"$hw/temp2_input"
	printf '55000\n' >"$hw/temp3_input"
	vram=$(echo "${VRAM_MIB:-}" | awk -F, -v i=$((i + 1)) -v d=$((1024 * (i + 1))) '{ print (NF == 0 ? d : i <= NF ? $i : $NF) }')
	printf '%d\n' $((vram * 1048576)) >"$dev/mem_info_vram_used"
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
