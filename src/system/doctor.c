/*
 * System checks before benchmarking (see include/rm/doctor.h).
 *
 * Every probe turns its own failure into a finding: a host where /proc, a tool or the engine
 * is missing still gets a full report. Paths under /proc, /sys and /dev come from the
 * options so that tests can hand in fake trees; the few fixed paths (/etc/os-release, the
 * ROCm and CUDA install folders, the Docker data root) are only read for information.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <jansson.h>

#include "rm/context.h"
#include "rm/doctor.h"
#include "rm/launcher.h"
#include "rm/util.h"

#define GIB ((unsigned long long)1 << 30)

/* The ROCm guides start containers with --shm-size 8G to 64G; PyTorch data loaders and
 * RCCL/NCCL put their buffers there. */
#define SHM_WANT (8 * GIB)
/* Seed workload images are 20-60 GB; a run also writes logs and perf files. */
#define DISK_WARN (20 * GIB)
#define DISK_FAIL (2 * GIB)

struct findings {
	rm_finding *v;
	size_t n;
};

/* Takes ownership of detail and action (action NULL for OK). */
static void add(struct findings *fs, const char *status, const char *check, char *detail,
		char *action)
{
	rm_finding *f;

	fs->v = rm_xrealloc(fs->v, (fs->n + 1) * sizeof(*fs->v));
	f = &fs->v[fs->n++];
	f->status = status;
	f->check = rm_xstrdup(check);
	f->detail = detail;
	f->action = action;
}

/* The first line of a small file, trimmed; NULL (errno set) when it cannot be opened. */
static char *read_line(const char *path)
{
	char buf[512];
	FILE *f = fopen(path, "r");

	if (!f)
		return NULL;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return rm_xstrdup(rm_trim(buf));
}

/* The first non-empty output line of a fixed command line (stderr dropped), or NULL when
 * it printed nothing. *status receives the exit status as pclose gives it. */
static char *tool_line(const char *cmd, int *status)
{
	char buf[1024], *line = NULL;
	char *full = rm_xasprintf("%s 2>/dev/null", cmd);
	FILE *p = popen(full, "r");

	free(full);
	*status = -1;
	if (!p)
		return NULL;
	while (fgets(buf, sizeof(buf), p)) {
		char *s = rm_trim(buf);
		if (*s && !line)
			line = rm_xstrdup(s);
	}
	*status = pclose(p);
	return line;
}

static char *gib(unsigned long long bytes)
{
	return rm_xasprintf("%.1f GiB", (double)bytes / (double)GIB);
}

/* ---- os ---- */

/* PRETTY_NAME from os-release(5): a shell-style assignment, maybe quoted. */
static char *os_pretty_name(void)
{
	static const char *const files[] = {"/etc/os-release", "/usr/lib/os-release"};
	char buf[512];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		FILE *f = fopen(files[i], "r");
		char *name = NULL;

		if (!f)
			continue;
		while (!name && fgets(buf, sizeof(buf), f)) {
			char *v = rm_trim(buf), *o;

			if (!rm_starts_with(v, "PRETTY_NAME="))
				continue;
			v += strlen("PRETTY_NAME=");
			if (*v == '"' || *v == '\'') {
				char q = *v++;
				char *start = v;
				/* Unquote in place, honouring backslash escapes in "...". */
				for (o = v; *v && *v != q; v++) {
					if (q == '"' && *v == '\\' && v[1])
						v++;
					*o++ = *v;
				}
				*o = '\0';
				v = start;
			}
			name = rm_xstrdup(v);
		}
		fclose(f);
		if (name)
			return name;
	}
	return NULL;
}

static void check_os(struct findings *fs)
{
	struct utsname u;
	char *pretty = os_pretty_name();
	char *kernel = uname(&u) == 0 ? rm_xasprintf("%s %s %s", u.sysname, u.release, u.machine)
				      : rm_xstrdup("unknown kernel");

	add(fs, "OK", "os",
	    rm_xasprintf("%s, %s", pretty ? pretty : "unknown distribution", kernel), NULL);
	free(pretty);
	free(kernel);
}

