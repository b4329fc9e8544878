/* The job's artefact: one tar.gz written by libarchive, folders walked by libarchive's
 * disk reader. */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files_internal.h"
#include "rm/archive.h"
#include "rm/util.h"

/* The name a path gets inside the archive (below top/). */
static char *stored_name(const char *top, const char *path)
{
	const char *p = path;
	int safe = path[0] != '/';

	while (rm_starts_with(p, "./"))
		p += 2;
	for (const char *s = p; safe && *s; s++)
		if ((s == p || s[-1] == '/') && rm_starts_with(s, "..") && (s[2] == '/' || !s[2]))
			safe = 0;
	if (!safe) {
		const char *slash;
		char *trim = rm_xstrdup(path);
		size_t l = strlen(trim);
		while (l > 1 && trim[l - 1] == '/')
			trim[--l] = '\0';
		slash = strrchr(trim, '/');
		char *out = rm_xasprintf("%s/%s", top, slash ? slash + 1 : trim);
		free(trim);
		return out;
	}
	return rm_xasprintf("%s/%s", top, p);
}

static int archive_copy_data(struct archive *disk, struct archive *a, const char *path,
			     rm_error *err)
{
	const void *buf;
	size_t size;
	la_int64_t offset;
	int r;

	while ((r = archive_read_data_block(disk, &buf, &size, &offset)) == ARCHIVE_OK) {
		if (archive_write_data(a, buf, size) < 0)
			return rm_error_set(err, RM_ERR_IO, "archiving '%s': %s", path,
					    archive_error_string(a));
	}
	if (r != ARCHIVE_EOF)
		return rm_error_set(err, RM_ERR_IO, "reading '%s': %s", path,
				    archive_error_string(disk));
	return 0;
}

/* A short write shows in ferror(), checked once at the end. */
static void to_file(void *ud, const char *p, size_t n)
{
	if (n && fwrite(p, 1, n, ud) != n)
		return;
}

/* A regular file's data through the run's mask into a temporary file; the entry gets its
 * masked size and the data comes from there (the header, with the size, goes first). */
static int archive_masked(struct archive *disk, struct archive *a, struct archive_entry *e,
			  const rm_mask *mask, const char *path, rm_error *err)
{
	char *tmp_path = NULL, buf[64 * 1024];
	int fd = rm_make_temp(&tmp_path, err), ret = -1;
	FILE *f = fd >= 0 ? fdopen(fd, "w+b") : NULL;
	rm_mask m;
	const void *block;
	size_t size, got;
	la_int64_t offset;
	long len;
	int r;

	rm_mask_init(&m, (const char *const *)mask->secrets, mask->n);
	if (!f) {
		if (fd >= 0) {
			close(fd);
			rm_error_sys(err, RM_ERR_IO, errno, "cannot open '%s'", tmp_path);
		}
		goto out;
	}
	while ((r = archive_read_data_block(disk, &block, &size, &offset)) == ARCHIVE_OK)
		rm_mask_feed(&m, block, size, to_file, f);
	if (r != ARCHIVE_EOF) {
		rm_error_set(err, RM_ERR_IO, "reading '%s': %s", path, archive_error_string(disk));
		goto out;
	}
	rm_mask_flush(&m, to_file, f);
	if (fflush(f) != 0 || ferror(f) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		rm_error_sys(err, RM_ERR_IO, errno, "cannot write '%s'", tmp_path);
		goto out;
	}
	archive_entry_set_size(e, len);
	if (archive_write_header(a, e) < ARCHIVE_WARN) {
		rm_error_set(err, RM_ERR_IO, "archiving '%s': %s", path, archive_error_string(a));
		goto out;
	}
	while ((got = fread(buf, 1, sizeof(buf), f)) > 0)
		if (archive_write_data(a, buf, got) < 0) {
			rm_error_set(err, RM_ERR_IO, "archiving '%s': %s", path,
				     archive_error_string(a));
			goto out;
		}
	if (ferror(f)) {
		rm_error_sys(err, RM_ERR_IO, errno, "cannot read '%s'", tmp_path);
		goto out;
	}
	ret = 0;
out:
	rm_mask_release(&m);
	if (f)
		fclose(f);
	if (tmp_path)
		unlink(tmp_path);
	free(tmp_path);
	return ret;
}

