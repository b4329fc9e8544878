/*
 * Helpers shared by the parsers: line cleaning, whole keys, bounded number scanning,
 * constant-memory series, warm-up detection and rank slots. See parse_util.h and rm/parser.h
 * for the rules.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "parse_util.h"
#include "rm/util.h"

const char *rm_parsers__skip_blank(const char *p, const char *end)
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

/* Sets *out and *outlen to the line without ANSI sequences (copied into c->buf if it had any). */
static void strip_into(pu_cleaner *c, const char *line, size_t len, const char **out,
		       size_t *outlen)
{
	if (!len || !memchr(line, 0x1b, len)) {
		*out = line;
		*outlen = len;
		return;
	}
	*outlen = strip_ansi(c->buf, sizeof(c->buf), line, len);
	*out = c->buf;
}

/* Removes the labels in front of s[0..*n) (rm_parsers__label) and records the rank in c->tag:
 * the first label's rank, else a Primus tag further in the line. */
static void take_labels(pu_cleaner *c, const char **s, size_t *n)
{
	c->tag = -1;
	for (int i = 0; i < 3; i++) {
		const char *rest;
		long r = rm_parsers__label(*s, *n, &rest);
		if (r == RM_PARSERS_NO_LABEL)
			break;
		if (c->tag < 0 && r >= 0)
			c->tag = r;
		*n -= (size_t)(rest - *s);
		*s = rest;
	}
	if (c->tag < 0)
		c->tag = rm_parsers__rank_tag(*s, *n);
}

void rm_parsers__clean(pu_cleaner *c, const char *line, size_t len, const char **out,
		       size_t *outlen)
{
	const char *cr = NULL;

	/* A trailing '\r' is a CRLF line end, not a progress-bar rewrite. */
	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == '\n'))
		len--;
	/* Colour first (a label may be coloured), then the labels (they come before the first
	 * progress update), then what a terminal finally shows: the text after the last '\r'. */
	strip_into(c, line, len, &line, &len);
	take_labels(c, &line, &len);
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
	*out = line;
	*outlen = len;
}

void rm_parsers__strip(pu_cleaner *c, const char *line, size_t len, const char **out,
		       size_t *outlen)
{
	strip_into(c, line, len, out, outlen);
	take_labels(c, out, outlen);
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

static int lower_eq(const char *p, const char *word, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((p[i] | 0x20) != word[i])
			return 0;
	return 1;
}

/* "nan", "inf", "infinity" (any case, optional sign) at p: returns the token length or 0. */
static size_t nonfinite_token(const char *p, const char *end, double *out)
{
	const char *q = p;
	int neg = 0;
	size_t left;

	if (q < end && (*q == '+' || *q == '-'))
		neg = *q++ == '-';
	left = (size_t)(end - q);
	if (left >= 3 && lower_eq(q, "nan", 3)) {
		*out = NAN;
		return (size_t)(q + 3 - p);
	}
	if (left >= 3 && lower_eq(q, "inf", 3)) {
		*out = neg ? -INFINITY : INFINITY;
		return (size_t)(q + (left >= 8 && lower_eq(q, "infinity", 8) ? 8 : 3) - p);
	}
	return 0;
}

int rm_parsers__number(const char *p, const char *end, int commas, double *out, const char **next)
{
	char tmp[80];
	size_t t = 0, nf;
	int digits = 0, frac_digits = 0;
	char *e;
	double v;

	p = rm_parsers__skip_blank(p, end);
	if ((nf = nonfinite_token(p, end, &v)) > 0) {
		*out = v;
		if (next)
			*next = p + nf;
		return PU_NONFINITE;
	}
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
			frac_digits++;
		}
		if (!frac_digits)
			return PU_NONE; /* "8." is a number cut mid-write */
		digits += frac_digits;
	}
	if (!digits)
		return PU_NONE;
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
		return PU_OK;
	}
	v = strtod(tmp, &e);
	if (*e)
		return PU_NONE;
	if (!isfinite(v)) { /* overflow: 1e999 */
		*out = v;
		if (next)
			*next = p;
		return PU_NONFINITE;
	}
	*out = v;
	if (next)
		*next = p;
	return PU_OK;
}

int rm_parsers__long(const char *p, const char *end, long *out, const char **next)
{
	long v = 0;
	int digits = 0;

	p = rm_parsers__skip_blank(p, end);
	while (p < end && is_digit(*p)) {
		if (v > (__LONG_MAX__ - 9) / 10)
			return PU_NONE;
		v = v * 10 + (*p - '0');
		p++;
		digits++;
	}
	if (!digits)
		return PU_NONE;
	*out = v;
	if (next)
		*next = p;
	return PU_OK;
}

/* "(name, pid=N) " or "(pid=N) " or "(name pid=N) " (Ray's worker prefix, as SkyPilot and
 * Ray Train print it): returns the end of the label, or NULL. */