/* ---- NUMA balancing ---- */

static void check_numa(struct findings *fs, const char *proc)
{
	char *path = rm_xasprintf("%s/sys/kernel/numa_balancing", proc);
	char *v = read_line(path);
	long mode;

	if (!v && errno == ENOENT) {
		add(fs, "OK", "numa_balancing",
		    rm_xstrdup("not present (kernel without NUMA balancing)"), NULL);
	} else if (!v) {
		add(fs, "WARN", "numa_balancing",
		    rm_xasprintf("cannot read '%s': %s", path, strerror(errno)),
		    rm_xstrdup("check it with 'sysctl kernel.numa_balancing'; 0 is wanted"));
	} else if (rm_parse_long(v, 0, 1000, &mode) < 0) {
		add(fs, "WARN", "numa_balancing",
		    rm_xasprintf("'%s' holds '%s', not a number", path, v),
		    rm_xstrdup("check it with 'sysctl kernel.numa_balancing'; 0 is wanted"));
	} else if (mode == 0) {
		add(fs, "OK", "numa_balancing", rm_xstrdup("0 (disabled)"), NULL);
	} else {
		/* 1 is classic balancing, 2 memory tiering (5.18+): both migrate pages under a
		 * running benchmark. */
		add(fs, "WARN", "numa_balancing",
		    rm_xasprintf("%ld (enabled): the kernel migrates memory between NUMA nodes "
				 "during runs, which makes results noisy; AMD's system validation "
				 "disables it before benchmarking",
				 mode),
		    rm_xstrdup(
			"sudo sysctl kernel.numa_balancing=0 (add kernel.numa_balancing=0 to "
			"/etc/sysctl.d/ to keep it after a reboot)"));
	}
	free(v);
	free(path);
}

/* ---- where workloads run: each launcher's back end (the Docker engine, ...) ---- */

static void check_launchers(struct findings *fs, const char *host)
{
	for (size_t i = 0; rm_launchers[i]; i++) {
		rm_probe p = {NULL, NULL, NULL};
		if (!rm_launchers[i]->probe)
			continue;
		rm_launchers[i]->probe(host, &p);
		if (p.status)
			add(fs, p.status, rm_launchers[i]->name, p.detail, p.action);
		else {
			free(p.detail);
			free(p.action);
		}
	}
}

/* ---- GPUs ---- */

static int count_render_nodes(const char *dri)
{
	DIR *dir = opendir(dri);
	struct dirent *e;
	int n = 0;

	if (!dir)
		return 0;
	while ((e = readdir(dir)))
		if (rm_starts_with(e->d_name, "renderD"))
			n++;
	closedir(dir);
	return n;
}

