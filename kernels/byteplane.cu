/*
 * byteplane.cu: the byte-plane split and join of byteplane.h on device
 * memory, so that library-mode checkpoints can split floats on the GPU
 * before the copy to pinned host memory. byteplane.c is the reference
 * twin; tests/t-byteplane-cuda.c compares the two.
 *
 * Widths 2 and 4 take a vector path when the pointers are aligned and the
 * plane length is a multiple of 4: each thread reads 4 elements in one load
 * and writes one 32-bit word per plane, the bytes rearranged with
 * __byte_perm (a 4x4 byte transpose for width 4, which is its own
 * inverse). Everything else, and the leftover elements, take the generic
 * kernel: one element per thread, byte loads, coalesced plane stores. The
 * n % width tail is a device-to-device copy.
 */
#include "config.h"

#include <cuda_runtime.h>
#include <stdint.h>

extern "C" {
#include "byteplane.h"
#include "util.h"
}

#define THREADS 256
#define MAX_BLOCKS 8192		/* grid-stride loops cover the rest */

static unsigned
blocks_for(size_t work)
{
	size_t b = (work + THREADS - 1) / THREADS;

	return b == 0 ? 1 : b > MAX_BLOCKS ? MAX_BLOCKS : (unsigned)b;
}

/* Elements [from, m): one per thread. join != 0 runs the inverse. */
__global__ void
bp_generic(const uint8_t *__restrict__ src, size_t from, size_t m, unsigned w,
    uint8_t *__restrict__ dst, int join)
{
	size_t i = from + blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	size_t step = (size_t)gridDim.x * blockDim.x;

	for (; i < m; i += step) {
		for (unsigned k = 0; k < w; k++) {
			if (join)
				dst[i * w + k] = src[k * m + i];
			else
				dst[k * m + i] = src[i * w + k];
		}
	}
}

/* 4x4 byte transpose of the words a, b, c, d (4 elements of 4 bytes). */
__device__ __forceinline__ void
transpose4(uint32_t a, uint32_t b, uint32_t c, uint32_t d, uint32_t *o)
{
	uint32_t ab_lo = __byte_perm(a, b, 0x5140), cd_lo = __byte_perm(c, d, 0x5140);
	uint32_t ab_hi = __byte_perm(a, b, 0x7362), cd_hi = __byte_perm(c, d, 0x7362);

	o[0] = __byte_perm(ab_lo, cd_lo, 0x5410);
	o[1] = __byte_perm(ab_lo, cd_lo, 0x7632);
	o[2] = __byte_perm(ab_hi, cd_hi, 0x5410);
	o[3] = __byte_perm(ab_hi, cd_hi, 0x7632);
}

/* Width 4, m % 4 == 0: thread t handles elements 4t..4t+3. */
__global__ void
bp_split4(const uint4 *__restrict__ src, size_t q, uint32_t *__restrict__ dst)
{
	size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	size_t step = (size_t)gridDim.x * blockDim.x;

	for (; t < q; t += step) {
		uint4 v = src[t];
		uint32_t o[4];

		transpose4(v.x, v.y, v.z, v.w, o);
		dst[t] = o[0];
		dst[q + t] = o[1];
		dst[2 * q + t] = o[2];
		dst[3 * q + t] = o[3];
	}
}

__global__ void
bp_join4(const uint32_t *__restrict__ src, size_t q, uint4 *__restrict__ dst)
{
	size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	size_t step = (size_t)gridDim.x * blockDim.x;

	for (; t < q; t += step) {
		uint32_t o[4];

		transpose4(src[t], src[q + t], src[2 * q + t], src[3 * q + t], o);
		dst[t] = make_uint4(o[0], o[1], o[2], o[3]);
	}
}

/* Width 2, m % 4 == 0: thread t handles elements 4t..4t+3 (8 bytes). */
__global__ void
bp_split2(const uint2 *__restrict__ src, size_t q, uint32_t *__restrict__ dst)
{
	size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	size_t step = (size_t)gridDim.x * blockDim.x;

	for (; t < q; t += step) {
		uint2 v = src[t];

		dst[t] = __byte_perm(v.x, v.y, 0x6420);
		dst[q + t] = __byte_perm(v.x, v.y, 0x7531);
	}
}

