/*
 * The run context: what the host (or the user, through --additional-context) says about
 * GPUs and the guest OS, and the docker_* settings that shape builds and runs.
 *
 * Detection reads sysfs (<sysfs>/class/kfd/kfd/topology/nodes/<n>/properties, where
 * gfx_target_version and simd_count tell GPUs from CPUs), and falls back to rocminfo and
 * nvidia-smi when they are on PATH. A host with no GPU is a valid context: gpu_vendor NULL,
 * n_gpus 0, gpu_arch NULL. With a vendor, GPU 0's product name (AMD: its DRM device's
 * sysfs product_name, else amd-smi; NVIDIA: nvidia-smi) and the HIP version (AMD:
 * <ROCM_PATH or /opt/rocm>/.info/version, else hipconfig; NVIDIA: nvcc, else nvidia-smi's
 * CUDA version), as madengine's core/context.py finds them.
 *
 * Overrides (JSON text, or "@file"): gpu_vendor, guest_os, MAD_SYSTEM_GPU_ARCHITECTURE,
 * MAD_SYSTEM_NGPUS, MAD_SYSTEM_GPU_PRODUCT_NAME, MAD_SYSTEM_HIP_VERSION, docker_env_vars
 * {K: V}, docker_build_arg {K: V}, docker_mounts {container_path: host_path}, docker_gpus
 * "0,2-4", docker_cpus, model_args; any other key is kept in `obj` (Dockerfile CONTEXT
 * filters may name it; rm_context_check_keys warns about those nothing uses). Later
 * overrides win.
 *
 * Ownership: the context owns everything; rm_context_release frees it.
 */
#ifndef RM_CONTEXT_H
#define RM_CONTEXT_H

#include <stddef.h>

#include "rm/engine.h"
#include "rm/util.h"

typedef struct json_t json_t;

typedef struct rm_kv {
	char *key;
	char *value;
} rm_kv;

/* Sets key to a copy of value in the list *v of *n pairs, replacing an earlier value. */
void rm_kv_set(rm_kv **v, size_t *n, const char *key, const char *value);

typedef struct rm_context {
	char *gpu_vendor; /* "AMD", "NVIDIA", or NULL for none */
	char *guest_os;	  /* default "UBUNTU" */
	long n_gpus;	  /* GPUs on the system */
	char *gpu_arch;	  /* "gfx942", "sm_90", or NULL */
	/* GPU 0's product name ("AMD Instinct MI300X", "NVIDIA H100 80GB HBM3") and the HIP
	 * (ROCm) or CUDA version, major.minor ("6.4"): madengine's MAD_SYSTEM_GPU_PRODUCT_NAME
	 * and MAD_SYSTEM_HIP_VERSION; NULL when unknown */
	char *gpu_product_name;
	char *hip_version;
	/* AMD: DRM render node minor numbers of each GPU, in GPU order (renderD<N>); empty
	 * when unknown. */
	long *render_nodes;
	size_t n_render_nodes;
	rm_kv *docker_env_vars;
	size_t n_docker_env_vars;
	/* env_vars: override a card's env_vars (MAD's docs): the container's environment on
	 * local runs, the exports of a multi-node card's batch script */
	rm_kv *env_vars;
	size_t n_env_vars;
	rm_kv *docker_build_arg;
	size_t n_docker_build_arg;
	rm_kv *docker_mounts; /* key: container path, value: host path */
	size_t n_docker_mounts;
	char *docker_gpus; /* "0,2-4" or NULL */
	char *docker_cpus; /* or NULL */
	char *model_args;  /* replaces a model's args when set, or NULL */
	/* The engine that runs the containers (rm/engine.h): --engine, else what the launcher
	 * learnt from the engine's ping; RM_ENGINE_ANY (not known: a dry run that could not
	 * ask) renders as Docker. Podman gets NVIDIA GPUs as CDI devices. */
	rm_engine_kind engine;
	/* The engine cannot limit a container's resources (docker_cpus): rootless Podman on
	 * cgroup v1, where a user has no cgroup of their own. */
	int engine_no_cgroups;
	/* CDI (Container Device Interface) on this host: the specs read from /etc/cdi and
	 * /var/run/cdi and the fully-qualified names of their devices ("nvidia.com/gpu=0",
	 * "nvidia.com/gpu=all"), NULL-terminated, NULL when there is none. */
	char **cdi_specs;
	size_t n_cdi_specs;
	char **cdi_devices;
	size_t n_cdi_devices;
	/* This host has no /dev/fuse (containers in containers, some minimal VMs): the device
	 * madengine adds to every GPU run is left out (rm_context_host_devices). */
	int no_fuse;
	json_t *obj;	  /* every key, detected and given, for CONTEXT filters */
	json_t *rendered; /* private: text of obj's non-string scalars, for rm_context_get */
} rm_context;

/* Detects the host. sysfs_root is "/sys" normally (tests pass a fake tree); rocminfo and
 * nvidia-smi are tried only when use_tools is non-zero. */
