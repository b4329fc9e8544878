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
#include "rm/log.h"
#include "rm/registry.h"
#include "rm/util.h"

struct list_cli {
	struct opt_list tags;
	struct opt_list contexts;
	struct opt_list context_files;
	int ignored_flag;
	const char *ignored_str;
	double ignored_num;
};

#define F(field) offsetof(struct list_cli, field)
static const struct opt list_options[] = {
    {"tags", 't', OPT_LIST, F(tags), "TAGS", "models to list (default all)"},
    {"additional-context", 0, OPT_LIST, F(contexts), "JSON|@FILE",
     "the context Dockerfiles are chosen for"},
    /* Accepted so that 'run_models run --list ...' can pass its whole command line. */
    {"list", 0, OPT_FLAG, F(ignored_flag), NULL, "(accepted, no effect)"},
    {"live-output", 'l', OPT_FLAG, F(ignored_flag), NULL, "(accepted, no effect)"},
    {"keep-alive", 0, OPT_FLAG, F(ignored_flag), NULL, "(accepted, no effect)"},
    {"keep-model-dir", 0, OPT_FLAG, F(ignored_flag), NULL, "(accepted, no effect)"},
    {"clean-docker-cache", 0, OPT_FLAG, F(ignored_flag), NULL, "(accepted, no effect)"},
    {"quiet", 'q', OPT_FLAG, F(ignored_flag), NULL, "(accepted, no effect)"},
    {"output", 'o', OPT_STRING, F(ignored_str), "FILE", "(accepted, no effect)"},
    {"log-dir", 0, OPT_STRING, F(ignored_str), "DIR", "(accepted, no effect)"},
    {"parser", 0, OPT_STRING, F(ignored_str), "NAME", "(accepted, no effect)"},
    {"timeout", 0, OPT_NUMBER, F(ignored_num), "SECONDS", "(accepted, no effect)"},
    {"warmup", 0, OPT_NUMBER, F(ignored_num), "N", "(accepted, no effect)"},
    {"tunableop", 0, OPT_STRING, F(ignored_str), "on|off", "(accepted, no effect)"},
    {"shm-size", 0, OPT_STRING, F(ignored_str), "SIZE", "(accepted, no effect)"},
    {"score", 0, OPT_STRING, F(ignored_str), "RULE", "(accepted, no effect)"},
    {"repeat", 0, OPT_NUMBER, F(ignored_num), "N", "(accepted, no effect)"},
    {"progress-interval", 0, OPT_NUMBER, F(ignored_num), "SECONDS", "(accepted, no effect)"},
    {"dry-run", 'n', OPT_FLAG, F(ignored_flag), NULL, "(accepted, no effect)"},
    {"no-progress", 0, OPT_FLAG, F(ignored_flag), NULL, "(accepted, no effect)"},
    {"sys-env-details", 0, OPT_FLAG, F(ignored_flag), NULL, "(accepted, no effect)"},
    {"additional-context-file", 0, OPT_LIST, F(context_files), "FILE", "(accepted, no effect)"},
    OPT_END,
};
#undef F

int cmd_list(int argc, char **argv, rm_error *err)
{
	struct list_cli cli = {0};
	struct opt_list pos = {0};
	rm_registry reg = {0};
	rm_selection sel = {0};
	rm_context ctx = {0};
	static const char *const all[] = {"all"};
	int rc, ret = -1;

	rc = opt_parse(list_options, &cli, argc, argv, &pos, err);
	if (rc != 0) {
		if (rc == 1) {
			opt_help(stdout, "usage: run_models list [--tags TAG] [options]",
				 list_options);
			ret = RM_EXIT_OK;
		}
		goto out;
	}
	if (pos.n) {
		rm_error_set(err, RM_ERR_USAGE, "unexpected argument '%s'", pos.v[0]);
		goto out;
	}
	if (rm_registry_load(&reg, ".", err) < 0 ||
	    rm_select(&reg, cli.tags.n ? cli.tags.v : all, cli.tags.n ? cli.tags.n : 1, &sel, err) <
		0)
		goto out;
	const char *sysfs = getenv("RM_SYSFS_ROOT");
	if (rm_context_detect(&ctx, sysfs ? sysfs : "/sys", 1, err) < 0)
		goto out;
	for (size_t i = 0; i < cli.contexts.n; i++)
		if (rm_context_apply(&ctx, cli.contexts.v[i], "--additional-context", err) < 0)
			goto out;
	for (size_t i = 0; i < sel.n; i++) {
		const rm_model *m = sel.items[i].model;
		rm_dockerfile *dfs = NULL;
		size_t n = 0, kept = 0;
		rm_error derr = RM_ERROR_INIT;
		char *tags = NULL;
		rm_buf tb = RM_BUF_INIT((size_t)1 << 20);

		for (size_t t = 0; t < m->n_tags; t++) {
			if (t)
				rm_buf_addch(&tb, ',');
			rm_buf_addstr(&tb, m->tags[t]);
		}
		tags = rm_buf_detach(&tb);
		rm_dockerfiles_select(m->dockerfile, &ctx, &dfs, &n, &derr);
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
	ret = RM_EXIT_OK;
out:
	rm_context_release(&ctx);
	rm_selection_release(&sel);
	rm_registry_release(&reg);
	opt_list_release(&cli.tags);
	opt_list_release(&cli.contexts);
	opt_list_release(&cli.context_files);
	opt_list_release(&pos);
	return ret;
}
