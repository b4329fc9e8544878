/*
 * GPU telemetry (rm/telemetry.h): the sysfs and nvidia-smi texts, the aggregation, throttle
 * detection, the summary's JSON and merge, and the sampler itself against a fake sysfs tree
 * and a stand-in nvidia-smi (tests/telemetry/nvidia-smi) on PATH.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "testfs.h"
#include "rm/context.h"
#include "rm/telemetry.h"
#include "rm/util.h"

#define NEAR(a, b, eps) (fabs((a) - (b)) <= (eps))

/*
 * The time series as the sampler writes it, watched: a stream whose rows (readings; the
 * header is none) are counted as they come, line buffered, and copied to a file when one is
 * given. A test waits for the readings it checks (tap_wait) instead of sleeping for a while
 * and hoping this machine sampled enough by then. The sampler closes it when it stops.
 */
typedef struct tap {
	FILE *copy;
	const char *match; /* rows holding it are counted apart */
	char line[256];
	size_t len;
	int header_seen;
	atomic_size_t rows, matching;
} tap;

static ssize_t tap_write(void *cookie, const char *buf, size_t n)
{
	tap *t = cookie;

	if (t->copy && fwrite(buf, 1, n, t->copy) != n)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (buf[i] != '\n') {
			if (t->len < sizeof(t->line) - 1)
				t->line[t->len++] = buf[i];
			continue;
		}
		t->line[t->len] = '\0';
		t->len = 0;
		if (!t->header_seen) {
			t->header_seen = 1;
			continue;
		}
		if (t->match && strstr(t->line, t->match))
			atomic_fetch_add(&t->matching, 1);
		atomic_fetch_add(&t->rows, 1);
	}
	return (ssize_t)n;
}

static int tap_close(void *cookie)
{
	tap *t = cookie;

	return t->copy && fclose(t->copy) != 0 ? -1 : 0;
}

static FILE *tap_open(tap *t, const char *copy, const char *match)
{
	cookie_io_functions_t io = {.write = tap_write, .close = tap_close};
	FILE *f;

	memset(t, 0, sizeof(*t));
	atomic_init(&t->rows, 0);
	atomic_init(&t->matching, 0);
	t->copy = copy ? fopen(copy, "w") : NULL;
	t->match = match;
	f = fopencookie(t, "w", io);
	CHECK(f != NULL && (!copy || t->copy));
	if (f)
		setvbuf(f, NULL, _IOLBF, 0);
	return f;
}

/* Waits until the series holds `rows` readings, `matching` of them with the tap's match: 0
 * once they are there. The limit, a minute, is for a sampler that hangs. */
static int tap_wait(tap *t, size_t rows, size_t matching)
{
	for (int i = 0; i < 6000; i++) {
		if (atomic_load(&t->rows) >= rows && atomic_load(&t->matching) >= matching)
			return 0;
		usleep(10 * 1000);
	}
	fprintf(stderr, "the sampler wrote %zu of %zu readings (%zu of %zu matching) in a minute\n",
		atomic_load(&t->rows), rows, atomic_load(&t->matching), matching);
	return -1;
}

TEST(parse_value)
{
	double v = 0;

	/* hwmon power1_average of a real GPU (amdgpu-sysfs-rs, tests/data/bc250/hwmon/hwmon1/
	 * power1_average: "54231000\n", microwatts) */
	CHECK(rm_telem_parse_value("54231000\n", 1e-6, &v) == 0 && NEAR(v, 54.231, 1e-9));
	CHECK(rm_telem_parse_value("65000\n", 1e-3, &v) == 0 && NEAR(v, 65, 1e-12));
	CHECK(rm_telem_parse_value("1073741824", 1.0 / 1048576, &v) == 0 && v == 1024);
	CHECK(rm_telem_parse_value("100\n", 1, &v) == 0 && v == 100);
	CHECK(rm_telem_parse_value("", 1, &v) < 0);
	CHECK(rm_telem_parse_value("N/A\n", 1, &v) < 0);
	CHECK(rm_telem_parse_value("12 34\n", 1, &v) < 0);
	CHECK(rm_telem_parse_value("99999999999999999999999\n", 1, &v) < 0);
}

TEST(parse_sclk)
{
	double mhz = -1;

	/* pp_dpm_sclk of real GPUs (amdgpu-sysfs-rs tests/data): bc250 under load, and an
	 * idle rx6950xt whose levels both read 0 and both are starred */
	CHECK(rm_telem_parse_sclk("0: 1000Mhz \n1: 1500Mhz *\n2: 2000Mhz \n", &mhz) == 0 &&
	      mhz == 1500);
	CHECK(rm_telem_parse_sclk("0: 0Mhz *\n1: 0Mhz *", &mhz) == 0 && mhz == 0);
	/* fine-grained DPM shows the actual clock as the middle level */
	CHECK(rm_telem_parse_sclk("0: 500Mhz\n1: 1432Mhz *\n2: 2100Mhz\n", &mhz) == 0 &&
	      mhz == 1432);
	CHECK(rm_telem_parse_sclk("0: 500Mhz\n1: 2100Mhz\n", &mhz) < 0);
	CHECK(rm_telem_parse_sclk("", &mhz) < 0);
	CHECK(rm_telem_parse_sclk("*: garbage *\n", &mhz) < 0);
}

