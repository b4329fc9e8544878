/*
 * run --manifest: the images a build manifest holds, run as they are. Nothing is built and
 * no Dockerfile is read; the launcher's prepare gets the image by reference (the Docker
 * launcher pulls it when the engine lacks it; SLURM hands the reference to the nodes). A
 * model the manifest lacks, or whose build failed, gets a FAILURE row and the others run.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "rm/util.h"

/* "docker/smoke.ubuntu.amd.Dockerfile" -> "smoke.ubuntu.amd"; else the image name. */
static char *prebuilt_stem_of(const rm_built_image *mi)
{
	const char *base = mi->dockerfile ? strrchr(mi->dockerfile, '/') : NULL;
	char *s;

	if (!mi->dockerfile)
		return rm_xstrdup(mi->key);
	s = rm_xstrdup(base ? base + 1 : mi->dockerfile);
	if (rm_ends_with(s, ".Dockerfile"))
		s[strlen(s) - strlen(".Dockerfile")] = '\0';
	return s;
}

int rm_runner__run_from_manifest(struct run *r, const rm_selected *s, rm_workload *w, size_t *k,
				 rm_error *err)
{
	const rm_model *m = s->model;
	size_t n = 0, ok = 0;
	int ret = 0;

	for (size_t i = 0; i < r->man.n; i++)
		if (!strcmp(r->man.images[i].model, m->name)) {
			n++;
			ok += !r->man.images[i].failed;
		}
	if (!n) {
		char *why =
		    rm_xasprintf("the build manifest '%s' has no image of this model (build "
				 "it with: run_models build --tags %s --manifest %s)",
				 r->man.path, m->name, r->man.path);
		ret = rm_runner__cannot_run(r, s, w, NULL, why, err);
		free(why);
		return ret;
	}
	for (size_t i = 0; i < r->man.n && ret == 0 && !rm_signal_received(); i++) {
		const rm_built_image *mi = &r->man.images[i];
		if (strcmp(mi->model, m->name) != 0)
			continue;
		if (mi->failed) {
			char *why = rm_xasprintf(
			    "the build of image '%s' failed (manifest '%s'): %s", mi->key,
			    r->man.path, mi->reason ? mi->reason : "no reason given");
			ret = rm_runner__cannot_run(r, s, w, NULL, why, err);
			free(why);
			continue;
		}
		char *ref = rm_built_image_ref(mi), *stem = prebuilt_stem_of(mi);
		struct image_src src = {ref, mi->dockerfile, mi->base_image, stem};
		ret = rm_runner__run_given(r, s, w, &src, ok, k, err);
		free(stem);
		free(ref);
	}
	return ret;
}

int rm_runner__select_from_manifest(struct run *r, rm_error *err)
{
	for (size_t i = 0; i < r->man.n; i++) {
		const char *name = r->man.images[i].model;
		const rm_model *m = rm_registry_find(&r->reg, name);
		int seen = 0;

		for (size_t j = 0; j < r->sel.n && !seen; j++)
			seen = r->sel.items[j].model == m;
		if (seen)
			continue;
		if (!m)
			return rm_error_set(
			    err, RM_ERR_INPUT,
			    "the manifest '%s' names model '%s', which the registry "
			    "(models.json) does not have",
			    r->man.path, name);
		r->sel.items = rm_xrealloc(r->sel.items, (r->sel.n + 1) * sizeof(*r->sel.items));
		r->sel.items[r->sel.n++] = (rm_selected){m, NULL};
	}
	if (!r->sel.n)
		return rm_error_set(err, RM_ERR_INPUT, "the manifest '%s' holds no image",
				    r->man.path);
	return 0;
}
