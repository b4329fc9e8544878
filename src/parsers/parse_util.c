/*
 * Helpers shared by the parsers: line cleaning, bounded number scanning, constant-memory
 * series. See parse_util.h for the rules.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "parse_util.h"
#include "rm/util.h"

const char *pu_find(const char *s, size_t n, const char *needle)
{
	/* Log lines are short and needles a few bytes: memchr on the first byte then memcmp
	 * beats memmem's setup cost several times over (bench-parsers.sh). */
	size_t nl = strlen(needle);
	const char *end = s + n, *p = s;

	if (nl == 0)
		return s;
	while (nl <= (size_t)(end - p) && (p = memchr(p, needle[0], (size_t)(end - p) - nl + 1))) {
		if (!memcmp(p + 1, needle + 1, nl - 1))
			return p;
		p++;
	}
	return NULL;
}

const char *pu_skip_blank(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* Copies the visible text of src into dst, dropping ANSI escape sequences. */
static size_t strip_ansi(char *dst, size_t cap, const char *src, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)src[i];
		if (ch == 0x1b) {
			if (i + 1 < n && src[i + 1] == '[') {
				/* CSI: parameters and intermediates, then one final byte @..~ */
				i += 2;
				while (i < n && ((unsigned char)src[i] < 0x40 ||
						 (unsigned char)src[i] > 0x7e))
					i++;
			} else if (i + 1 < n && src[i + 1] == ']') {
				/* OSC (terminal titles, hyperlinks): ends at BEL or ESC '\' */
				i += 2;
				while (i < n && src[i] != '\a' &&
				       !(src[i] == 0x1b && i + 1 < n && src[i + 1] == '\\'))
					i++;
				if (i < n && src[i] == 0x1b)
					i++;
			} else {
				i++; /* two-byte escape */
			}
			continue;
		}
		if (o < cap)
			dst[o++] = (char)ch;
	}
	return o;
}

void pu_clean(pu_cleaner *c, const char *line, size_t len, const char **out, size_t *outlen)
{
	const char *cr;

	/* A trailing '\r' is a CRLF line end, not a progress-bar rewrite. */
	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == '\n'))
		len--;
	cr = NULL;
	for (size_t i = memchr(line, '\r', len) ? len : 0; i > 0; i--) { /* no memrchr in C11 */
		if (line[i - 1] == '\r') {
			cr = line + i - 1;
			break;
		}
	}
	if (cr) {
		len -= (size_t)(cr + 1 - line);
		line = cr + 1;
	}
	if (!len || !memchr(line, 0x1b, len)) {
		*out = line;
		*outlen = len;
		return;
	}
	*outlen = strip_ansi(c->buf, sizeof(c->buf), line, len);
	*out = c->buf;
}

static int is_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

/*
 * Clinger's fast path: a decimal with at most 15 significant digits and a power of ten up to
 * 22 converts exactly with one multiplication or division of two exact doubles, giving the
 * same correctly rounded result as strtod at a fraction of its cost. Anything else returns -1
 * and goes to strtod.
 */
