/*
 * The metric table: which way a metric should go, from the words of its name and unit. The
 * names in perf.csv's metric column are whatever a workload prints ("samples_per_second",
 * "tokens/s", "TFLOPs/s/GPU", "time_to_train_min", "ms/iter"), so the table reads words and
 * rates rather than exact names.
 */
#include <ctype.h>
#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "rm/results.h"
#include "rm/util.h"

const char *rm_direction_name(rm_direction d)
{
	return d == RM_DIR_HIGHER ? "higher" : d == RM_DIR_LOWER ? "lower" : "unknown";
}

static int direction_in_list(const char *w, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(w, *list))
			return 1;
	return 0;
}

static const char *const time_units[] = {
    "s",	   "sec",	   "secs",   "second",	"seconds",     "ms",	       "msec",
    "millisecond", "milliseconds", "us",     "usec",	"microsecond", "microseconds", "ns",
    "min",	   "mins",	   "minute", "minutes", "h",	       "hr",	       "hrs",
    "hour",	   "hours",	   "day",    "days",	NULL};

static const char *const higher_words[] = {
    "throughput", "fps",  "tflops",    "gflops",   "pflops", "flops",	"tflop",   "qps",
    "rps",	  "ips",  "bandwidth", "accuracy", "acc",    "mfu",	"speedup", "hfu",
    "tps",	  "bleu", "rouge",     "f1",	   "iops",   "goodput", NULL};

static const char *const lower_words[] = {
    "latency", "time", "duration", "loss",     "perplexity", "ppl",   "elapsed", "ttft",
    "tpot",    "itl",  "runtime",  "walltime", "wall",	     "error", "wer",	 NULL};

/* A word like "tokens/s", "s/iter", "tflops/s/gpu": a rate or a time per unit. */
static rm_direction ratio(const char *w)
{
	char num[64];
	const char *slash = strchr(w, '/');
	size_t nl;

	if (!slash)
		return RM_DIR_UNKNOWN;
	nl = (size_t)(slash - w);
	if (nl >= sizeof(num))
		return RM_DIR_UNKNOWN;
	memcpy(num, w, nl);
	num[nl] = '\0';
	if (direction_in_list(num, time_units))
		return RM_DIR_LOWER; /* seconds per something */
	for (const char *p = slash; p; p = strchr(p + 1, '/')) {
		char den[64];
		size_t dl = strcspn(p + 1, "/");
		if (dl >= sizeof(den))
			continue;
		memcpy(den, p + 1, dl);
		den[dl] = '\0';
		if (direction_in_list(den, time_units))
			return RM_DIR_HIGHER; /* something per second */
	}
	return RM_DIR_UNKNOWN;
}

/* Judges one text (name or unit): splits into lowercase words on anything but letters,
 * digits and '/'. */
static rm_direction direction_judge(const char *text)
{
	char words[32][64];
	size_t nw = 0, len = 0;
	rm_direction d;

	if (!text)
		return RM_DIR_UNKNOWN;
	for (const char *p = text;; p++) {
		int c = (unsigned char)*p;
		if (c && (isalnum(c) || c == '/')) {
			if (len < sizeof(words[0]) - 1 && nw < 32)
				words[nw][len++] = (char)tolower(c);
			continue;
		}
		if (len && nw < 32) {
			words[nw][len] = '\0';
			nw++;
		}
		len = 0;
		if (!c)
			break;
	}
	/* Rates first: "time/s" hardly exists, "samples/s" must not read as a time. */
	for (size_t i = 0; i < nw; i++)
		if ((d = ratio(words[i])) != RM_DIR_UNKNOWN)
			return d;
	/* "X per second", "X_per_sec": a rate. */
	for (size_t i = 0; i + 1 < nw; i++)
		if (!strcmp(words[i], "per") && direction_in_list(words[i + 1], time_units))
			return RM_DIR_HIGHER;
	for (size_t i = 0; i < nw; i++) {
		size_t l = strlen(words[i]);
		if (direction_in_list(words[i], higher_words))
			return RM_DIR_HIGHER;
		/* "tokens_per_sec" splits on '_' only if written so; "tokpersec", "imgps" */
		if (l > 3 && (rm_ends_with(words[i], "persec") || rm_ends_with(words[i], "/sec")))
			return RM_DIR_HIGHER;
	}
	for (size_t i = 0; i < nw; i++)
		if (direction_in_list(words[i], lower_words) ||
		    direction_in_list(words[i], time_units))
			return RM_DIR_LOWER;
	return RM_DIR_UNKNOWN;
}

rm_direction rm_direction_guess(const char *metric, const char *unit)
{
	rm_direction d = direction_judge(unit);
	return d != RM_DIR_UNKNOWN ? d : direction_judge(metric);
}

