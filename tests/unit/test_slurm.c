/*
 * The SLURM launcher's pure pieces (src/launcher/slurm_*.c): the madengine `slurm` and
 * `distributed` context keys, SLURM times, MAD_MULTI_NODE_RUNNER, the batch script (checked
 * line by line, by `bash -n`, and run with stand-in srun/scontrol/getent so every variable
 * is seen expanded), and the parsers of sbatch, squeue, sacct and scontrol output (literal
 * outputs of slurm-wlm 22.05 on the two-node test cluster).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "../../src/launcher/slurm.h"
#include "check.h"
#include "rm/launcher.h"
#include "rm/util.h"
#include "testfs.h"

static char *tmp;

static json_t *ctx(const char *text)
{
	json_error_t je;
	json_t *j = json_loads(text, 0, &je);
	if (!j)
		fprintf(stderr, "test json: %s\n", je.text);
	return j;
}

static int parse(const char *text, rm_slurm_conf *sc, rm_dist_conf *dc, int *present, rm_error *err)
{
	json_t *j = ctx(text);
	int r = rm_slurm_conf_parse(j, sc, dc, present, err);
	json_decref(j);
	return r;
}

static int has_note(const rm_slurm_conf *sc, const char *needle)
{
	for (char **n = sc->notes; n && *n; n++)
		if (strstr(*n, needle))
			return 1;
	return 0;
}

SETUP()
{
	tmp = tfs_tmpdir("slurm");
	signal(SIGPIPE, SIG_IGN);
}

TEARDOWN()
{
	tfs_rm_tree(tmp);
	free(tmp);
}

TEST(conf)
{
	rm_error err = RM_ERROR_INIT;
	rm_slurm_conf sc;
	rm_dist_conf dc;
	int present = -1;

	/* No slurm key: a local run. */
	CHECK(parse("{\"gpu_vendor\": \"AMD\"}", &sc, &dc, &present, &err) == 0);
	CHECK(present == 0);
	rm_slurm_conf_release(&sc);
	rm_dist_conf_release(&dc);

	/* An empty slurm object: madengine's defaults. */
	CHECK(parse("{\"slurm\": {}}", &sc, &dc, &present, &err) == 0);
	CHECK(present == 1);
	CHECK(sc.nodes == 1 && sc.gpus_per_node == -1 && sc.exclusive == 1);
	CHECK_STR(sc.time, "24:00:00");
	CHECK(sc.time_seconds == 86400);
	CHECK(sc.partition == NULL && sc.modules == NULL && sc.notes == NULL);
	CHECK_STR(dc.launcher, "torchrun");
	CHECK(dc.nnodes == 1 && dc.nproc_per_node == -1 && dc.port == 29500 && !dc.backend);
	rm_slurm_conf_release(&sc);
	rm_dist_conf_release(&dc);

	/* Everything, numbers as strings too; madengine keys we do not use and unknown keys
	 * become notes. */
	CHECK(parse("{\"slurm\": {\"partition\": \"debug\", \"nodes\": 2, \"gpus_per_node\": \"8\","
		    " \"time\": \"0:30:00\", \"exclusive\": false, \"account\": \"perf\","
		    " \"qos\": \"high\", \"constraint\": \"mi300x\", \"nodelist\": \"n[1-2]\","
		    " \"exclude\": \"n3\", \"reservation\": \"bench\", \"modules\": [\"rocm/6.2\","
		    " \"gcc\"], \"network_interface\": \"^docker,lo\", \"output_dir\": \"./out\","
		    " \"shared_workspace\": \"/nfs\", \"colour\": \"blue\"},"
		    " \"distributed\": {\"launcher\": \" TorchRun \", \"nnodes\": 2,"
		    " \"nproc_per_node\": 4, \"port\": \"29600\", \"backend\": \"nccl\","
		    " \"sglang_disagg\": {}}}",
		    &sc, &dc, &present, &err) == 0);
	CHECK_STR(sc.partition, "debug");
	CHECK(sc.nodes == 2 && sc.gpus_per_node == 8 && sc.exclusive == 0);
	CHECK(sc.time_seconds == 1800);
	CHECK_STR(sc.account, "perf");
	CHECK_STR(sc.qos, "high");
	CHECK_STR(sc.constraint, "mi300x");
	CHECK_STR(sc.nodelist, "n[1-2]");
	CHECK_STR(sc.exclude, "n3");
	CHECK_STR(sc.reservation, "bench");
	CHECK(sc.modules && sc.modules[0] && sc.modules[1] && !sc.modules[2]);
	CHECK_STR(sc.modules[1], "gcc");
	CHECK_STR(sc.network_interface, "^docker,lo");
	CHECK_STR(dc.launcher, "torchrun");
	CHECK(dc.nnodes == 2 && dc.nproc_per_node == 4 && dc.port == 29600);
	CHECK_STR(dc.backend, "nccl");
	CHECK(has_note(&sc, "slurm.output_dir is not used") && has_note(&sc, "--log-dir"));
	CHECK(has_note(&sc, "slurm.shared_workspace is not used"));
	CHECK(has_note(&sc, "unknown key slurm.colour"));
	CHECK(has_note(&sc, "unknown key distributed.sglang_disagg"));
	rm_slurm_conf_release(&sc);
	rm_dist_conf_release(&dc);

	/* nodes and nnodes: nnodes alone sizes the allocation; when both differ, slurm.nodes
	 * sizes it and rm_slurm_nodes_check refuses the pair, naming both (issue 30). */
	CHECK(parse("{\"slurm\": {}, \"distributed\": {\"nnodes\": 3}}", &sc, &dc, &present,
		    &err) == 0);
	CHECK(sc.nodes == 3 && dc.nnodes == 3 && !sc.notes);
	rm_slurm_conf_release(&sc);
	rm_dist_conf_release(&dc);
	CHECK(parse("{\"slurm\": {\"nodes\": 2}, \"distributed\": {\"nnodes\": 4}}", &sc, &dc,
		    &present, &err) == 0);
	CHECK(sc.nodes == 2 && dc.nnodes == 2 && dc.nnodes_given == 4 && !sc.notes);
	CHECK(rm_slurm_nodes_check(&sc, &dc, "card 'x'", "the context", &err) < 0);
	CHECK_STR(err.msg, "slurm.nodes 2 (card 'x') and distributed.nnodes 4 (the context) "
			   "disagree: the job would hold 2 node(s) for a launcher set for 4; make "
			   "them equal");
	rm_slurm_conf_release(&sc);
	rm_dist_conf_release(&dc);
	/* A single module as a string; exclusive as "true"; an integral real. */
	CHECK(parse("{\"slurm\": {\"modules\": \"rocm\", \"exclusive\": \"TRUE\", \"nodes\": 2.0}}",
		    &sc, &dc, &present, &err) == 0);
	CHECK(sc.modules && !strcmp(sc.modules[0], "rocm") && !sc.modules[1]);
	CHECK(sc.exclusive == 1 && sc.nodes == 2);
	rm_slurm_conf_release(&sc);
	rm_dist_conf_release(&dc);

	/* Refusals name the key. */
	struct {
		const char *json, *msg;
	} bad[] = {
	    {"{\"slurm\": {\"nodes\": 0}}", "slurm.nodes must be a whole number from 1"},
	    {"{\"slurm\": {\"nodes\": \"two\"}}", "slurm.nodes"},
	    {"{\"slurm\": {\"nodes\": 1.5}}", "slurm.nodes"},
	    {"{\"slurm\": {\"nodes\": true}}", "slurm.nodes"},
	    {"{\"slurm\": {\"gpus_per_node\": -1}}", "slurm.gpus_per_node"},
	    {"{\"slurm\": {\"partition\": \"a b\"}}", "slurm.partition must be a non-empty"},
	    {"{\"slurm\": {\"partition\": \"\"}}", "slurm.partition"},
	    {"{\"slurm\": {\"account\": \"x\\ny\"}}", "slurm.account"},
	    {"{\"slurm\": {\"qos\": \"it's\"}}", "slurm.qos"},
	    {"{\"slurm\": {\"time\": \"soon\"}}", "slurm.time 'soon' is not a SLURM time"},
	    {"{\"slurm\": {\"exclusive\": \"yes\"}}", "slurm.exclusive must be true or false"},
	    {"{\"slurm\": {\"modules\": 3}}", "slurm.modules must be a list"},
	    {"{\"slurm\": {\"modules\": [\"a\", 1]}}", "slurm.modules[1]"},
	    {"{\"slurm\": [1]}", "\"slurm\" must be an object"},
	    {"{\"slurm\": {}, \"distributed\": 1}", "\"distributed\" must be an object"},
	    {"{\"slurm\": {}, \"distributed\": {\"launcher\": 5}}", "distributed.launcher"},
	    {"{\"slurm\": {}, \"distributed\": {\"port\": 70000}}", "distributed.port"},
	    {"{\"slurm\": {}, \"distributed\": {\"nnodes\": 0}}", "distributed.nnodes"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rm_error_clear(&err);
		CHECK(parse(bad[i].json, &sc, &dc, &present, &err) < 0);
		if (!strstr(err.msg, bad[i].msg)) {
			fprintf(stderr, "%s: got '%s'\n", bad[i].json, err.msg);
			CHECK(0);
		}
		CHECK(err.kind == RM_ERR_INPUT);
		CHECK(sc.partition == NULL && dc.launcher == NULL); /* released on failure */
	}
}

