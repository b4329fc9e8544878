/*
 * NVIDIA GPUs through one long-lived nvidia-smi: its query loop (-lms) prints a line per GPU
 * per interval, which costs far less than starting nvidia-smi (and NVML) per sample. It runs
 * as a child of the sampler thread and dies with it (PR_SET_PDEATHSIG), so a runner killed
 * with -9 leaves no nvidia-smi looping behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "telemetry_internal.h"
#include "rm/util.h"

char **rm_telem__nvsmi_argv(const char *path, const long *gpus, size_t n, double interval, int old)
{
	char **v = rm_xcalloc(1, sizeof(*v));
	size_t nv = 0;
	rm_buf ids = RM_BUF_INIT(1 << 16);
	char *ms = rm_xasprintf(
	    "%ld", (long)(interval * 1000 + 0.5) > 0 ? (long)(interval * 1000 + 0.5) : 1);

	for (size_t i = 0; i < n; i++)
		rm_buf_addf(&ids, "%s%ld", i ? "," : "", gpus[i]);
	v = rm_strv_push(v, &nv, path);
	v = rm_strv_push(v, &nv, old ? RM_TELEM_NVSMI_QUERY_OLD : RM_TELEM_NVSMI_QUERY);
	v = rm_strv_push(v, &nv, "--format=csv,noheader,nounits");
	v = rm_strv_push(v, &nv, "-lms");
	v = rm_strv_push(v, &nv, ms);
	v = rm_strv_push(v, &nv, "-i");
	v = rm_strv_push(v, &nv, rm_buf_str(&ids));
	rm_buf_release(&ids);
	free(ms);
	return v;
}

int rm_telem__spawn(char *const argv[], pid_t *pid, int *fd)
{
	int p[2], null_fd;
	pid_t parent = getpid(), c;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	c = fork();
	if (c < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		if (null_fd >= 0)
			close(null_fd);
		errno = e;
		return -1;
	}
	if (c == 0) {
		/* Only async-signal-safe calls from here to exec. */
		sigset_t none;
		struct sigaction dfl;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		for (int s = 1; s < 32; s++)
			if (s != SIGKILL && s != SIGSTOP)
				sigaction(s, &dfl, NULL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (null_fd < 0 || dup2(null_fd, 0) < 0 || dup2(p[1], 1) < 0 || dup2(p[1], 2) < 0)
			_exit(127);
		close_range(3, ~0U, 0);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	if (null_fd >= 0)
		close(null_fd);
	*pid = c;
	*fd = p[0];
	return 0;
}

int rm_telem__reap(pid_t pid)
{
	int status;
	struct timespec ms10 = {0, 10 * 1000 * 1000};

	kill(pid, SIGTERM);
	for (int i = 0; i < 100; i++) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return status;
		if (r < 0 && errno != EINTR)
			return -1;
		nanosleep(&ms10, NULL);
	}
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return status;
}
