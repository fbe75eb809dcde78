/*
 * t-ranks.c: the layout of a job's processes (runner/gpus.c, ranks.c) and
 * the environment each rank gets (jobenv.c): the GPUs found in an inherited
 * CUDA_VISIBLE_DEVICES and in device nodes, one rank per GPU or procs for
 * the CPUs, launch = once, torchrun's variables, CUDA_VISIBLE_DEVICES
 * replacing what was inherited, and a free MASTER_PORT.
 */
#include "config.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpus.h"
#include "jobenv.h"
#include "jobspec.h"
#include "ranks.h"
#include "tap.h"
#include "util.h"

/* The value of name in env, or NULL. */
/* Discovery without NVML, so the test does not depend on this machine
 * (t-gpus tests NVML's part with the fake one). */
static int
discover(char *const *env, const char *dev, struct sr_gpus *g, char *err)
{
	const struct sr_gpus_where w = { env, dev, "" };

	return sr_gpus_discover(&w, g, err);
}

static const char *
get(char **env, const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; env[i] != NULL; i++)
		if (strncmp(env[i], name, n) == 0 && env[i][n] == '=')
			return env[i] + n + 1;
	return NULL;
}

/* How many entries of env are named name (each name once). */
static int
count(char **env, const char *name)
{
	size_t i, n = strlen(name);
	int c = 0;

	for (i = 0; env[i] != NULL; i++)
		c += strncmp(env[i], name, n) == 0 && env[i][n] == '=';
	return c;
}

static void
test_discover(void)
{
	char *env1[] = { "PATH=/bin", "CUDA_VISIBLE_DEVICES=GPU-aa, GPU-bb ,,GPU-cc", NULL };
	char *env2[] = { "CUDA_VISIBLE_DEVICES=", NULL };
	char *none[] = { NULL };
	char dir[] = "/tmp/t-ranks.XXXXXX", path[64], err[SR_ERRMAX];
	const char *names[] = { "nvidia1", "nvidia10", "nvidiactl", "nvidia-uvm", "nvidia0",
	    "nvidia-caps", "nvidiax" };
	struct sr_gpus g;
	size_t i;
	int fd;

	ok(discover(env1, "/nonexistent", &g, err) == 0, "CUDA_VISIBLE_DEVICES: found");
	is_int(g.n, 2, "its entries up to the first empty one");
	if (g.n == 2) {
		is_str(g.v[0].id, "GPU-aa", "first: as written, blanks trimmed");
		is_str(g.v[1].id, "GPU-bb", "second");
		is_str(g.v[1].uuid, "GPU-bb", "a UUID is known as one");
	}
	is_str(g.source, "CUDA_VISIBLE_DEVICES", "source");
	ok(!g.by_index, "not driver indices");
	sr_gpus_free(&g);
	ok(discover(env2, "/nonexistent", &g, err) == 0 && g.n == 0,
	    "CUDA_VISIBLE_DEVICES empty: no GPU");
	sr_gpus_free(&g);

	if (mkdtemp(dir) == NULL)
		abort();
	for (i = 0; i < SR_ARRAY_LEN(names); i++) {
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		fd = open(path, O_CREAT | O_WRONLY, 0600);
		close(fd);
	}
	ok(discover(none, dir, &g, err) == 0, "device nodes: found");
	is_int(g.n, 3, "nvidiaN only (not nvidiactl, -uvm, -caps)");
	if (g.n == 3)
		ok(strcmp(g.v[0].id, "0") == 0 && strcmp(g.v[1].id, "1") == 0 &&
		    strcmp(g.v[2].id, "10") == 0, "in index order: 0, 1, 10");
	ok(g.by_index, "driver indices");
	is_str(g.source, "/dev/nvidia*", "source");
	sr_gpus_free(&g);
	for (i = 0; i < SR_ARRAY_LEN(names); i++) {
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		unlink(path);
	}
	ok(discover(none, dir, &g, err) == 0 && g.n == 0 && strcmp(g.source, "none") == 0,
	    "no device node: no GPU, source none");
	sr_gpus_free(&g);
	rmdir(dir);
	ok(discover(none, "/nonexistent", &g, err) == 0 && g.n == 0,
	    "no /dev: no GPU");
	sr_gpus_free(&g);
}

static struct sr_jobspec *
spec(int gmin, int gmax, int pmin, int pmax, enum sr_launch_mode launch)
{
	struct sr_jobspec *js = sr_calloc(1, sizeof *js);

	js->name = "j";
	js->gpus_min = gmin;
	js->gpus_max = gmax;
	js->procs_min = pmin;
	js->procs_max = pmax;
	js->launch = launch;
	return js;
}