TEST(parse_nvsmi)
{
	rm_telem_sample s;
	long gpu = -1;

	/* with units (--format=csv): the figures of a public B200 capture */
	CHECK(rm_telem_parse_nvsmi("0, 380.42 W, 37, 45000 MiB, 100 %, 1965 MHz", &gpu, &s) == 0);
	CHECK(gpu == 0 && NEAR(s.power_w, 380.42, 1e-9) && s.temp_c == 37 && s.vram_mib == 45000 &&
	      s.util_pct == 100 && s.sclk_mhz == 1965);
	/* nounits, as run_models asks */
	CHECK(rm_telem_parse_nvsmi("3, 336.61, 41, 81000, 98, 1980\r", &gpu, &s) == 0);
	CHECK(gpu == 3 && NEAR(s.power_w, 336.61, 1e-9) && s.util_pct == 98);
	/* what a GPU does not report */
	CHECK(rm_telem_parse_nvsmi("1, [N/A], 40, 100, [Not Supported], 210", &gpu, &s) == 0);
	CHECK(gpu == 1 && isnan(s.power_w) && isnan(s.util_pct) && s.sclk_mhz == 210);
	/* not samples */
	CHECK(rm_telem_parse_nvsmi("index, power.draw [W], temperature.gpu, memory.used [MiB], "
				   "utilization.gpu [%], clocks.current.sm [MHz]",
				   &gpu, &s) < 0);
	CHECK(rm_telem_parse_nvsmi("NVIDIA-SMI has failed because it couldn't communicate with "
				   "the NVIDIA driver. Make sure that the latest NVIDIA driver is "
				   "installed and running.",
				   &gpu, &s) < 0);
	CHECK(rm_telem_parse_nvsmi("0, 380.42, 37, 45000, 100", &gpu, &s) < 0);
	CHECK(rm_telem_parse_nvsmi("0, 380.42, 37, 45000, 100, 1965, 7", &gpu, &s) < 0);
	CHECK(rm_telem_parse_nvsmi("0.5, 380.42, 37, 45000, 100, 1965", &gpu, &s) < 0);
	CHECK(rm_telem_parse_nvsmi("[N/A], 380.42, 37, 45000, 100, 1965", &gpu, &s) < 0);
	CHECK(rm_telem_parse_nvsmi("0, 380.42 kW, 37, 45000, 100, 1965", &gpu, &s) < 0);
	CHECK(rm_telem_parse_nvsmi("", &gpu, &s) < 0);
}

/* The H100's own lines (tests/telemetry/h100/nvsmi-load-events.csv, driver 580.159.04, a
 * bf16 GEMM), cut to the fields run_models asks for. */
TEST(parse_nvsmi_reasons)
{
	rm_telem_sample s;
	long gpu = -1;

	CHECK(rm_telem_parse_nvsmi("0, 666.25, 56, 1139, 99, 1110, 700.00, 0x0000000000000004",
				   &gpu, &s) == 0);
	CHECK(gpu == 0 && s.sclk_mhz == 1110 && s.power_limit_w == 700);
	CHECK(s.causes == (1u << RM_THROTTLE_POWER_CAP) && s.causes_known != 0);
	CHECK(!(s.causes_known & (1u << RM_THROTTLE_CURRENT)));
	/* idle: no cause, but the causes are known */
	CHECK(rm_telem_parse_nvsmi("0, 71.53, 38, 0, 0, 345, 700.00, 0x0000000000000001", &gpu,
				   &s) == 0);
	CHECK(s.causes == 0 && s.causes_known != 0);
	/* with units; a GPU that reports neither */
	CHECK(rm_telem_parse_nvsmi("1, 380.42 W, 37, 45000 MiB, 100 %, 1965 MHz, 1000.00 W, "
				   "0x0000000000000040",
				   &gpu, &s) == 0);
	CHECK(s.power_limit_w == 1000 && s.causes == (1u << RM_THROTTLE_THERMAL));
	CHECK(rm_telem_parse_nvsmi("1, 380.42, 37, 45000, 100, 1965, [N/A], [N/A]", &gpu, &s) == 0);
	CHECK(s.power_limit_w == 0 && s.causes == 0 && s.causes_known == 0);
	/* the six fields alone: no causes; seven, or a reason that is no mask: no sample */
	CHECK(rm_telem_parse_nvsmi("0, 380.42, 37, 45000, 100, 1965", &gpu, &s) == 0 &&
	      s.causes_known == 0);
	CHECK(rm_telem_parse_nvsmi("0, 380.42, 37, 45000, 100, 1965, 700", &gpu, &s) < 0);
	CHECK(rm_telem_parse_nvsmi("0, 380.42, 37, 45000, 100, 1965, 700, Active", &gpu, &s) < 0);
	CHECK(rm_telem_parse_nvsmi("0, 380.42, 37, 45000, 100, 1965, 700, 0x4, 1", &gpu, &s) < 0);
}

TEST(nvidia_causes)
{
	/* nvml.h's nvmlClocksEventReason* bits */
	CHECK(rm_telem_nvidia_causes(0x1) == 0);
	CHECK(rm_telem_nvidia_causes(0x4) == 1u << RM_THROTTLE_POWER_CAP);
	CHECK(rm_telem_nvidia_causes(0x20) == 1u << RM_THROTTLE_THERMAL);
	/* HW slowdown comes with its sub-reason: the sub-reason is the cause */
	CHECK(rm_telem_nvidia_causes(0x48) == 1u << RM_THROTTLE_THERMAL);
	CHECK(rm_telem_nvidia_causes(0x88) == 1u << RM_THROTTLE_POWER_BRAKE);
	CHECK(rm_telem_nvidia_causes(0x8) == 1u << RM_THROTTLE_HW_SLOWDOWN);
	CHECK(rm_telem_nvidia_causes(0x10) == 1u << RM_THROTTLE_SYNC_BOOST);
	CHECK(rm_telem_nvidia_causes(0x102) == 1u << RM_THROTTLE_CLOCK_SETTING);
	CHECK(rm_telem_nvidia_causes(0x24) ==
	      ((1u << RM_THROTTLE_POWER_CAP) | (1u << RM_THROTTLE_THERMAL)));
	CHECK(rm_telem_nvidia_causes(0x1000) == 1u << RM_THROTTLE_OTHER);
}

