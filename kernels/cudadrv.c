/*
 * cudadrv.c: the CUDA driver loaded at run time (see cudadrv.h): dlopen, the
 * functions by name, the primary context, the kernels' modules (where nvcc
 * built them). Where cuda.h is there, the declarations of cudaapi.h are
 * held to it here.
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

#ifdef HAVE_CUDA
/* cudaapi.h's fallback agrees with cuda.h: its constants, its types' sizes,
 * and the symbols it takes are those cuda.h maps the API names to (its
 * prototypes redeclare cuda.h's, which the compiler checks). */
#define SR_CUDA_SAME(name, value) _Static_assert(name == value, #name " is not " #value);
SR_CUDA_CONSTS(SR_CUDA_SAME)
#undef SR_CUDA_SAME
#define SR_CUDA_SAME(name, sym, params) \
	_Static_assert(__builtin_strcmp(SR_STR(name), #sym) == 0, #name " is not " #sym);
SR_CUDA_FNS(SR_CUDA_SAME)
#undef SR_CUDA_SAME
_Static_assert(sizeof(CUresult) == sizeof(int) && sizeof(CUdevice) == sizeof(int) &&
    sizeof(CUdevice_attribute) == sizeof(int) && sizeof(CUpointer_attribute) == sizeof(int),
    "cudaapi.h's fallback types are ints");
_Static_assert(__builtin_types_compatible_p(CUdeviceptr, unsigned long long),
    "CUdeviceptr is unsigned long long");
_Static_assert(CUDA_VERSION >= 13000, "cudaapi.h takes CUDA 13's symbol names");
#endif

#if SR_CUDA_KERNELS
static const char *const fn_names[SR_CUFN_COUNT] = {
	[SR_CUFN_BP_SPLIT] = "sr_bp_split",
	[SR_CUFN_BP_JOIN] = "sr_bp_join",
	[SR_CUFN_BP_GENERIC] = "sr_bp_generic",
	[SR_CUFN_CS_LEAVES] = "sr_cs_leaves",
	[SR_CUFN_CS_ROOTS] = "sr_cs_roots",
};
#endif

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
#define SR_CUDA_TAKE(name, sym, params) \
	if ((*(void **)&cu->api.name = dlsym(cu->lib, #sym)) == NULL) \
		return sr_err(err, "open CUDA driver %s: no %s: the driver is older than " \
		    "CUDA %d.%d, which spotrun was built for", lib, #sym, \
		    CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
	SR_CUDA_FNS(SR_CUDA_TAKE)
#undef SR_CUDA_TAKE
	return 0;
}

/* The kernels' modules, where nvcc built them: 0 (cu->kernels says
 * whether there are any), or -1. */
static int
load_kernels(struct sr_cuda *cu, char *err)
{
#if SR_CUDA_KERNELS
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
	cu->kernels = 1;
#endif
	return 0;
}

struct sr_cuda *
sr_cuda_open(const char *lib, int device, char *err)
{
	struct sr_cuda *cu = sr_try_calloc(1, sizeof *cu, err);
	int count = 0;
	CUresult r;

	if (cu == NULL) {
		sr_err_prefix(err, "open CUDA device %d", device);
		return NULL;
	}
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
	/* the modules belong to the context: loaded with it current, and the
	 * caller's current context given back */
	if (sr_cuda_push(cu, err) == -1)
		goto fail;
	r = load_kernels(cu, err);
	sr_cuda_pop(cu);
	if (r != 0)
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

int
sr_cuda_push(struct sr_cuda *cu, char *err)
{
	return sr_cuda_check(cu, cu->api.cuCtxPushCurrent(cu->ctx), "cuCtxPushCurrent", err);
}

void
sr_cuda_pop(struct sr_cuda *cu)
{
	CUcontext was;

	cu->api.cuCtxPopCurrent(&was);
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