TEST(time_gpus_runner)
{
	rm_error err = RM_ERROR_INIT;
	struct {
		const char *s;
		long secs;
	} t[] = {
	    {"30", 1800},     {"1:30", 90},	  {"01:00:00", 3600}, {"2-0", 172800},
	    {"1-2:3", 93780}, {"1-2:3:4", 93784}, {"UNLIMITED", 0},   {"infinite", 0},
	    {"", -1},	      {"1:2:3:4", -1},	  {"a", -1},	      {"1-", -1},
	    {"-1", -1},	      {"1:", -1},	  {"1-2-3", -1},      {"0:01", 1},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		long got = rm_slurm_time_seconds(t[i].s);
		if (got != t[i].secs) {
			fprintf(stderr, "time '%s': %ld, want %ld\n", t[i].s, got, t[i].secs);
			CHECK(0);
		}
	}
	CHECK(rm_slurm_time_seconds(NULL) == -1);

	rm_slurm_conf sc = {.gpus_per_node = -1};
	CHECK(rm_slurm_gpus_per_node(&sc, 2, 8) == 2);	/* the model's count */
	CHECK(rm_slurm_gpus_per_node(&sc, -1, 8) == 8); /* "all": the host's */
	CHECK(rm_slurm_gpus_per_node(&sc, -1, 0) == 0); /* no GPUs anywhere */
	CHECK(rm_slurm_gpus_per_node(&sc, 0, 8) == 0);
	sc.gpus_per_node = 4;
	CHECK(rm_slurm_gpus_per_node(&sc, 2, 8) == 4); /* slurm.gpus_per_node wins */

	rm_dist_conf dc = {.launcher = (char *)"torchrun", .nnodes = 1, .port = 29500};
	char *r = NULL;
	CHECK(rm_slurm_runner(&dc, 8, &r, &err) == 0);
	CHECK_STR(r, "torchrun --standalone --nproc_per_node=8");
	free(r);
	dc.nnodes = 2;
	dc.port = 29600;
	CHECK(rm_slurm_runner(&dc, 4, &r, &err) == 0);
	CHECK_STR(r, "torchrun --nnodes=2 --nproc_per_node=4 --node_rank=$NODE_RANK "
		     "--master_addr=$MASTER_ADDR --master_port=29600");
	free(r);
	dc.launcher = (char *)"megatron-lm";
	CHECK(rm_slurm_runner(&dc, 4, &r, &err) == 0 && rm_starts_with(r, "torchrun --nnodes=2"));
	free(r);
	dc.launcher = (char *)"deepspeed";
	CHECK(rm_slurm_runner(&dc, 4, &r, &err) < 0);
	CHECK(strstr(err.msg, "use torchrun for 2 nodes") != NULL);
	dc.nnodes = 1;
	CHECK(rm_slurm_runner(&dc, 4, &r, &err) == 0);
	CHECK_STR(r, "deepspeed --num_gpus=4");
	free(r);
	dc.launcher = (char *)"vllm";
	CHECK(rm_slurm_runner(&dc, 4, &r, &err) == 0 && r == NULL);
	dc.launcher = (char *)"primus";
	CHECK(rm_slurm_runner(&dc, 4, &r, &err) < 0);
	CHECK(strstr(err.msg, "'primus' is not supported; use torchrun") != NULL);
}

