/*
 * run_models completion bash: the bash completion script (generated from the option table).
 * run_models completion tags: the model names and tags of the folder's models.json, one a
 * line, for that script's --tags (quiet: nothing at all when there is no registry here).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "options.h"
#include "rm/registry.h"
#include "rm/util.h"

static int seen(char **words, size_t n, const char *w)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(words[i], w))
			return 1;
	return 0;
}

/* Each name and tag once, in the registry's order. */
static void print_tags(void)
{
	rm_registry reg = {0};
	rm_registry_opts ro = RM_REGISTRY_OPTS_INIT;
	rm_error err = RM_ERROR_INIT;
	char **words = NULL;
	size_t n = 0;
	rm_buf quiet = RM_BUF_INIT((size_t)1 << 20); /* the registry's warnings, dropped */

	rm_log_capture(&quiet);
	if (rm_registry_load_opts(&reg, ".", &ro, &err) < 0)
		goto out;
	for (size_t i = 0; i < reg.n; i++) {
		const rm_model *m = &reg.models[i];
		for (size_t t = 0; t <= m->n_tags; t++) {
			const char *w = t == 0 ? m->name : m->tags[t - 1];
			if (seen(words, n, w))
				continue;
			words = rm_xrealloc(words, (n + 1) * sizeof(*words));
			words[n++] = (char *)w;
			puts(w);
		}
	}
out:
	rm_log_capture(NULL);
	rm_buf_release(&quiet);
	free(words);
	rm_registry_release(&reg);
}

int cmd_completion(int argc, char **argv, rm_error *err)
{
	struct cli cli;
	struct opt_list pos = {0};
	int md, rc, ret = -1;

	cli_init(&cli);
	rc = opt_parse(CMD_COMPLETION, &cli, argc, argv, &pos, &md, err);
	if (rc != 0) {
		if (rc == 1) {
			opt_help(
			    stdout, CMD_COMPLETION,
			    "usage: run_models completion bash|tags\n\n'bash' prints the bash "
			    "completion script (the install puts it where bash-completion "
			    "finds it; or: source <(run_models completion bash)); 'tags' prints "
			    "the model names and tags of the folder's models.json.",
			    md);
			ret = RM_EXIT_OK;
		}
		goto out;
	}
	if (pos.n != 1 || (strcmp(pos.v[0], "bash") && strcmp(pos.v[0], "tags"))) {
		rm_error_set(err, RM_ERR_USAGE, "completion takes 'bash' or 'tags' (see --help)");
		goto out;
	}
	if (!strcmp(pos.v[0], "bash"))
		opt_bash_completion(stdout);
	else
		print_tags();
	ret = RM_EXIT_OK;
out:
	cli_release(&cli);
	opt_list_release(&pos);
	return ret;
}
