/*
 * The GPU checks of `run_models doctor`: the GPUs and their device nodes, whether their
 * telemetry reads, ROCm and CUDA.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "rm/context.h"
#include "rm/doctor.h"
#include "rm/telemetry.h"
#include "rm/util.h"
#include "system_internal.h"

/* ---- GPUs ---- */

static int count_render_nodes(const char *dri)
{
	DIR *dir = opendir(dri);
	struct dirent *e;
	int n = 0;

	if (!dir)
		return 0;
	while ((e = readdir(dir)))
		if (rm_starts_with(e->d_name, "renderD"))
			n++;
	closedir(dir);
	return n;
}

static void check_amd(struct findings *fs, const rm_context *ctx, const char *sysfs,
		      const char *dev)
{
	char *kfd = rm_xasprintf("%s/kfd", dev);
	char *dri = rm_xasprintf("%s/dri", dev);
	char *what = rm_xasprintf("%ld AMD GPU(s), %s", ctx->n_gpus,
				  ctx->gpu_arch ? ctx->gpu_arch : "unknown architecture");
	rm_buf missing = RM_BUF_INIT(4096), nodes = RM_BUF_INIT(4096);
	char *denied = NULL;
	struct stat st;

	if (stat(kfd, &st) != 0) {
		/* Typical inside a container started without --device /dev/kfd: sysfs shows
		 * the topology, /dev does not have the node. */
		rm_system__doctor_add(
		    fs, RM_FINDING_FAIL, "gpus",
		    rm_xasprintf("%s in '%s/class/kfd': amdgpu driver loaded but '%s' missing",
				 what, sysfs, kfd),
		    rm_xstrdup(
			"inside a container, start it with --device /dev/kfd --device "
			"/dev/dri; on the host, reload the driver (sudo modprobe amdgpu) and "
			"look for amdgpu errors in dmesg"));
		goto out;
	}
	if (access(kfd, R_OK | W_OK) != 0 && errno == EACCES)
		denied = rm_xstrdup(kfd);
	if (ctx->n_render_nodes) {
		for (size_t i = 0; i < ctx->n_render_nodes; i++) {
			char *node = rm_xasprintf("%s/renderD%ld", dri, ctx->render_nodes[i]);
			int present = stat(node, &st) == 0;
			rm_buf *into = present ? &nodes : &missing;

			rm_buf_addf(into, "%srenderD%ld", into->len ? ", " : "",
				    ctx->render_nodes[i]);
			if (present && !denied && access(node, R_OK | W_OK) != 0 && errno == EACCES)
				denied = node;
			else
				free(node);
		}
	} else {
		int n = count_render_nodes(dri);
		if (n)
			rm_buf_addf(&nodes, "%d render node(s)", n);
		else
			rm_buf_addstr(&missing, "any renderD* node");
	}
	if (missing.len) {
		rm_system__doctor_add(
		    fs, RM_FINDING_FAIL, "gpus",
		    rm_xasprintf("%s, but '%s' lacks %s", what, dri, rm_buf_str(&missing)),
		    rm_xstrdup("inside a container, start it with --device /dev/dri; on the host, "
			       "check that udev created the DRM nodes (ls -l /dev/dri) and look "
			       "for amdgpu errors in dmesg"));
	} else if (denied) {
		/* dockerd opens the devices for containers, so runs still work; host tools
		 * (rocminfo, amd-smi) and GPU detection through them do not. */
		rm_system__doctor_add(
		    fs, RM_FINDING_WARN, "gpus",
		    rm_xasprintf("%s, but this user cannot open %s: rocminfo and amd-smi fail on "
				 "the host (containers still get the devices through dockerd)",
				 what, denied),
		    rm_xstrdup("sudo usermod -aG video,render $USER, then log in again"));
	} else {
		rm_system__doctor_add(
		    fs, RM_FINDING_OK, "gpus",
		    rm_xasprintf("%s; '%s' and %s present", what, kfd, rm_buf_str(&nodes)), NULL);
	}
out:
	free(denied);
	rm_buf_release(&missing);
	rm_buf_release(&nodes);
	free(what);
	free(dri);
	free(kfd);
}

