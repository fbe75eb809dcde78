/*
 * t-gpus.c: GPU discovery (runner/gpus.c) through the fake NVML
 * (tests/fake-nvml.c, a shared library this test dlopens by path): 0, 1
 * and 8 GPUs with their names, UUIDs and memory, NVML failing to start,
 * no NVML at all, and the model a job's gpu_type is matched against.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "gpus.h"
#include "tap.h"

static void
model_is(const char *name, const char *want)
{
	char buf[64];

	is_str(sr_gpus_model(name, buf, sizeof buf), want, "model of \"%s\" is \"%s\"", name, want);
}

int
main(void)
{
	struct sr_gpus g;

	setenv("FAKE_NVML_GPUS", "0", 1);
	sr_gpus_discover(SR_FAKE_NVML, &g);
	is_int(g.count, 0, "NVML with no GPU: none");
	is_str(g.source, "nvml", "... as NVML says");
	is_str(g.model, "", "... no model");

	setenv("FAKE_NVML_GPUS", "1", 1);
	setenv("FAKE_NVML_NAME", "Tesla T4", 1);
	setenv("FAKE_NVML_MEMORY", "16106127360", 1);
	sr_gpus_discover(SR_FAKE_NVML, &g);
	is_int(g.count, 1, "one GPU");
	is_str(g.gpu[0].name, "Tesla T4", "its name");
	is_str(g.gpu[0].uuid, "GPU-00000000-fake-0000-0000-000000000000", "its UUID");
	is_int(g.gpu[0].memory, 16106127360LL, "its memory");
	is_str(g.model, "T4", "its model");
	is_str(g.why, "", "no complaint");

	setenv("FAKE_NVML_GPUS", "8", 1);
	unsetenv("FAKE_NVML_NAME");
	unsetenv("FAKE_NVML_MEMORY");
	sr_gpus_discover(SR_FAKE_NVML, &g);
	is_int(g.count, 8, "eight GPUs");
	is_str(g.gpu[7].name, "NVIDIA H100 80GB HBM3", "the eighth's name");
	is_str(g.gpu[7].uuid, "GPU-00000000-fake-0000-0000-000000000007", "the eighth's UUID");
	is_int(g.gpu[7].memory, 80LL << 30, "the eighth's memory");
	is_str(g.model, "H100", "model H100");

	setenv("FAKE_NVML_INIT", "9", 1);
	sr_gpus_discover(SR_FAKE_NVML, &g);
	is_str(g.why, "nvmlInit_v2: Driver Not Loaded (NVML code 9)", "NVML that cannot start says why");
	ok(strcmp(g.source, "nvml") != 0, "... and is not the source");
	unsetenv("FAKE_NVML_INIT");

	sr_gpus_discover("/nonexistent/libnvidia-ml.so.1", &g);
	is_str(g.why, "load /nonexistent/libnvidia-ml.so.1: /nonexistent/libnvidia-ml.so.1: "
	    "cannot open shared object file: No such file or directory",
	    "no NVML: says it could not load it, with dlopen's reason");
	ok(strcmp(g.source, "nvml") != 0, "... and is not the source");

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
	return tap_done();
}
