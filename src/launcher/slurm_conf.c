/*
 * The SLURM launcher's configuration: the madengine `slurm` and `distributed` context keys
 * (see slurm.h), and SLURM's time format.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "slurm.h"
#include "rm/util.h"

/* A value that goes on a #SBATCH line: no blanks, quotes, backslashes or control
 * characters (sbatch splits those lines into words). */
int rm_slurm_word_ok(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c <= ' ' || c == 0x7f || c == '"' || c == '\'' || c == '\\')
			return 0;
	}
	return 1;
}

/* ---- the context keys ---- */

/* slurm keys madengine reads that have no meaning here, with why. */
static const struct {
	const char *key, *why;
} slurm_unused[] = {
    {"output_dir", "logs go to --log-dir"},
    {"results_dir", "results go to -o/--output"},
    {"shared_workspace", "tasks run in the submit folder, which must be shared"},
    {"enable_node_check", "no pre-flight node check"},
    {"auto_cleanup_nodes", "no pre-flight node check"},
    {"allow_submit_without_clean_nodes", "no pre-flight node check"},
    {"verbose_node_check", "no pre-flight node check"},
};

static const char *const slurm_used[] = {
    "partition",   "nodes",   "gpus_per_node",	   "time",     "exclusive",
    "account",	   "qos",     "constraint",	   "nodelist", "exclude",
    "reservation", "modules", "network_interface", NULL,
};

static const char *const dist_used[] = {"launcher", "nnodes",  "nproc_per_node",
					"port",	    "backend", NULL};

static int in_list(const char *const *list, const char *key)
{
	for (; *list; list++)
		if (strcmp(*list, key) == 0)
			return 1;
	return 0;
}

/* An integer: a JSON integer, a real with no fraction, or a numeric string (madengine's
 * int()). 1 when absent, 0 when read, -1 (err) when it is something else or out of range. */
static int get_long(json_t *obj, const char *section, const char *key, long min, long max,
		    long *out, rm_error *err)
{
	json_t *v = json_object_get(obj, key);
	long n = 0;
	int ok = 0;

	if (!v || json_is_null(v))
		return 1;
	if (json_is_integer(v)) {
		json_int_t i = json_integer_value(v);
		ok = i >= min && i <= max;
		n = (long)i;
	} else if (json_is_real(v)) {
		double d = json_real_value(v);
		ok = d >= (double)min && d <= (double)max && d == (double)(long)d;
		n = (long)d;
	} else if (json_is_string(v)) {
		ok = rm_parse_long(json_string_value(v), min, max, &n) == 0;
	}
	if (!ok)
		return rm_error_set(
		    err, RM_ERR_INPUT,
		    "--additional-context: %s.%s must be a whole number from %ld to "
		    "%ld",
		    section, key, min, max);
	*out = n;
	return 0;
}

static int get_word(json_t *obj, const char *section, const char *key, char **out, rm_error *err)
{
	json_t *v = json_object_get(obj, key);
	const char *s;

	if (!v || json_is_null(v))
		return 0;
	s = json_string_value(v);
	if (!s || !rm_slurm_word_ok(s))
		return rm_error_set(
		    err, RM_ERR_INPUT,
		    "--additional-context: %s.%s must be a non-empty string without "
		    "blanks or quotes",
		    section, key);
	free(*out);
	*out = rm_xstrdup(s);
	return 0;
}

static int get_bool(json_t *obj, const char *section, const char *key, int *out, rm_error *err)
{
	json_t *v = json_object_get(obj, key);
	const char *s;

	if (!v || json_is_null(v))
		return 0;
	if (json_is_boolean(v)) {
		*out = json_is_true(v);
		return 0;
	}
	if (json_is_integer(v) && (json_integer_value(v) == 0 || json_integer_value(v) == 1)) {
		*out = (int)json_integer_value(v);
		return 0;
	}
	s = json_string_value(v);
	if (s && (strcasecmp(s, "true") == 0 || strcasecmp(s, "false") == 0)) {
		*out = strcasecmp(s, "true") == 0;
		return 0;
	}
	return rm_error_set(err, RM_ERR_INPUT, "--additional-context: %s.%s must be true or false",
			    section, key);
}

static void note(rm_slurm_conf *sc, size_t *n, char *text)
{
	sc->notes = rm_strv_push(sc->notes, n, text);
	free(text);
}

static int parse_modules(json_t *s, rm_slurm_conf *sc, rm_error *err)
{
	json_t *v = json_object_get(s, "modules"), *m;
	size_t i, n = 0;

	if (!v || json_is_null(v))
		return 0;
	if (json_is_string(v)) {
		sc->modules = rm_strv_push(sc->modules, &n, json_string_value(v));
		return 0;
	}
	if (!json_is_array(v))
		return rm_error_set(err, RM_ERR_INPUT,
				    "--additional-context: slurm.modules must be a list of names");
	json_array_foreach (v, i, m) {
		const char *name = json_string_value(m);
		if (!name || !*name || strchr(name, '\n'))
			return rm_error_set(err, RM_ERR_INPUT,
					    "--additional-context: slurm.modules[%zu] must be a "
					    "module name",
					    i);
		sc->modules = rm_strv_push(sc->modules, &n, name);
	}
	return 0;
}

