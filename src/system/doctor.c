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
#include "rm/util.h"

#include "system_internal.h"

/* Takes ownership of detail and action (action NULL for OK). */
const rm_choice rm_finding_words[] = {
    {"OK", RM_FINDING_OK}, {"WARN", RM_FINDING_WARN}, {"FAIL", RM_FINDING_FAIL}, {NULL, 0}};

void rm_findings_add(rm_finding **v, size_t *n, rm_finding_status status, const char *check,
		     char *detail, char *action)
{
	rm_finding *f;

	*v = rm_xrealloc(*v, (*n + 1) * sizeof(**v));
	f = &(*v)[(*n)++];
	f->status = status;
	f->check = rm_xstrdup(check);
	f->detail = detail;
	f->action = action;
}

void rm_system__doctor_add(struct findings *fs, rm_finding_status status, const char *check,
			   char *detail, char *action)
{
	rm_findings_add(&fs->v, &fs->n, status, check, detail, action);
}

/* The first line of a small file, trimmed; NULL (errno set) when it cannot be opened. */
char *rm_system__doctor_read_line(const char *path)
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
 * it printed nothing. *status receives its exit status, -1 when it could not run or was
 * stopped: at most 15 s, and at once on a Ctrl-C (rm_proc_capture), so a tool that hangs
 * (nvidia-smi with a driver in a bad state) never hangs doctor. */
char *rm_system__doctor_tool_line(const char *cmd, int *status)
{
	char *const argv[] = {"/bin/sh", "-c", (char *)cmd, NULL}; /* as popen(3) */
	rm_proc_out po;
	rm_error err = RM_ERROR_INIT;
	char *line = NULL, *cur, *nl;

	*status = -1;
	if (rm_proc_capture(argv, 15.0, (size_t)1 << 20, &po, &err) == 0)
		*status = po.status;
	else if (po.timed_out)
		rm_warn("'%s' did not answer within 15 s; it was stopped", cmd);
	for (cur = po.out; cur && *cur && !line; cur = nl ? nl + 1 : cur + strlen(cur)) {
		char *s;
		nl = strchr(cur, '\n');
		if (nl)
			*nl = '\0';
		s = rm_trim(cur);
		if (*s)
			line = rm_xstrdup(s);
	}
	rm_proc_out_release(&po);
	return line;
}

char *rm_system__doctor_gib(unsigned long long bytes)
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

	rm_system__doctor_add(
	    fs, RM_FINDING_OK, "os",
	    rm_xasprintf("%s, %s", pretty ? pretty : "unknown distribution", kernel), NULL);
	free(pretty);
	free(kernel);
}

/* ---- NUMA balancing ---- */

