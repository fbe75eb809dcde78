/*
 * cudadrv.h: the CUDA driver, loaded at run time. spotrun links no CUDA
 * library: sr_cuda_open dlopens libcuda.so.1 (the driver, present only
 * where a GPU is), takes the few driver API functions the kernels and their
 * callers need, and loads the kernels' modules (fat binaries built by nvcc
 * and linked in as data), so one build runs on machines with and without a
 * GPU, and a machine without one gets a clear message and the CPU twins.
 * Built only when configure found nvcc (HAVE_CUDA), for the toolkit's
 * cuda.h: the function names taken are the ones that header maps the API
 * to (cuMemAlloc is cuMemAlloc_v2), so they match its prototypes.
 *
 * A handle belongs to its caller; its context (the device's primary
 * context) is made current on the thread that opened it, and another thread
 * must call sr_cuda_bind before using it.
 */
#ifndef SR_CUDADRV_H
#define SR_CUDADRV_H

#include <cuda.h>

/* The driver API functions taken, by their names in cuda.h. */
#define SR_CUDA_API(X) \
	X(cuInit) X(cuDriverGetVersion) X(cuDeviceGetCount) X(cuDeviceGet) \
	X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDevicePrimaryCtxRetain) \
	X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) X(cuCtxSynchronize) \
	X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction) X(cuLaunchKernel) \
	X(cuMemAlloc) X(cuMemFree) X(cuMemHostAlloc) X(cuMemFreeHost) \
	X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyDtoD) X(cuMemcpyHtoDAsync) \
	X(cuMemcpyDtoHAsync) X(cuMemcpyDtoDAsync) X(cuMemsetD8) X(cuStreamSynchronize) \
	X(cuEventCreate) X(cuEventRecord) X(cuEventSynchronize) X(cuEventElapsedTime) \
	X(cuEventDestroy) X(cuGetErrorName) X(cuGetErrorString)

#define SR_CUDA_FIELD(f) __typeof__(f) *f;
struct sr_cuda_api {
	SR_CUDA_API(SR_CUDA_FIELD)
};
#undef SR_CUDA_FIELD

/* The kernels, by the modules' extern "C" names. */
enum sr_cuda_fn {
	SR_CUFN_BP_SPLIT,	/* byteplane.cu: widths 2 and 4 */
	SR_CUFN_BP_JOIN,
	SR_CUFN_BP_GENERIC,	/* byteplane.cu: any width, one byte at a time */
	SR_CUFN_CS_LEAVES,	/* chunksum.cu */
	SR_CUFN_CS_ROOTS,
	SR_CUFN_COUNT
};

struct sr_cuda {
	void *lib;
	struct sr_cuda_api api;
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod[2];
	CUfunction fn[SR_CUFN_COUNT];
	int sms;		/* multiprocessors: the grids are sized by them */
	int cc_major, cc_minor;
	int driver;		/* cuDriverGetVersion: 13000 for CUDA 13.0 */
	char name[128];
};

/*
 * Open the driver `lib` (NULL: "libcuda.so.1") and device `device`: NULL
 * with err set when there is no GPU to use, saying why: "no CUDA driver
 * (libcuda.so.1: ...)", the toolkit's stub library, "no CUDA device", a
 * driver too old for the kernels, or the failing call.
 */
struct sr_cuda *sr_cuda_open(const char *lib, int device, char *err);
void sr_cuda_close(struct sr_cuda *cu);

/* Make the handle's context current on the calling thread: 0 or -1. */
int sr_cuda_bind(struct sr_cuda *cu, char *err);

/* 0 when r is CUDA_SUCCESS, else -1 with err "WHAT: NAME (number): text". */
int sr_cuda_check(const struct sr_cuda *cu, CUresult r, const char *what, char *err);

#endif
