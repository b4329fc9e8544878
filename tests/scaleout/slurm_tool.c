/*
 * A test driver for the SLURM launcher's pure pieces, so shell tests can use them on a real
 * cluster before the launcher itself exists:
 *
 *   slurm_tool script CONTEXT_JSON LOG_DIR WORKDIR JOB_NAME MODEL[,MODEL...] -- TASK_ARGV...
 *       prints the batch script (one model: one job over slurm.nodes; several: an array);
 *       each model's log name is the model name with '/' made '_'
 *   slurm_tool sbatch|squeue|sacct|scontrol|batchlog < OUTPUT
 *   slurm_tool queue|final JOB_ID     (runs squeue, or sacct falling back on scontrol)
 *       prints what the parser read: "ID STATE REASON-TEXT" per job or array task
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../../src/launcher/slurm.h"
#include "rm/util.h"

static char *slurp_stdin(void)
{
	rm_buf b = RM_BUF_INIT((size_t)64 << 20);
	char chunk[4096];
	size_t n;

	while ((n = fread(chunk, 1, sizeof(chunk), stdin)) > 0)
		rm_buf_add(&b, chunk, n);
	return rm_buf_detach(&b);
}

static int script(int argc, char **argv)
{
	rm_error err = RM_ERROR_INIT;
	rm_slurm_conf sc;
	rm_dist_conf dc;
	rm_slurm_task *tasks = NULL;
	char **models = NULL, **bases = NULL, *s = NULL, *batch_log = NULL;
	size_t nm = 0, nb = 0;
	int present, dd = 7, ret = 1;
	json_error_t je;
	json_t *ctx;

	if (argc < 9 || strcmp(argv[dd], "--") != 0) {
		fprintf(stderr, "usage: slurm_tool script CONTEXT LOG_DIR WORKDIR NAME MODELS -- "
				"ARGV...\n");
		return 2;
	}
	ctx = json_loads(argv[2], 0, &je);
	if (!ctx || rm_slurm_conf_parse(ctx, &sc, &dc, &present, &err) < 0) {
		fprintf(stderr, "slurm_tool: %s\n", ctx ? err.msg : je.text);
		json_decref(ctx);
		return 1;
	}
	for (char **n = sc.notes; n && *n; n++)
		fprintf(stderr, "note: %s\n", *n);
	char *list = rm_xstrdup(argv[6]);
	for (char *m = list; m && *m;) {
		char *comma = strchr(m, ',');
		if (comma)
			*comma = '\0';
		models = rm_strv_push(models, &nm, m);
		for (char *p = m; *p; p++)
			if (*p == '/')
				*p = '_';
		bases = rm_strv_push(bases, &nb, m);
		m = comma ? comma + 1 : NULL;
	}
	free(list);
	tasks = rm_xcalloc(nm, sizeof(*tasks));
	for (size_t i = 0; i < nm; i++)
		tasks[i] = (rm_slurm_task){models[i], bases[i]};
	batch_log = nm > 1 ? rm_xasprintf("%s/%s.%%a.batch.log", argv[3], argv[5])
			   : rm_xasprintf("%s/%s.batch.log", argv[3], bases[0]);
	rm_slurm_job job = {.job_name = argv[5],
			    .log_dir = argv[3],
			    .workdir = argv[4],
			    .batch_log = batch_log,
			    .sc = &sc,
			    .dc = &dc,
			    .gpus_per_node = rm_slurm_gpus_per_node(&sc, -1, 0),
			    .tasks = tasks,
			    .n_tasks = nm,
			    .task_argv = argv + dd + 1};
	if (rm_slurm_script(&job, &s, &err) < 0) {
		fprintf(stderr, "slurm_tool: %s\n", err.msg);
		goto out;
	}
	fputs(s, stdout);
	ret = 0;
out:
	free(s);
	free(batch_log);
	free(tasks);
	rm_strv_free(models);
	rm_strv_free(bases);
	rm_slurm_conf_release(&sc);
	rm_dist_conf_release(&dc);
	json_decref(ctx);
	return ret;
}

int main(int argc, char **argv)
{
	rm_error err = RM_ERROR_INIT;
	rm_slurm_job_state *v = NULL;
	size_t n = 0;
	char *in, reason[512];
	int r;

	if (argc >= 2 && strcmp(argv[1], "script") == 0)
		return script(argc, argv);
	if (argc == 3 && (strcmp(argv[1], "final") == 0 || strcmp(argv[1], "queue") == 0)) {
		long id;
		const char *source = "squeue";
		if (rm_parse_long(argv[2], 1, 1L << 40, &id) < 0) {
			fprintf(stderr, "slurm_tool: '%s' is not a job id\n", argv[2]);
			return 2;
		}
		r = argv[1][0] == 'f' ? rm_slurm_final(id, &v, &n, &source, &err)
				      : rm_slurm_queue(id, &v, &n, &err);
		if (r < 0)
			fprintf(stderr, "slurm_tool: %s\n", err.msg);
		for (size_t i = 0; r == 0 && i < n; i++) {
			rm_slurm_reason(&v[i], reason, sizeof(reason));
			printf("%ld", v[i].job_id);
			if (v[i].array_task >= 0)
				printf("_%ld", v[i].array_task);
			printf(" %s %s (%s)\n", rm_slurm_state_name(v[i].state), reason, source);
		}
		free(v);
		return r < 0 ? 1 : 0;
	}
	if (argc != 2) {
		fprintf(stderr,
			"usage: slurm_tool script ... | sbatch|squeue|sacct|scontrol|batchlog\n");
		return 2;
	}
	in = slurp_stdin();
	if (strcmp(argv[1], "batchlog") == 0) {
		long task;
		int code;
		char node[256];
		r = rm_slurm_first_failed_task(in, &task, &code, node, sizeof(node));
		if (r == 0)
			printf("task %ld on %s exited with code %d\n", task, node, code);
		r = r > 0 ? -1 : r;
		if (r < 0)
			rm_error_set(&err, RM_ERR_INPUT, "no failed task in the batch log");
	} else if (strcmp(argv[1], "sbatch") == 0) {
		long id;
		r = rm_slurm_parse_sbatch(in, &id, &err);
		if (r == 0)
			printf("%ld\n", id);
	} else if (strcmp(argv[1], "squeue") == 0) {
		r = rm_slurm_parse_squeue(in, &v, &n, &err);
	} else if (strcmp(argv[1], "sacct") == 0) {
		r = rm_slurm_parse_sacct(in, &v, &n, &err);
	} else if (strcmp(argv[1], "scontrol") == 0) {
		r = rm_slurm_parse_scontrol(in, &v, &n, &err);
	} else {
		fprintf(stderr, "slurm_tool: unknown command '%s'\n", argv[1]);
		free(in);
		return 2;
	}
	for (size_t i = 0; r == 0 && i < n; i++) {
		rm_slurm_reason(&v[i], reason, sizeof(reason));
		if (v[i].array_task >= 0)
			printf("%ld_%ld %s %s\n", v[i].job_id, v[i].array_task,
			       rm_slurm_state_name(v[i].state), reason);
		else
			printf("%ld %s %s\n", v[i].job_id, rm_slurm_state_name(v[i].state), reason);
	}
	if (r < 0)
		fprintf(stderr, "slurm_tool: %s\n", err.msg);
	free(v);
	free(in);
	return r < 0 ? 1 : 0;
}
