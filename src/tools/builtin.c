/*
 * madengine's tools, built in (used when the folder's tools file does not define the name).
 * The facts are madengine's (src/madengine/scripts/common/tools.json and the scripts it
 * names: which profiler flags, which library variables, which counters, what each tool
 * writes); the text is ours. Where madengine runs a helper script we do not ship, the same
 * steps are shell text here (a pre or post script) or a command prefix of the form
 * `sh -c '...' name`, which stays a prefix, so tools still stack.
 *
 * Differences, on purpose: the rocprofv3 variants name their output folder (-d
 * ./rocprof_output) instead of moving rocprofv3's default folders there in a post script;
 * the counter lists of rocprofv3_compute/_memory/_full are written by their pre script
 * (madengine ships them as files); the library traces set the libraries' own variables
 * (what madengine's get_library_trace.py sets) and, where a library can write its log to a
 * file (rocBLAS, hipBLASLt), name that file as an output instead of filtering the output
 * into library_trace.csv; MIOpen, Tensile and RCCL print their traces into the run's log.
 */
#include <string.h>

#include "tools_internal.h"

/* rocprofv3 when the image has it, else the legacy rocprof; $1 the rocprofv3 flags, $2
 * rocprof's. */
#define ROCPROF_EITHER(v3, legacy)                                                                 \
	"sh -c 'if command -v rocprofv3 >/dev/null 2>&1; then exec rocprofv3 " v3                  \
	" -d ./rocprof_output -- \"$@\"; fi; mkdir -p rocprof_output; exec rocprof " legacy        \
	" -o rocprof_output/results.csv \"$@\"' rocprof"

#define ROCPROFV3(flags) "rocprofv3 " flags " -d ./rocprof_output --"

/* The counter list of a rocprofv3 variant, one pass per line as in madengine's files. */
#define COUNTERS(...) "printf '%s\\n' " __VA_ARGS__ " > rocprof_counters.txt"

static const char *const rocprof_out[] = {"rocprof_output", NULL};

static const char *const env_comm[] = {"RCCL_DEBUG", "INFO", NULL};
static const char *const env_full[] = {"RCCL_DEBUG", "INFO", "HSA_ENABLE_SDMA", "0", NULL};

static const char rpd_pre[] =
    "set -e\n"
    "[ -x ./rocmProfileData/rpd_tracer/runTracer.sh ] && exit 0\n"
    "s=; [ \"$(id -u)\" = 0 ] || s=sudo\n"
    "if command -v apt-get >/dev/null 2>&1; then\n"
    "  $s apt-get update -qq\n"
    "  $s env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq sqlite3 libsqlite3-dev "
    "libfmt-dev python3-pip nlohmann-json3-dev git build-essential pkg-config\n"
    "elif command -v yum >/dev/null 2>&1; then\n"
    "  $s yum install -y gcc gcc-c++ make git libsqlite3x-devel.x86_64 fmt-devel python3-pip "
    "json-devel\n"
    "else\n"
    "  echo 'rpd: the image has neither apt-get nor yum to install what rpd needs' >&2; exit 1\n"
    "fi\n"
    "[ -d rocmProfileData ] || git clone https://github.com/ROCm/rocmProfileData.git "
    "rocmProfileData\n"
    "cd rocmProfileData\n"
    "sed -i 's/UStringTable\\.o/StringTable.o/g' rpd_tracer/Makefile 2>/dev/null || true\n"
    "make rpd\n"
    "cd rocpd_python && python3 setup.py install\n";

static const char rpd_post[] =
    "mkdir -p rpd_output\n"
    "if [ -s trace.rpd ]; then\n"
    "  if [ -f rocmProfileData/tools/rpd2tracing.py ] && python3 "
    "rocmProfileData/tools/rpd2tracing.py trace.rpd trace.json; then mv trace.json rpd_output/; "
    "fi\n"
    "  mv trace.rpd rpd_output/\n"
    "else\n"
    "  echo 'rpd: the model wrote no trace.rpd' >&2\n"
    "fi\n";
static const char *const rpd_env[] = {"LD_LIBRARY_PATH",
				      "./rocmProfileData/rpd_tracer:/opt/rocm/lib", NULL};
static const char *const rpd_out[] = {"rpd_output", NULL};

/* rocm-trace-lite: a wheel from its GitHub releases (not on PyPI), madengine's pinned one
 * unless ROCM_TRACE_LITE_WHEEL_URL names another. */