/* A gpu_metrics file of version 1.<content>, its throttle word at `at`, width bytes. */
static size_t gpu_metrics(unsigned char *b, size_t size, unsigned content, size_t at,
			  uint64_t value, size_t width)
{
	memset(b, 0, size);
	b[0] = (unsigned char)(size & 0xff);
	b[1] = (unsigned char)(size >> 8);
	b[2] = 1;
	b[3] = (unsigned char)content;
	for (size_t i = 0; i < width; i++)
		b[at + i] = (unsigned char)(value >> (8 * i));
	return size;
}

TEST(parse_gpu_metrics)
{
	unsigned char b[512];
	unsigned causes = 0, known = 0;
	size_t n;

	/* v1.3 (sizeof(struct gpu_metrics_v1_3) is 120): indep_throttle_status at 112 */
	n = gpu_metrics(b, 120, 3, 112, 1ULL << 36, 8); /* SMU_THROTTLER_TEMP_HOTSPOT_BIT */
	CHECK(rm_telem_parse_gpu_metrics(b, n, &causes, &known) == 0);
	CHECK(causes == 1u << RM_THROTTLE_THERMAL && (known & (1u << RM_THROTTLE_POWER_CAP)));
	n = gpu_metrics(b, 120, 3, 112, (1ULL << 0) | (1ULL << 22), 8); /* PPT0, EDC_GFX */
	CHECK(rm_telem_parse_gpu_metrics(b, n, &causes, &known) == 0);
	CHECK(causes == ((1u << RM_THROTTLE_POWER_CAP) | (1u << RM_THROTTLE_CURRENT)));
	n = gpu_metrics(b, 120, 3, 112, 1ULL << 47, 8); /* PROCHOT_GFX */
	CHECK(rm_telem_parse_gpu_metrics(b, n, &causes, &known) == 0 &&
	      causes == 1u << RM_THROTTLE_HW_SLOWDOWN);
	/* MI300's v1.4 (throttle_status at 40) and v1.5 (at 104): THROTTLER_PPT_BIT 1,
	 * THROTTLER_THERMAL_HBM_BIT 4 */
	n = gpu_metrics(b, 256, 4, 40, 0x2, 4);
	CHECK(rm_telem_parse_gpu_metrics(b, n, &causes, &known) == 0 &&
	      causes == 1u << RM_THROTTLE_POWER_CAP);
	n = gpu_metrics(b, 400, 5, 104, 0x10, 4);
	CHECK(rm_telem_parse_gpu_metrics(b, n, &causes, &known) == 0 &&
	      causes == 1u << RM_THROTTLE_THERMAL);
	n = gpu_metrics(b, 400, 6, 128, 0x1, 4);
	CHECK(rm_telem_parse_gpu_metrics(b, n, &causes, &known) == 0 &&
	      causes == 1u << RM_THROTTLE_HW_SLOWDOWN);
	/* v1.1: ASIC-dependent bits, only "some reason" */
	n = gpu_metrics(b, 104, 1, 68, 0x40, 4);
	CHECK(rm_telem_parse_gpu_metrics(b, n, &causes, &known) == 0 &&
	      causes == 1u << RM_THROTTLE_OTHER && known == 1u << RM_THROTTLE_OTHER);
	/* not one: too short, a size beyond the bytes read, an unknown version, APU's v2 */
	CHECK(rm_telem_parse_gpu_metrics(b, 3, &causes, &known) < 0);
	n = gpu_metrics(b, 120, 3, 112, 0, 8);
	CHECK(rm_telem_parse_gpu_metrics(b, 100, &causes, &known) < 0);
	n = gpu_metrics(b, 120, 9, 112, 0, 8);
	CHECK(rm_telem_parse_gpu_metrics(b, n, &causes, &known) < 0);
	b[2] = 2;
	CHECK(rm_telem_parse_gpu_metrics(b, n, &causes, &known) < 0);
}

static rm_telem_sample sample(double p, double util, double mhz)
{
	rm_telem_sample s = {
	    .power_w = p, .temp_c = 60, .vram_mib = 2048, .util_pct = util, .sclk_mhz = mhz};
	return s;
}

