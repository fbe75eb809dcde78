/*
 * gpu.c: ctrain's GPU (gpu.h): the CUDA driver by dlopen, its functions by
 * the names cuda.h maps the API to, the primary context, a stream, the
 * kernels of kern.cu's fat binary, launched with their one argument
 * struct as a buffer (cuLaunchKernel's `extra`).
 */
#define _POSIX_C_SOURCE 200809L

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuapi.h"
#include "gpu.h"

#define CT_STR_(x) #x
#define CT_STR(x) CT_STR_(x)

#ifdef CT_CUDA_H
/* cuapi.h's fallback agrees with cuda.h: the constants, and the symbols
 * taken are those cuda.h maps the API names to. */
#define CT_CU_SAME(name, value) _Static_assert(name == value, #name " is not " #value);
CT_CU_CONSTS(CT_CU_SAME)
#undef CT_CU_SAME
#define CT_CU_SAME(name, sym, params) \
	_Static_assert(__builtin_strcmp(CT_STR(name), #sym) == 0, #name " is not " #sym);
CT_CU_FNS(CT_CU_SAME)
#undef CT_CU_SAME
_Static_assert(__builtin_types_compatible_p(CUdeviceptr, unsigned long long),
    "CUdeviceptr is unsigned long long");
#endif

#define CT_CU_FIELD(name, sym, params) __typeof__(sym) *name;
struct ct_cu {
	CT_CU_FNS(CT_CU_FIELD)
};
#undef CT_CU_FIELD

struct ct_gpu {
	void *lib;
	struct ct_cu cu;
	CUdevice dev;
	CUcontext ctx;
	CUstream stream;
	CUmodule mod;
	CUfunction fn[CT_K_COUNT];
};

#define CT_KERNEL_NAME(name, threads) "ct_k_" #name,
static const char *const kernel_names[CT_K_COUNT] = { CT_KERNELS(CT_KERNEL_NAME) };
#undef CT_KERNEL_NAME

/* "WHAT: NAME (number)" for a failed call. */
static int
cu_check(const struct ct_gpu *g, CUresult r, const char *what, char *err)
{
	const char *name = NULL;

	if (r == CUDA_SUCCESS)
		return 0;
	if (g->cu.cuGetErrorName != NULL)
		g->cu.cuGetErrorName(r, &name);
	snprintf(err, CT_GPU_ERRMAX, "%s: %s (%d)", what, name != NULL ? name : "CUDA error", (int)r);
	return -1;
}

static int
load(struct ct_gpu *g, const char *lib, char *err)
{
	if ((g->lib = dlopen(lib, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		snprintf(err, CT_GPU_ERRMAX, "no CUDA driver (%s)", dlerror());
		return -1;
	}
#define CT_CU_TAKE(name, sym, params) \
	if ((*(void **)&g->cu.name = dlsym(g->lib, #sym)) == NULL) { \
		snprintf(err, CT_GPU_ERRMAX, "open CUDA driver %s: no %s (a driver older " \
		    "than CUDA 12)", lib, #sym); \
		return -1; \
	}
	CT_CU_FNS(CT_CU_TAKE)
#undef CT_CU_TAKE
	return 0;
}

int
ct_gpu_count(const char *lib)
{
	struct ct_gpu g;
	char err[CT_GPU_ERRMAX];
	int n = 0;

	memset(&g, 0, sizeof g);
	if (load(&g, lib != NULL ? lib : "libcuda.so.1", err) == 0 && g.cu.cuInit(0) == CUDA_SUCCESS &&
	    g.cu.cuDeviceGetCount(&n) != CUDA_SUCCESS)
		n = 0;
	if (g.lib != NULL)
		dlclose(g.lib);
	return n;
}

struct ct_gpu *
ct_gpu_open(const char *lib, int ordinal, char *err)
{
	struct ct_gpu *g = calloc(1, sizeof *g);
	CUresult r;
	int count = 0, k;
	char what[64];

	if (g == NULL) {
		snprintf(err, CT_GPU_ERRMAX, "open the GPU: out of memory");
		return NULL;
	}
	if (lib == NULL)
		lib = "libcuda.so.1";
	if (load(g, lib, err) == -1)
		goto fail;
	r = g->cu.cuInit(0);
	if (r == CUDA_ERROR_STUB_LIBRARY || r == CUDA_ERROR_NO_DEVICE) {
		snprintf(err, CT_GPU_ERRMAX, "no CUDA device (%s: %s)", lib,
		    r == CUDA_ERROR_NO_DEVICE ? "the driver sees none" : "the toolkit's stub library");
		goto fail;
	}
	if (cu_check(g, r, "start the CUDA driver (cuInit)", err) == -1 ||
	    cu_check(g, g->cu.cuDeviceGetCount(&count), "cuDeviceGetCount", err) == -1)
		goto fail;
	if (ordinal >= count) {
		snprintf(err, CT_GPU_ERRMAX, "open CUDA device %d: the driver %s sees %d", ordinal, lib,
		    count);
		goto fail;
	}
	if (cu_check(g, g->cu.cuDeviceGet(&g->dev, ordinal), "cuDeviceGet", err) == -1 ||
	    cu_check(g, g->cu.cuDevicePrimaryCtxRetain(&g->ctx, g->dev), "cuDevicePrimaryCtxRetain",
	    err) == -1)
		goto fail;
	if (cu_check(g, g->cu.cuCtxSetCurrent(g->ctx), "cuCtxSetCurrent", err) == -1 ||
	    cu_check(g, g->cu.cuStreamCreate(&g->stream, 0), "cuStreamCreate", err) == -1)
		goto fail;
#ifdef CT_FATBIN
	if (cu_check(g, g->cu.cuModuleLoadData(&g->mod, ct_fatbin_kern),
	    "load ctrain's kernels (cuModuleLoadData)", err) == -1)
		goto fail;
	for (k = 0; k < CT_K_COUNT; k++) {
		snprintf(what, sizeof what, "find kernel %s", kernel_names[k]);
		if (cu_check(g, g->cu.cuModuleGetFunction(&g->fn[k], g->mod, kernel_names[k]), what,
		    err) == -1)
			goto fail;
	}
	return g;
#else
	(void)k;
	(void)what;
	snprintf(err, CT_GPU_ERRMAX, "this ctrain has no CUDA kernels: build it where nvcc is "
	    "(configure --with-cuda)");
#endif
fail:
	ct_gpu_close(g);
	return NULL;
}

void
ct_gpu_close(struct ct_gpu *g)
{
	if (g == NULL)
		return;
	if (g->mod != NULL)
		g->cu.cuModuleUnload(g->mod);
	if (g->stream != NULL)
		g->cu.cuStreamDestroy(g->stream);
	if (g->ctx != NULL) {
		g->cu.cuCtxSetCurrent(NULL);
		g->cu.cuDevicePrimaryCtxRelease(g->dev);
	}
	if (g->lib != NULL)
		dlclose(g->lib);
	free(g);
}

int
ct_gpu_alloc(struct ct_gpu *g, size_t bytes, uint64_t *dptr, char *err)
{
	CUdeviceptr d;

	if (cu_check(g, g->cu.cuMemAlloc(&d, bytes), "allocate device memory (cuMemAlloc)",
	    err) == -1)
		return -1;
	*dptr = d;
	if (cu_check(g, g->cu.cuMemsetD8(d, 0, bytes), "cuMemsetD8", err) == -1) {
		g->cu.cuMemFree(d);
		return -1;
	}
	return 0;
}

void
ct_gpu_free(struct ct_gpu *g, uint64_t dptr)
{
	g->cu.cuMemFree(dptr);
}

int
ct_gpu_put(struct ct_gpu *g, uint64_t dst, const void *src, size_t bytes, char *err)
{
	return cu_check(g, g->cu.cuMemcpyHtoD(dst, src, bytes), "copy to the device (cuMemcpyHtoD)",
	    err);
}

int
ct_gpu_get(struct ct_gpu *g, void *dst, uint64_t src, size_t bytes, char *err)
{
	return cu_check(g, g->cu.cuMemcpyDtoH(dst, src, bytes),
	    "copy off the device (cuMemcpyDtoH)", err);
}

int
ct_gpu_launch(struct ct_gpu *g, enum ct_kernel k, const struct ct_kargs *a, char *err)
{
	const unsigned block = 128;
	long long threads = 0;
	size_t size = sizeof *a;
	void *extra[] = { (void *)(uintptr_t)CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT, (void *)a,
	    (void *)(uintptr_t)CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT, &size,
	    (void *)(uintptr_t)CU_LAUNCH_PARAM_END_AS_INT };
	char what[64];

#define CT_KERNEL_THREADS(name, n) case CT_K_##name: threads = (n); break;
	switch (k) {
	CT_KERNELS(CT_KERNEL_THREADS)
	default: break;
	}
#undef CT_KERNEL_THREADS
	if (threads <= 0)
		return 0;
	snprintf(what, sizeof what, "launch %s (cuLaunchKernel)", kernel_names[k]);
	return cu_check(g, g->cu.cuLaunchKernel(g->fn[k], (unsigned)((threads + block - 1) / block),
	    1, 1, block, 1, 1, 0, g->stream, NULL, extra), what, err);
}

int
ct_gpu_sync(struct ct_gpu *g, char *err)
{
	return cu_check(g, g->cu.cuStreamSynchronize(g->stream), "wait for the GPU "
	    "(cuStreamSynchronize)", err);
}

void *
ct_gpu_stream(struct ct_gpu *g)
{
	return g->stream;
}
