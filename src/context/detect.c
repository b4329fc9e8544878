/*
 * Detection of the host's GPUs (see include/rm/context.h): the kernel's KFD topology in
 * sysfs first, then rocminfo, then nvidia-smi.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "context_internal.h"
#include "rm/context.h"
#include "rm/util.h"

/* ---- detection ---- */

/* How long a detection tool (rocminfo, nvidia-smi, amd-smi, hipconfig, nvcc) may take: a
 * driver in a bad state makes them hang, and detection must not hang the run with it. */
#define TOOL_TIMEOUT_S 10.0

/*
 * A small file read without blocking: a FIFO or a device planted where a sysfs file is
 * expected (a KFD "properties" that blocks) is not read at all. Returns a FILE or NULL.
 */
static FILE *open_regular(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	FILE *f;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		rm_warn("'%s' is not a regular file: GPU detection does not read it", path);
		close(fd);
		return NULL;
	}
	if (!(f = fdopen(fd, "r")))
		close(fd);
	return f;
}

/*
 * What a detection tool prints on stdout, run without a shell through rm_proc_capture: at most
 * TOOL_TIMEOUT_S seconds, stopped at once by a Ctrl-C; a tool that hangs is named once and
 * detection goes on without it. NULL when it is not on PATH, failed or did not finish.
 */
static char *tool_output(char *const argv[])
{
	rm_proc_out po;
	rm_error err = RM_ERROR_INIT;
	char *out = NULL;

	if (!rm_on_path(argv[0]))
		return NULL;
	if (rm_proc_capture(argv, TOOL_TIMEOUT_S, (size_t)1 << 20, &po, &err) == 0 &&
	    po.status == 0) {
		out = po.out;
		po.out = NULL;
	} else if (po.timed_out) {
		rm_warn("'%s' did not answer within %.0f s (a driver in a bad state?); it was "
			"stopped and GPU detection goes on without it",
			argv[0], TOOL_TIMEOUT_S);
	}
	rm_proc_out_release(&po);
	return out;
}

/* The next line of text (NUL-terminated in place), advancing *cur; NULL at the end. */
static char *next_line(char **cur)
{
	char *l = *cur, *nl;

	if (!l || !*l)
		return NULL;
	nl = strchr(l, '\n');
	*cur = nl ? nl + 1 : l + strlen(l);
	if (nl)
		*nl = '\0';
	return l;
}

static char *arch_from_target_version(long v)
{
	long major = v / 10000, minor = (v / 100) % 100, step = v % 100;

	return rm_xasprintf("gfx%ld%lx%lx", major, minor, step);
}

struct kfd_node {
	long id;
	long simd_count;
	long gfx_target_version;
	long drm_render_minor;
};

static void read_properties(const char *path, struct kfd_node *n)
{
	char line[512];
	FILE *f = open_regular(path);

	n->simd_count = 0;
	n->gfx_target_version = 0;
	n->drm_render_minor = -1;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *sp = strchr(line, ' ');
		long v;

		if (!sp)
			continue;
		*sp = '\0';
		if (rm_parse_long(sp + 1, LONG_MIN, LONG_MAX, &v))
			continue;
		if (strcmp(line, "simd_count") == 0)
			n->simd_count = v;
		else if (strcmp(line, "gfx_target_version") == 0)
			n->gfx_target_version = v;
		else if (strcmp(line, "drm_render_minor") == 0)
			n->drm_render_minor = v;
	}
	fclose(f);
}

