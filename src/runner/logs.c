/*
 * Log file names and their creation. Every run writes its own files, named with its run id,
 * so that the next run or a concurrent run of the same model never overwrites or shares
 * them; "<model>.live.log" and "<model>.build.log" stay as the stable names users expect,
 * as symbolic links to the latest run's files. A file is never opened through a symlink
 * (one planted in the log folder could point anywhere) and never over an existing file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "rm/config.h"
#include "rm/util.h"

char *rm_runner__log_name(const struct run *r, const rm_model *m)
{
	char *name = r->point_file ? rm_xasprintf("%s.%s", m->name, r->point_file)
				   : rm_xstrdup(m->name),
	     *safe = rm_file_safe(name);

	free(name);
	return safe;
}

/* A sweep's point, for names: its label made file-safe ("batch_size=8,precision=bf16"), or
 * "p" and its tag when the label is long; the tag alone for container names. */
void rm_runner__point_names(struct run *r)
{
	char *label, hex[65];
	rm_hash *h;

	r->point_tag[0] = '\0';
	if (!r->o->point || !r->o->point->n)
		return;
	label = rm_config_label(r->o->point);
	h = rm_hash_new();
	rm_hash_update(h, label, strlen(label));
	rm_hash_final_hex(h, hex);
	memcpy(r->point_tag, hex, sizeof(r->point_tag) - 1);
	r->point_tag[sizeof(r->point_tag) - 1] = '\0';
	if (strlen(label) > 96) {
		free(label);
		label = rm_xasprintf("p%s", r->point_tag);
	}
	/* "batch_size=8.precision=bf16": no comma in a file name */
	for (char *c = label; *c; c++)
		if (*c == ',')
			*c = '.';
	r->point_file = rm_file_safe(label);
	free(label);
}

char *rm_runner__log_path(const struct run *r, const char *base, const char *suffix)
{
	return rm_xasprintf("%s/%s.%s%s", r->o->log_dir, base, r->run_id, suffix);
}

char *rm_runner__log_link(const struct run *r, const char *base, const char *suffix)
{
	return rm_xasprintf("%s/%s%s", r->o->log_dir, base, suffix);
}

/* Points link at the file path (same folder): a temporary link renamed over it, so what
 * stands at link (an older regular file, a planted symlink) is replaced, never followed. */
static void point_link(const struct run *r, const char *path, const char *link)
{
	const char *target = strrchr(path, '/');
	char *tmp = rm_xasprintf("%s.%s.tmp", link, r->run_id);

	target = target ? target + 1 : path;
	unlink(tmp);
	if (symlink(target, tmp) != 0 || rename(tmp, link) != 0) {
		rm_warn_sys(errno, "cannot point '%s' at '%s' (the log is there all the same)",
			    link, target);
		unlink(tmp);
	}
	free(tmp);
}

FILE *rm_runner__log_create(const struct run *r, const char *path, const char *link, rm_error *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	FILE *f;

	if (fd < 0) {
		if (errno == EEXIST)
			rm_error_set(err, RM_ERR_IO,
				     "cannot create the log '%s': it exists already (is a symlink "
				     "planted there?)",
				     path);
		else
			rm_error_sys(err, RM_ERR_IO, errno, "cannot create the log '%s'", path);
		return NULL;
	}
	f = fdopen(fd, "w");
	if (!f) {
		rm_error_sys(err, RM_ERR_IO, errno, "cannot write '%s'", path);
		close(fd);
		unlink(path);
		return NULL;
	}
	if (link)
		point_link(r, path, link);
	return f;
}
