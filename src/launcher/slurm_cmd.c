/*
 * The SLURM commands the launcher runs (see slurm.h): sbatch, squeue, sacct, scontrol and
 * scancel, through rm_proc_run, with their output read by slurm_state.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pwd.h>
#include <unistd.h>

#include "slurm.h"
#include "rm/util.h"

#define MAX_CMD_OUTPUT (16u * 1024 * 1024)

/* The command's own words for a message: its stderr's last line, else stdout's. */
static const char *said(rm_proc_out *res)
{
	char *t = rm_trim(res->err_len ? res->err : res->out);
	char *nl = strrchr(t, '\n');
	return nl ? nl + 1 : (*t ? t : "(no message)");
}

/* Runs argv; 0 with res filled (any exit status); -1 when it could not run. */
static int run(char *const argv[], rm_proc_out *res, rm_error *err)
{
	double timeout = rm_interrupt_pending() ? RM_SLURM_CMD_SHORT : RM_SLURM_CMD_TIMEOUT;

	if (rm_proc_run(argv, NULL, timeout, MAX_CMD_OUTPUT, res, err) < 0) {
		if (!rm_on_path(argv[0]))
			rm_error_wrap(err, "is SLURM installed on this host");
		return -1;
	}
	return 0;
}

int rm_slurm_submit(const char *script_path, long *job_id, rm_error *err)
{
	char *argv[] = {(char *)"sbatch", (char *)"--parsable", (char *)script_path, NULL};
	rm_proc_out res;
	int ret = -1;

	if (run(argv, &res, err) < 0)
		goto out;
	if (res.status != 0) {
		rm_error_set(err, RM_ERR_INPUT, "sbatch '%s' refused the job: %s", script_path,
			     said(&res));
		goto out;
	}
	ret = rm_slurm_parse_sbatch(res.out, job_id, err);
out:
	rm_proc_out_release(&res);
	return ret;
}

int rm_slurm_queue(long job_id, rm_slurm_job_state **v, size_t *n, rm_error *err)
{
	char id[32];
	char *argv[] = {(char *)"squeue",	(char *)"-h", (char *)"-j",	  id,
			(char *)"--states=all", (char *)"-o", (char *)"%i|%T|%r", NULL};
	rm_proc_out res;
	int ret = -1;

	*v = NULL;
	*n = 0;
	snprintf(id, sizeof(id), "%ld", job_id);
	if (run(argv, &res, err) < 0)
		goto out;
	if (res.status != 0) {
		/* A job slurmctld has forgotten (MinJobAge after its end) has left the queue. */
		if (strstr(res.err, "Invalid job id")) {
			ret = 0;
			goto out;
		}
		rm_error_set(err, RM_ERR_IO, "squeue -j %ld failed: %s", job_id, said(&res));
		goto out;
	}
	ret = rm_slurm_parse_squeue(res.out, v, n, err);
	/* --states=all keeps finished jobs for MinJobAge: only the unfinished are queued. */
	size_t k = 0;
	for (size_t i = 0; ret == 0 && i < *n; i++)
		if (!rm_slurm_state_final((*v)[i].state))
			(*v)[k++] = (*v)[i];
	*n = k;
	if (!k) {
		free(*v);
		*v = NULL;
	}
out:
	rm_proc_out_release(&res);
	return ret;
}

int rm_slurm_final(long job_id, rm_slurm_job_state **v, size_t *n, const char **source,
		   rm_error *err)
{
	char id[32];
	char *sacct[] = {(char *)"sacct",
			 (char *)"-j",
			 id,
			 (char *)"-X",
			 (char *)"-n",
			 (char *)"-P",
			 (char *)"-o",
			 (char *)"JobID,State,ExitCode",
			 NULL};
	char *scontrol[] = {(char *)"scontrol", (char *)"-o", (char *)"show",
			    (char *)"job",	id,	      NULL};
	rm_proc_out res;
	int ret = -1;

	*v = NULL;
	*n = 0;
	snprintf(id, sizeof(id), "%ld", job_id);
	if (run(sacct, &res, err) < 0)
		goto out;
	if (res.status == 0) {
		*source = "sacct";
		ret = rm_slurm_parse_sacct(res.out, v, n, err);
		goto out;
	}
	/* No accounting ("Slurm accounting storage is disabled"): ask the controller. */
	rm_proc_out_release(&res);
	if (run(scontrol, &res, err) < 0)
		goto out;
	*source = "scontrol";
	if (res.status != 0) {
		rm_error_set(err, RM_ERR_IO,
			     "cannot learn how job %ld ended: sacct has no accounting and scontrol "
			     "says: %s",
			     job_id, said(&res));
		goto out;
	}
	ret = rm_slurm_parse_scontrol(res.out, v, n, err);
out:
	rm_proc_out_release(&res);
	return ret;
}

