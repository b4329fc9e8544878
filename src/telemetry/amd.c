/*
 * AMD GPUs through sysfs: the files under each GPU's PCI device, found from its DRM render
 * node (<sysfs>/class/drm/renderD<N>/device), opened once and re-read with pread at offset 0
 * (sysfs regenerates an attribute on every read from its start), so a sample costs one
 * pread per file and no open, close or directory walk.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "telemetry_internal.h"
#include "rm/util.h"

#define MAX_TEMPS 8

#define METRICS_MAX 4096 /* gpu_metrics v1.6 is under 1 KiB */

struct amd_gpu {
	int power, vram, busy, sclk;
	int metrics; /* gpu_metrics: the throttle status */
	int temps[MAX_TEMPS];
	size_t n_temps;
	const char *power_name;
	double limit_w; /* hwmon power1_cap, read once; 0: none */
};

struct rm_telem__amd {
	size_t n;
	struct amd_gpu g[];
};

static int amd_open_ro(const char *dir, const char *name)
{
	char *p = rm_xasprintf("%s/%s", dir, name);
	int fd = open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	free(p);
	return fd;
}

/* The first hwmon* folder of the device (amdgpu registers one), or NULL. */
static char *amd_hwmon_dir(const char *dev)
{
	char *dir = rm_xasprintf("%s/hwmon", dev), *found = NULL;
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (rm_starts_with(e->d_name, "hwmon") &&
		    (!found || strcmp(e->d_name, found) < 0)) {
			free(found);
			found = rm_xstrdup(e->d_name);
		}
	if (d)
		closedir(d);
	if (found) {
		char *full = rm_xasprintf("%s/%s", dir, found);
		free(found);
		found = full;
	}
	free(dir);
	return found;
}

static void amd_open_temps(struct amd_gpu *g, const char *hw)
{
	DIR *d = opendir(hw);
	struct dirent *e;

	while (d && (e = readdir(d)) && g->n_temps < MAX_TEMPS)
		if (rm_starts_with(e->d_name, "temp") && rm_ends_with(e->d_name, "_input")) {
			int fd = amd_open_ro(hw, e->d_name);
			if (fd >= 0)
				g->temps[g->n_temps++] = fd;
		}
	if (d)
		closedir(d);
}

static double amd_read_value(int fd, double scale);

/* One attribute read once (a limit): its value, or 0 when it cannot be read. */
static double amd_read_once(const char *dir, const char *name, double scale)
{
	int fd = amd_open_ro(dir, name);
	double v = fd >= 0 ? amd_read_value(fd, scale) : NAN;

	if (fd >= 0)
		close(fd);
	return isfinite(v) && v > 0 ? v : 0;
}

static void amd_open_gpu(struct amd_gpu *g, const char *dev)
{
	char *hw = amd_hwmon_dir(dev);

	g->power = g->vram = g->busy = g->sclk = g->metrics = -1;
	if (hw) {
		if ((g->power = amd_open_ro(hw, "power1_average")) >= 0)
			g->power_name = "power1_average";
		else if ((g->power = amd_open_ro(hw, "power1_input")) >= 0)
			g->power_name = "power1_input";
		amd_open_temps(g, hw);
		g->limit_w = amd_read_once(hw, "power1_cap", 1e-6);
	}
	g->vram = amd_open_ro(dev, "mem_info_vram_used");
	g->busy = amd_open_ro(dev, "gpu_busy_percent");
	g->sclk = amd_open_ro(dev, "pp_dpm_sclk");
	g->metrics = amd_open_ro(dev, "gpu_metrics");
	free(hw);
}

static void amd_close_gpu(struct amd_gpu *g)
{
	int fds[] = {g->power, g->vram, g->busy, g->sclk, g->metrics};
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	for (size_t i = 0; i < g->n_temps; i++)
		close(g->temps[i]);
}

