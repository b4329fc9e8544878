/*
 * --dry-run: what would be built and run, with no engine contacted. Secrets are masked in
 * everything printed, the launcher's plan included.
 */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include "rm/report.h"
#include "rm/util.h"

static void print_masked(struct run *r, const char *text)
{
	char *m = rm_mask_string(&r->mask, text);
	fputs(m, stdout);
	free(m);
}

/* The tools: what runs before and after the model, the command they wrap, their
 * environment, what is copied in and what comes back out. */
static void dry_run_tools(struct run *r, const rm_model *m, const rm_workload *w)
{
	const rm_tool_plan *p = &w->tools;
	char *safe, *live, *dir;
	rm_buf b = RM_BUF_INIT((size_t)16 << 20);

	if (rm_tool_plan_empty(p))
		return;
	for (size_t i = 0; i < p->n_tools; i++)
		rm_buf_addf(&b, "%s%s (%s)", i ? ", " : "", p->tools[i], p->sources[i]);
	if (p->n_tools)
		rm_buf_addf(&b, "\n");
	for (size_t i = 0; i < p->n_pre; i++) {
		char *l = rm_workload_tool_script_label(p, 0, i);
		rm_buf_addf(&b, "  before the model: %s\n", l);
		free(l);
	}
	{
		char *c = rm_workload_command_text(w);
		rm_buf_addf(&b, "  command: %s\n", c);
		free(c);
	}
	for (size_t i = 0; i < p->n_post; i++) {
		char *l = rm_workload_tool_script_label(p, 1, i);
		rm_buf_addf(&b, "  after the model: %s\n", l);
		free(l);
	}
	for (size_t i = 0; i < p->n_env; i++)
		rm_buf_addf(&b, "  tool env: %s=%s\n", p->env[i].key, p->env[i].value);
	for (size_t i = 0; i < p->n_copies; i++)
		rm_buf_addf(&b, "  copied in: %s -> %s/%s\n", p->copies[i].host, RM_WORKSPACE,
			    p->copies[i].dest);
	safe = rm_runner__log_name(r, m);
	live = rm_runner__log_path(r, safe, ".live.log");
	dir = rm_runner__tools_dir(live);
	for (size_t i = 0; i < p->n_outputs; i++) {
		char *d = rm_workload_tool_dir(p->outputs[i].tool);
		rm_buf_addf(&b, "  outputs of %s: %s -> %s/%s/\n", p->outputs[i].tool,
			    p->outputs[i].glob, dir, d);
		free(d);
	}
	if (p->n_tools)
		printf("  tools: ");
	print_masked(r, rm_buf_str(&b));
	rm_buf_release(&b);
	free(dir);
	free(live);
	free(safe);
}

void rm_runner__dry_run_model(struct run *r, const rm_model *m, const rm_workload *w,
			      const rm_dockerfile *dfs, size_t n_dfs)
{
	char *args = rm_workload_args(w);
	char timeout[48];
	char *head;

	if (w->timeout > 0)
		snprintf(timeout, sizeof(timeout), "%.15g s", w->timeout);
	else
		snprintf(timeout, sizeof(timeout), "none");
	head = rm_xasprintf("model '%s' (GPUs %ld, timeout %s, tunableop %s, parser %s)\n  "
			    "args: %s\n",
			    m->name, rm_workload_gpus(w, &r->ctx), timeout,
			    w->tunableop ? rm_choice_name(rm_tunableop_words, (int)w->tunableop)
					 : "as the model has it",
			    r->o->parser ? r->o->parser : m->parser, args);

	print_masked(r, head);
	if (w->tunableop_dir)
		printf("  tunableop results: %s (mounted at %s)\n", w->tunableop_dir,
		       RM_TUNABLEOP_DIR);
	for (size_t i = 0; i < n_dfs; i++)
		if (!dfs[i].kept)
			printf("  dropped: %s: %s\n", dfs[i].path, dfs[i].why_dropped);
	dry_run_tools(r, m, w);
	free(head);
	free(args);
}

void rm_runner__dry_run_dockerfile(struct run *r, const rm_image_req *req, const rm_job_spec *spec,
				   const char *gpu_vendor_wanted)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	rm_error err = RM_ERROR_INIT;
	rm_launcher *L;

	if (!f)
		return;
	L = rm_runner__launcher(r, spec->w, &err);
	if (L)
		L->ops->plan(L->state, req, spec, f);
	else
		fprintf(f, "  would fail: %s\n", rm_error_text(&err));
	fclose(f);
	print_masked(r, text);
	free(text);
	if (gpu_vendor_wanted)
		printf("  would fail: it is for %s GPUs and this context has none\n",
		       gpu_vendor_wanted);
}
