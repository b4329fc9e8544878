/*
 * run_models list [--tags TAG] [--additional-context JSON]: the selection, one line per kept
 * Dockerfile: <model>\t<dockerfile>\t<parser>\t<tags>. A model whose Dockerfiles are all
 * dropped for this context prints "-" as its Dockerfile and a warning saying why.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "options.h"
#include "rm/context.h"
#include "rm/util.h"
#include "rm/registry.h"

/* One line per kept Dockerfile, or one "-" line and a warning when none is kept. */
static void list_model(const rm_model *m, const rm_context *ctx)
{
	rm_dockerfile *dfs = NULL;
	size_t n = 0, kept = 0;
	rm_error derr = RM_ERROR_INIT;
	rm_buf tb = RM_BUF_INIT((size_t)1 << 20);
	char *tags;

	for (size_t t = 0; t < m->n_tags; t++) {
		if (t)
			rm_buf_addch(&tb, ',');
		rm_buf_addstr(&tb, m->tags[t]);
	}
	tags = rm_buf_detach(&tb);
	rm_dockerfiles_select(m->dockerfile, ctx, &dfs, &n, &derr);
	for (size_t k = 0; k < n; k++) {
		if (!dfs[k].kept)
			continue;
		kept++;
		printf("%s\t%s\t%s\t%s\n", m->name, dfs[k].path, m->parser, tags);
	}
	if (!kept) {
		printf("%s\t-\t%s\t%s\n", m->name, m->parser, tags);
		rm_warn("model '%s': %s", m->name, derr.msg);
	}
	rm_dockerfiles_free(dfs, n);
	free(tags);
}

/* Prints the selection of cli's tags (default all) for cli's context. */
int list_selection(const struct cli *cli, rm_error *err)
{
	rm_registry reg = {0};
	rm_selection sel = {0};
	rm_context ctx = {0};
	static const char *const all[] = {"all"};
	const char *sysfs = getenv("RM_SYSFS_ROOT");
	rm_registry_opts ro = {0, 0};
	int ret = -1;

	if (cli_run_dynamic(cli, &ro.run_dynamic, err) < 0 ||
	    rm_registry_load_opts(&reg, ".", &ro, err) < 0 ||
	    rm_select(&reg, cli->tags.n ? cli->tags.v : all, cli->tags.n ? cli->tags.n : 1, &sel,
		      err) < 0)
		goto out;
	if (rm_context_detect(&ctx, sysfs ? sysfs : "/sys", 1, err) < 0 ||
	    rm_context_ctx_test(&ctx, ".", err) < 0)
		goto out;
	for (size_t i = 0; i < cli->context_files.n; i++)
		if (rm_context_apply_file(&ctx, cli->context_files.v[i], err) < 0)
			goto out;
	for (size_t i = 0; i < cli->contexts.n; i++)
		if (rm_context_apply(&ctx, cli->contexts.v[i], "--additional-context", err) < 0)
			goto out;
	for (size_t i = 0; i < sel.n; i++)
		list_model(sel.items[i].model, &ctx);
	ret = RM_EXIT_OK;
out:
	rm_context_release(&ctx);
	rm_selection_release(&sel);
	rm_registry_release(&reg);
	return ret;
}

int cmd_list(int argc, char **argv, rm_error *err)
{
	struct cli cli;
	struct opt_list pos = {0};
	int rc, md, ret = -1;

	cli_init(&cli);
	/* Every run option is accepted, so that a run's command line can be listed as it is;
	 * only the selection and the context matter. */
	rc = opt_parse(CMD_LIST | CMD_RUN, &cli, argc, argv, &pos, &md, err);
	if (rc != 0) {
		if (rc == 1) {
			opt_help(stdout, CMD_LIST, "usage: run_models list [--tags TAG] [options]",
				 md);
			if (!md)
				puts(
				    "\n'list' also accepts every 'run' option (without effect), so "
				    "a run's command line\ncan be listed as it is.");
			ret = RM_EXIT_OK;
		}
		goto out;
	}
	if (pos.n) {
		rm_error_set(err, RM_ERR_USAGE, "unexpected argument '%s'", pos.v[0]);
		goto out;
	}
	ret = list_selection(&cli, err);
out:
	cli_release(&cli);
	opt_list_release(&pos);
	return ret;
}
