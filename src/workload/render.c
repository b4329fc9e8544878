/*
 * A workload rendered as a POST /containers/create body for the host that runs it:
 * environment, GPUs, mounts, run options (the command is cmd.c's, the data render_data.c's).
 * Pure: no engine, no files; every launcher and dry run uses it, and unit tests check it.
 */
#include <ctype.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "workload_internal.h"

/* Env is a list of "K=V"; a later setting of K replaces an earlier one in place. */
static void env_set(json_t *env, const char *key, const char *value)
{
	size_t klen = strlen(key), i;
	json_t *item;
	char *kv = rm_xasprintf("%s=%s", key, value ? value : "");

	json_array_foreach (env, i, item) {
		const char *s = json_string_value(item);
		if (s && !strncmp(s, key, klen) && s[klen] == '=') {
			json_array_set_new(env, i, json_string(kv));
			free(kv);
			return;
		}
	}
	json_array_append_new(env, json_string(kv));
	free(kv);
}

static void env_set_kv(json_t *env, const char *kv)
{
	const char *eq = strchr(kv, '=');
	if (!eq) {
		env_set(env, kv, "");
		return;
	}
	char *k = rm_xstrndup(kv, (size_t)(eq - kv));
	env_set(env, k, eq + 1);
	free(k);
}

/* Parses "0,2-4" into GPU indexes. */
static int gpu_list(const char *s, long **out, size_t *n, rm_error *err)
{
	long *v = NULL;
	size_t nv = 0;
	char **parts = NULL;
	const char *p = s;

	while (*p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char *piece = rm_xstrndup(p, len);
		char *dash = strchr(piece, '-');
		long a, b;
		int bad;
		if (dash) {
			*dash = '\0';
			bad = rm_parse_long(piece, 0, 4095, &a) ||
			      rm_parse_long(dash + 1, 0, 4095, &b) || b < a;
		} else {
			bad = rm_parse_long(piece, 0, 4095, &a);
			b = a;
		}
		free(piece);
		if (bad) {
			free(v);
			rm_strv_free(parts);
			return rm_error_set(err, RM_ERR_INPUT,
					    "docker_gpus '%s': expected indexes like \"0,2-4\"", s);
		}
		for (long g = a; g <= b; g++) {
			v = rm_xrealloc(v, (nv + 1) * sizeof(*v));
			v[nv++] = g;
		}
		p = end ? end + 1 : p + len;
	}
	*out = v;
	*n = nv;
	return 0;
}

static json_t *device(const char *path)
{
	return json_pack("{s:s, s:s, s:s}", "PathOnHost", path, "PathInContainer", path,
			 "CgroupPermissions", "rwm");
}

/* A device node the runner adds (GPUs, /dev/fuse): the context key docker_device_root puts
 * the host side under another folder (tests use stand-in nodes; the container still sees
 * /dev/...). */
static json_t *gpu_device(const rm_context *ctx, const char *path)
{
	const char *root = rm_context_get(ctx, "docker_device_root");
	json_t *d = device(path);
	if (root && *root) {
		char *host = rm_xasprintf("%s%s", root, path + strlen("/dev"));
		json_object_set_new(d, "PathOnHost", json_string(host));
		free(host);
	}
	return d;
}

static void array_add_str(json_t *obj, const char *key, const char *s)
{
	json_t *a = json_object_get(obj, key);
	if (!a) {
		a = json_array();
		json_object_set_new(obj, key, a);
	}
	json_array_append_new(a, json_string(s));
}

/* ---- binds the folder asks for (issue: a folder must not reach the host unasked) ---- */

/* path normalised lexically: "//", "/./", "x/.." and a trailing '/' removed. */
static char *norm_path(const char *path)
{
	char *out = rm_xmalloc(strlen(path) + 2), *o = out;
	const char *p = path;

	while (*p) {
		size_t n;
		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (n == 0)
			break;
		if (n == 1 && p[0] == '.') {
			/* nothing */
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			while (o > out && *--o != '/')
				;
		} else {
			*o++ = '/';
			memcpy(o, p, n);
			o += n;
		}
		p += n;
	}
	if (o == out)
		*o++ = '/';
	*o = '\0';
	return out;
}

