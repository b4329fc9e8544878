/*
 * Dynamic registries: madengine imports scripts/<dir>/get_models_json.py and calls its
 * list_models(), which returns madengine.utils.discover_models.CustomModel objects. Here
 * python3 does the same in a child process, with a stand-in for that module (the dataclass
 * with madengine's fields and defaults), and hands the models back as JSON on fd 3. The
 * child's stdout goes to our stderr, so prints of the user's code never mix with the JSON.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dynamic.h"
#include "rm/util.h"

#define DYNAMIC_MAX_BYTES ((size_t)64 << 20)

/* CustomModel as madengine defines it (src/madengine/utils/discover_models.py); name and
 * tags are taken before update_model(), which madengine says must not change them. */
static const char driver[] =
    "import dataclasses, importlib.util, json, os, sys, types, typing\n"
    "@dataclasses.dataclass\n"
    "class CustomModel:\n"
    "    name: str\n"
    "    dockerfile: str = ''\n"
    "    dockercontext: str = ''\n"
    "    scripts: str = ''\n"
    "    url: str = ''\n"
    "    cred: str = ''\n"
    "    owner: str = ''\n"
    "    data: str = ''\n"
    "    n_gpus: str = '-1'\n"
    "    timeout: int = 7200\n"
    "    training_precision: str = ''\n"
    "    tags: typing.List[str] = dataclasses.field(default_factory=list)\n"
    "    args: str = ''\n"
    "    multiple_results: str = ''\n"
    "    skip_gpu_arch: str = ''\n"
    "    def to_dict(self):\n"
    "        return dataclasses.asdict(self)\n"
    "    def update_model(self):\n"
    "        pass\n"
    "pkg = types.ModuleType('madengine')\n"
    "utils = types.ModuleType('madengine.utils')\n"
    "dm = types.ModuleType('madengine.utils.discover_models')\n"
    "dm.CustomModel = CustomModel\n"
    "pkg.utils = utils\n"
    "utils.discover_models = dm\n"
    "sys.modules.update({'madengine': pkg, 'madengine.utils': utils,\n"
    "                    'madengine.utils.discover_models': dm})\n"
    "out = os.fdopen(3, 'w')\n"
    "spec = importlib.util.spec_from_file_location('get_models_json', sys.argv[1])\n"
    "mod = importlib.util.module_from_spec(spec)\n"
    "spec.loader.exec_module(mod)\n"
    "if not hasattr(mod, 'list_models'):\n"
    "    sys.exit('it defines no list_models() function')\n"
    "res = []\n"
    "for cm in mod.list_models():\n"
    "    if not isinstance(cm, CustomModel):\n"
    "        sys.exit('list_models() must return madengine.utils.discover_models.CustomModel "
    "objects')\n"
    "    name, tags = cm.name, list(cm.tags)\n"
    "    cm.update_model()\n"
    "    d = cm.to_dict()\n"
    "    d['name'], d['tags'] = name, tags\n"
    "    res.append(d)\n"
    "json.dump(res, out)\n"
    "out.close()\n";

/* In the child: never returns. */
static void run_child(const char *root, const char *script, int wfd)
{
	int null = open("/dev/null", O_RDONLY);

	setpgid(0, 0);
	if (null >= 0) {
		dup2(null, 0);
		close(null);
	}
	dup2(2, 1);
	if (wfd != 3) {
		dup2(wfd, 3);
		close(wfd);
	}
	if (root && *root && chdir(root) != 0)
		_exit(126);
	/* -I: no PYTHON* variables, no user site; -B: no .pyc left in the folder. */
	execlp("python3", "python3", "-I", "-B", "-c", driver, script, (char *)NULL);
	_exit(127);
}

/* The child's stdout into out until it closes it or the deadline passes (*timed_out).
 * Output over the limit kills the child (its process group) and is an error. */
static int read_child(int fd, pid_t pid, double deadline, rm_buf *out, const char *path,
		      int *timed_out, rm_error *err)
{
	for (;;) {
		char chunk[65536];
		struct pollfd pfd = {fd, POLLIN, 0};
		double left = deadline - rm_now();
		int r, status;
		ssize_t n;

		if (left <= 0) {
			*timed_out = 1;
			return 0;
		}
		r = poll(&pfd, 1, (int)(left * 1000) + 1);
		if (r <= 0)
			continue; /* EINTR, or the deadline check ends the loop */
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		if (rm_buf_add(out, chunk, (size_t)n)) {
			rm_error_set(err, RM_ERR_INPUT, "'%s' listed more than %zu MiB of models",
				     path, DYNAMIC_MAX_BYTES >> 20);
			kill(-pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -1;
		}
	}
}

int rm_dynamic_load(rm_registry *reg, const char *root, const char *path, const char *dir,
		    const char *base, double timeout, rm_error *err)
{
	int fds[2] = {-1, -1}, status = 0, ret = -1, timed_out = 0;
	pid_t pid;
	rm_buf out = RM_BUF_INIT(DYNAMIC_MAX_BYTES);
	char *script = rm_xasprintf("%s/get_models_json.py", base);
	double deadline = rm_now() + (timeout > 0 ? timeout : 60);
	size_t keep = reg->n;

	if (!rm_on_path("python3")) {
		rm_error_set(err, RM_ERR_INPUT,
			     "'%s' is a dynamic registry and python3 is not installed; install "
			     "python3 or write its models to %s/models.json",
			     path, base);
		goto out;
	}
	if (pipe(fds) != 0) {
		rm_error_sys(err, RM_ERR_IO, errno, "'%s': pipe", path);
		goto out;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		rm_error_sys(err, RM_ERR_IO, errno, "'%s': fork", path);
		goto out;
	}
	if (pid == 0) {
		close(fds[0]);
		run_child(root, script, fds[1]);
	}
	close(fds[1]);
	fds[1] = -1;
	if (read_child(fds[0], pid, deadline, &out, path, &timed_out, err) < 0)
		goto out;
	if (timed_out)
		kill(-pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (timed_out) {
		rm_error_set(err, RM_ERR_INPUT,
			     "'%s' did not list its models within %g s (it was stopped)", path,
			     timeout > 0 ? timeout : 60);
		goto out;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		rm_error_set(err, RM_ERR_INPUT,
			     "'%s' failed (python3 %s %d; its messages are above); fix it or "
			     "write its models to %s/models.json",
			     path, WIFEXITED(status) ? "exit code" : "signal",
			     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), base);
		goto out;
	}
	if (rm_registry_load_buffer(reg, rm_buf_str(&out), out.len, path, dir, base, err) < 0)
		goto out;
	for (size_t i = keep; i < reg->n; i++)
		reg->models[i].dynamic = 1;
	ret = 0;
out:
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	rm_buf_release(&out);
	free(script);
	return ret;
}
