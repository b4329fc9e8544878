/* nftw() is an XSI function. */
#define _XOPEN_SOURCE 700

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "check.h"
#include "testfs.h"
#include "rm/context.h"
#include "rm/doctor.h"
#include "rm/launcher.h"
#include "rm/util.h"

/* The command layer is not part of the rm library the unit tests link: compile the real
 * command (and the option parser it uses) into this test, so its static doctor_main can be
 * pointed at fake trees and a capture file. */
#include "../../src/cmd/options.c"
#include "../../src/cmd/help.c"
#include "../../src/cmd/cmd_doctor.c"

static char *make_tmp(void)
{
	char tmpl[] = "/tmp/rm_test_doctor_XXXXXX";
	char *d = mkdtemp(tmpl);

	CHECK(d != NULL);
	return rm_xstrdup(d ? d : "/nonexistent");
}

static const rm_finding *find(const rm_finding *v, size_t n, const char *check)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].check, check))
			return &v[i];
	return NULL;
}

static int contains(const char *s, const char *needle)
{
	return s && strstr(s, needle) != NULL;
}

/* A fake host: proc/, sys/ (empty unless gpus), dev/ under one temporary root; the engine
 * at a socket that does not exist, so no test talks to a real one by accident. */
struct fake {
	char *root, *proc, *sys, *dev, *sock;
	rm_doctor_opts o;
};

static void fake_init(struct fake *f)
{
	f->root = make_tmp();
	f->proc = rm_xasprintf("%s/proc", f->root);
	f->sys = rm_xasprintf("%s/sys", f->root);
	f->dev = rm_xasprintf("%s/dev", f->root);
	f->sock = rm_xasprintf("unix://%s/missing/docker.sock", f->root);
	tfs_mkdirs(f->proc);
	tfs_mkdirs(f->sys);
	tfs_mkdirs(f->dev);
	memset(&f->o, 0, sizeof(f->o));
	f->o.proc_root = f->proc;
	f->o.sysfs_root = f->sys;
	f->o.dev_root = f->dev;
	f->o.docker_host = f->sock;
	f->o.backends = rm_launcher_probe_all;
	f->o.work_dir = f->root;
	f->o.use_tools = 0;
}

static void fake_release(struct fake *f)
{
	tfs_rm_tree(f->root);
	free(f->root);
	free(f->proc);
	free(f->sys);
	free(f->dev);
	free(f->sock);
}

/* Two MI300X-like GPUs (gfx942) and a CPU node, as test_context.c builds them. */
static void add_two_gfx942(const struct fake *f)
{
	const char *base = "sys/class/kfd/kfd/topology/nodes";
	char *p0 = rm_xasprintf("%s/0/properties", base);
	char *p1 = rm_xasprintf("%s/1/properties", base);
	char *p2 = rm_xasprintf("%s/2/properties", base);

	tfs_put(f->root, p0, "cpu_cores_count 64\nsimd_count 0\ngfx_target_version 0\n");
	tfs_put(
	    f->root, p1,
	    "cpu_cores_count 0\nsimd_count 1216\ngfx_target_version 90402\ndrm_render_minor 128\n");
	tfs_put(
	    f->root, p2,
	    "cpu_cores_count 0\nsimd_count 1216\ngfx_target_version 90402\ndrm_render_minor 129\n");
	free(p0);
	free(p1);
	free(p2);
}

TEST(numa)
{
	struct fake f;
	rm_finding *v;
	size_t n;
	const rm_finding *x;

	fake_init(&f);
	tfs_put(f.root, "proc/sys/kernel/numa_balancing", "1\n");
	rm_doctor_collect(&f.o, &v, &n);
	x = find(v, n, "numa_balancing");
	CHECK(x != NULL);
	if (x) {
		CHECK_STR(rm_choice_name(rm_finding_words, x->status), "WARN");
		CHECK(contains(x->detail, "1 (enabled)"));
		CHECK(contains(x->action, "sudo sysctl kernel.numa_balancing=0"));
	}
	rm_findings_free(v, n);

	tfs_put(f.root, "proc/sys/kernel/numa_balancing", "0\n");
	rm_doctor_collect(&f.o, &v, &n);
	x = find(v, n, "numa_balancing");
	CHECK(x != NULL);
	if (x) {
		CHECK_STR(rm_choice_name(rm_finding_words, x->status), "OK");
		CHECK_STR(x->detail, "0 (disabled)");
		CHECK(x->action == NULL);
	}
	rm_findings_free(v, n);

	/* A kernel built without CONFIG_NUMA_BALANCING has no such file. */
	char *file = rm_xasprintf("%s/sys/kernel/numa_balancing", f.proc);
	CHECK(unlink(file) == 0);
	free(file);
	rm_doctor_collect(&f.o, &v, &n);
	x = find(v, n, "numa_balancing");
	CHECK(x != NULL);
	if (x) {
		CHECK_STR(rm_choice_name(rm_finding_words, x->status), "OK");
		CHECK(contains(x->detail, "not present"));
	}
	rm_findings_free(v, n);
	fake_release(&f);
}

