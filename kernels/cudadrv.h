/*
 * cudadrv.h: the CUDA driver, loaded at run time. spotrun links no CUDA
 * library: sr_cuda_open dlopens libcuda.so.1 (the driver, present only
 * where a GPU is), takes the few driver API functions the kernels and their
 * callers need, and loads the kernels' modules (fat binaries built by nvcc
 * and linked in as data), so one build runs on machines with and without a
 * GPU, and a machine without one gets a clear message and the CPU twins.
 * Built in every build: the driver API it takes is declared in cudaapi.h
 * (cuda.h's where the toolkit is, checked against it), and the function
 * names taken are the ones cuda.h maps the API to (cuMemAlloc is
 * cuMemAlloc_v2). The kernels' fat binaries exist only where nvcc built
 * them (SR_CUDA_KERNELS): without them a handle has no kernels (kernels
 * 0), and its callers copy raw bytes and run the CPU twins on the host.
 *
 * A handle belongs to its caller; its context (the device's primary
 * context) is current on no thread until the caller makes it so: for good
 * with sr_cuda_bind (a program of its own), or for the time of a call with
 * sr_cuda_push and sr_cuda_pop (a library, whose caller's current context
 * must not change).
 */
#ifndef SR_CUDADRV_H
#define SR_CUDADRV_H

#include "cudaapi.h"

/* The kernels' fat binaries are linked in (nvcc built them). */
#ifdef HAVE_CUDA
#define SR_CUDA_KERNELS 1
#else
#define SR_CUDA_KERNELS 0
#endif

/* The driver API functions taken (cudaapi.h), called by their API names:
 * cu->api.cuMemAlloc(...). */
#define SR_CUDA_FIELD(name, sym, params) __typeof__(sym) *name;
struct sr_cuda_api {
	SR_CUDA_FNS(SR_CUDA_FIELD)
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
	int kernels;		/* the kernels are loaded: fn[] is usable */
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
/* Make it current for a while (cuCtxPushCurrent), then give the thread
 * back the context it had (cuCtxPopCurrent): a library must not change
 * its caller's current context. 0 or -1. */
int sr_cuda_push(struct sr_cuda *cu, char *err);
void sr_cuda_pop(struct sr_cuda *cu);

/* 0 when r is CUDA_SUCCESS, else -1 with err "WHAT: NAME (number): text". */
int sr_cuda_check(const struct sr_cuda *cu, CUresult r, const char *what, char *err);

#endif