static const char rtl_pre[] =
    "command -v rtl >/dev/null 2>&1 && exit 0\n"
    "python3 -c 'import rocm_trace_lite' 2>/dev/null && exit 0\n"
    "w=${ROCM_TRACE_LITE_WHEEL_URL:-https://github.com/sunway513/rocm-trace-lite/releases/"
    "download/v0.3.3/rocm_trace_lite-0.3.3-py3-none-linux_x86_64.whl}\n"
    "python3 -m pip install --upgrade \"$w\" || python3 -m pip install --user --upgrade \"$w\" "
    "|| { echo 'rocm_trace_lite: pip could not install the rocm-trace-lite wheel (set "
    "ROCM_TRACE_LITE_WHEEL_URL to a reachable one)' >&2; exit 1; }\n";
#define RTL_CMD                                                                                    \
	"sh -c 'o=$PWD/rocm_trace_lite_output; mkdir -p \"$o\"; "                                  \
	"export RTL_OUTPUT=\"${RTL_OUTPUT:-$o/trace_%p.db}\"; "                                    \
	"if command -v rtl >/dev/null 2>&1; then c=rtl; else c=\"python3 -m "                      \
	"rocm_trace_lite.cli\"; fi; m=; "                                                          \
	"if [ -n \"$RTL_MODE\" ] && $c trace --help 2>&1 | grep -q -- --mode; then m=\"--mode "    \
	"$RTL_MODE\"; fi; exec $c trace $m -o \"$o/trace.db\" \"$@\"' rocm_trace_lite"
static const char *const rtl_env[] = {"RTL_MODE", "lite", NULL};
static const char *const rtl_env_default[] = {"RTL_MODE", "default", NULL};
static const char *const rtl_out[] = {"rocm_trace_lite_output", NULL};

static const char *const rocblas_env[] = {"ROCBLAS_LAYER",
					  "6",
					  "ROCBLAS_LOG_BENCH_PATH",
					  "/myworkspace/rocblas_bench.log",
					  "ROCBLAS_LOG_PROFILE_PATH",
					  "/myworkspace/rocblas_profile.yaml",
					  NULL};
static const char *const rocblas_out[] = {"/myworkspace/rocblas_bench.log",
					  "/myworkspace/rocblas_profile.yaml", NULL};
static const char *const hipblaslt_env[] = {"HIPBLASLT_LOG_MASK", "32", "HIPBLASLT_LOG_FILE",
					    "/myworkspace/hipblaslt_bench.log", NULL};
static const char *const hipblaslt_out[] = {"/myworkspace/hipblaslt_bench.log", NULL};
static const char *const miopen_env[] = {"MIOPEN_ENABLE_LOGGING_CMD", "1", NULL};
static const char *const tensile_env[] = {"TENSILE_DB", "0x8000", NULL};
static const char *const rccl_env[] = {
    "NCCL_DEBUG", "INFO", "RCCL_KERNEL_COLL_TRACE_ENABLE", "1", "NCCL_DEBUG_SUBSYS",
    "INIT,COLL",  NULL};

/* The power and VRAM monitors sample the image's own SMI tool in the background into a CSV
 * ("time,<the tool's CSV row>"), every <RATE> seconds, until the post script stops them. */
#define MONITOR_PRE(tag, V, amd, rocm, nv)                                                         \
	"o=${" V "_OUTPUT_FILE:-gpu_info_" tag "_profiler_output.csv}; r=${" V                     \
	"_SAMPLING_RATE:-0.1}\n"                                                                   \
	"if command -v amd-smi >/dev/null 2>&1; then q='" amd "'\n"                                \
	"elif command -v rocm-smi >/dev/null 2>&1; then q='" rocm "'\n"                            \
	"elif command -v nvidia-smi >/dev/null 2>&1; then q='" nv "'\n"                            \
	"else echo 'gpu_info_" tag "_profiler: the image has no amd-smi, rocm-smi or nvidia-smi' " \
	">&2; exit 1; fi\n"                                                                        \
	"echo time,sample > \"$o\"\n"                                                              \
	"(while :; do t=$(date +%s.%N 2>/dev/null || date +%s); $q 2>/dev/null | sed "             \
	"\"s/^/$t,/\" >> \"$o\"; sleep \"$r\"; done) >/dev/null 2>&1 &\n"                          \
	"echo $! > .run_models_" tag ".pid\n"
