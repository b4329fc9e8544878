#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rm/launcher.h"
#include "rm/util.h"

static void check_quote(const char *in, const char *want)
{
	char *q = rm_shell_quote(in);
	CHECK_STR(q, want);

	/* and a shell-style split of the quoted word gives the original back */
	char **w = NULL;
	size_t n = 0;
	rm_error err = RM_ERROR_INIT;
	CHECK(rm_split_words(q, &w, &n, &err) == 0);
	CHECK(n == 1);
	if (n == 1)
		CHECK_STR(w[0], in);
	rm_strv_free(w);
	free(q);
}

TEST(quote)
{
	check_quote("plain", "plain");
	check_quote("A-Za_z0.9/x:y=z@h%p+q,r", "A-Za_z0.9/x:y=z@h%p+q,r");
	check_quote("", "''");
	check_quote("two words", "'two words'");
	check_quote("$HOME", "'$HOME'");
	check_quote("it's", "'it'\\''s'");
	check_quote("'", "''\\'''");
	check_quote("\"device=0,2\"", "'\"device=0,2\"'");
	check_quote("a;b|c&d", "'a;b|c&d'");
	check_quote("`id` $(id) *.py ~ #x !x", "'`id` $(id) *.py ~ #x !x'");
	check_quote("tab\there", "'tab\there'");
	check_quote("back\\slash", "'back\\slash'");
	CHECK(rm_shell_quote(NULL) == NULL);
}

static char *run_line(const char *body_json, const char *name)
{
	json_error_t je;
	json_t *body = json_loads(body_json, 0, &je);
	if (!body) {
		fprintf(stderr, "bad test JSON: %s\n", je.text);
		return NULL;
	}
	char *s = rm_run_cmdline(body, name);
	json_decref(body);
	return s;
}

static void check_run(const char *body_json, const char *name, const char *want)
{
	char *s = run_line(body_json, name);
	CHECK_STR(s, want);
	free(s);
}

TEST(amd)
{
	check_run(
	    "{\"Image\": \"IMAGE\", \"Cmd\": [\"bash\", \"run.sh\", \"--a\", \"two words\"],"
	    " \"Env\": [\"MAD_MODEL_NAME=x\"], \"WorkingDir\": \"/myworkspace/x\","
	    " \"Labels\": {\"run_models.run\": \"ID\"}, \"User\": \"root\", \"Tty\": false,"
	    " \"AttachStdout\": true, \"OpenStdin\": false,"
	    " \"HostConfig\": {\"Devices\": ["
	    "   {\"PathOnHost\": \"/dev/kfd\", \"PathInContainer\": \"/dev/kfd\","
	    "    \"CgroupPermissions\": \"rwm\"},"
	    "   {\"PathOnHost\": \"/dev/dri/renderD128\","
	    "    \"PathInContainer\": \"/dev/dri/renderD128\", \"CgroupPermissions\": \"rwm\"}],"
	    "  \"NetworkMode\": \"host\", \"AutoRemove\": false, \"Binds\": [\"/host:/ctr\"],"
	    "  \"IpcMode\": \"host\", \"GroupAdd\": [\"video\"],"
	    "  \"CapAdd\": [\"SYS_PTRACE\", \"SYS_ADMIN\"],"
	    "  \"SecurityOpt\": [\"seccomp=unconfined\"], \"ShmSize\": 68719476736}}",
	    "N",
	    "docker run --rm --name N --network host --ipc host -u root --group-add video "
	    "--cap-add SYS_PTRACE --cap-add SYS_ADMIN --security-opt seccomp=unconfined "
	    "--device /dev/kfd --device /dev/dri/renderD128 --shm-size 68719476736 "
	    "-v /host:/ctr -e MAD_MODEL_NAME=x --label run_models.run=ID -w /myworkspace/x "
	    "IMAGE bash run.sh --a 'two words'");
}

TEST(nvidia)
{
	const char *head =
	    "{\"Image\": \"ci-x:latest\", \"Cmd\": [\"python3\", \"train.py\"],"
	    " \"Env\": [\"A=1\"], \"WorkingDir\": \"/myworkspace\","
	    " \"HostConfig\": {\"NetworkMode\": \"host\", \"IpcMode\": \"host\","
	    " \"CapAdd\": [\"SYS_PTRACE\", \"SYS_ADMIN\"],"
	    " \"SecurityOpt\": [\"seccomp=unconfined\"], \"Devices\": [],"
	    " \"DeviceRequests\": [{\"Driver\": \"\", \"Capabilities\": [[\"gpu\"]],";
	const char *tail = "}]}}";
	const char *want_head = "docker run --rm --name ci-x-run --network host --ipc host "
				"--cap-add SYS_PTRACE --cap-add SYS_ADMIN "
				"--security-opt seccomp=unconfined --gpus ";
	const char *want_tail = " -e A=1 -w /myworkspace ci-x:latest python3 train.py";
	char *body, *want;

	body = rm_xasprintf("%s \"Count\": -1%s", head, tail);
	want = rm_xasprintf("%sall%s", want_head, want_tail);
	check_run(body, "ci-x-run", want);
	free(body);
	free(want);

	body = rm_xasprintf("%s \"DeviceIDs\": [\"0\", \"2\"]%s", head, tail);
	want = rm_xasprintf("%s'\"device=0,2\"'%s", want_head, want_tail);
	check_run(body, "ci-x-run", want);
	free(body);
	free(want);

	body = rm_xasprintf("%s \"Count\": 2%s", head, tail);
	want = rm_xasprintf("%s2%s", want_head, want_tail);
	check_run(body, "ci-x-run", want);
	free(body);
	free(want);
}

