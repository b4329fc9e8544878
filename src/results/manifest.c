/* run.json: what a run was, written once at its start. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rm/manifest.h"
#include "rm/results.h"
#include "rm/text.h"
#include "rm/util.h"
#include "rm/version.h"

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* A copy of j with every string and object key masked (a tag argument, a suite entry's
 * context or a path may hold a secret's value). */
static json_t *masked_copy(const rm_mask *mask, const json_t *j)
{
	if (json_is_string(j)) {
		char *v = rm_mask_string(mask, json_string_value(j));
		json_t *out = json_string(v);
		free(v);
		return out ? out : json_string("***");
	}
	if (json_is_array(j)) {
		json_t *out = json_array(), *v;
		size_t i;
		json_array_foreach (j, i, v)
			json_array_append_new(out, masked_copy(mask, v));
		return out;
	}
	if (json_is_object(j)) {
		json_t *out = json_object(), *v;
		const char *k;
		json_object_foreach ((json_t *)j, k, v) {
			char *mk = rm_mask_string(mask, k);
			json_object_set_new(out, mk, masked_copy(mask, v));
			free(mk);
		}
		return out;
	}
	return json_deep_copy(j);
}

json_t *rm_manifest_json(const rm_manifest *m)
{
	json_t *o = json_object(), *gpu = json_object(), *versions = json_object();
	json_t *doctor = json_array();
	char host[256] = "", now[32];

	if (!m->host && gethostname(host, sizeof(host) - 1) != 0)
		host[0] = '\0';
	rm_utc_timestamp(now, sizeof(now));
	json_object_set_new(o, "schema", json_integer(1));
	json_object_set_new(o, "run_models_version", json_string(RM_VERSION));
	json_object_set_new(o, "run_id", str_or_null(m->run_id));
	json_object_set_new(o, "started_at", json_string(m->started_at ? m->started_at : now));
	json_object_set_new(o, "host", json_string(m->host ? m->host : host));
	json_object_set_new(o, "git_commit", str_or_null(m->git_commit));
	json_object_set_new(o, "models_root", str_or_null(m->models_root));
	json_object_set_new(o, "suite", str_or_null(m->suite));
	json_object_set_new(o, "suite_file", str_or_null(m->suite_file));
	json_object_set_new(gpu, "vendor", str_or_null(m->gpu_vendor));
	json_object_set_new(gpu, "architecture", str_or_null(m->gpu_arch));
	json_object_set_new(gpu, "count", json_integer(m->n_gpus));
	json_object_set_new(o, "gpu", gpu);
	/* The doctor's findings that name versions: driver, ROCm, CUDA, OS, engine. */
	for (size_t i = 0; i < m->n_findings; i++) {
		const rm_finding *f = &m->findings[i];
		json_t *jf = json_object();
		static const char *const keep[] = {"os", "rocm", "cuda", "gpus", "docker"};
		for (size_t k = 0; k < sizeof(keep) / sizeof(keep[0]); k++)
			if (!strcmp(f->check, keep[k]) && f->detail &&
			    !json_object_get(versions, f->check))
				json_object_set_new(versions, f->check, json_string(f->detail));
		json_object_set_new(jf, "status",
				    json_string(rm_choice_name(rm_finding_words, f->status)));
		json_object_set_new(jf, "check", json_string(f->check));
		json_object_set_new(jf, "detail", str_or_null(f->detail));
		json_object_set_new(jf, "action", str_or_null(f->action));
		json_array_append_new(doctor, jf);
	}
	json_object_set_new(o, "versions", versions);
	json_object_set_new(o, "doctor", doctor);
	json_object_set_new(o, "entries",
			    m->suite_entries ? json_deep_copy(m->suite_entries) : json_array());
	json_object_set_new(o, "options", m->options ? json_deep_copy(m->options) : json_object());
	json_object_set_new(o, "provenance",
			    m->provenance ? json_deep_copy(m->provenance) : json_object());
	if (m->mask && rm_mask_active(m->mask)) {
		json_t *masked = masked_copy(m->mask, o);
		json_decref(o);
		o = masked;
	}
	return o;
}

