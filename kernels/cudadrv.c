/*
 * cudadrv.c: the CUDA driver loaded at run time (see cudadrv.h): dlopen, the
 * functions by name, the primary context, the kernels' modules.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudadrv.h"
#include "fatbin.h"
#include "util.h"

/* cuda.h maps most names to versioned ones (cuMemAlloc -> cuMemAlloc_v2);
 * the library exports those. Two levels, so the macro is expanded first. */
#define SR_STR_(x) #x
#define SR_STR(x) SR_STR_(x)

static const char *const fn_names[SR_CUFN_COUNT] = {
	[SR_CUFN_BP_SPLIT] = "sr_bp_split",
	[SR_CUFN_BP_JOIN] = "sr_bp_join",
	[SR_CUFN_BP_GENERIC] = "sr_bp_generic",
	[SR_CUFN_CS_LEAVES] = "sr_cs_leaves",
	[SR_CUFN_CS_ROOTS] = "sr_cs_roots",
};

int
sr_cuda_check(const struct sr_cuda *cu, CUresult r, const char *what, char *err)
{
	const char *name = NULL, *text = NULL;

	if (r == CUDA_SUCCESS)
		return 0;
	if (cu != NULL && cu->api.cuGetErrorName != NULL) {
		cu->api.cuGetErrorName(r, &name);
		cu->api.cuGetErrorString(r, &text);
	}
	return sr_err(err, "%s: %s (%d): %s", what, name != NULL ? name : "CUDA error", (int)r,
	    text != NULL ? text : "unknown");
}

/* Every function of SR_CUDA_API from the library: 0, or -1 naming the first
 * one missing (a driver older than the toolkit's header). */
static int
take_api(struct sr_cuda *cu, const char *lib, char *err)
{
#define SR_CUDA_TAKE(f) \
	if ((*(void **)&cu->api.f = dlsym(cu->lib, SR_STR(f))) == NULL) \
		return sr_err(err, "open CUDA driver %s: no %s: the driver is older than " \
		    "CUDA %d.%d, which the kernels were built for", lib, SR_STR(f), \
		    CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
	SR_CUDA_API(SR_CUDA_TAKE)
#undef SR_CUDA_TAKE
	return 0;
}

static int
load_kernels(struct sr_cuda *cu, char *err)
{
	const void *images[2] = { sr_fatbin_byteplane, sr_fatbin_chunksum };
	char what[96];
	int i;

	for (i = 0; i < 2; i++)
		if (sr_cuda_check(cu, cu->api.cuModuleLoadData(&cu->mod[i], images[i]),
		    "load the CUDA kernels (cuModuleLoadData)", err) == -1)
			return -1;
	for (i = 0; i < SR_CUFN_COUNT; i++) {
		snprintf(what, sizeof what, "find kernel %s", fn_names[i]);
		if (sr_cuda_check(cu, cu->api.cuModuleGetFunction(&cu->fn[i],
		    cu->mod[i < SR_CUFN_CS_LEAVES ? 0 : 1], fn_names[i]), what, err) == -1)
			return -1;
	}
	return 0;
}

struct sr_cuda *
sr_cuda_open(const char *lib, int device, char *err)
{
	struct sr_cuda *cu = sr_calloc(1, sizeof *cu);
	int count = 0;
	CUresult r;

	if (lib == NULL)
		lib = "libcuda.so.1";
	if ((cu->lib = dlopen(lib, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		sr_err(err, "no CUDA driver (%s)", dlerror());
		goto fail;
	}
	if (take_api(cu, lib, err) == -1)
		goto fail;
	r = cu->api.cuInit(0);
	if (r == CUDA_ERROR_STUB_LIBRARY) {
		sr_err(err, "no CUDA driver: %s is the toolkit's stub library", lib);
		goto fail;
	}
	if (r == CUDA_ERROR_NO_DEVICE) {
		sr_err(err, "no CUDA device (the driver %s sees none)", lib);
		goto fail;
	}
	if (sr_cuda_check(cu, r, "start the CUDA driver (cuInit)", err) == -1 ||
	    sr_cuda_check(cu, cu->api.cuDriverGetVersion(&cu->driver), "cuDriverGetVersion",
	    err) == -1 ||
	    sr_cuda_check(cu, cu->api.cuDeviceGetCount(&count), "cuDeviceGetCount", err) == -1)
		goto fail;
	if (count == 0) {
		sr_err(err, "no CUDA device (the driver %s sees none)", lib);
		goto fail;
	}
	if (device < 0 || device >= count) {
		sr_err(err, "open CUDA device %d: the driver %s sees %d", device, lib, count);
		goto fail;
	}
	if (sr_cuda_check(cu, cu->api.cuDeviceGet(&cu->dev, device), "cuDeviceGet", err) == -1 ||
	    sr_cuda_check(cu, cu->api.cuDeviceGetName(cu->name, sizeof cu->name, cu->dev),
	    "cuDeviceGetName", err) == -1 ||
	    sr_cuda_check(cu, cu->api.cuDeviceGetAttribute(&cu->sms,
	    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, cu->dev), "cuDeviceGetAttribute", err) == -1 ||
	    sr_cuda_check(cu, cu->api.cuDeviceGetAttribute(&cu->cc_major,
	    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cu->dev), "cuDeviceGetAttribute",
	    err) == -1 ||
	    sr_cuda_check(cu, cu->api.cuDeviceGetAttribute(&cu->cc_minor,
	    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, cu->dev), "cuDeviceGetAttribute",
	    err) == -1)
		goto fail;
	if (sr_cuda_check(cu, cu->api.cuDevicePrimaryCtxRetain(&cu->ctx, cu->dev),
	    "cuDevicePrimaryCtxRetain", err) == -1) {
		cu->ctx = NULL;
		goto fail;
	}
	if (sr_cuda_bind(cu, err) == -1 || load_kernels(cu, err) == -1)
		goto fail;
	return cu;
fail:
	sr_cuda_close(cu);
	return NULL;
}

int
sr_cuda_bind(struct sr_cuda *cu, char *err)
{
	return sr_cuda_check(cu, cu->api.cuCtxSetCurrent(cu->ctx), "cuCtxSetCurrent", err);
}

void
sr_cuda_close(struct sr_cuda *cu)
{
	int i;

	if (cu == NULL)
		return;
	for (i = 0; i < 2; i++)
		if (cu->mod[i] != NULL)
			cu->api.cuModuleUnload(cu->mod[i]);
	if (cu->ctx != NULL)
		cu->api.cuDevicePrimaryCtxRelease(cu->dev);
	if (cu->lib != NULL)
		dlclose(cu->lib);
	free(cu);
}