static int cmp_node(const void *a, const void *b)
{
	const struct kfd_node *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

/* AMD GPUs from the KFD topology: each node is a CPU (simd_count 0) or a GPU. */
void rm_context__detect_kfd(rm_context *ctx, const char *sysfs_root)
{
	char *dir = rm_xasprintf("%s/class/kfd/kfd/topology/nodes", sysfs_root);
	struct kfd_node *nodes = NULL;
	size_t n = 0, n_gpus = 0, n_render = 0;
	DIR *d = opendir(dir);
	struct dirent *de;

	while (d && (de = readdir(d))) {
		long id;
		char *props;

		if (rm_parse_long(de->d_name, 0, LONG_MAX, &id))
			continue;
		nodes = rm_xrealloc(nodes, (n + 1) * sizeof(*nodes));
		nodes[n].id = id;
		props = rm_xasprintf("%s/%s/properties", dir, de->d_name);
		read_properties(props, &nodes[n]);
		free(props);
		n++;
	}
	if (d)
		closedir(d);
	if (n)
		qsort(nodes, n, sizeof(*nodes), cmp_node);

	ctx->render_nodes = rm_xcalloc(n + 1, sizeof(*ctx->render_nodes));
	for (size_t i = 0; i < n; i++) {
		char *arch;

		if (nodes[i].simd_count <= 0 || nodes[i].gfx_target_version <= 0)
			continue;
		arch = arch_from_target_version(nodes[i].gfx_target_version);
		if (!ctx->gpu_arch) {
			ctx->gpu_arch = arch;
			arch = NULL;
		} else if (strcmp(ctx->gpu_arch, arch) != 0) {
			rm_warn("GPU node %ld is %s but GPU 0 is %s; using %s", nodes[i].id, arch,
				ctx->gpu_arch, ctx->gpu_arch);
		}
		free(arch);
		if (nodes[i].drm_render_minor >= 0)
			ctx->render_nodes[n_render++] = nodes[i].drm_render_minor;
		n_gpus++;
	}
	/* Render nodes are only useful when every GPU has one (they are used by position). */
	ctx->n_render_nodes = n_render == n_gpus ? n_render : 0;
	if (n_gpus) {
		ctx->gpu_vendor = rm_xstrdup("AMD");
		ctx->n_gpus = (long)n_gpus;
	}
	free(nodes);
	free(dir);
}

/* rocminfo lists each GPU agent with a "Name: gfx942" line (CPU agents carry the CPU's
 * model name, ISAs start with "amdgcn-"). */
void rm_context__detect_rocminfo(rm_context *ctx)
{
	char *const argv[] = {"rocminfo", NULL};
	char *text = tool_output(argv), *cur = text, *line;
	long count = 0;

	if (!text)
		return;
	while ((line = next_line(&cur))) {
		char *s = rm_trim(line);

		if (!rm_starts_with(s, "Name:"))
			continue;
		s = rm_trim(s + 5);
		if (!rm_starts_with(s, "gfx"))
			continue;
		if (!ctx->gpu_arch)
			ctx->gpu_arch = rm_xstrdup(s);
		count++;
	}
	free(text);
	if (count == 0) {
		free(ctx->gpu_arch);
		ctx->gpu_arch = NULL;
		return;
	}
	ctx->gpu_vendor = rm_xstrdup("AMD");
	ctx->n_gpus = count;
}

/* "NVIDIA H100 80GB HBM3, 9.0" per GPU; compute capability 9.0 is sm_90. */
void rm_context__detect_nvidia_smi(rm_context *ctx)
{
	char *const argv[] = {"nvidia-smi", "--query-gpu=name,compute_cap", "--format=csv,noheader",
			      NULL};
	char *text = tool_output(argv), *cur = text, *line;
	long count = 0;

	if (!text)
		return;
	while ((line = next_line(&cur))) {
		char *s = rm_trim(line), *comma = strrchr(s, ','), *dot;
		long major, minor;

		if (!*s || !comma)
			continue;
		count++;
		if (ctx->gpu_arch)
			continue;
		*comma = '\0';
		if (!ctx->gpu_product_name && *rm_trim(s))
			ctx->gpu_product_name = rm_xstrdup(rm_trim(s));
		s = rm_trim(comma + 1);
		dot = strchr(s, '.');
		if (!dot)
			continue;
		*dot = '\0';
		if (rm_parse_long(s, 0, 1000, &major) == 0 &&
		    rm_parse_long(dot + 1, 0, 1000, &minor) == 0)
			ctx->gpu_arch = rm_xasprintf("sm_%ld%ld", major, minor);
	}
	free(text);
	if (count == 0) {
		free(ctx->gpu_arch);
		ctx->gpu_arch = NULL;
		free(ctx->gpu_product_name);
		ctx->gpu_product_name = NULL;
		return;
	}
	ctx->gpu_vendor = rm_xstrdup("NVIDIA");
	ctx->n_gpus = count;
}

/* ---- the GPU's product name and the HIP (ROCm or CUDA) version ---- */

/* The first line of a small file, trimmed, or NULL. */
static char *first_line(const char *path)
{
	char buf[4096], *line = NULL;
	FILE *f = open_regular(path);

	if (!f)
		return NULL;
	if (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\r\n")] = '\0';
		line = *rm_trim(buf) ? rm_xstrdup(rm_trim(buf)) : NULL;
	}
	fclose(f);
	return line;
}

/* What follows the first `key` in a tool's output up to the end of that line or a blank
 * ("MARKET_NAME:" of amd-smi, "release " of nvcc, "CUDA Version: " of nvidia-smi), trimmed
 * (a trailing ',' dropped); with key "" the first non-empty line. NULL when there is none. */
static char *tool_value(char *const argv[], const char *key, int word)
{
	char *text = tool_output(argv), *cur = text, *line, *found = NULL;

	while (text && !found && (line = next_line(&cur))) {
		char *s = *key ? strstr(line, key) : rm_trim(line);
		if (!s)
			continue;
		s = rm_trim(s + strlen(key));
		if (word)
			s[strcspn(s, " \t,")] = '\0';
		found = *s ? rm_xstrdup(s) : NULL;
	}
	free(text);
	return found;
}

/* "6.4.1-123" -> "6.4": madengine's MAD_SYSTEM_HIP_VERSION is major.minor. */
static char *major_minor(char *v)
{
	char *dot;

	if (!v)
		return NULL;
	dot = strchr(v, '.');
	if (dot) {
		size_t n = strspn(dot + 1, "0123456789");
		dot[1 + n] = '\0';
	}
	return v;
}

/* AMD: the product name of GPU 0 from its DRM device (sysfs product_name), else amd-smi's
 * MARKET_NAME (madengine's source); the ROCm version from <ROCM_PATH or /opt/rocm>/.info/
 * version, else hipconfig. NVIDIA: nvidia-smi's name of GPU 0 (detect_nvidia_smi) and the
 * CUDA version nvcc or nvidia-smi reports. What cannot be found stays NULL (the container
 * then gets an empty value, as when madengine's tools print nothing). */
void rm_context__detect_facts(rm_context *ctx, const char *sysfs_root, int use_tools)
{
	if (ctx->gpu_vendor && !strcmp(ctx->gpu_vendor, "AMD")) {
		const char *rocm = getenv("ROCM_PATH");
		char *path;

		if (!ctx->gpu_product_name && ctx->n_render_nodes) {
			path = rm_xasprintf("%s/class/drm/renderD%ld/device/product_name",
					    sysfs_root, ctx->render_nodes[0]);
			ctx->gpu_product_name = first_line(path);
			free(path);
		}
		if (!ctx->gpu_product_name && use_tools) {
			char *const argv[] = {"amd-smi", "static", "-g", "0", NULL};
			ctx->gpu_product_name = tool_value(argv, "MARKET_NAME:", 0);
		}
		if (!ctx->hip_version) {
			path = rm_xasprintf("%s/.info/version", rocm && *rocm ? rocm : "/opt/rocm");
			ctx->hip_version = major_minor(first_line(path));
			free(path);
		}
		if (!ctx->hip_version && use_tools) {
			char *const argv[] = {"hipconfig", "--version", NULL};
			ctx->hip_version = major_minor(tool_value(argv, "", 0));
		}
	} else if (ctx->gpu_vendor && !strcmp(ctx->gpu_vendor, "NVIDIA") && use_tools) {
		char *const nvcc[] = {"nvcc", "--version", NULL}, *const smi[] = {"nvidia-smi",
										  NULL};
		if (!ctx->hip_version)
			ctx->hip_version = major_minor(tool_value(nvcc, "release ", 1));
		if (!ctx->hip_version)
			ctx->hip_version = major_minor(tool_value(smi, "CUDA Version: ", 1));
	}
}

/* ---- the folder's ctx_test ---- */

int rm_context_ctx_test(rm_context *ctx, const char *root, rm_error *err)
{
	char *path = rm_xasprintf("%s/ctx_test", root && *root ? root : ".");
	char buf[256];
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	ssize_t n = -1;
	json_t *obj;
	char *text;
	int ret;

	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		n = read(fd, buf, sizeof(buf) - 1);
	else if (fd >= 0 || errno != ENOENT)
		rm_warn("'%s' is not a readable file: ctx_test is None", path);
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	/* madengine's get_ctx_test: the file's text stripped, or None without the file. */
	obj = json_pack("{s:s}", "ctx_test", n >= 0 ? rm_trim(buf) : "None");
	if (!obj || !json_string_value(json_object_get(obj, "ctx_test"))) {
		/* not UTF-8 */
		json_decref(obj);
		obj = json_pack("{s:s}", "ctx_test", "None");
	}
	text = json_dumps(obj, JSON_COMPACT);
	ret = rm_context_apply(ctx, text, path, err);
	free(text);
	json_decref(obj);
	free(path);
	return ret;
}
