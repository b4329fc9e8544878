/*
 * Running a helper program and capturing what it prints: SLURM's commands (sbatch, squeue,
 * sacct, scontrol, scancel) and Docker credential helpers (docker-credential-<name> get).
 *
 * No shell is involved: argv goes to posix_spawnp as it is (argv[0] is searched on PATH). The
 * child gets `input` on stdin (or an empty stdin), default signal dispositions, an empty
 * signal mask, and a process group of its own, so a Ctrl-C meant for run_models does not
 * also kill the scancel it runs in answer. stdout and stderr are captured separately, each
 * up to max_out bytes (the rest is read and dropped, `truncated` says so). A program that
 * outlives `timeout` seconds is killed (its whole process group, SIGKILL).
 *
 * Ownership: rm_proc_out_release frees the captured texts.
 */
#ifndef RM_PROC_H
#define RM_PROC_H

#include <stddef.h>

#include "rm/error.h"

typedef struct rm_proc_out {
	char *out; /* stdout, NUL-terminated ("" when nothing) */
	size_t out_len;
	char *err; /* stderr, NUL-terminated */
	size_t err_len;
	int status;    /* exit code; 128 + N when killed by signal N */
	int timed_out; /* killed after `timeout` seconds */
	int truncated; /* some output beyond max_out was dropped */
} rm_proc_out;

/*
 * Runs argv and waits for it (at most timeout seconds; 0 = no limit). Returns 0 when the
 * program ran to its end, whatever its exit status (read res->status); -1 when it could not
 * be started (err: "cannot run 'sbatch': no such program on PATH") or when it timed out
 * (err: "'squeue' did not finish within 30 s"; res->timed_out set). res is filled in both
 * cases and must be released.
 */
int rm_proc_run(char *const argv[], const char *input, double timeout, size_t max_out,
		rm_proc_out *res, rm_error *err);
void rm_proc_out_release(rm_proc_out *res);

#endif
