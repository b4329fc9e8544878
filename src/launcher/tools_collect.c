/*
 * A workload's tools after its run (rm_launcher_tools_collect in rm/launcher.h): the status
 * the tools' wrapper left (src/workload/render_tools.c) and the outputs it gathered, through
 * the launcher's fetch. The outputs are extracted by libarchive with its secure options (no
 * "..", no absolute names, no writing through symlinks): what the container lists cannot
 * reach outside dest.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rm/engine.h"
#include "rm/tar.h"
#include "rm/launcher.h"
#include "rm/util.h"

#define STATUS_MAX  ((size_t)64 << 10)
#define OUTPUTS_MAX ((size_t)8 << 30)

void rm_tools_verdict_release(rm_tools_verdict *v)
{
	if (!v)
		return;
	free(v->failure);
	free(v->outputs);
	memset(v, 0, sizeof(*v));
	v->model_rc = -1;
}

/* path out of the workload as a tar in a temporary file (unlinked; fd at its start). */
static int fetch_tar(const rm_launcher *l, rm_job *job, const char *path, size_t max, int *fd,
		     rm_error *err)
{
	char *tmp = NULL;
	int ret = -1;

	*fd = rm_make_temp(&tmp, err);
	if (*fd < 0)
		goto out;
	if (l->ops->fetch(l->state, job, path, *fd, max, err) == 0 && lseek(*fd, 0, SEEK_SET) == 0)
		ret = 0;
out:
	if (tmp)
		unlink(tmp);
	free(tmp);
	if (ret < 0 && *fd >= 0) {
		close(*fd);
		*fd = -1;
	}
	return ret;
}

/* The status file's text, or NULL (err kind RM_ERR_INPUT: there is none). */
static char *read_status(const rm_launcher *l, rm_job *job, rm_error *err)
{
	char *tmp = NULL, *text = NULL;
	int tar = -1, out = -1;

	if (fetch_tar(l, job, RM_TOOLS_STATUS, STATUS_MAX * 2, &tar, err) < 0)
		return NULL;
	out = rm_make_temp(&tmp, err);
	if (out >= 0 && rm_tar_extract_one(tar, out, STATUS_MAX, err) == 0 &&
	    rm_read_file(tmp, STATUS_MAX, &text, NULL, err) != 0) {
		free(text);
		text = NULL;
	}
	close(tar);
	if (out >= 0)
		close(out);
	if (tmp)
		unlink(tmp);
	free(tmp);
	return text;
}

/* "pre K RC", "model RC", "post K RC": the first line of each kind counts. */
static void parse_status(const rm_workload *w, const char *text, rm_tools_verdict *v)
{
	const rm_tool_plan *p = &w->tools;
	const char *line = text;

	v->ran = 1;
	while (line && *line) {
		char what[8];
		unsigned long k = 0;
		long rc = 0;
		int post;

		if (sscanf(line, "model %ld", &rc) == 1) {
			v->model_rc = rc;
		} else if (!strncmp(line, "gathered", 8)) {
			v->gathered = 1;
		} else if (sscanf(line, "%7s %lu %ld", what, &k, &rc) == 3 && !v->failure &&
			   ((post = !strcmp(what, "post")) || !strcmp(what, "pre")) &&
			   k < (post ? p->n_post : p->n_pre)) {
			char *label = rm_workload_tool_script_label(p, post, (size_t)k);
			v->failure = rm_xasprintf("%s exited with code %ld (its output is in the "
						  "log)%s",
						  label, rc, post ? "" : "; the model did not run");
			v->post = post;
			free(label);
		}
		line = strchr(line, '\n');
		line = line ? line + 1 : NULL;
	}
}

/* Whether folder path holds anything (it is removed when it does not). */
static int has_entries(const char *path)
{
	return rmdir(path) != 0;
}

int rm_launcher_tools_collect(const rm_launcher *l, rm_job *job, const rm_workload *w,
			      const char *dest, rm_tools_verdict *v, rm_error *err)
{
	char *text;
	int tar = -1, ret = 0;

	memset(v, 0, sizeof(*v));
	v->model_rc = -1;
	if (rm_tool_plan_empty(&w->tools))
		return 0;
	text = read_status(l, job, err);
	if (!text) {
		/* no status: the wrapper did not finish (a timeout, a signal), or this launcher
		 * cannot reach the workload's files */
		if (err->kind != RM_ERR_INPUT)
			return -1;
		rm_error_clear(err);
	} else {
		parse_status(w, text, v);
		free(text);
	}
	/* Outputs only when the wrapper finished gathering them: a run stopped (a timeout, a
	 * signal) gives none (docs/tools.md), never a part announced as the whole. */
	if (!w->tools.n_outputs || !v->gathered)
		return 0;
	if (fetch_tar(l, job, RM_TOOLS_OUTPUTS, OUTPUTS_MAX, &tar, err) < 0) {
		if (err->kind == RM_ERR_INPUT) { /* nothing gathered */
			rm_error_clear(err);
			return 0;
		}
		return rm_error_wrap(err, "the tools' outputs");
	}
	/* The tar holds "tool_outputs/<tool>/...": its top folder is dropped. */
	if (rm_tar_extract_dir(tar, dest, 1, NULL, err) < 0) /* no device nodes, FIFOs, sockets */
		ret = rm_error_wrap(err, "the tools' outputs");
	else if (has_entries(dest))
		v->outputs = rm_xstrdup(dest);
	close(tar);
	return ret;
}