/* ---- the batch script ---- */

static rm_proc_out run_bash(const char *script, const char *path_dir, const char *extra_env)
{
	rm_error err = RM_ERROR_INIT;
	rm_proc_out res;
	char *file = rm_xasprintf("%s/job.sbatch", tmp);
	char *cmd = rm_xasprintf("PATH='%s':\"$PATH\" %s bash '%s'", path_dir, extra_env, file);
	char *argv[] = {(char *)"sh", (char *)"-c", cmd, NULL};

	tfs_put(tmp, "job.sbatch", script);
	if (rm_proc_run(argv, NULL, 30, 1 << 20, &res, &err) < 0)
		fprintf(stderr, "bash: %s\n", err.msg);
	free(file);
	free(cmd);
	return res;
}

static void put_exec(const char *dir, const char *name, const char *text)
{
	char *p = rm_xasprintf("%s/%s", dir, name);
	tfs_put(dir, name, text);
	chmod(p, 0755);
	free(p);
}

TEST(script)
{
	rm_error err = RM_ERROR_INIT;
	rm_slurm_conf sc;
	rm_dist_conf dc;
	int present;
	char *s = NULL;
	char *bin = rm_xasprintf("%s/bin", tmp), *logs = rm_xasprintf("%s/logs", tmp);
	char *task[] = {
	    (char *)"/bin/sh",
	    (char *)"-c",
	    (char *)"echo \"task model=$1 rank=$NODE_RANK addr=$MASTER_ADDR "
		    "port=$MASTER_PORT nnodes=$NNODES world=$WORLD_SIZE "
		    "gpus=$GPUS_PER_NODE runner=$MAD_MULTI_NODE_RUNNER env=$RM_SLURM_ENV "
		    "quoted=$2\"",
	    (char *)"x",
	    (char *)RM_SLURM_MODEL_WORD,
	    (char *)"it's here",
	    NULL};
	rm_slurm_task one[] = {{"smoke_busybox", "smoke_busybox"}};

	CHECK(parse("{\"slurm\": {\"partition\": \"debug\", \"nodes\": 2, \"time\": \"0:10:00\","
		    " \"exclusive\": false, \"modules\": [\"rocm/6.2\"]},"
		    " \"distributed\": {\"launcher\": \"torchrun\", \"port\": 29555}}",
		    &sc, &dc, &present, &err) == 0);
	rm_slurm_job job = {.job_name = "rm-smoke_busybox",
			    .log_dir = logs,
			    .workdir = tmp,
			    .batch_log = "/work/logs/smoke_busybox.batch.log",
			    .sc = &sc,
			    .dc = &dc,
			    .gpus_per_node = 0,
			    .tasks = one,
			    .n_tasks = 1,
			    .task_argv = task};
	CHECK(rm_slurm_script(&job, &s, &err) == 0);
	if (!s) {
		fprintf(stderr, "script: %s\n", err.msg);
		goto out;
	}
	/* The directives. */
	CHECK(rm_starts_with(s, "#!/bin/bash\n# Written by run_models for model 'smoke_busybox': "
				"2 node(s) x 0 GPU(s), launcher torchrun.\n"));
	const char *want[] = {
	    "\n#SBATCH --job-name=rm-smoke_busybox\n#SBATCH --nodes=2\n#SBATCH "
	    "--ntasks-per-node=1\n"
	    "#SBATCH --no-requeue\n",
	    "\n#SBATCH --output=/work/logs/smoke_busybox.batch.log\n",
	    "\n#SBATCH --time=0:10:00\n",
	    "\n#SBATCH --partition=debug\n",
	    "\nmodule load rocm/6.2\n",
	    "\nexport MASTER_PORT=29555\nexport NNODES=2\nexport WORLD_SIZE=2\n"
	    "export GPUS_PER_NODE=0\nexport NPROC_PER_NODE=0\n",
	    "exec srun --nodes=2 --ntasks-per-node=1 --kill-on-bad-exit=1",
	    "--output=\"$RM_LOG_DIR/$RM_LOG_BASE.node%n.log\"",
	    "--error=\"$RM_LOG_DIR/$RM_LOG_BASE.node%n.err\"",
	    "export MAD_MULTI_NODE_RUNNER=\"torchrun --nnodes=2 --nproc_per_node=0 "
	    "--node_rank=$NODE_RANK --master_addr=$MASTER_ADDR --master_port=29555\"\n",
	    "' rm-task /bin/sh -c ",
	    " x \"$RM_MODEL\" 'it'\\''s here'\n",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		if (!strstr(s, want[i])) {
			fprintf(stderr, "script lacks: %s\n", want[i]);
			CHECK(0);
		}
	}
	CHECK(strstr(s, "--gpus-per-node") == NULL); /* 0 GPUs: no GPU option at all */
	CHECK(strstr(s, "--exclusive") == NULL);
	CHECK(strstr(s, "--array") == NULL);
	CHECK(strstr(s, "--account") == NULL);

	/* Valid bash. */
	{
		char *argv[] = {(char *)"bash", (char *)"-n", NULL};
		rm_proc_out res;
		CHECK(rm_proc_run(argv, s, 10, 4096, &res, &err) == 0 && res.status == 0);
		if (res.status)
			fprintf(stderr, "bash -n: %s\n", res.err);
		rm_proc_out_release(&res);
	}

	/* Run it with stand-ins for srun (two tasks), scontrol and getent: the first node's
	 * name does not resolve, so MASTER_ADDR is its NodeAddr. */
	tfs_mkdirs(bin);
	tfs_mkdirs(logs);
	put_exec(
	    bin, "srun",
	    "#!/bin/sh\n# stand-in: records its options, runs the command once per node\n"
	    "out=; for a; do case \"$a\" in --output=*) out=${a#--output=} ;; --*) ;; *) break "
	    ";; esac; echo \"srun option $a\"; shift; done\n"
	    "for r in 0 1; do SLURM_NODEID=$r \"$@\" >\"$(echo \"$out\" | sed "
	    "\"s/%n/$r/\")\"; done\n");
	put_exec(bin, "scontrol",
		 "#!/bin/sh\ncase \"$*\" in\n'show hostnames n[1-2]') printf 'n1\\nn2\\n' ;;\n"
		 "'-o show node n1') echo 'NodeName=n1 Arch=x86_64 CoresPerSocket=1 "
		 "NodeAddr=10.9.8.7 NodeHostName=vm Version=22.05.8' ;;\n*) exit 1 ;;\nesac\n");
	put_exec(bin, "getent", "#!/bin/sh\nexit 2\n");
	put_exec(bin, "module", "#!/bin/sh\necho \"module $*\"\n");
	rm_proc_out res = run_bash(s, bin, "SLURM_JOB_NODELIST='n[1-2]'");
	CHECK(res.status == 0);
	CHECK(strstr(res.out, "srun option --kill-on-bad-exit=1") != NULL);
	CHECK(strstr(res.out, "srun option --job-name=smoke_busybox\n") != NULL);
	CHECK(strstr(res.out, "module load rocm/6.2") != NULL);
	rm_proc_out_release(&res);
	char *l0 = NULL, *l1 = NULL, *p0 = rm_xasprintf("%s/smoke_busybox.node0.log", logs);
	char *p1 = rm_xasprintf("%s/smoke_busybox.node1.log", logs);
	CHECK(rm_read_file(p0, 1 << 20, &l0, NULL, &err) == 0);
	CHECK(rm_read_file(p1, 1 << 20, &l1, NULL, &err) == 0);
	const char *env = "env=MASTER_ADDR MASTER_PORT NNODES WORLD_SIZE GPUS_PER_NODE "
			  "NPROC_PER_NODE NODE_RANK MAD_MULTI_NODE_RUNNER quoted=it's here\n";
	if (l0 && l1) {
		CHECK(rm_starts_with(l0, "task model=smoke_busybox rank=0 addr=10.9.8.7 port=29555 "
					 "nnodes=2 world=2 gpus=0 runner=torchrun --nnodes=2 "
					 "--nproc_per_node=0 --node_rank=0 --master_addr=10.9.8.7 "
					 "--master_port=29555 "));
		CHECK(strstr(l1, "rank=1 addr=10.9.8.7") && strstr(l1, "--node_rank=1 "));
		CHECK(rm_ends_with(l0, env));
	}
	free(l0);
	free(l1);
	/* A resolvable first node: its name. */
	put_exec(bin, "getent", "#!/bin/sh\necho \"10.0.0.1 $2\"\n");
	res = run_bash(s, bin, "SLURM_JOB_NODELIST='n[1-2]'");
	rm_proc_out_release(&res);
	CHECK(rm_read_file(p0, 1 << 20, &l0, NULL, &err) == 0);
	CHECK(l0 && strstr(l0, "rank=0 addr=n1 "));
	free(l0);
	/* Neither: the launch node's address. */
	put_exec(bin, "getent", "#!/bin/sh\nexit 2\n");
	put_exec(bin, "scontrol", "#!/bin/sh\n[ \"$1\" = show ] && printf 'n1\\nn2\\n'\nexit 0\n");
	res = run_bash(s, bin, "SLURM_JOB_NODELIST='n[1-2]' SLURM_LAUNCH_NODE_IPADDR=10.1.1.1");
	rm_proc_out_release(&res);
	CHECK(rm_read_file(p0, 1 << 20, &l0, NULL, &err) == 0);
	CHECK(l0 && strstr(l0, "rank=0 addr=10.1.1.1 "));
	free(l0);
	free(s);
	s = NULL;

	/* GPUs, exclusive, every optional directive, the interface and backend exports. */
	sc.exclusive = 1;
	sc.account = rm_xstrdup("perf");
	sc.network_interface = rm_xstrdup("ib0");
	dc.backend = rm_xstrdup("nccl");
	job.gpus_per_node = 8;
	CHECK(rm_slurm_script(&job, &s, &err) == 0);
	CHECK(s && strstr(s, "\n#SBATCH --gpus-per-node=8\n#SBATCH --exclusive\n"));
	CHECK(s && strstr(s, "\n#SBATCH --account=perf\n"));
	CHECK(s && strstr(s, "export NCCL_SOCKET_IFNAME=ib0 GLOO_SOCKET_IFNAME=ib0\n"));
	CHECK(s && strstr(s, " NCCL_SOCKET_IFNAME GLOO_SOCKET_IFNAME DISTRIBUTED_BACKEND'\n"));
	CHECK(s && strstr(s, "--nproc_per_node=8 "));
	free(s);
	s = NULL;

	/* An array: four one-node models, two at a time, each picking its model. */
	rm_slurm_task four[] = {{"a", "a"}, {"dir/b", "dir_b"}, {"c's", "c_s"}, {"d", "d"}};
	sc.nodes = 1;
	dc.nnodes = 1;
	sc.exclusive = 0;
	job.gpus_per_node = 0;
	job.tasks = four;
	job.n_tasks = 4;
	job.max_parallel = 2;
	CHECK(rm_slurm_script(&job, &s, &err) == 0);
	CHECK(s && strstr(s, "# Written by run_models for 4 models, one array task each: 1 "
			     "node(s)"));
	CHECK(s && strstr(s, "\n#SBATCH --nodes=1\n"));
	CHECK(s && strstr(s, "\n#SBATCH --array=0-3%2\n"));
	CHECK(s && strstr(s, "\nrm_models=(a dir/b 'c'\\''s' d)\n"));
	CHECK(s && strstr(s, "\nrm_log_bases=(a dir_b c_s d)\n"));
	CHECK(s && strstr(s, "MAD_MULTI_NODE_RUNNER=\"torchrun --standalone --nproc_per_node=0\""));
	if (s) {
		put_exec(bin, "scontrol",
			 "#!/bin/sh\ncase \"$*\" in\n'show hostnames n2') echo n2 ;;\n"
			 "'-o show node n2') echo 'NodeName=n2 NodeAddr=10.9.8.6 X=y' ;;\nesac\n");
		res = run_bash(s, bin, "SLURM_JOB_NODELIST=n2 SLURM_ARRAY_TASK_ID=2");
		CHECK(res.status == 0);
		rm_proc_out_release(&res);
		char *p = rm_xasprintf("%s/c_s.node0.log", logs);
		CHECK(rm_read_file(p, 1 << 20, &l0, NULL, &err) == 0);
		CHECK(l0 && rm_starts_with(l0, "task model=c's rank=0 addr=10.9.8.6 "));
		free(l0);
		free(p);
	}
	free(s);
	s = NULL;

	/* Refusals. */
	sc.nodes = 2;
	CHECK(rm_slurm_script(&job, &s, &err) < 0);
	CHECK(strstr(err.msg, "4 models cannot share one job of slurm.nodes=2") != NULL);
	sc.nodes = 1;
	rm_slurm_task unsafe[] = {{"x", "../x"}};
	job.tasks = unsafe;
	job.n_tasks = 1;
	CHECK(rm_slurm_script(&job, &s, &err) < 0);
	CHECK(strstr(err.msg, "not file-safe") != NULL);
	job.tasks = one;
	job.workdir = "/work/my models";
	CHECK(rm_slurm_script(&job, &s, &err) < 0);
	CHECK(err.kind == RM_ERR_USAGE && strstr(err.msg, "'/work/my models'"));
	job.workdir = tmp;
	free(dc.launcher);
	dc.launcher = rm_xstrdup("slurm_multi");
	CHECK(rm_slurm_script(&job, &s, &err) < 0);
	CHECK(strstr(err.msg, "'slurm_multi' is not supported") != NULL);
	CHECK(s == NULL);
	free(p0);
	free(p1);
out:
	free(s);
	rm_slurm_conf_release(&sc);
	rm_dist_conf_release(&dc);
	free(bin);
	free(logs);
}