static int fast_decimal(const char *s, double *out)
{
	static const double pow10[] = {1e0,  1e1,  1e2,	 1e3,  1e4,  1e5,  1e6,	 1e7,
				       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
				       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
	unsigned long long mant = 0;
	int neg = 0, digits = 0, frac = 0, exp10 = 0, eneg = 0, seen_dot = 0;

	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	for (; *s; s++) {
		if (*s == '.') {
			seen_dot = 1;
			continue;
		}
		if (*s < '0' || *s > '9')
			break;
		if (mant == 0 && *s == '0') { /* leading zeros are not significant */
			if (seen_dot)
				frac++;
			continue;
		}
		if (++digits > 15)
			return -1;
		mant = mant * 10 + (unsigned long long)(*s - '0');
		if (seen_dot)
			frac++;
	}
	if (*s == 'e') {
		s++;
		if (*s == '+' || *s == '-')
			eneg = *s++ == '-';
		for (; *s >= '0' && *s <= '9'; s++) {
			exp10 = exp10 * 10 + (*s - '0');
			if (exp10 > 400)
				return -1;
		}
	}
	if (*s)
		return -1;
	exp10 = (eneg ? -exp10 : exp10) - frac;
	if (exp10 < -22 || exp10 > 22)
		return -1;
	*out = exp10 < 0 ? (double)mant / pow10[-exp10] : (double)mant * pow10[exp10];
	if (neg)
		*out = -*out;
	return 0;
}

int pu_number(const char *p, const char *end, int commas, double *out, const char **next)
{
	char tmp[80];
	size_t t = 0;
	int digits = 0;
	char *e;
	double v;

	p = pu_skip_blank(p, end);
	if (p < end && (*p == '+' || *p == '-'))
		tmp[t++] = *p++;
	while (p < end && t < sizeof(tmp) - 8) {
		if (is_digit(*p)) {
			tmp[t++] = *p++;
			digits++;
		} else if (commas && *p == ',' && digits && p + 1 < end && is_digit(p[1])) {
			p++; /* thousands separator */
		} else {
			break;
		}
	}
	if (p < end && *p == '.' && t < sizeof(tmp) - 8) {
		tmp[t++] = *p++;
		while (p < end && is_digit(*p) && t < sizeof(tmp) - 8) {
			tmp[t++] = *p++;
			digits++;
		}
	}
	if (!digits)
		return -1;
	if (p < end && (*p == 'e' || *p == 'E')) {
		const char *q = p + 1;
		size_t t0 = t;
		tmp[t++] = 'e';
		if (q < end && (*q == '+' || *q == '-'))
			tmp[t++] = *q++;
		if (q < end && is_digit(*q)) {
			while (q < end && is_digit(*q) && t < sizeof(tmp) - 1)
				tmp[t++] = *q++;
			p = q;
		} else {
			t = t0; /* "5e" followed by text: the 'e' is not ours */
		}
	}
	tmp[t] = '\0';
	if (fast_decimal(tmp, &v) == 0) {
		*out = v;
		if (next)
			*next = p;
		return 0;
	}
	v = strtod(tmp, &e);
	if (*e || !isfinite(v))
		return -1;
	*out = v;
	if (next)
		*next = p;
	return 0;
}

int pu_long(const char *p, const char *end, long *out, const char **next)
{
	long v = 0;
	int digits = 0;

	p = pu_skip_blank(p, end);
	while (p < end && is_digit(*p)) {
		if (v > (__LONG_MAX__ - 9) / 10)
			return -1;
		v = v * 10 + (*p - '0');
		p++;
		digits++;
	}
	if (!digits)
		return -1;
	*out = v;
	if (next)
		*next = p;
	return 0;
}

int pu_field(const char *s, size_t n, const char *key, int commas, double *out, const char **after)
{
	const char *k = pu_find(s, n, key);

	if (!k)
		return -1;
	return pu_number(k + strlen(key), s + n, commas, out, after);
}

long pu_warmup(const rm_parser_config *cfg)
{
	if (!cfg)
		return RM_PARSER_WARMUP_DEFAULT;
	return cfg->warmup < 0 ? 0 : cfg->warmup;
}

void pu_series_init(pu_series *s, const rm_parser_config *cfg)
{
	memset(s, 0, sizeof(*s));
	s->warmup = pu_warmup(cfg);
	s->last_step = -1;
}

static void series_commit(pu_series *s)
{
	double v;

	if (!s->pending)
		return;
	v = s->pend_sum / (double)s->pend_cnt;
	s->pending = 0;
	if (!isfinite(v))
		return;
	s->n++;
	if (s->n > s->warmup)
		s->sum_steady += v;
	s->last = v;
	s->last_step = s->pend_step;
}

void pu_series_add(pu_series *s, long step, double v)
{
	if (!isfinite(v))
		return;
	if (s->pending && step >= 0 && step == s->pend_step) {
		s->pend_sum += v;
		s->pend_cnt++;
		return;
	}
	series_commit(s);
	s->pending = 1;
	s->pend_step = step;
	s->pend_sum = v;
	s->pend_cnt = 1;
}

long pu_series_count(pu_series *s)
{
	series_commit(s);
	return s->n;
}

double pu_series_last(pu_series *s)
{
	series_commit(s);
	return s->last;
}

double pu_series_mean(pu_series *s)
{
	series_commit(s);
	if (s->n == 0)
		return NAN;
	/* Drop min(warmup, n - 1) leading steps: with too few steps only the last remains. */
	if (s->n > s->warmup)
		return s->sum_steady / (double)(s->n - s->warmup);
	return s->last;
}

void pu_series_emit(pu_series *s, rm_parse_result *r, const char *name, const char *unit)
{
	if (pu_series_count(s) == 0)
		return;
	rm_result_add(r, name, s->last, unit, s->last_step, "last");
	rm_result_add(r, name, pu_series_mean(s), unit, -1, "mean");
}
