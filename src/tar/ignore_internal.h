/*
 * What tar.c needs from ignore.c beyond the public rm_ignore functions in rm/engine.h.
 */
#ifndef RM_ENGINE_IGNORE_INTERNAL_H
#define RM_ENGINE_IGNORE_INTERNAL_H

#include "rm/tar.h"

/* Appends one .dockerignore line (same processing as the file's lines: comments, blanks,
 * "!", cleaning). Returns 0, or -1 for the illegal lone "!". */
int rm_ignore_add(rm_ignore *ig, const char *line);

/* 1 when some "!" exception could re-include a path below the directory dir_relpath, so an
 * excluded directory must still be walked (Docker does the same, a little more narrowly). */
int rm_ignore_may_reinclude(const rm_ignore *ig, const char *dir_relpath);

/* Go's filepath.Clean for '/'-separated paths; returns a new string. */
char *rm_clean_path(const char *p, size_t len);

#endif