TEST(amd_devices)
{
	struct fake f;
	rm_finding *v;
	size_t n;
	const rm_finding *x;

	fake_init(&f);
	add_two_gfx942(&f);

	/* GPUs in sysfs, nothing in /dev: what a container without --device sees. */
	rm_doctor_collect(&f.o, &v, &n);
	x = find(v, n, "gpus");
	CHECK(x != NULL);
	if (x) {
		CHECK_STR(rm_choice_name(rm_finding_words, x->status), "FAIL");
		CHECK(contains(x->detail, "2 AMD GPU(s), gfx942"));
		CHECK(contains(x->detail, "amdgpu driver loaded but"));
		CHECK(contains(x->detail, "/dev/kfd' missing"));
		CHECK(contains(x->action, "--device /dev/kfd"));
	}
	rm_findings_free(v, n);

	/* kfd present, one of the two render nodes missing. */
	tfs_put(f.root, "dev/kfd", "");
	tfs_put(f.root, "dev/dri/renderD128", "");
	rm_doctor_collect(&f.o, &v, &n);
	x = find(v, n, "gpus");
	CHECK(x != NULL);
	if (x) {
		CHECK_STR(rm_choice_name(rm_finding_words, x->status), "FAIL");
		CHECK(contains(x->detail, "renderD129"));
		CHECK(!contains(x->detail, "renderD128"));
	}
	rm_findings_free(v, n);

	/* Everything there (regular files stand in for the device nodes). */
	tfs_put(f.root, "dev/dri/renderD129", "");
	rm_doctor_collect(&f.o, &v, &n);
	x = find(v, n, "gpus");
	CHECK(x != NULL);
	if (x) {
		CHECK_STR(rm_choice_name(rm_finding_words, x->status), "OK");
		CHECK(contains(x->detail, "2 AMD GPU(s), gfx942"));
		CHECK(contains(x->detail, "renderD128, renderD129"));
		CHECK(x->action == NULL);
	}
	rm_findings_free(v, n);
	fake_release(&f);
}

/* Whether telemetry reads: the amdgpu files under each GPU's render node. */
TEST(telemetry)
{
	struct fake f;
	rm_finding *v;
	size_t n;
	const rm_finding *x;

	fake_init(&f);
	add_two_gfx942(&f);
	/* GPUs, but no /class/drm (a container given a partial /sys) */
	rm_doctor_collect(&f.o, &v, &n);
	x = find(v, n, "telemetry");
	CHECK(x != NULL);
	if (x) {
		CHECK_STR(rm_choice_name(rm_finding_words, x->status), "WARN");
		CHECK(contains(x->detail, "GPU 0: no readable sensor under"));
		CHECK(contains(x->action, "class/drm/renderD*/device"));
	}
	rm_findings_free(v, n);
	for (int i = 0; i < 2; i++) {
		char *dev = rm_xasprintf("sys/class/drm/renderD%d/device", 128 + i), *p;
		p = rm_xasprintf("%s/hwmon/hwmon%d/power1_average", dev, i);
		tfs_put(f.root, p, "54231000\n");
		free(p);
		p = rm_xasprintf("%s/hwmon/hwmon%d/temp1_input", dev, i);
		tfs_put(f.root, p, "40000\n");
		free(p);
		p = rm_xasprintf("%s/gpu_busy_percent", dev);
		tfs_put(f.root, p, "3\n");
		free(p);
		p = rm_xasprintf("%s/mem_info_vram_used", dev);
		tfs_put(f.root, p, "1048576\n");
		free(p);
		p = rm_xasprintf("%s/pp_dpm_sclk", dev);
		tfs_put(f.root, p, "0: 1000Mhz \n1: 1500Mhz *\n2: 2000Mhz \n");
		free(p);
		free(dev);
	}
	rm_doctor_collect(&f.o, &v, &n);
	x = find(v, n, "telemetry");
	CHECK(x != NULL);
	if (x) {
		CHECK_STR(rm_choice_name(rm_finding_words, x->status), "OK");
		CHECK(contains(x->detail,
			       "2 AMD GPU(s) through sysfs (hwmon power1_average): power, "
			       "temperature, VRAM, busy and clock readable"));
		CHECK(x->action == NULL);
	}
	rm_findings_free(v, n);
	fake_release(&f);

	/* no GPU: nothing to sample, and nothing to do about it */
	fake_init(&f);
	rm_doctor_collect(&f.o, &v, &n);
	x = find(v, n, "telemetry");
	CHECK(x != NULL && x->status == RM_FINDING_OK && contains(x->detail, "no GPU"));
	rm_findings_free(v, n);
	fake_release(&f);
}