#define MONITOR_POST(tag)                                                                          \
	"[ -f .run_models_" tag ".pid ] && kill \"$(cat .run_models_" tag ".pid)\" 2>/dev/null; "  \
	"rm -f .run_models_" tag ".pid; exit 0\n"

static const char *const power_env[] = {"POWER_DEVICE",
					"all",
					"POWER_SAMPLING_RATE",
					"0.1",
					"POWER_MODE",
					"power",
					"POWER_DUAL_GCD",
					"false",
					"POWER_OUTPUT_FILE",
					"gpu_info_power_profiler_output.csv",
					NULL};
static const char *const power_out[] = {"gpu_info_power_profiler_output.csv", NULL};
static const char *const vram_env[] = {"VRAM_DEVICE",
				       "all",
				       "VRAM_SAMPLING_RATE",
				       "0.1",
				       "VRAM_MODE",
				       "vram",
				       "VRAM_DUAL_GCD",
				       "false",
				       "VRAM_OUTPUT_FILE",
				       "gpu_info_vram_profiler_output.csv",
				       NULL};
static const char *const vram_out[] = {"gpu_info_vram_profiler_output.csv", NULL};

const struct rm_tools__builtin rm_tools__builtins[] = {
    {"rocprof", ROCPROF_EITHER("--runtime-trace", "--hip-trace"), NULL, NULL, NULL, rocprof_out},
    {"rocprof_hip_only", ROCPROF_EITHER("--hip-trace", "--hip-trace"), NULL, NULL, NULL,
     rocprof_out},
    {"rocprof_sys", ROCPROF_EITHER("--sys-trace", "--sys-trace"), NULL, NULL, NULL, rocprof_out},
    {"rocprofv3", ROCPROFV3("--runtime-trace"), NULL, NULL, NULL, rocprof_out},
    {"rocprofv3_compute",
     ROCPROFV3("--hip-trace --kernel-trace -i rocprof_counters.txt --output-format pftrace"), NULL,
     COUNTERS("'pmc: SQ_WAVES' 'pmc: SQ_WAVE_CYCLES' 'pmc: SQ_INSTS_VALU' "
	      "'pmc: SQ_ACTIVE_INST_VALU' 'pmc: SQ_INSTS_VALU_ADD_F32' "
	      "'pmc: SQ_INSTS_VALU_MUL_F32' 'pmc: SQ_INSTS_VALU_FMA_F32' "
	      "'pmc: SQ_INSTS_VALU_TRANS_F32' 'pmc: SQ_INSTS_SALU' 'pmc: SQ_INSTS_VMEM_RD' "
	      "'pmc: SQ_INSTS_VMEM_WR' 'pmc: SQ_WAIT_INST_ANY'"),
     NULL, rocprof_out},
    {"rocprofv3_memory",
     ROCPROFV3("--hip-trace --kernel-trace --memory-copy-trace --memory-allocation-trace -i "
	       "rocprof_counters.txt --output-format pftrace"),
     NULL,
     COUNTERS("'pmc: L2CacheHit' 'pmc: L2CacheMiss' 'pmc: L2CacheHitRate' "
	      "'pmc: TCP_TCC_READ_REQ_sum' 'pmc: TCP_TCC_WRITE_REQ_sum' "
	      "'pmc: TCP_TCC_ATOMIC_REQ_sum' 'pmc: TCC_HIT_sum' 'pmc: TCC_MISS_sum' "
	      "'pmc: TCC_EA_RDREQ_32B_sum' 'pmc: TCC_EA_WRREQ_64B_sum' "
	      "'pmc: TCC_EA_RDREQ_LEVEL_sum' 'pmc: TCC_EA_WRREQ_LEVEL_sum' 'pmc: SQ_INSTS_SMEM' "
	      "'pmc: SQ_LDS_BANK_CONFLICT'"),
     NULL, rocprof_out},
    {"rocprofv3_communication",
     ROCPROFV3("--hip-trace --hsa-trace --kernel-trace --memory-copy-trace --rccl-trace "
	       "--scratch-memory-trace --output-format pftrace"),
     env_comm, NULL, NULL, rocprof_out},
    {"rocprofv3_full",
     ROCPROFV3("--hip-trace --hsa-trace --kernel-trace --memory-copy-trace "
	       "--memory-allocation-trace --rccl-trace --scratch-memory-trace --marker-trace "
	       "--runtime-trace -i rocprof_counters.txt --output-format pftrace --stats"),
     env_full,
     COUNTERS("'pmc: SQ_WAVES' 'pmc: SQ_WAVE_CYCLES' 'pmc: SQ_INSTS_VALU' 'pmc: SQ_INSTS_SALU' "
	      "'pmc: SQ_ACTIVE_INST_VALU' 'pmc: L2CacheHit' 'pmc: TCC_HIT_sum' "
	      "'pmc: TCC_MISS_sum' 'pmc: TCP_TCC_READ_REQ_sum' 'pmc: TCP_TCC_WRITE_REQ_sum' "
	      "'pmc: TCC_EA_RDREQ_32B_sum' 'pmc: TCC_EA_WRREQ_64B_sum' 'pmc: SQ_WAIT_INST_ANY' "
	      "'pmc: SQ_WAIT_INST_VALU' 'pmc: SQ_LDS_BANK_CONFLICT'"),
     NULL, rocprof_out},
    {"rocprofv3_lightweight", ROCPROFV3("--hip-trace --kernel-trace --output-format json"), NULL,
     NULL, NULL, rocprof_out},
    {"rocprofv3_perfetto",
     ROCPROFV3("--hip-trace --kernel-trace --memory-copy-trace --output-format pftrace "
	       "--perfetto-trace-filename model_trace.pftrace"),
     NULL, NULL, NULL, rocprof_out},
    {"rocprofv3_api_overhead",
     ROCPROFV3("--hip-trace --hsa-trace --marker-trace --runtime-trace --stats --output-format "
	       "json"),
     NULL, NULL, NULL, rocprof_out},
    {"rocprofv3_pc_sampling",
     ROCPROFV3("--hip-trace --kernel-trace --pc-sampling-beta-enabled --pc-sampling-unit time "
	       "--pc-sampling-method stochastic --pc-sampling-interval 1000 --output-format "
	       "pftrace"),
     NULL, NULL, NULL, rocprof_out},
    {"rpd", "./rocmProfileData/rpd_tracer/runTracer.sh", rpd_env, rpd_pre, rpd_post, rpd_out},
    {"rocm_trace_lite", RTL_CMD, rtl_env, rtl_pre, NULL, rtl_out},
    {"rocm_trace_lite_default", RTL_CMD, rtl_env_default, rtl_pre, NULL, rtl_out},
    {"rocblas_trace", NULL, rocblas_env, NULL, NULL, rocblas_out},
    {"hipblaslt_trace", NULL, hipblaslt_env, NULL, NULL, hipblaslt_out},
    {"miopen_trace", NULL, miopen_env, NULL, NULL, NULL},
    {"tensile_trace", NULL, tensile_env, NULL, NULL, NULL},
    {"rccl_trace", NULL, rccl_env, NULL, NULL, NULL},
    {"gpu_info_power_profiler", NULL, power_env,
     MONITOR_PRE("power", "POWER", "amd-smi metric --power --csv", "rocm-smi --showpower --csv",
		 "nvidia-smi --query-gpu=index,power.draw --format=csv,noheader"),
     MONITOR_POST("power"), power_out},
    {"gpu_info_vram_profiler", NULL, vram_env,
     MONITOR_PRE("vram", "VRAM", "amd-smi metric --mem-usage --csv",
		 "rocm-smi --showmeminfo vram --csv",
		 "nvidia-smi --query-gpu=index,memory.used --format=csv,noheader"),
     MONITOR_POST("vram"), vram_out},
};

const size_t rm_tools__n_builtins = sizeof(rm_tools__builtins) / sizeof(rm_tools__builtins[0]);

const struct rm_tools__builtin *rm_tools__builtin(const char *name)
{
	for (size_t i = 0; i < rm_tools__n_builtins; i++)
		if (!strcmp(rm_tools__builtins[i].name, name))
			return &rm_tools__builtins[i];
	return NULL;
}

const char *const *rm_tools_builtin_names(void)
{
	static const char *names[sizeof(rm_tools__builtins) / sizeof(rm_tools__builtins[0]) + 1];

	if (!names[0])
		for (size_t i = 0; i < rm_tools__n_builtins; i++)
			names[i] = rm_tools__builtins[i].name;
	return names;
}
