/*
 * gpu.h: ctrain's GPU, through the CUDA driver loaded at run time
 * (cuapi.h): no CUDA library is linked, so the one ctrain runs on
 * machines without a GPU (--device=cpu, the default) and with one
 * (--device=cuda). ct_gpu_open dlopens the driver, makes the device's
 * primary context current on the calling thread (ctrain's only thread
 * that touches the GPU; libspotrun pushes the same context for its
 * copies), creates a stream and loads kern.cu's fat binary, which exists
 * where the build had nvcc (configure --with-cuda): without it there are
 * no kernels and ct_gpu_open says so.
 */
#ifndef CT_GPU_H
#define CT_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "kern.h"

#define CT_GPU_ERRMAX 256

/* kern.cu's fat binary, where nvcc built it (build-aux/bin-to-c). */
extern const unsigned char ct_fatbin_kern[];

struct ct_gpu;

/* Open device `ordinal` of the driver `lib` (NULL: "libcuda.so.1"): NULL
 * with err saying why not (no driver, the toolkit's stub, no device, no
 * kernels in this build, the failing call). */
struct ct_gpu *ct_gpu_open(const char *lib, int ordinal, char *err);
void ct_gpu_close(struct ct_gpu *g);
/* The devices the driver `lib` sees (0 when it does not load). */
int ct_gpu_count(const char *lib);

/* Device memory of `bytes`, zeroed: its address in *dptr. 0 or -1. */
int ct_gpu_alloc(struct ct_gpu *g, size_t bytes, uint64_t *dptr, char *err);
void ct_gpu_free(struct ct_gpu *g, uint64_t dptr);
/* Copies between the host and the device, after the stream's work
 * (the stream is a blocking one: the copies wait for it). 0 or -1. */
int ct_gpu_put(struct ct_gpu *g, uint64_t dst, const void *src, size_t bytes, char *err);
int ct_gpu_get(struct ct_gpu *g, void *dst, uint64_t src, size_t bytes, char *err);
/* Queue kernel k on the stream, one thread per output of a. 0 or -1. */
int ct_gpu_launch(struct ct_gpu *g, enum ct_kernel k, const struct ct_kargs *a, char *err);
/* Wait for the stream. 0 or -1. */
int ct_gpu_sync(struct ct_gpu *g, char *err);
/* The stream (a CUstream), for NCCL's calls. */
void *ct_gpu_stream(struct ct_gpu *g);

#endif
