/*
 * Tar writing and reading: a build context with .dockerignore read back through libarchive,
 * the Dockerfile kept or added, trees under a prefix, and size-capped or secure extraction.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "check.h"
#include "testfs.h"
#include "rm/util.h"
#include "rm/engine.h"
#include "rm/tar.h"

static char root[64];

static void put(const char *rel, const char *text, mode_t mode)
{
	char *path = rm_xasprintf("%s/%s", root, rel);
	/* Make the folders on the way. */
	for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	chmod(path, mode);
	free(path);
}

static char *tmpfile_path(const char *name)
{
	return rm_xasprintf("%s/%s", root, name);
}

/* Lists a tar file as "name[/|@target]:uid:mode:contents" lines, in archive order. */
static char *list_tar(const char *path)
{
	rm_buf out = RM_BUF_INIT(1 << 20);
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	archive_read_support_format_tar(a);
	CHECK(archive_read_open_filename(a, path, 10240) == ARCHIVE_OK);
	while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
		rm_buf_addstr(&out, archive_entry_pathname(e));
		const char *nm = archive_entry_pathname(e);
		if (archive_entry_filetype(e) == AE_IFDIR && !rm_ends_with(nm, "/"))
			rm_buf_addch(&out, '/');
		if (archive_entry_filetype(e) == AE_IFLNK)
			rm_buf_addf(&out, "@%s", archive_entry_symlink(e));
		rm_buf_addf(&out, ":%ld:%o:", (long)archive_entry_uid(e),
			    (unsigned)archive_entry_perm(e));
		char buf[256];
		la_ssize_t n;
		while ((n = archive_read_data(a, buf, sizeof(buf))) > 0)
			rm_buf_add(&out, buf, (size_t)n);
		rm_buf_addch(&out, '\n');
	}
	archive_read_free(a);
	return rm_buf_detach(&out);
}

static int has_line(const char *list, const char *line)
{
	size_t l = strlen(line);
	for (const char *p = list; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, line, l) == 0 && (p[l] == '\n' || p[l] == ':'))
			return 1;
	return 0;
}

#define HAS(list, name)                                                                            \
	do {                                                                                       \
		CHECK(has_line(list, name));                                                       \
		if (!has_line(list, name))                                                         \
			fprintf(stderr, "  missing '%s' in:\n%s", name, list);                     \
	} while (0)
#define HASNT(list, name)                                                                          \
	do {                                                                                       \
		CHECK(!has_line(list, name));                                                      \
		if (has_line(list, name))                                                          \
			fprintf(stderr, "  unexpected '%s' in:\n%s", name, list);                  \
	} while (0)

static char *build(const char *ctx, const char *dockerfile, char **name, int expect_ok)
{
	rm_error err = RM_ERROR_INIT;
	char *tar = tmpfile_path("ctx.tar");
	int fd = open(tar, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int r = rm_tar_build_context(ctx, dockerfile, fd, name, &err);
	close(fd);
	CHECK((r == 0) == expect_ok);
	if ((r == 0) != expect_ok)
		fprintf(stderr, "  build context: %s\n", err.msg);
	char *list = r == 0 ? list_tar(tar) : rm_xstrdup(err.msg);
	free(tar);
	return list;
}

SETUP()
{
	snprintf(root, sizeof(root), "/tmp/rm_test_tar_XXXXXX");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		exit(1);
	}
}

TEARDOWN()
{
	tfs_rm_tree(root);
}

