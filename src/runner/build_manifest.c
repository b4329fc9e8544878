/*
 * The build manifest (rm/runner.h): read for `run --manifest`, written by `build`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "rm/engine.h"
#include "rm/runner.h"
#include "rm/util.h"
#include "rm/version.h"

#define MANIFEST_MAX_BYTES ((size_t)64 << 20)

static char *build_manifest_str_or_null(json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));
	return s && *s ? rm_xstrdup(s) : NULL;
}

static void image_release(rm_built_image *mi)
{
	free(mi->key);
	free(mi->model);
	free(mi->dockerfile);
	free(mi->base_image);
	free(mi->registry_image);
	free(mi->digest);
	free(mi->image_id);
	free(mi->reason);
}

void rm_build_manifest_release(rm_build_manifest *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		image_release(&m->images[i]);
	free(m->images);
	free(m->path);
	memset(m, 0, sizeof(*m));
}

static int read_entry(rm_build_manifest *m, const char *key, json_t *img, json_t *models,
		      rm_error *err)
{
	rm_built_image mi = {0};
	json_t *model = json_object_get(models, key);
	const char *status = json_string_value(json_object_get(img, "status"));

	if (!json_is_object(img))
		return rm_error_set(err, RM_ERR_INPUT, "'%s': built_images.%s is not an object",
				    m->path, key);
	mi.model = build_manifest_str_or_null(model, "name");
	if (!mi.model)
		return rm_error_set(err, RM_ERR_INPUT,
				    "'%s': built_images.%s has no model (built_models.%s.name)",
				    m->path, key, key);
	mi.key = rm_xstrdup(key);
	mi.dockerfile = build_manifest_str_or_null(img, "dockerfile");
	mi.base_image = build_manifest_str_or_null(img, "base_docker");
	mi.registry_image = build_manifest_str_or_null(img, "registry_image");
	mi.digest = build_manifest_str_or_null(img, "digest");
	mi.image_id = build_manifest_str_or_null(img, "docker_sha");
	mi.failed = status && rm_status_of(status) != RM_STATUS_SUCCESS;
	mi.reason = build_manifest_str_or_null(img, "reason");
	m->images = rm_xrealloc(m->images, (m->n + 1) * sizeof(*m->images));
	m->images[m->n++] = mi;
	return 0;
}

int rm_build_manifest_load(rm_build_manifest *m, const char *path, rm_error *err)
{
	char *text = NULL;
	json_error_t je;
	json_t *doc = NULL, *images, *models, *img;
	const char *key;
	size_t len = 0;
	int r, ret = -1;

	memset(m, 0, sizeof(*m));
	m->path = rm_xstrdup(path);
	r = rm_read_file(path, MANIFEST_MAX_BYTES, &text, &len, err);
	if (r != 0) {
		if (rm_error_missing(err))
			rm_error_set(err, RM_ERR_INPUT,
				     "cannot open the manifest '%s': no such file", path);
		err->kind = RM_ERR_INPUT;
		goto out;
	}
	doc = json_loadb(text, len, 0, &je);
	if (!doc) {
		rm_error_set(err, RM_ERR_INPUT, "'%s' line %d: %s", path, je.line, je.text);
		goto out;
	}
	images = json_object_get(doc, "built_images");
	models = json_object_get(doc, "built_models");
	if (!json_is_object(images)) {
		rm_error_set(err, RM_ERR_INPUT,
			     "'%s' is not a build manifest: it has no \"built_images\" object "
			     "(write one with run_models build)",
			     path);
		goto out;
	}
	json_object_foreach (images, key, img)
		if (read_entry(m, key, img, models, err) < 0)
			goto out;
	ret = 0;
out:
	if (ret < 0)
		rm_build_manifest_release(m);
	json_decref(doc);
	free(text);
	return ret;
}

char *rm_built_image_ref(const rm_built_image *mi)
{
	char *repo = NULL, *tag = NULL, *ref;

	if (mi->registry_image && mi->digest &&
	    rm_image_ref_split(mi->registry_image, &repo, &tag) == 0) {
		ref = rm_xasprintf("%s@%s", repo, mi->digest);
		free(repo);
		free(tag);
		return ref;
	}
	return rm_xstrdup(mi->registry_image ? mi->registry_image : mi->key);
}

int rm_build_manifest_has_model(const rm_build_manifest *m, const char *model)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->images[i].model, model))
			return 1;
	return 0;
}

json_t *rm_build_manifest_new(const char *registry, json_t *context, json_t *deployment)
{
	json_t *doc = json_object();

	json_object_set_new(doc, "built_images", json_object());
	json_object_set_new(doc, "built_models", json_object());
	json_object_set_new(doc, "context", context ? json_deep_copy(context) : json_object());
	json_object_set_new(doc, "deployment_config",
			    deployment ? json_deep_copy(deployment) : json_object());
	json_object_set_new(doc, "registry", registry ? json_string(registry) : json_null());
	json_object_set_new(doc, "run_models_version", json_string(RM_VERSION));
	return doc;
}

static void set_str(json_t *o, const char *key, const char *v)
{
	json_object_set_new(o, key, v ? json_string(v) : json_null());
}

void rm_build_manifest_add(json_t *doc, const rm_built_image *mi, json_t *model_json,
			   const char *fingerprint, double build_s, double push_s, int reused)
{
	json_t *e = json_object();

	set_str(e, "docker_image", mi->key);
	set_str(e, "registry_image", mi->registry_image);
	set_str(e, "digest", mi->digest);
	set_str(e, "docker_sha", mi->image_id);
	set_str(e, "dockerfile", mi->dockerfile);
	set_str(e, "base_docker", mi->base_image);
	set_str(e, "fingerprint", fingerprint);
	json_object_set_new(e, "build_duration", json_real(build_s));
	json_object_set_new(e, "push_duration", json_real(push_s));
	json_object_set_new(e, "reused", json_boolean(reused));
	set_str(e, "status", rm_status_name(mi->failed ? RM_STATUS_FAILURE : RM_STATUS_SUCCESS));
	if (mi->reason)
		set_str(e, "reason", mi->reason);
	json_object_set_new(json_object_get(doc, "built_images"), mi->key, e);
	json_object_set_new(json_object_get(doc, "built_models"), mi->key, model_json);
}

int rm_build_manifest_write(json_t *doc, const char *path, rm_error *err)
{
	char *text = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
	int ret;

	if (!text)
		return rm_error_set(err, RM_ERR_INTERNAL, "cannot encode the manifest");
	ret = rm_write_file_atomic(path, text, strlen(text), 0644, err);
	if (ret < 0)
		rm_error_wrap(err, "the manifest");
	free(text);
	return ret;
}
