/*
 * The SLURM launcher's configuration (the madengine `slurm` and `distributed` context keys)
 * and the sbatch batch script it submits (see slurm.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "slurm.h"
#include "rm/launcher.h"
#include "rm/util.h"

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

/* A value that goes on a #SBATCH line: no blanks, quotes, backslashes or control
 * characters (sbatch splits those lines into words). */
static int sbatch_word_ok(const char *s)
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

static int get_word(json_t *obj, const char *section, const char *key, char **out, rm_error *err)
{
	json_t *v = json_object_get(obj, key);
	const char *s;

	if (!v || json_is_null(v))
		return 0;
	s = json_string_value(v);
	if (!s || !sbatch_word_ok(s))
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
	 * count for both, the allocation's when they disagree (madengine's rule). */
	if (sc->nodes < 0)
		sc->nodes = nnodes > 0 ? nnodes : 1;
	else if (nnodes > 0 && nnodes != sc->nodes)
		note(sc, &nnotes,
		     rm_xasprintf("slurm.nodes=%ld and distributed.nnodes=%ld differ; using %ld "
				  "nodes (set them alike to silence this)",
				  sc->nodes, nnodes, sc->nodes));
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

/* ---- the batch script ---- */

int rm_slurm_runner(const rm_dist_conf *dc, long nproc, char **runner, rm_error *err)
{
	const char *l = dc->launcher ? dc->launcher : RM_SLURM_DEFAULT_LAUNCHER;

	*runner = NULL;
	if (!strcmp(l, "torchrun") || !strcmp(l, "torchtitan") || !strcmp(l, "megatron-lm") ||
	    !strcmp(l, "megatron")) {
		if (dc->nnodes <= 1)
			*runner = rm_xasprintf("torchrun --standalone --nproc_per_node=%ld", nproc);
		else
			*runner = rm_xasprintf("torchrun --nnodes=%ld --nproc_per_node=%ld "
					       "--node_rank=$NODE_RANK --master_addr=$MASTER_ADDR "
					       "--master_port=%ld",
					       dc->nnodes, nproc, dc->port);
		return 0;
	}
	if (!strcmp(l, "deepspeed")) {
		if (dc->nnodes > 1)
			return rm_error_set(
			    err, RM_ERR_INPUT,
			    "--additional-context: distributed.launcher deepspeed "
			    "runs on one node here (across nodes it needs a hostfile "
			    "inside the container); use torchrun for %ld nodes",
			    dc->nnodes);
		*runner = rm_xasprintf("deepspeed --num_gpus=%ld", nproc);
		return 0;
	}
	if (!strcmp(l, "vllm") || !strcmp(l, "sglang"))
		return 0; /* they start their own workers: no runner prefix */
	return rm_error_set(err, RM_ERR_INPUT,
			    "--additional-context: distributed.launcher '%s' is not supported; use "
			    "torchrun, torchtitan, megatron-lm, deepspeed, vllm or sglang",
			    l);
}

