/*
 * The launcher table. Adding a launcher is one new file and one row here, above "docker",
 * which claims every context no other launcher claims.
 */
#include <jansson.h>
#include <string.h>

#include "docker_internal.h"
#include "slurm.h"
#include "rm/launcher.h"

const rm_launcher_ops *const rm_launchers[] = {
    &rm_launcher_slurm,
    &rm_launcher_docker,
    NULL,
};

void rm_launcher_probe_all(const char *docker_host, rm_finding **v, size_t *n)
{
	for (size_t i = 0; rm_launchers[i]; i++) {
		rm_probe p = {RM_FINDING_NONE, NULL, NULL};
		if (!rm_launchers[i]->probe)
			continue;
		rm_launchers[i]->probe(docker_host, &p);
		if (p.status != RM_FINDING_NONE) {
			rm_findings_add(v, n, p.status, rm_launchers[i]->name, p.detail, p.action);
		} else {
			free(p.detail);
			free(p.action);
		}
	}
}

int rm_launcher_open(rm_launcher *l, const rm_launcher_config *cfg, rm_error *err)
{
	l->ops = NULL;
	l->state = NULL;
	for (size_t i = 0; rm_launchers[i]; i++) {
		if (!rm_launchers[i]->claims(cfg->ctx))
			continue;
		if (rm_launchers[i]->open(&l->state, cfg, err) < 0)
			return -1;
		l->ops = rm_launchers[i];
		return 0;
	}
	return rm_error_set(err, RM_ERR_INTERNAL, "no launcher claims this context");
}

int rm_launcher_open_batch_host(rm_launcher *l, const rm_launcher_config *cfg, rm_error *err)
{
	for (size_t i = 0; rm_launchers[i]; i++)
		if (rm_launchers[i]->batch_host)
			return rm_launcher_open_named(l, rm_launchers[i]->name, cfg, err);
	return rm_error_set(err, RM_ERR_INTERNAL,
			    "no launcher runs a card's script on a batch host");
}

int rm_launcher_open_named(rm_launcher *l, const char *name, const rm_launcher_config *cfg,
			   rm_error *err)
{
	l->ops = NULL;
	l->state = NULL;
	for (size_t i = 0; rm_launchers[i]; i++) {
		if (strcmp(rm_launchers[i]->name, name) != 0)
			continue;
		if (rm_launchers[i]->open(&l->state, cfg, err) < 0)
			return -1;
		l->ops = rm_launchers[i];
		return 0;
	}
	return rm_error_set(err, RM_ERR_INTERNAL, "no launcher is called '%s'", name);
}

void rm_launcher_engine_facts(const rm_launcher *l, rm_context *ctx)
{
	if (l->ops && l->ops->engine)
		l->ops->engine(l->state, ctx);
}

void rm_launcher_close(rm_launcher *l)
{
	if (l->ops)
		l->ops->close(l->state);
	l->ops = NULL;
	l->state = NULL;
}

json_t *rm_launcher_deployment(const rm_context *ctx)
{
	json_t *d = json_object();

	for (size_t i = 0; rm_launchers[i]; i++)
		for (const char *const *k = rm_launchers[i]->context_keys; k && *k; k++) {
			json_t *v = json_object_get(ctx->obj, *k);
			if (v)
				json_object_set(d, *k, v);
		}
	return d;
}
