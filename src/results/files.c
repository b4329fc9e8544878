#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rm/results.h"
#include "rm/util.h"

int rm_write_text_file(const char *path, const char *text, size_t len, int append, rm_error *err)
{
	char *tmp = NULL;
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
	/* Beside the target, so that rename() stays on one file system. */
	tmp = rm_xasprintf("%s.tmp.%ld", path, (long)getpid());
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
	if (close(fd) != 0 || rename(tmp, path) != 0) {
		rm_error_sys(err, RM_ERR_IO, errno, "cannot write '%s'", path);
		unlink(tmp);
		goto out;
	}
	ret = 0;
out:
	free(tmp);
	return ret;
}
