/*
 * What sbatch, squeue, sacct and scontrol print, read into job states (see slurm.h). Their
 * formats, as seen on slurm-wlm 22.05 (../shared/SLURM.md):
 *   sbatch --parsable                      123            or 123;cluster
 *   squeue -h --states=all -o '%i|%T|%r'   123|RUNNING|None   123_4|PENDING|Priority
 *                                          123_[5-9%2]|PENDING|JobArrayTaskLimit
 *   sacct -X -n -P -o JobID,State,ExitCode 123|CANCELLED by 0|0:0   123_0|FAILED|3:0
 *   scontrol -o show job                   JobId=124 ArrayJobId=123 ArrayTaskId=1 ...
 *                                          JobState=TIMEOUT Reason=TimeLimit ... ExitCode=0:15
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slurm.h"
#include "rm/util.h"

/* More entries than any array SLURM allows by default (MaxArraySize 1001), far fewer than a
 * runaway range would make. */
#define MAX_ARRAY_TASKS 100000L

static const struct {
	const char *name, *abbrev;
	rm_slurm_state st;
} states[] = {
    {"PENDING", "PD", RM_SLURM_PENDING},
    {"CONFIGURING", "CF", RM_SLURM_CONFIGURING},
    {"RUNNING", "R", RM_SLURM_RUNNING},
    {"COMPLETING", "CG", RM_SLURM_COMPLETING},
    {"SUSPENDED", "S", RM_SLURM_SUSPENDED},
    {"REQUEUED", "RQ", RM_SLURM_REQUEUED},
    {"REQUEUE_HOLD", "RH", RM_SLURM_REQUEUED},
    {"REQUEUE_FED", "RF", RM_SLURM_REQUEUED},
    {"RESIZING", "RS", RM_SLURM_RUNNING},
    {"SIGNALING", "SI", RM_SLURM_RUNNING},
    {"STAGE_OUT", "SO", RM_SLURM_COMPLETING},
    {"STOPPED", "ST", RM_SLURM_SUSPENDED},
    {"RESV_DEL_HOLD", "RD", RM_SLURM_PENDING},
    {"COMPLETED", "CD", RM_SLURM_COMPLETED},
    {"FAILED", "F", RM_SLURM_FAILED},
    {"TIMEOUT", "TO", RM_SLURM_TIMEOUT},
    {"CANCELLED", "CA", RM_SLURM_CANCELLED},
    {"NODE_FAIL", "NF", RM_SLURM_NODE_FAIL},
    {"OUT_OF_MEMORY", "OOM", RM_SLURM_OUT_OF_MEMORY},
    {"PREEMPTED", "PR", RM_SLURM_PREEMPTED},
    {"BOOT_FAIL", "BF", RM_SLURM_BOOT_FAIL},
    {"DEADLINE", "DL", RM_SLURM_DEADLINE},
    {"REVOKED", "RV", RM_SLURM_CANCELLED},
    {"SPECIAL_EXIT", "SE", RM_SLURM_FAILED},
};

rm_slurm_state rm_slurm_state_parse(const char *s)
{
	/* The first word only: "CANCELLED by 0"; sacct marks truncated names with '+'. */
	size_t n = strcspn(s ? s : "", " +\t\r\n");

	for (size_t i = 0; n && i < sizeof(states) / sizeof(states[0]); i++) {
		if ((strlen(states[i].name) == n && !strncmp(s, states[i].name, n)) ||
		    (strlen(states[i].abbrev) == n && !strncmp(s, states[i].abbrev, n)))
			return states[i].st;
	}
	return RM_SLURM_UNKNOWN;
}

const char *rm_slurm_state_name(rm_slurm_state st)
{
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		if (states[i].st == st)
			return states[i].name;
	return "UNKNOWN";
}

int rm_slurm_state_final(rm_slurm_state st)
{
	return st >= RM_SLURM_COMPLETED;
}

int rm_slurm_parse_sbatch(const char *out, long *job_id, rm_error *err)
{
	char *s = rm_xstrdup(out ? out : ""), *t = rm_trim(s);
	/* Warnings may come first; the id is the last line. */
	char *last = strrchr(t, '\n');
	int r;

	if (last)
		t = rm_trim(last + 1);
	t[strcspn(t, ";")] = '\0';
	r = rm_parse_long(t, 1, 1L << 40, job_id);
	if (r < 0)
		rm_error_set(err, RM_ERR_INTERNAL,
			     "sbatch --parsable printed '%.100s', not a job id", rm_trim(s));
	free(s);
	return r;
}

static void slurm_state_push(rm_slurm_job_state **v, size_t *n, const rm_slurm_job_state *js)
{
	/* Capacity doubles at each power of two (8 at least): arrays of thousands stay cheap. */
	if ((*n & (*n - 1)) == 0)
		*v = rm_xrealloc(*v, (*n < 4 ? 8 : 2 * *n) * sizeof(**v));
	(*v)[(*n)++] = *js;
}

