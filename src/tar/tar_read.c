/*
 * Reading tar archives through libarchive (see rm/engine.h): one file out of an archive, or a
 * folder extracted with libarchive's safety checks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "rm/tar.h"
#include "rm/util.h"
#include "tar_internal.h"

static struct archive *tar_reader(int in_fd, rm_error *err)
{
	struct archive *a = archive_read_new();
	if (!a) {
		rm_error_set(err, RM_ERR_INTERNAL, "cannot create a tar reader");
		return NULL;
	}
	archive_read_support_format_tar(a);
	if (archive_read_open_fd(a, in_fd, COPY_BLOCK) != ARCHIVE_OK) {
		rm_tar_fail(a, err, "cannot read the tar archive");
		archive_read_free(a);
		return NULL;
	}
	return a;
}

int rm_tar_extract_one(int in_fd, int out_fd, size_t max_bytes, rm_error *err)
{
	int ret = -1, found = 0, r;
	struct archive_entry *e;
	char *buf = NULL, *other = NULL; /* what the archive held instead of a file */
	struct archive *a = tar_reader(in_fd, err);

	if (!a)
		return -1;
	buf = rm_xmalloc(COPY_BLOCK);
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
		if (archive_entry_filetype(e) != AE_IFREG) {
			const char *name = archive_entry_pathname(e),
				   *to = archive_entry_symlink(e);
			if (!other && archive_entry_filetype(e) == AE_IFLNK)
				other = rm_xasprintf("'%s' is a symbolic link (to '%s'), not a "
						     "file: it is not followed",
						     name ? name : "?", to ? to : "?");
			else if (!other && archive_entry_filetype(e) == AE_IFDIR)
				other = rm_xasprintf("'%.*s' is a folder, not a file",
						     name ? (int)strcspn(name, "/") : 1,
						     name ? name : "?");
			continue;
		}
		if (found) {
			rm_error_set(err, RM_ERR_INPUT,
				     "the archive holds more than one file (a folder was given?)");
			goto out;
		}
		found = 1;
		if (archive_entry_size_is_set(e) && archive_entry_size(e) >= 0 &&
		    (uint64_t)archive_entry_size(e) > max_bytes) {
			rm_error_set(err, RM_ERR_INPUT,
				     "'%s' is %lld bytes, over the limit of %zu bytes (%zu MiB)",
				     archive_entry_pathname(e), (long long)archive_entry_size(e),
				     max_bytes, max_bytes >> 20);
			goto out;
		}
		size_t total = 0;
		la_ssize_t n;
		while ((n = archive_read_data(a, buf, COPY_BLOCK)) > 0) {
			total += (size_t)n;
			if (total > max_bytes) {
				rm_error_set(err, RM_ERR_INPUT,
					     "'%s' is over the limit of %zu bytes (%zu MiB)",
					     archive_entry_pathname(e), max_bytes, max_bytes >> 20);
				goto out;
			}
			if (rm_write_all(out_fd, buf, (size_t)n) < 0) {
				rm_error_sys(err, RM_ERR_IO, errno, "cannot write '%s'",
					     archive_entry_pathname(e));
				goto out;
			}
		}
		if (n < 0) {
			rm_tar_fail(a, err, "cannot read the tar archive");
			goto out;
		}
	}
	if (r != ARCHIVE_EOF) {
		rm_tar_fail(a, err, "cannot read the tar archive");
		goto out;
	}
	if (!found) {
		rm_error_set(err, RM_ERR_INPUT, "%s",
			     other ? other : "the archive holds no regular file");
		goto out;
	}
	ret = 0;
out:
	free(other);
	free(buf);
	archive_read_free(a);
	return ret;
}

/* Drops the first strip components of a path; NULL when nothing is left. With strip 0 the
 * name is left alone, so libarchive's checks see absolute names as they are. */
static const char *strip_path(const char *p, int strip)
{
	if (strip <= 0)
		return *p ? p : NULL;
	for (int i = 0; i < strip; i++) {
		p += strspn(p, "/");
		const char *slash = strchr(p, '/');
		if (!slash)
			return NULL;
		p = slash + 1;
	}
	p += strspn(p, "/");
	return *p ? p : NULL;
}