TEST(agg_power)
{
	rm_telem_summary s;
	long ids[2] = {4, 6};
	rm_telem_agg *a = rm_telem_agg_new(1, ids, 10.0);

	/* A GPU held at 100 W, read at 10 Hz from 0.05 s into a 3 s window: 100 W, 300 J. */
	for (int i = 0; i < 30; i++) {
		rm_telem_sample x = sample(100, 100, 2100);
		rm_telem_agg_add(a, 0, 10.05 + i * 0.1, &x);
	}
	rm_telem_agg_summary(a, 13.0, &s);
	CHECK(s.n_gpus == 1 && s.n_samples == 30);
	CHECK(NEAR(s.window_s, 3.0, 1e-9));
	CHECK(NEAR(s.power_avg_w, 100, 1e-9) && NEAR(s.energy_j, 300, 1e-9));
	CHECK(NEAR(s.power_max_w, 100, 1e-9));
	CHECK(s.util_avg_pct == 100 && s.vram_max_mib == 2048 && s.temp_max_c == 60);
	CHECK(s.throttle_pct == 0 && s.throttle_gpu == -1);
	rm_telem_agg_free(a);

	/* A ramp 0..100 W over 1 s: trapezoids integrate it exactly (50 J). */
	a = rm_telem_agg_new(1, NULL, 0);
	for (int i = 0; i <= 10; i++) {
		rm_telem_sample x = sample(i * 10.0, NAN, NAN);
		rm_telem_agg_add(a, 0, i * 0.1, &x);
	}
	rm_telem_agg_summary(a, 1.0, &s);
	CHECK(NEAR(s.energy_j, 50, 1e-9) && NEAR(s.power_avg_w, 50, 1e-9));
	CHECK(NEAR(s.power_max_w, 100, 1e-9));
	CHECK(isnan(s.util_avg_pct) && isnan(s.throttle_pct));
	rm_telem_agg_free(a);

	/* Two GPUs, 100 W and 50 W: the run draws 150 W; max counts once both have read. */
	a = rm_telem_agg_new(2, ids, 0);
	for (int i = 0; i < 10; i++) {
		rm_telem_sample x = sample(100, 90, 2000), y = sample(50, 10, 1000);
		x.vram_mib = 1000 + i;
		y.temp_c = 70;
		y.vram_mib = 500;
		rm_telem_agg_add(a, 0, i * 0.1, &x);
		if (i) /* GPU 6 reads late: 100 W alone is never the run's power */
			rm_telem_agg_add(a, 1, i * 0.1, &y);
	}
	rm_telem_agg_summary(a, 1.0, &s);
	CHECK(NEAR(s.power_avg_w, 150, 1e-9) && NEAR(s.energy_j, 150, 1e-9));
	CHECK(NEAR(s.power_max_w, 150, 1e-9));
	CHECK(s.vram_max_mib == 1009 && s.temp_max_c == 70);
	CHECK(NEAR(s.util_avg_pct, (10 * 90 + 9 * 10) / 19.0, 1e-9));
	rm_telem_agg_free(a);

	/* No power reading at all: no power figures, the others stay. */
	a = rm_telem_agg_new(1, NULL, 0);
	{
		rm_telem_sample x = sample(NAN, 50, NAN);
		rm_telem_agg_add(a, 0, 0.5, &x);
		rm_telem_agg_add(a, 5, 0.5, &x); /* no such slot: ignored */
	}
	rm_telem_agg_summary(a, 1.0, &s);
	CHECK(isnan(s.power_avg_w) && isnan(s.energy_j) && isnan(s.power_max_w));
	CHECK(s.util_avg_pct == 50 && s.n_samples == 1);
	rm_telem_agg_free(a);
}

TEST(agg_throttle)
{
	rm_telem_summary s;
	long ids[2] = {0, 3};
	rm_telem_agg *a = rm_telem_agg_new(2, ids, 100);

	for (int i = 0; i < 15; i++) {
		/* GPU 3 ramps up (no fall), then holds 2100 MHz for 10 busy readings, then falls
		 * to 1400 MHz while still busy; GPU 0 idles at a low clock (not busy: no fall) */
		double mhz = i < 2 ? 1500 + i * 300 : i < 10 ? 2100 : 1400;
		rm_telem_sample busy = sample(700, 100, mhz), idle = sample(90, 5, 200);
		rm_telem_agg_add(a, 0, 100 + i * 0.1, &idle);
		rm_telem_agg_add(a, 1, 100 + i * 0.1, &busy);
	}
	rm_telem_agg_summary(a, 101.5, &s);
	CHECK(s.throttle_gpu == 3);
	CHECK(NEAR(s.throttle_t, 1.0, 1e-9));
	CHECK(s.throttle_from_mhz == 2100 && s.throttle_to_mhz == 1400 &&
	      s.throttle_util_pct == 100);
	CHECK(NEAR(s.throttle_pct, 100.0 * 5 / 15, 1e-9));
	rm_telem_agg_free(a);

	/* A small dip (within RM_TELEM_THROTTLE_DROP_PCT) and a drop while idle are not
	 * throttling. */
	a = rm_telem_agg_new(1, NULL, 0);
	{
		rm_telem_sample x = sample(500, 100, 2100), y = sample(500, 100, 1950),
				z = sample(100, 10, 500);
		rm_telem_agg_add(a, 0, 0.1, &x);
		rm_telem_agg_add(a, 0, 0.2, &y);
		rm_telem_agg_add(a, 0, 0.3, &z);
	}
	rm_telem_agg_summary(a, 0.4, &s);
	CHECK(s.throttle_gpu == -1 && s.throttle_pct == 0);
	rm_telem_agg_free(a);
}

TEST(agg_causes)
{
	rm_telem_summary s, m;
	rm_telem_agg *a = rm_telem_agg_new(1, NULL, 0);

	/* 10 busy readings: 6 at the power cap (the clock falls), 4 also hot; 5 idle readings
	 * under a cause do not count */
	for (int i = 0; i < 15; i++) {
		rm_telem_sample x = sample(700, i < 10 ? 100 : 0, i < 4 ? 1980 : 1100);
		x.causes_known = ~0u;
		x.power_limit_w = 700;
		x.causes = i < 4    ? 0
			   : i < 6  ? 1u << RM_THROTTLE_POWER_CAP
			   : i < 10 ? (1u << RM_THROTTLE_POWER_CAP) | (1u << RM_THROTTLE_THERMAL)
				    : 1u << RM_THROTTLE_THERMAL;
		rm_telem_agg_add(a, 0, i * 0.1, &x);
	}
	rm_telem_agg_summary(a, 1.5, &s);
	rm_telem_agg_free(a);
	CHECK(s.n_busy_known == 10 && s.power_limit_w == 700);
	CHECK(NEAR(s.cause_pct[RM_THROTTLE_POWER_CAP], 60, 1e-9));
	CHECK(NEAR(s.cause_pct[RM_THROTTLE_THERMAL], 40, 1e-9));
	CHECK(s.cause_pct[RM_THROTTLE_OTHER] == 0);
	CHECK(rm_telem_summary_main_cause(&s, 0) == RM_THROTTLE_POWER_CAP);
	CHECK(rm_telem_summary_main_cause(&s, 1) == RM_THROTTLE_THERMAL);
	CHECK(s.cause_gpu == 0 && s.cause_first == RM_THROTTLE_THERMAL &&
	      NEAR(s.cause_t, 0.6, 1e-9));
	CHECK(s.throttle_gpu == 0);

	/* the JSON of a node and back, and two nodes merged: shares weigh by busy readings */
	json_t *j = rm_telem_summary_to_json(&s);
	rm_telem_summary_from_json(j, &m);
	json_decref(j);
	CHECK(m.n_busy_known == 10 && NEAR(m.cause_pct[RM_THROTTLE_THERMAL], 40, 1e-9));
	CHECK(m.cause_gpu == 0 && m.cause_first == RM_THROTTLE_THERMAL && m.power_limit_w == 700);
	rm_telem_summary_none(&s);
	s.n_busy_known = 30;
	s.cause_pct[RM_THROTTLE_THERMAL] = 0;
	rm_telem_summary_merge(&s, &m);
	CHECK(s.n_busy_known == 40 && NEAR(s.cause_pct[RM_THROTTLE_THERMAL], 10, 1e-9));
	CHECK(NEAR(s.cause_pct[RM_THROTTLE_POWER_CAP], 60, 1e-9)); /* only one node knew it */
	CHECK(s.cause_gpu == 0);

	/* no causes reported: none known, no shares */
	a = rm_telem_agg_new(1, NULL, 0);
	{
		rm_telem_sample x = sample(100, 100, 2000);
		rm_telem_agg_add(a, 0, 0.1, &x);
	}
	rm_telem_agg_summary(a, 1, &s);
	rm_telem_agg_free(a);
	CHECK(s.n_busy_known == 0 && isnan(s.cause_pct[RM_THROTTLE_POWER_CAP]));
	CHECK(rm_telem_summary_main_cause(&s, 0) == -1 && isnan(s.power_limit_w));
}

