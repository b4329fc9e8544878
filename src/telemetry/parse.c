/*
 * The texts telemetry reads: sysfs attributes and nvidia-smi's CSV lines. Pure.
 *
 * nvidia-smi's CSV (nvidia-smi(1), "--format=csv" with "noheader" and "nounits"; e.g.
 * https://manpages.ubuntu.com/manpages/plucky/man1/nvidia-smi.1.html, driver 550): one line
 * per GPU per loop, the queried fields in order separated by ", ", numbers with their unit
 * after a space unless nounits ("380.42 W", "1965 MHz", "100 %", "45000 MiB"), and
 * "[N/A]" or "[Not Supported]" for what a GPU does not report.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rm/telemetry.h"
#include "rm/util.h"

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

/* One field: a number with an optional unit, or a placeholder of nvidia-smi's (NAN). */
static int nvsmi_field(const char *f, size_t len, double *out)
{
	char buf[64], *stop;
	double v;

	while (len && (*f == ' ' || *f == '\t'))
		f++, len--;
	while (len && (f[len - 1] == ' ' || f[len - 1] == '\t' || f[len - 1] == '\r'))
		len--;
	if (len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, f, len);
	buf[len] = '\0';
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

int rm_telem_parse_nvsmi(const char *line, long *gpu, rm_telem_sample *s)
{
	double v[6];
	size_t n = 0;
	const char *p = line;

	for (;;) {
		size_t len = strcspn(p, ",");
		if (n == 6 || nvsmi_field(p, len, &v[n]) < 0)
			return -1;
		n++;
		if (!p[len])
			break;
		p += len + 1;
	}
	if (n != 6 || !isfinite(v[0]) || v[0] < 0 || v[0] > 4095 || v[0] != floor(v[0]))
		return -1;
	*gpu = (long)v[0];
	s->power_w = v[1];
	s->temp_c = v[2];
	s->vram_mib = v[3];
	s->util_pct = v[4];
	s->sclk_mhz = v[5];
	return 0;
}