/* Whether path is dir or inside it. */
static int under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

const char *rm_workload__sensitive_bind(const char *host_path, int read_only)
{
	static const char *const system[] = {
	    "/bin",  "/boot", "/dev",  "/etc", "/lib", "/lib32",	  "/lib64", "/libx32",
	    "/proc", "/root", "/sbin", "/sys", "/usr", "/var/lib/docker", NULL};
	static const char *const socket_dirs[] = {"/run", "/var", "/var/run", NULL};
	char *p;
	const char *why = NULL;

	if (!host_path || host_path[0] != '/')
		return NULL; /* a named volume */
	p = norm_path(host_path);
	if (!strcmp(p, "/"))
		why = "the host's root folder";
	else if (!strcmp(p, "/run/docker.sock") || !strcmp(p, "/var/run/docker.sock"))
		why = "the Docker engine's socket (control of the engine is root on the host)";
	for (size_t i = 0; !why && socket_dirs[i]; i++)
		if (!strcmp(p, socket_dirs[i]))
			why = "a host system folder that holds the Docker engine's socket";
	for (size_t i = 0; !why && !read_only && system[i]; i++)
		if (under(p, system[i]))
			why = "a host system folder, read-write";
	if (!why && !read_only && !strcmp(p, "/home"))
		why = "every user's home folder, read-write";
	free(p);
	return why;
}

/* A bind the folder asks for ("host:container[:options]"): refused when it reaches the host
 * where it must not, unless the user allowed it. */
static int check_bind(const rm_workload *w, const char *bind, const char *what, rm_error *err)
{
	char *host = rm_xstrndup(bind, strcspn(bind, ":"));
	const char *opts = strchr(bind, ':') ? strchr(strchr(bind, ':') + 1, ':') : NULL;
	const char *why;
	int ro = 0, ret = 0;

	/* the options after the container path: "ro", "ro,z", "rprivate,ro" ... */
	while (opts && *opts) {
		size_t n;
		opts++;
		n = strcspn(opts, ",");
		ro |= (n == 2 && !strncmp(opts, "ro", 2)) ||
		      (n == 8 && !strncmp(opts, "readonly", 8));
		opts += n;
	}
	why = rm_workload__sensitive_bind(host, ro);

	if (why && !w->set.allow_sensitive_mounts)
		ret = rm_error_set(err, RM_ERR_INPUT,
				   "%s '%s' binds %s into the container; remove it, or give "
				   "--allow-sensitive-mounts if you trust this folder",
				   what, bind, why);
	free(host);
	return ret;
}

/*
 * additional_docker_run_options is docker CLI text ("--shm-size 16G -e A=1"). We speak the
 * API, so the options MAD models use are translated; anything else is an error naming the
 * option, rather than a silently different container.
 */