TEST(no_gpu_and_shm)
{
	struct fake f;
	rm_finding *v;
	size_t n;
	const rm_finding *x;

	fake_init(&f);
	rm_doctor_collect(&f.o, &v, &n);
	x = find(v, n, "gpus");
	CHECK(x != NULL);
	if (x) {
		CHECK_STR(rm_choice_name(rm_finding_words, x->status), "WARN");
		CHECK(contains(x->detail, "no GPU found"));
		CHECK(contains(x->action, "smoke"));
		CHECK(contains(x->action, "--additional-context"));
	}
	/* No <dev>/shm in the fake tree: a warning naming it, never OK. */
	x = find(v, n, "shm");
	CHECK(x != NULL);
	if (x) {
		CHECK_STR(rm_choice_name(rm_finding_words, x->status), "WARN");
		CHECK(contains(x->detail, "/dev/shm"));
		CHECK(x->action != NULL);
	}
	x = find(v, n, "disk_logs");
	CHECK(x != NULL);
	if (x)
		CHECK(contains(x->detail, f.root));
	CHECK(find(v, n, "disk_images") != NULL);
	CHECK(find(v, n, "os") != NULL);
	CHECK(find(v, n, "rocm") != NULL);
	CHECK(find(v, n, "cuda") != NULL);
	/* Every WARN and FAIL says what to do; OK never does. */
	for (size_t i = 0; i < n; i++) {
		if (v[i].status == RM_FINDING_OK)
			CHECK(v[i].action == NULL);
		else
			CHECK(v[i].action != NULL && *v[i].action);
		CHECK(v[i].detail != NULL && *v[i].detail);
	}
	rm_findings_free(v, n);
	fake_release(&f);
}

TEST(docker_missing_socket)
{
	struct fake f;
	rm_finding *v;
	size_t n;
	const rm_finding *x;
	char *path;

	fake_init(&f);
	path = rm_xasprintf("%s/missing/docker.sock", f.root);
	rm_doctor_collect(&f.o, &v, &n);
	x = find(v, n, "docker");
	CHECK(x != NULL);
	if (x) {
		CHECK_STR(rm_choice_name(rm_finding_words, x->status), "FAIL");
		CHECK(contains(x->detail, path));
		CHECK(contains(x->action, "DOCKER_HOST"));
		/* The client's generic advice is not repeated in the detail. */
		CHECK(!contains(x->detail, "start dockerd"));
	}
	rm_findings_free(v, n);

	/* A malformed address is a failure too, with the accepted forms in the action. */
	f.o.docker_host = "ftp://nowhere";
	rm_doctor_collect(&f.o, &v, &n);
	x = find(v, n, "docker");
	CHECK(x != NULL);
	if (x) {
		CHECK_STR(rm_choice_name(rm_finding_words, x->status), "FAIL");
		CHECK(contains(x->detail, "ftp://nowhere"));
		CHECK(contains(x->action, "unix://"));
	}
	rm_findings_free(v, n);
	free(path);
	fake_release(&f);
}

