/*
 * The tools file, the context's tools and scripts, and madengine's order (rm/tools.h).
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tools_internal.h"

#define TOOLS_FILE_MAX ((size_t)4 << 20)

const char *const rm_tools_context_keys[] = {"tools", "pre_scripts", "post_scripts",
					     "encapsulate_script", NULL};

/* ---- the tools file ---- */

static int str_in(const char *s, const char *const *set)
{
	for (; *set; set++)
		if (!strcmp(s, *set))
			return 1;
	return 0;
}

/* A path relative to the folder that stays in it by its words (symlinks are checked when a
 * script is used): not empty, not absolute, no ".." part. */
static int path_words_ok(const char *p)
{
	if (!*p || *p == '/')
		return 0;
	for (const char *s = p; *s; s++)
		if ((s == p || s[-1] == '/') && s[0] == '.' && s[1] == '.' &&
		    (!s[2] || s[2] == '/'))
			return 0;
	return 1;
}

/* An outputs glob: not empty, no ".." part (absolute is fine). */
static int glob_ok(const char *g)
{
	return *g && path_words_ok(*g == '/' ? g + 1 : g);
}

/* A scalar JSON value as text (env_vars values may be numbers or booleans, as in Python). */
static char *env_text(const json_t *v)
{
	if (json_is_string(v))
		return rm_xstrdup(json_string_value(v));
	if (json_is_integer(v))
		return rm_xasprintf("%lld", (long long)json_integer_value(v));
	if (json_is_real(v)) {
		/* the shortest text that reads back as the same number, as Python's str() */
		double d = json_real_value(v);
		char *t = NULL;
		for (int prec = 1; prec <= 17; prec++) {
			free(t);
			t = rm_xasprintf("%.*g", prec, d);
			if (strtod(t, NULL) == d)
				break;
		}
		return t;
	}
	if (json_is_boolean(v))
		return rm_xstrdup(json_is_true(v) ? "True" : "False");
	return NULL;
}

/* A string without a NUL inside. */
static const char *clean_str(const json_t *v)
{
	const char *s = json_string_value(v);
	return s && strlen(s) == json_string_length(v) ? s : NULL;
}

/* pre_scripts / post_scripts: [{"path": "...", "args": "..."}]. */
static int check_scripts(const json_t *a, const char *key, rm_error *err)
{
	size_t i;
	json_t *s;

	if (!json_is_array(a))
		return rm_error_set(err, RM_ERR_INPUT, "'%s' is not a list", key);
	json_array_foreach (a, i, s) {
		json_t *path = json_object_get(s, "path"), *args = json_object_get(s, "args");
		if (!json_is_object(s))
			return rm_error_set(err, RM_ERR_INPUT,
					    "'%s' item %zu is not an object {\"path\": ..., "
					    "\"args\": ...}",
					    key, i + 1);
		if (!clean_str(path) || !path_words_ok(clean_str(path)))
			return rm_error_set(err, RM_ERR_INPUT,
					    "'%s' item %zu: 'path' must be a path inside the MAD "
					    "folder (relative, no '..')",
					    key, i + 1);
		if (args && !json_is_null(args) && !clean_str(args))
			return rm_error_set(err, RM_ERR_INPUT,
					    "'%s' item %zu: 'args' is not a string", key, i + 1);
	}
	return 0;
}

static int check_env(const json_t *o, rm_error *err)
{
	const char *k;
	json_t *v;

	if (!json_is_object(o))
		return rm_error_set(err, RM_ERR_INPUT,
				    "'env_vars' is not an object {\"NAME\": ...}");
	json_object_foreach ((json_t *)o, k, v) {
		char *t = env_text(v);
		int bad = !t || !*k || strchr(k, '=') || (json_is_string(v) && !clean_str(v));
		free(t);
		if (bad)
			return rm_error_set(
			    err, RM_ERR_INPUT,
			    "'env_vars': '%s' must be a variable name with a string "
			    "or number value",
			    k);
	}
	return 0;
}

static int check_globs(const json_t *a, rm_error *err)
{
	size_t i;
	json_t *g;

	if (!json_is_array(a))
		return rm_error_set(err, RM_ERR_INPUT, "'outputs' is not a list of globs");
	json_array_foreach (a, i, g)
		if (!clean_str(g) || !glob_ok(clean_str(g)))
			return rm_error_set(err, RM_ERR_INPUT,
					    "'outputs' item %zu must be a glob with no '..' part "
					    "(relative to the model's folder, or absolute)",
					    i + 1);
	return 0;
}

