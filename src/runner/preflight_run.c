/*
 * The pre-flight check of a workload's GPUs just before its container starts on this host
 * (rm/doctor.h rm_doctor_preflight): what would spoil the number skips the run, SKIPPED with
 * the findings as its reason (the machine's: --retries tries it again, the finding may have
 * cleared); what only might is said in the log and on the terminal. A workload that runs
 * elsewhere (SLURM) is checked by the node that runs it (node-run).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "rm/doctor.h"
#include "rm/util.h"

int rm_runner__preflight(struct run *r, const rm_workload *w, struct stream *st, struct outcome *oc)
{
	rm_finding *v = NULL;
	size_t n = 0, n_fail;
	rm_buf why = RM_BUF_INIT(1 << 14);

	if (!rm_runner__runs_here(r, w))
		return 0;
	n_fail = rm_workload_preflight(w, &r->ctx, r->o->sysfs_root, &v, &n);
	for (size_t i = 0; i < n; i++) {
		const rm_finding *f = &v[i];
		if (f->status == RM_FINDING_OK) {
			rm_runner__stream_note(st, "run_models: pre-flight: %s", f->detail);
		} else if (f->status == RM_FINDING_WARN) {
			rm_runner__stream_note(st, "run_models: pre-flight: %s (%s): %s", f->detail,
					       f->check, f->action ? f->action : "");
			rm_warn("model '%s': pre-flight: %s; %s", w->model->name, f->detail,
				f->action ? f->action : "");
		} else {
			rm_runner__stream_note(st, "run_models: pre-flight: %s (%s): %s", f->detail,
					       f->check, f->action ? f->action : "");
			rm_buf_addf(&why, "%s%s (%s)", why.len ? "; " : "", f->detail, f->check);
		}
	}
	if (n_fail) {
		rm_runner__skip(oc,
				"pre-flight: %s: the number would be spoilt (run_models doctor "
				"--gpus; --preflight off runs it anyway)",
				rm_buf_str(&why));
		oc->machine = 1;
	}
	rm_findings_free(v, n);
	rm_buf_release(&why);
	return n_fail ? -1 : 0;
}