TEST(gpuless)
{
	check_run("{\"Image\": \"ci-smoke\", \"Cmd\": [\"sh\", \"-c\", \"echo $HOME 'hi'\"],"
		  " \"Env\": [\"MAD_GPU_VENDOR=NONE\", \"MSG=it's here\", \"EMPTY=\"],"
		  " \"WorkingDir\": \"/myworkspace/smoke\","
		  " \"Labels\": {\"run_models\": \"1\", \"run_models.model\": \"smoke\"},"
		  " \"HostConfig\": {\"NetworkMode\": \"host\", \"Devices\": [],"
		  "  \"Binds\": [\"/data sets:/data\"]}}",
		  "smoke",
		  "docker run --rm --name smoke --network host -v '/data sets:/data' "
		  "-e MAD_GPU_VENDOR=NONE -e 'MSG=it'\\''s here' -e EMPTY= --label run_models=1 "
		  "--label run_models.model=smoke -w /myworkspace/smoke ci-smoke "
		  "sh -c 'echo $HOME '\\''hi'\\'''");

	/* an empty argument survives as '' */
	check_run("{\"Image\": \"i\", \"Cmd\": [\"run.sh\", \"\", \"x\"]}", NULL,
		  "docker run --rm i run.sh '' x");
	/* nothing but an image */
	check_run("{\"Image\": \"busybox\"}", "b", "docker run --rm --name b busybox");
}

TEST(other_options)
{
	check_run("{\"Image\": \"img\", \"Entrypoint\": [\"/bin/sh\", \"-c\"], \"Cmd\": [\"true\"],"
		  " \"Tty\": true, \"OpenStdin\": true,"
		  " \"HostConfig\": {\"Devices\": ["
		  "   {\"PathOnHost\": \"/dev/a\", \"PathInContainer\": \"/dev/b\","
		  "    \"CgroupPermissions\": \"rwm\"},"
		  "   {\"PathOnHost\": \"/dev/c\", \"PathInContainer\": \"/dev/c\","
		  "    \"CgroupPermissions\": \"r\"},"
		  "   {\"PathOnHost\": \"/dev/d\"}],"
		  "  \"CpusetCpus\": \"0-7\", \"Privileged\": true, \"Init\": true,"
		  "  \"Ulimits\": [{\"Name\": \"memlock\", \"Soft\": -1, \"Hard\": -1},"
		  "               {\"Name\": \"stack\", \"Soft\": 67108864, \"Hard\": 134217728}],"
		  "  \"ShmSize\": 0}}",
		  "o",
		  "docker run --rm -i -t --name o --device /dev/a:/dev/b --device /dev/c:/dev/c:r "
		  "--device /dev/d --cpuset-cpus 0-7 --privileged --init --ulimit memlock=-1:-1 "
		  "--ulimit stack=67108864:134217728 --entrypoint /bin/sh img -c true");
}

TEST(build)
{
	json_t *args = json_pack("{s:s, s:s, s:n, s:i}", "BASE_DOCKER", "rocm/pytorch:latest",
				 "MSG", "hello world", "FROM_ENV", "N", 4);
	json_t *labels = json_pack("{s:s}", "run_models.fingerprint", "abc123");
	char *s;

	s = rm_build_cmdline("ci-x", "docker/x.ubuntu.amd.Dockerfile", "./docker", args, labels, 1,
			     1);
	CHECK_STR(s,
		  "docker build --network=host --no-cache --pull -t ci-x "
		  "-f docker/x.ubuntu.amd.Dockerfile --build-arg BASE_DOCKER=rocm/pytorch:latest "
		  "--build-arg 'MSG=hello world' --build-arg FROM_ENV --build-arg N=4 "
		  "--label run_models.fingerprint=abc123 ./docker");
	free(s);

	s = rm_build_cmdline("ci-y", "my dir/Dockerfile", ".", NULL, NULL, 0, 0);
	CHECK_STR(s, "docker build --network=host -t ci-y -f 'my dir/Dockerfile' .");
	free(s);
	json_decref(args);
	json_decref(labels);
}

/* Podman: its CLI's name, and CDI devices (a DeviceRequests entry of driver "cdi") as
 * --device NAME, as podman and docker 25+ take them. */
TEST(podman)
{
	json_t *body = json_loads("{\"Image\": \"img\", \"HostConfig\": {\"DeviceRequests\": "
				  "[{\"Driver\": \"cdi\", \"DeviceIDs\": [\"nvidia.com/gpu=0\", "
				  "\"nvidia.com/gpu=1\"]}]}}",
				  0, NULL);
	char *s = rm_run_cmdline_for("podman", body, "n");

	CHECK_STR(
	    s, "podman run --rm --name n --device nvidia.com/gpu=0 --device nvidia.com/gpu=1 img");
	free(s);
	json_decref(body);
	s = rm_build_cmdline_for("podman", "ci-x", "docker/x.Dockerfile", "./docker", NULL, NULL, 0,
				 1);
	CHECK_STR(s, "podman build --network=host --pull -t ci-x -f docker/x.Dockerfile ./docker");
	free(s);
}
