/*
 * GPU telemetry sampled on the host while a workload runs: power, temperature, VRAM, busy
 * percent and the shader clock of the GPUs the run uses, never the others.
 *
 * Sources:
 *   AMD     sysfs, under the device of each GPU's DRM render node
 *           (<sysfs>/class/drm/renderD<N>/device: hwmon/hwmon* power1_average, else
 *           power1_input, in microwatts; temp*_input in millidegrees, the hottest counts;
 *           mem_info_vram_used in bytes; gpu_busy_percent; the current (starred) level of
 *           pp_dpm_sclk). Each file is opened once and re-read with pread at offset 0.
 *           Why the clock is held down: the throttle bits of the binary gpu_metrics file
 *           (rm_telem_parse_gpu_metrics), and the power limit from hwmon power1_cap.
 *   NVIDIA  one long-lived `nvidia-smi --query-gpu=index,power.draw,temperature.gpu,
 *           memory.used,utilization.gpu,clocks.sm,enforced.power.limit,
 *           clocks_event_reasons.active --format=csv,noheader,nounits -lms N -i <the run's
 *           GPUs>`, read line by line (drivers older than 535 name the last field
 *           clocks_throttle_reasons.active: asked again so when the first query is refused).
 *
 * The sampler is one thread per run (rm_telem_start .. rm_telem_stop): it never touches the
 * caller's output stream, its clock or its signals (every signal is blocked in it), and the
 * caller's only waits are the start and a stop bounded at RM_TELEM_STOP_WAIT seconds (a
 * sysfs read stuck in a hung driver leaves the thread behind, detached, rather than the
 * run). Memory is constant: per GPU running sums, maxima and the last reading; samples go
 * straight to the time-series file, never to memory.
 *
 * Figures of a run (rm_telem_summary): power and energy are the run's GPUs together (what
 * performance per watt divides by); VRAM is the most any one GPU used, temperature the
 * hottest reading of any; busy is the mean over GPUs and samples. Energy integrates each
 * GPU's power over the sampled window (trapezoids between readings, the first and last
 * reading held to the window's edges), and the average power is that energy over the
 * window, so a GPU held at P watts for T seconds gives P and P*T exactly.
 *
 * Throttling: a sample is "busy" when the GPU is at least RM_TELEM_BUSY_PCT percent busy;
 * a busy sample whose clock is below (100 - RM_TELEM_THROTTLE_DROP_PCT) percent of the
 * highest clock that GPU reached while busy so far counts as throttled: the clock fell
 * while the GPU had work. The summary keeps their share and the first such fall.
 *
 * Throttle causes: where the driver says why a clock is held down (NVIDIA's clock event
 * reasons, amdgpu's throttle status), each busy reading counts under every cause active in
 * it; the summary keeps, per cause, the share of busy readings under it, and the first busy
 * reading under a cause that is a problem (thermal, hardware slowdown, power brake, a clock
 * setting).
 *
 * Errors follow rm/util.h. Nothing here prints; the caller decides what to say.
 */
#ifndef RM_TELEMETRY_H
#define RM_TELEMETRY_H

#include <stddef.h>
#include <stdio.h>

#include "rm/context.h"
#include "rm/util.h"

/* --telemetry: auto (the default: when the run has GPUs), on (say so when nothing is
 * sampled), off. */
typedef enum rm_telemetry_mode {
	RM_TELEMETRY_AUTO = 0,
	RM_TELEMETRY_ON,
	RM_TELEMETRY_OFF,
} rm_telemetry_mode;
extern const rm_choice rm_telemetry_words[]; /* "auto", "on", "off" */

#define RM_TELEM_INTERVAL	   0.1 /* seconds between samples: 10 Hz */
#define RM_TELEM_BUSY_PCT	   80.0
#define RM_TELEM_THROTTLE_DROP_PCT 10.0
#define RM_TELEM_STOP_WAIT	   2.0 /* seconds rm_telem_stop waits for the thread */
#define RM_TELEM_MAX_GPUS	   64
#define RM_TELEM_SERIES_HEADER                                                                     \
	"t_s,gpu,power_w,temp_c,vram_mib,util_pct,sclk_mhz,power_limit_w,throttle"

/*
 * Why a GPU's clock is held down, in words every vendor's reasons map to (the table
 * rm_throttle_causes, in this order). Expected ones are a GPU working as designed at full
 * load; the others mean the run's figures are not what the GPU can do.
 */
