/*
 * The CDI devices of this host (Container Device Interface): the specs that Podman (and
 * Docker 25+) read from /etc/cdi and /var/run/cdi, each a JSON or YAML file of a "kind"
 * ("nvidia.com/gpu") and its "devices" ([{"name": "0"}, {"name": "all"}, ...]), which make
 * the fully-qualified device names "nvidia.com/gpu=0". NVIDIA's Container Toolkit writes
 * them (nvidia-ctk cdi generate). A spec that cannot be read is skipped: the engine will
 * not resolve its devices either.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "context_internal.h"
#include "rm/util.h"

#define MAX_CDI_SPEC (4u * 1024 * 1024)

static const char *const cdi_dirs[] = {"/etc/cdi", "/var/run/cdi", NULL};

static int cdi_by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_spec(const struct dirent *e)
{
	return rm_ends_with(e->d_name, ".json") || rm_ends_with(e->d_name, ".yaml") ||
	       rm_ends_with(e->d_name, ".yml");
}

static char **push(char **v, size_t *n, const char *s)
{
	if (!v)
		v = rm_xcalloc(1, sizeof(*v));
	return rm_strv_push(v, n, s);
}

static void read_spec(rm_context *ctx, const char *path)
{
	char *text = NULL;
	size_t len = 0, i;
	rm_error err = RM_ERROR_INIT;
	json_t *spec, *dev;

	if (rm_read_file(path, MAX_CDI_SPEC, &text, &len, &err) < 0)
		return;
	spec = rm_yaml_to_json(text, len, path, &err);
	free(text);
	const char *kind = json_string_value(json_object_get(spec, "kind"));
	if (kind && strchr(kind, '/')) {
		ctx->cdi_specs = push(ctx->cdi_specs, &ctx->n_cdi_specs, path);
		json_array_foreach (json_object_get(spec, "devices"), i, dev) {
			const char *name = json_string_value(json_object_get(dev, "name"));
			char *q;
			if (!name || !*name)
				continue;
			q = rm_xasprintf("%s=%s", kind, name);
			if (!rm_context_cdi_has(ctx, q))
				ctx->cdi_devices = push(ctx->cdi_devices, &ctx->n_cdi_devices, q);
			free(q);
		}
	}
	json_decref(spec);
}

void rm_context__detect_cdi(rm_context *ctx)
{
	for (size_t d = 0; cdi_dirs[d]; d++) {
		struct dirent **ents = NULL;
		int n = scandir(cdi_dirs[d], &ents, is_spec, cdi_by_name);
		for (int i = 0; i < n; i++) {
			char *path = rm_xasprintf("%s/%s", cdi_dirs[d], ents[i]->d_name);
			read_spec(ctx, path);
			free(path);
			free(ents[i]);
		}
		free(ents);
	}
}

int rm_context_cdi_has(const rm_context *ctx, const char *name)
{
	for (size_t i = 0; i < ctx->n_cdi_devices; i++)
		if (!strcmp(ctx->cdi_devices[i], name))
			return 1;
	return 0;
}
