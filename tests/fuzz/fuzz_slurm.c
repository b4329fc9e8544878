/*
 * Fuzzes the readers of what SLURM's commands print (src/launcher/slurm_state.c) and of the
 * SLURM time and hostlist syntax: any text must be read or refused, never crash, never
 * expand an array range into more than the documented ceiling, and every entry read must
 * carry a known state and a job id.
 *
 * Input: byte 0 selects the reader (mod 9); the rest is the command's output.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/launcher/slurm.h"
#include "rm/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(rm_slurm_job_state *v, size_t n, int r)
{
	char reason[512];

	if (r < 0 && (v || n))
		abort(); /* a refusal leaves nothing behind */
	for (size_t i = 0; i < n; i++) {
		if (v[i].job_id < 1 || v[i].state < RM_SLURM_UNKNOWN ||
		    v[i].state > RM_SLURM_DEADLINE)
			abort();
		if (strlen(v[i].reason) >= sizeof(v[i].reason))
			abort();
		rm_slurm_reason(&v[i], reason, sizeof(reason));
	}
	free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rm_error err = RM_ERROR_INIT;
	rm_slurm_job_state *v = NULL;
	size_t n = 0;
	char *text, *s;
	long id, task;
	int code, r;
	char node[64];

	if (size < 1 || size > 65536)
		return 0;
	text = rm_xstrndup((const char *)data + 1, size - 1);
	switch (data[0] % 9) {
	case 0:
		if (rm_slurm_parse_sbatch(text, &id, &err) == 0 && id < 1)
			abort();
		break;
	case 1:
		r = rm_slurm_parse_squeue(text, &v, &n, &err);
		check(v, n, r);
		break;
	case 2:
		r = rm_slurm_parse_sacct(text, &v, &n, &err);
		check(v, n, r);
		break;
	case 3:
		r = rm_slurm_parse_scontrol(text, &v, &n, &err);
		check(v, n, r);
		break;
	case 4:
		s = rm_slurm_hostlist_first(text);
		if (s && (strchr(s, ',') || strchr(s, '[')))
			abort();
		free(s);
		break;
	case 5:
		free(rm_slurm_node_addr(text));
		break;
	case 6:
		if (rm_slurm_time_seconds(text) < -1)
			abort();
		break;
	case 7:
		if (rm_slurm_first_failed_task(text, &task, &code, node, sizeof(node)) == 0 &&
		    (task < 0 || code < 0 || code > 255))
			abort();
		break;
	default:
		(void)rm_slurm_state_parse(text);
		break;
	}
	free(text);
	return 0;
}
