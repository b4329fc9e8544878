#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include "files_internal.h"
#include "rm/text.h"
#include "rm/util.h"

int rm_results__output_open(const char *path, char **final, int *fd, rm_error *err)
{
	struct stat lst, st;
	int have = stat(path, &st) == 0, errno_st = errno;

	*final = NULL;
	*fd = -1;
	if (lstat(path, &lst) != 0) { /* a new file */
		*final = rm_xstrdup(path);
		return 0;
	}
	if (!have)
		return rm_error_sys(err, RM_ERR_IO, errno_st,
				    "'%s' is a symbolic link to nothing that can be written; point "
				    "it at a file or remove it",
				    path);
	if (S_ISDIR(st.st_mode))
		return rm_error_set(err, RM_ERR_IO, "'%s' is a folder; name a file", path);
	if (S_ISREG(st.st_mode)) {
		/* through a symlink: the file it names is replaced, the link stays */
		*final = S_ISLNK(lst.st_mode) ? realpath(path, NULL) : rm_xstrdup(path);
		if (!*final)
			return rm_error_sys(err, RM_ERR_IO, errno, "cannot resolve '%s'", path);
		return 0;
	}
	/* A FIFO, /dev/stdout, a terminal: written through, never replaced by a file. A FIFO is
	 * opened without blocking, so one nobody reads is an error, not a hang. */
	*fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (*fd < 0)
		return rm_error_sys(err, RM_ERR_IO, errno,
				    errno == ENXIO
					? "cannot write to '%s': no process reads that FIFO"
					: "cannot write to '%s'",
				    path);
	if (fcntl(*fd, F_SETFL, fcntl(*fd, F_GETFL) & ~O_NONBLOCK) != 0) {
		rm_error_sys(err, RM_ERR_IO, errno, "cannot write to '%s'", path);
		close(*fd);
		*fd = -1;
		return -1;
	}
	return 0;
}

int rm_write_text_file(const char *path, const char *text, size_t len, int append, rm_error *err)
{
	char *tmp = NULL, *final = NULL;
	int fd, ret = -1;

	if (append) {
		fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0)
			return rm_error_sys(err, RM_ERR_IO, errno, "cannot open '%s' for appending",
					    path);
		if (rm_write_all(fd, text, len) != 0) {
			rm_error_sys(err, RM_ERR_IO, errno, "cannot write to '%s'", path);
			close(fd);
			return -1;
		}
		return close(fd) == 0
			   ? 0
			   : rm_error_sys(err, RM_ERR_IO, errno, "cannot write to '%s'", path);
	}
	if (rm_results__output_open(path, &final, &fd, err) < 0)
		return -1;
	if (fd >= 0) { /* written through */
		ret = rm_write_all(fd, text, len) == 0
			  ? 0
			  : rm_error_sys(err, RM_ERR_IO, errno, "cannot write to '%s'", path);
		if (close(fd) != 0 && ret == 0)
			ret = rm_error_sys(err, RM_ERR_IO, errno, "cannot write to '%s'", path);
		return ret;
	}
	/* Beside the target, so that rename() stays on one file system. */
	tmp = rm_xasprintf("%s.tmp.%ld", final, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		rm_error_sys(err, RM_ERR_IO, errno, "cannot create '%s'", tmp);
		goto out;
	}
	if (rm_write_all(fd, text, len) != 0 || fsync(fd) != 0) {
		rm_error_sys(err, RM_ERR_IO, errno, "cannot write '%s'", tmp);
		close(fd);
		unlink(tmp);
		goto out;
	}
	if (close(fd) != 0 || rename(tmp, final) != 0) {
		rm_error_sys(err, RM_ERR_IO, errno, "cannot write '%s'", path);
		unlink(tmp);
		goto out;
	}
	ret = 0;
out:
	free(final);
	free(tmp);
	return ret;
}