TEST(summary_json_merge)
{
	rm_telem_summary a, b, back;
	long ids[1] = {2};
	rm_telem_agg *g = rm_telem_agg_new(1, ids, 0);
	json_t *j;

	for (int i = 0; i < 10; i++) {
		rm_telem_sample x = sample(200, i < 5 ? 100 : 50, i < 8 ? 2000 : 1000);
		rm_telem_agg_add(g, 0, i * 0.1, &x);
	}
	rm_telem_agg_summary(g, 1.0, &a);
	rm_telem_agg_free(g);
	CHECK(a.throttle_gpu == -1); /* the fall came while 50 % busy */

	j = rm_telem_summary_to_json(&a);
	rm_telem_summary_from_json(j, &back);
	json_decref(j);
	CHECK(back.n_gpus == 1 && back.n_samples == 10);
	CHECK(NEAR(back.power_avg_w, 200, 1e-9) && NEAR(back.energy_j, 200, 1e-9));
	CHECK(NEAR(back.util_avg_pct, 75, 1e-9) && back.vram_max_mib == 2048);
	CHECK(back.throttle_gpu == -1 && back.throttle_pct == 0);
	rm_telem_summary_from_json(NULL, &back);
	CHECK(isnan(back.power_avg_w) && back.n_samples == 0);

	/* Two nodes of one job: power and energy add up, busy weighs by readings. */
	rm_telem_summary_none(&b);
	b.n_gpus = 8;
	b.n_samples = 30;
	b.power_avg_w = 5000;
	b.power_max_w = 5600;
	b.energy_j = 5000;
	b.util_avg_pct = 95;
	b.temp_max_c = 80;
	b.window_s = 1.2;
	b.throttle_gpu = 5;
	b.throttle_pct = 12;
	rm_telem_summary_merge(&a, &b);
	CHECK(a.n_gpus == 9 && a.n_samples == 40);
	CHECK(NEAR(a.power_avg_w, 5200, 1e-9) && NEAR(a.energy_j, 5200, 1e-9));
	CHECK(NEAR(a.util_avg_pct, (75 * 10 + 95 * 30) / 40.0, 1e-9));
	CHECK(a.temp_max_c == 80 && a.vram_max_mib == 2048 && a.window_s == 1.2);
	CHECK(a.throttle_gpu == 5 && a.throttle_pct == 12);
	/* merging into nothing gives the other */
	rm_telem_summary_none(&back);
	rm_telem_summary_merge(&back, &b);
	CHECK(back.power_avg_w == 5000 && back.util_avg_pct == 95);
}

/* A fake host: the KFD topology and the amdgpu files of two GPUs at watts each. */
static void fake_gpus(const char *root, int watts, int with_power)
{
	char text[64];

	tfs_put(root, "class/kfd/kfd/topology/nodes/0/properties",
		"cpu_cores_count 8\nsimd_count 0\ngfx_target_version 0\n");
	for (int i = 0; i < 2; i++) {
		char *props = rm_xasprintf("class/kfd/kfd/topology/nodes/%d/properties", i + 1);
		char *dev = rm_xasprintf("class/drm/renderD%d/device", 128 + i);
		char *p;
		snprintf(text, sizeof(text),
			 "simd_count 304\ngfx_target_version 90402\ndrm_render_minor %d\n",
			 128 + i);
		tfs_put(root, props, text);
		if (with_power) {
			p = rm_xasprintf("%s/hwmon/hwmon%d/power1_input", dev, i + 3);
			snprintf(text, sizeof(text), "%d\n", watts * 1000000);
			tfs_put(root, p, text);
			free(p);
		}
		p = rm_xasprintf("%s/hwmon/hwmon%d/temp2_input", dev, i + 3);
		tfs_put(root, p, i ? "71000\n" : "64000\n");
		free(p);
		p = rm_xasprintf("%s/hwmon/hwmon%d/temp1_input", dev, i + 3);
		tfs_put(root, p, "40000\n");
		free(p);
		p = rm_xasprintf("%s/mem_info_vram_used", dev);
		tfs_put(root, p, "2147483648\n");
		free(p);
		p = rm_xasprintf("%s/gpu_busy_percent", dev);
		tfs_put(root, p, "97\n");
		free(p);
		p = rm_xasprintf("%s/pp_dpm_sclk", dev);
		tfs_put(root, p, "0: 500Mhz\n1: 1432Mhz *\n2: 2100Mhz\n");
		free(p);
		free(dev);
		free(props);
	}
}