static void check_numa(struct findings *fs, const char *proc)
{
	char *path = rm_xasprintf("%s/sys/kernel/numa_balancing", proc);
	char *v = rm_system__doctor_read_line(path);
	long mode;

	if (!v && errno == ENOENT) {
		rm_system__doctor_add(fs, RM_FINDING_OK, "numa_balancing",
				      rm_xstrdup("not present (kernel without NUMA balancing)"),
				      NULL);
	} else if (!v) {
		rm_error e = RM_ERROR_INIT;
		rm_error_sys(&e, RM_ERR_IO, errno, "cannot read '%s'", path);
		rm_system__doctor_add(
		    fs, RM_FINDING_WARN, "numa_balancing", rm_xstrdup(rm_error_text(&e)),
		    rm_xstrdup("check it with 'sysctl kernel.numa_balancing'; 0 is wanted"));
	} else if (rm_parse_long(v, 0, 1000, &mode) < 0) {
		rm_system__doctor_add(
		    fs, RM_FINDING_WARN, "numa_balancing",
		    rm_xasprintf("'%s' holds '%s', not a number", path, v),
		    rm_xstrdup("check it with 'sysctl kernel.numa_balancing'; 0 is wanted"));
	} else if (mode == 0) {
		rm_system__doctor_add(fs, RM_FINDING_OK, "numa_balancing",
				      rm_xstrdup("0 (disabled)"), NULL);
	} else {
		/* 1 is classic balancing, 2 memory tiering (5.18+): both migrate pages under a
		 * running benchmark. */
		rm_system__doctor_add(
		    fs, RM_FINDING_WARN, "numa_balancing",
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

/* ---- /dev/shm ---- */

static void check_shm(struct findings *fs, const char *dev)
{
	char *shm = rm_xasprintf("%s/shm", dev);
	struct statvfs sv;

	/* Containers with a private IPC namespace get a /dev/shm of their own, sized by the
	 * run; only --ipc host containers, as GPU runs are, see this one, whatever size the run
	 * asks for. */
	if (statvfs(shm, &sv) != 0) {
		rm_error e = RM_ERROR_INIT;
		rm_error_sys(&e, RM_ERR_IO, errno, "cannot stat '%s'", shm);
		rm_error_hint(&e, "; containers run with --ipc host (GPU runs) share the host's "
				  "/dev/shm");
		rm_system__doctor_add(
		    fs, RM_FINDING_WARN, "shm", rm_xstrdup(rm_error_text(&e)),
		    rm_xstrdup("mount a tmpfs there: sudo mount -t tmpfs -o size=64G tmpfs "
			       "/dev/shm"));
	} else {
		unsigned long long size = (unsigned long long)sv.f_blocks * sv.f_frsize;
		unsigned long long avail = (unsigned long long)sv.f_bavail * sv.f_frsize;
		char *s = rm_system__doctor_gib(size), *a = rm_system__doctor_gib(avail);

		if (size < SHM_WANT)
			rm_system__doctor_add(
			    fs, RM_FINDING_WARN, "shm",
			    rm_xasprintf(
				"'%s' is %s (%s free), under 8 GiB: containers run with "
				"--ipc host (GPU runs) share it whatever size the run asks "
				"for; others get a /dev/shm of their own",
				shm, s, a),
			    rm_xstrdup("sudo mount -o remount,size=64G /dev/shm (the ROCm guides "
				       "use 8G to 64G)"));
		else
			rm_system__doctor_add(fs, RM_FINDING_OK, "shm",
					      rm_xasprintf("'%s' is %s (%s free)", shm, s, a),
					      NULL);
		free(s);
		free(a);
	}
	free(shm);
}

/* ---- /dev/fuse ---- */

/* madengine adds --device /dev/fuse to every GPU run; a host without it (containers in
 * containers, minimal VMs) runs without it, and says so once per run. */
static void check_fuse(struct findings *fs, const char *dev)
{
	char *fuse = rm_xasprintf("%s/fuse", dev);
	struct stat st;

	if (stat(fuse, &st) == 0 && S_ISCHR(st.st_mode))
		rm_system__doctor_add(
		    fs, RM_FINDING_OK, "fuse",
		    rm_xasprintf("'%s' is there: GPU runs get it as madengine's do", fuse), NULL);
	else
		rm_system__doctor_add(
		    fs, RM_FINDING_WARN, "fuse",
		    rm_xasprintf("this host has no '%s' (a container, a minimal VM): runs leave "
				 "madengine's '--device /dev/fuse' out, with one warning each",
				 fuse),
		    rm_xstrdup("nothing for most models; one that mounts FUSE file systems in its "
			       "container needs the fuse module: sudo modprobe fuse"));
	free(fuse);
}

/* ---- disk ---- */

static void check_disk(struct findings *fs, const char *check, const char *path,
		       const char *purpose, const char *free_up)
{
	struct statvfs sv;
	unsigned long long avail;
	char *a;

	if (statvfs(path, &sv) != 0) {
		rm_error e = RM_ERROR_INIT;
		rm_error_sys(&e, RM_ERR_IO, errno, "cannot stat '%s'", path);
		rm_system__doctor_add(fs, RM_FINDING_WARN, check, rm_xstrdup(rm_error_text(&e)),
				      rm_xasprintf("make sure '%s' exists and is readable", path));
		return;
	}
	avail = (unsigned long long)sv.f_bavail * sv.f_frsize;
	a = rm_system__doctor_gib(avail);
	if (avail < DISK_FAIL)
		rm_system__doctor_add(
		    fs, RM_FINDING_FAIL, check,
		    rm_xasprintf("'%s' has %s free, under 2 GiB: %s", path, a, purpose),
		    rm_xstrdup(free_up));
	else if (avail < DISK_WARN)
		rm_system__doctor_add(
		    fs, RM_FINDING_WARN, check,
		    rm_xasprintf("'%s' has %s free, under 20 GiB: %s", path, a, purpose),
		    rm_xstrdup(free_up));
	else
		rm_system__doctor_add(fs, RM_FINDING_OK, check,
				      rm_xasprintf("'%s' has %s free", path, a), NULL);
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
		rm_system__doctor_add(
		    fs, RM_FINDING_OK, "disk_images",
		    rm_xasprintf("not checked: no docker data root at '%s' here (engine remote, "
				 "rootless or started with --data-root)",
				 root),
		    NULL);
	free(root);
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
	if (d.backends) /* where workloads run: each launcher's back end */
		d.backends(d.docker_host, &fs.v, &fs.n);
	rm_system__check_gpus(&fs, &d);
	check_shm(&fs, d.dev_root);
	check_fuse(&fs, d.dev_root);
	check_disks(&fs, &d);
	rm_system__check_rocm(&fs, &d);
	rm_system__check_cuda(&fs, &d);
	*out = fs.v;
	*n = fs.n;
}

void rm_doctor_print(FILE *f, const rm_finding *v, size_t n)
{
	/* the terminal gets its statuses coloured; a file (--sys-env-details) never */
	int term = f == stdout || f == stderr;

	for (size_t i = 0; i < n; i++) {
		enum rm_color c = v[i].status == RM_FINDING_OK	   ? RM_COLOR_GOOD
				  : v[i].status == RM_FINDING_WARN ? RM_COLOR_WARN
								   : RM_COLOR_BAD;
		fprintf(f, "%s%-6s%s%-16s %s\n", term ? rm_color_start(f, c) : "",
			rm_choice_name(rm_finding_words, v[i].status),
			term ? rm_color_end(f, c) : "", v[i].check, v[i].detail);
		if (v[i].action)
			fprintf(f, "      -> %s\n", v[i].action);
	}
}

/* Details quote paths and tool output, which need not be UTF-8; jansson refuses such
 * strings, so stray bytes become '?' rather than losing the finding. */
static json_t *doctor_jstr(const char *s)
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
		json_object_set_new(o, "status",
				    doctor_jstr(rm_choice_name(rm_finding_words, v[i].status)));
		json_object_set_new(o, "check", doctor_jstr(v[i].check));
		json_object_set_new(o, "detail", doctor_jstr(v[i].detail));
		json_object_set_new(o, "action", doctor_jstr(v[i].action));
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
		return rm_error_sys(err, RM_ERR_IO, errno, "cannot write '%s'", path);
	rm_doctor_collect(o, &v, &n);
	rm_doctor_print(f, v, n);
	if (fclose(f) != 0)
		ret = rm_error_sys(err, RM_ERR_IO, errno, "cannot write '%s'", path);
	rm_findings_free(v, n);
	return ret;
}
