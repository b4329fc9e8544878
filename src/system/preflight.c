/*
 * The pre-flight check of a model's GPUs (rm/doctor.h rm_doctor_preflight): what would spoil
 * the number it is about to measure. Which findings skip the model (FAIL) and which only
 * warn is written in rm/doctor.h and docs/doctor.md.
 *
 * NVIDIA: nvidia-smi(1)'s --query-gpu fields (memory.used, ecc.errors.*.volatile.total,
 * retired_pages.pending, remapped_rows.*, power.limit, power.default_limit,
 * clocks.applications.graphics, clocks.default_applications.graphics, pcie.link.width.*)
 * and --query-compute-apps (pid, gpu_bus_id, used_memory, process_name); a placeholder
 * ("[N/A]": the GPU does not have it, e.g. retired pages on an H100, which remaps rows
 * instead) is no finding. AMD (amdgpu's sysfs, Documentation/gpu/amdgpu/): the device's
 * mem_info_vram_used, ras/<block>_err_count ("ue: N", "ce: N"), ras/gpu_vram_bad_pages
 * ("0x...: 0x... : R|P|F", retired, pending, failed), hwmon power1_cap and
 * power1_cap_default, power_dpm_force_performance_level, current_link_width and
 * max_link_width; the KFD's processes are /sys/class/kfd/kfd/proc/<pid>.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "system_internal.h"
#include "rm/util.h"

const rm_choice rm_preflight_words[] = {
    {"auto", RM_PREFLIGHT_AUTO}, {"on", RM_PREFLIGHT_ON}, {"off", RM_PREFLIGHT_OFF}, {NULL, 0}};

/* Memory in use on an idle GPU above this is another workload's (an idle H100 shows 0 MiB,
 * an idle MI300X a few hundred MiB of the driver's). */
#define MEM_IN_USE_MIB 1024.0
#define MAX_SEEN       1024 /* GPU indexes told apart as listed or not */

#define NV_FIELDS                                                                                  \
	"index,pci.bus_id,memory.used,ecc.errors.uncorrected.volatile.total,"                      \
	"ecc.errors.corrected.volatile.total,retired_pages.pending,remapped_rows.pending,"         \
	"remapped_rows.failure,power.limit,power.default_limit,clocks.applications.graphics,"      \
	"clocks.default_applications.graphics,pcie.link.width.current,pcie.link.width.max"
enum {
	NV_INDEX,
	NV_BUS,
	NV_MEM,
	NV_ECC_UE,
	NV_ECC_CE,
	NV_PAGES_PENDING,
	NV_ROWS_PENDING,
	NV_ROWS_FAILURE,
	NV_POWER,
	NV_POWER_DEFAULT,
	NV_CLOCK,
	NV_CLOCK_DEFAULT,
	NV_WIDTH,
	NV_WIDTH_MAX,
	NV_N
};

struct pf {
	struct findings fs;
	size_t n_fail;
};

static void pf_add(struct pf *p, rm_finding_status st, const char *check, long gpu, char *what,
		   const char *action)
{
	char *detail = rm_xasprintf("GPU %ld: %s", gpu, what);

	free(what);
	rm_system__doctor_add(&p->fs, st, check, detail, action ? rm_xstrdup(action) : NULL);
	p->n_fail += st == RM_FINDING_FAIL;
}

/* A number of nvidia-smi's ("700.00", "700.00 W", "1980 MHz", "16"), NAN for a
 * placeholder or text. */
static double nv_num(const char *f)
{
	char *end;
	double v = strtod(f, &end);
	return end == f || !isfinite(v) ? NAN : v;
}

static int nv_yes(const char *f)
{
	return !strcmp(f, "Yes");
}

/* The fields of one line ("a, b, c") into f[0..NV_N); 0 when it has them all. */
static int nv_split(char *line, char **f)
{
	size_t n = 0;

	for (char *p = line; n < NV_N; n++) {
		f[n] = p;
		p = strstr(p, ", ");
		if (!p)
			return n + 1 == NV_N ? 0 : -1;
		*p = '\0';
		p += 2;
	}
	return -1;
}

