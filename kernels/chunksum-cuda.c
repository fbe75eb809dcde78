/*
 * chunksum-cuda.c: the launches of the chunk-sum kernels (chunksum.cu)
 * through the driver loaded by cudadrv.c; see chunksum.h for the contract.
 * Scratch holds one slot per chunk: the chunk's leaf digests, its length
 * words and padding, which the second launch hashes.
 */
#include "config.h"

#include "chunksum.h"
#include "cs-lanes.h"
#include "cudadrv.h"
#include "util.h"

#define CS_THREADS 256u		/* as chunksum.cu */
#define CS_BLOCKS_PER_SM 8u

/* Bytes per chunk slot, 16-byte aligned. */
static size_t
slot_for(size_t chunk)
{
	return (cs_rootlen(chunk) + 15) & ~(size_t)15;
}

size_t
sr_chunksum_cuda_scratch(size_t n, size_t chunk)
{
	return chunk == 0 ? 0 : cs_chunks(n, chunk) * slot_for(chunk);
}

/* Blocks for `groups` groups of four threads, at most a full machine. */
static unsigned
grid_for(const struct sr_cuda *cu, size_t groups)
{
	size_t blocks = (groups * 4 + CS_THREADS - 1) / CS_THREADS;
	size_t most = (size_t)cu->sms * CS_BLOCKS_PER_SM;

	return blocks == 0 ? 1 : blocks > most ? (unsigned)most : (unsigned)blocks;
}

int
sr_chunksum_cuda(struct sr_cuda *cu, uint64_t dbuf, size_t n, size_t chunk,
    uint64_t dscratch, uint64_t dout, void *stream, char *err)
{
	CUdeviceptr buf = dbuf, scratch = dscratch, out = dout;
	size_t slot = slot_for(chunk);
	CUstream s = stream;
	void *leaves[] = { &buf, &n, &chunk, &slot, &scratch };
	void *roots[] = { &scratch, &n, &chunk, &slot, &out };

	if (chunk == 0)
		return sr_err(err, "chunk sum: chunks of 0 bytes");
	if (n == 0)
		return 0;
	if (!cu->kernels)
		return sr_err(err, "chunk sum: the CUDA kernels are not in this build (no nvcc)");
	if (sr_cuda_check(cu, cu->api.cuLaunchKernel(cu->fn[SR_CUFN_CS_LEAVES],
	    grid_for(cu, cs_chunks(n, chunk) * cs_leaves_in(chunk)), 1, 1, CS_THREADS, 1, 1, 0,
	    s, leaves, NULL), "chunk sum: leaves: cuLaunchKernel", err) == -1)
		return -1;
	return sr_cuda_check(cu, cu->api.cuLaunchKernel(cu->fn[SR_CUFN_CS_ROOTS],
	    grid_for(cu, cs_chunks(n, chunk)), 1, 1, CS_THREADS, 1, 1, 0, s, roots, NULL),
	    "chunk sum: roots: cuLaunchKernel", err);
}
