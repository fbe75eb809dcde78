/*
 * bench-gpu.c: throughput of the CUDA kernels against the machine's own
 * ceilings, measured in the same run: a device-to-device cudaMemcpy (the
 * HBM bandwidth a kernel can reach, bytes read plus bytes written) and
 * pinned host<->device copies (what a snapshot off the GPU can reach). Not a
 * test: tests/gpu/run.sh runs it and the figures go to doc/benchmarks.md.
 * First, on any machine, the CPU twins on one core (64 MiB, best of 5): the
 * byte planes and the chunk sum, with XXH3-128 of the whole buffer for
 * comparison. Without a GPU it then says so in one line and exits 0.
 *
 *   bench-gpu [-s MiB] [-r reps]    (default 2048 MiB, 20 repetitions)
 *
 * Each figure is the median of the repetitions, timed with CUDA events,
 * after one warm-up; the data is random (never zeros). Targets (issue 13):
 * the byte-plane and chunk-sum kernels at >= 80% of the measured HBM rate.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "byteplane.h"
#include "chunksum.h"
#include "cudadrv.h"
#include "util.h"

struct ctx {
	struct sr_cuda *cu;
	CUdeviceptr a, b, scratch, sums;
	void *pinned;
	size_t n;
	int reps;
	CUevent t0, t1;
};

enum op { OP_D2D, OP_H2D, OP_D2H, OP_SPLIT2, OP_JOIN2, OP_SPLIT4, OP_JOIN4, OP_SUM4M,
	OP_SUM16M, OP_SUM64M };

static int
cmp_float(const void *x, const void *y)
{
	float a = *(const float *)x, b = *(const float *)y;

	return a < b ? -1 : a > b;
}

static int
issue(struct ctx *c, enum op op, char *err)
{
	struct sr_cuda *cu = c->cu;
	static const size_t chunk[] = { 4 << 20, 16 << 20, 64 << 20 };

	switch (op) {
	case OP_D2D:
		return sr_cuda_check(cu, cu->api.cuMemcpyDtoDAsync(c->b, c->a, c->n, NULL), "D2D", err);
	case OP_H2D:
		return sr_cuda_check(cu, cu->api.cuMemcpyHtoDAsync(c->a, c->pinned, c->n, NULL),
		    "H2D", err);
	case OP_D2H:
		return sr_cuda_check(cu, cu->api.cuMemcpyDtoHAsync(c->pinned, c->a, c->n, NULL),
		    "D2H", err);
	case OP_SPLIT2:
		return sr_byteplane_split_cuda(cu, c->a, c->n, 2, c->b, NULL, err);
	case OP_JOIN2:
		return sr_byteplane_join_cuda(cu, c->b, c->n, 2, c->a, NULL, err);
	case OP_SPLIT4:
		return sr_byteplane_split_cuda(cu, c->a, c->n, 4, c->b, NULL, err);
	case OP_JOIN4:
		return sr_byteplane_join_cuda(cu, c->b, c->n, 4, c->a, NULL, err);
	case OP_SUM4M:
	case OP_SUM16M:
	case OP_SUM64M:
		return sr_chunksum_cuda(cu, c->a, c->n, chunk[op - OP_SUM4M], c->scratch, c->sums,
		    NULL, err);
	}
	return sr_err(err, "unknown operation");
}

/* Median milliseconds of op over the repetitions, after a warm-up; -1 on error. */
static float
time_op(struct ctx *c, enum op op, char *err)
{
	struct sr_cuda *cu = c->cu;
	float *ms = sr_calloc((size_t)c->reps, sizeof *ms), med;
	int r;

	if (issue(c, op, err) == -1 ||
	    sr_cuda_check(cu, cu->api.cuCtxSynchronize(), "warm-up", err) == -1)
		goto fail;
	for (r = 0; r < c->reps; r++) {
		if (sr_cuda_check(cu, cu->api.cuEventRecord(c->t0, NULL), "event", err) == -1 ||
		    issue(c, op, err) == -1 ||
		    sr_cuda_check(cu, cu->api.cuEventRecord(c->t1, NULL), "event", err) == -1 ||
		    sr_cuda_check(cu, cu->api.cuEventSynchronize(c->t1), "run", err) == -1 ||
		    sr_cuda_check(cu, cu->api.cuEventElapsedTime(&ms[r], c->t0, c->t1), "elapsed",
		    err) == -1)
			goto fail;
	}
	qsort(ms, (size_t)c->reps, sizeof *ms, cmp_float);
	med = ms[c->reps / 2];
	free(ms);
	return med;
fail:
	free(ms);
	return -1;
}

/* The CPU twins on one core, n bytes of random data, best of 5. */
static void
cpu_twins(size_t n)
{
	uint8_t *a = sr_malloc(n), *b = sr_malloc(n), *sums = sr_malloc(16 * (n / (16 << 20) + 1));
	uint64_t seed = 0x243f6a8885a308d3ULL;
	double best[6] = { 1e9, 1e9, 1e9, 1e9, 1e9, 1e9 }, t;
	static const char *const name[6] = { "byteplane split, width 2", "byteplane join, width 2",
		"byteplane split, width 4", "byteplane join, width 4", "chunk sum, 16 MiB chunks",
		"XXH3-128 of the whole buffer" };
	size_t i;
	int r, k;

	for (i = 0; i + 8 <= n; i += 8) {
		seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
		memcpy(a + i, &seed, 8);
	}
	for (r = 0; r < 5; r++)
		for (k = 0; k < 6; k++) {
			t = sr_mono();
			switch (k) {
			case 0: sr_byteplane_split(a, n, 2, b); break;
			case 1: sr_byteplane_join(b, n, 2, a); break;
			case 2: sr_byteplane_split(a, n, 4, b); break;
			case 3: sr_byteplane_join(b, n, 4, a); break;
			case 4: sr_chunksum_chunks(a, n, 16 << 20, sums); break;
			default: XXH3_128bits(a, n); break;
			}
			t = sr_mono() - t;
			if (t < best[k])
				best[k] = t;
		}
	printf("bench-gpu: the CPU twins, one core, %zu MiB, best of 5\n", n >> 20);
	for (k = 0; k < 6; k++)
		printf("  %-28s %8.2f ms %8.1f GB/s\n", name[k], best[k] * 1e3, n / best[k] / 1e9);
	free(a);
	free(b);
	free(sums);
}