/* The processes of the GPU at bus: "pid 4242 'python3' (1139 MiB)", or NULL. */
static char *nv_apps(const char *apps, const char *bus)
{
	rm_buf b = RM_BUF_INIT(1 << 12);
	char *copy = rm_xstrdup(apps);

	for (char *line = copy, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		char *f[4] = {0}, *p = line;
		if ((nl = strchr(line, '\n')))
			*nl = '\0';
		for (int i = 0; i < 4 && p; i++) {
			f[i] = p;
			p = strstr(p, ", ");
			if (p)
				*p = '\0', p += 2;
		}
		if (!f[3] || strcasecmp(rm_trim(f[1]), bus))
			continue;
		rm_buf_addf(&b, "%spid %s '%s' (%s MiB)", b.len ? ", " : "", rm_trim(f[0]),
			    rm_trim(f[3]), rm_trim(f[2]));
	}
	free(copy);
	if (!b.len) {
		rm_buf_release(&b);
		return NULL;
	}
	return rm_buf_detach(&b);
}

static void nv_memory(struct pf *p, long gpu, char **f, const char *apps)
{
	double mem = nv_num(f[NV_MEM]);
	char *procs = nv_apps(apps, f[NV_BUS]);

	if (procs || mem >= MEM_IN_USE_MIB)
		pf_add(p, RM_FINDING_FAIL, "memory", gpu,
		       rm_xasprintf("%.0f MiB in use%s%s before the run", isnan(mem) ? 0 : mem,
				    procs ? " by " : " (no process of this host's namespace)",
				    procs ? procs : ""),
		       "another workload holds the GPU: wait for it or stop it (nvidia-smi "
		       "--query-compute-apps=pid,process_name --format=csv)");
	free(procs);
}

static void nv_health(struct pf *p, long gpu, char **f)
{
	double ue = nv_num(f[NV_ECC_UE]), ce = nv_num(f[NV_ECC_CE]);

	if (ue > 0)
		pf_add(p, RM_FINDING_FAIL, "ecc", gpu,
		       rm_xasprintf("%.0f uncorrectable ECC error(s) since the driver loaded", ue),
		       "reset the GPU (nvidia-smi -r) and see nvidia-smi -q -d ECC");
	else if (ce > 0)
		pf_add(p, RM_FINDING_WARN, "ecc", gpu,
		       rm_xasprintf("%.0f correctable ECC error(s) since the driver loaded", ce),
		       "keep an eye on it: nvidia-smi -q -d ECC");
	if (nv_yes(f[NV_PAGES_PENDING]) || nv_yes(f[NV_ROWS_PENDING]))
		pf_add(p, RM_FINDING_FAIL, "retired_pages", gpu,
		       rm_xstrdup("memory pages or rows are pending retirement"),
		       "reset the GPU (nvidia-smi -r) to retire them");
	if (nv_yes(f[NV_ROWS_FAILURE]))
		pf_add(p, RM_FINDING_FAIL, "retired_pages", gpu,
		       rm_xstrdup("a row remapping failed"),
		       "the GPU needs service (nvidia-smi -q -d ROW_REMAPPER)");
}

static void nv_limits(struct pf *p, long gpu, char **f)
{
	double pw = nv_num(f[NV_POWER]), pwd = nv_num(f[NV_POWER_DEFAULT]);
	double clk = nv_num(f[NV_CLOCK]), clkd = nv_num(f[NV_CLOCK_DEFAULT]);
	double w = nv_num(f[NV_WIDTH]), wmax = nv_num(f[NV_WIDTH_MAX]);

	if (pw > 0 && pwd > 0 && pw < pwd - 0.5)
		pf_add(p, RM_FINDING_FAIL, "power_limit", gpu,
		       rm_xasprintf("power limit %.0f W, under its default %.0f W", pw, pwd),
		       "restore it: nvidia-smi -pl <default>");
	if (clk > 0 && clkd > 0 && clk < clkd)
		pf_add(p, RM_FINDING_FAIL, "clocks", gpu,
		       rm_xasprintf("applications clock %.0f MHz, under its default %.0f MHz", clk,
				    clkd),
		       "reset the clocks: nvidia-smi -rac and -rgc");
	if (w > 0 && wmax > 0 && w < wmax)
		pf_add(p, RM_FINDING_WARN, "pcie_link", gpu,
		       rm_xasprintf("PCIe link x%.0f of x%.0f", w, wmax),
		       "reseat the card or check the slot: host-device copies are slower");
}

