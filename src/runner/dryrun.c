/*
 * --dry-run: what would be built and run, with no engine contacted. Secrets are masked in
 * everything printed, the launcher's plan included.
 */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include "rm/util.h"

static void print_masked(struct run *r, const char *text)
{
	char *m = rm_mask_string(&r->mask, text);
	fputs(m, stdout);
	free(m);
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
			    w->tunableop ? w->tunableop : "as the model has it",
			    r->o->parser ? r->o->parser : m->parser, args);

	print_masked(r, head);
	if (w->tunableop_dir)
		printf("  tunableop results: %s (mounted at %s)\n", w->tunableop_dir,
		       RM_TUNABLEOP_DIR);
	for (size_t i = 0; i < n_dfs; i++)
		if (!dfs[i].kept)
			printf("  dropped: %s: %s\n", dfs[i].path, dfs[i].why_dropped);
	free(head);
	free(args);
}

void rm_runner__dry_run_dockerfile(struct run *r, const rm_image_req *req, const rm_job_spec *spec,
				   const char *gpu_vendor_wanted)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return;
	r->launcher.ops->plan(r->launcher.state, req, spec, f);
	fclose(f);
	print_masked(r, text);
	free(text);
	if (gpu_vendor_wanted)
		printf("  would fail: it is for %s GPUs and this context has none\n",
		       gpu_vendor_wanted);
}
