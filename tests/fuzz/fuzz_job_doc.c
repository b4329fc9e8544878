/*
 * Fuzzes the job document reader (rm_job_doc_from_json, src/workload/job_doc.c): what a node
 * reads from a shared folder. Any text must be read or refused, never crash; a refusal
 * leaves nothing behind and says why; what is read holds what a node relies on (a key, a
 * model name, a run id, a timeout >= 0, no model bound yet) and writes back to JSON that
 * reads again to the same JSON.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rm/util.h"
#include "rm/workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rm_error err = RM_ERROR_INIT;
	rm_job_doc d, again;
	json_t *doc, *out, *out2;

	if (size > 65536)
		return 0;
	doc = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
	if (!doc)
		return 0;
	if (rm_job_doc_from_json(&d, doc, "fuzz", &err) < 0) {
		if (d.n || d.entries || d.run_id || !err.msg[0])
			abort(); /* a refusal leaves nothing, and says why */
		json_decref(doc);
		return 0;
	}
	for (size_t i = 0; i < d.n; i++) {
		const rm_workload *w = &d.entries[i].w;
		if (!d.entries[i].key || !w->model_name || !w->run_id || w->model ||
		    !(w->timeout >= 0) || (w->data.n && !w->data.sources))
			abort();
		if (rm_job_doc_find(&d, d.entries[i].key) == NULL)
			abort();
	}
	out = rm_job_doc_to_json(&d);
	if (rm_job_doc_from_json(&again, out, "fuzz again", &err) < 0)
		abort(); /* what we write, we read */
	out2 = rm_job_doc_to_json(&again);
	if (!json_equal(out, out2))
		abort();
	json_decref(out2);
	json_decref(out);
	rm_job_doc_release(&again);
	rm_job_doc_release(&d);
	json_decref(doc);
	return 0;
}