/* "3:0" -> 3, 0 */
static int parse_exit(const char *s, size_t len, int *code, int *sig)
{
	char *t = rm_xstrndup(s, len), *colon = strchr(t, ':');
	long c = 0, g = 0;
	int ok;

	if (colon)
		*colon = '\0';
	ok = rm_parse_long(t, 0, 255, &c) == 0 &&
	     (!colon || rm_parse_long(colon + 1, 0, 255, &g) == 0);
	free(t);
	if (ok) {
		*code = (int)c;
		*sig = (int)g;
	}
	return ok ? 0 : -1;
}

/*
 * A job id as the commands print it: "123", "123_4", "123_[2-5,7%2]" (pending array tasks),
 * "123.batch" (a step: not a job; 1). Adds one entry per job or task with template t.
 */
static int add_ids(const char *id, size_t len, rm_slurm_job_state t, rm_slurm_job_state **v,
		   size_t *n)
{
	char *s = rm_xstrndup(id, len), *us = strchr(s, '_');
	int ret = -1;

	if (strchr(s, '.')) {
		ret = 1;
		goto out;
	}
	if (us)
		*us = '\0';
	if (rm_parse_long(s, 1, 1L << 40, &t.job_id) < 0)
		goto out;
	if (!us) {
		t.array_task = -1;
		slurm_state_push(v, n, &t);
		ret = 0;
		goto out;
	}
	char *spec = us + 1;
	size_t sl = strlen(spec);
	if (spec[0] == '[') {
		if (sl < 3 || spec[sl - 1] != ']')
			goto out;
		spec[sl - 1] = '\0';
		spec++;
		spec[strcspn(spec, "%")] = '\0'; /* the throttle */
	}
	/* "2-5,7" */
	for (char *item = spec; item && *item;) {
		char *comma = strchr(item, ',');
		char *dash;
		long lo, hi;
		if (comma)
			*comma = '\0';
		dash = strchr(item, '-');
		if (dash)
			*dash = '\0';
		if (rm_parse_long(item, 0, 1L << 30, &lo) < 0 ||
		    (dash && rm_parse_long(dash + 1, lo, 1L << 30, &hi) < 0))
			goto out;
		if (!dash)
			hi = lo;
		if (*n + (size_t)(hi - lo + 1) > (size_t)MAX_ARRAY_TASKS)
			goto out;
		for (long k = lo; k <= hi; k++) {
			t.array_task = k;
			slurm_state_push(v, n, &t);
		}
		item = comma ? comma + 1 : NULL;
	}
	ret = 0;
out:
	free(s);
	return ret;
}

static void set_reason(rm_slurm_job_state *t, const char *s, size_t len)
{
	if (len >= sizeof(t->reason))
		len = sizeof(t->reason) - 1;
	memcpy(t->reason, s, len);
	t->reason[len] = '\0';
}

/* Splits out into lines and each line at '|' into at most max fields (the last may hold
 * more bars); calls fn for each non-empty line. */
typedef int (*line_fn)(const char **f, const size_t *fl, int nf, rm_slurm_job_state **v, size_t *n);

static int for_lines(const char *out, int max, line_fn fn, const char *what, rm_slurm_job_state **v,
		     size_t *n, rm_error *err)
{
	const char *p = out ? out : "";

	*v = NULL;
	*n = 0;
	while (*p) {
		size_t ll = strcspn(p, "\n");
		const char *f[8];
		size_t fl[8];
		int nf = 0;
		const char *q = p, *end = p + ll;
		while (end > p && (end[-1] == '\r' || end[-1] == ' '))
			end--;
		if (end > p) {
			while (nf < max) {
				const char *bar =
				    nf == max - 1 ? NULL : memchr(q, '|', (size_t)(end - q));
				f[nf] = q;
				fl[nf] = (size_t)((bar ? bar : end) - q);
				nf++;
				if (!bar)
					break;
				q = bar + 1;
			}
			if (fn(f, fl, nf, v, n) < 0) {
				free(*v);
				*v = NULL;
				*n = 0;
				return rm_error_set(err, RM_ERR_INTERNAL,
						    "cannot read this line of %s: '%.*s'", what,
						    (int)(ll > 200 ? 200 : ll), p);
			}
		}
		p += ll;
		if (*p)
			p++;
	}
	return 0;
}

static int squeue_line(const char **f, const size_t *fl, int nf, rm_slurm_job_state **v, size_t *n)
{
	rm_slurm_job_state t = {0};
	char *st;

	if (nf < 2)
		return -1;
	st = rm_xstrndup(f[1], fl[1]);
	t.state = rm_slurm_state_parse(st);
	free(st);
	if (nf > 2)
		set_reason(&t, f[2], fl[2]);
	return add_ids(f[0], fl[0], t, v, n) < 0 ? -1 : 0;
}