TEST(json)
{
	struct fake f;
	rm_finding *v;
	size_t n;
	char *s;
	json_t *j;
	json_error_t jerr;
	int saw_warn = 0;

	fake_init(&f);
	tfs_put(f.root, "proc/sys/kernel/numa_balancing", "1\n");
	rm_doctor_collect(&f.o, &v, &n);
	s = rm_doctor_json(v, n);
	j = json_loads(s, 0, &jerr);
	CHECK(j != NULL);
	CHECK(json_is_array(j));
	CHECK(json_array_size(j) == n);
	for (size_t i = 0; i < json_array_size(j); i++) {
		json_t *o = json_array_get(j, i);
		const char *st = json_string_value(json_object_get(o, "status"));
		json_t *action = json_object_get(o, "action");

		CHECK(st && (!strcmp(st, "OK") || !strcmp(st, "WARN") || !strcmp(st, "FAIL")));
		CHECK(json_is_string(json_object_get(o, "check")));
		CHECK(json_is_string(json_object_get(o, "detail")));
		CHECK(action != NULL);
		if (st && !strcmp(st, "OK"))
			CHECK(json_is_null(action));
		else
			CHECK(json_is_string(action));
		if (!strcmp(json_string_value(json_object_get(o, "check")), "numa_balancing")) {
			saw_warn = 1;
			CHECK_STR(st, "WARN");
			CHECK(contains(json_string_value(action), "kernel.numa_balancing=0"));
		}
	}
	CHECK(saw_warn);
	json_decref(j);
	free(s);

	/* Bytes that are not UTF-8 (a path, a tool's output) do not lose the finding. */
	free(v[0].detail);
	v[0].detail = rm_xstrdup("bad \xff byte");
	s = rm_doctor_json(v, n);
	j = json_loads(s, 0, &jerr);
	CHECK(j != NULL && json_array_size(j) == n);
	CHECK_STR(json_string_value(json_object_get(json_array_get(j, 0), "detail")), "bad ? byte");
	json_decref(j);
	free(s);
	rm_findings_free(v, n);

	rm_findings_free(NULL, 0);
	s = rm_doctor_json(NULL, 0);
	CHECK_STR(s, "[]");
	free(s);
	fake_release(&f);
}

TEST(print)
{
	rm_finding v[2] = {
	    {RM_FINDING_OK, "numa_balancing", "0 (disabled)", NULL},
	    {RM_FINDING_WARN, "shm", "'/dev/shm' is 4.0 GiB", "remount it"},
	};
	char buf[512] = "";
	FILE *f = tmpfile();

	CHECK(f != NULL);
	if (!f)
		return;
	rm_doctor_print(f, v, 2);
	rewind(f);
	CHECK(fread(buf, 1, sizeof(buf) - 1, f) > 0);
	fclose(f);
	CHECK_STR(buf, "OK    numa_balancing   0 (disabled)\n"
		       "WARN  shm              '/dev/shm' is 4.0 GiB\n"
		       "      -> remount it\n");
}

/* Runs doctor_main with args and returns its exit code; *text receives the output. */
static int run_cmd(const rm_doctor_opts *o, char **text, rm_error *err, int argc, char **argv)
{
	FILE *f = tmpfile();
	long len;
	int rc;

	*text = NULL;
	if (!f)
		return -100;
	rc = doctor_main(argc, argv, o, f, err);
	len = ftell(f);
	rewind(f);
	*text = rm_xcalloc(1, (size_t)(len > 0 ? len : 0) + 1);
	if (len > 0 && fread(*text, 1, (size_t)len, f) != (size_t)len)
		CHECK(0);
	fclose(f);
	return rc;
}

