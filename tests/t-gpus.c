/*
 * t-gpus.c: GPU discovery (runner/gpus.c, gpus-nvml.c) through the fake
 * NVML (tests/fake-nvml.c, a shared library this test dlopens by path): 0,
 * 1 and 8 GPUs with their names, UUIDs and memory, NVML failing to start,
 * no NVML at all, an inherited CUDA_VISIBLE_DEVICES filled in from NVML
 * by index and by UUID, an operator's count, and the model a job's
 * gpu_type is matched against; the GPUs' locks (runner/gpulock.c) in a
 * folder of the test's own: taken, skipped when held (by another open
 * description: this process's other lock), counted with their holders,
 * refused, released. Device nodes (empty files in a folder of the test's,
 * as SPOTRUN_GPU_DEV_DIR names it) with NVML failing, absent or listing
 * none: the driver said not working, with NVML's or the loader's words.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpulock.h"
#include "gpus.h"
#include "tap.h"
#include "util.h"

static void
model_is(const char *name, const char *want)
{
	char buf[64];

	is_str(sr_gpus_model(name, buf, sizeof buf), want, "model of \"%s\" is \"%s\"", name, want);
}

/* Two GPUs, "0" (known by its UUID) and "1" (by the driver's index). */
static void
two(struct sr_gpus *g)
{
	memset(g, 0, sizeof *g);
	g->source = "none";
	sr_gpus_resize(g, 2);
	g->by_index = 1;
	strlcpy(g->v[0].uuid, "GPU-aa", sizeof g->v[0].uuid);
}

static void
locks(void)
{
	char tmpl[] = "/tmp/t-gpus.XXXXXX", *dir = mkdtemp(tmpl), err[SR_ERRMAX], busy[64], *want;
	struct sr_gpulock a, b, c;
	struct sr_gpus g;

	if (dir == NULL)
		tap_diag("mkdtemp failed"), exit(1);
	setenv("SPOTRUN_GPU_LOCK_DIR", dir, 1);
	is_str(sr_gpulock_dir(), dir, "the lock folder: SPOTRUN_GPU_LOCK_DIR");
	two(&g);
	is_int(sr_gpulock_free(dir, &g), 2, "no lock file yet: both GPUs free");
	ok(sr_gpulock_take(dir, &g, 1, 1, "j", &a, busy, sizeof busy, err) == 0, "gpus = 1: taken");
	is_str(g.n == 1 ? g.v[0].id : "?", "0", "... GPU 0");
	is_str(busy, "", "... none skipped");
	sr_gpus_free(&g);
	two(&g);
	is_int(sr_gpulock_free(dir, &g), 1, "GPU 0 held: 1 free");
	ok(sr_gpulock_take(dir, &g, 1, 2, "j", &b, busy, sizeof busy, err) == 0,
	    "gpus = 1-2 with GPU 0 held: taken");
	is_str(g.n == 1 ? g.v[0].id : "?", "1", "... GPU 1 alone");
	want = sr_asprintf("0 (pid %ld)", (long)getpid());
	is_str(busy, want, "... GPU 0 skipped, its holder named");
	free(want);
	sr_gpus_free(&g);
	two(&g);
	is_int(sr_gpulock_free(dir, &g), 0, "both held: none free");
	is_int(sr_gpulock_free_held(dir, &g, busy, sizeof busy), 0, "... counted again");
	want = sr_asprintf("2 held by spotrun pid %ld", (long)getpid());
	is_str(busy, want, "... saying who holds them");
	free(want);
	ok(sr_gpulock_take(dir, &g, 1, 1, "j", &c, NULL, 0, err) == -1, "gpus = 1 with both held: refused");
	want = sr_asprintf("job j needs at least 1 GPU; 0 of this machine's 2 are free: GPU 0 (GPU-aa) "
	    "is in use by spotrun pid %ld (lock %s/gpu-GPU-aa)", (long)getpid(), dir);
	is_str(err, want, "... naming the first GPU held, its UUID, its holder and its lock file");
	free(want);
	sr_gpus_free(&g);
	sr_gpulock_release(&a);
	two(&g);
	is_int(sr_gpulock_free(dir, &g), 1, "GPU 0 released: 1 free");
	sr_gpulock_release(&b);
	is_int(sr_gpulock_free(dir, &g), 2, "both released: 2 free");
	is_int(sr_gpulock_free_held(dir, &g, busy, sizeof busy), 2, "... counted again");
	is_str(busy, "", "... none held");
	ok(sr_gpulock_take(dir, &g, 0, 0, "j", &c, NULL, 0, err) == 0 && g.n == 0 && c.n == 0,
	    "gpus = 0: nothing taken");
	sr_gpulock_release(&c);
	sr_gpus_free(&g);
	two(&g);
	g.by_index = 0;		/* as an inherited CUDA_VISIBLE_DEVICES names them */
	ok(sr_gpulock_take(dir, &g, 1, 1, "j", &a, NULL, 0, err) == 0 && g.n == 1 && a.n == 1,
	    "CUDA_VISIBLE_DEVICES: GPU-aa, known by its UUID, locked");
	sr_gpus_free(&g);
	two(&g);
	g.by_index = 0;
	g.v[0].uuid[0] = '\0';
	ok(sr_gpulock_take(dir, &g, 2, 2, "j", &b, NULL, 0, err) == 0 && g.n == 2 && b.n == 0,
	    "CUDA_VISIBLE_DEVICES entries with no UUID known: handed out, none locked");
	is_int(sr_gpulock_free(dir, &g), 2, "... and counted free");
	sr_gpulock_release(&a);
	sr_gpulock_release(&b);
	sr_gpus_free(&g);
	unsetenv("SPOTRUN_GPU_LOCK_DIR");
	want = sr_asprintf("rm -rf %s", dir);
	(void)!system(want);
	free(want);
}

