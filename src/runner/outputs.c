/*
 * Every file a run will write, resolved and checked before the first build: a clash found
 * at the end of a night (-o perf_<model>.csv of a model of the run, a model named "summary"
 * with --repeat, --html over perf.csv, another tool's perf_<model>.csv) would cost the
 * results of the whole run, or the report, when the benchmark itself went well.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "rm/report.h"
#include "rm/util.h"

/* What a log's name adds to the model's: ".<run id>.r<repeat>.build.log" at most, the run id
 * "YYYYMMDDTHHMMSSZ-<pid>-<hex>" being under 40 characters. */
#define LOG_NAME_EXTRA (1 + 40 + 9 + 10)

/* One file of the run: its resolved path, the path as given, and what it is. */
struct file {
	char *abs;
	char *given;
	char *what;
	int metrics; /* a perf_<model>.csv: models whose names make one file name share it */
};

struct files {
	struct file *v;
	size_t n;
};

/* path without its last component, and that component (trailing '/' ignored). */
static void split(const char *path, char **dir, char **base)
{
	size_t len = strlen(path);
	const char *slash;

	while (len > 1 && path[len - 1] == '/')
		len--;
	slash = memrchr(path, '/', len);
	if (!slash) {
		*dir = rm_xstrdup(".");
		*base = rm_xstrndup(path, len);
	} else {
		*dir = slash == path ? rm_xstrdup("/") : rm_xstrndup(path, (size_t)(slash - path));
		*base = rm_xstrndup(slash + 1, len - (size_t)(slash + 1 - path));
	}
}

/* An absolute path with "." and ".." and the symlinks of every part that exists resolved:
 * two names of one file resolve alike. A part that does not exist yet is kept as named. */
static char *outputs_resolve(const char *path)
{
	char *rp = realpath(path, NULL), *dir, *base, *rdir, *out;

	if (rp)
		return rp;
	split(path, &dir, &base);
	if (!strcmp(dir, path) || !*base) { /* "/" or "" cannot be split further */
		free(dir);
		free(base);
		return rm_xstrdup(path);
	}
	rdir = outputs_resolve(dir);
	if (!strcmp(base, ".")) {
		out = rdir;
		rdir = NULL;
	} else if (!strcmp(base, "..")) {
		char *slash = strrchr(rdir, '/');
		out = slash && slash != rdir ? rm_xstrndup(rdir, (size_t)(slash - rdir))
					     : rm_xstrdup("/");
	} else {
		out = rm_xasprintf("%s%s%s", rdir, strcmp(rdir, "/") ? "/" : "", base);
	}
	free(rdir);
	free(dir);
	free(base);
	return out;
}

/* Adds a file; a second name for a file already in the list is the clash. */
static int add(struct files *fs, const char *path, const char *what, int metrics, rm_error *err)
{
	char *abs = outputs_resolve(path);

	for (size_t i = 0; i < fs->n; i++) {
		if (strcmp(fs->v[i].abs, abs))
			continue;
		if (metrics && fs->v[i].metrics) { /* rows name their model */
			free(abs);
			return 0;
		}
		if (strcmp(fs->v[i].given, path))
			rm_error_set(err, RM_ERR_IO,
				     "output clash: '%s' (%s) and '%s' (%s) are one file; give one "
				     "of them another name (nothing was built)",
				     fs->v[i].given, fs->v[i].what, path, what);
		else
			rm_error_set(err, RM_ERR_IO,
				     "output clash: '%s' would be both %s and %s; give one of them "
				     "another name (nothing was built)",
				     path, fs->v[i].what, what);
		free(abs);
		return -1;
	}
	fs->v = rm_xrealloc(fs->v, (fs->n + 1) * sizeof(*fs->v));
	fs->v[fs->n].abs = abs;
	fs->v[fs->n].given = rm_xstrdup(path);
	fs->v[fs->n].what = rm_xstrdup(what);
	fs->v[fs->n].metrics = metrics;
	fs->n++;
	return 0;
}

static void files_release(struct files *fs)
{
	for (size_t i = 0; i < fs->n; i++) {
		free(fs->v[i].abs);
		free(fs->v[i].given);
		free(fs->v[i].what);
	}
	free(fs->v);
}

/* A file the run writes at the end (the CI outputs): not a folder, and its folder (or the
 * nearest one that exists) writable. */
static int writable_later(const char *path, const char *what, rm_error *err)
{
	struct stat st;
	char *dir, *base;
	int ret = 0;

	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return rm_error_set(err, RM_ERR_IO, "%s '%s' is a folder; name a file",
					    what, path);
		return 0;
	}
	split(path, &dir, &base);
	while (stat(dir, &st) != 0 && strcmp(dir, "/") && strcmp(dir, ".")) {
		char *up, *b;
		split(dir, &up, &b);
		free(b);
		free(dir);
		dir = up;
	}
	if (access(dir, W_OK | X_OK) != 0)
		ret = rm_error_sys(err, RM_ERR_IO, errno, "%s '%s': cannot write in '%s'", what,
				   path, dir);
	free(dir);
	free(base);
	return ret;
}

