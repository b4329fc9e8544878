/*
 * What a run's host was (rm/doctor.h rm_doctor_provenance), for run.json, the results
 * database and `report compare`: groups of name -> value text.
 *
 *   host                 run_models' version, hostname, kernel (uname), OS (os-release's
 *                        PRETTY_NAME), CPU model and count (/proc/cpuinfo), the models
 *                        folder's git commit and whether it had changes
 *   driver and firmware  the GPU driver, ROCm and CUDA on the host, and per GPU used
 *                        (gpu<N>.*): product, UUID, serial, VBIOS, PCI bus, firmware.
 *                        NVIDIA: one nvidia-smi --query-gpu (name, uuid, serial,
 *                        vbios_version, driver_version, inforom.img, pci.bus_id; nvidia-smi(1)).
 *                        AMD: the device's sysfs files product_name, unique_id,
 *                        serial_number, vbios_version and the files of fw_version/ (amdgpu's "Misc"
 *                        and "GPU Firmware Information" documentation), the DKMS driver's
 *                        /sys/module/amdgpu/version, else the kernel's.
 *
 * No file it reads is required: what cannot be read is left out.
 */
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "system_internal.h"
#include "rm/util.h"
#include "rm/version.h"

static void put(json_t *g, const char *name, const char *value)
{
	if (value && *value)
		json_object_set_new(g, name, json_string(value));
}

static void put_own(json_t *g, const char *name, char *value)
{
	put(g, name, value);
	free(value);
}

/* "Intel(R) Xeon(R) Platinum 8480C x 224": /proc/cpuinfo's first model name, its count. */
static char *cpu_model(const char *proc)
{
	char *path = rm_xasprintf("%s/cpuinfo", proc), *text = NULL, *model = NULL;
	rm_error err = RM_ERROR_INIT;
	size_t n = 0;

	if (rm_read_file(path, (size_t)8 << 20, &text, NULL, &err) == 0)
		for (char *l = text; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0)) {
			size_t len = strcspn(l, "\n");
			if (strncmp(l, "model name", 10) && strncmp(l, "processor", 9))
				continue;
			if (!strncmp(l, "processor", 9)) {
				n++;
				continue;
			}
			if (!model) {
				const char *c = memchr(l, ':', len);
				if (c)
					model = rm_xstrndup(c + 2, len - (size_t)(c + 2 - l));
			}
		}
	free(text);
	free(path);
	if (!model)
		return NULL;
	char *r = rm_xasprintf("%s x %zu", model, n);
	free(model);
	return r;
}

/* os-release's PRETTY_NAME, unquoted. */
static char *os_name(void)
{
	char *text = NULL, *r = NULL;
	rm_error err = RM_ERROR_INIT;

	if (rm_read_file("/etc/os-release", 1 << 16, &text, NULL, &err) < 0)
		return NULL;
	for (char *l = text; *l && !r; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0))
		if (!strncmp(l, "PRETTY_NAME=", 12)) {
			size_t len = strcspn(l + 12, "\n");
			const char *v = l + 12;
			if (len >= 2 && v[0] == '"' && v[len - 1] == '"')
				v++, len -= 2;
			r = rm_xstrndup(v, len);
		}
	free(text);
	return r;
}

/* Whether the models folder has changes git tracks: "yes", "no", or NULL (not git). */
static const char *git_dirty(const char *root)
{
	char *argv[] = {"git",	  "-C",		 (char *)(root ? root : "."),
			"status", "--porcelain", "--untracked-files=no",
			NULL};
	rm_proc_out po = {0};
	rm_error err = RM_ERROR_INIT;
	const char *r = NULL;

	if (rm_proc_run(argv, NULL, 10, 1 << 16, &po, &err) == 0 && po.status == 0)
		r = po.out[0] ? "yes" : "no";
	rm_proc_out_release(&po);
	return r;
}

static void host_group(json_t *g, const rm_provenance_opts *o)
{
	struct utsname u;
	char host[256] = "";

	put(g, "run_models", RM_VERSION);
	if (gethostname(host, sizeof(host) - 1) == 0)
		put(g, "hostname", host);
	if (uname(&u) == 0) {
		put(g, "kernel", u.release);
		put(g, "kernel_build", u.version);
		put(g, "arch", u.machine);
	}
	put_own(g, "os", os_name());
	put_own(g, "cpu", cpu_model(o->proc_root));
	put_own(g, "models_commit", rm_git_commit(o->root));
	put(g, "models_dirty", git_dirty(o->root));
}

