/*
 * chunksum.cu: the chunk sum (chunksum.h) of every chunk of a device buffer.
 * Device code only, built into a fat binary that sr_cuda_open loads
 * (cudadrv.c) and launched by chunksum-cuda.c; the arithmetic is cs-lanes.h,
 * which the tests also run on the host against libxxhash.
 *
 * Two launches. sr_cs_leaves: a group of four threads per leaf (16 KiB),
 * each reading 16 bytes of every 64-byte stripe, so a warp's load covers
 * eight leaves' stripes in full 32-byte sectors; the group's four partial
 * merges are added with two shuffles and the digest written to the chunk's
 * slot of the scratch buffer, which also gets the chunk's length words and
 * padding (from the group of its first leaf). sr_cs_roots: a group per
 * chunk hashes its slot. The secret's words live in shared memory, and each
 * thread keeps the 18 it uses in registers.
 */
#include "cs-lanes.h"

__constant__ uint8_t cs_secret[192] = CS_SECRET_BYTES;

#define CS_THREADS 256

/* The block's copy of the key words. */
static __device__ __forceinline__ void
cs_keys_load(struct cs_keys *K)
{
	if (threadIdx.x < sizeof *K / 8)
		((uint64_t *)K)[threadIdx.x] = cs_key_word(cs_secret, threadIdx.x);
	__syncthreads();
}

/* Thread q's merge terms added over its group of four; out to thread 0. */
static __device__ __forceinline__ void
cs_group_final(const uint64_t acc[2], unsigned q, const struct cs_keys *K, size_t len,
    uint8_t *out)
{
	unsigned mask = 0xfu << (threadIdx.x & 28);
	uint64_t lo, hi;

	cs_terms(acc, q, K, &lo, &hi);
	lo += __shfl_xor_sync(mask, lo, 1);
	hi += __shfl_xor_sync(mask, hi, 1);
	lo += __shfl_xor_sync(mask, lo, 2);
	hi += __shfl_xor_sync(mask, hi, 2);
	if (q == 0)
		cs_final(lo, hi, len, out);
}

extern "C" __global__ void __launch_bounds__(CS_THREADS, 2)
sr_cs_leaves(const uint8_t *__restrict__ buf, size_t n, size_t chunk, size_t slot,
    uint8_t *__restrict__ scratch)
{
	__shared__ struct cs_keys K;
	size_t kc = cs_leaves_in(chunk), total = cs_chunks(n, chunk) * kc;
	size_t step = (size_t)gridDim.x * blockDim.x / 4, g;
	unsigned q = threadIdx.x & 3;

	cs_keys_load(&K);
	for (g = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 4; g < total; g += step) {
		struct cs_leaf L;
		uint64_t acc[2];

		if (!cs_leaf_at(g, n, chunk, kc, &L))
			continue;	/* past the last chunk's leaves: the whole group */
		cs_lanes(buf + L.off, L.hashed, L.len, q, &K, acc);
		cs_group_final(acc, q, &K, L.hashed, scratch + L.chunk * slot + 16 * L.index);
		if (L.index == 0 && q == 1)
			cs_trailer(scratch + L.chunk * slot, L.chunk_len);
	}
}

extern "C" __global__ void __launch_bounds__(CS_THREADS, 2)
sr_cs_roots(const uint8_t *__restrict__ scratch, size_t n, size_t chunk, size_t slot,
    uint8_t *__restrict__ out)
{
	__shared__ struct cs_keys K;
	size_t nc = cs_chunks(n, chunk), step = (size_t)gridDim.x * blockDim.x / 4, c;
	unsigned q = threadIdx.x & 3;

	cs_keys_load(&K);
	for (c = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 4; c < nc; c += step) {
		size_t clen = n - c * chunk < chunk ? n - c * chunk : chunk;
		size_t rlen = cs_rootlen(clen);
		uint64_t acc[2];

		cs_lanes(scratch + c * slot, rlen, rlen, q, &K, acc);
		cs_group_final(acc, q, &K, rlen, out + 16 * c);
	}
}
