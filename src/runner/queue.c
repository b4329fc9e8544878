/*
 * Batching, for a launcher with submit_all (rm/launcher.h): every model goes through its
 * checks and builds first, each ready workload waits here, then all are handed to the
 * launcher at once (SLURM: one job array) and followed one after the other as usual. The
 * local path never comes here.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "rm/util.h"

struct queued {
	const rm_selected *s;
	rm_workload w; /* a copy of the model's: it outlives the model's turn */
	char *log_base;
	struct outcome b;		  /* the build's outcome */
	size_t k;			  /* the number of its first run */
	char *name, *log_file, *log_link; /* its first run's, for submit_all */
	rm_job_spec spec;
};

void rm_runner__queue_workload(struct run *r, const rm_selected *s, const rm_workload *w,
			       const char *log_base, struct outcome *b, size_t *k)
{
	struct queued *q;

	r->queue = rm_xrealloc(r->queue, (r->n_queue + 1) * sizeof(*r->queue));
	q = &r->queue[r->n_queue++];
	memset(q, 0, sizeof(*q));
	q->s = s;
	rm_workload_copy(&q->w, w);
	q->b = *b;
	memset(b, 0, sizeof(*b));
	q->log_base = rm_xstrdup(log_base);
	q->k = *k;
	*k += (size_t)r->o->repeat;
	q->name = rm_runner__container_name(r, s->model, q->k, 1);
	rm_runner__repeat_logs(r, log_base, &q->b, 1, 1, &q->log_file, &q->log_link);
}

static void queued_release(struct queued *q)
{
	rm_runner__outcome_release(&q->b);
	rm_workload_release(&q->w);
	free(q->log_base);
	free(q->name);
	free(q->log_file);
	free(q->log_link);
}

/* Every workload gets a FAILURE row: nothing could be submitted. */
static int all_failed(struct run *r, struct queued *q, const char *why, rm_error *err)
{
	rm_runner__fail(&q->b, "cannot submit: %s", why);
	rm_runner__outcome_report(r, q->s->model, &q->b);
	return rm_runner__record(r, q->s, &q->w, &q->b, err);
}

int rm_runner__run_queue(struct run *r, rm_error *err)
{
	const rm_job_spec **specs = rm_xcalloc(r->n_queue + 1, sizeof(*specs));
	rm_error serr = RM_ERROR_INIT;
	int failed = 0, ret = 0;

	for (size_t i = 0; i < r->n_queue; i++) {
		struct queued *q = &r->queue[i];
		q->spec = (rm_job_spec){
		    .w = &q->w, .name = q->name, .log_file = q->log_file, .log_link = q->log_link};
		specs[i] = &q->spec;
	}
	if (r->n_queue && !rm_signal_received())
		failed =
		    r->launcher.ops->submit_all(r->launcher.state, specs, r->n_queue, &serr) < 0;
	for (size_t i = 0; i < r->n_queue && ret == 0 && !rm_signal_received(); i++) {
		struct queued *q = &r->queue[i];
		size_t k = q->k;
		if (failed)
			ret = all_failed(r, q, rm_error_text(&serr), err);
		else
			ret = rm_runner__run_repeats(r, q->s, &q->w, q->log_base, &q->b, &k, err);
	}
	for (size_t i = 0; i < r->n_queue; i++)
		queued_release(&r->queue[i]);
	free(r->queue);
	r->queue = NULL;
	r->n_queue = 0;
	free(specs);
	return ret;
}
