/*
 * The context's keys nobody reads (see rm_context_check_keys in include/rm/context.h): a
 * typo or a madengine key run_models does not implement must not pass for a setting that
 * took effect ("am I profiling? on Kubernetes?").
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "rm/context.h"
#include "rm/util.h"

/* Every key the context module and the runner read (the launchers' and the tools' keys come
 * from those modules, through rm_context_check_keys' known). */
static const char *const known_keys[] = {"gpu_vendor",
					 "guest_os",
					 "MAD_SYSTEM_GPU_ARCHITECTURE",
					 "MAD_SYSTEM_NGPUS",
					 "MAD_SYSTEM_GPU_PRODUCT_NAME",
					 "MAD_SYSTEM_HIP_VERSION",
					 "docker_env_vars",
					 "env_vars",
					 "docker_build_arg",
					 "docker_mounts",
					 "docker_gpus",
					 "docker_cpus",
					 "model_args",
					 "docker_device_root",
					 "ctx_test",
					 "MAD_CONTAINER_IMAGE",
					 "data",
					 NULL};

/* madengine keys that do nothing here, and what they did there. */
static const struct {
	const char *key, *what;
} madengine_only[] = {
    {"rocenv_mode", "the depth of madengine's rocEnvTool report; run_models has "
		    "--sys-env-details (run_models doctor's findings)"},
    {"gen_sys_env_details", "madengine's rocEnvTool report; use --sys-env-details"},
    {"generate_sys_env_details", "madengine's rocEnvTool report; use --sys-env-details"},
    {"log_error_pattern_scan", "madengine's scan of the log for error words; run_models "
			       "judges a run by its exit code and its performance line"},
    {"log_error_patterns", "madengine's scan of the log for error words; run_models "
			   "judges a run by its exit code and its performance line"},
    {"log_error_benign_patterns", "madengine's scan of the log for error words; run_models "
				  "judges a run by its exit code and its performance line"},
    {"MAD_ROCM_PATH", "madengine's host ROCm root; run_models reads ROCM_PATH (default "
		      "/opt/rocm) for MAD_SYSTEM_HIP_VERSION"},
    {"rocm_path", "madengine's host ROCm root; run_models reads ROCM_PATH (default /opt/rocm) "
		  "for MAD_SYSTEM_HIP_VERSION"},
    {"host_os", "detected by madengine for its own use; run_models has no use for it"},
    {"numa_balancing", "detected by madengine; run_models doctor checks NUMA balancing"},
    {"gpu_renderDs", "madengine's render nodes; run_models reads them from sysfs (give "
		     "docker_gpus to choose GPUs)"},
    {"gpus_per_node", "madengine's GPU count override; give MAD_SYSTEM_NGPUS, docker_gpus, or "
		      "slurm.gpus_per_node"},
    {NULL, NULL}};

static int key_listed(const char *const *list, const char *key)
{
	for (; list && *list; list++)
		if (!strcmp(*list, key))
			return 1;
	return 0;
}

/* Levenshtein distance of two short keys (case-insensitive), capped: enough to tell a
 * typo from another word. */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), *row, best;

	if (la > 64 || lb > 64)
		return 99;
	row = rm_xcalloc(lb + 1, sizeof(*row));
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			int same = (a[i - 1] | 0x20) == (b[j - 1] | 0x20);
			size_t v = diag + !same;
			if (row[j] + 1 < v)
				v = row[j] + 1;
			if (row[j - 1] + 1 < v)
				v = row[j - 1] + 1;
			row[j] = v;
			diag = up;
		}
	}
	best = row[lb];
	free(row);
	return best;
}

/* The known key closest to key (at most 2 edits, or 3 for long keys), or NULL. */
static const char *closest(const char *key, const char *const *known)
{
	const char *best = NULL;
	size_t best_d = strlen(key) > 10 ? 3 : 2;

	for (size_t i = 0; known_keys[i]; i++) {
		size_t d = distance(key, known_keys[i]);
		if (d <= best_d) {
			best = known_keys[i];
			best_d = d;
		}
	}
	for (; known && *known; known++) {
		size_t d = distance(key, *known);
		if (d <= best_d) {
			best = *known;
			best_d = d;
		}
	}
	return best;
}

int rm_context_check_keys(const rm_context *ctx, const char *const *known, const char *const *also,
			  rm_error *err)
{
	const char *key;
	json_t *v;

	if (!ctx || !ctx->obj)
		return 0;
	json_object_foreach (ctx->obj, key, v) {
		const char *near;
		size_t i;

		if (!strcmp(key, "k8s") || !strcmp(key, "kubernetes"))
			return rm_error_set(
			    err, RM_ERR_INPUT,
			    "context key '%s': run_models does not deploy to Kubernetes "
			    "(madengine's "
			    "'%s' deployment); run on a cluster through SLURM with the 'slurm' key "
			    "(docs/scale-out.md), or leave '%s' out to run on this host",
			    key, key, key);
		if (key_listed(known_keys, key) || key_listed(known, key) || key_listed(also, key))
			continue;
		for (i = 0; madengine_only[i].key; i++)
			if (!strcmp(madengine_only[i].key, key))
				break;
		if (madengine_only[i].key) {
			rm_warn("context key '%s' has no effect in run_models (%s)", key,
				madengine_only[i].what);
			continue;
		}
		near = closest(key, known);
		if (near)
			rm_warn(
			    "context key '%s' is not one run_models knows, and no Dockerfile "
			    "CONTEXT line of the selected models names it: it has no effect (did "
			    "you mean '%s'?)",
			    key, near);
		else
			rm_warn("context key '%s' is not one run_models knows, and no Dockerfile "
				"CONTEXT line of the selected models names it: it has no effect "
				"(known keys: docs/compat.md)",
				key);
	}
	return 0;
}
