/*
 * File-tree fixtures shared by the unit tests: temporary folders, files with folders made as
 * needed, and recursive removal.
 */
#ifndef RM_TESTFS_H
#define RM_TESTFS_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "rm/util.h"

static int tfs_remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static inline void tfs_rm_tree(const char *dir)
{
	nftw(dir, tfs_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static inline void tfs_mkdirs(const char *path)
{
	char *p = rm_xstrdup(path);

	for (char *s = p + 1; *s; s++) {
		if (*s == '/') {
			*s = '\0';
			mkdir(p, 0755);
			*s = '/';
		}
	}
	mkdir(p, 0755);
	free(p);
}

/* Writes root/rel with text, making the folders on the way. */
static inline void tfs_put(const char *root, const char *rel, const char *text)
{
	char *file = rm_xasprintf("%s/%s", root, rel);
	char *dir = rm_xstrdup(file);
	FILE *f;

	*strrchr(dir, '/') = '\0';
	tfs_mkdirs(dir);
	f = fopen(file, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	free(dir);
	free(file);
}

/* A new empty folder under /tmp; the caller removes it with tfs_rm_tree and frees it. */
static inline char *tfs_tmpdir(const char *name)
{
	char *t = rm_xasprintf("/tmp/rm-test-%s-XXXXXX", name);
	if (!mkdtemp(t)) {
		perror("mkdtemp");
		abort();
	}
	return t;
}

#endif
