/*
 * Sweeps: an entry's `sweep:` read and checked (every error names the file, the line and the
 * field, before anything is built), and its points enumerated in order without being held:
 * a point is the value index of each dimension, counted through the groups (zip groups move
 * their dimensions together; the others cross) like the digits of a number, the first group
 * the slowest.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "rm/config.h"
#include "rm/registry.h"
#include "rm/suite.h"
#include "rm/util.h"
#include "suite_internal.h"

/* While reading: a dimension in no group yet, and the mark of a zip's (ZIP_TAG + its index)
 * before the groups are numbered in the order their first dimension is written. */
#define NO_GROUP ((size_t)-1)
#define ZIP_TAG	 ((size_t)1 << (sizeof(size_t) * 8 - 2))
#define BINDS                                                                                      \
	"a model argument (NAME or args.NAME), env.NAME, tunableop, n_gpus, docker_gpus, "         \
	"precision or repeat"

/* A scalar node's text as written ("8", "on", "bf16"), or NULL. */
static char *sweep_scalar(const yaml_node_t *n)
{
	if (!n || n->type != YAML_SCALAR_NODE)
		return NULL;
	return rm_xstrndup((const char *)n->data.scalar.value, n->data.scalar.length);
}

static int word_of(const char *s, const char *more)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr(more, *s)))
			return 0;
	return 1;
}

/* What a dimension's name binds to; -1 when nothing. */
static int bind_of(const char *name, const char **target)
{
	static const struct {
		const char *name;
		rm_sweep_bind bind;
	} settings[] = {{"tunableop", RM_SWEEP_TUNABLEOP},
			{"n_gpus", RM_SWEEP_N_GPUS},
			{"docker_gpus", RM_SWEEP_DOCKER_GPUS},
			{"precision", RM_SWEEP_PRECISION},
			{"repeat", RM_SWEEP_REPEAT}};

	*target = name;
	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++)
		if (!strcmp(name, settings[i].name))
			return (int)settings[i].bind;
	if (rm_starts_with(name, "env.") && word_of(name + 4, "_") &&
	    !(name[4] >= '0' && name[4] <= '9')) {
		*target = name + 4;
		return RM_SWEEP_ENV;
	}
	if (rm_starts_with(name, "args.") && word_of(name + 5, "_-")) {
		*target = name + 5;
		return RM_SWEEP_ARG;
	}
	return word_of(name, "_-") ? RM_SWEEP_ARG : -1;
}

/* Whether value v is one a dimension bound so takes; what it takes into *why otherwise. */
static int value_ok(rm_sweep_bind b, const char *v, const char **why)
{
	long n;
	int t;

	switch (b) {
	case RM_SWEEP_TUNABLEOP:
		*why = "on or off";
		return rm_choice_parse(rm_tunableop_words, v, &t) == 0;
	case RM_SWEEP_N_GPUS:
		*why = "a GPU count, or -1 for all";
		return !strcmp(v, "-1") || rm_parse_long(v, 1, 1000000, &n) == 0;
	case RM_SWEEP_REPEAT:
		*why = "a whole number >= 1";
		return rm_parse_long(v, 1, 1000000, &n) == 0;
	case RM_SWEEP_DOCKER_GPUS:
		*why = "GPU indexes and ranges such as 0,2-4";
		return *v && strspn(v, "0123456789,-") == strlen(v);
	case RM_SWEEP_ARG:
	case RM_SWEEP_PRECISION:
		/* the tag form name:key=value carries it: no ',' or ':' */
		*why = "a model argument's value: no ',' or ':'";
		return *v && !strpbrk(v, ",:");
	default:
		*why = "";
		return 1;
	}
}

/* One dimension: name: [values...]. */
static int dimension(struct yfile *f, yaml_node_t *key, yaml_node_t *n, const char *where,
		     rm_sweep *s, rm_error *err)
{
	rm_sweep_dim *d;
	char field[512], *name = sweep_scalar(key);
	const char *why;
	int b = name ? bind_of(name, &why) : -1;
	size_t nv;

	snprintf(field, sizeof(field), "%s.%s", where, name ? name : "?");
	if (b < 0) {
		rm_suite__fail_at(f, key, err, field, "binds to nothing: a dimension is %s", BINDS);
		free(name);
		return -1;
	}
	if (!n || n->type != YAML_SEQUENCE_NODE) {
		free(name);
		return rm_suite__fail_at(f, n ? n : key, err, field,
					 "must be a list of values, e.g. [8, 16]");
	}
	nv = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (!nv) {
		free(name);
		return rm_suite__fail_at(f, n, err, field, "is an empty list: give its values");
	}
	s->dims = rm_xrealloc(s->dims, (s->n_dims + 1) * sizeof(*s->dims));
	d = &s->dims[s->n_dims++];
	memset(d, 0, sizeof(*d));
	d->name = name;
	d->bind = (rm_sweep_bind)b;
	bind_of(name, &d->target);
	d->group = NO_GROUP;
	for (size_t i = 0; i < nv; i++) {
		yaml_node_t *item = rm_suite__yseq(f, n, i);
		char *v = sweep_scalar(item);
		if (!v)
			return rm_suite__fail_at(f, item ? item : n, err, field,
						 "item %zu must be a value (a number or a word)",
						 i + 1);
		if (!value_ok(d->bind, v, &why)) {
			rm_suite__fail_at(f, item, err, field, "'%s' is not %s", v, why);
			free(v);
			return -1;
		}
		for (size_t k = 0; k < d->n_values; k++)
			if (!strcmp(d->values[k], v)) {
				rm_suite__fail_at(f, item, err, field, "'%s' is there twice", v);
				free(v);
				return -1;
			}
		d->values = rm_strv_push(d->values, &d->n_values, v);
		free(v);
	}
	return 0;
}

