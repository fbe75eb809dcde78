/*
 * fake-cuda-util.h: the stand-in CUDA driver (tests/fake-cuda.c) as the
 * device tests drive it: loaded by path, its entry points and counters
 * resolved, the driver started and device 0's primary context current.
 * Header-only, included once per test program (after cudaapi.h).
 */
#ifndef SR_FAKE_CUDA_UTIL_H
#define SR_FAKE_CUDA_UTIL_H

#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

#include "cudaapi.h"
#include "util.h"

struct fcu {
	void *dl;
	uint64_t (*count)(const char *);	/* calls of an entry point since reset */
	void (*reset)(void);
	CUresult (*init)(unsigned);
	CUresult (*retain)(CUcontext *, CUdevice);
	CUresult (*release)(CUdevice);
	CUresult (*set)(CUcontext);
	CUresult (*alloc)(CUdeviceptr *, size_t);
	CUresult (*dfree)(CUdeviceptr);
	CUresult (*htod)(CUdeviceptr, const void *, size_t);
	CUresult (*dtoh)(void *, CUdeviceptr, size_t);
	CUresult (*host_alloc)(void **, size_t, unsigned);
	CUresult (*host_free)(void *);
	CUcontext ctx0;				/* device 0's primary context */
};

static __attribute__((unused)) void *
fcu_sym(void *dl, const char *name)
{
	void *p = dlsym(dl, name);

	if (p == NULL)
		sr_fatal("fake CUDA: no %s", name);
	return p;
}

/* The fake at path with `devices` devices (FAKE_CUDA_DEVICES), started,
 * device 0's primary context current; dies when it cannot. */
static __attribute__((unused)) void
fcu_open(struct fcu *f, const char *path, int devices)
{
	char n[16];

	snprintf(n, sizeof n, "%d", devices);
	setenv("FAKE_CUDA_DEVICES", n, 1);
	if ((f->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL)
		sr_fatal("%s", dlerror());
	*(void **)&f->count = fcu_sym(f->dl, "fake_cuda_count");
	*(void **)&f->reset = fcu_sym(f->dl, "fake_cuda_reset");
	*(void **)&f->init = fcu_sym(f->dl, "cuInit");
	*(void **)&f->retain = fcu_sym(f->dl, "cuDevicePrimaryCtxRetain");
	*(void **)&f->release = fcu_sym(f->dl, "cuDevicePrimaryCtxRelease_v2");
	*(void **)&f->set = fcu_sym(f->dl, "cuCtxSetCurrent");
	*(void **)&f->alloc = fcu_sym(f->dl, "cuMemAlloc_v2");
	*(void **)&f->dfree = fcu_sym(f->dl, "cuMemFree_v2");
	*(void **)&f->htod = fcu_sym(f->dl, "cuMemcpyHtoD_v2");
	*(void **)&f->dtoh = fcu_sym(f->dl, "cuMemcpyDtoH_v2");
	*(void **)&f->host_alloc = fcu_sym(f->dl, "cuMemHostAlloc");
	*(void **)&f->host_free = fcu_sym(f->dl, "cuMemFreeHost");
	if (f->init(0) != CUDA_SUCCESS || f->retain(&f->ctx0, 0) != CUDA_SUCCESS ||
	    f->set(f->ctx0) != CUDA_SUCCESS)
		sr_fatal("fake CUDA: no context");
}

#endif
