/*
 * Pinned references: model -> metric -> {value, lower, upper} (rm/results.h). A small table
 * looked up once per gated metric: a linear scan is enough.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rm/results.h"
#include "rm/util.h"

struct rm_references {
	rm_reference *v;
	size_t n;
};

rm_references *rm_references_new(void)
{
	return rm_xcalloc(1, sizeof(rm_references));
}

void rm_references_free(rm_references *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		free((char *)t->v[i].model);
		free((char *)t->v[i].metric);
	}
	free(t->v);
	free(t);
}

size_t rm_references_size(const rm_references *t)
{
	return t ? t->n : 0;
}

static int bound(const json_t *spec, const char *key, double *out, const char *source,
		 const char *model, const char *metric, rm_error *err)
{
	const json_t *v = json_object_get(spec, key);

	*out = NAN;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_number(v) || json_number_value(v) < 0)
		return rm_error_set(err, RM_ERR_INPUT,
				    "'%s': %s.%s.%s must be a percentage >= 0 (or left out for no "
				    "bound), e.g. {value: 2400, lower: 5, upper: 10}",
				    source, model, metric, key);
	*out = json_number_value(v);
	return 0;
}

static int add_one(rm_references *t, const char *model, const char *metric, const json_t *spec,
		   const char *source, rm_error *err)
{
	const char *key;
	const json_t *v;
	rm_reference r = {0};

	if (!json_is_object(spec) || !json_is_number(json_object_get(spec, "value")))
		return rm_error_set(err, RM_ERR_INPUT,
				    "'%s': %s.%s must be a mapping with a number 'value', e.g. "
				    "{value: 2400, lower: 5, upper: 10}",
				    source, model, metric);
	json_object_foreach ((json_t *)spec, key, v)
		if (strcmp(key, "value") && strcmp(key, "lower") && strcmp(key, "upper"))
			return rm_error_set(err, RM_ERR_INPUT,
					    "'%s': %s.%s.%s: unknown field (value, lower, upper)",
					    source, model, metric, key);
	r.value = json_number_value(json_object_get(spec, "value"));
	if (bound(spec, "lower", &r.lower_pct, source, model, metric, err) < 0 ||
	    bound(spec, "upper", &r.upper_pct, source, model, metric, err) < 0)
		return -1;
	if (isnan(r.lower_pct) && isnan(r.upper_pct))
		return rm_error_set(err, RM_ERR_INPUT,
				    "'%s': %s.%s has neither 'lower' nor 'upper': give the "
				    "tolerance in percent on at least one side",
				    source, model, metric);
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->v[i].model, model) && !strcmp(t->v[i].metric, metric)) {
			t->v[i].value = r.value; /* a later file wins */
			t->v[i].lower_pct = r.lower_pct;
			t->v[i].upper_pct = r.upper_pct;
			return 0;
		}
	r.model = rm_xstrdup(model);
	r.metric = rm_xstrdup(metric);
	t->v = rm_xrealloc(t->v, (t->n + 1) * sizeof(*t->v));
	t->v[t->n++] = r;
	return 0;
}

int rm_references_add_json(rm_references *t, const json_t *obj, const char *source, rm_error *err)
{
	const char *model, *metric;
	const json_t *metrics, *spec;

	if (json_is_object(obj) && json_object_size(obj) == 1 && json_object_get(obj, "references"))
		obj = json_object_get(obj, "references");
	if (!json_is_object(obj))
		return rm_error_set(err, RM_ERR_INPUT,
				    "'%s': references are a mapping of model to metric to {value, "
				    "lower, upper}",
				    source);
	json_object_foreach ((json_t *)obj, model, metrics) {
		if (!json_is_object(metrics))
			return rm_error_set(
			    err, RM_ERR_INPUT,
			    "'%s': %s must be a mapping of metric to {value, lower, "
			    "upper}",
			    source, model);
		json_object_foreach ((json_t *)metrics, metric, spec)
			if (add_one(t, model, metric, spec, source, err) < 0)
				return -1;
	}
	return 0;
}

int rm_references_load(rm_references *t, const char *path, rm_error *err)
{
	char *text = NULL;
	size_t len = 0;
	json_t *j;
	int rc;

	if (rm_read_file(path, (size_t)16 << 20, &text, &len, err) < 0)
		return rm_error_wrap(err, "references");
	j = rm_yaml_to_json(text, len, path, err);
	free(text);
	if (!j)
		return rm_error_wrap(err, "references");
	rc = rm_references_add_json(t, j, path, err);
	json_decref(j);
	return rc;
}

const rm_reference *rm_references_find(const rm_references *t, const char *model,
				       const char *metric)
{
	for (size_t i = 0; t && i < t->n; i++)
		if (!strcmp(t->v[i].model, model) && !strcmp(t->v[i].metric, metric))
			return &t->v[i];
	return NULL;
}

json_t *rm_references_json(const rm_references *t)
{
	json_t *o = json_object();

	for (size_t i = 0; t && i < t->n; i++) {
		const rm_reference *r = &t->v[i];
		json_t *m = json_object_get(o, r->model), *spec = json_object();
		if (!m)
			json_object_set_new(o, r->model, m = json_object());
		json_object_set_new(spec, "value", json_real(r->value));
		if (isfinite(r->lower_pct))
			json_object_set_new(spec, "lower", json_real(r->lower_pct));
		if (isfinite(r->upper_pct))
			json_object_set_new(spec, "upper", json_real(r->upper_pct));
		json_object_set_new(m, r->metric, spec);
	}
	return o;
}