TEST(build_context)
{
	put("ctx/Dockerfile", "FROM scratch\n", 0644);
	put("ctx/a.txt", "alpha", 0600);
	put("ctx/run.sh", "#!/bin/sh\n", 0755);
	put("ctx/sub/b.txt", "beta", 0644);
	put("ctx/sub/deep/c.txt", "gamma", 0644);
	put("ctx/node_modules/x.js", "x", 0644);
	put("ctx/docs/keep.txt", "keep", 0644);
	put("ctx/docs/drop.txt", "drop", 0644);
	put("ctx/x.log", "log", 0644);
	put("ctx/sub/y.log", "log", 0644);
	put("ctx/.dockerignore",
	    "# build context rules\nnode_modules\n/docs\n!docs/keep.txt\n*.log\nDockerfile\n"
	    ".dockerignore\n",
	    0644);
	char *ctx = tmpfile_path("ctx");
	char *link = tmpfile_path("ctx/link");
	char *fifo = tmpfile_path("ctx/fifo");
	CHECK(symlink("a.txt", link) == 0);
	CHECK(mkfifo(fifo, 0644) == 0);

	char *name = NULL;
	char *list = build(ctx, NULL, &name, 1);
	CHECK_STR(name, "Dockerfile");
	HAS(list, "Dockerfile:0:644:FROM scratch\n");
	HAS(list, ".dockerignore");
	HAS(list, "a.txt:0:600:alpha");
	HAS(list, "run.sh:0:755");
	HAS(list, "link@a.txt");
	HAS(list, "sub/");
	HAS(list, "sub/b.txt:0:644:beta");
	HAS(list, "sub/deep/");
	HAS(list, "sub/deep/c.txt:0:644:gamma");
	HAS(list, "docs/keep.txt:0:644:keep");
	HAS(list, "sub/y.log"); /* "*.log" is for the top folder only */
	HASNT(list, "docs/");
	HASNT(list, "docs/drop.txt");
	HASNT(list, "node_modules/");
	HASNT(list, "node_modules/x.js");
	HASNT(list, "x.log");
	HASNT(list, "fifo");
	/* Entries come sorted, so archives are reproducible. */
	CHECK(strstr(list, "a.txt") < strstr(list, "sub/b.txt"));
	free(list);
	free(name);

	/* A Dockerfile outside the context is added under a fixed name. */
	put("elsewhere/Dockerfile.rocm", "FROM outside\n", 0644);
	char *outside = tmpfile_path("elsewhere/Dockerfile.rocm");
	list = build(ctx, outside, &name, 1);
	CHECK_STR(name, ".run_models.Dockerfile");
	HAS(list, ".run_models.Dockerfile:0:644:FROM outside\n");
	/* The context's own Dockerfile is not the one used, so .dockerignore rules. */
	HASNT(list, "Dockerfile:0");
	HAS(list, "a.txt");
	free(list);
	free(name);

	/* A Dockerfile in an excluded folder is still sent, the rest of the folder is not. */
	put("ctx/node_modules/Dockerfile.sub", "FROM sub\n", 0644);
	char *inner = tmpfile_path("ctx/./node_modules/../node_modules/Dockerfile.sub");
	list = build(ctx, inner, &name, 1);
	CHECK_STR(name, "node_modules/Dockerfile.sub");
	HAS(list, "node_modules/Dockerfile.sub:0:644:FROM sub\n");
	HASNT(list, "node_modules/x.js");
	free(list);
	free(name);

	/* Bad input names the problem. */
	char *missing = tmpfile_path("nope");
	name = NULL;
	list = build(missing, NULL, &name, 0);
	CHECK(strstr(list, "nope") != NULL);
	CHECK(name == NULL);
	free(list);
	list = build(ctx, missing, &name, 0);
	CHECK(strstr(list, "Dockerfile") != NULL);
	free(list);
	put("bad/.dockerignore", "!\n", 0644);
	put("bad/Dockerfile", "FROM x\n", 0644);
	char *bad = tmpfile_path("bad");
	list = build(bad, NULL, &name, 0);
	CHECK(strstr(list, "illegal exclusion") != NULL);
	free(list);

	free(bad);
	free(missing);
	free(inner);
	free(outside);
	free(ctx);
	free(link);
	free(fifo);
}

