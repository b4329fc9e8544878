#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "rm/util.h"

static void list_add(struct opt_list *l, const char *s)
{
	l->v = rm_xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = s;
}

void opt_list_release(struct opt_list *l)
{
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

static int set_value(const struct opt *o, void *target, const char *val, rm_error *err)
{
	char *field = (char *)target + o->offset;
	switch (o->type) {
	case OPT_FLAG:
		*(int *)field = 1;
		return 0;
	case OPT_STRING:
		*(const char **)field = val;
		return 0;
	case OPT_LIST:
		list_add((struct opt_list *)field, val);
		return 0;
	case OPT_NUMBER: {
		double d;
		if (rm_parse_double(val, &d) < 0 || d < 0)
			return rm_error_set(err, RM_ERR_USAGE,
					    "--%s takes a number of seconds >= 0, not '%s'",
					    o->name, val);
		*(double *)field = d;
		return 0;
	}
	case OPT_INT: {
		long l;
		if (rm_parse_long(val, 0, 1000000, &l) < 0)
			return rm_error_set(err, RM_ERR_USAGE,
					    "--%s takes a whole number >= 0, not '%s'", o->name,
					    val);
		*(long *)field = l;
		return 0;
	}
	}
	return 0;
}

int opt_parse(const struct opt *table, void *target, int argc, char **argv,
	      struct opt_list *positional, rm_error *err)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const struct opt *o = NULL;
		const char *val = NULL;

		if (!strcmp(a, "--")) {
			while (++i < argc)
				list_add(positional, argv[i]);
			break;
		}
		if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			return 1;
		if (a[0] != '-' || !a[1]) {
			list_add(positional, a);
			continue;
		}
		if (a[1] == '-') {
			const char *name = a + 2, *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);
			for (const struct opt *t = table; t->name; t++)
				if (strlen(t->name) == len && !strncmp(t->name, name, len))
					o = t;
			if (o && eq)
				val = eq + 1;
		} else if (!a[2]) {
			for (const struct opt *t = table; t->name; t++)
				if (t->short_name == a[1])
					o = t;
		}
		if (!o)
			return rm_error_set(err, RM_ERR_USAGE,
					    "unknown option '%s' (see '%s --help')", a, argv[0]);
		if (o->type == OPT_FLAG) {
			if (val)
				return rm_error_set(err, RM_ERR_USAGE, "--%s takes no value",
						    o->name);
		} else if (!val) {
			if (i + 1 >= argc)
				return rm_error_set(err, RM_ERR_USAGE, "--%s needs a value (%s)",
						    o->name, o->arg);
			val = argv[++i];
		}
		if (set_value(o, target, val, err) < 0)
			return -1;
	}
	return 0;
}

void opt_help(FILE *f, const char *usage, const struct opt *table)
{
	fprintf(f, "%s\n\noptions:\n", usage);
	for (const struct opt *t = table; t->name; t++) {
		char left[64];
		if (t->short_name)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", t->short_name, t->name,
				 t->arg ? " " : "", t->arg ? t->arg : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", t->name, t->arg ? " " : "",
				 t->arg ? t->arg : "");
		fprintf(f, "  %-34s %s\n", left, t->help);
	}
	fputs("  -h, --help                         show this help\n", f);
}