/* Writes one entry (its header, data and finish) to the disk writer. */
static int extract_entry(struct archive *a, struct archive *out, struct archive_entry *e,
			 rm_error *err)
{
	if (archive_write_header(out, e) < ARCHIVE_WARN)
		return rm_tar_fail(out, err, "cannot extract");
	if (archive_entry_size(e) > 0) {
		const void *block;
		size_t size;
		la_int64_t off;
		int rr;
		while ((rr = archive_read_data_block(a, &block, &size, &off)) == ARCHIVE_OK)
			if (archive_write_data_block(out, block, size, off) < ARCHIVE_WARN)
				return rm_tar_fail(out, err, "cannot extract");
		if (rr != ARCHIVE_EOF)
			return rm_tar_fail(a, err, "cannot read the tar archive");
	}
	if (archive_write_finish_entry(out) < ARCHIVE_WARN)
		return rm_tar_fail(out, err, "cannot extract");
	return 0;
}

/* A device node, FIFO or socket: never made on the host (a block device node readable by
 * everyone is a disk anyone can read). */
static int special_file(struct archive_entry *e)
{
	mode_t t = archive_entry_filetype(e);
	return t == AE_IFCHR || t == AE_IFBLK || t == AE_IFIFO || t == AE_IFSOCK;
}

static int name_in(char *const *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], name))
			return 1;
	return 0;
}

/* Every entry of a below the working folder, names stripped of strip leading parts; the
 * special files (and hard links to them) are left out, their names pushed on *left_out. */
static int extract_entries(struct archive *a, struct archive *out, int strip, char ***left_out,
			   size_t *n_left, rm_error *err)
{
	struct archive_entry *e;
	int r;

	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
		const char *name = strip_path(archive_entry_pathname(e), strip);
		if (!name)
			continue;
		char *copy = rm_xstrdup(name);
		archive_entry_set_pathname(e, copy);
		free(copy);
		const char *link = archive_entry_hardlink(e);
		if (link) {
			const char *l = strip_path(link, strip);
			if (!l)
				continue;
			copy = rm_xstrdup(l);
			archive_entry_set_hardlink(e, copy);
			free(copy);
			if (name_in(*left_out, *n_left, archive_entry_hardlink(e))) {
				*left_out =
				    rm_strv_push(*left_out, n_left, archive_entry_pathname(e));
				continue;
			}
		}
		if (special_file(e)) {
			*left_out = rm_strv_push(*left_out, n_left, archive_entry_pathname(e));
			continue;
		}
		if (extract_entry(a, out, e, err) < 0)
			return -1;
	}
	if (r != ARCHIVE_EOF)
		return rm_tar_fail(a, err, "cannot read the tar archive");
	return 0;
}

int rm_tar_extract_dir(int in_fd, const char *dest_dir, int strip, size_t *skipped, rm_error *err)
{
	int ret = -1, cwd = -1, moved = 0;
	struct archive *a = NULL, *out = NULL;
	char **left_out = NULL; /* names of the special files left out (hard links to them too) */
	size_t n_left = 0;

	/*
	 * libarchive extracts relative to the working directory, and its SECURE_* checks
	 * (no "..", no absolute names, no writing through symlinks) are only meaningful for
	 * relative names: prefixing dest_dir to every name would make them absolute. So we
	 * chdir into dest_dir for the extraction and come back; this makes the call unsafe
	 * to run while another thread relies on the working directory.
	 */
	if (mkdir(dest_dir, 0755) != 0 && errno != EEXIST) {
		rm_error_sys(err, RM_ERR_IO, errno, "cannot create '%s'", dest_dir);
		goto out;
	}
	cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cwd < 0) {
		rm_error_sys(err, RM_ERR_IO, errno, "cannot open the working folder");
		goto out;
	}
	a = tar_reader(in_fd, err);
	if (!a)
		goto out;
	out = archive_write_disk_new();
	archive_write_disk_set_options(out, ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_SECURE_NODOTDOT |
						ARCHIVE_EXTRACT_SECURE_SYMLINKS |
						ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS);
	if (chdir(dest_dir) != 0) {
		rm_error_sys(err, RM_ERR_IO, errno, "cannot enter '%s'", dest_dir);
		goto out;
	}
	moved = 1;
	if (extract_entries(a, out, strip, &left_out, &n_left, err) < 0)
		goto out;
	/* Folder times and modes are applied at close. */
	if (archive_write_close(out) != ARCHIVE_OK) {
		rm_tar_fail(out, err, "cannot extract");
		goto out;
	}
	ret = 0;
	if (skipped)
		*skipped = n_left;
out:
	rm_strv_free(left_out);
	if (out)
		archive_write_free(out);
	if (a)
		archive_read_free(a);
	if (moved && fchdir(cwd) != 0 && ret == 0)
		ret = rm_error_sys(err, RM_ERR_IO, errno, "cannot return to the working folder");
	if (cwd >= 0)
		close(cwd);
	if (ret < 0)
		rm_error_wrap(err, "extracting into '%s'", dest_dir);
	return ret;
}