/* One definition of the file. */
static int check_def(const char *name, const json_t *d, rm_error *err)
{
	json_t *v;

	if (!json_is_object(d))
		return rm_error_set(err, RM_ERR_INPUT, "tool '%s' is not an object", name);
	if ((v = json_object_get(d, "pre_scripts")) && !json_is_null(v) &&
	    check_scripts(v, "pre_scripts", err) < 0)
		return rm_error_wrap(err, "tool '%s'", name);
	if ((v = json_object_get(d, "post_scripts")) && !json_is_null(v) &&
	    check_scripts(v, "post_scripts", err) < 0)
		return rm_error_wrap(err, "tool '%s'", name);
	if ((v = json_object_get(d, "cmd")) && !json_is_null(v) && !clean_str(v))
		return rm_error_set(err, RM_ERR_INPUT, "tool '%s': 'cmd' is not a string", name);
	if ((v = json_object_get(d, "env_vars")) && !json_is_null(v) && check_env(v, err) < 0)
		return rm_error_wrap(err, "tool '%s'", name);
	if ((v = json_object_get(d, "outputs")) && !json_is_null(v) && check_globs(v, err) < 0)
		return rm_error_wrap(err, "tool '%s'", name);
	return 0;
}

/* The file's folder relative to root, when the file is inside it. */
static char *folder_in_root(const char *path, const char *root)
{
	char real_root[PATH_MAX], real[PATH_MAX];
	char *dir = rm_xstrdup(path), *slash = strrchr(dir, '/'), *out = NULL;
	size_t n;

	if (slash)
		*slash = '\0';
	if (realpath(root && *root ? root : ".", real_root) &&
	    realpath(slash ? (*dir ? dir : "/") : ".", real)) {
		n = strlen(real_root);
		if (!strcmp(real, real_root))
			out = rm_xstrdup("");
		else if (!strncmp(real, real_root, n) && (real[n] == '/' || n == 1))
			out = rm_xstrdup(real + n + (n > 1));
	}
	free(dir);
	return out;
}

int rm_tools_config_load(rm_tools_config *c, const char *path, const char *root, rm_error *err)
{
	char *dflt = NULL, *text = NULL;
	const char *file = path;
	json_error_t je;
	json_t *doc = NULL, *tools, *d;
	const char *name;
	int ret = -1;

	memset(c, 0, sizeof(*c));
	if (!file)
		file = dflt = root && *root && strcmp(root, ".")
				  ? rm_xasprintf("%s/scripts/common/tools.json", root)
				  : rm_xstrdup("scripts/common/tools.json");
	if (rm_read_file(file, TOOLS_FILE_MAX, &text, NULL, err) < 0) {
		if (rm_error_missing(err) && !path) {
			rm_error_clear(err); /* the folder has no tools file: the built-in ones */
			c->tools = json_object();
			ret = 0;
		} else if (rm_error_missing(err)) {
			rm_error_set(err, RM_ERR_INPUT, "--tools-config '%s': no such file", file);
		}
		goto out;
	}
	doc = json_loads(text, 0, &je);
	if (!doc) {
		rm_error_set(err, RM_ERR_INPUT, "'%s': line %d, column %d: %s", file, je.line,
			     je.column, je.text);
		goto out;
	}
	tools = json_object_get(doc, "tools");
	if (!json_is_object(tools)) {
		rm_error_set(err, RM_ERR_INPUT,
			     "'%s' has no \"tools\" object ({\"tools\": {\"<name>\": {...}}})",
			     file);
		goto out;
	}
	json_object_foreach (tools, name, d)
		if (check_def(name, d, err) < 0) {
			rm_error_wrap(err, "'%s'", file);
			goto out;
		}
	c->tools = json_incref(tools);
	c->source = rm_xstrdup(file);
	c->folder = folder_in_root(file, root);
	ret = 0;
out:
	json_decref(doc);
	free(text);
	free(dflt);
	return ret;
}

void rm_tools_config_release(rm_tools_config *c)
{
	if (!c)
		return;
	json_decref(c->tools);
	free(c->source);
	free(c->folder);
	memset(c, 0, sizeof(*c));
}

/* ---- the plan ---- */

static void script_push(rm_tool_script **v, size_t *n, size_t at, const char *tool,
			const char *path, const char *text, const char *args)
{
	*v = rm_xrealloc(*v, (*n + 1) * sizeof(**v));
	memmove(*v + at + 1, *v + at, (*n - at) * sizeof(**v));
	(*v)[at] = (rm_tool_script){rm_xstrdup(tool), rm_xstrdup(path), rm_xstrdup(text),
				    rm_xstrdup(args)};
	(*n)++;
}