/* Whether GPU gpu is one the check is for. */
static int wanted(const rm_preflight_opts *o, long gpu)
{
	for (size_t i = 0; o->gpus && i < o->n_gpus; i++)
		if (o->gpus[i] == gpu)
			return 1;
	return !o->gpus;
}

static void preflight_nvidia(struct pf *p, const rm_preflight_opts *o)
{
	/* every GPU, not -i: one that is gone makes nvidia-smi refuse the whole query */
	char *argv[] = {"nvidia-smi", "--query-gpu=" NV_FIELDS, "--format=csv,noheader,nounits",
			NULL};
	char *apps_argv[] = {"nvidia-smi",
			     "--query-compute-apps=pid,gpu_bus_id,used_memory,process_name",
			     "--format=csv,noheader,nounits", NULL};
	rm_proc_out po = {0}, pa = {0};
	rm_error err = RM_ERROR_INIT;
	int seen[MAX_SEEN] = {0};

	if (rm_proc_run(argv, NULL, 20, 1 << 20, &po, &err) < 0 || po.status != 0 ||
	    rm_proc_run(apps_argv, NULL, 20, 1 << 20, &pa, &err) < 0) {
		char *first =
		    rm_xstrndup(po.out ? po.out : "", strcspn(po.out ? po.out : "", "\n"));
		rm_system__doctor_add(
		    &p->fs, RM_FINDING_WARN, "preflight",
		    rm_xasprintf("cannot check the GPUs: %s",
				 err.kind ? rm_error_text(&err) : first),
		    rm_xstrdup("run nvidia-smi by hand; the run goes on unchecked"));
		free(first);
		goto out;
	}
	for (char *line = po.out, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		char *f[NV_N];
		long gpu;
		if ((nl = strchr(line, '\n')))
			*nl = '\0';
		if (nv_split(line, f) < 0 || rm_parse_long(f[NV_INDEX], 0, 4095, &gpu) < 0 ||
		    !wanted(o, gpu))
			continue;
		if (gpu < MAX_SEEN)
			seen[gpu] = 1;
		nv_memory(p, gpu, f, pa.out ? pa.out : "");
		nv_health(p, gpu, f);
		nv_limits(p, gpu, f);
	}
	for (size_t i = 0; o->gpus && i < o->n_gpus; i++)
		if (o->gpus[i] >= 0 && o->gpus[i] < MAX_SEEN && !seen[o->gpus[i]])
			pf_add(p, RM_FINDING_FAIL, "gpu_missing", o->gpus[i],
			       rm_xstrdup("nvidia-smi does not list it"),
			       "see nvidia-smi -L and the kernel log (dmesg | grep -i xid)");
out:
	rm_proc_out_release(&po);
	rm_proc_out_release(&pa);
}

/* ---- AMD ---- */

static double amd_num(const char *dir, const char *name)
{
	char *path = rm_xasprintf("%s/%s", dir, name), *line = rm_system__doctor_read_line(path);
	double v = NAN;
	long x;

	if (line && rm_parse_long(line, -(1L << 62), 1L << 62, &x) == 0)
		v = (double)x;
	free(line);
	free(path);
	return v;
}