char *rm_manifest_path(const char *dir, const char *run_id)
{
	return run_id ? rm_xasprintf("%s/run.%s.json", dir, run_id)
		      : rm_xasprintf("%s/run.json", dir);
}

void rm_manifest_link_latest(const char *path)
{
	char *dir = rm_dirname(path), *link = rm_manifest_path(dir, NULL);
	char *tmp = rm_xasprintf("%s.%ld.tmp", link, (long)getpid());
	const char *target = strrchr(path, '/');

	target = target ? target + 1 : path;
	unlink(tmp);
	if (symlink(target, tmp) != 0 || rename(tmp, link) != 0) {
		rm_warn_sys(errno,
			    "cannot point '%s' at '%s' (the run's manifest is there all the "
			    "same)",
			    link, path);
		unlink(tmp);
	}
	free(tmp);
	free(link);
	free(dir);
}

int rm_manifest_write(const char *path, const rm_manifest *m, rm_error *err)
{
	json_t *o = rm_manifest_json(m);
	char *text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	int ret;

	json_decref(o);
	if (!text)
		return rm_error_set(err, RM_ERR_INTERNAL, "cannot encode '%s'", path);
	rm_buf b = RM_BUF_INIT((size_t)64 << 20);
	rm_buf_addstr(&b, text);
	rm_buf_addch(&b, '\n');
	ret = rm_write_text_file(path, b.data, b.len, 0, err);
	rm_buf_release(&b);
	free(text);
	return ret;
}

static const char *str_of(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* The doctor's findings as the writer wrote them (status as its word). */
static void findings_from(const json_t *doctor, rm_manifest_file *f)
{
	size_t i, n = 0;
	const json_t *jf;

	json_array_foreach (doctor, i, jf) {
		int status = RM_FINDING_NONE;
		const char *check = str_of(jf, "check");
		if (!check)
			continue;
		if (rm_choice_parse(rm_finding_words, str_of(jf, "status"), &status) < 0)
			status = RM_FINDING_NONE;
		rm_findings_add(&f->findings, &n, (rm_finding_status)status, check,
				rm_xstrdup(str_of(jf, "detail")), rm_xstrdup(str_of(jf, "action")));
	}
	f->m.findings = f->findings;
	f->m.n_findings = n;
}

int rm_manifest_load(const char *path, rm_manifest_file *out, rm_error *err)
{
	char *text = NULL;
	size_t len = 0;
	json_error_t je;
	json_t *o, *gpu;

	memset(out, 0, sizeof(*out));
	if (rm_read_file(path, (size_t)64 << 20, &text, &len, err) != 0) {
		if (rm_error_missing(err))
			rm_error_sys(err, RM_ERR_IO, ENOENT, "'%s' does not exist", path);
		return -1;
	}
	o = json_loadb(text, len, 0, &je);
	free(text);
	if (!o || !json_is_object(o)) {
		json_decref(o);
		return rm_error_set(err, RM_ERR_INPUT, "'%s' line %d: not a run.json: %s", path,
				    je.line, o ? "not an object" : je.text);
	}
	out->json = o;
	out->m.run_id = str_of(o, "run_id");
	out->m.started_at = str_of(o, "started_at");
	out->m.git_commit = str_of(o, "git_commit");
	out->m.models_root = str_of(o, "models_root");
	out->m.host = str_of(o, "host");
	out->m.suite = str_of(o, "suite");
	out->m.suite_file = str_of(o, "suite_file");
	out->m.suite_entries = json_object_get(o, "entries");
	out->m.options = json_object_get(o, "options");
	out->m.provenance = json_object_get(o, "provenance");
	gpu = json_object_get(o, "gpu");
	out->m.gpu_vendor = str_of(gpu, "vendor");
	out->m.gpu_arch = str_of(gpu, "architecture");
	out->m.n_gpus = json_is_integer(json_object_get(gpu, "count"))
			    ? (long)json_integer_value(json_object_get(gpu, "count"))
			    : -1;
	findings_from(json_object_get(o, "doctor"), out);
	return 0;
}

void rm_manifest_file_release(rm_manifest_file *f)
{
	if (!f)
		return;
	rm_findings_free(f->findings, f->m.n_findings);
	json_decref(f->json);
	memset(f, 0, sizeof(*f));
}
