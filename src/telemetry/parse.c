/*
 * The texts telemetry reads: sysfs attributes and nvidia-smi's CSV lines. Pure.
 *
 * nvidia-smi's CSV (nvidia-smi(1), "--format=csv" with "noheader" and "nounits"; e.g.
 * https://manpages.ubuntu.com/manpages/plucky/man1/nvidia-smi.1.html, driver 550): one line
 * per GPU per loop, the queried fields in order separated by ", ", numbers with their unit
 * after a space unless nounits ("380.42 W", "1965 MHz", "100 %", "45000 MiB"), and
 * "[N/A]" or "[Not Supported]" for what a GPU does not report.
 *
 * amdgpu's gpu_metrics (Documentation/gpu/amdgpu/thermal.rst, "gpu_metrics"): a binary
 * struct whose first four bytes are metrics_table_header (structure_size, format_revision,
 * content_revision); the layouts are struct gpu_metrics_v1_0 .. v1_6 in
 * drivers/gpu/drm/amd/include/kgd_pp_interface.h (torvalds/linux), the bit meanings in
 * drivers/gpu/drm/amd/pm/swsmu/inc/amdgpu_smu.h (SMU_THROTTLER_*_BIT) and, for MI300,
 * drivers/gpu/drm/amd/pm/swsmu/inc/pmfw_if/smu_v13_0_6_pmfw.h (THROTTLER_*_BIT).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rm/telemetry.h"
#include "rm/util.h"

#define BIT(c) (1u << (c))
/* what nvidia-smi's reasons can say (rm_telem_nvidia_causes) */
#define RM_TELEM_NVIDIA_CAUSES                                                                     \
	(BIT(RM_THROTTLE_POWER_CAP) | BIT(RM_THROTTLE_SYNC_BOOST) | BIT(RM_THROTTLE_THERMAL) |     \
	 BIT(RM_THROTTLE_HW_SLOWDOWN) | BIT(RM_THROTTLE_POWER_BRAKE) |                             \
	 BIT(RM_THROTTLE_CLOCK_SETTING) | BIT(RM_THROTTLE_OTHER))

int rm_telem_parse_value(const char *text, double scale, double *out)
{
	char buf[64];
	size_t n = strcspn(text, "\n");
	long v;

	if (n >= sizeof(buf))
		return -1;
	memcpy(buf, text, n);
	buf[n] = '\0';
	if (rm_parse_long(buf, -(1L << 62), 1L << 62, &v) < 0)
		return -1;
	*out = (double)v * scale;
	return 0;
}

int rm_telem_parse_sclk(const char *text, double *mhz)
{
	for (const char *line = text; *line;) {
		const char *end = line + strcspn(line, "\n");
		const char *star = memchr(line, '*', (size_t)(end - line));
		const char *colon = memchr(line, ':', (size_t)(end - line));

		if (star && colon && colon < star) {
			char *stop;
			double v = strtod(colon + 1, &stop);
			/* "2100Mhz *": a number right after the colon, a unit, then the star */
			if (stop != colon + 1 && isfinite(v) && v >= 0 &&
			    !strncasecmp(stop, "mhz", 3)) {
				*mhz = v;
				return 0;
			}
		}
		line = *end ? end + 1 : end;
	}
	return -1;
}

/* A field without its blanks into buf (NUL-terminated); -1 when empty or too long. */
static int nvsmi_trim(const char *f, size_t len, char *buf, size_t size)
{
	while (len && (*f == ' ' || *f == '\t'))
		f++, len--;
	while (len && (f[len - 1] == ' ' || f[len - 1] == '\t' || f[len - 1] == '\r'))
		len--;
	if (len == 0 || len >= size)
		return -1;
	memcpy(buf, f, len);
	buf[len] = '\0';
	return 0;
}

/* One field: a number with an optional unit, or a placeholder of nvidia-smi's (NAN). */
static int nvsmi_field(const char *f, size_t len, double *out)
{
	char buf[64], *stop;
	double v;

	if (nvsmi_trim(f, len, buf, sizeof(buf)) < 0)
		return -1;
	if (buf[0] == '[') { /* [N/A], [Not Supported], [Unknown Error], ... */
		*out = NAN;
		return 0;
	}
	v = strtod(buf, &stop);
	if (stop == buf || !isfinite(v))
		return -1;
	while (*stop == ' ')
		stop++;
	/* only the units of the fields asked for */
	if (*stop && strcmp(stop, "W") && strcmp(stop, "MiB") && strcmp(stop, "%") &&
	    strcmp(stop, "MHz") && strcmp(stop, "C"))
		return -1;
	*out = v;
	return 0;
}

