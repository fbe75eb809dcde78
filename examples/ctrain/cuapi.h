/*
 * cuapi.h: the few CUDA driver API functions ctrain's device path takes
 * from the driver at run time (device.c dlopens libcuda.so.1), declared so
 * that ctrain builds with and without the CUDA toolkit. With the toolkit
 * (CT_CUDA_H: the build found cuda.h) the types and constants are cuda.h's:
 * each prototype below redeclares cuda.h's (a conflict does not compile)
 * and device.c holds the constants and the symbol names to cuda.h's with
 * _Static_assert. Without it, the fallback stands in, with the values the
 * CUDA Driver API reference gives. CT_CU_FNS: the name programs call, the
 * symbol the driver exports for it (cuda.h's mapping), the parameters.
 */
#ifndef CT_CUAPI_H
#define CT_CUAPI_H

#include <stddef.h>

#ifdef CT_CUDA_H
#include <cuda.h>
#else
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
#endif

#define CT_CU_CONSTS(X) \
	X(CUDA_SUCCESS, 0) X(CUDA_ERROR_STUB_LIBRARY, 34) X(CUDA_ERROR_NO_DEVICE, 100) \
	X(CU_LAUNCH_PARAM_END_AS_INT, 0) X(CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT, 1) \
	X(CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT, 2)

#ifndef CT_CUDA_H
#define CT_CU_ENUM(name, value) name = value,
enum { CT_CU_CONSTS(CT_CU_ENUM) };
#undef CT_CU_ENUM
#endif

#define CT_CU_FNS(X) \
	X(cuInit, cuInit, (unsigned int flags)) \
	X(cuDeviceGetCount, cuDeviceGetCount, (int *count)) \
	X(cuDeviceGet, cuDeviceGet, (CUdevice *device, int ordinal)) \
	X(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, (CUcontext *ctx, CUdevice dev)) \
	X(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2, (CUdevice dev)) \
	X(cuCtxSetCurrent, cuCtxSetCurrent, (CUcontext ctx)) \
	X(cuModuleLoadData, cuModuleLoadData, (CUmodule *module, const void *image)) \
	X(cuModuleUnload, cuModuleUnload, (CUmodule module)) \
	X(cuModuleGetFunction, cuModuleGetFunction, (CUfunction *fn, CUmodule module, \
	    const char *name)) \
	X(cuLaunchKernel, cuLaunchKernel, (CUfunction fn, unsigned int gx, unsigned int gy, \
	    unsigned int gz, unsigned int bx, unsigned int by, unsigned int bz, \
	    unsigned int shared_bytes, CUstream stream, void **params, void **extra)) \
	X(cuMemAlloc, cuMemAlloc_v2, (CUdeviceptr *dptr, size_t bytes)) \
	X(cuMemFree, cuMemFree_v2, (CUdeviceptr dptr)) \
	X(cuMemcpyHtoD, cuMemcpyHtoD_v2, (CUdeviceptr dst, const void *src, size_t bytes)) \
	X(cuMemcpyDtoH, cuMemcpyDtoH_v2, (void *dst, CUdeviceptr src, size_t bytes)) \
	X(cuMemsetD8, cuMemsetD8_v2, (CUdeviceptr dst, unsigned char value, size_t n)) \
	X(cuStreamCreate, cuStreamCreate, (CUstream *stream, unsigned int flags)) \
	X(cuStreamDestroy, cuStreamDestroy_v2, (CUstream stream)) \
	X(cuStreamSynchronize, cuStreamSynchronize, (CUstream stream)) \
	X(cuGetErrorName, cuGetErrorName, (CUresult error, const char **name))

#define CT_CU_DECLARE(name, sym, params) CUresult sym params;
CT_CU_FNS(CT_CU_DECLARE)
#undef CT_CU_DECLARE

#endif
