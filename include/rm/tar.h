/*
 * Tar archives through libarchive: the build context for POST /build (with .dockerignore),
 * the scripts folder for PUT /containers/{id}/archive, and reading files out of GET
 * /containers/{id}/archive. The engine module streams them; the launchers and the runner
 * make and read them.
 *
 * All writers write an uncompressed ustar/pax stream to a file descriptor (the caller
 * streams that file to the engine), so memory use does not depend on the context size.
 * Errors follow rm/util.h.
 */
#ifndef RM_TAR_H
#define RM_TAR_H

#include <stddef.h>

#include "rm/util.h"

/*
 * Writes the build context: every file under context_dir not excluded by its
 * .dockerignore (Docker's rules: Go filepath.Match patterns, "**", "!" exceptions, leading
 * "/" and "./" ignored, last match wins), with paths relative to context_dir. The Dockerfile
 * is always included: when it lies inside the context its relative path is used (even if
 * .dockerignore excludes it), otherwise it is added as ".run_models.Dockerfile".
 * *dockerfile_name receives the name to pass as ?dockerfile= (caller frees).
 * Symlinks are stored as symlinks; sockets and devices are skipped.
 */
int rm_tar_build_context(const char *context_dir, const char *dockerfile, int out_fd,
			 char **dockerfile_name, rm_error *err);

/*
 * Feeds h with what rm_tar_build_context would pack, by metadata only (each entry's name,
 * mode, size, mtime in ns and link target; same .dockerignore rules), without reading or
 * writing file contents: a cheap "has the context changed?" for skipping builds.
 */
struct rm_hash;
int rm_tar_context_fingerprint(const char *context_dir, const char *dockerfile, struct rm_hash *h,
			       char **dockerfile_name, rm_error *err);

/*
 * Writes the tree at src (a folder, or a single file) under the name prefix (e.g.
 * "myworkspace/smoke"; intermediate folders are added), for PUT /archive at path "/".
 * Files keep their mode; owner set to root.
 */
int rm_tar_tree(const char *src, const char *prefix, int out_fd, rm_error *err);

/* A tar holding one entry: the symbolic link name -> target (what GET /archive of a link
 * gives on Docker; the engine client makes it where Podman follows the link). */
int rm_tar_symlink(const char *name, const char *target, int out_fd, rm_error *err);

/*
 * Reads a tar stream from in_fd and extracts the single regular file it holds (the GET
 * /archive of a file) to out_fd, refusing more than max_bytes.
 */
int rm_tar_extract_one(int in_fd, int out_fd, size_t max_bytes, rm_error *err);

/*
 * Extracts a tar stream from in_fd below dest_dir, securely (no "..", no absolute paths, no
 * writing through symlinks: libarchive's ARCHIVE_EXTRACT_SECURE_* flags). strip removes the
 * given number of leading path components. Only files, folders and symlinks are made:
 * device nodes, FIFOs and sockets (and hard links to them) are left out, their number in
 * *skipped (may be NULL).
 */
int rm_tar_extract_dir(int in_fd, const char *dest_dir, int strip, size_t *skipped, rm_error *err);

/* .dockerignore matching, exposed for unit tests. Patterns are the file's lines. */
typedef struct rm_ignore rm_ignore;
int rm_ignore_load(rm_ignore **out, const char *dockerignore_path,
		   rm_error *err); /* missing file = empty */
rm_ignore *rm_ignore_from_lines(const char *const *lines, size_t n);
int rm_ignore_match(const rm_ignore *ig, const char *relpath); /* 1 = excluded */
void rm_ignore_free(rm_ignore *ig);

#endif
