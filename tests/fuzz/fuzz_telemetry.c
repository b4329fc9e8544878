/*
 * Fuzzes what telemetry reads from outside the runner: nvidia-smi's lines, pp_dpm_sclk and
 * sysfs values, and a result file's "telemetry" object (SLURM nodes write it). Any input:
 * no crash, no read past the text, and what parses is a sample the aggregation takes.
 *
 * Input: byte 0 picks the reader (0 nvidia-smi line, 1 pp_dpm_sclk, 2 a sysfs value, 3 the
 * JSON summary, 4 an amdgpu gpu_metrics file: binary, read as it is); the rest is the text.
 */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rm/telemetry.h"
#include "rm/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;
	rm_telem_sample s;
	rm_telem_summary sum;
	long gpu;
	double v;

	if (size < 1)
		return 0;
	/* the readers take NUL-terminated text, as the sampler hands them */
	text = rm_xstrndup((const char *)data + 1, size - 1);
	switch (data[0] % 5) {
	case 0:
		if (rm_telem_parse_nvsmi(text, &gpu, &s) == 0) {
			rm_telem_agg *a = rm_telem_agg_new(1, &gpu, 0);
			if (gpu < 0 || gpu > 4095)
				abort();
			rm_telem_agg_add(a, 0, 0.1, &s);
			rm_telem_agg_add(a, 0, 0.2, &s);
			rm_telem_agg_summary(a, 0.3, &sum);
			if (!isnan(sum.power_avg_w) && !isfinite(sum.power_avg_w))
				abort();
			rm_telem_agg_free(a);
		}
		break;
	case 1:
		if (rm_telem_parse_sclk(text, &v) == 0 && !(v >= 0 && isfinite(v)))
			abort();
		break;
	case 2:
		if (rm_telem_parse_value(text, 1e-6, &v) == 0 && !isfinite(v))
			abort();
		break;
	case 4: {
		unsigned causes = 0, known = 0;
		if (rm_telem_parse_gpu_metrics(data + 1, size - 1, &causes, &known) == 0 &&
		    (causes & ~known))
			abort();
		break;
	}
	default: {
		json_t *j = json_loads(text, JSON_DECODE_ANY, NULL);
		rm_telem_summary other;
		rm_telem_summary_from_json(j, &sum);
		rm_telem_summary_none(&other);
		rm_telem_summary_merge(&other, &sum);
		json_decref(j);
		j = rm_telem_summary_to_json(&other);
		json_decref(j);
		break;
	}
	}
	free(text);
	return 0;
}
