/*
 * run_models list [--tags TAG] [--additional-context JSON] [--format table|csv|json]: the
 * selection, one row per kept Dockerfile: model, dockerfile, parser, tags. A model whose
 * Dockerfiles are all dropped for this context gets one row with no Dockerfile ("-" in the
 * table) and a warning saying why. The table has a header and aligned columns, cut to the
 * terminal's width; csv and json are for scripts.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "options.h"
#include "rm/context.h"
#include "rm/report.h"
#include "rm/util.h"
#include "rm/registry.h"

enum list_format { LIST_TABLE, LIST_CSV, LIST_JSON };

struct listing {
	enum list_format format;
	rm_table table;
	json_t *json;
	rm_buf csv;
};

static void listing_row(struct listing *l, const rm_model *m, const char *dockerfile,
			const char *tags)
{
	const char *cells[] = {m->name, dockerfile, m->parser, tags};

	if (l->format == LIST_TABLE) {
		cells[1] = dockerfile ? dockerfile : "-";
		rm_table_add(&l->table, cells);
	} else if (l->format == LIST_CSV) {
		rm_csv_record(&l->csv, cells, 4);
		fputs(rm_buf_str(&l->csv), stdout);
		rm_buf_reset(&l->csv);
	} else {
		json_t *t = json_array();
		for (size_t i = 0; i < m->n_tags; i++)
			json_array_append_new(t, json_string(m->tags[i]));
		json_array_append_new(l->json, json_pack("{s:s, s:s?, s:s?, s:o}", "model", m->name,
							 "dockerfile", dockerfile, "parser",
							 m->parser, "tags", t));
	}
}

/* One row per kept Dockerfile, or one row without and a warning when none is kept. */
static void list_model(struct listing *l, const rm_model *m, const rm_context *ctx)
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
		listing_row(l, m, dfs[k].path, tags);
	}
	if (!kept) {
		listing_row(l, m, NULL, tags);
		rm_warn("model '%s': %s", m->name, rm_error_text(&derr));
	}
	rm_dockerfiles_free(dfs, n);
	free(tags);
}

static int list_format(const struct cli *cli, enum list_format *f, rm_error *err)
{
	(void)err;
	*f = cli->format == FORMAT_CSV	  ? LIST_CSV
	     : cli->format == FORMAT_JSON ? LIST_JSON
					  : LIST_TABLE;
	return 0;
}

static void listing_start(struct listing *l)
{
	static const char *const header[] = {"model", "dockerfile", "parser", "tags"};

	if (l->format == LIST_TABLE) {
		rm_table_init(&l->table, 4, header);
		/* at 80 columns the tags give way first, then the Dockerfile, then the name */
		rm_table_column(&l->table, 0, RM_TABLE_SHRINK, 16, 2);
		rm_table_column(&l->table, 1, RM_TABLE_SHRINK, 16, 1);
		rm_table_column(&l->table, 3, RM_TABLE_SHRINK, 8, 0);
	} else if (l->format == LIST_CSV) {
		rm_buf_init(&l->csv, (size_t)1 << 24);
		rm_csv_record(&l->csv, header, 4);
		fputs(rm_buf_str(&l->csv), stdout);
		rm_buf_reset(&l->csv);
	} else {
		l->json = json_array();
	}
}

static void listing_end(struct listing *l, int print)
{
	if (l->format == LIST_TABLE) {
		if (print)
			rm_table_print(&l->table, stdout, "", (size_t)rm_term_width(stdout));
		rm_table_release(&l->table);
	} else if (l->format == LIST_CSV) {
		rm_buf_release(&l->csv);
	} else {
		char *text =
		    print ? json_dumps(l->json, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
		if (text)
			puts(text);
		free(text);
		json_decref(l->json);
	}
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
	struct listing l = {0};
	int ret = -1;

	if (list_format(cli, &l.format, err) < 0)
		return -1;
	ro.run_dynamic = cli_run_dynamic(cli);
	if (rm_registry_load_opts(&reg, ".", &ro, err) < 0 ||
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
	listing_start(&l);
	for (size_t i = 0; i < sel.n; i++)
		list_model(&l, sel.items[i].model, &ctx);
	listing_end(&l, 1);
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
				opt_wrap(
				    stdout,
				    "\n'list' also accepts every 'run' option (without effect), "
				    "so a run's command line can be listed as it is.",
				    0, 0, opt_help_width(stdout));
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