/* One docker run option that takes a value, into the create body. */
static int set_run_option(const rm_workload *w, json_t *config, json_t *hc, const char *name,
			  char *val, rm_error *err)
{
	if (!strcmp(name, "--shm-size")) {
		long long b;
		if (rm_parse_size(val, &b))
			return rm_error_set(err, RM_ERR_INPUT, "--shm-size '%s' is not a size",
					    val);
		json_object_set_new(hc, "ShmSize", json_integer(b));
	} else if (!strcmp(name, "-e") || !strcmp(name, "--env")) {
		env_set_kv(json_object_get(config, "Env"), val);
	} else if (!strcmp(name, "-v") || !strcmp(name, "--volume")) {
		char *what = rm_xasprintf("option '%s'", name);
		int bad = check_bind(w, val, what, err);
		free(what);
		if (bad < 0)
			return -1;
		array_add_str(hc, "Binds", val);
	} else if (!strcmp(name, "--cap-add")) {
		array_add_str(hc, "CapAdd", val);
	} else if (!strcmp(name, "--group-add")) {
		array_add_str(hc, "GroupAdd", val);
	} else if (!strcmp(name, "--security-opt")) {
		array_add_str(hc, "SecurityOpt", val);
	} else if (!strcmp(name, "--device")) {
		char *c = strchr(val, ':');
		if (c)
			*c = '\0';
		json_t *d = device(val);
		if (c)
			json_object_set_new(d, "PathInContainer", json_string(c + 1));
		json_array_append_new(json_object_get(hc, "Devices"), d);
	} else if (!strcmp(name, "--ipc")) {
		json_object_set_new(hc, "IpcMode", json_string(val));
	} else if (!strcmp(name, "--network") || !strcmp(name, "--net")) {
		json_object_set_new(hc, "NetworkMode", json_string(val));
	} else if (!strcmp(name, "-u") || !strcmp(name, "--user")) {
		json_object_set_new(config, "User", json_string(val));
	} else if (!strcmp(name, "--ulimit")) {
		/* name=soft[:hard] */
		char *e = strchr(val, '='), *colon;
		long long soft, hard;
		if (!e)
			return rm_error_set(err, RM_ERR_INPUT,
					    "--ulimit '%s': expected name=soft[:hard]", val);
		*e = '\0';
		colon = strchr(e + 1, ':');
		if (colon)
			*colon = '\0';
		soft = strtoll(e + 1, NULL, 10);
		hard = colon ? strtoll(colon + 1, NULL, 10) : soft;
		json_t *u = json_object_get(hc, "Ulimits");
		if (!u)
			json_object_set_new(hc, "Ulimits", u = json_array());
		json_array_append_new(u, json_pack("{s:s, s:I, s:I}", "Name", val, "Soft",
						   (json_int_t)soft, "Hard", (json_int_t)hard));
	} else {
		return rm_error_set(
		    err, RM_ERR_INPUT,
		    "docker run option '%s' is not supported (supported: "
		    "--shm-size -e -v --cap-add --group-add --security-opt --device "
		    "--ipc --network -u --ulimit --privileged --init)",
		    name);
	}
	return 0;
}

static int apply_run_options(const rm_workload *w, json_t *config, json_t *hc, rm_error *err)
{
	const char *opts = w->model->additional_docker_run_options;
	char **words = NULL;
	size_t n = 0;
	int ret = -1;

	if (!opts || !*opts)
		return 0;
	if (rm_split_words(opts, &words, &n, err) < 0)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		char *name = words[i], *val = NULL, *eq = NULL;
		if (name[0] == '-' && name[1] == '-' && (eq = strchr(name, '=')))
			*eq = '\0', val = eq + 1;
		static const char *const flags[] = {"--privileged", "--rm", "-it",
						    "-i",	    "-t",   "--init"};
		int is_flag = 0;
		for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++)
			is_flag |= !strcmp(name, flags[f]);
		if (is_flag) {
			if (!strcmp(name, "--privileged"))
				json_object_set_new(hc, "Privileged", json_true());
			if (!strcmp(name, "--init"))
				json_object_set_new(hc, "Init", json_true());
			continue;
		}
		if (!val) {
			if (i + 1 >= n) {
				rm_error_set(err, RM_ERR_INPUT, "option '%s' needs a value", name);
				goto fail;
			}
			val = words[++i];
		}
		if (set_run_option(w, config, hc, name, val, err) < 0)
			goto fail;
	}
	ret = 0;
fail:
	if (ret < 0)
		rm_error_wrap(err, "model '%s': field 'additional_docker_run_options'",
			      w->model->name);
	rm_strv_free(words);
	return ret;
}

/* The value of name in an environ-like vector, or NULL. */
static const char *env_value(const char *const *env, const char *name)
{
	size_t len = strlen(name);

	for (const char *const *e = env; e && *e; e++)
		if (!strncmp(*e, name, len) && (*e)[len] == '=')
			return *e + len + 1;
	return NULL;
}

/* MAD_GUEST_OS: the context's guest_os, upper case (madengine's rocEnvTool reads it). */
static char *guest_os(const rm_context *ctx)
{
	char *s = rm_xstrdup(ctx->guest_os && *ctx->guest_os ? ctx->guest_os : "UBUNTU");
	for (char *p = s; *p; p++)
		*p = (char)toupper((unsigned char)*p);
	return s;
}