__global__ void
bp_join2(const uint32_t *__restrict__ src, size_t q, uint2 *__restrict__ dst)
{
	size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	size_t step = (size_t)gridDim.x * blockDim.x;

	for (; t < q; t += step) {
		uint32_t lo = src[t], hi = src[q + t];

		dst[t] = make_uint2(__byte_perm(lo, hi, 0x5140), __byte_perm(lo, hi, 0x7362));
	}
}

static int
cuda_fail(char *err, const char *verb, cudaError_t e)
{
	return sr_err(err, "%s on device: %s", verb, cudaGetErrorString(e));
}

static int
run(const void *dsrc, size_t n, unsigned w, void *ddst, int join, cudaStream_t stream,
    char *err)
{
	const char *verb = join ? "byteplane join" : "byteplane split";
	const uint8_t *s = (const uint8_t *)dsrc;
	uint8_t *d = (uint8_t *)ddst;
	size_t m, body, from = 0;
	uintptr_t in_align, out_align;
	cudaError_t e;

	if (w < 1 || w > 16)
		return sr_err(err, "%s: width %u out of range 1..16", verb, w);
	if (n == 0)
		return 0;
	m = n / w;
	body = m * w;
	if (w == 1)
		body = 0;	/* all of it is "tail": a copy */
	/* the element side needs 16 (width 4) or 8 (width 2) byte alignment,
	 * the plane side 4 bytes for every plane: m % 4 == 0 */
	in_align = (uintptr_t)(join ? d : s);
	out_align = (uintptr_t)(join ? s : d);
	if ((w == 2 || w == 4) && m % 4 == 0 && in_align % (w * 4) == 0 && out_align % 4 == 0) {
		size_t q = m / 4;

		if (q > 0) {
			if (w == 4 && !join)
				bp_split4<<<blocks_for(q), THREADS, 0, stream>>>(
				    (const uint4 *)s, q, (uint32_t *)d);
			else if (w == 4)
				bp_join4<<<blocks_for(q), THREADS, 0, stream>>>(
				    (const uint32_t *)s, q, (uint4 *)d);
			else if (!join)
				bp_split2<<<blocks_for(q), THREADS, 0, stream>>>(
				    (const uint2 *)s, q, (uint32_t *)d);
			else
				bp_join2<<<blocks_for(q), THREADS, 0, stream>>>(
				    (const uint32_t *)s, q, (uint2 *)d);
		}
		from = m;
	}
	if (w > 1 && from < m)
		bp_generic<<<blocks_for(m - from), THREADS, 0, stream>>>(s, from, m, w, d, join);
	if ((e = cudaGetLastError()) != cudaSuccess)
		return cuda_fail(err, verb, e);
	if (n > body && (e = cudaMemcpyAsync(d + body, s + body, n - body,
	    cudaMemcpyDeviceToDevice, stream)) != cudaSuccess)
		return cuda_fail(err, verb, e);
	return 0;
}

static int
run_sync(const void *dsrc, size_t n, unsigned w, void *ddst, int join, char *err)
{
	cudaError_t e;

	if (run(dsrc, n, w, ddst, join, 0, err) == -1)
		return -1;
	if ((e = cudaStreamSynchronize(0)) != cudaSuccess)
		return cuda_fail(err, join ? "byteplane join" : "byteplane split", e);
	return 0;
}

extern "C" int
sr_byteplane_split_cuda(const void *dsrc, size_t n, unsigned width, void *ddst, char *err)
{
	return run_sync(dsrc, n, width, ddst, 0, err);
}

extern "C" int
sr_byteplane_join_cuda(const void *dsrc, size_t n, unsigned width, void *ddst, char *err)
{
	return run_sync(dsrc, n, width, ddst, 1, err);
}

extern "C" int
sr_byteplane_split_cuda_async(const void *dsrc, size_t n, unsigned width, void *ddst,
    void *stream, char *err)
{
	return run(dsrc, n, width, ddst, 0, (cudaStream_t)stream, err);
}

extern "C" int
sr_byteplane_join_cuda_async(const void *dsrc, size_t n, unsigned width, void *ddst,
    void *stream, char *err)
{
	return run(dsrc, n, width, ddst, 1, (cudaStream_t)stream, err);
}