typedef enum rm_throttle_cause {
	RM_THROTTLE_POWER_CAP = 0, /* at its power limit (NVIDIA SW power cap, AMD PPT): expected */
	RM_THROTTLE_CURRENT,	   /* AMD: a current limit (TDC, EDC): expected under full load */
	RM_THROTTLE_SYNC_BOOST,	   /* NVIDIA: held to the slowest GPU of a sync-boost group */
	RM_THROTTLE_THERMAL,	   /* a temperature limit (software or hardware): a problem */
	RM_THROTTLE_HW_SLOWDOWN,   /* hardware slowdown (NVIDIA HW slowdown, AMD PROCHOT) */
	RM_THROTTLE_POWER_BRAKE,   /* NVIDIA: the board's external power brake signal */
	RM_THROTTLE_CLOCK_SETTING, /* a clock setting (applications or display clocks) */
	RM_THROTTLE_OTHER,	   /* a reason the driver does not name portably */
	RM_THROTTLE_CAUSES
} rm_throttle_cause;

typedef struct rm_throttle_info {
	const char *word;   /* the metric's part: gpu_throttle_<word>_pct; the series' word */
	const char *what;   /* for notes: "the power cap" */
	int expected;	    /* 1: normal under full load; 0: a problem */
	const char *advice; /* what to do about a problem cause; NULL for expected ones */
} rm_throttle_info;
extern const rm_throttle_info rm_throttle_causes[RM_THROTTLE_CAUSES];

/* One GPU at one instant; NAN for what could not be read. The fields after sclk_mhz are 0
 * when the source does not report them. */
typedef struct rm_telem_sample {
	double power_w;
	double temp_c;
	double vram_mib;
	double util_pct;
	double sclk_mhz;
	double power_limit_w;  /* the enforced power limit; 0: unknown */
	unsigned causes;       /* 1u << rm_throttle_cause for each cause active now */
	unsigned causes_known; /* the causes this source can report (0: it reported none now) */
} rm_telem_sample;

/* ---- the pure pieces (unit-tested) ---- */

/* A sysfs integer attribute ("250000000\n") times scale into *out: hwmon power in
 * microwatts (scale 1e-6: watts), temperatures in millidegrees (1e-3), VRAM bytes
 * (1.0 / 1048576: MiB), busy percent (1). 0, or -1 when text is not one integer. */
int rm_telem_parse_value(const char *text, double scale, double *out);
/* The current shader clock from pp_dpm_sclk ("0: 500Mhz\n1: 2100Mhz *\n"): the MHz of the
 * level marked '*'. 0, or -1 when no level is marked. */
int rm_telem_parse_sclk(const char *text, double *mhz);
/* One line of the nvidia-smi query above (with or without units: "0, 380.42 W, 37, 45000
 * MiB, 100 %, 1965 MHz, 700.00 W, 0x0000000000000004" or "0, 380.42, 37, 45000, 100, 1965,
 * 700.00, 0x0000000000000004"; a line of the first six fields alone is taken too, without
 * causes): the GPU index and its sample; "[N/A]" and "[Not Supported]" read as NAN (as 0,
 * unknown, for the limit and the reasons). 0, or -1 when the line is not one (a header, an
 * error message). */
int rm_telem_parse_nvsmi(const char *line, long *gpu, rm_telem_sample *s);
/* NVIDIA's clock event reasons (NVML's nvmlClocksEventReason* bits, nvidia-smi's
 * clocks_event_reasons.active) as causes: 0x4 power cap, 0x20 and 0x40 thermal, 0x80 power
 * brake, 0x8 hardware slowdown (when neither of those two says why), 0x10 sync boost, 0x2 and
 * 0x100 clock settings; 0x1 (idle) is none; any other bit is "other". */
unsigned rm_telem_nvidia_causes(unsigned long long reasons);
/*
 * The throttle causes in an amdgpu gpu_metrics file (its binary struct gpu_metrics_v1_x of
 * the kernel's kgd_pp_interface.h, size n): version 1.3's ASIC-independent
 * indep_throttle_status (SMU_THROTTLER_* bits of amdgpu_smu.h: PPT and SPL power limits,
 * TDC/EDC current limits, temperatures and VRHOT, PROCHOT), the throttle_status of versions
 * 1.4 to 1.6 (MI300: smu_v13_0_6_pmfw.h's PROCHOT, PPT, socket, VR and HBM thermal bits),
 * and for 1.0 to 1.2 a non-zero ASIC-dependent throttle_status as "other". 0 with *causes
 * and *known (the causes that version can name), -1 when the buffer is no gpu_metrics of a
 * known version (format 1, content 0 to 6).
 */
int rm_telem_parse_gpu_metrics(const void *buf, size_t n, unsigned *causes, unsigned *known);