/* The KFD's processes: "pid 4242 'python3'", or NULL when it has none. */
static char *amd_kfd_procs(const rm_preflight_opts *o)
{
	char *dir = rm_xasprintf("%s/class/kfd/kfd/proc", o->sysfs_root);
	DIR *d = opendir(dir);
	struct dirent *e;
	rm_buf b = RM_BUF_INIT(1 << 12);

	while (d && (e = readdir(d))) {
		long pid;
		char *comm, *name;
		if (rm_parse_long(e->d_name, 1, 1L << 30, &pid) < 0)
			continue;
		comm = rm_xasprintf("%s/%ld/comm", o->proc_root, pid);
		name = rm_system__doctor_read_line(comm);
		rm_buf_addf(&b, "%spid %ld '%s'", b.len ? ", " : "", pid, name ? name : "?");
		free(name);
		free(comm);
	}
	if (d)
		closedir(d);
	free(dir);
	if (!b.len) {
		rm_buf_release(&b);
		return NULL;
	}
	return rm_buf_detach(&b);
}

/* ras/<block>_err_count: "ue: N\nce: N" per block, summed. */
static void amd_ras(struct pf *p, long gpu, const char *dev)
{
	char *dir = rm_xasprintf("%s/ras", dev), *text = NULL;
	DIR *d = opendir(dir);
	struct dirent *e;
	long ue = 0, ce = 0;
	size_t retired = 0, pending = 0;
	rm_error err = RM_ERROR_INIT;

	while (d && (e = readdir(d))) {
		char *path;
		if (!rm_ends_with(e->d_name, "_err_count"))
			continue;
		path = rm_xasprintf("%s/%s", dir, e->d_name);
		if (rm_read_file(path, 1 << 12, &text, NULL, &err) == 0) {
			const char *u = strstr(text, "ue:"), *c = strstr(text, "ce:");
			ue += u ? strtol(u + 3, NULL, 10) : 0;
			ce += c ? strtol(c + 3, NULL, 10) : 0;
		}
		free(text);
		text = NULL;
		free(path);
	}
	if (d)
		closedir(d);
	{
		char *path = rm_xasprintf("%s/gpu_vram_bad_pages", dir);
		if (rm_read_file(path, 1 << 20, &text, NULL, &err) == 0)
			for (char *l = text; *l;
			     l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0)) {
				size_t n = strcspn(l, "\n");
				pending += n && l[n - 1] == 'P';
				retired += n && (l[n - 1] == 'R' || l[n - 1] == 'F');
			}
		free(path);
		free(text);
	}
	if (ue > 0)
		pf_add(p, RM_FINDING_FAIL, "ecc", gpu,
		       rm_xasprintf("%ld uncorrectable RAS error(s) (ras/*_err_count)", ue),
		       "reset the GPU (amd-smi reset) and see amd-smi metric --ecc");
	else if (ce > 0)
		pf_add(p, RM_FINDING_WARN, "ecc", gpu,
		       rm_xasprintf("%ld correctable RAS error(s) (ras/*_err_count)", ce),
		       "keep an eye on it: amd-smi metric --ecc");
	if (pending)
		pf_add(p, RM_FINDING_FAIL, "retired_pages", gpu,
		       rm_xasprintf("%zu bad page(s) pending retirement", pending),
		       "reset the GPU (amd-smi reset) to retire them");
	else if (retired)
		pf_add(p, RM_FINDING_WARN, "retired_pages", gpu,
		       rm_xasprintf("%zu page(s) retired", retired),
		       "the GPU runs with less memory; see amd-smi bad-pages");
	free(dir);
}

/* The first hwmon* of the device, or NULL. */
static char *amd_hwmon(const char *dev)
{
	char *dir = rm_xasprintf("%s/hwmon", dev), *found = NULL;
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (rm_starts_with(e->d_name, "hwmon") &&
		    (!found || strcmp(e->d_name, found + strlen(dir) + 1) < 0)) {
			free(found);
			found = rm_xasprintf("%s/%s", dir, e->d_name);
		}
	if (d)
		closedir(d);
	free(dir);
	return found;
}

