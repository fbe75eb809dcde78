/*
 * ncclapi.h: the NCCL functions ctrain's device path takes from libnccl
 * at run time (comm.c dlopens libnccl.so.2), declared so that ctrain
 * builds with and without NCCL's header; tests/fake-nccl.c implements
 * them. With nccl.h (CT_CUDA_H and the header found) the types and
 * constants are nccl.h's, each prototype below redeclares nccl.h's (a
 * conflict does not compile) and comm.c holds the constants and sizes to
 * nccl.h's with _Static_assert; without it the fallback stands in, with
 * the values NCCL's documentation gives. CT_NCCL_FNS: name, parameters.
 */
#ifndef CT_NCCLAPI_H
#define CT_NCCLAPI_H

#include <stddef.h>

#if defined(CT_CUDA_H) && defined(__has_include)
#if __has_include(<nccl.h>)
/* nccl.h declares a few functions with () */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nccl.h>
#pragma GCC diagnostic pop
#define CT_NCCL_H 1
#endif
#endif

#ifndef CT_NCCL_H
#define NCCL_UNIQUE_ID_BYTES 128
typedef struct { char internal[NCCL_UNIQUE_ID_BYTES]; } ncclUniqueId;
typedef struct ncclComm *ncclComm_t;
typedef int ncclResult_t;
typedef int ncclDataType_t;
typedef int ncclRedOp_t;
typedef struct CUstream_st *cudaStream_t;
#endif

#define CT_NCCL_CONSTS(X) \
	X(ncclSuccess, 0) X(ncclUnhandledCudaError, 1) X(ncclSystemError, 2) \
	X(ncclInternalError, 3) X(ncclInvalidArgument, 4) X(ncclInvalidUsage, 5) \
	X(ncclRemoteError, 6) X(ncclInProgress, 7) \
	X(ncclInt32, 2) X(ncclFloat32, 7) X(ncclSum, 0) X(ncclMax, 2)

#ifndef CT_NCCL_H
#define CT_NCCL_ENUM(name, value) name = value,
enum { CT_NCCL_CONSTS(CT_NCCL_ENUM) };
#undef CT_NCCL_ENUM
#endif

#define CT_NCCL_FNS(X) \
	X(ncclGetUniqueId, (ncclUniqueId *id)) \
	X(ncclCommInitRank, (ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)) \
	X(ncclCommAbort, (ncclComm_t comm)) \
	X(ncclCommDestroy, (ncclComm_t comm)) \
	X(ncclGroupStart, (void)) \
	X(ncclGroupEnd, (void)) \
	X(ncclBroadcast, (const void *sendbuff, void *recvbuff, size_t count, \
	    ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream)) \
	X(ncclAllReduce, (const void *sendbuff, void *recvbuff, size_t count, \
	    ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream))

#define CT_NCCL_DECLARE(name, params) ncclResult_t name params;
CT_NCCL_FNS(CT_NCCL_DECLARE)
#undef CT_NCCL_DECLARE
/* Not an ncclResult_t: declared on its own. */
const char *ncclGetErrorString(ncclResult_t result);

#endif