static size_t dim_index(const rm_sweep *s, const char *name)
{
	for (size_t i = 0; i < s->n_dims; i++)
		if (!strcmp(s->dims[i].name, name))
			return i;
	return (size_t)-1;
}

/* zip: [[a, b], [c, d]]: each list's dimensions move together (as many values each). */
static int zips(struct yfile *f, yaml_node_t *n, const char *where, rm_sweep *s, size_t *n_zip,
		rm_error *err)
{
	char field[512];
	size_t nz = n && n->type == YAML_SEQUENCE_NODE
			? (size_t)(n->data.sequence.items.top - n->data.sequence.items.start)
			: 0;

	snprintf(field, sizeof(field), "%s.zip", where);
	if (!n || n->type != YAML_SEQUENCE_NODE)
		return rm_suite__fail_at(f, n, err, field,
					 "must be a list of lists of dimensions, e.g. "
					 "[[batch_size, precision]]");
	for (size_t z = 0; z < nz; z++) {
		yaml_node_t *g = rm_suite__yseq(f, n, z);
		size_t len = 0, first = (size_t)-1;
		if (!g || g->type != YAML_SEQUENCE_NODE ||
		    g->data.sequence.items.top - g->data.sequence.items.start < 2)
			return rm_suite__fail_at(f, g ? g : n, err, field,
						 "item %zu must list two dimensions or more",
						 z + 1);
		for (size_t i = 0; rm_suite__yseq(f, g, i); i++) {
			yaml_node_t *item = rm_suite__yseq(f, g, i);
			char *name = sweep_scalar(item);
			size_t d = name ? dim_index(s, name) : (size_t)-1;
			if (d == (size_t)-1) {
				rm_suite__fail_at(f, item, err, field,
						  "'%s' is no dimension of this sweep",
						  name ? name : "?");
				free(name);
				return -1;
			}
			free(name);
			if (s->dims[d].group != NO_GROUP)
				return rm_suite__fail_at(f, item, err, field,
							 "'%s' is in two zips: a dimension "
							 "moves with one group",
							 s->dims[d].name);
			if (first == (size_t)-1) {
				first = d;
				len = s->dims[d].n_values;
			} else if (s->dims[d].n_values != len) {
				return rm_suite__fail_at(
				    f, item, err, field,
				    "'%s' has %zu values and '%s' %zu: a zip's dimensions move "
				    "together and need as many",
				    s->dims[d].name, s->dims[d].n_values, s->dims[first].name, len);
			}
			s->dims[d].group = *n_zip + ZIP_TAG;
		}
		(*n_zip)++;
	}
	return 0;
}

/* matrix: [a, b, ...]: crossed, which every dimension outside a zip is; checked only. */
static int matrix(struct yfile *f, yaml_node_t *n, const char *where, const rm_sweep *s,
		  rm_error *err)
{
	char field[512];

	snprintf(field, sizeof(field), "%s.matrix", where);
	if (!n || n->type != YAML_SEQUENCE_NODE)
		return rm_suite__fail_at(f, n, err, field, "must be a list of dimensions");
	for (size_t i = 0; rm_suite__yseq(f, n, i); i++) {
		yaml_node_t *item = rm_suite__yseq(f, n, i);
		char *name = sweep_scalar(item);
		size_t d = name ? dim_index(s, name) : (size_t)-1;
		int bad = d == (size_t)-1 || s->dims[d].group != NO_GROUP;
		if (bad)
			rm_suite__fail_at(f, item, err, field, "'%s' is %s", name ? name : "?",
					  d == (size_t)-1 ? "no dimension of this sweep"
							  : "in a zip: it cannot be crossed too");
		free(name);
		if (bad)
			return -1;
	}
	return 0;
}