static int parse_slurm(json_t *s, rm_slurm_conf *sc, size_t *nnotes, rm_error *err)
{
	const char *key;
	json_t *v;
	int r;

	if (!json_is_object(s))
		return rm_error_set(err, RM_ERR_INPUT,
				    "--additional-context: \"slurm\" must be an object such as "
				    "{\"partition\": \"gpu\", \"nodes\": 2}");
	r = get_long(s, "slurm", "nodes", 1, 100000, &sc->nodes, err);
	if (r < 0)
		return -1;
	if (get_long(s, "slurm", "gpus_per_node", 0, 1024, &sc->gpus_per_node, err) < 0)
		return -1;
	if (get_word(s, "slurm", "partition", &sc->partition, err) < 0 ||
	    get_word(s, "slurm", "time", &sc->time, err) < 0 ||
	    get_word(s, "slurm", "account", &sc->account, err) < 0 ||
	    get_word(s, "slurm", "qos", &sc->qos, err) < 0 ||
	    get_word(s, "slurm", "constraint", &sc->constraint, err) < 0 ||
	    get_word(s, "slurm", "nodelist", &sc->nodelist, err) < 0 ||
	    get_word(s, "slurm", "exclude", &sc->exclude, err) < 0 ||
	    get_word(s, "slurm", "reservation", &sc->reservation, err) < 0 ||
	    get_word(s, "slurm", "network_interface", &sc->network_interface, err) < 0 ||
	    get_bool(s, "slurm", "exclusive", &sc->exclusive, err) < 0 ||
	    parse_modules(s, sc, err) < 0)
		return -1;
	sc->time_seconds = sc->time ? rm_slurm_time_seconds(sc->time) : 0;
	if (sc->time_seconds < 0)
		return rm_error_set(err, RM_ERR_INPUT,
				    "--additional-context: slurm.time '%s' is not a SLURM time "
				    "(minutes, M:S, H:M:S, D-H, D-H:M, D-H:M:S or UNLIMITED)",
				    sc->time);
	json_object_foreach (s, key, v) {
		size_t i;
		if (in_list(slurm_used, key))
			continue;
		for (i = 0; i < sizeof(slurm_unused) / sizeof(slurm_unused[0]); i++)
			if (strcmp(slurm_unused[i].key, key) == 0)
				break;
		if (i < sizeof(slurm_unused) / sizeof(slurm_unused[0]))
			note(sc, nnotes,
			     rm_xasprintf("slurm.%s is not used by run_models (%s)", key,
					  slurm_unused[i].why));
		else
			note(sc, nnotes, rm_xasprintf("unknown key slurm.%s is ignored", key));
	}
	return 0;
}

static int parse_dist(json_t *d, rm_slurm_conf *sc, size_t *nnotes, rm_dist_conf *dc,
		      long *nnodes_given, rm_error *err)
{
	const char *key;
	json_t *v;

	if (!d || json_is_null(d))
		return 0;
	if (!json_is_object(d))
		return rm_error_set(err, RM_ERR_INPUT,
				    "--additional-context: \"distributed\" must be an object such "
				    "as {\"launcher\": \"torchrun\", \"nnodes\": 2}");
	v = json_object_get(d, "launcher");
	if (v && !json_is_null(v)) {
		const char *l = json_string_value(v);
		if (!l)
			return rm_error_set(err, RM_ERR_INPUT,
					    "--additional-context: distributed.launcher must be a "
					    "string such as \"torchrun\"");
		char *low = rm_xstrdup(l), *t = rm_trim(low);
		for (char *p = t; *p; p++)
			if (*p >= 'A' && *p <= 'Z')
				*p = (char)(*p - 'A' + 'a');
		if (*t) {
			free(dc->launcher);
			dc->launcher = rm_xstrdup(t);
		}
		free(low);
	}
	if (get_long(d, "distributed", "nnodes", 1, 100000, nnodes_given, err) < 0 ||
	    get_long(d, "distributed", "nproc_per_node", 0, 1024, &dc->nproc_per_node, err) < 0 ||
	    get_long(d, "distributed", "port", 1, 65535, &dc->port, err) < 0 ||
	    get_word(d, "distributed", "backend", &dc->backend, err) < 0)
		return -1;
	json_object_foreach (d, key, v) {
		if (!in_list(dist_used, key))
			note(sc, nnotes,
			     rm_xasprintf("unknown key distributed.%s is ignored", key));
	}
	return 0;
}