/* Whether the context's docker_env_vars (or what a launcher added) set key. */
static int workload_env_has(const rm_workload *w, const char *key)
{
	for (size_t i = 0; i < w->n_env; i++)
		if (!strcmp(w->env[i].key, key))
			return 1;
	return 0;
}

/* MAD's variables (the host's GPU facts, as madengine's core/context.py and
 * container_runner.py set them), the data's, the tools', the context's and the model's, and
 * the secrets named in the workload with their values on this host. */
static void render_env(const rm_workload *w, const rm_context *ctx, const char *const *host_env,
		       json_t *env)
{
	const rm_model *m = w->model;
	const char *vendor = ctx->gpu_vendor;
	long runtime = rm_workload_gpus(w, ctx);
	rm_kv *kv;
	size_t n_kv;
	char *tmp;

	env_set(env, "MAD_MODEL_NAME", m->name);
	env_set(env, "MAD_GPU_VENDOR", vendor ? vendor : "NONE");
	tmp = rm_xasprintf("%ld", ctx->n_gpus);
	env_set(env, "MAD_SYSTEM_NGPUS", tmp);
	free(tmp);
	tmp = rm_xasprintf("%ld", runtime);
	env_set(env, "MAD_RUNTIME_NGPUS", tmp);
	free(tmp);
	env_set(env, "MAD_SYSTEM_GPU_ARCHITECTURE", ctx->gpu_arch ? ctx->gpu_arch : "");
	env_set(env, "MAD_SYSTEM_GPU_PRODUCT_NAME",
		ctx->gpu_product_name ? ctx->gpu_product_name : "");
	env_set(env, "MAD_SYSTEM_HIP_VERSION", ctx->hip_version ? ctx->hip_version : "");
	tmp = guest_os(ctx);
	env_set(env, "MAD_GUEST_OS", tmp);
	free(tmp);
	tmp = rm_dist_runner(rm_dist_launcher_find(w->dist_launcher), 1, runtime, 0);
	env_set(env, "MAD_MULTI_NODE_RUNNER", tmp);
	free(tmp);
	if (m->multiple_results && *m->multiple_results)
		env_set(env, "MAD_OUTPUT_CSV", m->multiple_results);
	env_set(env, "JENKINS_BUILD_NUMBER", w->build_number ? w->build_number : "0");
	/* madengine: Ray (in rocm/vllm images) ignores HIP_VISIBLE_DEVICES unless this is
	 * empty; docker_env_vars may still set it */
	if (workload_env_has(w, "HIP_VISIBLE_DEVICES"))
		env_set(env, "RAY_EXPERIMENTAL_NOSET_HIP_VISIBLE_DEVICES", "");
	env_set(env, "MAD_RUN_ID", w->run_id);
	/* madengine: MAD_DATANAME is the model's data field whether or not a provider serves
	 * it; MAD_DATAHOME only what a provider serves. */
	if (w->data.n)
		env_set(env, "MAD_DATAHOME", w->data.datahome);
	if (m->data && *m->data)
		env_set(env, "MAD_DATANAME", m->data);
	/* The tools' env_vars, before the context's docker_env_vars (which win, as in
	 * madengine). */
	for (size_t i = 0; i < w->tools.n_env; i++)
		env_set(env, w->tools.env[i].key, w->tools.env[i].value);
	for (size_t i = 0; i < w->n_env; i++)
		env_set(env, w->env[i].key, w->env[i].value);
	kv = rm_workload_env_vars(w, &n_kv); /* the card's, the context's over them */
	for (size_t i = 0; i < n_kv; i++)
		env_set(env, kv[i].key, kv[i].value);
	rm_workload_kv_free(kv, n_kv);
	/* Secrets travel in the request body only: never argv, never a build arg. */
	for (size_t i = 0; i < w->n_secrets; i++) {
		const char *v = env_value(host_env, w->secrets[i]);
		if (v)
			env_set(env, w->secrets[i], v);
	}
}

int rm_workload_gpu_indexes(const rm_workload *w, const rm_context *ctx, long **out, size_t *n,
			    rm_error *err)
{
	long runtime = rm_workload_gpus(w, ctx);

	*out = NULL;
	*n = 0;
	if (!ctx->gpu_vendor || runtime <= 0)
		return 0;
	if (w->gpus)
		return gpu_list(w->gpus, out, n, err);
	*n = (size_t)runtime;
	*out = rm_xcalloc(*n, sizeof(**out));
	for (size_t i = 0; i < *n; i++)
		(*out)[i] = (long)i;
	return 0;
}