static const char *ray_label(const char *p, const char *end)
{
	const char *close, *pid;
	long r;

	if (p >= end || *p != '(')
		return NULL;
	close = memchr(p, ')', (size_t)(end - p) < 96 ? (size_t)(end - p) : 96);
	if (!close || close + 1 >= end || (close[1] != ' ' && close[1] != '\t'))
		return NULL;
	pid = pu_find(p, (size_t)(close - p), "pid=");
	if (!pid || (pid > p + 1 && pid[-1] != ' ' && pid[-1] != '(') ||
	    rm_parsers__long(pid + 4, close, &r, &pid) < 0 || pid != close)
		return NULL;
	return close + 2;
}

long rm_parsers__label(const char *s, size_t n, const char **rest)
{
	const char *end = s + n, *p = rm_parsers__skip_blank(s, end), *q;
	long r;

	*rest = s;
	/* [rank3]: and [default3]: (torchrun --tee / --role) */
	if (p < end && *p == '[') {
		q = p + 1;
		if ((size_t)(end - q) > 4 && !memcmp(q, "rank", 4) && is_digit(q[4]))
			q += 4;
		else if ((size_t)(end - q) > 7 && !memcmp(q, "default", 7) && is_digit(q[7]))
			q += 7;
		else
			q = NULL;
		if (q && rm_parsers__long(q, end, &r, &q) == 0 && q + 1 < end && q[0] == ']' &&
		    q[1] == ':') {
			*rest = q + 2;
			return r;
		}
	}
	/* "3: ", " 3: ", "   3:  " (srun --label, padded to the widest task number): one blank
	 * after the colon belongs to the label, further ones to the line */
	if (p < end && is_digit(*p) && rm_parsers__long(p, end, &r, &q) == 0 && q < end &&
	    *q == ':' && (q + 1 == end || q[1] == ' ' || q[1] == '\t')) {
		*rest = q + 1 < end ? q + 2 : end;
		return r;
	}
	if ((q = ray_label(p, end))) {
		*rest = q;
		return -1; /* a worker's pid, not a rank */
	}
	return RM_PARSERS_NO_LABEL;
}

long rm_parsers__rank_tag(const char *s, size_t n)
{
	const char *end = s + n, *k, *q, *rest;
	long r = rm_parsers__label(s, n, &rest);

	if (r >= 0)
		return r;
	/* [rank-3/8] (Primus), after a timestamp */
	k = pu_find(s, n < 96 ? n : 96, "[rank-");
	if (k && rm_parsers__long(k + 6, end, &r, &q) == 0 && q < end && *q == '/')
		return r;
	return -1;
}

int rm_parsers__real_loss(double v)
{
	return isfinite(v) && v > 0;
}

void rm_parsers__series_init(pu_series *s, const rm_parser_config *cfg)
{
	memset(s, 0, sizeof(*s));
	s->fixed = cfg && cfg->warmup >= 0 ? cfg->warmup : RM_PARSER_WARMUP_AUTO;
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
	if (s->n < RM_PARSER_WARMUP_WINDOW) {
		s->win[s->n] = v;
		s->win_step[s->n] = s->pend_step;
	}
	if (s->fixed >= 0 && s->n >= s->fixed)
		s->sum_after_fixed += v;
	s->n++;
	s->sum += v;
	s->last = v;
	s->last_step = s->pend_step;
}

void rm_parsers__series_add(pu_series *s, long step, double v)
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

long rm_parsers__series_count(pu_series *s)
{
	series_commit(s);
	return s->n;
}

double rm_parsers__series_last(pu_series *s)
{
	series_commit(s);
	return s->last;
}

/* Median of a[0..n), n <= RM_PARSER_WARMUP_WINDOW (insertion sort of a copy). */
static double median(const double *a, long n)
{
	double b[RM_PARSER_WARMUP_WINDOW];

	for (long i = 0; i < n; i++) {
		long j = i;
		while (j > 0 && b[j - 1] > a[i]) {
			b[j] = b[j - 1];
			j--;
		}
		b[j] = a[i];
	}
	return n % 2 ? b[n / 2] : (b[n / 2 - 1] + b[n / 2]) / 2;
}

pu_cut rm_parsers__series_cut(pu_series *s, int higher_better)
{
	pu_cut c = {0, -1, 0};
	long k, w = 0;
	double ref, slack = RM_PARSER_WARMUP_SLACK_PCT / 100.0;

	series_commit(s);
	if (s->n == 0)
		return c;
	if (s->fixed >= 0) {
		c.count = s->fixed < s->n - 1 ? s->fixed : s->n - 1;
		return c;
	}
	k = s->n < RM_PARSER_WARMUP_WINDOW ? s->n : RM_PARSER_WARMUP_WINDOW;
	if (k < 2)
		return c;
	ref = median(s->win + k / 2, k - k / 2);
	if (!(ref > 0))
		return c;
	while (w < k - 1 &&
	       (higher_better ? s->win[w] < ref * (1 - slack) : s->win[w] > ref * (1 + slack)))
		w++;
	c.count = w;
	if (w > 0 && s->win_step[w - 1] >= 0) {
		c.by_step = 1;
		c.step = s->win_step[w - 1];
	}
	return c;
}

