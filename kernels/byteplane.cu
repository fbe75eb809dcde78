/*
 * byteplane.cu: the byte-plane split and join of byteplane.h on device
 * memory, so that library-mode checkpoints split floats on the GPU before
 * the copy to pinned host memory. Device code only: it is built into a fat
 * binary that sr_cuda_open loads (cudadrv.c), and launched by byteplane-cuda.c.
 * The kernels' bodies are bp-tile.h, which the tests also run on the host
 * against the CPU twin (byteplane.c).
 *
 * Widths 2 and 4: a persistent grid walks the tiles (16-byte coalesced
 * loads, the transposition through shared memory, 16-byte coalesced
 * stores); its last block then moves what is left past the last whole tile
 * and the n % width tail. Other widths: one element per thread, byte by
 * byte (no float format of those widths is split in practice).
 */
#include "bp-tile.h"

extern "C" __global__ void __launch_bounds__(BP_THREADS)
sr_bp_split(const uint8_t *__restrict__ src, size_t n, unsigned w, uint8_t *__restrict__ dst)
{
	__shared__ __align__(16) uint32_t sm[BP_SMEM_WORDS];
	size_t m = n / w, tiles = bp_tiles(m, w), tile;

	for (tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
		bp_split_in(src, tile, w, threadIdx.x, sm);
		__syncthreads();
		bp_split_out(sm, tile, m, w, threadIdx.x, dst);
		__syncthreads();
	}
	if (blockIdx.x == gridDim.x - 1)
		bp_rest(src, n, w, tiles * (BP_TILE / w), threadIdx.x, blockDim.x, dst, 0);
}

extern "C" __global__ void __launch_bounds__(BP_THREADS)
sr_bp_join(const uint8_t *__restrict__ src, size_t n, unsigned w, uint8_t *__restrict__ dst)
{
	__shared__ __align__(16) uint32_t sm[BP_SMEM_WORDS];
	size_t m = n / w, tiles = bp_tiles(m, w), tile;

	for (tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
		bp_join_in(src, tile, m, w, threadIdx.x, sm);
		__syncthreads();
		bp_join_out(sm, tile, w, threadIdx.x, dst);
		__syncthreads();
	}
	if (blockIdx.x == gridDim.x - 1)
		bp_rest(src, n, w, tiles * (BP_TILE / w), threadIdx.x, blockDim.x, dst, 1);
}

extern "C" __global__ void
sr_bp_generic(const uint8_t *__restrict__ src, size_t n, unsigned w, uint8_t *__restrict__ dst,
    int join)
{
	bp_rest(src, n, w, 0, blockIdx.x * (size_t)blockDim.x + threadIdx.x,
	    (size_t)gridDim.x * blockDim.x, dst, join);
}
