/*
 * Shared by tar.c (writing archives) and tar_read.c (reading them).
 */
#ifndef RM_ENGINE_TAR_INTERNAL_H
#define RM_ENGINE_TAR_INTERNAL_H

#include <archive.h>

#include "rm/util.h"

#define COPY_BLOCK (64 * 1024)

/* Fills err with libarchive's message about a, prefixed with what; returns -1. */
int rm_tar_fail(struct archive *a, rm_error *err, const char *what);

#endif