TEST(cmd)
{
	struct fake f;
	rm_error err = RM_ERROR_INIT;
	char *out;
	json_t *j;
	int rc;

	fake_init(&f);
	tfs_put(f.root, "proc/sys/kernel/numa_balancing", "1\n");

	char *text_args[] = {"doctor", NULL};
	rc = run_cmd(&f.o, &out, &err, 1, text_args);
	/* The engine's socket does not exist: a FAIL, so exit code 1. */
	CHECK(rc == 1);
	CHECK(contains(out, "WARN  numa_balancing   1 (enabled)"));
	CHECK(contains(out, "      -> sudo sysctl kernel.numa_balancing=0"));
	CHECK(contains(out, "FAIL  docker"));
	CHECK(contains(out, "FAIL, "));
	free(out);

	char *json_args[] = {"doctor", "--format", "json", NULL};
	rc = run_cmd(&f.o, &out, &err, 3, json_args);
	CHECK(rc == 1);
	j = json_loads(out ? out : "", 0, NULL);
	CHECK(json_is_array(j) && json_array_size(j) > 5);
	json_decref(j);
	free(out);

	char *eq_args[] = {"doctor", "--format=text", NULL};
	rc = run_cmd(&f.o, &out, &err, 2, eq_args);
	CHECK(rc == 1);
	CHECK(contains(out, "numa_balancing"));
	free(out);

	char *help_args[] = {"doctor", "--help", NULL};
	rc = run_cmd(&f.o, &out, &err, 2, help_args);
	CHECK(rc == 0);
	CHECK(contains(out, "usage: run_models doctor"));
	CHECK(contains(out, "--format text|json"));
	free(out);

	char *bad_format[] = {"doctor", "--format", "yaml", NULL};
	rm_error_clear(&err);
	rc = run_cmd(&f.o, &out, &err, 3, bad_format);
	CHECK(rc == -1);
	CHECK(err.kind == RM_ERR_USAGE);
	CHECK(contains(err.msg, "'yaml'"));
	CHECK(out && !*out);
	free(out);

	char *extra[] = {"doctor", "now", NULL};
	rm_error_clear(&err);
	rc = run_cmd(&f.o, &out, &err, 2, extra);
	CHECK(rc == -1 && err.kind == RM_ERR_USAGE);
	free(out);

	char *unknown[] = {"doctor", "--fix", NULL};
	rm_error_clear(&err);
	rc = run_cmd(&f.o, &out, &err, 2, unknown);
	CHECK(rc == -1 && err.kind == RM_ERR_USAGE);
	free(out);

	/* With a live engine and the GPUs' device nodes in place, nothing fails: exit 0. */
	const char *host = getenv("DOCKER_HOST");
	if (host && *host) {
		add_two_gfx942(&f);
		tfs_put(f.root, "dev/kfd", "");
		tfs_put(f.root, "dev/dri/renderD128", "");
		tfs_put(f.root, "dev/dri/renderD129", "");
		f.o.docker_host = NULL;
		rc = run_cmd(&f.o, &out, &err, 1, text_args);
		CHECK(contains(out, "OK    gpus"));
		CHECK(contains(out, "OK    docker"));
		/* Only the disk checks could still fail on a nearly full machine. */
		if (!contains(out, "FAIL  disk"))
			CHECK(rc == 0);
		free(out);
	}
	fake_release(&f);
}

/* Writes an executable shell script root/bin/name. */
static void put_tool(const char *root, const char *name, const char *script)
{
	char *rel = rm_xasprintf("bin/%s", name);
	char *file = rm_xasprintf("%s/%s", root, rel);

	tfs_put(root, rel, script);
	CHECK(chmod(file, 0755) == 0);
	free(file);
	free(rel);
}