static char *tree(const char *src, const char *prefix)
{
	rm_error err = RM_ERROR_INIT;
	char *tar = tmpfile_path("tree.tar");
	int fd = open(tar, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int r = rm_tar_tree(src, prefix, fd, &err);
	close(fd);
	CHECK(r == 0);
	if (r != 0)
		fprintf(stderr, "  tree: %s\n", err.msg);
	char *list = list_tar(tar);
	free(tar);
	return list;
}

TEST(tree)
{
	put("scripts/smoke/run.sh", "#!/bin/sh\necho hi\n", 0755);
	put("scripts/smoke/lib/util.py", "pass\n", 0644);
	char *src = tmpfile_path("scripts/smoke");
	char *list = tree(src, "myworkspace/smoke");
	HAS(list, "myworkspace/:0:755");
	HAS(list, "myworkspace/smoke/");
	HAS(list, "myworkspace/smoke/run.sh:0:755:#!/bin/sh\necho hi\n");
	HAS(list, "myworkspace/smoke/lib/");
	HAS(list, "myworkspace/smoke/lib/util.py:0:644:pass\n");
	HASNT(list, "run.sh");
	CHECK(strncmp(list, "myworkspace/:", 13) == 0); /* parents first */
	free(list);

	/* A single file, with and without a prefix; "/" and "./" prefixes are relative. */
	char *file = tmpfile_path("scripts/smoke/run.sh");
	list = tree(file, "/work/run.sh");
	HAS(list, "work/");
	HAS(list, "work/run.sh:0:755:#!/bin/sh");
	free(list);
	list = tree(file, NULL);
	CHECK(strncmp(list, "run.sh:0:755:", 13) == 0);
	free(list);
	list = tree(src, "");
	HAS(list, "run.sh");
	HAS(list, "lib/util.py");
	free(list);

	rm_error err = RM_ERROR_INIT;
	char *missing = tmpfile_path("scripts/none");
	CHECK(rm_tar_tree(missing, "x", -1, &err) < 0);
	CHECK(strstr(err.msg, "scripts/none") != NULL);
	free(missing);
	free(file);
	free(src);
}

static int open_tar_of(const char *src, const char *prefix)
{
	rm_error err = RM_ERROR_INIT;
	char *tar = tmpfile_path("x.tar");
	int fd = open(tar, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(rm_tar_tree(src, prefix, fd, &err) == 0);
	lseek(fd, 0, SEEK_SET);
	free(tar);
	return fd;
}

static char *read_all(int fd)
{
	rm_buf b = RM_BUF_INIT(1 << 20);
	char buf[512];
	ssize_t n;
	lseek(fd, 0, SEEK_SET);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		rm_buf_add(&b, buf, (size_t)n);
	return rm_buf_detach(&b);
}

TEST(extract_one)
{
	rm_error err = RM_ERROR_INIT;
	char big[5000];
	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	put("res/perf.csv", big, 0644);
	char *file = tmpfile_path("res/perf.csv");
	char *outp = tmpfile_path("out.csv");

	int in = open_tar_of(file, "perf.csv");
	int out = open(outp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(rm_tar_extract_one(in, out, sizeof(big), &err) == 0);
	char *got = read_all(out);
	CHECK_STR(got, big);
	free(got);
	close(in);
	close(out);

	/* Over the cap: refused, with the limit in the message. */
	in = open_tar_of(file, "perf.csv");
	out = open(outp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(rm_tar_extract_one(in, out, 100, &err) < 0);
	CHECK(strstr(err.msg, "100 bytes") != NULL);
	close(in);
	close(out);

	/* A folder with two files is not "one file". */
	put("res/other.csv", "1", 0644);
	char *dir = tmpfile_path("res");
	in = open_tar_of(dir, "res");
	out = open(outp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(rm_tar_extract_one(in, out, 1 << 20, &err) < 0);
	CHECK(strstr(err.msg, "more than one") != NULL);
	close(in);
	close(out);

	/* Not a tar at all. */
	in = open(outp, O_RDWR | O_TRUNC | O_CLOEXEC);
	CHECK(write(in, "garbage garbage", 15) == 15);
	lseek(in, 0, SEEK_SET);
	out = open("/dev/null", O_WRONLY | O_CLOEXEC);
	CHECK(rm_tar_extract_one(in, out, 1 << 20, &err) < 0);
	close(in);
	close(out);

	free(dir);
	free(file);
	free(outp);
}

/* A tar holding one file with an arbitrary (possibly hostile) name. */
static int evil_tar(const char *name, const char *symlink_target)
{
	char *tar = tmpfile_path("evil.tar");
	int fd = open(tar, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	struct archive *a = archive_write_new();
	archive_write_set_format_pax_restricted(a);
	archive_write_open_fd(a, fd);
	struct archive_entry *e = archive_entry_new();
	if (symlink_target) {
		archive_entry_set_pathname(e, "ok/link");
		archive_entry_set_filetype(e, AE_IFLNK);
		archive_entry_set_perm(e, 0777);
		archive_entry_set_symlink(e, symlink_target);
		archive_write_header(a, e);
		archive_entry_clear(e);
	}
	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_size(e, 4);
	archive_write_header(a, e);
	archive_write_data(a, "evil", 4);
	archive_entry_free(e);
	archive_write_close(a);
	archive_write_free(a);
	lseek(fd, 0, SEEK_SET);
	free(tar);
	return fd;
}

static int exists(const char *rel)
{
	struct stat st;
	char *p = tmpfile_path(rel);
	int r = lstat(p, &st) == 0;
	free(p);
	return r;
}

TEST(extract_dir)
{
	rm_error err = RM_ERROR_INIT;
	char cwd_before[4096], cwd_after[4096];
	CHECK(getcwd(cwd_before, sizeof(cwd_before)) != NULL);

	put("in/w/a.txt", "a", 0644);
	put("in/w/sub/b.txt", "b", 0755);
	char *src = tmpfile_path("in/w");
	char *dest = tmpfile_path("dest");
	int in = open_tar_of(src, "top/w");
	CHECK(rm_tar_extract_dir(in, dest, 1, NULL, &err) == 0);
	close(in);
	CHECK(exists("dest/w/a.txt"));
	CHECK(exists("dest/w/sub/b.txt"));
	CHECK(!exists("dest/top"));
	CHECK(getcwd(cwd_after, sizeof(cwd_after)) != NULL);
	CHECK_STR(cwd_after, cwd_before);

	/* ".." and absolute names are refused; nothing lands outside. */
	in = evil_tar("../escaped.txt", NULL);
	CHECK(rm_tar_extract_dir(in, dest, 0, NULL, &err) < 0);
	close(in);
	CHECK(!exists("escaped.txt"));
	char *abs = tmpfile_path("abs.txt");
	in = evil_tar(abs, NULL);
	CHECK(rm_tar_extract_dir(in, dest, 0, NULL, &err) < 0);
	close(in);
	CHECK(!exists("abs.txt"));
	CHECK(!exists("dest/tmp"));
	/* Writing through a symlink that points outside is refused. */
	in = evil_tar("ok/link/through.txt", root);
	CHECK(rm_tar_extract_dir(in, dest, 0, NULL, &err) < 0);
	CHECK(strstr(err.msg, "symlink") != NULL);
	close(in);
	CHECK(!exists("through.txt"));
	CHECK(getcwd(cwd_after, sizeof(cwd_after)) != NULL);
	CHECK_STR(cwd_after, cwd_before);
	free(abs);
	free(src);
	free(dest);
}

/* Issue 22 (7): a kept model dir never brings device nodes or FIFOs (nor hard links to
 * them) onto the host; its files do come. */
TEST(extract_dir_special_files)
{
	rm_error err = RM_ERROR_INIT;
	char *tar = tmpfile_path("special.tar"), *dest = tmpfile_path("sdest");
	int fd = open(tar, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	struct archive *a = archive_write_new();
	struct archive_entry *e = archive_entry_new();
	const struct {
		const char *name;
		mode_t type;
	} specials[] = {{"m/disk", AE_IFBLK}, {"m/tty", AE_IFCHR}, {"m/fifo", AE_IFIFO}};
	size_t skipped = 0;

	archive_write_set_format_pax_restricted(a);
	archive_write_open_fd(a, fd);
	for (size_t i = 0; i < sizeof(specials) / sizeof(specials[0]); i++) {
		archive_entry_clear(e);
		archive_entry_set_pathname(e, specials[i].name);
		archive_entry_set_filetype(e, specials[i].type);
		archive_entry_set_perm(e, 0644);
		archive_entry_set_rdev(e, makedev(8, 0)); /* /dev/sda */
		CHECK(archive_write_header(a, e) == ARCHIVE_OK);
	}
	archive_entry_clear(e);
	archive_entry_set_pathname(e, "m/disk2");
	archive_entry_set_filetype(e, AE_IFBLK);
	archive_entry_set_hardlink(e, "m/disk");
	archive_write_header(a, e);
	archive_entry_clear(e);
	archive_entry_set_pathname(e, "m/result.txt");
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_size(e, 2);
	archive_write_header(a, e);
	archive_write_data(a, "ok", 2);
	archive_entry_free(e);
	archive_write_close(a);
	archive_write_free(a);
	lseek(fd, 0, SEEK_SET);
	CHECK(rm_tar_extract_dir(fd, dest, 0, &skipped, &err) == 0);
	close(fd);
	CHECK(skipped == 4); /* tar has no sockets: the engine leaves them out itself */
	CHECK(exists("sdest/m/result.txt"));
	CHECK(!exists("sdest/m/disk") && !exists("sdest/m/disk2") && !exists("sdest/m/tty"));
	CHECK(!exists("sdest/m/fifo"));
	free(tar);
	free(dest);
}

static void fp_of(const char *ctx, const char *df, char out[65])
{
	rm_error err = RM_ERROR_INIT;
	char *name = NULL;
	rm_hash *h = rm_hash_new();
	CHECK(rm_tar_context_fingerprint(ctx, df, h, &name, &err) == 0);
	free(name);
	rm_hash_final_hex(h, out);
}

/* The metadata fingerprint follows what the tar would hold: a packed file's change moves it,
 * an ignored file's does not. */
TEST(fingerprint)
{
	char a[65], b[65], c[65], d[65];
	char *ctx = tfs_tmpdir("fp"), *df = rm_xasprintf("%s/x.Dockerfile", ctx);
	tfs_put(ctx, "x.Dockerfile", "FROM scratch\n");
	tfs_put(ctx, "app/run.sh", "echo hi\n");
	tfs_put(ctx, "junk/big.bin", "ignored\n");
	tfs_put(ctx, ".dockerignore", "junk\n");
	fp_of(ctx, df, a);
	fp_of(ctx, df, b);
	CHECK_STR(a, b);
	tfs_put(ctx, "junk/big.bin", "ignored, and longer now\n");
	fp_of(ctx, df, c);
	CHECK_STR(a, c);
	tfs_put(ctx, "app/run.sh", "echo hello\n");
	fp_of(ctx, df, d);
	CHECK(strcmp(a, d) != 0);
	tfs_rm_tree(ctx);
	free(df);
	free(ctx);
}