int rm_slurm_cancel(long job_id, long task, rm_error *err)
{
	char id[48];
	char *argv[] = {(char *)"scancel", id, NULL};
	rm_proc_out res;
	int ret = -1;

	if (task >= 0)
		snprintf(id, sizeof(id), "%ld_%ld", job_id, task);
	else
		snprintf(id, sizeof(id), "%ld", job_id);
	if (run(argv, &res, err) < 0)
		goto out;
	if (res.status != 0 && !strstr(res.err, "Invalid job id") &&
	    !strstr(res.err, "already completing or completed")) {
		rm_error_set(err, RM_ERR_IO, "scancel %s failed: %s", id, said(&res));
		goto out;
	}
	ret = 0;
out:
	rm_proc_out_release(&res);
	return ret;
}

/* The id ("12.0") of the step of job_id called name, or NULL. */
static char *step_id(long job_id, const char *name, rm_error *err)
{
	char id[32];
	char *argv[] = {(char *)"squeue", (char *)"-h",	   (char *)"-s", (char *)"-j", id,
			(char *)"-o",	  (char *)"%i|%j", NULL};
	rm_proc_out res;
	char *found = NULL;

	snprintf(id, sizeof(id), "%ld", job_id);
	if (run(argv, &res, err) == 0 && res.status == 0) {
		for (char *line = res.out, *nl; line && *line && !found; line = nl) {
			char *bar;
			nl = strchr(line, '\n');
			if (nl)
				*nl++ = '\0';
			bar = strchr(line, '|');
			if (bar && !strcmp(rm_trim(bar + 1), name)) {
				*bar = '\0';
				found = rm_xstrdup(rm_trim(line));
			}
		}
	}
	rm_proc_out_release(&res);
	return found;
}

int rm_slurm_signal_step(long job_id, const char *step_name, const char *signal, rm_error *err)
{
	char *step = step_id(job_id, step_name, err);
	char *argv[] = {(char *)"scancel", (char *)"-s", (char *)signal, step, NULL};
	rm_proc_out res;
	int ret = 1;

	if (!step)
		return 1;
	if (run(argv, &res, err) == 0) {
		ret = 0;
		if (res.status != 0)
			ret = rm_error_set(err, RM_ERR_IO, "scancel -s %s %s failed: %s", signal,
					   step, said(&res));
	} else {
		ret = -1;
	}
	rm_proc_out_release(&res);
	free(step);
	return ret;
}

/* One "ID|COMMENT" line of squeue -o '%F|%k'. */
static void mine_line(char *line, const char *prefix, long **ids, char ***comments, size_t *n)
{
	char *bar = strchr(line, '|');
	long id;
	size_t nc = *n;

	if (!bar)
		return;
	*bar = '\0';
	if (rm_parse_long(rm_trim(line), 1, 1L << 50, &id) < 0 || !rm_starts_with(bar + 1, prefix))
		return;
	for (size_t i = 0; i < *n; i++)
		if ((*ids)[i] == id)
			return; /* a pending array's tasks share its id */
	*ids = rm_xrealloc(*ids, (*n + 1) * sizeof(**ids));
	(*ids)[*n] = id;
	*comments = rm_strv_push(*comments, &nc, rm_trim(bar + 1));
	(*n)++;
}

int rm_slurm_mine(const char *prefix, long **ids, char ***comments, size_t *n, rm_error *err)
{
	struct passwd *pw = getpwuid(getuid());
	char uid[32];
	char *argv[] = {(char *)"squeue", (char *)"-h",	   (char *)"-u", uid,
			(char *)"-o",	  (char *)"%F|%k", NULL};
	rm_proc_out res;
	int ret = -1;

	*ids = NULL;
	*comments = NULL;
	*n = 0;
	snprintf(uid, sizeof(uid), "%s", pw ? pw->pw_name : "root");
	if (run(argv, &res, err) < 0)
		goto out;
	if (res.status != 0) {
		rm_error_set(err, RM_ERR_IO, "squeue -u %s failed: %s", uid, said(&res));
		goto out;
	}
	for (char *line = res.out, *nl; line && *line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = '\0';
		mine_line(line, prefix, ids, comments, n);
	}
	ret = 0;
out:
	rm_proc_out_release(&res);
	return ret;
}