/* clocks_event_reasons.active: "0x0000000000000004", or a placeholder (unknown). */
static int nvsmi_reasons(const char *f, size_t len, rm_telem_sample *s)
{
	char buf[64], *stop;
	unsigned long long v;

	if (nvsmi_trim(f, len, buf, sizeof(buf)) < 0)
		return -1;
	if (buf[0] == '[')
		return 0;
	if (strncmp(buf, "0x", 2) || !buf[2])
		return -1;
	errno = 0;
	v = strtoull(buf + 2, &stop, 16);
	if (*stop || errno)
		return -1;
	s->causes = rm_telem_nvidia_causes(v);
	s->causes_known = RM_TELEM_NVIDIA_CAUSES;
	return 0;
}

int rm_telem_parse_nvsmi(const char *line, long *gpu, rm_telem_sample *s)
{
	double v[7];
	size_t n = 0;
	const char *p = line;

	memset(s, 0, sizeof(*s));
	for (;;) {
		size_t len = strcspn(p, ",");
		if (n == 8)
			return -1;
		if (n == 7 ? nvsmi_reasons(p, len, s) < 0 : nvsmi_field(p, len, &v[n]) < 0)
			return -1;
		n++;
		if (!p[len])
			break;
		p += len + 1;
	}
	if ((n != 6 && n != 8) || !isfinite(v[0]) || v[0] < 0 || v[0] > 4095 || v[0] != floor(v[0]))
		return -1;
	*gpu = (long)v[0];
	s->power_w = v[1];
	s->temp_c = v[2];
	s->vram_mib = v[3];
	s->util_pct = v[4];
	s->sclk_mhz = v[5];
	if (n == 8 && isfinite(v[6]) && v[6] > 0)
		s->power_limit_w = v[6];
	return 0;
}

/* ---- why a clock is held down ---- */

const rm_throttle_info rm_throttle_causes[RM_THROTTLE_CAUSES] = {
    [RM_THROTTLE_POWER_CAP] = {"power_cap", "the power cap", 1, NULL},
    [RM_THROTTLE_CURRENT] = {"current", "a current limit (TDC/EDC)", 1, NULL},
    [RM_THROTTLE_SYNC_BOOST] = {"sync_boost", "sync boost (held to the group's slowest GPU)", 1,
				NULL},
    [RM_THROTTLE_THERMAL] = {"thermal", "thermal slowdown", 0,
			     "check the cooling: airflow, fans, inlet temperature"},
    [RM_THROTTLE_HW_SLOWDOWN] = {"hw_slowdown", "hardware slowdown", 0,
				 "the board asked for it (PROCHOT, an over-current or a power "
				 "supply fault): check the GPU's health and its power delivery"},
    [RM_THROTTLE_POWER_BRAKE] = {"power_brake", "the power brake", 0,
				 "the system asserted its external power brake: check the power "
				 "supplies"},
    [RM_THROTTLE_CLOCK_SETTING] = {"clock_setting", "a clock setting", 0,
				   "clocks are limited by an applications or display clock "
				   "setting: reset them (nvidia-smi -rac, -rgc)"},
    [RM_THROTTLE_OTHER] = {"other", "a reason the driver does not name", 0,
			   "see the vendor's tools (nvidia-smi -q, amd-smi metric) for the "
			   "reason"},
};

/* NVML's nvmlClocksEventReason* (nvml.h; nvidia-smi(1), "clocks_event_reasons"). */
#define NV_IDLE		  0x1ULL
#define NV_APP_CLOCKS	  0x2ULL
#define NV_SW_POWER_CAP	  0x4ULL
#define NV_HW_SLOWDOWN	  0x8ULL
#define NV_SYNC_BOOST	  0x10ULL
#define NV_SW_THERMAL	  0x20ULL
#define NV_HW_THERMAL	  0x40ULL
#define NV_HW_POWER_BRAKE 0x80ULL
#define NV_DISPLAY_CLOCKS 0x100ULL

unsigned rm_telem_nvidia_causes(unsigned long long r)
{
	unsigned c = 0;
	const unsigned long long named = NV_IDLE | NV_APP_CLOCKS | NV_SW_POWER_CAP |
					 NV_HW_SLOWDOWN | NV_SYNC_BOOST | NV_SW_THERMAL |
					 NV_HW_THERMAL | NV_HW_POWER_BRAKE | NV_DISPLAY_CLOCKS;

	if (r & NV_SW_POWER_CAP)
		c |= BIT(RM_THROTTLE_POWER_CAP);
	if (r & (NV_SW_THERMAL | NV_HW_THERMAL))
		c |= BIT(RM_THROTTLE_THERMAL);
	if (r & NV_HW_POWER_BRAKE)
		c |= BIT(RM_THROTTLE_POWER_BRAKE);
	/* HW slowdown is set with its two sub-reasons; alone, it is its own cause */
	if ((r & NV_HW_SLOWDOWN) && !(r & (NV_HW_THERMAL | NV_HW_POWER_BRAKE)))
		c |= BIT(RM_THROTTLE_HW_SLOWDOWN);
	if (r & NV_SYNC_BOOST)
		c |= BIT(RM_THROTTLE_SYNC_BOOST);
	if (r & (NV_APP_CLOCKS | NV_DISPLAY_CLOCKS))
		c |= BIT(RM_THROTTLE_CLOCK_SETTING);
	if (r & ~named)
		c |= BIT(RM_THROTTLE_OTHER);
	return c;
}