int rm_context_detect(rm_context *ctx, const char *sysfs_root, int use_tools, rm_error *err);

/* Applies overrides from JSON text or "@path" (the file's text). `what` names the source in
 * messages ("--additional-context"). */
int rm_context_apply(rm_context *ctx, const char *json_or_file, const char *what, rm_error *err);
/* madengine's ctx_test key: the text of the file <root>/ctx_test, stripped, or "None" when
 * there is no such file (a symlink or a non-file counts as none, with a warning). Applied
 * after detection, before the context files and --additional-context, which may override it. */
int rm_context_ctx_test(rm_context *ctx, const char *root, rm_error *err);
/* Applies a JSON or YAML file of context keys (--additional-context-file). */
int rm_context_apply_file(rm_context *ctx, const char *path, rm_error *err);

/*
 * The keys of the context nobody reads: each one neither run_models, another module (known,
 * NULL-terminated: the launchers' and the tools' context keys) nor a Dockerfile CONTEXT line
 * of the models about to run (also NULL-terminated; either may be NULL) uses is warned about
 * by name (with the
 * closest known key when there is one); a madengine key run_models does not implement is
 * warned about with what it did there. k8s / kubernetes (madengine's Kubernetes
 * deployment) is refused, pointing at SLURM.
 */
int rm_context_check_keys(const rm_context *ctx, const char *const *known, const char *const *also,
			  rm_error *err);

/* The context value of key as a string (numbers rendered in decimal), or NULL. Returned
 * pointer lives as long as ctx. */
const char *rm_context_get(const rm_context *ctx, const char *key);

/* The device nodes the runner adds that this host lacks: sets ctx->no_fuse when there is no
 * /dev/fuse (under docker_device_root's folder when that key is given). Call once the context
 * is complete (after --additional-context); a render then leaves what is missing out. */
void rm_context_host_devices(rm_context *ctx);

void rm_context_release(rm_context *ctx);
/* Whether the host's CDI specs name the device name ("nvidia.com/gpu=0"). */
int rm_context_cdi_has(const rm_context *ctx, const char *name);

/* Dockerfile selection. */
typedef struct rm_dockerfile {
	char *path; /* e.g. "docker/smoke.ubuntu.amd.Dockerfile" */
	char *stem; /* file name without ".Dockerfile": "smoke.ubuntu.amd" */
	int kept;
	char *why_dropped; /* NULL when kept, else e.g. "CONTEXT gpu_vendor 'NVIDIA' != 'AMD'" */
	/* The base image the build uses: BASE_DOCKER when the file declares that ARG (its
	 * default, or the context's docker_build_arg BASE_DOCKER, which overrides it as in
	 * madengine), else the first FROM with ARG defaults (and docker_build_arg values for
	 * the ARGs declared) expanded; NULL if none. */
	char *base_image;
	json_t *context_req; /* parsed "# CONTEXT {...}" object, or NULL */
} rm_dockerfile;

/*
 * Lists the candidates of a model's dockerfile prefix in sorted order and marks each kept or
 * dropped. Candidates are madengine's `ls <prefix>.*` with a literal dot, Dockerfiles only:
 * the glob "<prefix>.*Dockerfile" ("docker/dummy" takes docker/dummy.Dockerfile and
 * docker/dummy.ubuntu.amd.Dockerfile, never docker/dummy_sglang.Dockerfile nor
 * docker/dummy2.Dockerfile). A candidate is kept when every key of its "# CONTEXT {...}"
 * line (within its first 5 lines, a Python-dict literal with single quotes) is absent from
 * the context or equal to the context's value. No candidate at all, or none kept, is an
 * error naming the prefix and, for each candidate, why it was dropped; *out is still filled
 * in that second case. A folder among the candidates, or a malformed CONTEXT line, is an
 * error naming it.
 *
 * Globs and file scans are cached per process and revalidated with stat() at each call
 * (see dockerfile.c), so selecting the candidates of 100,000 models sharing a few
 * Dockerfiles costs a few stat calls each; rm_dockerfiles_cache_clear frees the cache.
 */
int rm_dockerfiles_select(const char *prefix, const rm_context *ctx, rm_dockerfile **out, size_t *n,
			  rm_error *err);
void rm_dockerfiles_free(rm_dockerfile *v, size_t n);
void rm_dockerfiles_cache_clear(void);

/*
 * Converts a Python dict literal with string/number/bool/None values ({'a': 'b', "c": 1,
 * 'd': True}) into a JSON object. Returns NULL and fills err on anything else.
 */
json_t *rm_pydict_parse(const char *text, rm_error *err);

/* madengine's image name "ci-<model>_<stem>" with the model's '/' made '_' (so
 * "dummy2/model2" and docker/dummy.ubuntu.amd.Dockerfile give
 * "ci-dummy2_model2_dummy.ubuntu.amd"), sanitised into a valid Docker reference (lowercase;
 * characters outside [a-z0-9._-] become '_'). Caller frees. */
char *rm_image_name(const char *model_name, const char *stem);

#endif
