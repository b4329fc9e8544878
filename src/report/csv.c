#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rm/report.h"
#include "rm/util.h"

#define CSV_RECORD_MAX ((size_t)1 << 20)

int rm_csv_quote(rm_buf *out, const char *field)
{
	if (!field)
		return 0;
	if (!strpbrk(field, ",\"\r\n"))
		return rm_buf_addstr(out, field);
	if (rm_buf_addch(out, '"'))
		return -1;
	for (const char *p = field; *p; p++) {
		if (*p == '"' && rm_buf_addch(out, '"'))
			return -1;
		if (rm_buf_addch(out, *p))
			return -1;
	}
	return rm_buf_addch(out, '"');
}

int rm_csv_record(rm_buf *out, const char *const *fields, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (i && rm_buf_addch(out, ','))
			return -1;
		if (rm_csv_quote(out, fields[i]))
			return -1;
	}
	return rm_buf_addch(out, '\n');
}

#define CSV_LOCK_WAIT 60.0

/* How rows go into an existing file: in its own columns (map[j]: the index in our header of
 * its column j, -1 for one we do not have), with its line ends. */
struct layout {
	char **cols; /* the file's header (NULL-terminated) */
	size_t n;
	int *map;
	int crlf;	  /* the header line ends with CRLF: our rows do too */
	int ends_with_nl; /* the file's last byte is a line end */
	int identity;	  /* the file's header is ours */
};

static void layout_release(struct layout *l)
{
	rm_strv_free(l->cols);
	free(l->map);
	memset(l, 0, sizeof(*l));
}

/* The file's header and line ends (path is open as fd, size bytes long): its first record,
 * compared with ours by column, whatever its line ends and quoting. */
static int read_layout(const char *path, off_t size, struct layout *l, rm_error *err)
{
	int rfd = open(path, O_RDONLY | O_CLOEXEC);
	FILE *f = rfd >= 0 ? fdopen(rfd, "r") : NULL;
	char last = '\n', pair[2];
	long at;
	int r;

	memset(l, 0, sizeof(*l));
	if (!f) {
		if (rfd >= 0)
			close(rfd);
		return rm_error_sys(err, RM_ERR_IO, errno, "cannot read '%s'", path);
	}
	r = rm_csv_read_record(f, &l->cols, &l->n, err);
	at = ftell(f);
	if (r == 1 && at >= 2 && pread(rfd, pair, 2, at - 2) == 2)
		l->crlf = pair[0] == '\r' && pair[1] == '\n';
	if (size > 0 && pread(rfd, &last, 1, size - 1) != 1)
		last = '\n';
	l->ends_with_nl = last == '\n';
	fclose(f);
	if (r < 0)
		return rm_error_wrap(err, "reading the header of '%s'", path);
	if (r == 0) {
		l->cols = rm_xcalloc(1, sizeof(*l->cols));
		l->n = 0;
	}
	return 0;
}

static int index_of(const char *const *header, size_t n_cols, const char *name)
{
	for (size_t i = 0; i < n_cols; i++)
		if (!strcmp(header[i], name))
			return (int)i;
	return -1;
}

/* Decides how rows go into a file whose header is l->cols: ours as it is; another tool's
 * (when required is given and it names every required column, each once) by column name;
 * anything else is refused. */
static int plan_layout(const char *path, const char *const *header, size_t n_cols,
		       const char *const *required, struct layout *l, rm_error *err)
{
	int same = l->n == n_cols;

	for (size_t i = 0; same && i < n_cols; i++)
		same = !strcmp(l->cols[i], header[i]);
	l->map = rm_xcalloc(l->n + 1, sizeof(*l->map));
	if (same) {
		for (size_t i = 0; i < n_cols; i++)
			l->map[i] = (int)i;
		l->identity = 1;
		return 0;
	}
	for (size_t k = 0; required && required[k]; k++) {
		size_t seen = 0;
		for (size_t j = 0; j < l->n; j++)
			seen += !strcmp(l->cols[j], required[k]);
		if (seen != 1)
			required = NULL;
	}
	if (!required)
		return rm_error_set(err, RM_ERR_IO,
				    "'%s' exists with a different header (another tool's or an "
				    "older format); move it aside or choose another file with -o",
				    path);
	for (size_t j = 0; j < l->n; j++)
		l->map[j] = index_of(header, n_cols, l->cols[j]);
	return 0;
}

/* A symlink whose target does not exist: creating the file would create that target,
 * wherever it points (outside the folder, over a path of someone else's choosing). */
static int dangling(const char *path, rm_error *err)
{
	struct stat st;
	char target[512];
	ssize_t n;

	if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode))
		return 0;
	n = readlink(path, target, sizeof(target) - 1);
	target[n > 0 ? n : 0] = '\0';
	errno = ENOENT;
	return rm_error_set(err, RM_ERR_IO,
			    "'%s' is a symbolic link to '%s', which does not exist: it is not "
			    "followed (remove the link, or point it at an existing file)",
			    path, target);
}

/* Opens path for appending: an existing file (through a symlink too), or a new one created
 * here; a dangling symlink is never followed (O_EXCL does not follow the last link). */
