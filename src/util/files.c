/*
 * Small file helpers shared by the runner and the launchers: temporary files, and the git
 * commit of the registry folder.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rm/util.h"

int rm_make_temp(char **path, rm_error *err)
{
	const char *tmp = getenv("TMPDIR");
	char *p = rm_xasprintf("%s/run_models-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	int fd = mkstemp(p);

	if (fd < 0) {
		rm_error_sys(err, RM_ERR_IO, errno, "cannot create a temporary file in '%s'",
			     tmp && *tmp ? tmp : "/tmp");
		free(p);
		return -1;
	}
	*path = p;
	return fd;
}

int rm_write_file_atomic(const char *path, const char *text, size_t len, int mode, rm_error *err)
{
	char *tmp = rm_xasprintf("%s.%ld.tmp", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
	int ret = -1;

	if (fd < 0 || rm_write_all(fd, text, len) < 0 || fsync(fd) != 0) {
		rm_error_sys(err, RM_ERR_IO, errno, "cannot write '%s'", tmp);
		goto out;
	}
	if (rename(tmp, path) != 0) {
		rm_error_sys(err, RM_ERR_IO, errno, "cannot write '%s'", path);
		goto out;
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	if (ret < 0)
		unlink(tmp);
	free(tmp);
	return ret;
}

int rm_mkdirs(const char *path, rm_error *err)
{
	char *p = rm_xstrdup(path);
	struct stat st;
	int ret = 0;

	for (char *s = p + 1; ret == 0; s++) {
		char c = *s;
		if (c != '/' && c != '\0')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST)
			ret =
			    rm_error_sys(err, RM_ERR_IO, errno, "cannot create the folder '%s'", p);
		else if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode))
			ret = rm_error_set(err, RM_ERR_IO, "'%s' is not a folder", p);
		*s = c;
		if (!c)
			break;
	}
	free(p);
	return ret;
}

static char *read_line_of(const char *path)
{
	char *text = NULL;
	if (rm_read_file(path, 1 << 16, &text, NULL, NULL) != 0)
		return NULL;
	text[strcspn(text, "\r\n")] = '\0';
	return text;
}

/* The 40-hex line of packed-refs that names ref, or NULL. */
static char *packed_ref(const char *gitdir, const char *ref)
{
	char *packed = rm_xasprintf("%s/packed-refs", gitdir), *text = NULL, *out = NULL;
	size_t rl = strlen(ref);

	if (rm_read_file(packed, (size_t)64 << 20, &text, NULL, NULL) == 0) {
		for (char *l = text; l && *l;) {
			char *nl = strchr(l, '\n');
			if (nl)
				*nl = '\0';
			if (strlen(l) == 41 + rl && l[40] == ' ' && !strcmp(l + 41, ref))
				out = rm_xstrndup(l, 40);
			l = nl ? nl + 1 : NULL;
		}
	}
	free(text);
	free(packed);
	return out;
}

/*
 * Spawning git would cost a shell and a process per run; libgit2 would be a large
 * dependency for three file reads. Anything unexpected gives "".
 */
char *rm_git_commit(const char *root)
{
	char *gitdir = rm_xasprintf("%s/.git", root), *head = NULL, *path = NULL, *out = NULL;
	struct stat st;

	if (stat(gitdir, &st) == 0 && S_ISREG(st.st_mode)) {
		char *line = read_line_of(gitdir); /* "gitdir: <path>" */
		free(gitdir);
		gitdir = line && rm_starts_with(line, "gitdir: ") ? rm_xstrdup(line + 8) : NULL;
		free(line);
	}
	if (!gitdir)
		return rm_xstrdup("");
	path = rm_xasprintf("%s/HEAD", gitdir);
	head = read_line_of(path);
	free(path);
	if (head && rm_starts_with(head, "ref: ")) {
		path = rm_xasprintf("%s/%s", gitdir, head + 5);
		out = read_line_of(path);
		free(path);
		if (!out)
			out = packed_ref(gitdir, head + 5);
	} else if (head) {
		out = rm_xstrdup(head); /* detached */
	}
	free(head);
	free(gitdir);
	if (out && strlen(out) < 40) {
		free(out);
		out = NULL;
	}
	return out ? out : rm_xstrdup("");
}

char *rm_file_safe(const char *name)
{
	char *s = rm_xstrdup(name);
	for (char *p = s; *p; p++)
		if (*p == '/' || *p == ' ')
			*p = '_';
	return s;
}