/* What a run's telemetry came to. Fields are NAN when no GPU gave that reading. */
typedef struct rm_telem_summary {
	size_t n_gpus;	  /* GPUs sampled */
	size_t n_samples; /* readings taken (one GPU at one instant each) */
	double window_s;  /* sampled seconds */
	double power_avg_w;
	double power_max_w; /* the highest sum of the GPUs' latest readings */
	double energy_j;
	double vram_max_mib;
	double util_avg_pct;
	double temp_max_c;
	/* throttling: percent of busy samples whose clock had fallen (NAN without busy
	 * samples with a clock), and the first fall: GPU index (-1 when none), when (seconds
	 * into the window), from and to what clock, how busy */
	double throttle_pct;
	long throttle_gpu;
	double throttle_t, throttle_from_mhz, throttle_to_mhz, throttle_util_pct;
	/* causes: per cause the percent of busy readings (with reasons) under it, NAN when the
	 * source never reported that cause; n_busy_known: those readings (what merges weigh
	 * by); the first busy reading under a problem cause (cause_gpu -1 when none); the
	 * power limit of the throttling GPU (else the lowest of the run's GPUs), NAN unknown */
	double cause_pct[RM_THROTTLE_CAUSES];
	size_t n_busy_known;
	long cause_gpu;
	int cause_first;
	double cause_t;
	double power_limit_w;
} rm_telem_summary;

/* The expected or problem cause that explains the most busy readings (ties: the table's
 * order), or -1 when none was seen; problems_only picks among the problem causes. */
int rm_telem_summary_main_cause(const rm_telem_summary *s, int problems_only);

/* Summary with every figure NAN (what a run without telemetry has). */
void rm_telem_summary_none(rm_telem_summary *s);

/*
 * The running figures of one run over n GPUs (at most RM_TELEM_MAX_GPUS). Times are
 * seconds on any monotonic clock; samples must come in time order.
 */
typedef struct rm_telem_agg rm_telem_agg;
rm_telem_agg *rm_telem_agg_new(size_t n_gpus, const long *gpu_ids, double t_start);
/* A reading of GPU slot i (0 <= i < n_gpus) at time t. */
void rm_telem_agg_add(rm_telem_agg *a, size_t i, double t, const rm_telem_sample *s);
/* The figures of the window [t_start, t_end]; the aggregate stays usable. */
void rm_telem_agg_summary(const rm_telem_agg *a, double t_end, rm_telem_summary *out);
void rm_telem_agg_free(rm_telem_agg *a);

/* Merges the summaries of several hosts that ran one workload together (the nodes of a
 * SLURM job): power and energy add up, maxima take the highest, busy is weighted by
 * samples, the window is the longest. */
void rm_telem_summary_merge(rm_telem_summary *into, const rm_telem_summary *other);

/* A summary to JSON ({"power_avg_w": ..., ...}; NAN figures left out) and back (missing
 * figures are NAN), for the result files of SLURM nodes. */
typedef struct json_t json_t;
json_t *rm_telem_summary_to_json(const rm_telem_summary *s);
void rm_telem_summary_from_json(json_t *j, rm_telem_summary *out);

/* ---- sampling ---- */

typedef struct rm_telem_opts {
	const char *vendor;	/* "AMD" or "NVIDIA" (the host context's gpu_vendor) */
	const char *sysfs_root; /* NULL: "/sys" */
	const rm_context *ctx;	/* AMD: the render node of each GPU index */
	const long *gpus;	/* the GPU indexes the run uses */
	size_t n_gpus;
	double interval; /* seconds; 0: RM_TELEM_INTERVAL */
	/* The time series, or NULL: rows "t_s,gpu,..." (RM_TELEM_SERIES_HEADER, written first)
	 * as samples come, flushed about every second. Taken over: closed by rm_telem_stop. */
	FILE *series;
} rm_telem_opts;

#define RM_TELEM_OPTS_INIT                                                                         \
	{                                                                                          \
		.vendor = NULL, .sysfs_root = NULL, .ctx = NULL, .gpus = NULL, .n_gpus = 0,        \
		.interval = 0, .series = NULL                                                      \
	}

typedef struct rm_telem rm_telem;

/* Opens the sources and starts the thread. -1 with err saying why nothing can be sampled
 * (no render node for a GPU, no readable sensor, nvidia-smi missing); series is closed
 * then too. */
int rm_telem_start(rm_telem **t, const rm_telem_opts *o, rm_error *err);
/* Stops sampling and fills *out with the figures of the window from start to now. Returns
 * 0; -1 with err when the source gave up during the run (nvidia-smi exited, a write to the
 * series failed): *out still holds what was sampled. Frees t (NULL is fine: no figures). */
int rm_telem_stop(rm_telem *t, rm_telem_summary *out, rm_error *err);

/* Whether telemetry can be read on this host for the GPUs of ctx (every GPU, as doctor
 * asks): 0 and *detail (what is readable, caller frees), or -1 with err saying what is
 * missing. nvidia-smi is run once (at most 10 s) for NVIDIA. */
int rm_telem_probe(const rm_context *ctx, const char *sysfs_root, char **detail, rm_error *err);

#endif