static int open_append(const char *path, rm_error *err)
{
	for (int tries = 0; tries < 3; tries++) {
		int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
		if (fd >= 0 || errno != ENOENT)
			return fd >= 0 ? fd
				       : rm_error_sys(err, RM_ERR_IO, errno,
						      "cannot open '%s' for appending", path);
		if (dangling(path, err) < 0)
			return -1;
		fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd >= 0 || errno != EEXIST) /* EEXIST: another runner made it just now */
			return fd >= 0 ? fd
				       : rm_error_sys(err, RM_ERR_IO, errno,
						      "cannot open '%s' for appending", path);
	}
	return rm_error_set(err, RM_ERR_IO, "cannot open '%s' for appending: it keeps changing",
			    path);
}

int rm_csv_check_by_name(const char *path, const char *const *header, size_t n_cols,
			 const char *const *required, char ***file_cols, rm_error *err)
{
	struct stat st;
	struct layout l = {0};
	int fd = -1, ret = -1;

	if (file_cols)
		*file_cols = NULL;
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && dangling(path, err) < 0)
		goto out;
	if (fd < 0 && errno == ENOENT) {
		/* No file yet: the first append creates it, if its folder lets us. */
		char *dir = rm_xstrdup(path), *slash = strrchr(dir, '/');
		const char *d = slash ? (slash == dir ? "/" : (*slash = '\0', dir)) : ".";
		if (access(d, W_OK | X_OK) == 0)
			ret = 0;
		else
			rm_error_sys(err, RM_ERR_IO, errno, "cannot create '%s'", path);
		free(dir);
		goto out;
	}
	if (fd < 0) {
		if (errno == EISDIR)
			rm_error_set(err, RM_ERR_IO, "cannot write '%s': it is a folder", path);
		else
			rm_error_sys(err, RM_ERR_IO, errno, "cannot write '%s'", path);
		goto out;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		rm_error_set(err, RM_ERR_IO, "'%s' is not a regular file", path);
		goto out;
	}
	if (st.st_size > 0) {
		if (read_layout(path, st.st_size, &l, err) < 0 ||
		    plan_layout(path, header, n_cols, required, &l, err) < 0)
			goto out;
		if (file_cols && !l.identity) {
			*file_cols = l.cols;
			l.cols = NULL;
		}
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	layout_release(&l);
	return ret;
}

int rm_csv_check(const char *path, const char *const *header, size_t n_cols, rm_error *err)
{
	return rm_csv_check_by_name(path, header, n_cols, NULL, NULL, err);
}

/*
 * Another runner holds the lock for one write: milliseconds. A holder that hung must not
 * hang us: wait at most CSV_LOCK_WAIT seconds, and after an interrupt (Ctrl-C) at most
 * one more second, so the row of the interrupted run still gets its chance.
 */
static int lock(int fd, const char *path, rm_error *err)
{
	double start = rm_now(), until = start + CSV_LOCK_WAIT, interrupted = 0;

	while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		double now = rm_now();
		if (errno != EWOULDBLOCK && errno != EINTR)
			return rm_error_sys(err, RM_ERR_IO, errno, "cannot lock '%s'", path);
		if (!interrupted && rm_interrupt_pending()) {
			interrupted = now;
			if (until > now + 1)
				until = now + 1;
		}
		if (now >= until)
			return rm_error_set(err, RM_ERR_IO,
					    "'%s' stayed locked by another process for %.0f s "
					    "(another run_models, or a process that hung while "
					    "writing it: 'fuser %s' names it)",
					    path, now - start, path);
		usleep(20000);
	}
	return 0;
}

/* One record in the file's layout: its columns from ours, its line end. */
static int layout_record(rm_buf *out, const struct layout *l, const char *const *row)
{
	const char **cells = rm_xcalloc(l->n + 1, sizeof(*cells));
	int ret;

	for (size_t j = 0; j < l->n; j++)
		cells[j] = l->map[j] >= 0 ? row[l->map[j]] : NULL;
	ret = rm_csv_record(out, cells, l->n);
	free(cells);
	if (ret == 0 && l->crlf) {
		out->data[out->len - 1] = '\r';
		ret = rm_buf_addch(out, '\n');
	}
	return ret;
}

