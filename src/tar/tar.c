/*
 * Tar archives through libarchive (see rm/engine.h).
 *
 * The folder walk is done by hand with lstat/opendir rather than archive_read_disk because
 * .dockerignore decides per path whether to descend, and Docker's rule "walk into an
 * excluded folder when an exception may re-include something below it" does not map onto
 * archive_read_disk's callbacks.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "ignore_internal.h"
#include "tar_internal.h"
#include "rm/util.h"
#include "rm/tar.h"

#define EXTERNAL_DOCKERFILE ".run_models.Dockerfile"

struct walker {
	struct archive *a;
	const rm_ignore *ig; /* NULL: everything goes in */
	const char *keep;    /* a relative path always included (the Dockerfile), or NULL */
	const char *skip;    /* a top-level name left out, or NULL */
	const char *prefix;  /* prepended to every name ("" for none) */
	char *copybuf;
	rm_error *err;
	rm_hash *h; /* set: fingerprint the entries instead of writing them */
};

int rm_tar_fail(struct archive *a, rm_error *err, const char *what)
{
	const char *msg = archive_error_string(a);
	return rm_error_set(err, RM_ERR_IO, "%s: %s", what, msg ? msg : "unknown libarchive error");
}

static struct archive *tar_writer(int out_fd, rm_error *err)
{
	struct archive *a = archive_write_new();
	if (!a) {
		rm_error_set(err, RM_ERR_INTERNAL, "cannot create a tar writer");
		return NULL;
	}
	if (archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
	    archive_write_open_fd(a, out_fd) != ARCHIVE_OK) {
		rm_tar_fail(a, err, "cannot start the tar archive");
		archive_write_free(a);
		return NULL;
	}
	return a;
}

/* Closes the writer (which writes the end-of-archive blocks) and frees it. */
static int tar_finish(struct archive *a, int ok, rm_error *err)
{
	if (!a)
		return ok ? 0 : -1;
	int ret = ok ? 0 : -1;
	if (archive_write_close(a) != ARCHIVE_OK && ok)
		ret = rm_tar_fail(a, err, "cannot finish the tar archive");
	archive_write_free(a);
	return ret;
}

/* Fingerprint mode: what would change the archive, without reading the files. A false
 * "changed" only costs a (cached) build, and content edits change size or mtime. */