/* Adds path (a file, or a folder and everything below it). */
static int archive_add_path(struct archive *a, const char *top, const char *path,
			    const struct stat *self, const rm_mask *mask, rm_error *err)
{
	struct archive *disk = archive_read_disk_new();
	struct archive_entry *e = NULL;
	char *base = stored_name(top, path);
	size_t plen = strlen(path);
	int r, ret = -1;

	archive_read_disk_set_standard_lookup(disk);
	archive_read_disk_set_symlink_physical(disk);
	if (archive_read_disk_open(disk, path) != ARCHIVE_OK) {
		rm_error_set(err, RM_ERR_IO, "cannot archive '%s': %s", path,
			     archive_error_string(disk));
		goto out;
	}
	while (plen > 1 && path[plen - 1] == '/')
		plen--;
	for (;;) {
		e = archive_entry_new();
		r = archive_read_next_header2(disk, e);
		if (r == ARCHIVE_EOF)
			break;
		if (r != ARCHIVE_OK) {
			rm_error_set(err, RM_ERR_IO, "cannot archive '%s': %s", path,
				     archive_error_string(disk));
			goto out;
		}
		archive_read_disk_descend(disk);
		/* The archive being written, when it lies inside a folder being archived. */
		if ((ino_t)archive_entry_ino(e) == self->st_ino &&
		    archive_entry_dev(e) == self->st_dev) {
			archive_entry_free(e);
			e = NULL;
			continue;
		}
		/* Rename "<path>/x" to "<top>/<stored path>/x". */
		const char *src = archive_entry_pathname(e);
		char *name = rm_xasprintf("%s%s", base, strlen(src) > plen ? src + plen : "");
		archive_entry_set_pathname(e, name);
		archive_entry_set_uname(e, "root");
		archive_entry_set_gname(e, "root");
		archive_entry_set_uid(e, 0);
		archive_entry_set_gid(e, 0);
		free(name);
		if (mask && archive_entry_filetype(e) == AE_IFREG && archive_entry_size(e) > 0) {
			if (archive_masked(disk, a, e, mask, src, err) < 0)
				goto out;
			archive_entry_free(e);
			e = NULL;
			continue;
		}
		r = archive_write_header(a, e);
		if (r < ARCHIVE_WARN) {
			rm_error_set(err, RM_ERR_IO, "archiving '%s': %s", src,
				     archive_error_string(a));
			goto out;
		}
		if (archive_entry_filetype(e) == AE_IFREG && archive_entry_size(e) > 0 &&
		    archive_copy_data(disk, a, src, err) < 0)
			goto out;
		archive_entry_free(e);
		e = NULL;
	}
	ret = 0;
out:
	archive_entry_free(e);
	archive_read_close(disk);
	archive_read_free(disk);
	free(base);
	return ret;
}

int rm_archive_write(const char *out_path, const char *top, const char *const *paths, size_t n,
		     const rm_mask *mask, rm_error *err)
{
	struct archive *a = archive_write_new();
	char *tmp = NULL, *final = NULL;
	struct stat st;
	int ret = -1, opened = 0, fd = -1;

	for (size_t i = 0; i < n; i++)
		if (stat(paths[i], &st) != 0) {
			rm_error_sys(err, RM_ERR_IO, errno, "cannot archive '%s'", paths[i]);
			goto out;
		}
	/* a symlink is written through, a FIFO or /dev/stdout directly (files_internal.h) */
	if (rm_results__output_open(out_path, &final, &fd, err) < 0)
		goto out;
	if (final)
		tmp = rm_xasprintf("%s.tmp.%ld", final, (long)getpid());
	archive_write_add_filter_gzip(a);
	archive_write_set_format_pax_restricted(a);
	if ((tmp ? archive_write_open_filename(a, tmp) : archive_write_open_fd(a, fd)) !=
	    ARCHIVE_OK) {
		rm_error_set(err, RM_ERR_IO, "cannot create '%s': %s", tmp ? tmp : out_path,
			     archive_error_string(a));
		goto out;
	}
	opened = 1;
	if (fstat(fd, &st) != 0 && (!tmp || stat(tmp, &st) != 0)) {
		rm_error_sys(err, RM_ERR_IO, errno, "cannot stat '%s'", tmp ? tmp : out_path);
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (archive_add_path(a, top, paths[i], &st,
				     mask && rm_mask_active(mask) ? mask : NULL, err) < 0)
			goto out;
	if (archive_write_close(a) != ARCHIVE_OK) {
		rm_error_set(err, RM_ERR_IO, "cannot write '%s': %s", tmp ? tmp : out_path,
			     archive_error_string(a));
		goto out;
	}
	if (tmp && rename(tmp, final) != 0) {
		rm_error_sys(err, RM_ERR_IO, errno, "cannot write '%s'", out_path);
		goto out;
	}
	ret = 0;
out:
	archive_write_free(a);
	if (fd >= 0)
		close(fd);
	if (ret < 0 && opened && tmp)
		unlink(tmp);
	free(tmp);
	free(final);
	return ret;
}