int rm_slurm_conf_parse(json_t *ctx_obj, rm_slurm_conf *sc, rm_dist_conf *dc, int *present,
			rm_error *err)
{
	json_t *s = json_object_get(ctx_obj, "slurm");
	size_t nnotes = 0;
	long nnodes = -1;

	memset(sc, 0, sizeof(*sc));
	memset(dc, 0, sizeof(*dc));
	sc->nodes = -1;
	sc->gpus_per_node = -1;
	sc->exclusive = RM_SLURM_DEFAULT_EXCLUSIVE;
	dc->nproc_per_node = -1;
	dc->port = RM_SLURM_DEFAULT_PORT;
	*present = s && !json_is_null(s);
	if (*present && parse_slurm(s, sc, &nnotes, err) < 0)
		goto fail;
	if (parse_dist(json_object_get(ctx_obj, "distributed"), sc, &nnotes, dc, &nnodes, err) < 0)
		goto fail;
	if (!sc->time) {
		sc->time = rm_xstrdup(RM_SLURM_DEFAULT_TIME);
		sc->time_seconds = rm_slurm_time_seconds(sc->time);
	}
	if (!dc->launcher)
		dc->launcher = rm_xstrdup(RM_SLURM_DEFAULT_LAUNCHER);
	/* slurm.nodes sizes the allocation, distributed.nnodes the launcher's topology: one
	 * count for both; when both are given they must agree (rm_slurm_nodes_check). */
	if (sc->nodes < 0)
		sc->nodes = nnodes > 0 ? nnodes : 1;
	dc->nnodes_given = nnodes;
	dc->nnodes = sc->nodes;
	return 0;
fail:
	rm_slurm_conf_release(sc);
	rm_dist_conf_release(dc);
	return -1;
}

void rm_slurm_conf_release(rm_slurm_conf *sc)
{
	if (!sc)
		return;
	free(sc->partition);
	free(sc->time);
	free(sc->account);
	free(sc->qos);
	free(sc->constraint);
	free(sc->nodelist);
	free(sc->exclude);
	free(sc->reservation);
	free(sc->network_interface);
	rm_strv_free(sc->modules);
	rm_strv_free(sc->notes);
	memset(sc, 0, sizeof(*sc));
}

void rm_dist_conf_release(rm_dist_conf *dc)
{
	if (!dc)
		return;
	free(dc->launcher);
	free(dc->backend);
	memset(dc, 0, sizeof(*dc));
}

long rm_slurm_gpus_per_node(const rm_slurm_conf *sc, long model_n_gpus, long context_n_gpus)
{
	if (sc && sc->gpus_per_node >= 0)
		return sc->gpus_per_node;
	if (model_n_gpus >= 0)
		return model_n_gpus;
	return context_n_gpus > 0 ? context_n_gpus : 0;
}

/* Reads a run of digits (at most 9); -1 when there is none. */
static long digits(const char **p)
{
	long v = 0;
	int n = 0;

	while (**p >= '0' && **p <= '9' && n < 9) {
		v = v * 10 + (**p - '0');
		(*p)++;
		n++;
	}
	return n ? v : -1;
}

long rm_slurm_time_seconds(const char *s)
{
	long f[3], days = 0;
	int nf = 0;
	const char *p = s;

	if (!s || !*s)
		return -1;
	if (strcasecmp(s, "UNLIMITED") == 0 || strcasecmp(s, "infinite") == 0)
		return 0;
	if (strchr(s, '-')) {
		days = digits(&p);
		if (days < 0 || *p != '-')
			return -1;
		p++;
	}
	for (;;) {
		if (nf == 3)
			return -1;
		f[nf] = digits(&p);
		if (f[nf++] < 0)
			return -1;
		if (*p == '\0')
			break;
		if (*p != ':')
			return -1;
		p++;
	}
	if (strchr(s, '-')) {
		/* D-H, D-H:M, D-H:M:S */
		long h = f[0], m = nf > 1 ? f[1] : 0, sec = nf > 2 ? f[2] : 0;
		return ((days * 24 + h) * 60 + m) * 60 + sec;
	}
	/* M, M:S, H:M:S */
	if (nf == 1)
		return f[0] * 60;
	if (nf == 2)
		return f[0] * 60 + f[1];
	return (f[0] * 60 + f[1]) * 60 + f[2];
}

int rm_slurm_nodes_check(const rm_slurm_conf *sc, const rm_dist_conf *dc, const char *nodes_from,
			 const char *nnodes_from, rm_error *err)
{
	if (dc->nnodes_given <= 0 || dc->nnodes_given == sc->nodes)
		return 0;
	return rm_error_set(
	    err, RM_ERR_INPUT,
	    "slurm.nodes %ld (%s) and distributed.nnodes %ld (%s) disagree: the "
	    "job would hold %ld node(s) for a launcher set for %ld; make them equal",
	    sc->nodes, nodes_from, dc->nnodes_given, nnodes_from, sc->nodes, dc->nnodes_given);
}