static void check_amd(struct findings *fs, const rm_context *ctx, const char *sysfs,
		      const char *dev)
{
	char *kfd = rm_xasprintf("%s/kfd", dev);
	char *dri = rm_xasprintf("%s/dri", dev);
	char *what = rm_xasprintf("%ld AMD GPU(s), %s", ctx->n_gpus,
				  ctx->gpu_arch ? ctx->gpu_arch : "unknown architecture");
	rm_buf missing = RM_BUF_INIT(4096), nodes = RM_BUF_INIT(4096);
	char *denied = NULL;
	struct stat st;

	if (stat(kfd, &st) != 0) {
		/* Typical inside a container started without --device /dev/kfd: sysfs shows
		 * the topology, /dev does not have the node. */
		add(fs, "FAIL", "gpus",
		    rm_xasprintf("%s in '%s/class/kfd': amdgpu driver loaded but '%s' missing",
				 what, sysfs, kfd),
		    rm_xstrdup(
			"inside a container, start it with --device /dev/kfd --device "
			"/dev/dri; on the host, reload the driver (sudo modprobe amdgpu) and "
			"look for amdgpu errors in dmesg"));
		goto out;
	}
	if (access(kfd, R_OK | W_OK) != 0 && errno == EACCES)
		denied = rm_xstrdup(kfd);
	if (ctx->n_render_nodes) {
		for (size_t i = 0; i < ctx->n_render_nodes; i++) {
			char *node = rm_xasprintf("%s/renderD%ld", dri, ctx->render_nodes[i]);
			int present = stat(node, &st) == 0;
			rm_buf *into = present ? &nodes : &missing;

			rm_buf_addf(into, "%srenderD%ld", into->len ? ", " : "",
				    ctx->render_nodes[i]);
			if (present && !denied && access(node, R_OK | W_OK) != 0 && errno == EACCES)
				denied = node;
			else
				free(node);
		}
	} else {
		int n = count_render_nodes(dri);
		if (n)
			rm_buf_addf(&nodes, "%d render node(s)", n);
		else
			rm_buf_addstr(&missing, "any renderD* node");
	}
	if (missing.len) {
		add(fs, "FAIL", "gpus",
		    rm_xasprintf("%s, but '%s' lacks %s", what, dri, rm_buf_str(&missing)),
		    rm_xstrdup("inside a container, start it with --device /dev/dri; on the host, "
			       "check that udev created the DRM nodes (ls -l /dev/dri) and look "
			       "for amdgpu errors in dmesg"));
	} else if (denied) {
		/* dockerd opens the devices for containers, so runs still work; host tools
		 * (rocminfo, amd-smi) and GPU detection through them do not. */
		add(fs, "WARN", "gpus",
		    rm_xasprintf("%s, but this user cannot open %s: rocminfo and amd-smi fail on "
				 "the host (containers still get the devices through dockerd)",
				 what, denied),
		    rm_xstrdup("sudo usermod -aG video,render $USER, then log in again"));
	} else {
		add(fs, "OK", "gpus",
		    rm_xasprintf("%s; '%s' and %s present", what, kfd, rm_buf_str(&nodes)), NULL);
	}
out:
	free(denied);
	rm_buf_release(&missing);
	rm_buf_release(&nodes);
	free(what);
	free(dri);
	free(kfd);
}

static void check_gpus(struct findings *fs, const rm_doctor_opts *o)
{
	rm_context ctx;
	rm_error err = RM_ERROR_INIT;

	if (rm_context_detect(&ctx, o->sysfs_root, o->use_tools, &err) < 0) {
		add(fs, "WARN", "gpus", rm_xasprintf("cannot detect GPUs: %s", err.msg),
		    rm_xasprintf("check that '%s/class/kfd' is readable, or give the GPUs with "
				 "--additional-context",
				 o->sysfs_root));
		return;
	}
	if (ctx.gpu_vendor && !strcmp(ctx.gpu_vendor, "AMD")) {
		check_amd(fs, &ctx, o->sysfs_root, o->dev_root);
	} else if (ctx.gpu_vendor && !strcmp(ctx.gpu_vendor, "NVIDIA")) {
		char *what = rm_xasprintf("%ld NVIDIA GPU(s), %s", ctx.n_gpus,
					  ctx.gpu_arch ? ctx.gpu_arch : "unknown architecture");
		/* dockerd serves DeviceRequests through this hook; without it every GPU run
		 * fails at container start with "could not select device driver". */
		if (!rm_on_path("nvidia-container-runtime-hook") &&
		    !rm_on_path("nvidia-container-cli"))
			add(fs, "WARN", "gpus",
			    rm_xasprintf("%s, but the NVIDIA Container Toolkit is not on PATH: "
					 "docker cannot hand GPUs to containers",
					 what),
			    rm_xstrdup("install nvidia-container-toolkit, then sudo nvidia-ctk "
				       "runtime configure --runtime=docker and restart docker"));
		else
			add(fs, "OK", "gpus", rm_xstrdup(what), NULL);
		free(what);
	} else if (ctx.gpu_vendor) {
		add(fs, "OK", "gpus", rm_xasprintf("%ld %s GPU(s)", ctx.n_gpus, ctx.gpu_vendor),
		    NULL);
	} else {
		add(fs, "WARN", "gpus",
		    rm_xasprintf("no GPU found (no GPU in '%s/class/kfd'%s)", o->sysfs_root,
				 o->use_tools ? ", none from rocminfo or nvidia-smi" : ""),
		    rm_xstrdup("only GPU-less models (e.g. tag smoke) can run; dry runs work with "
			       "--additional-context"));
	}
	rm_context_release(&ctx);
}

