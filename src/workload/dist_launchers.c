/*
 * The distributed launchers (a context's distributed.launcher, madengine's MAD_LAUNCHER):
 * one table for runs on one host and for SLURM jobs. madengine's container_runner.py
 * (_generate_local_launcher_command) and deployment/slurm.py are the reference.
 */
#include <ctype.h>
#include <stdio.h>

#include "rm/util.h"
#include "rm/workload.h"

static const rm_dist_launcher table[] = {
    {"torchrun", {NULL}, RM_DIST_TORCHRUN, RM_DIST_SLURM_TASKS},
    {"torchtitan", {NULL}, RM_DIST_TORCHRUN, RM_DIST_SLURM_TASKS},
    {"megatron-lm", {"megatron", NULL}, RM_DIST_TORCHRUN, RM_DIST_SLURM_TASKS},
    {"deepspeed", {NULL}, RM_DIST_DEEPSPEED, RM_DIST_SLURM_TASKS},
    {"vllm", {NULL}, RM_DIST_OWN, RM_DIST_SLURM_TASKS},
    {"sglang", {NULL}, RM_DIST_OWN, RM_DIST_SLURM_TASKS},
    /* MAD's multi-node cards: their .slurm script starts one container a node itself */
    {"slurm_multi", {NULL}, RM_DIST_SCRIPT, RM_DIST_SLURM_SCRIPT},
    {"sglang-disagg", {NULL}, RM_DIST_OWN, RM_DIST_SLURM_SCRIPT},
    {"primus", {NULL}, RM_DIST_OWN, RM_DIST_SLURM_SCRIPT},
};
#define N_TABLE (sizeof(table) / sizeof(table[0]))

/* Names compare without case, and '-' and '_' are the same letter (MAD spells
 * "sglang-disagg" and "sglang_disagg", "slurm-multi" and "slurm_multi"). */
static int same_name(const char *a, const char *b)
{
	for (; *a && *b; a++, b++) {
		int x = *a == '_' ? '-' : tolower((unsigned char)*a);
		int y = *b == '_' ? '-' : tolower((unsigned char)*b);
		if (x != y)
			return 0;
	}
	return !*a && !*b;
}

const rm_dist_launcher *rm_dist_launcher_find(const char *name)
{
	if (!name || !*name)
		return NULL;
	for (size_t i = 0; i < N_TABLE; i++) {
		if (same_name(table[i].name, name))
			return &table[i];
		for (const char *const *a = table[i].aliases; *a; a++)
			if (same_name(*a, name))
				return &table[i];
	}
	return NULL;
}

int rm_dist_runs_script(const rm_dist_launcher *l, int on_slurm)
{
	return l && (l->start == RM_DIST_SCRIPT || (on_slurm && l->slurm == RM_DIST_SLURM_SCRIPT));
}

char *rm_dist_launcher_names(int tasks_only)
{
	rm_buf b = RM_BUF_INIT((size_t)1 << 12);
	size_t n = 0, k = 0;

	for (size_t i = 0; i < N_TABLE; i++)
		n += !tasks_only || table[i].slurm == RM_DIST_SLURM_TASKS;
	for (size_t i = 0; i < N_TABLE; i++) {
		if (tasks_only && table[i].slurm != RM_DIST_SLURM_TASKS)
			continue;
		rm_buf_addf(&b, "%s%s", k == 0 ? "" : k + 1 == n ? " or " : ", ", table[i].name);
		k++;
	}
	return rm_buf_detach(&b);
}

char *rm_dist_runner(const rm_dist_launcher *l, long nnodes, long nproc, long port)
{
	switch (l ? l->start : RM_DIST_TORCHRUN) {
	case RM_DIST_OWN:
	case RM_DIST_SCRIPT:
		return rm_xstrdup("");
	case RM_DIST_DEEPSPEED:
		return rm_xasprintf("deepspeed --num_gpus=%ld", nproc);
	case RM_DIST_TORCHRUN:
		break;
	}
	if (nnodes <= 1)
		return rm_xasprintf("torchrun --standalone --nproc_per_node=%ld", nproc);
	return rm_xasprintf("torchrun --nnodes=%ld --nproc_per_node=%ld --node_rank=$NODE_RANK "
			    "--master_addr=$MASTER_ADDR --master_port=%ld",
			    nnodes, nproc, port);
}