size_t rm_workload_preflight(const rm_workload *w, const rm_context *ctx, const char *sysfs_root,
			     rm_finding **v, size_t *n)
{
	rm_preflight_opts po = RM_PREFLIGHT_OPTS_INIT;
	rm_error err = RM_ERROR_INIT;
	long *gpus = NULL;
	size_t n_gpus = 0, n_fail = 0;

	*v = NULL;
	*n = 0;
	if (w->set.preflight == RM_PREFLIGHT_ON &&
	    rm_workload_gpu_indexes(w, ctx, &gpus, &n_gpus, &err) == 0 && n_gpus) {
		po.ctx = ctx;
		if (sysfs_root)
			po.sysfs_root = sysfs_root;
		po.gpus = gpus;
		po.n_gpus = n_gpus;
		n_fail = rm_doctor_preflight(&po, v, n);
	}
	free(gpus);
	return n_fail;
}

/*
 * NVIDIA GPUs on Podman: CDI devices (the Docker API's DeviceRequests of driver "cdi"),
 * nvidia.com/gpu=all for all of the host's, else nvidia.com/gpu=<index> each; Podman ignores
 * Docker's NVIDIA runtime request. Each must be in the host's CDI specs, else the engine
 * could not start the container: refused here, before anything is built.
 */
static int render_cdi(const rm_workload *w, const rm_context *ctx, long runtime, const long *gpus,
		      size_t n_gpus, json_t *hc, rm_error *err)
{
	json_t *ids = json_array();
	int all = !w->gpus && runtime == ctx->n_gpus;

	for (size_t i = 0; i < (all ? 1 : n_gpus); i++) {
		char *name = all ? rm_xstrdup(RM_CDI_NVIDIA "=all")
				 : rm_xasprintf(RM_CDI_NVIDIA "=%ld", gpus[i]);
		if (!rm_context_cdi_has(ctx, name)) {
			if (!ctx->n_cdi_specs)
				rm_error_set(
				    err, RM_ERR_INPUT,
				    "NVIDIA GPUs on Podman are CDI devices and this host "
				    "has no CDI spec (/etc/cdi, /var/run/cdi): make one with "
				    "'sudo nvidia-ctk cdi generate --output=/etc/cdi/"
				    "nvidia.yaml' (NVIDIA Container Toolkit), or run on "
				    "Docker (--engine docker)");
			else
				rm_error_set(err, RM_ERR_INPUT,
					     "NVIDIA GPUs on Podman are CDI devices and the host's "
					     "CDI specs have no '%s' ('nvidia-ctk cdi list' shows "
					     "what they have; 'sudo nvidia-ctk cdi generate "
					     "--output=/etc/cdi/nvidia.yaml' makes them again)",
					     name);
			free(name);
			json_decref(ids);
			return -1;
		}
		json_array_append_new(ids, json_string(name));
		free(name);
	}
	json_object_set_new(hc, "DeviceRequests",
			    json_pack("[{s:s, s:o}]", "Driver", "cdi", "DeviceIDs", ids));
	return 0;
}

/* The GPUs: AMD's device nodes and capabilities, or NVIDIA's device request (Docker) or
 * CDI devices (Podman). */