/* ---- /dev/shm ---- */

static void check_shm(struct findings *fs, const char *dev)
{
	char *shm = rm_xasprintf("%s/shm", dev);
	struct statvfs sv;

	/* Containers with a private IPC namespace get their own /dev/shm (--shm-size,
	 * HostConfig.ShmSize); only --ipc host containers, as GPU runs are, see this one and
	 * there --shm-size has no effect. */
	if (statvfs(shm, &sv) != 0) {
		add(fs, "WARN", "shm",
		    rm_xasprintf("cannot stat '%s': %s; containers run with --ipc host (GPU runs) "
				 "share the host's /dev/shm",
				 shm, strerror(errno)),
		    rm_xstrdup("mount a tmpfs there: sudo mount -t tmpfs -o size=64G tmpfs "
			       "/dev/shm"));
	} else {
		unsigned long long size = (unsigned long long)sv.f_blocks * sv.f_frsize;
		unsigned long long avail = (unsigned long long)sv.f_bavail * sv.f_frsize;
		char *s = gib(size), *a = gib(avail);

		if (size < SHM_WANT)
			add(fs, "WARN", "shm",
			    rm_xasprintf("'%s' is %s (%s free), under 8 GiB: containers run with "
					 "--ipc host (GPU runs) share it and --shm-size does not "
					 "apply to them; others get their own from --shm-size",
					 shm, s, a),
			    rm_xstrdup("sudo mount -o remount,size=64G /dev/shm (the ROCm guides "
				       "use 8G to 64G)"));
		else
			add(fs, "OK", "shm", rm_xasprintf("'%s' is %s (%s free)", shm, s, a), NULL);
		free(s);
		free(a);
	}
	free(shm);
}

/* ---- disk ---- */

static void check_disk(struct findings *fs, const char *check, const char *path,
		       const char *purpose, const char *free_up)
{
	struct statvfs sv;
	unsigned long long avail;
	char *a;

	if (statvfs(path, &sv) != 0) {
		add(fs, "WARN", check, rm_xasprintf("cannot stat '%s': %s", path, strerror(errno)),
		    rm_xasprintf("make sure '%s' exists and is readable", path));
		return;
	}
	avail = (unsigned long long)sv.f_bavail * sv.f_frsize;
	a = gib(avail);
	if (avail < DISK_FAIL)
		add(fs, "FAIL", check,
		    rm_xasprintf("'%s' has %s free, under 2 GiB: %s", path, a, purpose),
		    rm_xstrdup(free_up));
	else if (avail < DISK_WARN)
		add(fs, "WARN", check,
		    rm_xasprintf("'%s' has %s free, under 20 GiB: %s", path, a, purpose),
		    rm_xstrdup(free_up));
	else
		add(fs, "OK", check, rm_xasprintf("'%s' has %s free", path, a), NULL);
	free(a);
}

/* The engine's data root as dockerd's config file sets it, else the default. Without an
 * /info call this cannot see a --data-root given on dockerd's command line. */
static char *docker_data_root(void)
{
	json_t *cfg = json_load_file("/etc/docker/daemon.json", 0, NULL);
	const char *v = json_string_value(json_object_get(cfg, "data-root"));
	char *root = rm_xstrdup(v && *v ? v : "/var/lib/docker");

	json_decref(cfg);
	return root;
}

