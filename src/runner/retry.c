/*
 * --retries: a run that failed for the machine's reason is tried again; a model's own
 * failure never is (docs/reliability.md, "Retries"). What counts as the machine's is set
 * where the failure is seen (outcome.machine): the engine refused or failed the request to
 * create or start the workload, lost it while it ran, a given image could not be pulled,
 * the engine died under a build, the back end lost the host (a SLURM node), or the
 * pre-flight check found a GPU not fit to measure on. A script's exit code, a timeout, a
 * missing figure, a failed build step are the model's.
 */
#include <errno.h>
#include <math.h>
#include <time.h>

#include "internal.h"
#include "rm/util.h"

#define RETRY_WAIT_MAX 300.0 /* seconds */

/* Sleeps up to seconds; a signal ends it early. */
static void retry_pause(double seconds)
{
	double end = rm_now() + seconds;

	while (!rm_signal_received()) {
		double left = end - rm_now();
		struct timespec ts;
		if (left <= 0)
			return;
		if (left > 0.1)
			left = 0.1;
		ts.tv_sec = (time_t)left;
		ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
		nanosleep(&ts, NULL);
	}
}

int rm_runner__retry(struct run *r, const rm_model *m, const struct outcome *oc)
{
	double wait;

	if (!oc->machine || oc->status == RM_STATUS_SUCCESS || rm_signal_received() ||
	    oc->attempt > r->o->retries || r->o->dry_run)
		return 0;
	wait = r->o->retry_wait * pow(2, (double)(oc->attempt - 1));
	if (wait > RETRY_WAIT_MAX)
		wait = RETRY_WAIT_MAX;
	rm_warn("model '%s': attempt %ld of %ld %s for a reason of the machine: %s; trying again "
		"in %g s (--retries)",
		m->name, oc->attempt, r->o->retries + 1,
		oc->status == RM_STATUS_SKIPPED ? "was skipped" : "failed", oc->reason, wait);
	retry_pause(wait);
	return !rm_signal_received();
}