/* Sets K in env (replacing it in place when there). */
static void env_put(rm_kv **env, size_t *n, const char *k, const char *v)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*env)[i].key, k)) {
			free((*env)[i].value);
			(*env)[i].value = rm_xstrdup(v);
			return;
		}
	*env = rm_xrealloc(*env, (*n + 1) * sizeof(**env));
	(*env)[*n].key = rm_xstrdup(k);
	(*env)[*n].value = rm_xstrdup(v);
	(*n)++;
}

/* A folder (or a top-level file) to copy, once: nothing below one already there. */
static void copy_put(rm_tool_plan *p, const char *root, const char *rel)
{
	size_t len = strlen(rel);

	for (size_t i = 0; i < p->n_copies; i++) {
		const char *d = p->copies[i].dest;
		size_t dl = strlen(d);
		if (!dl || (!strncmp(rel, d, dl) && (rel[dl] == '/' || !rel[dl])))
			return; /* inside (or equal to) one already copied */
		if (!len || (!strncmp(d, rel, len) && d[len] == '/')) {
			/* the new one holds this one: it takes its place */
			free(p->copies[i].host);
			free(p->copies[i].dest);
			p->copies[i] = p->copies[--p->n_copies];
			i--;
		}
	}
	p->copies = rm_xrealloc(p->copies, (p->n_copies + 1) * sizeof(*p->copies));
	p->copies[p->n_copies].host =
	    root && *root && strcmp(root, ".")
		? (*rel ? rm_xasprintf("%s/%s", root, rel) : rm_xstrdup(root))
		: rm_xstrdup(*rel ? rel : ".");
	p->copies[p->n_copies].dest = rm_xstrdup(rel);
	p->n_copies++;
}

/* A script file: it must be a file inside the folder; its folder goes into the container
 * (the file alone when it is at the folder's top). */
static int use_script(rm_tool_plan *p, const char *root, const char *path, rm_error *err)
{
	char real_root[PATH_MAX], real[PATH_MAX];
	char *full = root && *root && strcmp(root, ".") ? rm_xasprintf("%s/%s", root, path)
							: rm_xstrdup(path);
	const char *slash = strrchr(path, '/');
	struct stat st;
	size_t n;
	int ret = -1;

	if (!realpath(root && *root ? root : ".", real_root)) {
		rm_error_sys(err, RM_ERR_IO, errno, "cannot resolve the folder '%s'",
			     root && *root ? root : ".");
		goto out;
	}
	if (!realpath(full, real) || stat(real, &st) != 0) {
		int e = errno;
		rm_error_sys(err, RM_ERR_INPUT, e, "script '%s'", path);
		if (e == ENOENT)
			rm_error_hint(err, " (paths are relative to the MAD folder)");
		goto out;
	}
	n = strlen(real_root);
	if (strcmp(real_root, "/") && (strncmp(real, real_root, n) || real[n] != '/')) {
		rm_error_set(err, RM_ERR_INPUT,
			     "script '%s' resolves to '%s', outside the folder '%s' (a symlink "
			     "out of it); copy it into the folder",
			     path, real, real_root);
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rm_error_set(err, RM_ERR_INPUT, "script '%s' is not a file", path);
		goto out;
	}
	if (slash) {
		char *dir = rm_xstrndup(path, (size_t)(slash - path));
		copy_put(p, root, dir);
		free(dir);
	} else {
		copy_put(p, root, path);
	}
	ret = 0;
out:
	free(full);
	return ret;
}

/* Adds the scripts of a JSON list at `at` (pre: in front) or at the end (post). */
static int add_scripts(rm_tool_plan *p, const char *root, const char *tool, const json_t *list,
		       int front, rm_error *err)
{
	size_t i, k = 0;
	json_t *s;

	json_array_foreach (list, i, s) {
		const char *path = clean_str(json_object_get(s, "path"));
		const char *args = clean_str(json_object_get(s, "args"));
		if (use_script(p, root, path, err) < 0)
			return -1;
		if (front)
			script_push(&p->pre, &p->n_pre, k++, tool, path, NULL, args);
		else
			script_push(&p->post, &p->n_post, p->n_post, tool, path, NULL, args);
	}
	return 0;
}