/* Overrides */

struct override {
	char *model;
	char *metric;
	rm_direction dir;
};

struct rm_direction_table {
	struct override *v;
	size_t n;
};

rm_direction_table *rm_direction_table_new(void)
{
	return rm_xcalloc(1, sizeof(rm_direction_table));
}

void rm_direction_table_free(rm_direction_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].model);
		free(t->v[i].metric);
	}
	free(t->v);
	free(t);
}

int rm_direction_table_add_model(rm_direction_table *t, const char *model, const json_t *entry,
				 const char *source, rm_error *err)
{
	json_t *md = json_object_get(entry, "metric_direction");
	const char *metric;
	json_t *v;

	if (!md)
		return 0;
	if (!json_is_object(md))
		return rm_error_set(err, RM_ERR_INPUT,
				    "'%s': model '%s': field 'metric_direction' must be an object "
				    "like {\"time_to_train\": \"lower\"}",
				    source, model);
	json_object_foreach (md, metric, v) {
		const char *s = json_string_value(v);
		rm_direction d = s && !strcmp(s, "higher")  ? RM_DIR_HIGHER
				 : s && !strcmp(s, "lower") ? RM_DIR_LOWER
							    : RM_DIR_UNKNOWN;
		if (d == RM_DIR_UNKNOWN)
			return rm_error_set(err, RM_ERR_INPUT,
					    "'%s': model '%s': metric_direction of '%s' must be "
					    "\"higher\" or \"lower\"",
					    source, model, metric);
		t->v = rm_xrealloc(t->v, (t->n + 1) * sizeof(*t->v));
		t->v[t->n].model = rm_xstrdup(model);
		t->v[t->n].metric = rm_xstrdup(metric);
		t->v[t->n].dir = d;
		t->n++;
	}
	return 0;
}

static int direction_load_file(rm_direction_table *t, const char *path, const char *scope,
			       rm_error *err)
{
	char *text = NULL;
	size_t len = 0;
	json_error_t je;
	json_t *root = NULL, *models, *m;
	size_t i;
	int rc, ret = -1;

	if (rm_read_file(path, (size_t)64 << 20, &text, &len, err) < 0) {
		if (!rm_error_missing(err))
			return -1;
		rm_error_clear(err); /* no models.json there: nothing to add */
		return 0;
	}
	root = json_loadb(text, len, 0, &je);
	if (!root) {
		rm_error_set(err, RM_ERR_INPUT, "'%s' line %d column %d: %s", path, je.line,
			     je.column, je.text);
		goto out;
	}
	/* MAD's models.json is an array; some registries wrap it as {"models": [...]}. */
	models = json_is_array(root) ? root : json_object_get(root, "models");
	json_array_foreach (models, i, m) {
		const char *name = json_string_value(json_object_get(m, "name"));
		char *full;
		if (!name)
			continue; /* the registry reports that */
		full = scope ? rm_xasprintf("%s/%s", scope, name) : rm_xstrdup(name);
		rc = rm_direction_table_add_model(t, full, m, path, err);
		free(full);
		if (rc < 0)
			goto out;
	}
	ret = 0;
out:
	json_decref(root);
	free(text);
	return ret;
}

int rm_direction_table_load(rm_direction_table *t, const char *root, rm_error *err)
{
	char *path = rm_xasprintf("%s/models.json", root), *sdir = rm_xasprintf("%s/scripts", root);
	DIR *d;
	struct dirent *e;
	int ret = direction_load_file(t, path, NULL, err);

	free(path);
	if (ret == 0 && (d = opendir(sdir))) {
		while (ret == 0 && (e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			path = rm_xasprintf("%s/%s/models.json", sdir, e->d_name);
			ret = direction_load_file(t, path, e->d_name, err);
			free(path);
		}
		closedir(d);
	}
	free(sdir);
	return ret;
}

rm_direction rm_direction_lookup(const rm_direction_table *t, const char *model, const char *metric,
				 const char **why)
{
	const struct override *best = NULL;
	size_t best_len = 0;

	for (size_t i = 0; t && i < t->n; i++) {
		const struct override *o = &t->v[i];
		size_t ml = strlen(o->model);
		if (strcmp(o->metric, metric))
			continue;
		/* The model itself, or a multiple_results row "<model>_<name>". */
		if (!strcmp(o->model, model) ||
		    (!strncmp(o->model, model, ml) && model[ml] == '_' && ml > best_len)) {
			if (!strcmp(o->model, model)) {
				best = o;
				break;
			}
			best = o;
			best_len = ml;
		}
	}
	if (best) {
		if (why)
			*why = "models.json";
		return best->dir;
	}
	if (why)
		*why = "metric table";
	return rm_direction_guess(metric, NULL);
}
