/*
 * A run's provenance in a perf.csv's companion file, and the differences between two runs
 * (rm/provenance.h).
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rm/provenance.h"
#include "rm/report.h"
#include "rm/util.h"

const char *const rm_provenance_groups[] = {
    "image", "driver and firmware", "environment", "arguments", "host", NULL};

static const char *const header[] = {"run_id", "model", "docker_file", "group", "name", "value"};
#define N_COLS (sizeof(header) / sizeof(header[0]))

char *rm_provenance_path(const char *perf_csv)
{
	size_t n = strlen(perf_csv);

	if (rm_ends_with(perf_csv, ".csv"))
		n -= 4;
	return rm_xasprintf("%.*s.provenance.csv", (int)n, perf_csv);
}

int rm_provenance_append(const char *perf_csv, const char *run_id, const char *model,
			 const char *docker_file, const json_t *groups, rm_error *err)
{
	char *path = rm_provenance_path(perf_csv);
	const char **rows = NULL;
	size_t n = 0;
	const char *g, *name;
	json_t *vals, *v;
	int ret = 0;

	json_object_foreach ((json_t *)groups, g, vals)
		json_object_foreach (vals, name, v) {
			const char **row;
			if (!json_is_string(v))
				continue;
			rows = rm_xrealloc(rows, (n + 1) * N_COLS * sizeof(*rows));
			row = rows + n++ * N_COLS;
			row[0] = run_id;
			row[1] = model ? model : "";
			row[2] = docker_file ? docker_file : "";
			row[3] = g;
			row[4] = name;
			row[5] = json_string_value(v);
		}
	if (n)
		ret = rm_csv_append(path, header, N_COLS, rows, n, err);
	free(rows);
	free(path);
	return ret;
}

void rm_provenance_put(json_t *prov, const char *model, const char *docker_file, const char *group,
		       const char *name, const char *value)
{
	char *key = model && *model ? rm_xasprintf("%s\t%s", model, docker_file ? docker_file : "")
				    : rm_xstrdup("");
	json_t *scope = json_object_get(prov, key), *groups, *g;

	if (!scope) {
		scope = json_pack("{s:s, s:s, s:{}}", "model", model ? model : "", "docker_file",
				  docker_file ? docker_file : "", "groups");
		json_object_set_new(prov, key, scope);
	}
	groups = json_object_get(scope, "groups");
	if (!(g = json_object_get(groups, group))) {
		g = json_object();
		json_object_set_new(groups, group, g);
	}
	json_object_set_new(g, name, json_string(value ? value : ""));
	free(key);
}

int rm_provenance_read(const char *perf_csv, const char *run_id, json_t **out, rm_error *err)
{
	char *path = rm_provenance_path(perf_csv), **rec = NULL;
	FILE *f = fopen(path, "r");
	size_t n = 0;
	long line = 0;
	int rc = 0, ret = -1;

	*out = json_object();
	if (!f) {
		ret = errno == ENOENT
			  ? 0
			  : rm_error_sys(err, RM_ERR_IO, errno, "cannot open '%s'", path);
		goto out;
	}
	while ((rc = rm_csv_read_record(f, &rec, &n, err)) == 1) {
		if (line++ == 0) {
			if (n != N_COLS || strcmp(rec[0], header[0]) || strcmp(rec[5], header[5])) {
				rm_error_set(
				    err, RM_ERR_INPUT,
				    "'%s' is not a provenance file (its header starts '%s')", path,
				    n ? rec[0] : "");
				goto out;
			}
		} else if (n == N_COLS && !strcmp(rec[0], run_id)) {
			rm_provenance_put(*out, rec[1], rec[2], rec[3], rec[4], rec[5]);
		}
		rm_strv_free(rec);
		rec = NULL;
	}
	ret = rc < 0 ? rm_error_wrap(err, "'%s' record %ld", path, line + 1) : 0;
out:
	rm_strv_free(rec);
	if (f)
		fclose(f);
	free(path);
	return ret;
}

/* One scope's values against the other's: each name either side has. */
static void diff_scope(json_t *out, const json_t *sa, const json_t *sb, size_t *n)
{
	const json_t *scope = sa ? sa : sb;
	const char *g, *name;
	json_t *vals, *v;

	for (int side = 0; side < 2; side++) {
		const json_t *mine = json_object_get(side ? sb : sa, "groups");
		const json_t *theirs = json_object_get(side ? sa : sb, "groups");
		json_object_foreach ((json_t *)mine, g, vals)
			json_object_foreach (vals, name, v) {
				json_t *other = json_object_get(json_object_get(theirs, g), name);
				json_t *list;
				if (side && other) /* seen from a's side already */
					continue;
				if (other && json_equal(v, other))
					continue;
				if (!(list = json_object_get(out, g))) {
					list = json_array();
					json_object_set_new(out, g, list);
				}
				json_array_append_new(
				    list, json_pack("{s:O, s:O, s:s, s:O, s:O}", "model",
						    json_object_get(scope, "model"), "docker_file",
						    json_object_get(scope, "docker_file"), "name",
						    name, "a", side ? json_null() : v, "b",
						    side ? v : (other ? other : json_null())));
				(*n)++;
			}
	}
}

json_t *rm_provenance_diff(const json_t *a, const json_t *b, size_t *n)
{
	json_t *by = json_object(), *out = json_object(), *v;
	const char *key;

	*n = 0;
	json_object_foreach ((json_t *)a, key, v)
		diff_scope(by, v, json_object_get(b, key), n);
	json_object_foreach ((json_t *)b, key, v)
		if (!json_object_get(a, key))
			diff_scope(by, NULL, v, n);
	for (size_t i = 0; rm_provenance_groups[i]; i++)
		if ((v = json_object_get(by, rm_provenance_groups[i])))
			json_object_set(out, rm_provenance_groups[i], v);
	json_object_foreach (by, key, v)
		if (!json_object_get(out, key))
			json_object_set(out, key, v);
	json_decref(by);
	return out;
}
