/*
 * The sbatch batch script the SLURM launcher submits (see slurm.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slurm.h"
#include "rm/launcher.h"
#include "rm/util.h"
#include "rm/workload.h"

/* ---- the batch script ---- */

int rm_slurm_runner(const rm_dist_conf *dc, long nproc, char **runner, rm_error *err)
{
	const char *name = dc->launcher ? dc->launcher : RM_SLURM_DEFAULT_LAUNCHER;
	const rm_dist_launcher *l = rm_dist_launcher_find(name);

	*runner = NULL;
	if (!l || l->slurm != RM_DIST_SLURM_TASKS) {
		char *names = rm_dist_launcher_names(1);
		rm_error_set(err, RM_ERR_INPUT,
			     "--additional-context: distributed.launcher '%s' is not supported; "
			     "use %s",
			     name, names);
		free(names);
		return -1;
	}
	if (l->start == RM_DIST_DEEPSPEED && dc->nnodes > 1)
		return rm_error_set(err, RM_ERR_INPUT,
				    "--additional-context: distributed.launcher deepspeed "
				    "runs on one node here (across nodes it needs a hostfile "
				    "inside the container); use torchrun for %ld nodes",
				    dc->nnodes);
	if (l->start != RM_DIST_OWN) /* those start their own workers: no runner prefix */
		*runner = rm_dist_runner(l, dc->nnodes, nproc, dc->port);
	return 0;
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
	if (!rm_slurm_word_ok(j->workdir) || !rm_slurm_word_ok(j->batch_log) ||
	    !rm_slurm_word_ok(j->job_name) || (j->comment && !rm_slurm_word_ok(j->comment)))
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

/* before, value quoted for the shell, after. */
static void add_quoted(rm_buf *b, const char *before, const char *value, const char *after)
{
	char *q = rm_shell_quote(value);

	rm_buf_addstr(b, before);
	rm_buf_addstr(b, q);
	rm_buf_addstr(b, after);
	free(q);
}

/* The batch script's `module load` lines (slurm.modules). */
static void add_modules(rm_buf *b, const rm_slurm_job *j)
{
	if (!j->sc->modules)
		return;
	rm_buf_addch(b, '\n');
	for (char **m = j->sc->modules; *m; m++)
		add_quoted(b, "module load ", *m, "\n");
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
	char *runner = NULL;
	long nproc = j->dc->nproc_per_node >= 0 ? j->dc->nproc_per_node : j->gpus_per_node;

	*script = NULL;
	if (check_job(j, err) < 0 || rm_slurm_runner(j->dc, nproc, &runner, err) < 0)
		return -1;
	rm_buf_addstr(&b, "#!/bin/bash\n");
	if (j->what)
		rm_buf_addf(&b, "# Written by run_models for %s: ", j->what);
	else if (j->n_tasks == 1)
		rm_buf_addf(&b, "# Written by run_models for model '%s': ", j->tasks[0].model);
	else
		rm_buf_addf(&b, "# Written by run_models for %zu models, one array task each: ",
			    j->n_tasks);
	rm_buf_addf(&b,
		    "%ld node(s) x %ld GPU(s), launcher %s.\n# Submit it again with: sbatch "
		    "<this file>\n",
		    j->sc->nodes, j->gpus_per_node, j->dc->launcher);
	add_directives(&b, j);

	add_modules(&b, j);
	add_quoted(&b, "\nRM_LOG_DIR=", j->log_dir, "\n");
	if (j->n_tasks == 1) {
		add_quoted(&b, "RM_MODEL=", j->tasks[0].model, "\n");
		add_quoted(&b, "RM_LOG_BASE=", j->tasks[0].log_base, "\n");
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

/* ---- a card whose script runs on the batch host (MAD's slurm_multi) ---- */

/* The step that puts the image on every node (one task a node), each node's line in the
 * steps file: "image <node> <id>", or "image-failed <node>". */
static void add_card_image(rm_buf *b, const rm_slurm_card_job *c)
{
	const char *get =
	    c->image_tar ? "docker load -i \"$2\" >/dev/null" : "docker pull \"$1\" >/dev/null";
	char *tar = rm_shell_quote(c->image_tar ? c->image_tar : "");

	rm_buf_addf(b,
		    "\n# The image on every node before the script starts (%s), each node's "
		    "image id kept.\n",
		    c->image_tar ? "loaded from the copy run_models saved beside the logs"
				 : "pulled in parallel");
	rm_buf_addf(b,
		    "srun --nodes=\"$SLURM_NNODES\" --ntasks=\"$SLURM_NNODES\" "
		    "--ntasks-per-node=1 --job-name=rm-image \\\n"
		    "\tbash -c '%s &&\n"
		    "\t\techo \"image $SLURMD_NODENAME $(docker image inspect --format "
		    "\"{{.Id}}\" \"$1\")\" ||\n"
		    "\t\techo \"image-failed $SLURMD_NODENAME\"' rm-image "
		    "\"$DOCKER_IMAGE_NAME\" %s >>\"$RM_STEPS\"\n",
		    get, tar);
	free(tar);
	if (c->image_id) {
		char *id = rm_shell_quote(c->image_id);
		rm_buf_addf(b, "rm_want=%s\n", id);
		free(id);
	} else {
		rm_buf_addstr(b, "rm_want=\n");
	}
	rm_buf_addstr(
	    b, "rm_bad=$(awk -v want=\"$rm_want\" '$1 == \"image\" && want == \"\" { want = $3 }\n"
	       "\t$1 == \"image-failed\" { print $2 \": could not get it\" }\n"
	       "\t$1 == \"image\" && ($3 == \"\" || (want != \"\" && $3 != want)) { print $2 \": "
	       "holds \" ($3 == \"\" ? \"none\" : $3) }' \"$RM_STEPS\")\n"
	       "rm_have=$(grep -c '^image ' \"$RM_STEPS\")\n"
	       "if [ -n \"$rm_bad\" ] || [ \"$rm_have\" -ne \"$SLURM_NNODES\" ]; then\n"
	       "\techo \"run_models: the image is not on every node ($rm_have of $SLURM_NNODES): "
	       "$rm_bad\" >&2\n"
	       "\techo \"image-check failed\" >>\"$RM_STEPS\"\n"
	       "\texit " RM_SLURM_IMAGE_MISSING_TEXT "\n"
	       "fi\n");
}

int rm_slurm_card_script(const rm_slurm_card_job *c, char **script, rm_error *err)
{
	const rm_slurm_job *j = c->job;
	rm_buf b = RM_BUF_INIT((size_t)16 << 20);
	char **words = NULL;
	size_t nw = 0;

	*script = NULL;
	if (j->workdir[0] != '/' || !rm_slurm_word_ok(j->workdir) ||
	    !rm_slurm_word_ok(j->batch_log) || !rm_slurm_word_ok(j->job_name) ||
	    (j->comment && !rm_slurm_word_ok(j->comment)))
		return rm_error_set(err, RM_ERR_USAGE,
				    "'%s' or '%s' has a blank or a quote, which a #SBATCH line "
				    "cannot carry: keep the card's script and the logs in folders "
				    "without them",
				    j->workdir, j->batch_log);
	if (rm_split_words(c->args ? c->args : "", &words, &nw, err) < 0)
		return rm_error_wrap(err, "model '%s': field 'args'", c->model);
	rm_buf_addf(&b,
		    "#!/bin/bash\n# Written by run_models for model '%s': its script on the batch "
		    "host (launcher %s), %ld node(s)\n# x %ld GPU(s); the script starts its own "
		    "containers. Submit it again with: sbatch <this file>\n",
		    c->model, c->launcher, j->sc->nodes, j->gpus_per_node);
	add_directives(&b, j);
	add_modules(&b, j);
	rm_buf_addstr(&b, "\n# The card's env_vars, the context's over them (MAD's layering).\n");
	for (size_t i = 0; i < c->n_env; i++) {
		if (strcmp(c->env[i].key, "DOCKER_IMAGE_NAME")) { /* below */
			rm_buf_addf(&b, "export %s=", c->env[i].key);
			add_quoted(&b, "", c->env[i].value, "\n");
		}
	}
	add_quoted(&b, "export DOCKER_IMAGE_NAME=", c->image, "\n");
	add_quoted(&b, "RM_STEPS=", c->steps, "\n: >\"$RM_STEPS\"\n");
	add_card_image(&b, c);
	add_quoted(&b, "\n# The card's script, on this host (the batch host).\ncd ", j->workdir,
		   " || exit 1\n");
	add_quoted(&b, "bash ", c->script, "");
	for (size_t i = 0; i < nw; i++)
		add_quoted(&b, " ", words[i], "");
	rm_buf_addstr(&b, "\nrm_rc=$?\necho \"script $rm_rc\" >>\"$RM_STEPS\"\nexit $rm_rc\n");
	rm_strv_free(words);
	*script = rm_buf_detach(&b);
	return 0;
}