/* gpu_metrics, little-endian as the GPU's host writes it (x86-64 and arm64 hosts). */
static uint64_t gm_u(const unsigned char *b, size_t off, size_t width)
{
	uint64_t v = 0;
	for (size_t i = 0; i < width; i++)
		v |= (uint64_t)b[off + i] << (8 * i);
	return v;
}

/* amdgpu_smu.h's ASIC-independent bits (SMU_THROTTLER_*_BIT): 0-7 power (PPT0-3, SPL,
 * FPPT, SPPT, SPPT_APU), 16-23 current (TDC, EDC, APCC), 32-45 temperatures and VRHOT,
 * 46-47 PROCHOT, 56-57 PPM and FIT. */
static unsigned gm_indep_causes(uint64_t r)
{
	unsigned c = 0;
	if (r & 0xffULL)
		c |= BIT(RM_THROTTLE_POWER_CAP);
	if (r & (0xffULL << 16))
		c |= BIT(RM_THROTTLE_CURRENT);
	if (r & (0x3fffULL << 32))
		c |= BIT(RM_THROTTLE_THERMAL);
	if (r & (0x3ULL << 46))
		c |= BIT(RM_THROTTLE_HW_SLOWDOWN);
	if (r & ~(0xffULL | 0xffULL << 16 | 0xffffULL << 32))
		c |= BIT(RM_THROTTLE_OTHER);
	return c;
}

/* smu_v13_0_6_pmfw.h (MI300): THROTTLER_PROCHOT_BIT 0, THROTTLER_PPT_BIT 1,
 * THROTTLER_THERMAL_SOCKET_BIT 2, THROTTLER_THERMAL_VR_BIT 3, THROTTLER_THERMAL_HBM_BIT 4. */
static unsigned gm_mi300_causes(uint64_t r)
{
	unsigned c = 0;
	if (r & 0x1)
		c |= BIT(RM_THROTTLE_HW_SLOWDOWN);
	if (r & 0x2)
		c |= BIT(RM_THROTTLE_POWER_CAP);
	if (r & 0x1c)
		c |= BIT(RM_THROTTLE_THERMAL);
	if (r & ~0x1fULL)
		c |= BIT(RM_THROTTLE_OTHER);
	return c;
}

int rm_telem_parse_gpu_metrics(const void *buf, size_t n, unsigned *causes, unsigned *known)
{
	/* the offsets of struct gpu_metrics_v1_<content> (natural alignment): throttle_status
	 * at 68 in 1.0 to 1.3, indep_throttle_status at 112 in 1.3; throttle_status at 40 in
	 * 1.4, at 104 in 1.5 (after jpeg_activity[32]), at 128 in 1.6 (after the residency
	 * counters) */
	static const size_t status_at[] = {68, 68, 68, 68, 40, 104, 128};
	const unsigned char *b = buf;
	unsigned content;
	size_t size;

	if (n < 4)
		return -1;
	size = (size_t)gm_u(b, 0, 2);
	content = b[3];
	if (b[2] != 1 || content >= sizeof(status_at) / sizeof(status_at[0]) || size > n)
		return -1;
	if (content == 3) {
		if (size < 120)
			return -1;
		*causes = gm_indep_causes(gm_u(b, 112, 8));
		*known = BIT(RM_THROTTLE_POWER_CAP) | BIT(RM_THROTTLE_CURRENT) |
			 BIT(RM_THROTTLE_THERMAL) | BIT(RM_THROTTLE_HW_SLOWDOWN) |
			 BIT(RM_THROTTLE_OTHER);
		return 0;
	}
	if (size < status_at[content] + 4)
		return -1;
	if (content >= 4) {
		*causes = gm_mi300_causes(gm_u(b, status_at[content], 4));
		*known = BIT(RM_THROTTLE_POWER_CAP) | BIT(RM_THROTTLE_THERMAL) |
			 BIT(RM_THROTTLE_HW_SLOWDOWN) | BIT(RM_THROTTLE_OTHER);
		return 0;
	}
	/* 1.0 to 1.2: the bits are the ASIC's own; only whether there is a reason is known */
	*causes = gm_u(b, status_at[content], 4) ? BIT(RM_THROTTLE_OTHER) : 0;
	*known = BIT(RM_THROTTLE_OTHER);
	return 0;
}