static void
find(char *const *env, const char *lib, struct sr_gpus *g)
{
	const struct sr_gpus_where w = { env, "/nonexistent", lib };
	char err[SR_ERRMAX];

	sr_gpus_free(g);
	if (sr_gpus_discover(&w, g, err) == -1)
		tap_diag("discover: %s", err), exit(1);
}

/* Device nodes in a folder of the test's: NVML failing, absent, listing
 * none, working, not asked. */
static void
no_driver(void)
{
	char tmpl[] = "/tmp/t-gpus-dev.XXXXXX", *dir = mkdtemp(tmpl), *env[2], *want, path[64];
	static const char *const nodes[] = { "nvidia0", "nvidia1", "nvidia2", "nvidia3",
	    "nvidiactl", "nvidia-uvm" };
	struct sr_gpus g;
	struct sr_gpus_where w = { NULL, NULL, SR_FAKE_NVML };
	char err[SR_ERRMAX];
	size_t i;

	if (dir == NULL)
		tap_diag("mkdtemp failed"), exit(1);
	for (i = 0; i < SR_ARRAY_LEN(nodes); i++) {
		snprintf(path, sizeof path, "%s/%s", dir, nodes[i]);
		fclose(fopen(path, "w"));
	}
	env[0] = sr_asprintf("SPOTRUN_GPU_DEV_DIR=%s", dir);
	env[1] = NULL;
	w.env = env;
	memset(&g, 0, sizeof g);

	setenv("FAKE_NVML_INIT", "9", 1);
	setenv("FAKE_NVML_GPUS", "4", 1);
	ok(sr_gpus_discover(&w, &g, err) == 0, "device nodes, NVML failing: found");
	is_int(g.nodes, 4, "... 4 device nodes (nvidiaN only)");
	want = sr_asprintf("%s/nvidia0, %s/nvidia1, %s/nvidia2, %s/nvidia3", dir, dir, dir, dir);
	is_str(g.node_paths, want, "... named");
	free(want);
	is_str(g.no_driver, "nvmlInit_v2: Driver Not Loaded (NVML code 9)",
	    "... the driver does not work, in NVML's words");
	is_int(g.n, 4, "... the nodes are its GPUs all the same, as before (the caller decides)");
	sr_gpus_free(&g);
	unsetenv("FAKE_NVML_INIT");

	w.nvml = "/nonexistent/libnvidia-ml.so.1";
	ok(sr_gpus_discover(&w, &g, err) == 0, "device nodes, no NVML: found");
	is_str(g.no_driver, "load /nonexistent/libnvidia-ml.so.1: /nonexistent/libnvidia-ml.so.1: "
	    "cannot open shared object file: No such file or directory",
	    "... the driver does not work, in the loader's words");
	sr_gpus_free(&g);

	w.nvml = SR_FAKE_NVML;
	setenv("FAKE_NVML_GPUS", "0", 1);
	ok(sr_gpus_discover(&w, &g, err) == 0 && g.n == 0, "device nodes, NVML listing none: no GPU");
	is_str(g.no_driver, "NVML (libnvidia-ml.so.1) lists no GPU", "... and the driver said not working");
	is_int(g.nodes, 4, "... with its 4 nodes");
	sr_gpus_free(&g);

	setenv("FAKE_NVML_GPUS", "4", 1);
	ok(sr_gpus_discover(&w, &g, err) == 0 && g.n == 4, "device nodes, NVML working: 4 GPUs");
	is_str(g.no_driver, "", "... the driver works");
	is_int(g.nodes, 0, "... nodes not looked at");
	sr_gpus_free(&g);

	w.nvml = "";
	ok(sr_gpus_discover(&w, &g, err) == 0 && g.n == 4, "NVML not asked: the 4 nodes");
	is_str(g.no_driver, "", "... nothing said of the driver");
	sr_gpus_free(&g);

	w.nvml = "/nonexistent/libnvidia-ml.so.1";
	w.env = NULL;
	w.dev = "/nonexistent";
	ok(sr_gpus_discover(&w, &g, err) == 0 && g.n == 0, "no NVML, no device node: no GPU");
	is_str(g.no_driver, "", "... and nothing wrong with a driver");
	sr_gpus_free(&g);
	unsetenv("FAKE_NVML_GPUS");
	free(env[0]);
	want = sr_asprintf("rm -rf %s", dir);
	(void)!system(want);
	free(want);
}