double rm_parsers__series_mean(pu_series *s, const pu_cut *cut, long *dropped)
{
	long d = 0;
	double sum;

	series_commit(s);
	if (dropped)
		*dropped = 0;
	if (s->n == 0)
		return NAN;
	if (cut && cut->by_step) {
		while (d < s->n && d < RM_PARSER_WARMUP_WINDOW && s->win_step[d] >= 0 &&
		       s->win_step[d] <= cut->step)
			d++;
	} else if (cut) {
		d = cut->count;
	}
	if (d > s->n - 1)
		d = s->n - 1;
	if (dropped)
		*dropped = d;
	if (d == 0)
		return s->sum / (double)s->n;
	if (s->fixed >= 0 && d == s->fixed)
		return s->sum_after_fixed / (double)(s->n - d);
	if (d > RM_PARSER_WARMUP_WINDOW) /* a fixed warm-up cut short to n - 1: the last */
		return s->last;
	sum = 0;
	if (s->n <= RM_PARSER_WARMUP_WINDOW) { /* all in the window: add up what is kept */
		for (long i = d; i < s->n; i++)
			sum += s->win[i];
		return sum / (double)(s->n - d);
	}
	for (long i = 0; i < d; i++) /* else the total minus what is left out */
		sum += s->win[i];
	return (s->sum - sum) / (double)(s->n - d);
}

void rm_parsers__series_emit(pu_series *s, rm_parse_result *r, const char *name, const char *unit,
			     const pu_cut *cut)
{
	if (rm_parsers__series_count(s) == 0)
		return;
	rm_result_add(r, name, s->last, unit, s->last_step, "last");
	rm_result_add(r, name, rm_parsers__series_mean(s, cut, NULL), unit, -1, "mean");
}

void rm_parsers__slots_init(pu_slots *ps, size_t nser, const rm_parser_config *cfg)
{
	memset(ps, 0, sizeof(*ps));
	ps->nser = nser;
	ps->cfg.warmup = cfg ? cfg->warmup : RM_PARSER_WARMUP_DEFAULT;
}

static void slot_reset(pu_slots *ps, int i, long tag)
{
	if (!ps->ser[i])
		ps->ser[i] = rm_xcalloc(ps->nser, sizeof(pu_series));
	for (size_t k = 0; k < ps->nser; k++)
		rm_parsers__series_init(&ps->ser[i][k], &ps->cfg);
	ps->tag[i] = tag;
	ps->loss_lines[i] = 0;
	ps->lines[i] = 0;
}

pu_series *rm_parsers__slots_get(pu_slots *ps, long tag, int real_loss)
{
	int i;

	for (i = 0; i < ps->used; i++)
		if (ps->tag[i] == tag)
			break;
	if (i == ps->used) {
		if (ps->used < RM_PARSER_MAX_RANKS) {
			slot_reset(ps, ps->used++, tag);
		} else {
			/* Full: a rank with the loss may take the place of one without. */
			if (!real_loss)
				return NULL;
			for (i = 0; i < ps->used && ps->loss_lines[i] > 0; i++)
				;
			if (i == ps->used)
				return NULL;
			slot_reset(ps, i, tag);
		}
	}
	ps->lines[i]++;
	if (real_loss)
		ps->loss_lines[i]++;
	return ps->ser[i];
}

pu_series *rm_parsers__slots_best(pu_slots *ps)
{
	int best = -1;

	for (int i = 0; i < ps->used; i++) {
		if (best < 0 || ps->loss_lines[i] > ps->loss_lines[best] ||
		    (ps->loss_lines[i] == ps->loss_lines[best] && ps->loss_lines[i] == 0 &&
		     ps->lines[i] > ps->lines[best]))
			best = i;
	}
	return best >= 0 ? ps->ser[best] : NULL;
}

void rm_parsers__slots_release(pu_slots *ps)
{
	for (int i = 0; i < RM_PARSER_MAX_RANKS; i++)
		free(ps->ser[i]);
	memset(ps->ser, 0, sizeof(ps->ser));
	ps->used = 0;
}

void rm_parsers__report_warmup(rm_parse_result *r, long dropped)
{
	r->warmup_dropped = dropped;
	rm_result_add(r, "warmup_steps_dropped", (double)dropped, "steps", -1, "summary");
}

/* Finds `iteration <N>/ <M>` (the first whole word "iteration" followed by N/M). */
int rm_parsers__iteration(const char *s, size_t n, long *iter, long *total)
{
	const char *end = s + n, *p = s, *k;

	while ((k = pu_key(p, (size_t)(end - p), "iteration"))) {
		const char *q;
		p = k + 9;
		if (rm_parsers__long(p, end, iter, &q) < 0)
			continue;
		q = rm_parsers__skip_blank(q, end);
		if (q >= end || *q != '/' || rm_parsers__long(q + 1, end, total, NULL) < 0)
			continue;
		return 0;
	}
	return -1;
}