static void
test_plan(void)
{
	char *env[] = { "CUDA_VISIBLE_DEVICES=GPU-aa,GPU-bb", NULL };
	char err[SR_ERRMAX];
	struct sr_gpus g, none = { .v = NULL, .n = 0, .source = "none" };
	struct sr_jobspec *js;
	struct sr_ranks rk;

	discover(env, "/nonexistent", &g, err);

	js = spec(0, 0, 0, 0, SR_LAUNCH_RANKS);
	ok(sr_ranks_plan(js, &none, 2, &rk, err) == 0 && rk.n == 1 && rk.world == 1 &&
	    rk.visible[0] == NULL, "no procs, no GPU: one rank, no CUDA_VISIBLE_DEVICES");
	sr_ranks_free(&rk);
	free(js);

	js = spec(0, 0, 4, 4, SR_LAUNCH_RANKS);
	ok(sr_ranks_plan(js, &none, 2, &rk, err) == 0 && rk.n == 4 && rk.world == 4,
	    "procs = 4 on 2 CPUs: 4 ranks");
	sr_ranks_free(&rk);
	free(js);

	js = spec(0, 0, 2, 8, SR_LAUNCH_RANKS);
	ok(sr_ranks_plan(js, &none, 3, &rk, err) == 0 && rk.n == 3, "procs = 2-8 on 3 CPUs: 3");
	sr_ranks_free(&rk);
	ok(sr_ranks_plan(js, &none, 1, &rk, err) == 0 && rk.n == 2, "procs = 2-8 on 1 CPU: 2");
	sr_ranks_free(&rk);
	ok(sr_ranks_plan(js, &none, 64, &rk, err) == 0 && rk.n == 8, "procs = 2-8 on 64 CPUs: 8");
	sr_ranks_free(&rk);
	free(js);

	js = spec(1, 8, 0, 0, SR_LAUNCH_RANKS);
	ok(sr_ranks_plan(js, &g, 2, &rk, err) == 0 && rk.n == 2 && rk.world == 2 && rk.gpus == 2,
	    "gpus = 1-8 with 2 GPUs: 2 ranks");
	if (rk.n == 2) {
		is_str(rk.visible[0], "GPU-aa", "rank 0 sees the first GPU alone");
		is_str(rk.visible[1], "GPU-bb", "rank 1 the second");
	}
	ok(!rk.pci_order, "UUIDs: no CUDA_DEVICE_ORDER needed");
	sr_ranks_free(&rk);
	free(js);

	js = spec(1, 1, 0, 0, SR_LAUNCH_RANKS);
	ok(sr_ranks_plan(js, &g, 2, &rk, err) == 0 && rk.n == 1 && rk.gpus == 1,
	    "gpus = 1 with 2 GPUs: 1 rank");
	sr_ranks_free(&rk);
	free(js);

	js = spec(4, 4, 0, 0, SR_LAUNCH_RANKS);
	ok(sr_ranks_plan(js, &g, 2, &rk, err) == -1, "gpus = 4 with 2 GPUs: refused");
	is_str(err, "job j needs at least 4 GPUs; this machine has 2 (spotrun's "
	    "CUDA_VISIBLE_DEVICES names them)", "its message");
	sr_ranks_free(&rk);
	free(js);

	js = spec(0, 8, 0, 0, SR_LAUNCH_RANKS);
	ok(sr_ranks_plan(js, &none, 2, &rk, err) == 0 && rk.n == 1 && rk.visible[0] == NULL,
	    "gpus = 0-8 without GPUs: one rank on the CPU");
	sr_ranks_free(&rk);
	free(js);

	js = spec(1, 8, 0, 0, SR_LAUNCH_ONCE);
	ok(sr_ranks_plan(js, &g, 2, &rk, err) == 0 && rk.n == 1 && rk.world == 0,
	    "launch = once: one process, no rank variables (world 0)");
	if (rk.n == 1)
		is_str(rk.visible[0], "GPU-aa,GPU-bb", "it sees every GPU of the job");
	sr_ranks_free(&rk);
	free(js);
	sr_gpus_free(&g);
}