/* Whether runs can sample the GPUs' power and the rest (rm/telemetry.h). */
static void check_telemetry(struct findings *fs, const rm_context *ctx, const rm_doctor_opts *o)
{
	rm_error err = RM_ERROR_INIT;
	char *detail = NULL;
	int amd = ctx->gpu_vendor && !strcmp(ctx->gpu_vendor, "AMD");

	if (!ctx->gpu_vendor || ctx->n_gpus <= 0) {
		rm_system__doctor_add(fs, RM_FINDING_OK, "telemetry",
				      rm_xstrdup("no GPU on this host: runs sample nothing"), NULL);
		return;
	}
	if (rm_telem_probe(ctx, o->sysfs_root, &detail, &err) == 0) {
		rm_system__doctor_add(fs, RM_FINDING_OK, "telemetry", detail, NULL);
		return;
	}
	rm_system__doctor_add(
	    fs, RM_FINDING_WARN, "telemetry", rm_xstrdup(rm_error_text(&err)),
	    amd ? rm_xasprintf("runs go on without the figures it lacks; check that amdgpu exposes "
			       "its sensors under '%s/class/drm/renderD*/device' (hwmon, "
			       "gpu_busy_percent; inside a container, give it the host's /sys)",
			       o->sysfs_root)
		: rm_xstrdup("runs go on without power figures; put the driver's nvidia-smi on "
			     "PATH and check that 'nvidia-smi --query-gpu=power.draw "
			     "--format=csv' prints a figure"));
}

void rm_system__check_gpus(struct findings *fs, const rm_doctor_opts *o)
{
	rm_context ctx;
	rm_error err = RM_ERROR_INIT;

	if (rm_context_detect(&ctx, o->sysfs_root, o->use_tools, &err) < 0) {
		rm_system__doctor_add(
		    fs, RM_FINDING_WARN, "gpus",
		    rm_xasprintf("cannot detect GPUs: %s", rm_error_text(&err)),
		    rm_xasprintf("check that '%s/class/kfd' is readable, or give the GPUs with "
				 "--additional-context",
				 o->sysfs_root));
		return;
	}
	if (ctx.gpu_vendor && !strcmp(ctx.gpu_vendor, "AMD")) {
		check_amd(fs, &ctx, o->sysfs_root, o->dev_root);
	} else if (ctx.gpu_vendor && !strcmp(ctx.gpu_vendor, "NVIDIA")) {
		char *what = rm_xasprintf("%ld NVIDIA GPU(s), %s", ctx.n_gpus,
					  ctx.gpu_arch ? ctx.gpu_arch : "unknown architecture");
		/* dockerd serves DeviceRequests through this hook; without it every GPU run
		 * fails at container start with "could not select device driver". */
		if (!rm_on_path("nvidia-container-runtime-hook") &&
		    !rm_on_path("nvidia-container-cli"))
			rm_system__doctor_add(
			    fs, RM_FINDING_WARN, "gpus",
			    rm_xasprintf("%s, but the NVIDIA Container Toolkit is not on PATH: "
					 "docker cannot hand GPUs to containers",
					 what),
			    rm_xstrdup("install nvidia-container-toolkit, then sudo nvidia-ctk "
				       "runtime configure --runtime=docker and restart docker"));
		else
			rm_system__doctor_add(fs, RM_FINDING_OK, "gpus", rm_xstrdup(what), NULL);
		free(what);
	} else if (ctx.gpu_vendor) {
		rm_system__doctor_add(fs, RM_FINDING_OK, "gpus",
				      rm_xasprintf("%ld %s GPU(s)", ctx.n_gpus, ctx.gpu_vendor),
				      NULL);
	} else {
		rm_system__doctor_add(
		    fs, RM_FINDING_WARN, "gpus",
		    rm_xasprintf("no GPU found (no GPU in '%s/class/kfd'%s)", o->sysfs_root,
				 o->use_tools ? ", none from rocminfo or nvidia-smi" : ""),
		    rm_xstrdup("only GPU-less models (e.g. tag smoke) can run; dry runs work with "
			       "--additional-context"));
	}
	check_telemetry(fs, &ctx, o);
	rm_context_release(&ctx);
}

/* ---- ROCm and CUDA ---- */