static int render_gpus(const rm_workload *w, const rm_context *ctx, json_t *body, json_t *hc,
		       rm_error *err)
{
	const char *vendor = ctx->gpu_vendor;
	long runtime = rm_workload_gpus(w, ctx);
	json_t *devices = json_object_get(hc, "Devices");
	long *gpus = NULL;
	size_t n_gpus = 0;
	char *tmp;
	int ret = -1;

	if (rm_workload_gpu_indexes(w, ctx, &gpus, &n_gpus, err) < 0)
		goto fail;
	/* madengine's container_runner.py, per vendor, whatever the model's GPU count: AMD
	 * "--network host -u root --group-add video --cap-add=SYS_PTRACE --cap-add SYS_ADMIN
	 * --device /dev/fuse --security-opt seccomp=unconfined --security-opt
	 * apparmor=unconfined --ipc=host"; NVIDIA the same without the video group, with
	 * --cap-add SYS_NICE. */
	if (vendor && (!strcmp(vendor, "AMD") || !strcmp(vendor, "NVIDIA"))) {
		int amd = !strcmp(vendor, "AMD");
		json_object_set_new(body, "User", json_string("root"));
		json_object_set_new(hc, "IpcMode", json_string("host"));
		if (amd)
			json_object_set_new(hc, "GroupAdd", json_pack("[s]", "video"));
		json_object_set_new(
		    hc, "CapAdd",
		    amd ? json_pack("[s, s]", "SYS_PTRACE", "SYS_ADMIN")
			: json_pack("[s, s, s]", "SYS_PTRACE", "SYS_ADMIN", "SYS_NICE"));
		json_object_set_new(
		    hc, "SecurityOpt",
		    json_pack("[s, s]", "seccomp=unconfined", "apparmor=unconfined"));
		/* out of habit: no GPU run needs it, and a host without it (containers in
		 * containers, minimal VMs) would fail every run at start */
		if (!ctx->no_fuse)
			json_array_append_new(devices, gpu_device(ctx, "/dev/fuse"));
	}
	if (vendor && !strcmp(vendor, "AMD") && runtime != 0) {
		json_array_append_new(devices, gpu_device(ctx, "/dev/kfd"));
		int all = !w->gpus && runtime == ctx->n_gpus;
		if (all || ctx->n_render_nodes == 0) {
			json_array_append_new(devices, gpu_device(ctx, "/dev/dri"));
		} else {
			for (size_t i = 0; i < n_gpus; i++) {
				if (gpus[i] < 0 || (size_t)gpus[i] >= ctx->n_render_nodes) {
					rm_error_set(err, RM_ERR_INPUT,
						     "GPU %ld is not on this host (%zu GPUs)",
						     gpus[i], ctx->n_render_nodes);
					goto fail;
				}
				tmp =
				    rm_xasprintf("/dev/dri/renderD%ld", ctx->render_nodes[gpus[i]]);
				json_array_append_new(devices, gpu_device(ctx, tmp));
				free(tmp);
			}
		}
	} else if (vendor && !strcmp(vendor, "NVIDIA") && runtime != 0 &&
		   ctx->engine == RM_ENGINE_PODMAN) {
		if (render_cdi(w, ctx, runtime, gpus, n_gpus, hc, err) < 0)
			goto fail;
	} else if (vendor && !strcmp(vendor, "NVIDIA") && runtime != 0) {
		json_t *req = json_pack("{s:s, s:[[s]]}", "Driver", "", "Capabilities", "gpu");
		if (w->gpus || runtime != ctx->n_gpus) {
			json_t *ids = json_array();
			for (size_t i = 0; i < n_gpus; i++) {
				tmp = rm_xasprintf("%ld", gpus[i]);
				json_array_append_new(ids, json_string(tmp));
				free(tmp);
			}
			json_object_set_new(req, "DeviceIDs", ids);
		} else {
			json_object_set_new(req, "Count", json_integer(-1));
		}
		json_object_set_new(hc, "DeviceRequests", json_pack("[o]", req));
	}
	ret = 0;
fail:
	free(gpus);
	return ret;
}

/* PyTorch TunableOp: on (tuning, results kept on the host) or off. */
static void render_tunableop(const rm_workload *w, json_t *env, json_t *hc)
{
	if (w->tunableop == RM_TUNABLEOP_ON) {
		env_set(env, "PYTORCH_TUNABLEOP_ENABLED", "1");
		env_set(env, "PYTORCH_TUNABLEOP_TUNING", "1");
		env_set(env, "PYTORCH_TUNABLEOP_FILENAME",
			RM_TUNABLEOP_DIR "/tunableop_results%d.csv");
		if (w->tunableop_dir) {
			char *b = rm_xasprintf("%s:%s", w->tunableop_dir, RM_TUNABLEOP_DIR);
			array_add_str(hc, "Binds", b);
			free(b);
		}
	} else if (w->tunableop == RM_TUNABLEOP_OFF) {
		env_set(env, "PYTORCH_TUNABLEOP_ENABLED", "0");
		env_set(env, "PYTORCH_TUNABLEOP_TUNING", "0");
	}
}