/* ---- what the SLURM commands print ---- */

TEST(states)
{
	rm_error err = RM_ERROR_INIT;
	rm_slurm_job_state *v = NULL;
	size_t n = 0;
	long id = 0;
	char reason[256];

	CHECK(rm_slurm_state_parse("RUNNING") == RM_SLURM_RUNNING);
	CHECK(rm_slurm_state_parse("CANCELLED by 0") == RM_SLURM_CANCELLED);
	CHECK(rm_slurm_state_parse("CANCELLED+") == RM_SLURM_CANCELLED);
	CHECK(rm_slurm_state_parse("NODE_FAIL") == RM_SLURM_NODE_FAIL);
	CHECK(rm_slurm_state_parse("PD") == RM_SLURM_PENDING);
	CHECK(rm_slurm_state_parse("OUT_OF_MEMORY") == RM_SLURM_OUT_OF_MEMORY);
	CHECK(rm_slurm_state_parse("RUN") == RM_SLURM_UNKNOWN);
	CHECK(rm_slurm_state_parse("") == RM_SLURM_UNKNOWN);
	CHECK(rm_slurm_state_parse(NULL) == RM_SLURM_UNKNOWN);
	CHECK(!rm_slurm_state_final(RM_SLURM_COMPLETING) &&
	      !rm_slurm_state_final(RM_SLURM_PENDING));
	CHECK(rm_slurm_state_final(RM_SLURM_COMPLETED) && rm_slurm_state_final(RM_SLURM_DEADLINE));
	CHECK_STR(rm_slurm_state_name(RM_SLURM_TIMEOUT), "TIMEOUT");
	CHECK_STR(rm_slurm_state_name(RM_SLURM_UNKNOWN), "UNKNOWN");

	CHECK(rm_slurm_parse_sbatch("42\n", &id, &err) == 0 && id == 42);
	CHECK(rm_slurm_parse_sbatch("43;rmtest\n", &id, &err) == 0 && id == 43);
	CHECK(rm_slurm_parse_sbatch("sbatch: warning: x\n44\n", &id, &err) == 0 && id == 44);
	CHECK(rm_slurm_parse_sbatch("sbatch: error: invalid partition specified: x\n", &id, &err) <
	      0);
	CHECK(strstr(err.msg, "invalid partition") != NULL);
	CHECK(rm_slurm_parse_sbatch("", &id, &err) < 0);

	/* squeue: a running job, array tasks running and pending (ranges, throttle). */
	CHECK(rm_slurm_parse_squeue("12|RUNNING|None\n"
				    "13_0|RUNNING|None\n13_1|COMPLETING|None\n"
				    "13_[2-4,7%2]|PENDING|JobArrayTaskLimit\n"
				    "14|PENDING|PartitionNodeLimit\n",
				    &v, &n, &err) == 0);
	CHECK(n == 8);
	if (n == 8) {
		CHECK(v[0].job_id == 12 && v[0].array_task == -1 && v[0].state == RM_SLURM_RUNNING);
		CHECK_STR(v[0].reason, "None");
		CHECK(v[1].job_id == 13 && v[1].array_task == 0);
		CHECK(v[2].array_task == 1 && v[2].state == RM_SLURM_COMPLETING);
		CHECK(v[3].array_task == 2 && v[5].array_task == 4 && v[6].array_task == 7);
		CHECK(v[6].state == RM_SLURM_PENDING);
		CHECK_STR(v[6].reason, "JobArrayTaskLimit");
		CHECK(v[7].job_id == 14);
		CHECK(rm_slurm_pending_hopeless(v[7].reason));
		CHECK(!rm_slurm_pending_hopeless(v[6].reason));
	}
	free(v);
	CHECK(rm_slurm_parse_squeue("", &v, &n, &err) == 0 && n == 0 && v == NULL);
	CHECK(rm_slurm_parse_squeue("garbage\n", &v, &n, &err) < 0);
	CHECK(strstr(err.msg, "squeue's output: 'garbage'") != NULL);
	CHECK(rm_slurm_parse_squeue("13_[2-|PENDING|x\n", &v, &n, &err) < 0);
	CHECK(rm_slurm_parse_squeue("13_[5-2]|PENDING|x\n", &v, &n, &err) < 0);
	/* Task ids as large as SLURM allows; but not a runaway number of entries. */
	CHECK(rm_slurm_parse_squeue("13_[3999999-4000000]|PENDING|x\n13_[7]|PENDING|x\n", &v, &n,
				    &err) == 0);
	CHECK(n == 3 && v && v[1].array_task == 4000000 && v[2].array_task == 7);
	free(v);
	CHECK(rm_slurm_parse_squeue("13_[0-99999]|PENDING|x\n", &v, &n, &err) == 0 && n == 100000);
	free(v);
	CHECK(rm_slurm_parse_squeue("13_[0-100000]|PENDING|x\n", &v, &n, &err) < 0);
	CHECK(v == NULL && n == 0);

	/* sacct (-X: no steps; a step line is skipped anyway). */
	CHECK(rm_slurm_parse_sacct("5|CANCELLED by 0|0:0\n6|TIMEOUT|0:0\n7|FAILED|3:0\n"
				   "7.batch|FAILED|3:0\n8_0|COMPLETED|0:0\n8_1|NODE_FAIL|0:0\n"
				   "9|OUT_OF_MEMORY|0:125\n",
				   &v, &n, &err) == 0);
	CHECK(n == 6);
	if (n == 6) {
		CHECK(v[0].state == RM_SLURM_CANCELLED);
		CHECK_STR(v[0].reason, "by 0");
		rm_slurm_reason(&v[0], reason, sizeof(reason));
		CHECK_STR(reason, "slurm job 5: CANCELLED (cancelled by uid 0)");
		rm_slurm_reason(&v[3], reason, sizeof(reason));
		CHECK_STR(reason, "slurm job 8_0: COMPLETED");
		rm_slurm_reason(&v[1], reason, sizeof(reason));
		CHECK_STR(reason, "slurm job 6: TIMEOUT (it reached its time limit (slurm.time))");
		CHECK(v[2].exit_code == 3);
		rm_slurm_reason(&v[2], reason, sizeof(reason));
		CHECK_STR(reason, "slurm job 7: FAILED (a task exited with code 3)");
		CHECK(v[3].job_id == 8 && v[3].array_task == 0 && v[3].state == RM_SLURM_COMPLETED);
		rm_slurm_reason(&v[4], reason, sizeof(reason));
		CHECK_STR(reason,
			  "slurm job 8_1: NODE_FAIL (one of its nodes failed or went down)");
		CHECK(v[5].exit_signal == 125);
		rm_slurm_reason(&v[5], reason, sizeof(reason));
		CHECK(strstr(reason, "OUT_OF_MEMORY (a task ran out of memory)") != NULL);
	}
	free(v);
	CHECK(rm_slurm_parse_sacct("5|COMPLETED\n", &v, &n, &err) < 0);
	CHECK(rm_slurm_parse_sacct("5|COMPLETED|x:0\n", &v, &n, &err) < 0);

	/* scontrol -o show job: a finished job, array tasks (one pending range). */
	CHECK(rm_slurm_parse_scontrol(
		  "JobId=20 JobName=rm-smoke UserId=root(0) GroupId=root(0) Priority=1 "
		  "JobState=TIMEOUT Reason=TimeLimit Dependency=(null) Requeue=0 Restarts=0 "
		  "ExitCode=0:15 RunTime=00:01:21 TimeLimit=00:01:00 NodeList=n[1-2] "
		  "BatchHost=n1 Command=/tmp/a b|c.sbatch\n"
		  "JobId=22 ArrayJobId=21 ArrayTaskId=1 JobName=x JobState=FAILED "
		  "Reason=NonZeroExitCode "
		  "ExitCode=3:0 NodeList=n2\n"
		  "JobId=21 ArrayJobId=21 ArrayTaskId=2-3%1 JobName=x JobState=PENDING "
		  "Reason=JobArrayTaskLimit ExitCode=0:0 NodeList=(null)\n",
		  &v, &n, &err) == 0);
	CHECK(n == 4);
	if (n == 4) {
		CHECK(v[0].job_id == 20 && v[0].array_task == -1 && v[0].state == RM_SLURM_TIMEOUT);
		CHECK_STR(v[0].reason, "TimeLimit");
		CHECK(v[0].exit_signal == 15);
		CHECK_STR(v[0].nodelist, "n[1-2]");
		CHECK(v[1].job_id == 21 && v[1].array_task == 1 && v[1].state == RM_SLURM_FAILED);
		CHECK(v[1].exit_code == 3);
		CHECK(v[2].array_task == 2 && v[3].array_task == 3);
		CHECK_STR(v[3].nodelist, "");
	}
	free(v);
	CHECK(rm_slurm_parse_scontrol("slurm_load_jobs error: Invalid job id specified\n", &v, &n,
				      &err) < 0);

	/* The rank that failed first, from the batch log (sacct said 15:0 here: the other
	 * rank's SIGTERM exit, 143, hid it). */
	long task = -1;
	int code = -1;
	char node[64] = "";
	CHECK(
	    rm_slurm_first_failed_task("srun: error: n2: task 1: Exited with exit code 3\n"
				       "srun: launch/slurm: _step_signal: Terminating StepId=11.0\n"
				       "srun: error: n1: task 0: Exited with exit code 143\n",
				       &task, &code, node, sizeof(node)) == 0);
	CHECK(task == 1 && code == 3);
	CHECK_STR(node, "n2");
	CHECK(rm_slurm_first_failed_task("run_models: job 5 on n[1-2]\n", &task, &code, node,
					 sizeof(node)) == 1);
	CHECK(rm_slurm_first_failed_task(NULL, &task, &code, node, sizeof(node)) == 1);

	/* hostlists and NodeAddr */
	struct {
		const char *list, *first;
	} hl[] = {
	    {"n[1-2]", "n1"},
	    {"gpu[007-010],x", "gpu007"},
	    {"node5", "node5"},
	    {"a,b", "a"},
	    {"r[1-2]-n[3-4]", "r1-n3"},
	    {"n[2,5-6]", "n2"},
	    {"", NULL},
	    {"[1-2]", NULL},
	    {"n[", NULL},
	    {"n[x]", NULL},
	};
	for (size_t i = 0; i < sizeof(hl) / sizeof(hl[0]); i++) {
		char *f = rm_slurm_hostlist_first(hl[i].list);
		if (hl[i].first)
			CHECK_STR(f, hl[i].first);
		else
			CHECK(f == NULL);
		free(f);
	}
	char *a = rm_slurm_node_addr("NodeName=n1 Arch=x86_64 CoresPerSocket=1 CPUAlloc=0 "
				     "NodeAddr=127.0.0.1 NodeHostName=vm Version=22.05.8\n");
	CHECK_STR(a, "127.0.0.1");
	free(a);
	a = rm_slurm_node_addr("NodeName=n1 NodeAddr=10.0.0.2\n");
	CHECK_STR(a, "10.0.0.2");
	free(a);
	CHECK(rm_slurm_node_addr("Node n9 not found\n") == NULL);
	CHECK(rm_slurm_node_addr(NULL) == NULL);
}