static void
test_env(void)
{
	char *base[] = { "PATH=/bin", "CUDA_VISIBLE_DEVICES=GPU-aa,GPU-bb", "RANK=7",
	    "WORLD_SIZE=16", "MASTER_ADDR=10.0.0.1", "OMP_NUM_THREADS=4", "SPOTRUN_WORLD_SIZE=9",
	    NULL };
	char *menv[] = { "SPOTRUN_CKPT_REQUEST=/c/request", NULL };
	char *penv[] = { "SPOTRUN_CKPT_DONE=/c/done.1", NULL };
	const char *want[][2] = {
		{ "RANK", "1" }, { "LOCAL_RANK", "1" }, { "GROUP_RANK", "0" }, { "ROLE_RANK", "1" },
		{ "ROLE_NAME", "default" }, { "LOCAL_WORLD_SIZE", "2" }, { "WORLD_SIZE", "2" },
		{ "GROUP_WORLD_SIZE", "1" }, { "ROLE_WORLD_SIZE", "2" },
		{ "MASTER_ADDR", "127.0.0.1" }, { "MASTER_PORT", "29511" },
		{ "TORCHELASTIC_RESTART_COUNT", "3" }, { "TORCHELASTIC_MAX_RESTARTS", "10" },
		{ "TORCHELASTIC_RUN_ID", "run-1" }, { "TORCHELASTIC_USE_AGENT_STORE", "False" },
		{ "TORCHELASTIC_ERROR_FILE", "/l/attempt-1.rank-1.error.json" },
		{ "NCCL_ASYNC_ERROR_HANDLING", "1" }, { "TORCH_NCCL_ASYNC_ERROR_HANDLING", "1" },
		{ "OMP_NUM_THREADS", "4" }, { "CUDA_VISIBLE_DEVICES", "GPU-bb" },
		{ "SPOTRUN_CKPT_REQUEST", "/c/request" }, { "SPOTRUN_CKPT_DONE", "/c/done.1" },
		{ "SPOTRUN_WORLD_SIZE", "2" }, { "SPOTRUN_PREV_WORLD_SIZE", "4" },
	};
	struct sr_jobspec *js = spec(0, 0, 0, 0, SR_LAUNCH_RANKS);
	struct sr_jobenv_vars v;
	struct sr_jobenv_proc p;
	char **env;
	size_t i;

	js->env = (char *[]){ "FROM_JOB=1", NULL };
	memset(&v, 0, sizeof v);
	v.attempt = 2;
	v.ckpt_dir = "/c/ckpt";
	v.method_env = menv;
	v.resume_step = 120;
	v.provider = "local";
	v.world_size = 2;
	v.prev_world_size = 4;
	v.master_addr = "127.0.0.1";
	v.master_port = 29511;
	v.restart_count = 3;
	v.max_restarts = 10;
	v.run_id = "run-1";
	memset(&p, 0, sizeof p);
	p.rank = 1;
	p.visible = "GPU-bb";
	p.method_env = penv;
	p.error_file = "/l/attempt-1.rank-1.error.json";
	env = sr_jobenv_build(base, js, &v, &p);
	for (i = 0; i < SR_ARRAY_LEN(want); i++) {
		const char *got = get(env, want[i][0]);
		is_str(got != NULL ? got : "(unset)", want[i][1], "rank 1 of 2: %s", want[i][0]);
		is_int(count(env, want[i][0]), 1, "rank 1 of 2: %s once", want[i][0]);
	}
	ok(get(env, "CUDA_DEVICE_ORDER") == NULL, "no CUDA_DEVICE_ORDER for UUIDs");
	is_str(get(env, "FROM_JOB"), "1", "[env] kept");
	sr_jobenv_free(env);

	/* Driver indices: CUDA must count as the driver does. */
	v.pci_order = 1;
	p.visible = "3";
	v.prev_world_size = 0;
	base[5] = "PATH=/bin";	/* no OMP_NUM_THREADS inherited */
	env = sr_jobenv_build(base, js, &v, &p);
	is_str(get(env, "CUDA_VISIBLE_DEVICES"), "3", "an index replaces the inherited value");
	is_str(get(env, "CUDA_DEVICE_ORDER"), "PCI_BUS_ID", "with CUDA_DEVICE_ORDER=PCI_BUS_ID");
	is_str(get(env, "OMP_NUM_THREADS"), "1", "several ranks: OMP_NUM_THREADS=1 when unset");
	is_str(get(env, "SPOTRUN_PREV_WORLD_SIZE"), "", "no previous world size: empty");
	sr_jobenv_free(env);

	/* Node 2 of a gang of 3 (torchrun --nnodes 3 --nproc_per_node 2),
	 * its local rank 1. */
	v.nodes = 3;
	v.node_rank = 2;
	v.master_addr = "10.0.1.5";
	env = sr_jobenv_build(base, js, &v, &p);
	{
		const char *gw[][2] = {
			{ "RANK", "5" }, { "LOCAL_RANK", "1" }, { "GROUP_RANK", "2" },
			{ "ROLE_RANK", "5" }, { "LOCAL_WORLD_SIZE", "2" }, { "WORLD_SIZE", "6" },
			{ "GROUP_WORLD_SIZE", "3" }, { "ROLE_WORLD_SIZE", "6" },
			{ "MASTER_ADDR", "10.0.1.5" }, { "MASTER_PORT", "29511" },
			{ "SPOTRUN_NODES", "3" }, { "SPOTRUN_NODE_RANK", "2" },
			{ "SPOTRUN_WORLD_SIZE", "6" },
		};

		for (i = 0; i < SR_ARRAY_LEN(gw); i++) {
			const char *got = get(env, gw[i][0]);
			is_str(got != NULL ? got : "(unset)", gw[i][1], "node 2 of 3, local rank 1: %s",
			    gw[i][0]);
		}
	}
	sr_jobenv_free(env);
	v.nodes = 0;
	v.node_rank = 0;
	v.master_addr = "127.0.0.1";
	env = sr_jobenv_build(base, js, &v, &p);
	ok(strcmp(get(env, "SPOTRUN_NODES"), "1") == 0 && strcmp(get(env, "SPOTRUN_NODE_RANK"),
	    "0") == 0, "one machine: SPOTRUN_NODES 1, SPOTRUN_NODE_RANK 0");
	sr_jobenv_free(env);

	/* One rank: no OMP_NUM_THREADS of spotrun's, as torchrun. */
	v.world_size = 1;
	p.rank = 0;
	env = sr_jobenv_build(base, js, &v, &p);
	ok(get(env, "OMP_NUM_THREADS") == NULL, "one rank: OMP_NUM_THREADS not set");
	is_str(get(env, "WORLD_SIZE"), "1", "one rank: WORLD_SIZE=1");
	sr_jobenv_free(env);

	/* launch = once: the outer launcher's variables pass through. */
	base[5] = "OMP_NUM_THREADS=4";
	v.world_size = 0;
	v.pci_order = 0;
	p.visible = "GPU-aa,GPU-bb";
	p.error_file = NULL;
	env = sr_jobenv_build(base, js, &v, &p);
	is_str(get(env, "RANK"), "7", "once: RANK as inherited");
	is_str(get(env, "WORLD_SIZE"), "16", "once: WORLD_SIZE as inherited");
	is_str(get(env, "MASTER_ADDR"), "10.0.0.1", "once: MASTER_ADDR as inherited");
	ok(get(env, "LOCAL_RANK") == NULL && get(env, "MASTER_PORT") == NULL &&
	    get(env, "TORCHELASTIC_RUN_ID") == NULL && get(env, "NCCL_ASYNC_ERROR_HANDLING") == NULL,
	    "once: none of torchrun's variables set");
	is_str(get(env, "CUDA_VISIBLE_DEVICES"), "GPU-aa,GPU-bb", "once: every GPU of the job");
	is_int(count(env, "CUDA_VISIBLE_DEVICES"), 1, "once: CUDA_VISIBLE_DEVICES once");
	is_str(get(env, "SPOTRUN_WORLD_SIZE"), "1", "once: one process answers");
	sr_jobenv_free(env);

	/* No GPU: the inherited value stays. */
	p.visible = NULL;
	env = sr_jobenv_build(base, js, &v, &p);
	is_str(get(env, "CUDA_VISIBLE_DEVICES"), "GPU-aa,GPU-bb", "no GPU: left as inherited");
	sr_jobenv_free(env);
	free(js);
}

static void
test_port(void)
{
	struct sockaddr_in sa;
	char err[SR_ERRMAX];
	int port = 0, fd;

	ok(sr_ranks_free_port(&port, err) == 0 && port > 0 && port < 65536,
	    "a free port: %d %s", port, err);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)port);
	ok(bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0, "rank 0 can bind it");
	close(fd);
	ok(sr_ranks_ncpus() >= 1, "CPUs of the affinity mask: %d", sr_ranks_ncpus());
}

int
main(void)
{
	test_discover();
	test_plan();
	test_env();
	test_port();
	return tap_done();
}