static void amd_limits(struct pf *p, long gpu, const char *dev)
{
	char *hw = amd_hwmon(dev),
	     *lvl_path = rm_xasprintf("%s/power_dpm_force_performance_level", dev);
	char *level = rm_system__doctor_read_line(lvl_path);
	double cap = hw ? amd_num(hw, "power1_cap") : NAN;
	double cap_default = hw ? amd_num(hw, "power1_cap_default") : NAN;
	double w = amd_num(dev, "current_link_width"), wmax = amd_num(dev, "max_link_width");

	if (cap > 0 && cap_default > 0 && cap < cap_default)
		pf_add(p, RM_FINDING_FAIL, "power_limit", gpu,
		       rm_xasprintf("power cap %.0f W, under its default %.0f W", cap / 1e6,
				    cap_default / 1e6),
		       "restore it: amd-smi set --power-cap <default>");
	if (level && (!strcmp(level, "low") || !strcmp(level, "manual") ||
		      rm_starts_with(level, "profile_min")))
		pf_add(p, RM_FINDING_FAIL, "clocks", gpu,
		       rm_xasprintf("clocks forced to '%s' (power_dpm_force_performance_level)",
				    level),
		       "echo auto > power_dpm_force_performance_level (amd-smi reset --clocks)");
	else if (level && *level && strcmp(level, "auto"))
		pf_add(
		    p, RM_FINDING_WARN, "clocks", gpu,
		    rm_xasprintf("clocks held at '%s' (power_dpm_force_performance_level)", level),
		    "numbers differ from those at 'auto': say so when comparing");
	if (w > 0 && wmax > 0 && w < wmax)
		pf_add(p, RM_FINDING_WARN, "pcie_link", gpu,
		       rm_xasprintf("PCIe link x%.0f of x%.0f", w, wmax),
		       "reseat the card or check the slot: host-device copies are slower");
	free(level);
	free(lvl_path);
	free(hw);
}

static void preflight_amd(struct pf *p, const rm_preflight_opts *o)
{
	char *procs = amd_kfd_procs(o);
	size_t n = o->gpus ? o->n_gpus : o->ctx->n_render_nodes;

	for (size_t i = 0; i < n; i++) {
		long gpu = o->gpus ? o->gpus[i] : (long)i;
		char *dev;
		double used;
		if (gpu < 0 || (size_t)gpu >= o->ctx->n_render_nodes) {
			pf_add(p, RM_FINDING_FAIL, "gpu_missing", gpu,
			       rm_xasprintf("no render node in the KFD topology (%zu GPUs)",
					    o->ctx->n_render_nodes),
			       "see rocm-smi and the kernel log (dmesg | grep amdgpu)");
			continue;
		}
		dev = rm_xasprintf("%s/class/drm/renderD%ld/device", o->sysfs_root,
				   o->ctx->render_nodes[gpu]);
		used = amd_num(dev, "mem_info_vram_used") / 1048576.0;
		if (used >= MEM_IN_USE_MIB)
			pf_add(p, RM_FINDING_FAIL, "memory", gpu,
			       rm_xasprintf("%.0f MiB of VRAM in use before the run%s%s", used,
					    procs ? "; the KFD's processes: " : "",
					    procs ? procs : ""),
			       "another workload holds the GPU: wait for it or stop it (amd-smi "
			       "process)");
		amd_ras(p, gpu, dev);
		amd_limits(p, gpu, dev);
		free(dev);
	}
	free(procs);
}

size_t rm_doctor_preflight(const rm_preflight_opts *o, rm_finding **v, size_t *n)
{
	struct pf p = {{*v, *n}, 0};
	size_t before = *n;
	const char *vendor = o->ctx ? o->ctx->gpu_vendor : NULL;

	if (vendor && !strcmp(vendor, "NVIDIA"))
		preflight_nvidia(&p, o);
	else if (vendor && !strcmp(vendor, "AMD"))
		preflight_amd(&p, o);
	if (p.fs.n == before)
		rm_system__doctor_add(
		    &p.fs, RM_FINDING_OK, "preflight",
		    rm_xasprintf("%s GPU(s) checked: no memory in use, no ECC or RAS error, no "
				 "page pending retirement, power limits and clocks at their "
				 "defaults, PCIe links at full width",
				 vendor ? vendor : "no"),
		    NULL);
	*v = p.fs.v;
	*n = p.fs.n;
	return p.n_fail;
}