int rm_telem__amd_open(struct rm_telem__amd **out, const char *sysfs_root, const rm_context *ctx,
		       const long *gpus, size_t n, rm_error *err)
{
	const char *root = sysfs_root && *sysfs_root ? sysfs_root : "/sys";
	struct rm_telem__amd *a = rm_xcalloc(1, sizeof(*a) + n * sizeof(a->g[0]));

	for (size_t i = 0; i < n; i++) {
		struct amd_gpu *g = &a->g[i];
		char *dev;

		if (!ctx || gpus[i] < 0 || (size_t)gpus[i] >= ctx->n_render_nodes) {
			rm_error_set(err, RM_ERR_IO,
				     "GPU %ld has no DRM render node in '%s/class/kfd' (its KFD "
				     "topology node lacks drm_render_minor)",
				     gpus[i], root);
			goto fail;
		}
		dev = rm_xasprintf("%s/class/drm/renderD%ld/device", root,
				   ctx->render_nodes[gpus[i]]);
		amd_open_gpu(g, dev);
		a->n = i + 1;
		if (g->power < 0 && g->vram < 0 && g->busy < 0 && g->sclk < 0 && !g->n_temps) {
			rm_error_set(err, RM_ERR_IO,
				     "GPU %ld: no readable sensor under '%s' (hwmon/hwmon*/"
				     "power1_average, gpu_busy_percent, mem_info_vram_used, "
				     "pp_dpm_sclk)",
				     gpus[i], dev);
			free(dev);
			goto fail;
		}
		free(dev);
	}
	*out = a;
	return 0;
fail:
	rm_telem__amd_close(a);
	return -1;
}

/* The attribute's bytes (a NUL after them), or -1 (a missing file, or a read the driver
 * refused now). */
static ssize_t amd_read_bytes(int fd, char *buf, size_t size)
{
	ssize_t n;

	if (fd < 0)
		return -1;
	do
		n = pread(fd, buf, size - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return n;
}

static int amd_read_attr(int fd, char *buf, size_t size)
{
	return amd_read_bytes(fd, buf, size) < 0 ? -1 : 0;
}

/* Why the clock is held down, from gpu_metrics (nothing known when it does not read). */
static void amd_read_causes(struct amd_gpu *g, rm_telem_sample *s)
{
	char buf[METRICS_MAX];
	ssize_t n = amd_read_bytes(g->metrics, buf, sizeof(buf));

	s->causes = s->causes_known = 0;
	if (n > 0 && rm_telem_parse_gpu_metrics(buf, (size_t)n, &s->causes, &s->causes_known) < 0)
		s->causes = s->causes_known = 0;
}

static double amd_read_value(int fd, double scale)
{
	char buf[64];
	double v;

	if (amd_read_attr(fd, buf, sizeof(buf)) < 0 || rm_telem_parse_value(buf, scale, &v) < 0)
		return NAN;
	return v;
}

void rm_telem__amd_read(struct rm_telem__amd *a, size_t i, rm_telem_sample *s)
{
	struct amd_gpu *g = &a->g[i];
	char buf[1024];
	double mhz;

	s->power_w = amd_read_value(g->power, 1e-6);
	s->vram_mib = amd_read_value(g->vram, 1.0 / 1048576.0);
	s->util_pct = amd_read_value(g->busy, 1.0);
	s->temp_c = NAN;
	for (size_t k = 0; k < g->n_temps; k++) {
		double t = amd_read_value(g->temps[k], 1e-3);
		if (!isnan(t) && (isnan(s->temp_c) || t > s->temp_c))
			s->temp_c = t;
	}
	s->sclk_mhz =
	    amd_read_attr(g->sclk, buf, sizeof(buf)) == 0 && rm_telem_parse_sclk(buf, &mhz) == 0
		? mhz
		: NAN;
	s->power_limit_w = g->limit_w;
	amd_read_causes(g, s);
}

void rm_telem__amd_has(const struct rm_telem__amd *a, size_t i, int has[5], const char **power)
{
	const struct amd_gpu *g = &a->g[i];

	has[0] = g->power >= 0;
	has[1] = g->n_temps > 0;
	has[2] = g->vram >= 0;
	has[3] = g->busy >= 0;
	has[4] = g->sclk >= 0;
	*power = g->power_name;
}

void rm_telem__amd_close(struct rm_telem__amd *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n; i++)
		amd_close_gpu(&a->g[i]);
	free(a);
}