int rm_csv_append_by_name(const char *path, const char *const *header, size_t n_cols,
			  const char *const *rows, size_t n_rows, const char *const *required,
			  char ***file_cols, rm_error *err)
{
	rm_buf hdr = RM_BUF_INIT(CSV_RECORD_MAX);
	rm_buf out = RM_BUF_INIT((size_t)64 << 20);
	struct layout l = {0};
	struct stat st;
	int fd = -1, ret = -1;

	if (file_cols)
		*file_cols = NULL;
	if (rm_csv_record(&hdr, header, n_cols)) {
		rm_error_set(err, RM_ERR_INTERNAL, "csv header too long");
		goto out;
	}
	fd = open_append(path, err);
	if (fd < 0)
		goto out;
	/* The lock covers the size check, the header and the rows: a second runner waits here
	 * and then sees our header. */
	if (lock(fd, path, err) < 0)
		goto out;
	if (fstat(fd, &st) != 0) {
		rm_error_sys(err, RM_ERR_IO, errno, "cannot stat '%s'", path);
		goto out;
	}
	if (st.st_size == 0) {
		rm_buf_add(&out, hdr.data, hdr.len);
		l.cols = rm_xcalloc(n_cols + 1, sizeof(*l.cols));
		l.map = rm_xcalloc(n_cols + 1, sizeof(*l.map));
		for (size_t i = 0; i < n_cols; i++)
			l.map[i] = (int)i;
		l.n = n_cols;
		l.identity = 1;
	} else {
		/* never rewritten: an accepted header of another tool stays, rows follow it */
		if (read_layout(path, st.st_size, &l, err) < 0 ||
		    plan_layout(path, header, n_cols, required, &l, err) < 0)
			goto out;
		if (!l.ends_with_nl)
			rm_buf_addstr(&out, l.crlf ? "\r\n" : "\n");
	}
	for (size_t r = 0; r < n_rows; r++) {
		if (layout_record(&out, &l, rows + r * n_cols)) {
			rm_error_set(err, RM_ERR_INTERNAL, "csv rows for '%s' too large", path);
			goto out;
		}
	}
	if (rm_write_all(fd, out.data, out.len) != 0) {
		int e = errno;
		/* Take back a partial write so no half row stays behind (disk full). */
		if (ftruncate(fd, st.st_size) != 0)
			e = errno;
		rm_error_sys(err, RM_ERR_IO, e, "cannot write to '%s'", path);
		goto out;
	}
	if (fsync(fd) != 0 && errno != EINVAL) {
		rm_error_sys(err, RM_ERR_IO, errno, "cannot flush '%s'", path);
		goto out;
	}
	if (file_cols && !l.identity) {
		*file_cols = l.cols;
		l.cols = NULL;
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd); /* releases the lock */
	layout_release(&l);
	rm_buf_release(&hdr);
	rm_buf_release(&out);
	return ret;
}

int rm_csv_append(const char *path, const char *const *header, size_t n_cols,
		  const char *const *rows, size_t n_rows, rm_error *err)
{
	return rm_csv_append_by_name(path, header, n_cols, rows, n_rows, NULL, NULL, err);
}

/* One record (see rm_csv_read_record); with line_mode a line end also ends a quoted field,
 * and *open_quote says whether one was still open there (or at the end of the file). */
static int read_record(FILE *f, int line_mode, char ***fields, size_t *n, int *open_quote,
		       rm_error *err)
{
	rm_buf field = RM_BUF_INIT(CSV_RECORD_MAX);
	char **v = rm_xcalloc(1, sizeof(*v));
	size_t nv = 0, total = 0;
	int c, in_quotes = 0, any = 0, after_quote = 0;

	while ((c = getc(f)) != EOF) {
		any = 1;
		if (++total > CSV_RECORD_MAX) {
			rm_error_set(err, RM_ERR_INPUT, "csv record longer than %zu bytes",
				     CSV_RECORD_MAX);
			goto fail;
		}
		if (in_quotes && !(line_mode && (c == '\n' || c == '\r'))) {
			if (c == '"') {
				int d = getc(f);
				if (d == '"') {
					rm_buf_addch(&field, '"');
				} else {
					in_quotes = 0;
					after_quote = 1;
					if (d != EOF)
						ungetc(d, f);
				}
			} else {
				rm_buf_addch(&field, (char)c);
			}
			continue;
		}
		if (c == '"' && field.len == 0 && !after_quote) {
			in_quotes = 1;
			continue;
		}
		if (c == ',') {
			v = rm_strv_push(v, &nv, rm_buf_str(&field));
			rm_buf_reset(&field);
			after_quote = 0;
			continue;
		}
		if (c == '\r') {
			/* CRLF, or a lone CR: the line end of old Mac files (a file of them would
			 * otherwise be one record) */
			int d = getc(f);
			if (d != '\n' && d != EOF)
				ungetc(d, f);
			break;
		}
		if (c == '\n')
			break;
		rm_buf_addch(&field, (char)c);
	}
	if (ferror(f)) {
		rm_error_sys(err, RM_ERR_IO, errno, "read error");
		goto fail;
	}
	if (open_quote)
		*open_quote = in_quotes;
	if (!any) {
		rm_buf_release(&field);
		rm_strv_free(v);
		return 0;
	}
	v = rm_strv_push(v, &nv, rm_buf_str(&field));
	rm_buf_release(&field);
	*fields = v;
	*n = nv;
	return 1;
fail:
	rm_buf_release(&field);
	rm_strv_free(v);
	return -1;
}

int rm_csv_read_record(FILE *f, char ***fields, size_t *n, rm_error *err)
{
	return read_record(f, 0, fields, n, NULL, err);
}

int rm_csv_read_record_open(FILE *f, char ***fields, size_t *n, int *open_quote, rm_error *err)
{
	return read_record(f, 0, fields, n, open_quote, err);
}

int rm_csv_read_line_record(FILE *f, char ***fields, size_t *n, int *open_quote, rm_error *err)
{
	return read_record(f, 1, fields, n, open_quote, err);
}
