/*
 * Checks of a model that need the file system or the context (see include/rm/registry.h):
 * paths that leave the folder through symlinks, folders where files are expected, and
 * skip_gpu_arch matching for AMD and NVIDIA names.
 */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "rm/registry.h"
#include "rm/util.h"

static int inside(const char *real, const char *real_root)
{
	size_t n = strlen(real_root);

	if (strcmp(real_root, "/") == 0)
		return 1;
	return strncmp(real, real_root, n) == 0 && (real[n] == '/' || real[n] == '\0');
}

static char *join(const char *root, const char *rel)
{
	if (!root || !*root || strcmp(root, ".") == 0)
		return rm_xstrdup(rel);
	return rm_xasprintf("%s/%s", root, rel);
}

/* One path of field `field`: it must exist (when must_exist), resolve inside real_root, and
 * be a folder (want_dir 1) or a file (want_dir 0) or either (-1). */
static int check_one(const rm_model *m, const char *field, const char *root, const char *real_root,
		     const char *rel, int want_dir, int must_exist, rm_error *err)
{
	char real[PATH_MAX];
	char *path = join(root, rel);
	struct stat st;
	int ret = -1;

	if (!realpath(path, real)) {
		if (errno == ENOENT && !must_exist) {
			ret = 0;
			goto out;
		}
		int e = errno;
		rm_error_sys(err, RM_ERR_INPUT, e, "model '%s': field '%s': cannot use '%s'",
			     m->name, field, rel);
		if (e == ENOENT)
			rm_error_hint(err, "; fix the path in the registry");
		goto out;
	}
	if (!inside(real, real_root)) {
		rm_error_set(err, RM_ERR_INPUT,
			     "model '%s': field '%s': '%s' resolves to '%s', outside the folder "
			     "'%s' (a symlink out of it); copy what it needs into the folder",
			     m->name, field, rel, real, real_root);
		goto out;
	}
	if (stat(real, &st) != 0) {
		rm_error_sys(err, RM_ERR_IO, errno, "model '%s': field '%s': cannot stat '%s'",
			     m->name, field, rel);
		goto out;
	}
	if (want_dir == 1 && !S_ISDIR(st.st_mode)) {
		rm_error_set(err, RM_ERR_INPUT,
			     "model '%s': field '%s': '%s' is a file, and it must be a folder",
			     m->name, field, rel);
		goto out;
	}
	if (want_dir == 0 && S_ISDIR(st.st_mode)) {
		rm_error_set(
		    err, RM_ERR_INPUT,
		    "model '%s': field '%s': '%s' is a folder, and it must be a file%s", m->name,
		    field, rel,
		    strcmp(field, "scripts") == 0
			? " (or name the folder without .sh, .slurm, .sbatch or .py to run "
			  "its run.sh)"
			: "");
		goto out;
	}
	ret = 0;
out:
	free(path);
	return ret;
}