/* An output named like one of a model's log links (<log dir>/<model>[_<stem>][.rN].live.log
 * or .build.log) would be replaced by the link. */
static int log_link_clash(const char *abs_log_dir, const struct file *f, const char *const *safe,
			  size_t n, rm_error *err)
{
	char *dir, *base;
	int ret = 0;

	split(f->abs, &dir, &base);
	if (!strcmp(dir, abs_log_dir) &&
	    (rm_ends_with(base, ".live.log") || rm_ends_with(base, ".build.log")))
		for (size_t i = 0; i < n && !ret; i++) {
			size_t l = strlen(safe[i]);
			if (!strncmp(base, safe[i], l) && strchr("._", base[l]))
				ret = rm_error_set(
				    err, RM_ERR_IO,
				    "output clash: %s '%s' has the name of a log of model '%s' in "
				    "the log folder (the run replaces it with a link to its log); "
				    "give it another name (nothing was built)",
				    f->what, f->given, safe[i]);
		}
	free(dir);
	free(base);
	return ret;
}

/* A model's name as file names: not the same as another model's ('a/b' and 'a_b' make one
 * file name: their logs, images and model dirs would be one and the same, the second run
 * failing half-way, "it exists already"), and short enough for its logs' names. */
static int model_name_ok(const rm_run_opts *o, const char *const *models, char *const *safe,
			 size_t i, long name_max, rm_error *err)
{
	for (size_t j = 0; j < i; j++)
		if (!strcmp(safe[i], safe[j]) && strcmp(models[i], models[j]))
			return rm_error_set(
			    err, RM_ERR_IO,
			    "models '%s' and '%s' would share their log files and "
			    "image tag ('%s'): select one of them per run, or rename "
			    "one (nothing was built)",
			    models[j], models[i], safe[i]);
	/* its logs are "<model>.<run id>[.rN].live.log" and .build.log (and ".tools"): a name
	 * the file system cannot hold fails the run half-way, after its build */
	if (strlen(safe[i]) + LOG_NAME_EXTRA > (size_t)name_max)
		return rm_error_set(err, RM_ERR_IO,
				    "model '%.40s...' (%zu characters) makes log file names longer "
				    "than the %ld bytes a file name may have in '%s': give it a "
				    "shorter name (nothing was built)",
				    models[i], strlen(models[i]), name_max,
				    o->log_dir ? o->log_dir : ".");
	return 0;
}

int rm_runner_check_outputs(const rm_run_opts *o, const char *const *models, size_t n_models,
			    long repeat, const rm_run_output *extra, size_t n_extra, rm_error *err)
{
	struct files fs = {NULL, 0};
	char **safe = rm_xcalloc(n_models + 1, sizeof(*safe));
	char *abs_log_dir = outputs_resolve(o->log_dir ? o->log_dir : ".");
	long name_max =
	    pathconf(o->log_dir && access(o->log_dir, F_OK) == 0 ? o->log_dir : ".", _PC_NAME_MAX);
	int ret = -1;

	if (name_max <= 0)
		name_max = 255;
	if (add(&fs, o->output, "the perf CSV (-o)", 0, err) < 0)
		goto out;
	if (repeat > 1) {
		char *p = rm_perf_sibling(o->output, "perf_summary.csv");
		int rc = add(&fs, p, "the summary of the repeated runs (perf_summary.csv)", 0, err);
		free(p);
		if (rc < 0 || rm_summary_check(o->output, err) < 0)
			goto out;
	}
	for (size_t i = 0; i < n_models; i++) {
		char *name, *p, *what;
		int rc;

		safe[i] = rm_file_safe(models[i]);
		if (model_name_ok(o, models, safe, i, name_max, err) < 0)
			goto out;
		name = rm_xasprintf("perf_%s.csv", safe[i]);
		p = rm_perf_sibling(o->output, name);
		what = rm_xasprintf("the metrics of model '%s' (perf_<model>.csv)", models[i]);
		rc = add(&fs, p, what, 1, err);
		free(what);
		free(p);
		free(name);
		if (rc < 0 || rm_metrics_check(o->output, models[i], err) < 0)
			goto out;
	}
	for (size_t i = 0; i < n_extra; i++) {
		if (!extra[i].path)
			continue;
		if (add(&fs, extra[i].path, extra[i].what, 0, err) < 0 ||
		    writable_later(extra[i].path, extra[i].what, err) < 0)
			goto out;
	}
	for (size_t i = 0; i < fs.n; i++)
		if (log_link_clash(abs_log_dir, &fs.v[i], (const char *const *)safe, n_models,
				   err) < 0)
			goto out;
	ret = 0;
out:
	for (size_t i = 0; i < n_models; i++)
		free(safe[i]);
	free(safe);
	free(abs_log_dir);
	files_release(&fs);
	return ret;
}