static int log_base_ok(const char *s)
{
	if (!s || !*s || !strcmp(s, ".") || !strcmp(s, ".."))
		return 0;
	for (; *s; s++) {
		char c = *s;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

static int check_job(const rm_slurm_job *j, rm_error *err)
{
	if (!j->n_tasks || !j->task_argv || !j->task_argv[0])
		return rm_error_set(err, RM_ERR_INTERNAL, "slurm script: no task to run");
	if (j->n_tasks > 1 && j->sc->nodes != 1)
		return rm_error_set(err, RM_ERR_INPUT,
				    "a job array runs one node per model: %zu models cannot share "
				    "one job of slurm.nodes=%ld; submit them one by one",
				    j->n_tasks, j->sc->nodes);
	if (j->log_dir[0] != '/' || j->workdir[0] != '/')
		return rm_error_set(err, RM_ERR_INTERNAL,
				    "slurm script: log and work folders must be absolute");
	if (!sbatch_word_ok(j->workdir) || !sbatch_word_ok(j->batch_log) ||
	    !sbatch_word_ok(j->job_name) || (j->comment && !sbatch_word_ok(j->comment)))
		return rm_error_set(err, RM_ERR_USAGE,
				    "'%s' or '%s' has a blank or a quote, which a #SBATCH line "
				    "cannot carry: run from (and log to) folders without them",
				    j->workdir, j->batch_log);
	for (size_t i = 0; i < j->n_tasks; i++)
		if (!log_base_ok(j->tasks[i].log_base) || !j->tasks[i].model)
			return rm_error_set(err, RM_ERR_INTERNAL,
					    "slurm script: log name '%s' is not file-safe",
					    j->tasks[i].log_base ? j->tasks[i].log_base : "");
	return 0;
}

/* A shell array of one field of every task: NAME=('a' 'b'). */
static void add_array(rm_buf *b, const char *name, const rm_slurm_job *j, int which)
{
	rm_buf_addf(b, "%s=(", name);
	for (size_t i = 0; i < j->n_tasks; i++) {
		char *q = rm_shell_quote(which ? j->tasks[i].log_base : j->tasks[i].model);
		rm_buf_addf(b, "%s%s", i ? " " : "", q);
		free(q);
	}
	rm_buf_addstr(b, ")\n");
}

static void add_directives(rm_buf *b, const rm_slurm_job *j)
{
	const rm_slurm_conf *sc = j->sc;
	struct {
		const char *opt, *val;
	} opt[] = {
	    {"partition", sc->partition},     {"account", sc->account},	  {"qos", sc->qos},
	    {"constraint", sc->constraint},   {"nodelist", sc->nodelist}, {"exclude", sc->exclude},
	    {"reservation", sc->reservation},
	};

	rm_buf_addf(b, "#SBATCH --job-name=%s\n", j->job_name);
	rm_buf_addf(b, "#SBATCH --nodes=%ld\n", sc->nodes);
	rm_buf_addstr(b, "#SBATCH --ntasks-per-node=1\n");
	/* A lost node ends the job NODE_FAIL instead of requeueing it behind our back. */
	rm_buf_addstr(b, "#SBATCH --no-requeue\n");
	rm_buf_addf(b, "#SBATCH --chdir=%s\n", j->workdir);
	rm_buf_addf(b, "#SBATCH --output=%s\n", j->batch_log);
	rm_buf_addf(b, "#SBATCH --time=%s\n", sc->time ? sc->time : RM_SLURM_DEFAULT_TIME);
	/* A cluster without GPU GRES refuses any --gpus-per-node but 0: send none then. */
	if (j->gpus_per_node > 0)
		rm_buf_addf(b, "#SBATCH --gpus-per-node=%ld\n", j->gpus_per_node);
	if (sc->exclusive)
		rm_buf_addstr(b, "#SBATCH --exclusive\n");
	for (size_t i = 0; i < sizeof(opt) / sizeof(opt[0]); i++)
		if (opt[i].val)
			rm_buf_addf(b, "#SBATCH --%s=%s\n", opt[i].opt, opt[i].val);
	if (j->comment)
		rm_buf_addf(b, "#SBATCH --comment=%s\n", j->comment);
	if (j->n_tasks > 1) {
		rm_buf_addf(b, "#SBATCH --array=0-%zu", j->n_tasks - 1);
		if (j->max_parallel > 0)
			rm_buf_addf(b, "%%%ld", j->max_parallel);
		rm_buf_addch(b, '\n');
	}
}

static void add_env(rm_buf *b, const rm_slurm_job *j, long nproc, const char *runner)
{
	const rm_slurm_conf *sc = j->sc;

	rm_buf_addstr(
	    b, "\n# MASTER_ADDR: the allocation's first node; its NodeAddr when the name does not\n"
	       "# resolve (then SLURM_LAUNCH_NODE_IPADDR, then the name).\n"
	       "rm_first=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n"
	       "if getent hosts \"$rm_first\" >/dev/null 2>&1; then\n"
	       "\tMASTER_ADDR=$rm_first\n"
	       "else\n"
	       "\tMASTER_ADDR=$(scontrol -o show node \"$rm_first\" | sed -n 's/.* "
	       "NodeAddr=\\([^ ]*\\).*/\\1/p')\n"
	       "fi\n"
	       "MASTER_ADDR=${MASTER_ADDR:-${SLURM_LAUNCH_NODE_IPADDR:-$rm_first}}\n"
	       "export MASTER_ADDR\n");
	rm_buf_addf(b, "export MASTER_PORT=%ld\n", j->dc->port);
	rm_buf_addf(b, "export NNODES=%ld\n", sc->nodes);
	/* madengine's WORLD_SIZE is the number of tasks, one per node ($SLURM_NTASKS). */
	rm_buf_addf(b, "export WORLD_SIZE=%ld\n", sc->nodes);
	rm_buf_addf(b, "export GPUS_PER_NODE=%ld\n", j->gpus_per_node);
	rm_buf_addf(b, "export NPROC_PER_NODE=%ld\n", nproc);
	rm_buf_addstr(b, "export RM_SLURM_ENV='MASTER_ADDR MASTER_PORT NNODES WORLD_SIZE "
			 "GPUS_PER_NODE NPROC_PER_NODE NODE_RANK");
	if (runner)
		rm_buf_addstr(b, " MAD_MULTI_NODE_RUNNER");
	if (sc->network_interface)
		rm_buf_addstr(b, " NCCL_SOCKET_IFNAME GLOO_SOCKET_IFNAME");
	if (j->dc->backend)
		rm_buf_addstr(b, " DISTRIBUTED_BACKEND");
	rm_buf_addstr(b, "'\n");
	if (sc->network_interface) {
		char *q = rm_shell_quote(sc->network_interface);
		rm_buf_addf(b, "export NCCL_SOCKET_IFNAME=%s GLOO_SOCKET_IFNAME=%s\n", q, q);
		free(q);
	}
	if (j->dc->backend) {
		char *q = rm_shell_quote(j->dc->backend);
		rm_buf_addf(b, "export DISTRIBUTED_BACKEND=%s\n", q);
		free(q);
	}
}

static void add_srun(rm_buf *b, const rm_slurm_job *j, const char *runner)
{
	rm_buf_addstr(b, "\n# One task per node; NODE_RANK and MAD_MULTI_NODE_RUNNER are each "
			 "task's own.\n# The step is named after the logs: inside an allocation "
			 "run_models stops it by name.\n");
	rm_buf_addf(b,
		    "exec srun --nodes=%ld --ntasks-per-node=1 --kill-on-bad-exit=1 "
		    "--job-name=\"$RM_LOG_BASE\" \\\n"
		    "\t--output=\"$RM_LOG_DIR/$RM_LOG_BASE.node%%n.log\" "
		    "--error=\"$RM_LOG_DIR/$RM_LOG_BASE.node%%n.err\" \\\n"
		    "\t/bin/sh -c 'NODE_RANK=$SLURM_NODEID\nexport NODE_RANK\n",
		    j->sc->nodes);
	if (runner)
		rm_buf_addf(b, "export MAD_MULTI_NODE_RUNNER=\"%s\"\n", runner);
	rm_buf_addstr(b, "exec \"$@\"' rm-task");
	for (char *const *w = j->task_argv; *w; w++) {
		if (strcmp(*w, RM_SLURM_MODEL_WORD) == 0) {
			rm_buf_addstr(b, " \"$RM_MODEL\"");
		} else {
			char *q = rm_shell_quote(*w);
			rm_buf_addf(b, " %s", q);
			free(q);
		}
	}
	rm_buf_addch(b, '\n');
}

int rm_slurm_script(const rm_slurm_job *j, char **script, rm_error *err)
{
	rm_buf b = RM_BUF_INIT((size_t)16 << 20);
	char *runner = NULL, *q;
	long nproc = j->dc->nproc_per_node >= 0 ? j->dc->nproc_per_node : j->gpus_per_node;

	*script = NULL;
	if (check_job(j, err) < 0 || rm_slurm_runner(j->dc, nproc, &runner, err) < 0)
		return -1;
	rm_buf_addstr(&b, "#!/bin/bash\n");
	if (j->n_tasks == 1)
		rm_buf_addf(&b, "# Written by run_models for model '%s': ", j->tasks[0].model);
	else
		rm_buf_addf(&b, "# Written by run_models for %zu models, one array task each: ",
			    j->n_tasks);
	rm_buf_addf(&b,
		    "%ld node(s) x %ld GPU(s), launcher %s.\n# Submit it again with: sbatch "
		    "<this file>\n",
		    j->sc->nodes, j->gpus_per_node, j->dc->launcher);
	add_directives(&b, j);

	if (j->sc->modules) {
		rm_buf_addch(&b, '\n');
		for (char **m = j->sc->modules; *m; m++) {
			q = rm_shell_quote(*m);
			rm_buf_addf(&b, "module load %s\n", q);
			free(q);
		}
	}
	q = rm_shell_quote(j->log_dir);
	rm_buf_addf(&b, "\nRM_LOG_DIR=%s\n", q);
	free(q);
	if (j->n_tasks == 1) {
		q = rm_shell_quote(j->tasks[0].model);
		rm_buf_addf(&b, "RM_MODEL=%s\n", q);
		free(q);
		q = rm_shell_quote(j->tasks[0].log_base);
		rm_buf_addf(&b, "RM_LOG_BASE=%s\n", q);
		free(q);
	} else {
		add_array(&b, "rm_models", j, 0);
		add_array(&b, "rm_log_bases", j, 1);
		rm_buf_addstr(&b, "RM_MODEL=${rm_models[$SLURM_ARRAY_TASK_ID]}\n"
				  "RM_LOG_BASE=${rm_log_bases[$SLURM_ARRAY_TASK_ID]}\n");
	}
	add_env(&b, j, nproc, runner);
	add_srun(&b, j, runner);
	free(runner);
	*script = rm_buf_detach(&b);
	return 0;
}