/* Stand-in tools on a PATH of their own: what doctor makes of amd-smi and nvidia-smi. */
TEST(tools)
{
	struct fake f;
	rm_finding *v;
	size_t n;
	const rm_finding *x;
	const char *old = getenv("PATH");
	char *saved = rm_xstrdup(old ? old : "/usr/bin:/bin");
	char *bin;

	fake_init(&f);
	f.o.use_tools = 1;
	bin = rm_xasprintf("%s/bin", f.root);
	put_tool(f.root, "amd-smi",
		 "#!/bin/sh\necho 'AMDSMI Tool: 24.6.2+2b02a07 | ROCm version: 6.2.0'\n");
	/* nvidia-smi without a loaded driver: a message on stdout and a non-zero exit. */
	put_tool(f.root, "nvidia-smi",
		 "#!/bin/sh\necho \"NVIDIA-SMI has failed because it couldn't communicate with "
		 "the NVIDIA driver.\"\nexit 9\n");
	/* An empty PATH entry would mean the current folder, which doctor ignores. */
	char *path = rm_xasprintf(":%s", bin);
	setenv("PATH", path, 1);
	free(path);
	rm_doctor_collect(&f.o, &v, &n);
	x = find(v, n, "rocm");
	CHECK(x != NULL);
	if (x) {
		CHECK_STR(rm_choice_name(rm_finding_words, x->status), "OK");
		CHECK(contains(x->detail, "amd-smi: AMDSMI Tool: 24.6.2+2b02a07"));
	}
	x = find(v, n, "cuda");
	CHECK(x != NULL);
	if (x) {
		CHECK_STR(rm_choice_name(rm_finding_words, x->status), "WARN");
		CHECK(contains(x->detail,
			       "nvidia-smi is installed but failed: NVIDIA-SMI has failed"));
		CHECK(contains(x->action, "driver"));
	}
	x = find(v, n, "gpus");
	CHECK(x != NULL && x->status == RM_FINDING_WARN);
	rm_findings_free(v, n);

	/* A working driver with one H100, but no container toolkit for dockerd. */
	put_tool(f.root, "nvidia-smi",
		 "#!/bin/sh\ncase \"$*\" in\n*driver_version*) echo 550.54.15 ;;\n"
		 "*) echo 'NVIDIA H100 80GB HBM3, 9.0' ;;\nesac\n");
	rm_doctor_collect(&f.o, &v, &n);
	x = find(v, n, "cuda");
	CHECK(x != NULL);
	if (x) {
		CHECK_STR(rm_choice_name(rm_finding_words, x->status), "OK");
		CHECK(contains(x->detail, "NVIDIA driver 550.54.15"));
	}
	x = find(v, n, "gpus");
	CHECK(x != NULL);
	if (x) {
		CHECK_STR(rm_choice_name(rm_finding_words, x->status), "WARN");
		CHECK(contains(x->detail, "1 NVIDIA GPU(s), sm_90"));
		CHECK(contains(x->action, "nvidia-container-toolkit"));
	}
	rm_findings_free(v, n);

	put_tool(f.root, "nvidia-container-runtime-hook", "#!/bin/sh\n");
	rm_doctor_collect(&f.o, &v, &n);
	x = find(v, n, "gpus");
	CHECK(x != NULL);
	if (x) {
		CHECK_STR(rm_choice_name(rm_finding_words, x->status), "OK");
		CHECK_STR(x->detail, "1 NVIDIA GPU(s), sm_90");
	}
	rm_findings_free(v, n);

	setenv("PATH", saved, 1);
	free(saved);
	free(bin);
	fake_release(&f);
}

/* This very host, with its real /proc, /sys and /dev and the tools on PATH. */
TEST(real_host)
{
	rm_doctor_opts o = RM_DOCTOR_OPTS_INIT;
	rm_context ctx;
	rm_error err = RM_ERROR_INIT;
	rm_finding *v;
	size_t n;
	const rm_finding *x;
	const char *host = getenv("DOCKER_HOST");
	int gpu_less;

	o.backends = rm_launcher_probe_all;
	CHECK(rm_context_detect(&ctx, "/sys", 1, &err) == 0);
	gpu_less = ctx.gpu_vendor == NULL;
	rm_context_release(&ctx);

	rm_doctor_collect(&o, &v, &n);
	CHECK(n >= 9);
	x = find(v, n, "gpus");
	CHECK(x != NULL);
	if (x && gpu_less) {
		CHECK_STR(rm_choice_name(rm_finding_words, x->status), "WARN");
		CHECK(contains(x->detail, "no GPU found"));
	}
	x = find(v, n, "numa_balancing");
	CHECK(x != NULL);
	if (host && *host) {
		x = find(v, n, "docker");
		CHECK(x != NULL);
		if (x) {
			CHECK_STR(rm_choice_name(rm_finding_words, x->status), "OK");
			CHECK(contains(x->detail, "API"));
		}
	}
	rm_doctor_print(stdout, v, n);
	rm_findings_free(v, n);
}

/* The pre-flight check on NVIDIA GPUs, through the stand-in nvidia-smi of tests/telemetry
 * (the H100's identity and idle health, tests/telemetry/h100/nvsmi-q.txt: nothing wrong),
 * each problem set on one GPU by FAKE_NVSMI_SET. */
