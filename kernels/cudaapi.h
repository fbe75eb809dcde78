/*
 * cudaapi.h: the part of the CUDA driver API that spotrun takes from the
 * driver at run time (cudadrv.c), declared so that the loader builds with
 * and without the CUDA toolkit. With the toolkit (HAVE_CUDA: configure
 * found nvcc, and its cuda.h) the types and constants are cuda.h's, and the
 * declarations below are checked against it by the compiler: each
 * prototype redeclares cuda.h's (a conflict does not compile), and
 * cudadrv.c holds every constant and type size of the fallback to cuda.h's
 * with _Static_assert. Without it, the fallback below stands in for the
 * types and constants, with the values and layouts the CUDA Driver API
 * reference gives them.
 *
 * SR_CUDA_FNS lists each function by the name programs call (cuMemAlloc)
 * and the symbol the driver exports for it (cuMemAlloc_v2: the names
 * cuda.h maps the API to, without per-thread default streams), with its
 * parameters.
 */
#ifndef SR_CUDAAPI_H
#define SR_CUDAAPI_H

#include <stddef.h>

#ifdef HAVE_CUDA
#include <cuda.h>
#else
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef int CUdevice_attribute;
typedef int CUpointer_attribute;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
#endif

/* The constants used, and their values (cudadrv.c checks them against
 * cuda.h's where it is). */
#define SR_CUDA_CONSTS(X) \
	X(CUDA_SUCCESS, 0) X(CUDA_ERROR_INVALID_VALUE, 1) X(CUDA_ERROR_OUT_OF_MEMORY, 2) \
	X(CUDA_ERROR_NOT_INITIALIZED, 3) X(CUDA_ERROR_STUB_LIBRARY, 34) \
	X(CUDA_ERROR_NO_DEVICE, 100) X(CUDA_ERROR_INVALID_DEVICE, 101) \
	X(CUDA_ERROR_INVALID_IMAGE, 200) X(CUDA_ERROR_INVALID_CONTEXT, 201) \
	X(CUDA_ERROR_INVALID_HANDLE, 400) X(CUDA_ERROR_NOT_FOUND, 500) \
	X(CUDA_ERROR_NOT_READY, 600) X(CUDA_ERROR_ILLEGAL_ADDRESS, 700) \
	X(CUDA_ERROR_LAUNCH_FAILED, 719) X(CUDA_ERROR_UNKNOWN, 999) \
	X(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 16) \
	X(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 75) \
	X(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 76) \
	X(CU_POINTER_ATTRIBUTE_MEMORY_TYPE, 2) X(CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, 9) \
	X(CU_MEMORYTYPE_HOST, 1) X(CU_MEMORYTYPE_DEVICE, 2) \
	X(CU_MEMHOSTALLOC_PORTABLE, 1) X(CU_STREAM_NON_BLOCKING, 1) X(CU_EVENT_DEFAULT, 0) \
	X(CU_LAUNCH_PARAM_END_AS_INT, 0) X(CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT, 1) \
	X(CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT, 2)

#ifndef HAVE_CUDA
#define SR_CUDA_ENUM(name, value) name = value,
enum { SR_CUDA_CONSTS(SR_CUDA_ENUM) };
#undef SR_CUDA_ENUM
/* The CUDA version whose symbol names SR_CUDA_FNS takes (cuda.h's
 * CUDA_VERSION, for the loader's messages). */
#define CUDA_VERSION 13000
#endif