/* exclude: [{a: 8, b: off}, ...]: the points whose dimensions have all those values. */
static int excludes(struct yfile *f, yaml_node_t *n, const char *where, rm_sweep *s, rm_error *err)
{
	char field[512];

	snprintf(field, sizeof(field), "%s.exclude", where);
	if (!n || n->type != YAML_SEQUENCE_NODE)
		return rm_suite__fail_at(f, n, err, field,
					 "must be a list of points, e.g. [{batch_size: 8, "
					 "tunableop: off}]");
	for (size_t i = 0; rm_suite__yseq(f, n, i); i++) {
		yaml_node_t *m = rm_suite__yseq(f, n, i);
		rm_sweep_exclude *x;
		if (m->type != YAML_MAPPING_NODE ||
		    m->data.mapping.pairs.top == m->data.mapping.pairs.start)
			return rm_suite__fail_at(f, m, err, field,
						 "item %zu must map dimensions to values", i + 1);
		s->excludes = rm_xrealloc(s->excludes, (s->n_excludes + 1) * sizeof(*s->excludes));
		x = &s->excludes[s->n_excludes++];
		memset(x, 0, sizeof(*x));
		for (yaml_node_pair_t *p = m->data.mapping.pairs.start;
		     p < m->data.mapping.pairs.top; p++) {
			yaml_node_t *kn = yaml_document_get_node(&f->doc, p->key),
				    *vn = yaml_document_get_node(&f->doc, p->value);
			char *k = sweep_scalar(kn), *v = sweep_scalar(vn);
			size_t d = k ? dim_index(s, k) : (size_t)-1, val = (size_t)-1;
			for (size_t j = 0; d != (size_t)-1 && v && j < s->dims[d].n_values; j++)
				if (!strcmp(s->dims[d].values[j], v))
					val = j;
			if (d == (size_t)-1 || val == (size_t)-1) {
				rm_suite__fail_at(f, d == (size_t)-1 ? kn : vn, err, field,
						  d == (size_t)-1
						      ? "'%s' is no dimension of this sweep"
						      : "'%s' is not one of %s's values",
						  d == (size_t)-1 ? (k ? k : "?") : (v ? v : "?"),
						  d == (size_t)-1 ? "" : s->dims[d].name);
				free(k);
				free(v);
				return -1;
			}
			free(k);
			free(v);
			x->dim = rm_xrealloc(x->dim, (x->n + 1) * sizeof(*x->dim));
			x->value = rm_xrealloc(x->value, (x->n + 1) * sizeof(*x->value));
			x->dim[x->n] = d;
			x->value[x->n++] = val;
		}
	}
	return 0;
}

/* The groups numbered in the order their first dimension is written, and their product. */
static int number_groups(struct yfile *f, yaml_node_t *n, const char *where, rm_sweep *s,
			 size_t n_zip, rm_error *err)
{
	size_t *zip_group = rm_xcalloc(n_zip + 1, sizeof(*zip_group));

	for (size_t z = 0; z < n_zip; z++)
		zip_group[z] = NO_GROUP;
	s->raw = 1;
	for (size_t i = 0; i < s->n_dims; i++) {
		rm_sweep_dim *d = &s->dims[i];
		size_t z = d->group == NO_GROUP ? NO_GROUP : d->group - ZIP_TAG;
		if (z != NO_GROUP && zip_group[z] != NO_GROUP) {
			d->group = zip_group[z];
			continue;
		}
		d->group = s->n_groups++;
		if (z != NO_GROUP)
			zip_group[z] = d->group;
		s->group_len = rm_xrealloc(s->group_len, s->n_groups * sizeof(*s->group_len));
		s->group_len[d->group] = d->n_values;
		if (s->raw <= RM_SWEEP_MAX_RAW)
			s->raw *= d->n_values;
	}
	free(zip_group);
	if (s->raw > RM_SWEEP_MAX_RAW)
		return rm_suite__fail_at(f, n, err, where,
					 "has more than %llu points before its exclusions: narrow "
					 "it, or split it into entries",
					 RM_SWEEP_MAX_RAW);
	return 0;
}

static int excluded(const rm_sweep *s, const size_t *values)
{
	for (size_t i = 0; i < s->n_excludes; i++) {
		const rm_sweep_exclude *x = &s->excludes[i];
		size_t k = 0;
		while (k < x->n && values[x->dim[k]] == x->value[k])
			k++;
		if (k == x->n)
			return 1;
	}
	return 0;
}