/* HostConfig: network, mounts, data, GPUs, CPUs, /dev/shm, TunableOp, the model's run
 * options. */
static int render_host(const rm_workload *w, const rm_context *host, json_t *body, json_t *hc,
		       rm_error *err)
{
	json_t *env = json_object_get(body, "Env");

	json_object_set_new(hc, "NetworkMode", json_string("host"));
	json_object_set_new(hc, "AutoRemove", json_false());
	for (size_t i = 0; i < w->n_mounts; i++) {
		char *b = rm_xasprintf("%s:%s", w->mounts[i].value, w->mounts[i].key);
		array_add_str(hc, "Binds", b);
		free(b);
	}
	if (rm_workload__data_binds(w, hc, err) < 0)
		return -1;

	if (render_gpus(w, host, body, hc, err) < 0)
		return -1;
	if (w->cpus && host->engine_no_cgroups) {
		rm_error_set(
		    err, RM_ERR_INPUT,
		    "docker_cpus '%s': rootless Podman on cgroup v1 cannot limit a "
		    "container's CPUs (a user has no cgroup of their own there); run as "
		    "root, on cgroup v2 with the cpuset controller delegated to your user, "
		    "or without docker_cpus",
		    w->cpus);
		return -1;
	}
	if (w->cpus)
		json_object_set_new(hc, "CpusetCpus", json_string(w->cpus));
	if (w->set.shm_size > 0)
		json_object_set_new(hc, "ShmSize", json_integer((json_int_t)w->set.shm_size));
	render_tunableop(w, env, hc);
	if (apply_run_options(w, body, hc, err) < 0)
		return -1;
	return 0;
}

int rm_workload_render(const rm_workload *w, const rm_context *host, const char *const *host_env,
		       json_t **out, rm_error *err)
{
	const rm_model *m = w->model;
	json_t *body = json_object(), *hc = json_object(), *env = json_array();
	json_t *cmd = json_array(), *labels = json_object(), *devices = json_array();
	char **argv = NULL, *dir = NULL, *workdir = NULL;
	int ret = -1;

	json_object_set_new(body, "Env", env);
	json_object_set_new(body, "Cmd", cmd);
	json_object_set_new(body, "Labels", labels);
	json_object_set_new(body, "HostConfig", hc);
	json_object_set_new(hc, "Devices", devices);

	if (rm_workload_check_placeholders(w, err) < 0 || rm_workload_cmd(w, &argv, err) < 0)
		goto out;
	for (char **p = argv; *p; p++)
		json_array_append_new(cmd, json_string(*p));
	dir = rm_model_dir(m);
	workdir =
	    m->url && *m->url ? rm_xstrdup(RM_WORKSPACE) : rm_xasprintf("%s/%s", RM_WORKSPACE, dir);
	json_object_set_new(body, "Image", json_string(w->image));
	json_object_set_new(body, "WorkingDir", json_string(workdir));
	json_object_set_new(body, "Tty", json_false());
	json_object_set_new(body, "AttachStdout", json_true());
	json_object_set_new(body, "AttachStderr", json_true());
	json_object_set_new(body, "OpenStdin", json_false());

	/* The launcher adds the runner's labels (host, pid) when it creates the container. */
	json_object_set_new(labels, "run_models", json_string("1"));
	json_object_set_new(labels, "run_models.run", json_string(w->run_id));
	json_object_set_new(labels, "run_models.model", json_string(m->name));
	/* --keep-alive: the user keeps it on purpose; a later run must not reap it. */
	if (w->set.keep_alive)
		json_object_set_new(labels, "run_models.keep", json_string("1"));

	render_env(w, host, host_env, env);

	if (render_host(w, host, body, hc, err) < 0)
		goto out;
	*out = body;
	body = NULL;
	ret = 0;
out:
	json_decref(body);
	rm_strv_free(argv);
	free(dir);
	free(workdir);
	return ret;
}
