/*
 * Whether telemetry is readable on this host (run_models doctor): every GPU's sensors read
 * once, AMD through sysfs, NVIDIA through one nvidia-smi query.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "telemetry_internal.h"
#include "rm/util.h"

static const char *const what[5] = {"power", "temperature", "VRAM", "busy", "clock"};

static int probe_amd(const rm_context *ctx, const char *sysfs_root, char **detail, rm_error *err)
{
	struct rm_telem__amd *a = NULL;
	long *gpus = rm_xcalloc((size_t)ctx->n_gpus, sizeof(*gpus));
	rm_buf missing = RM_BUF_INIT(1 << 16);
	const char *power_file = NULL;
	int ret = -1, no_power = 0;

	for (long i = 0; i < ctx->n_gpus; i++)
		gpus[i] = i;
	if (rm_telem__amd_open(&a, sysfs_root, ctx, gpus, (size_t)ctx->n_gpus, err) < 0)
		goto out;
	for (size_t i = 0; i < (size_t)ctx->n_gpus; i++) {
		rm_telem_sample s;
		int has[5];
		const char *pw;
		double got[5];
		rm_telem__amd_has(a, i, has, &pw);
		rm_telem__amd_read(a, i, &s);
		got[0] = s.power_w, got[1] = s.temp_c, got[2] = s.vram_mib, got[3] = s.util_pct;
		got[4] = s.sclk_mhz;
		if (pw && !power_file)
			power_file = pw;
		for (int k = 0; k < 5; k++)
			if (isnan(got[k])) {
				rm_buf_addf(&missing, "%sGPU %zu %s", missing.len ? ", " : "", i,
					    what[k]);
				no_power |= k == 0;
			}
	}
	if (no_power) {
		rm_error_set(err, RM_ERR_IO,
			     "%ld AMD GPU(s), but not every one's power reads through sysfs "
			     "(unreadable: %s): runs would record no power, energy or "
			     "performance per watt",
			     ctx->n_gpus, rm_buf_str(&missing));
		goto out;
	}
	*detail = rm_xasprintf("%ld AMD GPU(s) through sysfs (hwmon %s)%s%s", ctx->n_gpus,
			       power_file ? power_file : "power",
			       missing.len ? "; unreadable: "
					   : ": power, temperature, VRAM, busy "
					     "and clock readable",
			       missing.len ? rm_buf_str(&missing) : "");
	ret = 0;
out:
	rm_telem__amd_close(a);
	rm_buf_release(&missing);
	free(gpus);
	return ret;
}

static int probe_nvidia(const rm_context *ctx, char **detail, rm_error *err)
{
	char *path = rm_which("nvidia-smi");
	char *argv[] = {path, RM_TELEM_NVSMI_QUERY, "--format=csv,noheader,nounits", NULL};
	rm_proc_out po = {0};
	rm_error old_err = RM_ERROR_INIT;
	size_t ok = 0, with_power = 0;
	int ret = -1;

	if (!path)
		return rm_error_set(err, RM_ERR_IO,
				    "%ld NVIDIA GPU(s), but nvidia-smi is not on PATH",
				    ctx->n_gpus);
	if (rm_proc_run(argv, NULL, 10, 1 << 16, &po, err) < 0)
		goto out;
	if (po.status != 0) { /* a driver before 535: the reasons' older name */
		argv[1] = RM_TELEM_NVSMI_QUERY_OLD;
		rm_proc_out_release(&po);
		memset(&po, 0, sizeof(po));
		if (rm_proc_run(argv, NULL, 10, 1 << 16, &po, &old_err) < 0) {
			*err = old_err;
			goto out;
		}
	}
	for (char *line = po.out; *line;) {
		char *end = line + strcspn(line, "\n");
		char save = *end;
		rm_telem_sample s;
		long gpu;
		*end = '\0';
		if (rm_telem_parse_nvsmi(line, &gpu, &s) == 0) {
			ok++;
			with_power += !isnan(s.power_w);
		}
		*end = save;
		line = *end ? end + 1 : end;
	}
	if (po.status != 0 || !ok) {
		char *first = rm_xstrndup(po.out, strcspn(po.out, "\n"));
		rm_error_set(err, RM_ERR_IO, "nvidia-smi %s: %s",
			     po.status ? "failed" : "printed no GPU", *first ? first : po.err);
		free(first);
		goto out;
	}
	if (with_power < ok) {
		rm_error_set(err, RM_ERR_IO,
			     "nvidia-smi reads %zu GPU(s), %zu without power.draw: runs would "
			     "record no power for them",
			     ok, ok - with_power);
		goto out;
	}
	*detail = rm_xasprintf("%zu NVIDIA GPU(s) through nvidia-smi (%s): power, temperature, "
			       "memory, utilization and SM clock readable",
			       ok, path);
	ret = 0;
out:
	rm_proc_out_release(&po);
	free(path);
	return ret;
}

int rm_telem_probe(const rm_context *ctx, const char *sysfs_root, char **detail, rm_error *err)
{
	*detail = NULL;
	if (!ctx->gpu_vendor || ctx->n_gpus <= 0)
		return rm_error_set(err, RM_ERR_INPUT, "no GPU on this host");
	if (!strcmp(ctx->gpu_vendor, "AMD"))
		return probe_amd(ctx, sysfs_root, detail, err);
	if (!strcmp(ctx->gpu_vendor, "NVIDIA"))
		return probe_nvidia(ctx, detail, err);
	return rm_error_set(err, RM_ERR_INPUT, "no telemetry for GPU vendor '%s'", ctx->gpu_vendor);
}