void rm_system__check_rocm(struct findings *fs, const rm_doctor_opts *o)
{
	const char *rocm = getenv("ROCM_PATH");
	rm_buf b = RM_BUF_INIT(4096);
	char *path, *v;

	if (!rocm || !*rocm)
		rocm = "/opt/rocm";
	path = rm_xasprintf("%s/.info/version", rocm);
	v = rm_system__doctor_read_line(path);
	if (v && *v)
		rm_buf_addf(&b, "ROCm %s in '%s'", v, rocm);
	free(v);
	free(path);
	if (rm_on_path("amd-smi")) {
		int status;
		char *line =
		    o->use_tools ? rm_system__doctor_tool_line("amd-smi version", &status) : NULL;
		rm_buf_addf(&b, "%samd-smi%s%s", b.len ? "; " : "", line ? ": " : " on PATH",
			    line ? line : "");
		free(line);
	}
	if (rm_on_path("rocminfo"))
		rm_buf_addf(&b, "%srocminfo on PATH", b.len ? "; " : "");
	/* Only the DKMS driver (amdgpu-dkms) has a version; the in-tree one does not. */
	path = rm_xasprintf("%s/module/amdgpu/version", o->sysfs_root);
	v = rm_system__doctor_read_line(path);
	if (v && *v)
		rm_buf_addf(&b, "%samdgpu driver %s", b.len ? "; " : "", v);
	free(v);
	free(path);
	if (!b.len)
		rm_buf_addstr(&b, "not installed (containers bring their own ROCm; a GPU host "
				  "needs only the amdgpu driver)");
	rm_system__doctor_add(fs, RM_FINDING_OK, "rocm", rm_buf_detach(&b), NULL);
}

/* CUDA toolkit version: version.json (11.1+), else the older version.txt. */
static char *cuda_toolkit_version(void)
{
	const char *home = getenv("CUDA_HOME");
	char *path, *v = NULL;
	json_t *j;

	if (!home || !*home)
		home = "/usr/local/cuda";
	path = rm_xasprintf("%s/version.json", home);
	j = json_load_file(path, 0, NULL);
	free(path);
	if (j) {
		v = rm_xstrdup(
		    json_string_value(json_object_get(json_object_get(j, "cuda"), "version")));
		json_decref(j);
		if (v)
			return v;
	}
	path = rm_xasprintf("%s/version.txt", home);
	v = rm_system__doctor_read_line(path);
	free(path);
	if (v && rm_starts_with(v, "CUDA Version ")) {
		char *t = rm_xstrdup(v + strlen("CUDA Version "));
		free(v);
		return t;
	}
	free(v);
	return NULL;
}

void rm_system__check_cuda(struct findings *fs, const rm_doctor_opts *o)
{
	rm_buf b = RM_BUF_INIT(4096);
	char *toolkit = cuda_toolkit_version();

	if (o->use_tools && rm_on_path("nvidia-smi")) {
		int status;
		char *drv = rm_system__doctor_tool_line(
		    "nvidia-smi --query-gpu=driver_version --format=csv,noheader", &status);
		if (status != 0) {
			/* nvidia-smi without a loaded driver prints "NVIDIA-SMI has failed ...". */
			rm_system__doctor_add(
			    fs, RM_FINDING_WARN, "cuda",
			    rm_xasprintf("nvidia-smi is installed but failed%s%s", drv ? ": " : "",
					 drv ? drv : ""),
			    rm_xstrdup(
				"run nvidia-smi and look for NVRM errors in dmesg; reinstall "
				"or load the NVIDIA driver"));
			free(drv);
			free(toolkit);
			return;
		}
		rm_buf_addf(&b, "NVIDIA driver %s", drv ? drv : "unknown");
		free(drv);
	} else if (rm_on_path("nvidia-smi")) {
		rm_buf_addstr(&b, "nvidia-smi on PATH");
	}
	if (toolkit)
		rm_buf_addf(&b, "%sCUDA toolkit %s", b.len ? "; " : "", toolkit);
	free(toolkit);
	if (!b.len)
		rm_buf_addstr(&b, "not installed");
	rm_system__doctor_add(fs, RM_FINDING_OK, "cuda", rm_buf_detach(&b), NULL);
}