TEST(preflight_nvidia)
{
	const char *src = getenv("RM_SOURCE_DIR");
	char *saved = rm_xstrdup(getenv("PATH") ? getenv("PATH") : "");
	char *path = rm_xasprintf("%s/tests/telemetry:%s", src ? src : ".", saved);
	rm_context ctx = {0};
	rm_preflight_opts po = RM_PREFLIGHT_OPTS_INIT;
	rm_finding *v = NULL;
	size_t n = 0;
	long gpu1[1] = {1}, gpu5[2] = {0, 5};
	const rm_finding *x;

	setenv("PATH", path, 1);
	ctx.gpu_vendor = "NVIDIA";
	ctx.n_gpus = 2;
	po.ctx = &ctx;
	/* healthy: one OK finding */
	CHECK(rm_doctor_preflight(&po, &v, &n) == 0 && n == 1);
	CHECK(n && v[0].status == RM_FINDING_OK && !strcmp(v[0].check, "preflight"));
	rm_findings_free(v, n);
	v = NULL, n = 0;
	/* GPU 1's memory held by a process; GPU 0's is not checked (not the model's) */
	setenv("FAKE_NVSMI_SET", "1:memory.used=1139 0:power.limit=500.00", 1);
	setenv("FAKE_NVSMI_APPS", "4242, 00000000:00:07.0, 1139, python3", 1);
	po.gpus = gpu1;
	po.n_gpus = 1;
	CHECK(rm_doctor_preflight(&po, &v, &n) == 1);
	x = find(v, n, "memory");
	CHECK(x && x->status == RM_FINDING_FAIL &&
	      contains(x->detail, "GPU 1: 1139 MiB in use by pid 4242 'python3' (1139 MiB)"));
	CHECK(find(v, n, "power_limit") == NULL);
	rm_findings_free(v, n);
	v = NULL, n = 0;
	/* which findings skip (FAIL) and which warn */
	setenv("FAKE_NVSMI_SET",
	       "0:ecc.errors.uncorrected.volatile.total=2 0:remapped_rows.pending=Yes "
	       "0:clocks.applications.graphics=1410 0:pcie.link.width.current=8 "
	       "0:ecc.errors.corrected.volatile.total=7",
	       1);
	unsetenv("FAKE_NVSMI_APPS");
	po.gpus = gpu5;
	po.n_gpus = 2;
	CHECK(rm_doctor_preflight(&po, &v, &n) == 4);
	CHECK((x = find(v, n, "ecc")) && x->status == RM_FINDING_FAIL &&
	      contains(x->detail, "GPU 0: 2 uncorrectable ECC error(s)"));
	CHECK((x = find(v, n, "retired_pages")) && x->status == RM_FINDING_FAIL);
	CHECK((x = find(v, n, "clocks")) && x->status == RM_FINDING_FAIL &&
	      contains(x->detail, "applications clock 1410 MHz, under its default 1980 MHz"));
	CHECK((x = find(v, n, "pcie_link")) && x->status == RM_FINDING_WARN &&
	      contains(x->detail, "PCIe link x8 of x16"));
	CHECK((x = find(v, n, "gpu_missing")) && x->status == RM_FINDING_FAIL &&
	      contains(x->detail, "GPU 5: nvidia-smi does not list it"));
	rm_findings_free(v, n);
	v = NULL, n = 0;
	/* nvidia-smi failing: a warning, no skip */
	unsetenv("FAKE_NVSMI_SET");
	setenv("FAKE_NVSMI_FAIL", "1", 1);
	CHECK(rm_doctor_preflight(&po, &v, &n) == 0);
	CHECK((x = find(v, n, "preflight")) && x->status == RM_FINDING_WARN &&
	      contains(x->detail, "cannot check the GPUs: NVIDIA-SMI has failed"));
	rm_findings_free(v, n);
	unsetenv("FAKE_NVSMI_FAIL");
	setenv("PATH", saved, 1);
	free(saved);
	free(path);
}

/* The pre-flight check on AMD GPUs: a fake sysfs of two gfx942 GPUs, GPU 1 with each kind
 * of problem amdgpu's files show. */