/* A card whose own script runs on the batch host (issue 30): the exports quoted, the image
 * on every node and checked, the script run in its folder with its args; run with bash
 * against a stand-in srun (one task a node, n1 and n2) and docker. */
TEST(card_script)
{
	rm_error err = RM_ERROR_INIT;
	rm_slurm_conf sc;
	rm_dist_conf dc;
	int present;
	char *s = NULL, *bin = rm_xasprintf("%s/cbin", tmp), *dir = rm_xasprintf("%s/card", tmp);
	char *steps = rm_xasprintf("%s/card.steps", tmp), *extra, *text = NULL;
	rm_kv env[] = {{"xP", "1"}, {"ODD", "it's $HOME"}, {"DOCKER_IMAGE_NAME", "<fill-me>"}};
	rm_proc_out res;

	put_exec(bin, "srun",
		 "#!/bin/sh\n" /* every task of the step, one a node; srun's options dropped */
		 "while [ \"${1#--}\" != \"$1\" ]; do shift; done\n"
		 "for n in n1 n2; do SLURMD_NODENAME=$n \"$@\" || exit 1; done\n");
	put_exec(bin, "docker",
		 "#!/bin/sh\n"
		 "case \"$1 $2\" in\n"
		 "'load -i') [ -f \"$3\" ] ;;\n"
		 "'image inspect') if [ \"$SLURMD_NODENAME\" = n2 ] && [ -n \"$LIE\" ]; then "
		 "echo sha256:bad; else echo sha256:good; fi ;;\n"
		 "*) exit 1 ;;\n"
		 "esac\n");
	tfs_put(dir, "run.slurm",
		"echo \"script args=$* xP=$xP odd=$ODD image=$DOCKER_IMAGE_NAME pwd=$PWD\"\n");
	tfs_put(tmp, "img.tar", "tar");
	CHECK(parse("{\"slurm\": {\"nodes\": 2, \"time\": \"0:10:00\", \"exclusive\": false}}", &sc,
		    &dc, &present, &err) == 0);
	rm_slurm_job job = {.job_name = "rm-card",
			    .log_dir = tmp,
			    .workdir = dir,
			    .batch_log = "/work/logs/card.batch.log",
			    .sc = &sc,
			    .dc = &dc};
	char *tar = rm_xasprintf("%s/img.tar", tmp);
	rm_slurm_card_job cj = {.job = &job,
				.model = "vllm_dissag/x",
				.launcher = "slurm_multi",
				.script = "run.slurm",
				.args = "-N 2 -n 'a b'",
				.env = env,
				.n_env = 3,
				.image = "ci-x",
				.image_id = "sha256:good",
				.image_tar = tar,
				.steps = steps};
	CHECK(rm_slurm_card_script(&cj, &s, &err) == 0);
	CHECK(s && strstr(s, "#SBATCH --nodes=2\n") && strstr(s, "#SBATCH --chdir="));
	CHECK(s && strstr(s, "export ODD='it'\\''s $HOME'\n"));
	CHECK(s && strstr(s, "export DOCKER_IMAGE_NAME=ci-x\n") && !strstr(s, "<fill-me>"));
	CHECK(s && strstr(s, "docker load -i"));
	/* every node holds the image: the script runs in its folder, with its args */
	extra = rm_xasprintf("SLURM_NNODES=2");
	res = run_bash(s, bin, extra);
	CHECK(res.status == 0);
	text = rm_xasprintf("script args=-N 2 -n a b xP=1 odd=it's $HOME image=ci-x pwd=%s", dir);
	CHECK(strstr(res.out, text) != NULL);
	rm_proc_out_release(&res);
	free(text);
	CHECK(rm_read_file(steps, 1 << 16, &text, NULL, &err) == 0);
	CHECK_STR(text, "image n1 sha256:good\nimage n2 sha256:good\nscript 0\n");
	free(text);
	/* n2 holds another image: exit 97, the script never runs */
	free(extra);
	extra = rm_xasprintf("SLURM_NNODES=2 LIE=1");
	res = run_bash(s, bin, extra);
	CHECK(res.status == RM_SLURM_IMAGE_MISSING);
	CHECK(strstr(res.err, "n2: holds sha256:bad") != NULL);
	CHECK(strstr(res.out, "script args=") == NULL);
	rm_proc_out_release(&res);
	free(s);
	s = NULL;
	/* no id known (a manifest's image): the nodes must agree among themselves */
	cj.image_id = NULL;
	CHECK(rm_slurm_card_script(&cj, &s, &err) == 0);
	res = run_bash(s, bin, extra);
	CHECK(res.status == RM_SLURM_IMAGE_MISSING);
	rm_proc_out_release(&res);
	free(s);
	free(extra);
	free(tar);
	free(steps);
	free(dir);
	free(bin);
	rm_slurm_conf_release(&sc);
	rm_dist_conf_release(&dc);
}