static size_t count_lines(const char *path, const char *prefix, size_t *matching)
{
	FILE *f = fopen(path, "r");
	char line[256];
	size_t n = 0;

	*matching = 0;
	while (f && fgets(line, sizeof(line), f)) {
		n++;
		*matching += prefix && strstr(line, prefix) != NULL;
	}
	if (f)
		fclose(f);
	return n;
}

TEST(sampler_amd)
{
	char tmpl[] = "/tmp/rm_test_telem_XXXXXX";
	char *root = mkdtemp(tmpl), *series_path;
	rm_context ctx;
	rm_error err = RM_ERROR_INIT;
	rm_telem *t = NULL;
	rm_telem_summary s;
	long gpus[1] = {1};
	size_t rows, of_gpu1;
	tap series, both_series;

	CHECK(root != NULL);
	if (!root)
		return;
	fake_gpus(root, 100, 1);
	CHECK(rm_context_detect(&ctx, root, 0, &err) == 0);
	CHECK(ctx.n_render_nodes == 2);
	series_path = rm_xasprintf("%s/series.csv", root);
	rm_telem_opts o = {.vendor = "AMD",
			   .sysfs_root = root,
			   .ctx = &ctx,
			   .gpus = gpus,
			   .n_gpus = 1,
			   .series = tap_open(&series, series_path, NULL)};
	CHECK(rm_telem_start(&t, &o, &err) == 0);
	CHECK(tap_wait(&series, 3, 0) == 0);
	CHECK(rm_telem_stop(t, &s, &err) == 0);
	/* GPU 1 only: 100 W, its hottest sensor, 2 GiB, 97 % busy, 1432 MHz */
	CHECK(s.n_gpus == 1);
	CHECK(s.n_samples >= 3);
	CHECK(NEAR(s.power_avg_w, 100, 1e-6) && NEAR(s.energy_j, 100 * s.window_s, 1e-6));
	CHECK(s.temp_max_c == 71 && s.vram_max_mib == 2048 && s.util_avg_pct == 97);
	CHECK(s.throttle_pct == 0);
	rows = count_lines(series_path, ",1,100.000,71.0,2048.0,97,1432", &of_gpu1);
	CHECK(rows == s.n_samples + 1 && of_gpu1 == s.n_samples);
	{
		char *text = NULL;
		CHECK(rm_read_file(series_path, 1 << 20, &text, NULL, &err) == 0);
		CHECK(text && rm_starts_with(text, RM_TELEM_SERIES_HEADER "\n"));
		free(text);
	}

	/* Both GPUs: the run draws 200 W. */
	long both[2] = {0, 1};
	o.gpus = both;
	o.n_gpus = 2;
	o.series = tap_open(&both_series, NULL, NULL);
	CHECK(rm_telem_start(&t, &o, &err) == 0);
	CHECK(tap_wait(&both_series, 2, 0) == 0); /* one instant of both */
	CHECK(rm_telem_stop(t, &s, &err) == 0);
	o.series = NULL;
	CHECK(s.n_gpus == 2 && NEAR(s.power_avg_w, 200, 1e-6) && NEAR(s.power_max_w, 200, 1e-6));

	/* A GPU index the host does not have, and no vendor: refused at start. */
	long three[1] = {3};
	o.gpus = three;
	o.n_gpus = 1;
	CHECK(rm_telem_start(&t, &o, &err) < 0 && t == NULL);
	CHECK(strstr(err.msg, "GPU 3 has no DRM render node") != NULL);
	o.gpus = gpus;
	o.vendor = NULL;
	CHECK(rm_telem_start(&t, &o, &err) < 0);
	CHECK(rm_telem_stop(NULL, &s, &err) == 0 && isnan(s.power_avg_w));

	/* doctor: every GPU's power readable */
	char *detail = NULL;
	CHECK(rm_telem_probe(&ctx, root, &detail, &err) == 0);
	CHECK(detail && strstr(detail, "2 AMD GPU(s) through sysfs (hwmon power1_input)"));
	free(detail);

	/* why the clock is held: GPU 1's gpu_metrics (v1.3) says hotspot temperature
	 * (SMU_THROTTLER_TEMP_HOTSPOT_BIT); its limit, power1_cap, is 300 W */
	{
		unsigned char b[120];
		size_t n = gpu_metrics(b, sizeof(b), 3, 112, 1ULL << 36, 8);
		char *p = rm_xasprintf("%s/class/drm/renderD129/device/gpu_metrics", root);
		FILE *f = fopen(p, "wb");
		CHECK(f && fwrite(b, 1, n, f) == n && fclose(f) == 0);
		free(p);
		tfs_put(root, "class/drm/renderD129/device/hwmon/hwmon4/power1_cap", "300000000\n");
	}
	o.gpus = gpus;
	o.vendor = "AMD";
	o.series = tap_open(&series, NULL, ",300,thermal");
	CHECK(rm_telem_start(&t, &o, &err) == 0);
	CHECK(tap_wait(&series, 2, 2) == 0);
	CHECK(rm_telem_stop(t, &s, &err) == 0);
	CHECK(NEAR(s.cause_pct[RM_THROTTLE_THERMAL], 100, 1e-9) && s.cause_gpu == 1);
	CHECK(s.cause_first == RM_THROTTLE_THERMAL && s.power_limit_w == 300);
	CHECK(s.cause_pct[RM_THROTTLE_POWER_CAP] == 0 &&
	      isnan(s.cause_pct[RM_THROTTLE_SYNC_BOOST]));
	rm_context_release(&ctx);
	free(series_path);
	tfs_rm_tree(root);
}