TEST(preflight_amd)
{
	struct fake f;
	rm_context ctx;
	rm_error err = RM_ERROR_INIT;
	rm_preflight_opts po = RM_PREFLIGHT_OPTS_INIT;
	rm_finding *v = NULL;
	size_t n = 0;
	long gpu0[1] = {0}, gpu1[1] = {1};
	const rm_finding *x;
	const char *d1 = "sys/class/drm/renderD129/device";
	char *p;

	fake_init(&f);
	add_two_gfx942(&f);
	for (int i = 0; i < 2; i++) {
		char *dev = rm_xasprintf("sys/class/drm/renderD%d/device", 128 + i);
		p = rm_xasprintf("%s/mem_info_vram_used", dev);
		tfs_put(f.root, p, "293601280\n"); /* 280 MiB: the driver's, idle */
		free(p);
		p = rm_xasprintf("%s/hwmon/hwmon%d/power1_cap", dev, i);
		tfs_put(f.root, p, "750000000\n");
		free(p);
		p = rm_xasprintf("%s/hwmon/hwmon%d/power1_cap_default", dev, i);
		tfs_put(f.root, p, "750000000\n");
		free(p);
		p = rm_xasprintf("%s/power_dpm_force_performance_level", dev);
		tfs_put(f.root, p, "auto\n");
		free(p);
		free(dev);
	}
	CHECK(rm_context_detect(&ctx, f.sys, 0, &err) == 0);
	po.ctx = &ctx;
	po.sysfs_root = f.sys;
	po.proc_root = f.proc;
	CHECK(rm_doctor_preflight(&po, &v, &n) == 0 && n == 1 && v[0].status == RM_FINDING_OK);
	rm_findings_free(v, n);
	v = NULL, n = 0;
	/* GPU 1: 40 GiB in use by a KFD process, an uncorrectable UMC error, a bad page pending,
	 * the power cap lowered, clocks forced low, a narrower link, correctable errors */
	p = rm_xasprintf("%s/mem_info_vram_used", d1);
	tfs_put(f.root, p, "42949672960\n");
	free(p);
	tfs_put(f.root, "sys/class/kfd/kfd/proc/4242/vram_0", "42949672960\n");
	tfs_put(f.root, "proc/4242/comm", "python3\n");
	p = rm_xasprintf("%s/ras/umc_err_count", d1);
	tfs_put(f.root, p, "ue: 1\nce: 3\n");
	free(p);
	p = rm_xasprintf("%s/ras/gpu_vram_bad_pages", d1);
	tfs_put(f.root, p, "0x00000001 : 0x00001000 : R\n0x00000002 : 0x00001000 : P\n");
	free(p);
	p = rm_xasprintf("%s/hwmon/hwmon1/power1_cap", d1);
	tfs_put(f.root, p, "550000000\n");
	free(p);
	p = rm_xasprintf("%s/power_dpm_force_performance_level", d1);
	tfs_put(f.root, p, "profile_min_sclk\n");
	free(p);
	p = rm_xasprintf("%s/current_link_width", d1);
	tfs_put(f.root, p, "8\n");
	free(p);
	p = rm_xasprintf("%s/max_link_width", d1);
	tfs_put(f.root, p, "16\n");
	free(p);
	po.gpus = gpu0; /* GPU 0 is fine */
	po.n_gpus = 1;
	CHECK(rm_doctor_preflight(&po, &v, &n) == 0);
	rm_findings_free(v, n);
	v = NULL, n = 0;
	po.gpus = gpu1;
	CHECK(rm_doctor_preflight(&po, &v, &n) == 5);
	CHECK((x = find(v, n, "memory")) && x->status == RM_FINDING_FAIL &&
	      contains(x->detail, "GPU 1: 40960 MiB of VRAM in use before the run; the KFD's "
				  "processes: pid 4242 'python3'"));
	CHECK((x = find(v, n, "ecc")) && x->status == RM_FINDING_FAIL &&
	      contains(x->detail, "1 uncorrectable RAS error(s)"));
	CHECK((x = find(v, n, "retired_pages")) && x->status == RM_FINDING_FAIL &&
	      contains(x->detail, "1 bad page(s) pending retirement"));
	CHECK((x = find(v, n, "power_limit")) && x->status == RM_FINDING_FAIL &&
	      contains(x->detail, "power cap 550 W, under its default 750 W"));
	CHECK((x = find(v, n, "clocks")) && x->status == RM_FINDING_FAIL &&
	      contains(x->detail, "'profile_min_sclk'"));
	CHECK((x = find(v, n, "pcie_link")) && x->status == RM_FINDING_WARN);
	rm_findings_free(v, n);
	v = NULL, n = 0;
	/* clocks held high is no skip; a GPU beyond the host's is */
	p = rm_xasprintf("%s/power_dpm_force_performance_level", d1);
	tfs_put(f.root, p, "perf_determinism\n");
	free(p);
	{
		long both[2] = {1, 7};
		po.gpus = both;
		po.n_gpus = 2;
		rm_doctor_preflight(&po, &v, &n);
		CHECK((x = find(v, n, "clocks")) && x->status == RM_FINDING_WARN);
		CHECK((x = find(v, n, "gpu_missing")) && x->status == RM_FINDING_FAIL &&
		      contains(x->detail, "GPU 7: no render node"));
		rm_findings_free(v, n);
	}
	rm_context_release(&ctx);
	fake_release(&f);
}