int
main(void)
{
	char *none[] = { NULL };
	char *vis_idx[] = { "CUDA_VISIBLE_DEVICES=3,1", NULL };
	char *vis_uuid[] = { "CUDA_VISIBLE_DEVICES=GPU-00000000-fake-0000-0000-000000000005,MIG-1", NULL };
	struct sr_gpus g;
	char err[SR_ERRMAX];

	memset(&g, 0, sizeof g);
	setenv("FAKE_NVML_GPUS", "0", 1);
	find(none, SR_FAKE_NVML, &g);
	is_int(g.n, 0, "NVML with no GPU: none");
	is_str(g.source, "none", "... and says so");
	is_str(g.nvml_why, "", "... NVML answered");

	setenv("FAKE_NVML_GPUS", "1", 1);
	setenv("FAKE_NVML_NAME", "Tesla T4", 1);
	setenv("FAKE_NVML_MEMORY", "16106127360", 1);
	find(none, SR_FAKE_NVML, &g);
	is_int(g.n, 1, "one GPU");
	is_str(g.source, "NVML", "... as NVML says");
	is_str(g.v[0].id, "0", "its id is its index");
	is_int(g.by_index, 1, "... ids are indices");
	is_str(g.v[0].model, "Tesla T4", "its name");
	is_str(g.v[0].uuid, "GPU-00000000-fake-0000-0000-000000000000", "its UUID");
	is_int(g.v[0].mem_bytes, 16106127360LL, "its memory");
	is_str(g.nvml_why, "", "no complaint");
	is_int(sr_gpus_check_type(&g, 1, "t4", "j", err), 0, "gpu_type = t4 fits a Tesla T4 (case aside)");

	setenv("FAKE_NVML_GPUS", "8", 1);
	unsetenv("FAKE_NVML_NAME");
	unsetenv("FAKE_NVML_MEMORY");
	find(none, SR_FAKE_NVML, &g);
	is_int(g.n, 8, "eight GPUs");
	is_str(g.v[7].id, "7", "the eighth's id");
	is_str(g.v[7].model, "NVIDIA H100 80GB HBM3", "the eighth's name");
	is_str(g.v[7].uuid, "GPU-00000000-fake-0000-0000-000000000007", "the eighth's UUID");
	is_int(g.v[7].mem_bytes, 80LL << 30, "the eighth's memory");
	is_int(sr_gpus_check_type(&g, 8, "H100", "j", err), 0, "gpu_type = H100 fits");
	is_int(sr_gpus_check_type(&g, 8, NULL, "j", err), 0, "no gpu_type fits anything");
	is_int(sr_gpus_check_type(&g, 8, "A100", "train", err), -1, "gpu_type = A100 does not");
	is_str(err, "job train: gpu_type = A100, but GPU 0 of this machine is H100 (NVIDIA H100 "
	    "80GB HBM3; as NVML names it): run it on a machine with A100 GPUs, or change or remove gpu_type "
	    "in its [resources]", "... and says what this machine has and the way out");

	setenv("FAKE_NVML_GPUS", "3", 1);
	setenv("FAKE_NVML_NAMES", "NVIDIA H100 80GB HBM3,NVIDIA H100 80GB HBM3,NVIDIA A100-SXM4-80GB", 1);
	find(none, SR_FAKE_NVML, &g);
	is_str(g.v[2].model, "NVIDIA A100-SXM4-80GB", "mixed models: the third is an A100");
	is_int(sr_gpus_check_type(&g, 2, "H100", "j", err), 0, "... gpu_type = H100 fits the two the job gets");
	is_int(sr_gpus_check_type(&g, 3, "H100", "mix", err), -1, "... not all three");
	is_str(err, "job mix: gpu_type = H100, but GPU 2 of this machine is A100 (NVIDIA "
	    "A100-SXM4-80GB; as NVML names it): run it on a machine with H100 GPUs, or change or "
	    "remove gpu_type in its [resources]", "... naming the GPU of another model");
	unsetenv("FAKE_NVML_NAMES");
	setenv("FAKE_NVML_GPUS", "8", 1);

	find(vis_idx, SR_FAKE_NVML, &g);
	is_str(g.source, "CUDA_VISIBLE_DEVICES", "an inherited CUDA_VISIBLE_DEVICES comes first");
	is_int(g.n, 2, "... its two entries");
	is_str(g.v[0].id, "3", "... in its order");
	is_str(g.v[0].uuid, "GPU-00000000-fake-0000-0000-000000000003", "... index 3 filled in from NVML");
	is_str(g.v[1].uuid, "GPU-00000000-fake-0000-0000-000000000001", "... and index 1");
	is_str(g.v[1].model, "NVIDIA H100 80GB HBM3", "... with its model");
	is_int(g.by_index, 0, "... ids as the variable wrote them");

	find(vis_uuid, SR_FAKE_NVML, &g);
	is_int(g.n, 2, "UUID entries");
	is_str(g.v[0].model, "NVIDIA H100 80GB HBM3", "... a UUID NVML knows gets its model");
	is_int(g.v[0].mem_bytes, 80LL << 30, "... and memory");
	is_str(g.v[1].model, "", "... a MIG instance none");
	is_int(sr_gpus_check_type(&g, 2, "H100", "j", err), 1, "... so gpu_type cannot be checked");
	is_int(sr_gpus_check_type(&g, 1, "H100", "j", err), 0, "... but on the first alone it can");

	setenv("FAKE_NVML_INIT", "9", 1);
	find(none, SR_FAKE_NVML, &g);
	is_str(g.nvml_why, "nvmlInit_v2: Driver Not Loaded (NVML code 9)", "NVML that cannot start says why");
	is_str(g.source, "none", "... and the device nodes are counted instead (none here)");
	find(vis_idx, SR_FAKE_NVML, &g);
	is_int(g.n, 2, "... CUDA_VISIBLE_DEVICES still names two");
	is_str(g.v[0].model, "", "... of no known model");
	unsetenv("FAKE_NVML_INIT");

	find(none, "/nonexistent/libnvidia-ml.so.1", &g);
	is_str(g.nvml_why, "load /nonexistent/libnvidia-ml.so.1: /nonexistent/libnvidia-ml.so.1: "
	    "cannot open shared object file: No such file or directory",
	    "no NVML: says it could not load it, with dlopen's reason");
	is_str(g.source, "none", "... and finds none");
	find(none, "", &g);
	is_str(g.nvml_why, "not used", "NVML not asked");

	setenv("FAKE_NVML_GPUS", "8", 1);
	find(none, SR_FAKE_NVML, &g);
	sr_gpus_resize(&g, 2);
	is_int(g.n, 2, "an operator's count of 2 keeps the first two");
	is_str(g.v[1].uuid, "GPU-00000000-fake-0000-0000-000000000001", "... as they were");
	find(none, "", &g);
	sr_gpus_resize(&g, 3);
	is_int(g.n, 3, "an operator's 3 on a machine with none found");
	is_str(g.v[2].id, "2", "... named by index");
	is_str(g.source, "a label", "... from the label");
	sr_gpus_free(&g);

	model_is("NVIDIA H100 80GB HBM3", "H100");
	model_is("NVIDIA A100-SXM4-80GB", "A100");
	model_is("NVIDIA L4", "L4");
	model_is("NVIDIA A10G", "A10G");
	model_is("NVIDIA GeForce RTX 4090", "RTX4090");
	model_is("NVIDIA RTX A6000", "A6000");
	model_is("Quadro RTX 8000", "RTX8000");
	model_is("Tesla V100-SXM2-16GB", "V100");
	model_is("NVIDIA", "");
	model_is("", "");
	locks();
	no_driver();
	return tap_done();
}