size_t rm_sweep_each(const rm_sweep *s, int (*fn)(void *ctx, const size_t *values), void *ctx)
{
	size_t *at = rm_xcalloc(s->n_groups + 1, sizeof(*at));
	size_t *values = rm_xcalloc(s->n_dims + 1, sizeof(*values)), count = 0;
	size_t g;

	for (;;) {
		for (size_t d = 0; d < s->n_dims; d++)
			values[d] = at[s->dims[d].group];
		if (!excluded(s, values)) {
			count++;
			if (fn && fn(ctx, values))
				break;
		}
		/* the next point: the last group turns fastest */
		for (g = s->n_groups; g > 0; g--) {
			if (++at[g - 1] < s->group_len[g - 1])
				break;
			at[g - 1] = 0;
		}
		if (g == 0)
			break;
	}
	free(at);
	free(values);
	return count;
}

void rm_sweep_params(const rm_sweep *s, const size_t *values, rm_config *out)
{
	for (size_t d = 0; d < s->n_dims; d++)
		if (s->dims[d].bind != RM_SWEEP_REPEAT)
			rm_config_set(out, s->dims[d].name, s->dims[d].values[values[d]]);
}

char *rm_sweep_point_name(const rm_sweep *s, const size_t *values, const char *base)
{
	rm_config c = RM_CONFIG_INIT;
	char *name;

	rm_sweep_params(s, values, &c);
	name = rm_config_name(base, &c);
	rm_config_release(&c);
	return name;
}

void rm_sweep_free(rm_sweep *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_dims; i++) {
		free(s->dims[i].name);
		rm_strv_free(s->dims[i].values);
	}
	for (size_t i = 0; i < s->n_excludes; i++) {
		free(s->excludes[i].dim);
		free(s->excludes[i].value);
	}
	free(s->dims);
	free(s->group_len);
	free(s->excludes);
	free(s);
}

/* A repeat dimension crossed with the others would run each configuration once per value. */
static int repeat_crossed(struct yfile *f, yaml_node_t *n, const char *where, const rm_sweep *s,
			  rm_error *err)
{
	for (size_t d = 0; d < s->n_dims; d++) {
		const rm_sweep_dim *r = &s->dims[d];
		size_t alone = 1;
		if (r->bind != RM_SWEEP_REPEAT || r->n_values < 2)
			continue;
		for (size_t k = 0; k < s->n_dims; k++)
			alone &= k == d || s->dims[k].group != r->group;
		if (alone)
			return rm_suite__fail_at(
			    f, rm_suite__ymap(f, n, "repeat"), err, where,
			    "repeat crossed with the other dimensions would run each configuration "
			    "once per value: zip it with another dimension, or give the entry a "
			    "repeat");
	}
	return 0;
}

/* The dimensions, then zip, matrix and exclude, then the groups and the points. */
static int sweep_read(struct yfile *f, yaml_node_t *n, const char *where, rm_sweep *s,
		      rm_error *err)
{
	size_t n_zip = 0;

	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(&f->doc, p->key),
			    *v = yaml_document_get_node(&f->doc, p->value);
		char *name = sweep_scalar(k);
		int special = name && (!strcmp(name, "zip") || !strcmp(name, "matrix") ||
				       !strcmp(name, "exclude"));
		free(name);
		if (!special && dimension(f, k, v, where, s, err) < 0)
			return -1;
	}
	if (!s->n_dims)
		return rm_suite__fail_at(f, n, err, where,
					 "has no dimension: give one or more NAME: [values]");
	if ((rm_suite__ymap(f, n, "zip") &&
	     zips(f, rm_suite__ymap(f, n, "zip"), where, s, &n_zip, err) < 0) ||
	    (rm_suite__ymap(f, n, "matrix") &&
	     matrix(f, rm_suite__ymap(f, n, "matrix"), where, s, err) < 0) ||
	    (rm_suite__ymap(f, n, "exclude") &&
	     excludes(f, rm_suite__ymap(f, n, "exclude"), where, s, err) < 0) ||
	    number_groups(f, n, where, s, n_zip, err) < 0 ||
	    repeat_crossed(f, n, where, s, err) < 0)
		return -1;
	s->n_points = rm_sweep_each(s, NULL, NULL);
	if (!s->n_points)
		return rm_suite__fail_at(f, rm_suite__ymap(f, n, "exclude"), err, where,
					 "every one of its %llu points is excluded", s->raw);
	return 0;
}

int rm_suite__sweep_parse(struct yfile *f, yaml_node_t *n, json_t *v, const char *where,
			  rm_sweep **out, rm_error *err)
{
	rm_sweep *s;

	(void)v;
	if (!n || n->type != YAML_MAPPING_NODE)
		return rm_suite__fail_at(f, n, err, where,
					 "must map dimensions to their values, e.g. {batch_size: "
					 "[8, 16], zip: [...], exclude: [...]}");
	s = rm_xcalloc(1, sizeof(*s));
	if (sweep_read(f, n, where, s, err) < 0) {
		rm_sweep_free(s);
		return -1;
	}
	rm_sweep_free(*out);
	*out = s;
	return 0;
}