/* The context's own key, checked. */
static int ctx_scripts(rm_tool_plan *p, const json_t *ctx, const char *key, const char *root,
		       rm_error *err)
{
	json_t *v = json_object_get(ctx, key);

	if (!v || json_is_null(v))
		return 0;
	if (check_scripts(v, key, err) < 0 ||
	    add_scripts(p, root, NULL, v, !strcmp(key, "pre_scripts"), err) < 0)
		return rm_error_wrap(err, "context key '%s'", key);
	return 0;
}

/* "a, b, c" of the known names: the file's, then the built-ins it does not shadow. */
static char *known_names(const rm_tools_config *c)
{
	rm_buf b = RM_BUF_INIT((size_t)1 << 20);
	const char *name;
	json_t *d;

	if (c && c->tools)
		json_object_foreach (c->tools, name, d)
			rm_buf_addf(&b, "%s%s", b.len ? ", " : "", name);
	for (size_t i = 0; i < rm_tools__n_builtins; i++)
		if (!(c && c->tools && json_object_get(c->tools, rm_tools__builtins[i].name)))
			rm_buf_addf(&b, "%s%s", b.len ? ", " : "", rm_tools__builtins[i].name);
	return rm_buf_detach(&b);
}

/* The definition's cmd, the context entry's when given. */
static const char *tool_cmd(const json_t *def, const struct rm_tools__builtin *bi,
			    const json_t *entry)
{
	const json_t *v = json_object_get(entry, "cmd");

	if (v && !json_is_null(v))
		return clean_str(v);
	if (def)
		return clean_str(json_object_get(def, "cmd"));
	return bi->cmd;
}

/* Puts the tool's cmd in front of the prefix (madengine: cmd + " " + prefix), once. */
static void add_cmd(rm_tool_plan *p, char ***seen, size_t *n_seen, const char *cmd)
{
	char *w;

	if (!cmd || !*cmd)
		return;
	for (size_t i = 0; i < *n_seen; i++)
		if (!strcmp((*seen)[i], cmd))
			return; /* madengine adds a cmd once (two library traces, one wrapper) */
	*seen = rm_strv_push(*seen, n_seen, cmd);
	w = rm_xasprintf("%s %s", cmd, p->wrap ? p->wrap : "");
	free(p->wrap);
	p->wrap = w;
}

static void add_env_json(rm_tool_plan *p, const json_t *o)
{
	const char *k;
	json_t *v;

	json_object_foreach ((json_t *)o, k, v) {
		char *t = env_text(v);
		env_put(&p->env, &p->n_env, k, t);
		free(t);
	}
}

static void add_outputs(rm_tool_plan *p, const char *tool, const json_t *def,
			const struct rm_tools__builtin *bi, const json_t *entry)
{
	const json_t *list = json_object_get(entry, "outputs");
	size_t i;
	json_t *g;

	if (!list && def)
		list = json_object_get(def, "outputs");
	if (list && !json_is_null(list)) {
		json_array_foreach ((json_t *)list, i, g) {
			p->outputs =
			    rm_xrealloc(p->outputs, (p->n_outputs + 1) * sizeof(*p->outputs));
			p->outputs[p->n_outputs++] =
			    (rm_tool_output){rm_xstrdup(tool), rm_xstrdup(clean_str(g))};
		}
		return;
	}
	for (const char *const *o = bi && !def ? bi->outputs : NULL; o && *o; o++) {
		p->outputs = rm_xrealloc(p->outputs, (p->n_outputs + 1) * sizeof(*p->outputs));
		p->outputs[p->n_outputs++] = (rm_tool_output){rm_xstrdup(tool), rm_xstrdup(*o)};
	}
}

/* The context's entry i of "tools": {"name": ..., "cmd"?, "env_vars"?, "outputs"?}. */
static int check_entry(const json_t *e, size_t i, const char **name, rm_error *err)
{
	static const char *const keys[] = {"name", "cmd", "env_vars", "outputs", NULL};
	const char *k;
	json_t *v;

	*name = clean_str(json_object_get(e, "name"));
	if (!json_is_object(e) || !*name || !**name)
		return rm_error_set(err, RM_ERR_INPUT,
				    "context key 'tools': item %zu must be an object with a "
				    "\"name\" ({\"name\": \"rocprofv3\"})",
				    i + 1);
	json_object_foreach ((json_t *)e, k, v) {
		if (k[0] == '_' || str_in(k, keys))
			continue;
		return rm_error_set(
		    err, RM_ERR_INPUT,
		    "context key 'tools': tool '%s': unknown key '%s' (known: name, "
		    "cmd, env_vars, outputs)",
		    *name, k);
	}
	if ((v = json_object_get(e, "cmd")) && !json_is_null(v) && !clean_str(v))
		rm_error_set(err, RM_ERR_INPUT, "'cmd' is not a string");
	else if (!((v = json_object_get(e, "env_vars")) && !json_is_null(v) &&
		   check_env(v, err) < 0) &&
		 !((v = json_object_get(e, "outputs")) && !json_is_null(v) &&
		   check_globs(v, err) < 0))
		return 0;
	return rm_error_wrap(err, "context key 'tools': tool '%s'", *name);
}