static int hash_path(struct walker *w, const char *full, const char *name, const struct stat *st)
{
	char meta[128], target[4096];
	int n =
	    snprintf(meta, sizeof(meta), "\n%o %lld %lld.%09ld ", (unsigned)st->st_mode,
		     (long long)st->st_size, (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec);

	rm_hash_update(w->h, name, strlen(name) + 1);
	rm_hash_update(w->h, meta, (size_t)n);
	if (S_ISLNK(st->st_mode)) {
		ssize_t l = readlink(full, target, sizeof(target) - 1);
		if (l > 0)
			rm_hash_update(w->h, target, (size_t)l);
	}
	return 0;
}

/* At most the size announced in the header: a file growing while we read it must not
 * corrupt the archive (libarchive pads one that shrinks). */
static int copy_data(struct walker *w, int fd, const char *full, const char *name, off_t size)
{
	off_t left = size;

	while (left > 0) {
		size_t want = left < COPY_BLOCK ? (size_t)left : COPY_BLOCK;
		ssize_t n = read(fd, w->copybuf, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return rm_error_sys(w->err, RM_ERR_IO, errno, "cannot read '%s'", full);
		if (n == 0)
			break;
		if (archive_write_data(w->a, w->copybuf, (size_t)n) < 0)
			return rm_tar_fail(w->a, w->err, name);
		left -= n;
	}
	return 0;
}

/* Adds one filesystem object as name; sockets, fifos and devices are skipped. */
static int add_path(struct walker *w, const char *full, const char *name, const struct stat *st)
{
	int ret = -1, fd = -1;
	char target[4096];
	struct archive_entry *e = NULL;

	if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode) && !S_ISLNK(st->st_mode))
		return 0;
	if (w->h)
		return hash_path(w, full, name, st);
	e = archive_entry_new();
	archive_entry_copy_stat(e, st);
	archive_entry_set_pathname(e, name);
	/* Owned by root inside the image, as the docker CLI does; host user names and ids
	 * mean nothing there. */
	archive_entry_set_uid(e, 0);
	archive_entry_set_gid(e, 0);
	archive_entry_set_uname(e, "root");
	archive_entry_set_gname(e, "root");
	archive_entry_set_nlink(e, S_ISDIR(st->st_mode) ? 2 : 1);
	if (S_ISLNK(st->st_mode)) {
		ssize_t n = readlink(full, target, sizeof(target) - 1);
		if (n < 0) {
			rm_error_sys(w->err, RM_ERR_IO, errno, "cannot read link '%s'", full);
			goto out;
		}
		target[n] = '\0';
		archive_entry_set_symlink(e, target);
		archive_entry_set_size(e, 0);
	} else if (S_ISDIR(st->st_mode)) {
		archive_entry_set_size(e, 0);
	} else {
		fd = open(full, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			rm_error_sys(w->err, RM_ERR_INPUT, errno, "cannot read '%s'", full);
			goto out;
		}
	}
	if (archive_write_header(w->a, e) < ARCHIVE_WARN) {
		rm_tar_fail(w->a, w->err, name);
		goto out;
	}
	if (fd >= 0 && copy_data(w, fd, full, name, st->st_size) < 0)
		goto out;
	if (archive_write_finish_entry(w->a) < ARCHIVE_WARN) {
		rm_tar_fail(w->a, w->err, name);
		goto out;
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	archive_entry_free(e);
	return ret;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of a folder's entries (deterministic archives make reproducible builds). */
static int list_dir(const char *full, char ***names, size_t *n, rm_error *err)
{
	DIR *dir = opendir(full);
	if (!dir)
		return rm_error_sys(err, RM_ERR_INPUT, errno, "cannot open folder '%s'", full);
	char **v = NULL;
	size_t k = 0;
	struct dirent *de;
	errno = 0;
	while ((de = readdir(dir))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		v = rm_strv_push(v, &k, de->d_name);
	}
	int e = errno;
	closedir(dir);
	if (e) {
		rm_strv_free(v);
		return rm_error_sys(err, RM_ERR_IO, e, "cannot read folder '%s'", full);
	}
	if (k)
		qsort(v, k, sizeof(*v), cmp_names);
	*names = v;
	*n = k;
	return 0;
}

/* Is rel the kept path, or a folder above it? */
static int keeps(const struct walker *w, const char *rel, int is_dir)
{
	if (!w->keep)
		return 0;
	size_t l = strlen(rel);
	if (strcmp(w->keep, rel) == 0)
		return 1;
	return is_dir && strncmp(w->keep, rel, l) == 0 && w->keep[l] == '/';
}

/* Walks the folder full, whose path relative to the root is rel ("" for the root). */
static int walk_dir(struct walker *w, const char *full, const char *rel)
{
	char **names = NULL;
	size_t n = 0;
	int ret = -1;

	if (list_dir(full, &names, &n, w->err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		char *cfull = rm_xasprintf("%s/%s", full, names[i]);
		char *crel = *rel ? rm_xasprintf("%s/%s", rel, names[i]) : rm_xstrdup(names[i]);
		char *cname = *w->prefix ? rm_xasprintf("%s/%s", w->prefix, crel) : NULL;
		struct stat st;
		int r = 0;

		if (!*rel && w->skip && strcmp(names[i], w->skip) == 0)
			goto next;
		if (lstat(cfull, &st) != 0) {
			r = rm_error_sys(w->err, RM_ERR_IO, errno, "cannot stat '%s'", cfull);
			goto next;
		}
		int is_dir = S_ISDIR(st.st_mode);
		if (w->ig && rm_ignore_match(w->ig, crel) && !keeps(w, crel, 0)) {
			/* The folder itself stays out, but something below may come back. */
			if (is_dir && (keeps(w, crel, 1) || rm_ignore_may_reinclude(w->ig, crel)))
				r = walk_dir(w, cfull, crel);
			goto next;
		}
		r = add_path(w, cfull, cname ? cname : crel, &st);
		if (r == 0 && is_dir)
			r = walk_dir(w, cfull, crel);
	next:
		free(cfull);
		free(crel);
		free(cname);
		if (r < 0)
			goto out;
	}
	ret = 0;
out:
	rm_strv_free(names);
	return ret;
}

static int build_context(const char *context_dir, const char *dockerfile, int out_fd, rm_hash *h,
			 char **dockerfile_name, rm_error *err)
{
	int ret = -1;
	char *ctx = NULL, *df = NULL, *df_default = NULL, *ignore_path = NULL, *rel = NULL;
	rm_ignore *ig = NULL;
	struct walker w = {0};
	struct stat st;

	ctx = realpath(context_dir, NULL);
	if (!ctx || stat(ctx, &st) != 0 || !S_ISDIR(st.st_mode)) {
		rm_error_sys(err, RM_ERR_INPUT, ctx ? 0 : errno,
			     "build context '%s' is not a folder", context_dir);
		goto out;
	}
	if (!dockerfile)
		dockerfile = df_default = rm_xasprintf("%s/Dockerfile", ctx);
	df = realpath(dockerfile, NULL);
	if (!df || stat(df, &st) != 0 || !S_ISREG(st.st_mode)) {
		rm_error_sys(err, RM_ERR_INPUT, df ? 0 : errno, "cannot use Dockerfile '%s'%s",
			     dockerfile, df ? ": not a regular file" : "");
		goto out;
	}
	size_t cl = strlen(ctx);
	/* ctx is "/" only when the context is the root folder. */
	if (strncmp(df, ctx, cl) == 0 && (df[cl] == '/' || cl == 1))
		rel = rm_xstrdup(df + (cl == 1 ? 1 : cl + 1));

	ignore_path = rm_xasprintf("%s/.dockerignore", ctx);
	if (rm_ignore_load(&ig, ignore_path, err) < 0)
		goto out;
	/* The docker CLI always sends .dockerignore itself (the Dockerfile is kept below). */
	(void)rm_ignore_add(ig, "!.dockerignore");

	if (h) {
		w.h = h;
	} else {
		w.a = tar_writer(out_fd, err);
		if (!w.a)
			goto out;
	}
	w.ig = ig;
	w.keep = rel;
	w.skip = rel ? NULL : EXTERNAL_DOCKERFILE;
	w.prefix = "";
	w.copybuf = rm_xmalloc(COPY_BLOCK);
	w.err = err;
	if (walk_dir(&w, ctx, "") < 0)
		goto out;
	if (!rel) {
		if (stat(df, &st) != 0) {
			rm_error_sys(err, RM_ERR_INPUT, errno, "cannot stat '%s'", df);
			goto out;
		}
		if (add_path(&w, df, EXTERNAL_DOCKERFILE, &st) < 0)
			goto out;
	}
	ret = 0;
out:
	if (w.a && tar_finish(w.a, ret == 0, err) < 0)
		ret = -1;
	if (ret == 0) {
		*dockerfile_name = rel ? rel : rm_xstrdup(EXTERNAL_DOCKERFILE);
		rel = NULL;
	} else if (err) {
		rm_error_wrap(err, "packing build context '%s'", context_dir);
	}
	free(w.copybuf);
	rm_ignore_free(ig);
	free(ctx);
	free(df);
	free(df_default);
	free(ignore_path);
	free(rel);
	return ret;
}

int rm_tar_build_context(const char *context_dir, const char *dockerfile, int out_fd,
			 char **dockerfile_name, rm_error *err)
{
	return build_context(context_dir, dockerfile, out_fd, NULL, dockerfile_name, err);
}

int rm_tar_context_fingerprint(const char *context_dir, const char *dockerfile, rm_hash *h,
			       char **dockerfile_name, rm_error *err)
{
	return build_context(context_dir, dockerfile, -1, h, dockerfile_name, err);
}

/* Adds the folders of a '/'-separated path (not the last component when it is a file). */
static int add_parents(struct archive *a, const char *path, int include_last, rm_error *err)
{
	int ret = -1;
	size_t len = strlen(path);
	struct archive_entry *e = archive_entry_new();
	time_t now = time(NULL);

	for (size_t i = 1; i <= len; i++) {
		if (i < len && path[i] != '/')
			continue;
		if (i == len && !include_last)
			break;
		char *dir = rm_xstrndup(path, i);
		archive_entry_clear(e);
		archive_entry_set_pathname(e, dir);
		archive_entry_set_filetype(e, AE_IFDIR);
		archive_entry_set_perm(e, 0755);
		archive_entry_set_uid(e, 0);
		archive_entry_set_gid(e, 0);
		archive_entry_set_uname(e, "root");
		archive_entry_set_gname(e, "root");
		archive_entry_set_mtime(e, now, 0);
		int r = archive_write_header(a, e);
		free(dir);
		if (r < ARCHIVE_WARN) {
			rm_tar_fail(a, err, path);
			goto out;
		}
	}
	ret = 0;
out:
	archive_entry_free(e);
	return ret;
}

int rm_tar_symlink(const char *name, const char *target, int out_fd, rm_error *err)
{
	struct archive *a = tar_writer(out_fd, err);
	struct archive_entry *e;
	int ok;

	if (!a)
		return -1;
	e = archive_entry_new();
	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, AE_IFLNK);
	archive_entry_set_perm(e, 0777);
	archive_entry_set_symlink(e, target);
	ok = archive_write_header(a, e) == ARCHIVE_OK;
	if (!ok)
		rm_tar_fail(a, err, "cannot write the tar archive");
	archive_entry_free(e);
	return tar_finish(a, ok, err);
}

int rm_tar_tree(const char *src, const char *prefix, int out_fd, rm_error *err)
{
	int ret = -1;
	char *pfx = NULL;
	struct walker w = {0};
	struct stat st;

	/* The top is followed if it is a link: the caller named it on purpose. */
	if (stat(src, &st) != 0) {
		rm_error_sys(err, RM_ERR_INPUT, errno, "cannot use '%s'", src);
		goto out;
	}
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
		rm_error_set(err, RM_ERR_INPUT, "'%s' is neither a file nor a folder", src);
		goto out;
	}
	pfx = rm_clean_path(prefix ? prefix : "", prefix ? strlen(prefix) : 0);
	{
		/* Names in the archive are relative: "/a/b" and "./a/b" both mean "a/b". */
		size_t skip = strspn(pfx, "/");
		memmove(pfx, pfx + skip, strlen(pfx + skip) + 1);
		if (strcmp(pfx, ".") == 0)
			pfx[0] = '\0';
	}
	if (S_ISREG(st.st_mode) && !*pfx) {
		const char *base = strrchr(src, '/');
		free(pfx);
		pfx = rm_xstrdup(base ? base + 1 : src);
	}
	w.a = tar_writer(out_fd, err);
	if (!w.a)
		goto out;
	w.prefix = pfx;
	w.copybuf = rm_xmalloc(COPY_BLOCK);
	w.err = err;
	if (*pfx && add_parents(w.a, pfx, 0, err) < 0)
		goto out;
	if (*pfx && add_path(&w, src, pfx, &st) < 0)
		goto out;
	if (S_ISDIR(st.st_mode) && walk_dir(&w, src, "") < 0)
		goto out;
	ret = 0;
out:
	if (w.a && tar_finish(w.a, ret == 0, err) < 0)
		ret = -1;
	if (ret < 0)
		rm_error_wrap(err, "packing '%s'", src);
	free(w.copybuf);
	free(pfx);
	return ret;
}