int rm_model_check_paths(const rm_model *m, const char *root, rm_error *err)
{
	char real_root[PATH_MAX];
	rm_buf pat = RM_BUF_INIT((size_t)1 << 16);
	glob_t g;
	int ret = -1, scripts_kind;
	char *top = join(root, "");

	memset(&g, 0, sizeof(g));
	if (!realpath(root && *root ? root : ".", real_root)) {
		rm_error_sys(err, RM_ERR_IO, errno, "cannot resolve the folder '%s'",
			     root && *root ? root : ".");
		goto out;
	}
	scripts_kind = rm_script_kind_of(m->scripts) == RM_SCRIPT_FOLDER ? 1 : 0;
	if (check_one(m, "scripts", root, real_root, m->scripts, scripts_kind, 1, err) ||
	    check_one(m, "dockercontext", root, real_root, m->dockercontext, 1, 1, err))
		goto out;

	/* Each Dockerfile candidate (the same glob rm_dockerfiles_select uses). */
	if (root && *root && strcmp(root, ".") != 0) {
		for (const char *p = root; *p; p++) {
			if (*p == '*' || *p == '?' || *p == '[' || *p == '\\')
				rm_buf_addch(&pat, '\\');
			rm_buf_addch(&pat, *p);
		}
		rm_buf_addch(&pat, '/');
	}
	for (const char *p = m->dockerfile; *p; p++) {
		if (*p == '*' || *p == '?' || *p == '[' || *p == '\\')
			rm_buf_addch(&pat, '\\');
		rm_buf_addch(&pat, *p);
	}
	rm_buf_addstr(&pat, ".*Dockerfile");
	if (glob(rm_buf_str(&pat), 0, NULL, &g) == 0) {
		size_t skip = strlen(top);
		for (size_t i = 0; i < g.gl_pathc; i++)
			if (check_one(m, "dockerfile", root, real_root, g.gl_pathv[i] + skip, 0, 1,
				      err))
				goto out;
	}
	ret = 0;
out:
	globfree(&g);
	rm_buf_release(&pat);
	free(top);
	return ret;
}

/* Copies s without blanks, lowercased, into a new string. */
static char *squeeze(const char *s, size_t n)
{
	char *out = rm_xmalloc(n + 1), *o = out;

	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t')
			*o++ = (char)((s[i] >= 'A' && s[i] <= 'Z') ? s[i] - 'A' + 'a' : s[i]);
	*o = '\0';
	return out;
}

/* The length of a vendor's prefix of a product name ("NVIDIA ", "AMD Instinct "), or 0. */
static size_t vendor_prefix(const char *a)
{
	static const char *const prefixes[] = {"NVIDIA ", "AMD Instinct ", "AMD Radeon ", "AMD ",
					       NULL};

	for (size_t i = 0; prefixes[i]; i++)
		if (strncasecmp(a, prefixes[i], strlen(prefixes[i])) == 0)
			return strlen(prefixes[i]);
	return 0;
}

static int skip_match_one(const char *skip_list, const char *gpu_arch)
{
	char *names[5] = {NULL};
	size_t n_names = 0;
	const char *a, *p;
	int hit = 0;

	if (!skip_list || !gpu_arch)
		return 0;
	a = gpu_arch;
	while (*a == ' ' || *a == '\t')
		a++;
	if (!*a)
		return 0;
	/* What the list may name: the whole arch; for AMD the target without its feature
	 * suffix ("gfx942" of "gfx942:sramecc+:xnack-"); for NVIDIA the product after
	 * "NVIDIA ", its first word ("H100" of "H100 80GB HBM3") and that word before its
	 * first '-' ("A100" of "A100-SXM4-80GB"). */
	names[n_names++] = squeeze(a, strlen(a));
	if (vendor_prefix(a)) {
		const char *prod = a + vendor_prefix(a);
		size_t w;

		while (*prod == ' ')
			prod++;
		names[n_names++] = squeeze(prod, strlen(prod));
		w = strcspn(prod, " \t");
		names[n_names++] = squeeze(prod, w);
		names[n_names++] =
		    squeeze(prod, strcspn(prod, " \t-") < w ? strcspn(prod, " \t-") : w);
	} else {
		names[n_names++] = squeeze(a, strcspn(a, ":"));
	}

	for (p = skip_list; *p && !hit;) {
		size_t len = strcspn(p, ",");
		char *item = squeeze(p, len);

		for (size_t i = 0; *item && i < n_names; i++)
			if (*names[i] && strcmp(item, names[i]) == 0)
				hit = 1;
		free(item);
		p += len;
		if (*p == ',')
			p++;
	}
	for (size_t i = 0; i < n_names; i++)
		free(names[i]);
	return hit;
}

int rm_skip_gpu_arch_match(const char *skip_list, const char *gpu_arch, const char *product)
{
	return skip_match_one(skip_list, gpu_arch) || skip_match_one(skip_list, product);
}