/* One selected tool, in madengine's order. */
static int add_tool(rm_tool_plan *p, const rm_tools_config *c, const json_t *entry,
		    const char *name, const char *root, char ***seen, size_t *n_seen, rm_error *err)
{
	const json_t *def = c && c->tools ? json_object_get(c->tools, name) : NULL;
	const struct rm_tools__builtin *bi = def ? NULL : rm_tools__builtin(name);
	const json_t *v;
	const char *src = def ? c->source : "built in";
	size_t k;

	if (!def && !bi) {
		char *known = known_names(c);
		rm_error_set(err, RM_ERR_INPUT,
			     "context key 'tools': unknown tool '%s': %s%s%s does not define it "
			     "and it is not built in; known tools: %s",
			     name, c && c->source ? "'" : "",
			     c && c->source ? c->source : "the folder's scripts/common/tools.json",
			     c && c->source ? "'" : "", known);
		free(known);
		return -1;
	}
	k = p->n_tools;
	p->tools = rm_strv_push(p->tools, &k, name);
	k = p->n_tools;
	p->sources = rm_strv_push(p->sources, &k, src);
	p->n_tools = k;
	if (def) {
		/* madengine: pre in front of what was gathered, post after it */
		if ((v = json_object_get(def, "pre_scripts")) && !json_is_null(v) &&
		    add_scripts(p, root, name, v, 1, err) < 0)
			return rm_error_wrap(err, "tool '%s' (%s): pre_scripts", name, src);
		if ((v = json_object_get(def, "post_scripts")) && !json_is_null(v) &&
		    add_scripts(p, root, name, v, 0, err) < 0)
			return rm_error_wrap(err, "tool '%s' (%s): post_scripts", name, src);
		if ((v = json_object_get(def, "env_vars")) && !json_is_null(v))
			add_env_json(p, v);
		if (c->folder && *c->folder) /* what its cmd may name (../scripts/common/...) */
			copy_put(p, root, c->folder);
	} else {
		if (bi->pre)
			script_push(&p->pre, &p->n_pre, 0, name, NULL, bi->pre, NULL);
		if (bi->post)
			script_push(&p->post, &p->n_post, p->n_post, name, NULL, bi->post, NULL);
		for (const char *const *e = bi->env; e && e[0] && e[1]; e += 2)
			env_put(&p->env, &p->n_env, e[0], e[1]);
	}
	if ((v = json_object_get(entry, "env_vars")) && !json_is_null(v))
		add_env_json(p, v);
	add_cmd(p, seen, n_seen, tool_cmd(def, bi, entry));
	add_outputs(p, name, def, bi, entry);
	return 0;
}

int rm_tools_resolve(const rm_tools_config *c, const json_t *ctx, const char *root,
		     rm_tool_plan *plan, rm_error *err)
{
	const json_t *tools = json_object_get(ctx, "tools"),
		     *enc = json_object_get(ctx, "encapsulate_script");
	char **seen = rm_xcalloc(1, sizeof(*seen));
	size_t n_seen = 0, i;
	json_t *e;
	int ret = -1;

	memset(plan, 0, sizeof(*plan));
	plan->tools = rm_xcalloc(1, sizeof(*plan->tools));
	plan->sources = rm_xcalloc(1, sizeof(*plan->sources));
	if (enc && !json_is_null(enc)) {
		if (!clean_str(enc)) {
			rm_error_set(err, RM_ERR_INPUT,
				     "context key 'encapsulate_script' is not a string");
			goto out;
		}
		if (*clean_str(enc))
			plan->wrap = rm_xstrdup(clean_str(enc));
	}
	if (ctx_scripts(plan, ctx, "pre_scripts", root, err) < 0 ||
	    ctx_scripts(plan, ctx, "post_scripts", root, err) < 0)
		goto out;
	if (tools && !json_is_null(tools) && !json_is_array(tools)) {
		rm_error_set(err, RM_ERR_INPUT,
			     "context key 'tools' is not a list ([{\"name\": \"rocprofv3\"}])");
		goto out;
	}
	json_array_foreach (tools, i, e) {
		const char *name;
		if (check_entry(e, i, &name, err) < 0 ||
		    add_tool(plan, c, e, name, root, &seen, &n_seen, err) < 0)
			goto out;
	}
	/* madengine joins with blanks ("cmd_B cmd_A <model>"); trailing ones say nothing */
	if (plan->wrap) {
		size_t n = strlen(plan->wrap);
		while (n && (plan->wrap[n - 1] == ' ' || plan->wrap[n - 1] == '\t'))
			plan->wrap[--n] = '\0';
		if (!n) {
			free(plan->wrap);
			plan->wrap = NULL;
		}
	}
	ret = 0;
out:
	rm_strv_free(seen);
	if (ret < 0)
		rm_tool_plan_release(plan);
	return ret;
}