int
main(int argc, char **argv)
{
	static const struct { enum op op; const char *name; int rw; } ops[] = {
		{ OP_SPLIT2, "byteplane split, width 2", 2 },
		{ OP_JOIN2, "byteplane join, width 2", 2 },
		{ OP_SPLIT4, "byteplane split, width 4", 2 },
		{ OP_JOIN4, "byteplane join, width 4", 2 },
		{ OP_SUM4M, "chunk sum, 4 MiB chunks", 1 },
		{ OP_SUM16M, "chunk sum, 16 MiB chunks", 1 },
		{ OP_SUM64M, "chunk sum, 64 MiB chunks", 1 },
	};
	struct ctx c = { .n = (size_t)2048 << 20, .reps = 20 };
	char err[SR_ERRMAX];
	uint64_t seed = 0x9e3779b97f4a7c15ULL, *p;
	float d2d, h2d, d2h, ms;
	double hbm;
	size_t i;
	int opt, met = 1;

	while ((opt = getopt(argc, argv, "s:r:")) != -1) {
		if (opt == 's')
			c.n = (size_t)atol(optarg) << 20;
		else if (opt == 'r')
			c.reps = atoi(optarg);
		else
			return fprintf(stderr, "usage: bench-gpu [-s MiB] [-r reps]\n"), 64;
	}
	if (c.n == 0 || c.reps < 1)
		return fprintf(stderr, "bench-gpu: -s and -r must be positive\n"), 64;
	cpu_twins((size_t)64 << 20);
	if ((c.cu = sr_cuda_open(NULL, 0, err)) == NULL) {
		printf("bench-gpu: skipped: no GPU here (%s)\n", err);
		return 0;
	}
	struct sr_cuda *cu = c.cu;
	if (sr_cuda_bind(cu, err) == -1 ||
	    sr_cuda_check(cu, cu->api.cuMemAlloc(&c.a, c.n), "allocate", err) == -1 ||
	    sr_cuda_check(cu, cu->api.cuMemAlloc(&c.b, c.n), "allocate", err) == -1 ||
	    sr_cuda_check(cu, cu->api.cuMemAlloc(&c.scratch, sr_chunksum_cuda_scratch(c.n,
	    4 << 20)), "allocate", err) == -1 ||
	    sr_cuda_check(cu, cu->api.cuMemAlloc(&c.sums, 16 * (c.n / (4 << 20) + 1)), "allocate",
	    err) == -1 ||
	    sr_cuda_check(cu, cu->api.cuMemHostAlloc(&c.pinned, c.n, 0), "pin host memory",
	    err) == -1 ||
	    sr_cuda_check(cu, cu->api.cuEventCreate(&c.t0, CU_EVENT_DEFAULT), "event", err) == -1 ||
	    sr_cuda_check(cu, cu->api.cuEventCreate(&c.t1, CU_EVENT_DEFAULT), "event", err) == -1)
		goto fail;
	for (p = c.pinned; (uint8_t *)(p + 1) <= (uint8_t *)c.pinned + c.n; p++) {
		seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
		*p = seed;
	}
	printf("bench-gpu: %s (compute %d.%d, %d SMs, driver %d), %zu MiB, median of %d\n",
	    cu->name, cu->cc_major, cu->cc_minor, cu->sms, cu->driver, c.n >> 20, c.reps);
	if ((h2d = time_op(&c, OP_H2D, err)) < 0 || (d2h = time_op(&c, OP_D2H, err)) < 0 ||
	    (d2d = time_op(&c, OP_D2D, err)) < 0)
		goto fail;
	hbm = 2.0 * c.n / (d2d / 1e3) / 1e9;
	printf("  %-28s %8.3f ms %8.1f GB/s (pinned host to device)\n", "copy H2D", h2d,
	    c.n / (h2d / 1e3) / 1e9);
	printf("  %-28s %8.3f ms %8.1f GB/s (device to pinned host)\n", "copy D2H", d2h,
	    c.n / (d2h / 1e3) / 1e9);
	printf("  %-28s %8.3f ms %8.1f GB/s (read + write): the HBM ceiling\n", "copy D2D", d2d,
	    hbm);
	for (i = 0; i < SR_ARRAY_LEN(ops); i++) {
		double gbs;

		if ((ms = time_op(&c, ops[i].op, err)) < 0)
			goto fail;
		gbs = (double)ops[i].rw * c.n / (ms / 1e3) / 1e9;
		printf("  %-28s %8.3f ms %8.1f GB/s (%s) = %5.1f%% of D2D%s\n", ops[i].name, ms, gbs,
		    ops[i].rw == 2 ? "read + write" : "read", 100 * gbs / hbm,
		    gbs >= 0.8 * hbm ? "" : "  (target 80%: NOT MET)");
		if (gbs < 0.8 * hbm)
			met = 0;
	}
	printf("bench-gpu: target >= 80%% of D2D for every kernel: %s\n", met ? "met" : "NOT MET");
	sr_cuda_close(cu);
	return met ? 0 : 1;
fail:
	fprintf(stderr, "bench-gpu: %s\n", err);
	return 1;
}