TEST(sampler_amd_missing)
{
	char tmpl[] = "/tmp/rm_test_telem_XXXXXX";
	char *root = mkdtemp(tmpl), *detail = NULL;
	rm_context ctx;
	rm_error err = RM_ERROR_INIT;
	rm_telem *t = NULL;
	rm_telem_summary s;
	long gpus[1] = {0};
	tap series;

	if (!root)
		return;
	/* no power file: sampled all the same, without power figures; doctor says so */
	fake_gpus(root, 0, 0);
	CHECK(rm_context_detect(&ctx, root, 0, &err) == 0);
	rm_telem_opts o = {.vendor = "AMD",
			   .sysfs_root = root,
			   .ctx = &ctx,
			   .gpus = gpus,
			   .n_gpus = 1,
			   .series = tap_open(&series, NULL, NULL)};
	CHECK(rm_telem_start(&t, &o, &err) == 0);
	CHECK(tap_wait(&series, 1, 0) == 0);
	CHECK(rm_telem_stop(t, &s, &err) == 0);
	o.series = NULL;
	CHECK(isnan(s.power_avg_w) && s.util_avg_pct == 97);
	CHECK(rm_telem_probe(&ctx, root, &detail, &err) < 0 && detail == NULL);
	CHECK(strstr(err.msg, "GPU 0 power") != NULL);
	rm_context_release(&ctx);

	/* no sensor at all under the device: nothing to sample */
	tfs_rm_tree(root);
	tfs_put(root, "class/kfd/kfd/topology/nodes/1/properties",
		"simd_count 304\ngfx_target_version 90402\ndrm_render_minor 128\n");
	tfs_put(root, "class/drm/renderD128/device/uevent", "DRIVER=amdgpu\n");
	CHECK(rm_context_detect(&ctx, root, 0, &err) == 0);
	CHECK(rm_telem_start(&t, &o, &err) < 0);
	CHECK(strstr(err.msg, "GPU 0: no readable sensor under") != NULL);
	rm_context_release(&ctx);
	tfs_rm_tree(root);
}

/* The stand-in nvidia-smi of tests/telemetry on PATH. */
static char *with_fake_nvsmi(void)
{
	const char *src = getenv("RM_SOURCE_DIR");
	const char *path = getenv("PATH");
	char *old = rm_xstrdup(path ? path : "");
	char *np = rm_xasprintf("%s/tests/telemetry:%s", src ? src : ".", old);

	setenv("PATH", np, 1);
	free(np);
	return old;
}

static long logged_pid(const char *log)
{
	char *text = NULL;
	long pid = -1;
	rm_error err = RM_ERROR_INIT;

	if (rm_read_file(log, 1 << 16, &text, NULL, &err) == 0 && rm_starts_with(text, "pid "))
		pid = strtol(text + 4, NULL, 10);
	free(text);
	return pid;
}

/* Waits until the stand-in nvidia-smi that wrote its pid first in log has ended and been
 * reaped (by the sampler, which then notes why sampling ended): 0 then. The limit, a minute,
 * is for a hang. */
static int wait_reaped(const char *log)
{
	for (int i = 0; i < 6000; i++) {
		long pid = logged_pid(log);
		if (pid > 0 && kill((pid_t)pid, 0) < 0 && errno == ESRCH)
			return 0;
		usleep(10 * 1000);
	}
	fprintf(stderr, "nvidia-smi (%s) was not reaped in a minute\n", log);
	return -1;
}

TEST(sampler_nvidia)
{
	char tmpl[] = "/tmp/rm_test_telem_XXXXXX";
	char *root = mkdtemp(tmpl), *old_path = with_fake_nvsmi(), *log, *text = NULL;
	rm_error err = RM_ERROR_INIT;
	rm_telem *t = NULL;
	rm_telem_summary s;
	long gpus[2] = {0, 2}, pid;
	char *series_path;
	size_t rows, of_gpu2;
	tap series, units_series;

	if (!root)
		return;
	log = rm_xasprintf("%s/nvsmi.log", root);
	series_path = rm_xasprintf("%s/series.csv", root);
	setenv("FAKE_NVSMI_LOG", log, 1);
	rm_telem_opts o = {.vendor = "NVIDIA",
			   .gpus = gpus,
			   .n_gpus = 2,
			   .series =
			       tap_open(&series, series_path, ",2,380.420,37.0,45000.0,100,1965")};
	CHECK(rm_telem_start(&t, &o, &err) == 0);
	CHECK(tap_wait(&series, 4, 2) == 0);
	CHECK(rm_telem_stop(t, &s, &err) == 0);
	/* two GPUs at 380.42 W each */
	CHECK(s.n_gpus == 2 && s.n_samples >= 4);
	CHECK(NEAR(s.power_avg_w, 2 * 380.42, 1e-6) && NEAR(s.power_max_w, 2 * 380.42, 1e-6));
	CHECK(s.vram_max_mib == 45000 && s.util_avg_pct == 100 && s.temp_max_c == 37);
	rows = count_lines(series_path, ",2,380.420,37.0,45000.0,100,1965", &of_gpu2);
	CHECK(rows == s.n_samples + 1 && of_gpu2 >= 2);
	/* one long-lived process asked for the run's GPUs only, and gone after stop */
	CHECK(rm_read_file(log, 1 << 16, &text, NULL, &err) == 0);
	CHECK(text && strstr(text, "args --query-gpu=index,power.draw,temperature.gpu,memory.used,"
				   "utilization.gpu,clocks.sm,enforced.power.limit,clocks_event_"
				   "reasons.active --format=csv,noheader,nounits -lms "
				   "100 -i 0,2\n"));
	CHECK(text && strstr(strstr(text, "args") + 1, "args") == NULL);
	free(text);
	pid = logged_pid(log);
	CHECK(pid > 0 && kill((pid_t)pid, 0) < 0 && errno == ESRCH);

	/* units and all: the same figures */
	setenv("FAKE_NVSMI_UNITS", "1", 1);
	o.series = tap_open(&units_series, NULL, ",2,");
	CHECK(rm_telem_start(&t, &o, &err) == 0);
	CHECK(tap_wait(&units_series, 2, 1) == 0); /* both GPUs */
	CHECK(rm_telem_stop(t, &s, &err) == 0);
	o.series = NULL;
	CHECK(NEAR(s.power_avg_w, 2 * 380.42, 1e-6));
	unsetenv("FAKE_NVSMI_UNITS");

	/* the driver is not there: the run goes on, the error says why (once the sampler saw
	 * nvidia-smi end: stopped before, it had nothing to say) */
	setenv("FAKE_NVSMI_FAIL", "1", 1);
	CHECK(truncate(log, 0) == 0);
	CHECK(rm_telem_start(&t, &o, &err) == 0);
	CHECK(wait_reaped(log) == 0);
	CHECK(rm_telem_stop(t, &s, &err) < 0);
	CHECK(strstr(err.msg,
		     "nvidia-smi ended during the run (exit status 9): NVIDIA-SMI has "
		     "failed because it couldn't communicate with the NVIDIA driver") != NULL);
	CHECK(s.n_samples == 0 && isnan(s.power_avg_w));

	/* doctor */
	char *detail = NULL;
	rm_context ctx = {0};
	ctx.gpu_vendor = "NVIDIA";
	ctx.n_gpus = 2;
	CHECK(rm_telem_probe(&ctx, NULL, &detail, &err) < 0 && strstr(err.msg, "NVIDIA-SMI has"));
	unsetenv("FAKE_NVSMI_FAIL");
	CHECK(rm_telem_probe(&ctx, NULL, &detail, &err) == 0);
	CHECK(detail && rm_starts_with(detail, "2 NVIDIA GPU(s) through nvidia-smi"));
	free(detail);

	/* not on PATH */
	setenv("PATH", "/nonexistent", 1);
	CHECK(rm_telem_start(&t, &o, &err) < 0 && strstr(err.msg, "nvidia-smi is not on PATH"));
	setenv("PATH", old_path, 1);
	unsetenv("FAKE_NVSMI_LOG");
	free(old_path);
	free(series_path);
	free(log);
	tfs_rm_tree(root);
}