int rm_tool_plan_empty(const rm_tool_plan *p)
{
	return !p->n_pre && !p->n_post && !p->wrap && !p->n_env && !p->n_outputs;
}

static void scripts_copy(rm_tool_script **dst, const rm_tool_script *src, size_t n)
{
	*dst = n ? rm_xcalloc(n, sizeof(**dst)) : NULL;
	for (size_t i = 0; i < n; i++)
		(*dst)[i] = (rm_tool_script){rm_xstrdup(src[i].tool), rm_xstrdup(src[i].path),
					     rm_xstrdup(src[i].text), rm_xstrdup(src[i].args)};
}

static char **strv_copy(char *const *v, size_t n)
{
	char **out = rm_xcalloc(1, sizeof(*out));
	size_t k = 0;

	for (size_t i = 0; v && i < n; i++)
		out = rm_strv_push(out, &k, v[i]);
	return out;
}

void rm_tool_plan_copy(rm_tool_plan *dst, const rm_tool_plan *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->tools = strv_copy(src->tools, src->n_tools);
	dst->sources = strv_copy(src->sources, src->sources ? src->n_tools : 0);
	dst->n_tools = src->n_tools;
	scripts_copy(&dst->pre, src->pre, src->n_pre);
	dst->n_pre = src->n_pre;
	scripts_copy(&dst->post, src->post, src->n_post);
	dst->n_post = src->n_post;
	dst->wrap = rm_xstrdup(src->wrap);
	dst->env = src->n_env ? rm_xcalloc(src->n_env, sizeof(*dst->env)) : NULL;
	for (size_t i = 0; i < src->n_env; i++)
		dst->env[i] = (rm_kv){rm_xstrdup(src->env[i].key), rm_xstrdup(src->env[i].value)};
	dst->n_env = src->n_env;
	dst->outputs = src->n_outputs ? rm_xcalloc(src->n_outputs, sizeof(*dst->outputs)) : NULL;
	for (size_t i = 0; i < src->n_outputs; i++)
		dst->outputs[i] = (rm_tool_output){rm_xstrdup(src->outputs[i].tool),
						   rm_xstrdup(src->outputs[i].glob)};
	dst->n_outputs = src->n_outputs;
	dst->copies = src->n_copies ? rm_xcalloc(src->n_copies, sizeof(*dst->copies)) : NULL;
	for (size_t i = 0; i < src->n_copies; i++)
		dst->copies[i] = (rm_tool_copy){rm_xstrdup(src->copies[i].host),
						rm_xstrdup(src->copies[i].dest)};
	dst->n_copies = src->n_copies;
}

static void scripts_free(rm_tool_script *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].tool);
		free(v[i].path);
		free(v[i].text);
		free(v[i].args);
	}
	free(v);
}

void rm_tool_plan_release(rm_tool_plan *p)
{
	if (!p)
		return;
	rm_strv_free(p->tools);
	rm_strv_free(p->sources);
	scripts_free(p->pre, p->n_pre);
	scripts_free(p->post, p->n_post);
	free(p->wrap);
	for (size_t i = 0; i < p->n_env; i++) {
		free(p->env[i].key);
		free(p->env[i].value);
	}
	free(p->env);
	for (size_t i = 0; i < p->n_outputs; i++) {
		free(p->outputs[i].tool);
		free(p->outputs[i].glob);
	}
	free(p->outputs);
	for (size_t i = 0; i < p->n_copies; i++) {
		free(p->copies[i].host);
		free(p->copies[i].dest);
	}
	free(p->copies);
	memset(p, 0, sizeof(*p));
}