#define SR_CUDA_FNS(X) \
	X(cuInit, cuInit, (unsigned int flags)) \
	X(cuDriverGetVersion, cuDriverGetVersion, (int *version)) \
	X(cuDeviceGetCount, cuDeviceGetCount, (int *count)) \
	X(cuDeviceGet, cuDeviceGet, (CUdevice *device, int ordinal)) \
	X(cuDeviceGetName, cuDeviceGetName, (char *name, int len, CUdevice dev)) \
	X(cuDeviceGetAttribute, cuDeviceGetAttribute, (int *value, CUdevice_attribute attrib, \
	    CUdevice dev)) \
	X(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, (CUcontext *ctx, CUdevice dev)) \
	X(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2, (CUdevice dev)) \
	X(cuCtxSetCurrent, cuCtxSetCurrent, (CUcontext ctx)) \
	X(cuCtxPushCurrent, cuCtxPushCurrent_v2, (CUcontext ctx)) \
	X(cuCtxPopCurrent, cuCtxPopCurrent_v2, (CUcontext *ctx)) \
	X(cuCtxSynchronize, cuCtxSynchronize, (void)) \
	X(cuModuleLoadData, cuModuleLoadData, (CUmodule *module, const void *image)) \
	X(cuModuleUnload, cuModuleUnload, (CUmodule module)) \
	X(cuModuleGetFunction, cuModuleGetFunction, (CUfunction *fn, CUmodule module, \
	    const char *name)) \
	X(cuLaunchKernel, cuLaunchKernel, (CUfunction fn, unsigned int gx, unsigned int gy, \
	    unsigned int gz, unsigned int bx, unsigned int by, unsigned int bz, \
	    unsigned int shared_bytes, CUstream stream, void **params, void **extra)) \
	X(cuMemAlloc, cuMemAlloc_v2, (CUdeviceptr *dptr, size_t bytes)) \
	X(cuMemFree, cuMemFree_v2, (CUdeviceptr dptr)) \
	X(cuMemGetAddressRange, cuMemGetAddressRange_v2, (CUdeviceptr *base, size_t *size, \
	    CUdeviceptr dptr)) \
	X(cuMemHostAlloc, cuMemHostAlloc, (void **p, size_t bytes, unsigned int flags)) \
	X(cuMemFreeHost, cuMemFreeHost, (void *p)) \
	X(cuPointerGetAttribute, cuPointerGetAttribute, (void *data, CUpointer_attribute attrib, \
	    CUdeviceptr ptr)) \
	X(cuMemcpyHtoD, cuMemcpyHtoD_v2, (CUdeviceptr dst, const void *src, size_t bytes)) \
	X(cuMemcpyDtoH, cuMemcpyDtoH_v2, (void *dst, CUdeviceptr src, size_t bytes)) \
	X(cuMemcpyDtoD, cuMemcpyDtoD_v2, (CUdeviceptr dst, CUdeviceptr src, size_t bytes)) \
	X(cuMemcpyHtoDAsync, cuMemcpyHtoDAsync_v2, (CUdeviceptr dst, const void *src, \
	    size_t bytes, CUstream stream)) \
	X(cuMemcpyDtoHAsync, cuMemcpyDtoHAsync_v2, (void *dst, CUdeviceptr src, size_t bytes, \
	    CUstream stream)) \
	X(cuMemcpyDtoDAsync, cuMemcpyDtoDAsync_v2, (CUdeviceptr dst, CUdeviceptr src, \
	    size_t bytes, CUstream stream)) \
	X(cuMemsetD8, cuMemsetD8_v2, (CUdeviceptr dst, unsigned char value, size_t n)) \
	X(cuStreamCreate, cuStreamCreate, (CUstream *stream, unsigned int flags)) \
	X(cuStreamDestroy, cuStreamDestroy_v2, (CUstream stream)) \
	X(cuStreamSynchronize, cuStreamSynchronize, (CUstream stream)) \
	X(cuEventCreate, cuEventCreate, (CUevent *event, unsigned int flags)) \
	X(cuEventRecord, cuEventRecord, (CUevent event, CUstream stream)) \
	X(cuEventSynchronize, cuEventSynchronize, (CUevent event)) \
	X(cuEventElapsedTime, cuEventElapsedTime_v2, (float *ms, CUevent start, CUevent end)) \
	X(cuEventDestroy, cuEventDestroy_v2, (CUevent event)) \
	X(cuGetErrorName, cuGetErrorName, (CUresult error, const char **name)) \
	X(cuGetErrorString, cuGetErrorString, (CUresult error, const char **text))

/* The prototypes, by the exported symbols. */
#define SR_CUDA_DECLARE(name, sym, params) CUresult sym params;
SR_CUDA_FNS(SR_CUDA_DECLARE)
#undef SR_CUDA_DECLARE

#endif
