/*
 * byteplane-cuda.c: the launches of the byte-plane kernels (byteplane.cu)
 * through the driver loaded by cudadrv.c; see byteplane.h for the contract.
 * The tiled kernels run a persistent grid: BP_BLOCKS_PER_SM blocks per
 * multiprocessor (each has BP_THREADS threads and a tile's worth of shared
 * memory) walk the tiles, so there is one launch per call whatever its size.
 */
#include "config.h"

#include <stdio.h>

#include "bp-tile.h"
#include "byteplane.h"
#include "cudadrv.h"
#include "util.h"

#define BP_BLOCKS_PER_SM 8u

static unsigned
grid_for(const struct sr_cuda *cu, size_t blocks)
{
	size_t most = (size_t)cu->sms * BP_BLOCKS_PER_SM;

	return blocks == 0 ? 1 : blocks > most ? (unsigned)most : (unsigned)blocks;
}

static int
run(struct sr_cuda *cu, CUdeviceptr src, size_t n, unsigned w, CUdeviceptr dst, int join,
    void *stream, char *err)
{
	const char *verb = join ? "byteplane join" : "byteplane split";
	char what[64];
	CUstream s = stream;
	CUresult r;

	if (w < 1 || w > 16)
		return sr_err(err, "%s: width %u out of range 1..16", verb, w);
	if (n == 0)
		return 0;
	if (w > 1 && !cu->kernels)
		return sr_err(err, "%s: the CUDA kernels are not in this build (no nvcc)", verb);
	if (w == 1) {
		r = cu->api.cuMemcpyDtoDAsync(dst, src, n, s);
	} else if (w == 2 || w == 4) {
		void *args[] = { &src, &n, &w, &dst };

		r = cu->api.cuLaunchKernel(cu->fn[join ? SR_CUFN_BP_JOIN : SR_CUFN_BP_SPLIT],
		    grid_for(cu, bp_tiles(n / w, w)), 1, 1, BP_THREADS, 1, 1, 0, s, args, NULL);
	} else {
		void *args[] = { &src, &n, &w, &dst, &join };

		r = cu->api.cuLaunchKernel(cu->fn[SR_CUFN_BP_GENERIC],
		    grid_for(cu, (n / w + BP_THREADS - 1) / BP_THREADS), 1, 1, BP_THREADS, 1, 1, 0,
		    s, args, NULL);
	}
	snprintf(what, sizeof what, "%s: %s", verb, w == 1 ? "cuMemcpyDtoDAsync" : "cuLaunchKernel");
	return sr_cuda_check(cu, r, what, err);
}

int
sr_byteplane_split_cuda(struct sr_cuda *cu, uint64_t dsrc, size_t n, unsigned width,
    uint64_t ddst, void *stream, char *err)
{
	return run(cu, dsrc, n, width, ddst, 0, stream, err);
}

int
sr_byteplane_join_cuda(struct sr_cuda *cu, uint64_t dsrc, size_t n, unsigned width,
    uint64_t ddst, void *stream, char *err)
{
	return run(cu, dsrc, n, width, ddst, 1, stream, err);
}
