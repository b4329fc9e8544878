/*
 * Where a CI output goes (src/results/files.c), shared by the text outputs and the archive.
 * An output named by the user may be a regular file (replaced through a temporary file beside
 * it and a rename: a reader never sees half a file), a symbolic link (written through: the
 * file it points to is replaced, the link stays), or something that is no regular file (a
 * FIFO, /dev/stdout, a terminal): written through directly, never replaced by a file.
 */
#ifndef RM_RESULTS_FILES_INTERNAL_H
#define RM_RESULTS_FILES_INTERNAL_H

#include "rm/util.h"

/*
 * Opens the output path. Returns 0 and either *fd >= 0, a descriptor to write the whole
 * output to directly (a FIFO with a reader, a character device), with *final NULL; or *fd -1
 * and *final the regular file to replace (path, or the file a symlink points to; caller
 * frees). Returns -1 with err for a dangling symlink, a FIFO nobody reads, a folder.
 */
int rm_results__output_open(const char *path, char **final, int *fd, rm_error *err);

#endif
