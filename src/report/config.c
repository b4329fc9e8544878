/*
 * Configurations: parameters by name, their perf.csv cell (a JSON object, through jansson),
 * their label and key, and MAD's cells in metric names and narrow columns (rm/config.h).
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "rm/config.h"
#include "rm/util.h"

void rm_config_set(rm_config *c, const char *name, const char *value)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->p[i].name, name)) {
			free(c->p[i].value);
			c->p[i].value = rm_xstrdup(value ? value : "");
			return;
		}
	c->p = rm_xrealloc(c->p, (c->n + 1) * sizeof(*c->p));
	c->p[c->n].name = rm_xstrdup(name);
	c->p[c->n].value = rm_xstrdup(value ? value : "");
	c->n++;
}

const char *rm_config_get(const rm_config *c, const char *name)
{
	for (size_t i = 0; c && i < c->n; i++)
		if (!strcmp(c->p[i].name, name))
			return c->p[i].value;
	return NULL;
}

void rm_config_merge(rm_config *c, const rm_config *from)
{
	for (size_t i = 0; from && i < from->n; i++)
		if (!rm_config_get(c, from->p[i].name))
			rm_config_set(c, from->p[i].name, from->p[i].value);
}

void rm_config_release(rm_config *c)
{
	for (size_t i = 0; c && i < c->n; i++) {
		free(c->p[i].name);
		free(c->p[i].value);
	}
	if (c) {
		free(c->p);
		c->p = NULL;
		c->n = 0;
	}
}

char *rm_config_text(const rm_config *c)
{
	json_t *o;
	char *text, *out;

	if (!c || !c->n)
		return rm_xstrdup("");
	o = json_object();
	for (size_t i = 0; i < c->n; i++)
		json_object_set_new(o, c->p[i].name, json_string(c->p[i].value));
	text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	out = rm_xstrdup(text ? text : "");
	free(text);
	return out;
}

int rm_config_parse(rm_config *c, const char *text)
{
	json_t *o, *v;
	const char *k;

	if (!text || !*text)
		return 0;
	o = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(o)) {
		json_decref(o);
		return -1;
	}
	json_object_foreach (o, k, v) {
		char *s = json_is_string(v) ? rm_xstrdup(json_string_value(v))
					    : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		rm_config_set(c, k, s ? s : "");
		free(s);
	}
	json_decref(o);
	return 0;
}

char *rm_config_label(const rm_config *c)
{
	rm_buf b = RM_BUF_INIT((size_t)1 << 20);

	for (size_t i = 0; c && i < c->n; i++)
		rm_buf_addf(&b, "%s%s=%s", i ? "," : "", c->p[i].name, c->p[i].value);
	return rm_buf_detach(&b);
}

char *rm_config_name(const char *model, const rm_config *c)
{
	char *label, *name;

	if (!c || !c->n)
		return rm_xstrdup(model);
	label = rm_config_label(c);
	name = rm_xasprintf("%s[%s]", model, label);
	free(label);
	return name;
}

static const rm_config_param *sort_params;

static int param_by_name(const void *a, const void *b)
{
	return strcmp(sort_params[*(const size_t *)a].name, sort_params[*(const size_t *)b].name);
}

void rm_config_key(const rm_config *id, char out[RM_CONFIG_KEY_LEN + 1])
{
	size_t *order = rm_xcalloc(id->n ? id->n : 1, sizeof(*order));
	rm_hash *h = rm_hash_new();
	char hex[65];

	for (size_t i = 0; i < id->n; i++)
		order[i] = i;
	sort_params = id->p;
	qsort(order, id->n, sizeof(*order), param_by_name);
	for (size_t i = 0; i < id->n; i++) {
		const rm_config_param *p = &id->p[order[i]];
		/* each with its NUL: names and values never run into each other */
		rm_hash_update(h, p->name, strlen(p->name) + 1);
		rm_hash_update(h, p->value, strlen(p->value) + 1);
	}
	rm_hash_final_hex(h, hex);
	memcpy(out, hex, RM_CONFIG_KEY_LEN);
	out[RM_CONFIG_KEY_LEN] = '\0';
	free(order);
}

/* The text inside the parentheses a metric ends with ("" when it ends otherwise); *open
 * receives where " (" starts. */
static const char *cell_text(const char *metric, size_t *len, const char **open)
{
	size_t n = strlen(metric);
	const char *o;

	if (n < 4 || metric[n - 1] != ')')
		return NULL;
	for (o = metric + n - 2; o > metric && *o != '('; o--)
		;
	if (o == metric || o[-1] != ' ')
		return NULL;
	*open = o - 1;
	*len = (size_t)(metric + n - 1 - (o + 1));
	return o + 1;
}

size_t rm_config_from_metric(const char *metric, rm_config *c)
{
	size_t len = 0, found = 0;
	const char *open, *t = metric ? cell_text(metric, &len, &open) : NULL;
	char *copy, *save = NULL;

	if (!t)
		return 0;
	copy = rm_xstrndup(t, len);
	for (char *w = strtok_r(copy, " \t,", &save); w; w = strtok_r(NULL, " \t,", &save)) {
		char *eq = strchr(w, '=');
		if (!eq || eq == w || !eq[1])
			continue;
		*eq = '\0';
		rm_config_set(c, w, eq + 1);
		found++;
	}
	free(copy);
	return found;
}

char *rm_config_metric_base(const char *metric)
{
	rm_config c = RM_CONFIG_INIT;
	const char *open = NULL;
	size_t len;

	if (!metric)
		return rm_xstrdup("");
	if (!rm_config_from_metric(metric, &c) || !cell_text(metric, &len, &open))
		return rm_xstrdup(metric);
	rm_config_release(&c);
	return rm_xstrndup(metric, (size_t)(open - metric));
}

int rm_config_cell_column(const char *name)
{
	static const char *const cols[] = {"benchmark", "inp", "out",	     "max_concurrency",
					   "tp",	"pp",  "ep_backend", "prefill_decode",
					   "dtype",	"bs"};

	for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++)
		if (!strcmp(name, cols[i]))
			return 1;
	return 0;
}
