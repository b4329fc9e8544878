/*
 * The run's archive (src/results/archive.c): one tar.gz of its logs, CSVs and outputs.
 *
 * One of the outputs a CI job reads after a run (rm/suite.h's rm_nightly_finish makes them
 * all at the end of a run). Everything works from the run's perf.csv, so it can also be run
 * later on files alone (run_models report ci).
 *
 * The writer writes to a temporary file beside the target and renames it into place: a
 * failed or interrupted write never leaves a half file for CI to pick up.
 */
#ifndef RM_ARCHIVE_H
#define RM_ARCHIVE_H

#include <stddef.h>

#include "rm/util.h"

/*
 * Writes a gzip-compressed tar (libarchive) of the given files and folders (folders with
 * everything under them), each stored under top/ by its path when that is relative and has
 * no "..", else by its base name. A path that does not exist is an error naming it. With an
 * active mask (the run's secrets), every regular file is stored masked, whoever wrote it:
 * the archive is what a CI job uploads.
 */
int rm_archive_write(const char *out_path, const char *top, const char *const *paths, size_t n,
		     const rm_mask *mask, rm_error *err);

#endif