static void check_disks(struct findings *fs, const rm_doctor_opts *o)
{
	const char *work = o->work_dir ? o->work_dir : ".";
	char *root = docker_data_root();
	struct stat st;

	check_disk(fs, "disk_logs", work, "logs, perf files and --keep-model-dir copies go there",
		   "free space there, or point -o and --log-dir at a larger disk");
	if (stat(root, &st) == 0)
		check_disk(fs, "disk_images", root, "the seed workloads' images are 20-60 GB each",
			   "docker image prune -a (removes unused images), or move the engine's "
			   "data-root to a larger disk");
	else
		add(fs, "OK", "disk_images",
		    rm_xasprintf("not checked: no docker data root at '%s' here (engine remote, "
				 "rootless or started with --data-root)",
				 root),
		    NULL);
	free(root);
}

/* ---- ROCm and CUDA ---- */

static void check_rocm(struct findings *fs, const rm_doctor_opts *o)
{
	const char *rocm = getenv("ROCM_PATH");
	rm_buf b = RM_BUF_INIT(4096);
	char *path, *v;

	if (!rocm || !*rocm)
		rocm = "/opt/rocm";
	path = rm_xasprintf("%s/.info/version", rocm);
	v = read_line(path);
	if (v && *v)
		rm_buf_addf(&b, "ROCm %s in '%s'", v, rocm);
	free(v);
	free(path);
	if (rm_on_path("amd-smi")) {
		int status;
		char *line = o->use_tools ? tool_line("amd-smi version", &status) : NULL;
		rm_buf_addf(&b, "%samd-smi%s%s", b.len ? "; " : "", line ? ": " : " on PATH",
			    line ? line : "");
		free(line);
	}
	if (rm_on_path("rocminfo"))
		rm_buf_addf(&b, "%srocminfo on PATH", b.len ? "; " : "");
	/* Only the DKMS driver (amdgpu-dkms) has a version; the in-tree one does not. */
	path = rm_xasprintf("%s/module/amdgpu/version", o->sysfs_root);
	v = read_line(path);
	if (v && *v)
		rm_buf_addf(&b, "%samdgpu driver %s", b.len ? "; " : "", v);
	free(v);
	free(path);
	if (!b.len)
		rm_buf_addstr(&b, "not installed (containers bring their own ROCm; a GPU host "
				  "needs only the amdgpu driver)");
	add(fs, "OK", "rocm", rm_buf_detach(&b), NULL);
}

/* CUDA toolkit version: version.json (11.1+), else the older version.txt. */
static char *cuda_toolkit_version(void)
{
	const char *home = getenv("CUDA_HOME");
	char *path, *v = NULL;
	json_t *j;

	if (!home || !*home)
		home = "/usr/local/cuda";
	path = rm_xasprintf("%s/version.json", home);
	j = json_load_file(path, 0, NULL);
	free(path);
	if (j) {
		v = rm_xstrdup(
		    json_string_value(json_object_get(json_object_get(j, "cuda"), "version")));
		json_decref(j);
		if (v)
			return v;
	}
	path = rm_xasprintf("%s/version.txt", home);
	v = read_line(path);
	free(path);
	if (v && rm_starts_with(v, "CUDA Version ")) {
		char *t = rm_xstrdup(v + strlen("CUDA Version "));
		free(v);
		return t;
	}
	free(v);
	return NULL;
}