/* The real H100's readings of a bf16 GEMM (tests/telemetry/h100/nvsmi-load-events.csv,
 * driver 580.159.04) replayed through the stand-in nvidia-smi: every busy reading is at the
 * 700 W power cap (clocks_event_reasons.active 0x4), the clock falls under load, no problem
 * cause. Then a driver before 535, which refuses clocks_event_reasons: asked again by the
 * older name, sampled all the same. */
TEST(sampler_nvidia_h100)
{
	char tmpl[] = "/tmp/rm_test_telem_XXXXXX";
	char *root = mkdtemp(tmpl), *old_path = with_fake_nvsmi(), *log, *text = NULL;
	const char *src = getenv("RM_SOURCE_DIR");
	char *replay =
	    rm_xasprintf("%s/tests/telemetry/h100/nvsmi-load-events.csv", src ? src : ".");
	rm_error err = RM_ERROR_INIT;
	rm_telem *t = NULL;
	rm_telem_summary s;
	long gpus[1] = {0};
	tap series;

	if (!root)
		return;
	log = rm_xasprintf("%s/nvsmi.log", root);
	setenv("FAKE_NVSMI_LOG", log, 1);
	setenv("FAKE_NVSMI_REPLAY", replay, 1);
	setenv("FAKE_NVSMI_REPLAY_MS", "1", 1);
	rm_telem_opts o = {.vendor = "NVIDIA",
			   .gpus = gpus,
			   .n_gpus = 1,
			   .series = tap_open(&series, NULL, ",700,power_cap")};
	CHECK(rm_telem_start(&t, &o, &err) == 0);
	CHECK(tap_wait(&series, 181, 96) == 0); /* the capture's 181 readings, 96 of them busy */
	CHECK(rm_telem_stop(t, &s, &err) == 0);
	CHECK(s.n_busy_known == 96 && NEAR(s.cause_pct[RM_THROTTLE_POWER_CAP], 100, 1e-9));
	CHECK(s.cause_pct[RM_THROTTLE_THERMAL] == 0 && s.cause_gpu == -1);
	CHECK(rm_telem_summary_main_cause(&s, 0) == RM_THROTTLE_POWER_CAP);
	CHECK(s.power_limit_w == 700 && s.throttle_gpu == 0 && s.throttle_pct > 10);
	CHECK(isnan(s.cause_pct[RM_THROTTLE_CURRENT])); /* NVIDIA never says it */
	unsetenv("FAKE_NVSMI_REPLAY");

	/* an old driver: refused, then asked by the older name */
	CHECK(truncate(log, 0) == 0);
	setenv("FAKE_NVSMI_OLD", "1", 1);
	o.series = tap_open(&series, NULL, NULL);
	CHECK(rm_telem_start(&t, &o, &err) == 0);
	CHECK(tap_wait(&series, 2, 0) == 0);
	CHECK(rm_telem_stop(t, &s, &err) == 0);
	CHECK(s.n_samples >= 2 && s.n_busy_known >= 2 && s.cause_pct[RM_THROTTLE_POWER_CAP] == 0);
	CHECK(rm_read_file(log, 1 << 16, &text, NULL, &err) == 0);
	CHECK(text && strstr(text, ",clocks_event_reasons.active ") &&
	      strstr(text, ",clocks_throttle_reasons.active "));
	free(text);
	unsetenv("FAKE_NVSMI_OLD");
	unsetenv("FAKE_NVSMI_REPLAY_MS");
	unsetenv("FAKE_NVSMI_LOG");
	setenv("PATH", old_path, 1);
	free(old_path);
	free(replay);
	free(log);
	tfs_rm_tree(root);
}