int rm_slurm_parse_squeue(const char *out, rm_slurm_job_state **v, size_t *n, rm_error *err)
{
	return for_lines(out, 3, squeue_line, "squeue's output", v, n, err);
}

static int sacct_line(const char **f, const size_t *fl, int nf, rm_slurm_job_state **v, size_t *n)
{
	rm_slurm_job_state t = {0};
	char *st;

	if (nf < 3 || parse_exit(f[2], fl[2], &t.exit_code, &t.exit_signal) < 0)
		return -1;
	st = rm_xstrndup(f[1], fl[1]);
	t.state = rm_slurm_state_parse(st);
	/* "CANCELLED by 0": who cancelled it, for the reason text */
	if (fl[1] > 10 && !strncmp(st, "CANCELLED ", 10))
		set_reason(&t, st + 10, fl[1] - 10);
	free(st);
	return add_ids(f[0], fl[0], t, v, n) < 0 ? -1 : 0;
}

int rm_slurm_parse_sacct(const char *out, rm_slurm_job_state **v, size_t *n, rm_error *err)
{
	return for_lines(out, 3, sacct_line, "sacct's output", v, n, err);
}

/* The value of " KEY=" in a scontrol one-liner (up to the next blank), or NULL. */
static const char *kv(const char *line, size_t ll, const char *key, size_t *len)
{
	size_t kl = strlen(key);

	for (const char *p = line; p + kl + 1 <= line + ll; p++) {
		if ((p == line || p[-1] == ' ') && !strncmp(p, key, kl) && p[kl] == '=') {
			const char *v = p + kl + 1, *e = v;
			while (e < line + ll && *e != ' ')
				e++;
			*len = (size_t)(e - v);
			return v;
		}
	}
	return NULL;
}

static int scontrol_line(const char **f, const size_t *fl, int nf, rm_slurm_job_state **v,
			 size_t *n)
{
	rm_slurm_job_state t = {0};
	size_t l, al, tl;
	const char *s, *aj, *at;
	char *st, *id;
	int r;

	(void)nf;
	s = kv(f[0], fl[0], "JobState", &l);
	if (!s)
		return -1;
	st = rm_xstrndup(s, l);
	t.state = rm_slurm_state_parse(st);
	free(st);
	if ((s = kv(f[0], fl[0], "Reason", &l)))
		set_reason(&t, s, l);
	if ((s = kv(f[0], fl[0], "ExitCode", &l)) &&
	    parse_exit(s, l, &t.exit_code, &t.exit_signal) < 0)
		return -1;
	if ((s = kv(f[0], fl[0], "NodeList", &l)) && l < sizeof(t.nodelist) &&
	    strncmp(s, "(null)", l) != 0) {
		memcpy(t.nodelist, s, l);
		t.nodelist[l] = '\0';
	}
	aj = kv(f[0], fl[0], "ArrayJobId", &al);
	at = kv(f[0], fl[0], "ArrayTaskId", &tl);
	if (aj && at)
		id = rm_xasprintf("%.*s_%.*s", (int)al, aj, (int)tl, at);
	else if ((s = kv(f[0], fl[0], "JobId", &l)))
		id = rm_xstrndup(s, l);
	else
		return -1;
	/* Pending tasks: "ArrayTaskId=2-5%2" */
	if (aj && at && !strchr(id, '[') &&
	    (strchr(id, '-') || strchr(id, ',') || strchr(id, '%'))) {
		char *br = rm_xasprintf("%.*s_[%.*s]", (int)al, aj, (int)tl, at);
		free(id);
		id = br;
	}
	r = add_ids(id, strlen(id), t, v, n);
	free(id);
	return r < 0 ? -1 : 0;
}

int rm_slurm_parse_scontrol(const char *out, rm_slurm_job_state **v, size_t *n, rm_error *err)
{
	/* One field per line: bars may appear inside values (Command=, Comment=). */
	return for_lines(out, 1, scontrol_line, "scontrol's output", v, n, err);
}