static void check_cuda(struct findings *fs, const rm_doctor_opts *o)
{
	rm_buf b = RM_BUF_INIT(4096);
	char *toolkit = cuda_toolkit_version();

	if (o->use_tools && rm_on_path("nvidia-smi")) {
		int status;
		char *drv = tool_line("nvidia-smi --query-gpu=driver_version --format=csv,noheader",
				      &status);
		if (status != 0) {
			/* nvidia-smi without a loaded driver prints "NVIDIA-SMI has failed ...". */
			add(fs, "WARN", "cuda",
			    rm_xasprintf("nvidia-smi is installed but failed%s%s", drv ? ": " : "",
					 drv ? drv : ""),
			    rm_xstrdup(
				"run nvidia-smi and look for NVRM errors in dmesg; reinstall "
				"or load the NVIDIA driver"));
			free(drv);
			free(toolkit);
			return;
		}
		rm_buf_addf(&b, "NVIDIA driver %s", drv ? drv : "unknown");
		free(drv);
	} else if (rm_on_path("nvidia-smi")) {
		rm_buf_addstr(&b, "nvidia-smi on PATH");
	}
	if (toolkit)
		rm_buf_addf(&b, "%sCUDA toolkit %s", b.len ? "; " : "", toolkit);
	free(toolkit);
	if (!b.len)
		rm_buf_addstr(&b, "not installed");
	add(fs, "OK", "cuda", rm_buf_detach(&b), NULL);
}

/* ---- public ---- */

void rm_doctor_collect(const rm_doctor_opts *o, rm_finding **out, size_t *n)
{
	rm_doctor_opts d = *o;
	struct findings fs = {NULL, 0};

	if (!d.proc_root)
		d.proc_root = "/proc";
	if (!d.sysfs_root)
		d.sysfs_root = "/sys";
	if (!d.dev_root)
		d.dev_root = "/dev";
	check_os(&fs);
	check_numa(&fs, d.proc_root);
	check_launchers(&fs, d.docker_host);
	check_gpus(&fs, &d);
	check_shm(&fs, d.dev_root);
	check_disks(&fs, &d);
	check_rocm(&fs, &d);
	check_cuda(&fs, &d);
	*out = fs.v;
	*n = fs.n;
}

void rm_doctor_print(FILE *f, const rm_finding *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%-6s%-16s %s\n", v[i].status, v[i].check, v[i].detail);
		if (v[i].action)
			fprintf(f, "      -> %s\n", v[i].action);
	}
}

/* Details quote paths and tool output, which need not be UTF-8; jansson refuses such
 * strings, so stray bytes become '?' rather than losing the finding. */
static json_t *jstr(const char *s)
{
	json_t *j;
	char *copy;

	if (!s)
		return json_null();
	j = json_string(s);
	if (j)
		return j;
	copy = rm_xstrdup(s);
	for (char *p = copy; *p; p++)
		if ((unsigned char)*p >= 0x80)
			*p = '?';
	j = json_string(copy);
	free(copy);
	return j;
}

char *rm_doctor_json(const rm_finding *v, size_t n)
{
	json_t *arr = json_array();
	char *s;

	for (size_t i = 0; i < n; i++) {
		json_t *o = json_object();
		json_object_set_new(o, "status", jstr(v[i].status));
		json_object_set_new(o, "check", jstr(v[i].check));
		json_object_set_new(o, "detail", jstr(v[i].detail));
		json_object_set_new(o, "action", jstr(v[i].action));
		json_array_append_new(arr, o);
	}
	s = json_dumps(arr, JSON_INDENT(2));
	json_decref(arr);
	/* json_dumps fails only when out of memory; callers expect a string. */
	return s ? s : rm_xstrdup("[]");
}

void rm_findings_free(rm_finding *v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++) {
		free(v[i].check);
		free(v[i].detail);
		free(v[i].action);
	}
	free(v);
}

int rm_doctor_write(const rm_doctor_opts *o, const char *path, rm_error *err)
{
	rm_finding *v = NULL;
	size_t n = 0;
	FILE *f = fopen(path, "w");
	int ret = 0;

	if (!f)
		return rm_error_set(err, RM_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
	rm_doctor_collect(o, &v, &n);
	rm_doctor_print(f, v, n);
	if (fclose(f) != 0)
		ret = rm_error_set(err, RM_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
	rm_findings_free(v, n);
	return ret;
}