static int used(const rm_provenance_opts *o, long gpu)
{
	for (size_t i = 0; o->gpus && i < o->n_gpus; i++)
		if (o->gpus[i] == gpu)
			return 1;
	return !o->gpus;
}

/* NVIDIA: one query for every GPU; the ones the run uses are kept. */
static void nvidia_gpus(json_t *g, const rm_provenance_opts *o)
{
	static const char *const names[] = {"product",		"uuid",	  "serial", "vbios", NULL,
					    "firmware.inforom", "pci_bus"};
	char *argv[] = {"nvidia-smi",
			"--query-gpu=index,name,uuid,serial,vbios_version,driver_version,"
			"inforom.img,pci.bus_id",
			"--format=csv,noheader", NULL};
	rm_proc_out po = {0};
	rm_error err = RM_ERROR_INIT;

	if (rm_proc_run(argv, NULL, 20, 1 << 20, &po, &err) < 0 || po.status != 0)
		goto out;
	for (char *line = po.out, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		char *f[8], *p = line;
		size_t n = 0;
		long gpu;
		if ((nl = strchr(line, '\n')))
			*nl = '\0';
		for (; n < 8 && p; n++) {
			f[n] = p;
			if ((p = strstr(p, ", ")))
				*p = '\0', p += 2;
		}
		if (n != 8 || rm_parse_long(f[0], 0, 4095, &gpu) < 0 || !used(o, gpu))
			continue;
		put(g, "driver", f[5]);
		for (size_t k = 0; k < 7; k++) {
			char *key;
			if (!names[k]) /* the driver is the host's, above */
				continue;
			key = rm_xasprintf("gpu%ld.%s", gpu, names[k]);
			if (f[k + 1][0] != '[')
				put(g, key, f[k + 1]);
			free(key);
		}
	}
out:
	rm_proc_out_release(&po);
}

static char *read_line_at(const char *dir, const char *name)
{
	char *path = rm_xasprintf("%s/%s", dir, name), *v = rm_system__doctor_read_line(path);
	free(path);
	return v;
}

/* AMD: each used GPU's files under its render node's device. */
static void amd_gpus(json_t *g, const rm_provenance_opts *o)
{
	static const char *const files[][2] = {{"product_name", "product"},
					       {"unique_id", "uuid"},
					       {"serial_number", "serial"},
					       {"vbios_version", "vbios"}};
	char *mod = rm_xasprintf("%s/module/amdgpu", o->sysfs_root);
	char *drv = read_line_at(mod, "version");
	struct utsname u;

	if (!drv && uname(&u) == 0)
		drv = rm_xasprintf("in-tree (kernel %s)", u.release);
	put_own(g, "driver", drv);
	free(mod);
	for (size_t i = 0; o->ctx && i < o->ctx->n_render_nodes; i++) {
		char *dev, *fw;
		DIR *d;
		struct dirent *e;
		if (!used(o, (long)i))
			continue;
		dev = rm_xasprintf("%s/class/drm/renderD%ld/device", o->sysfs_root,
				   o->ctx->render_nodes[i]);
		for (size_t k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
			char *key = rm_xasprintf("gpu%zu.%s", i, files[k][1]);
			put_own(g, key, read_line_at(dev, files[k][0]));
			free(key);
		}
		fw = rm_xasprintf("%s/fw_version", dev);
		d = opendir(fw);
		while (d && (e = readdir(d)))
			if (e->d_name[0] != '.') {
				char *key = rm_xasprintf("gpu%zu.firmware.%s", i, e->d_name);
				put_own(g, key, read_line_at(fw, e->d_name));
				free(key);
			}
		if (d)
			closedir(d);
		free(fw);
		free(dev);
	}
}

json_t *rm_doctor_provenance(const rm_provenance_opts *o)
{
	json_t *all = json_object(), *host = json_object(), *drv = json_object();
	const char *vendor = o->ctx ? o->ctx->gpu_vendor : NULL;
	const char *rocm = getenv("ROCM_PATH");
	char *path;

	host_group(host, o);
	if (vendor && !strcmp(vendor, "NVIDIA")) {
		if (o->use_tools)
			nvidia_gpus(drv, o);
		put(drv, "cuda", o->ctx->hip_version);
	} else if (vendor && !strcmp(vendor, "AMD")) {
		amd_gpus(drv, o);
		put(drv, "hip", o->ctx->hip_version);
	}
	path = rm_xasprintf("%s/.info/version", rocm && *rocm ? rocm : "/opt/rocm");
	put_own(drv, "rocm", rm_system__doctor_read_line(path));
	free(path);
	json_object_set_new(all, "host", host);
	json_object_set_new(all, "driver and firmware", drv);
	return all;
}