void rm_slurm_reason(const rm_slurm_job_state *js, char *buf, size_t size)
{
	char id[64], why[160];
	const char *name = rm_slurm_state_name(js->state);

	if (js->array_task >= 0)
		snprintf(id, sizeof(id), "%ld_%ld", js->job_id, js->array_task);
	else
		snprintf(id, sizeof(id), "%ld", js->job_id);
	switch (js->state) {
	case RM_SLURM_FAILED:
		if (js->exit_signal)
			snprintf(why, sizeof(why), "a task was killed by signal %d",
				 js->exit_signal);
		else
			snprintf(why, sizeof(why), "a task exited with code %d", js->exit_code);
		break;
	case RM_SLURM_TIMEOUT:
		snprintf(why, sizeof(why), "it reached its time limit (slurm.time)");
		break;
	case RM_SLURM_COMPLETED:
		snprintf(buf, size, "slurm job %s: COMPLETED", id);
		return;
	case RM_SLURM_CANCELLED:
		/* sacct: "CANCELLED by 0", the uid of who cancelled it */
		if (rm_starts_with(js->reason, "by ") && js->reason[3] >= '0' &&
		    js->reason[3] <= '9')
			snprintf(why, sizeof(why), "cancelled by uid %s", js->reason + 3);
		else if (js->reason[0] && strcmp(js->reason, "None") != 0)
			snprintf(why, sizeof(why), "cancelled %s", js->reason);
		else
			snprintf(why, sizeof(why), "scancel or an administrator stopped it");
		break;
	case RM_SLURM_NODE_FAIL:
		snprintf(why, sizeof(why), "one of its nodes failed or went down");
		break;
	case RM_SLURM_OUT_OF_MEMORY:
		snprintf(why, sizeof(why), "a task ran out of memory");
		break;
	case RM_SLURM_PREEMPTED:
		snprintf(why, sizeof(why), "a job of higher priority preempted it");
		break;
	case RM_SLURM_BOOT_FAIL:
		snprintf(why, sizeof(why), "a node failed to boot");
		break;
	case RM_SLURM_DEADLINE:
		snprintf(why, sizeof(why), "it missed its deadline");
		break;
	default:
		snprintf(why, sizeof(why), "reason %s", js->reason[0] ? js->reason : "unknown");
		break;
	}
	snprintf(buf, size, "slurm job %s: %s (%s)", id, name, why);
}

int rm_slurm_first_failed_task(const char *log, long *task, int *code, char *node, size_t node_size)
{
	static const char head[] = "srun: error: ";
	const char *p = log ? log : "";

	while (*p) {
		size_t ll = strcspn(p, "\n");
		char *line = rm_xstrndup(p, ll), *t, *c;
		long tk, cd;
		/* "srun: error: NODE: task N: Exited with exit code C" */
		if (rm_starts_with(line, head) && (t = strstr(line, ": task ")) &&
		    (c = strstr(t, ": Exited with exit code "))) {
			*c = '\0';
			if (rm_parse_long(t + 7, 0, 1L << 30, &tk) == 0 &&
			    rm_parse_long(c + 24, 0, 255, &cd) == 0) {
				*t = '\0';
				snprintf(node, node_size, "%s", line + sizeof(head) - 1);
				*task = tk;
				*code = (int)cd;
				free(line);
				return 0;
			}
		}
		free(line);
		p += ll;
		if (*p)
			p++;
	}
	return 1;
}

int rm_slurm_pending_hopeless(const char *reason)
{
	static const char *const never[] = {
	    "PartitionNodeLimit",
	    "PartitionTimeLimit",
	    "PartitionConfig",
	    "PartitionDown",
	    "PartitionInactive",
	    "BadConstraints",
	    "InvalidAccount",
	    "InvalidQOS",
	    "AccountNotAllowed",
	    "QOSMaxNodePerJobLimit",
	    "QOSMaxWallDurationPerJobLimit",
	    "AssocMaxNodesPerJob",
	    "AssocMaxWallDurationPerJobLimit",
	    "QOSMaxGRESPerJob",
	    "DependencyNeverSatisfied",
	    "JobLaunchFailure",
	};

	for (size_t i = 0; reason && i < sizeof(never) / sizeof(never[0]); i++)
		if (strcmp(reason, never[i]) == 0)
			return 1;
	return 0;
}

char *rm_slurm_hostlist_first(const char *list)
{
	rm_buf b = RM_BUF_INIT(4096);
	const char *p = list;

	if (!p || !*p || *p == ',' || *p == '[')
		return NULL;
	/* The first host: every bracket group contributes its first number (width kept). */
	while (*p && *p != ',') {
		if (*p == '[') {
			const char *close = strchr(p, ']');
			size_t nl = strspn(p + 1, "0123456789");
			if (!close || nl == 0 || rm_buf_add(&b, p + 1, nl) < 0) {
				rm_buf_release(&b);
				return NULL;
			}
			p = close + 1;
			continue;
		}
		if (rm_buf_addch(&b, *p) < 0) {
			rm_buf_release(&b);
			return NULL;
		}
		p++;
	}
	return rm_buf_detach(&b);
}

char *rm_slurm_node_addr(const char *out)
{
	size_t l;
	const char *line = out ? out : "";
	const char *v = kv(line, strlen(line), "NodeAddr", &l);

	while (v && l && (v[l - 1] == '\n' || v[l - 1] == '\r'))
		l--;
	return v && l ? rm_xstrndup(v, l) : NULL;
}
