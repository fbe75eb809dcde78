/*
 * t-byteplane-cuda.c: the CUDA byte-plane kernels (kernels/byteplane.cu)
 * against their CPU twins (kernels/byteplane.c) on random data of odd and
 * even sizes, aligned and misaligned, widths 1 to 16 (2 and 4 hardest).
 * Built only with CUDA; skips when there is no device. With
 * SPOTRUN_GPU_BENCH=1 it also times split and join on device (1 GiB, best
 * of 5) and prints the rates as TAP comments.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "byteplane.h"
#include "tap.h"
#include "util.h"

static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int
check(cudaError_t e, const char *what)
{
	if (e == cudaSuccess)
		return 0;
	tap_diag("%s: %s", what, cudaGetErrorString(e));
	return -1;
}

/* Split and join n random bytes at width w, at byte offsets so and do of
 * the device buffers; 0 if the device matches the CPU both ways. */
static int
compare(size_t n, unsigned w, size_t so, size_t dofs, uint64_t *seed, uint8_t *dev_a,
    uint8_t *dev_b, uint8_t *dev_c)
{
	uint8_t *host = sr_malloc(n + 1), *want = sr_malloc(n + 1), *got = sr_malloc(n + 1);
	char err[SR_ERRMAX];
	size_t i;
	int r = -1;

	for (i = 0; i < n; i++)
		host[i] = (uint8_t)rnd(seed);
	sr_byteplane_split(host, n, w, want);
	if (check(cudaMemcpy(dev_a + so, host, n, cudaMemcpyHostToDevice), "copy in") == -1)
		goto out;
	if (sr_byteplane_split_cuda(dev_a + so, n, w, dev_b + dofs, err) == -1) {
		tap_diag("%s", err);
		goto out;
	}
	if (check(cudaMemcpy(got, dev_b + dofs, n, cudaMemcpyDeviceToHost), "copy out") == -1)
		goto out;
	if (n > 0 && memcmp(got, want, n) != 0) {
		for (i = 0; got[i] == want[i]; i++)
			;
		tap_diag("split: %zu bytes, width %u, offsets %zu/%zu: first difference at byte "
		    "%zu", n, w, so, dofs, i);
		goto out;
	}
	if (sr_byteplane_join_cuda(dev_b + dofs, n, w, dev_c + so, err) == -1) {
		tap_diag("%s", err);
		goto out;
	}
	if (check(cudaMemcpy(got, dev_c + so, n, cudaMemcpyDeviceToHost), "copy out") == -1)
		goto out;
	if (n > 0 && memcmp(got, host, n) != 0) {
		tap_diag("join: %zu bytes, width %u, offsets %zu/%zu: differs", n, w, so, dofs);
		goto out;
	}
	r = 0;
out:
	free(host);
	free(want);
	free(got);
	return r;
}

static void
bench(uint8_t *a, uint8_t *b, size_t n)
{
	static const unsigned widths[] = { 2, 4 };
	char err[SR_ERRMAX];
	cudaEvent_t t0, t1;
	size_t i;
	int r, join;

	cudaEventCreate(&t0);
	cudaEventCreate(&t1);
	cudaMemset(a, 0x3c, n);
	for (i = 0; i < SR_ARRAY_LEN(widths); i++) {
		for (join = 0; join < 2; join++) {
			float best = 1e30f, ms;

			for (r = 0; r < 5; r++) {
				cudaEventRecord(t0, 0);
				if ((join ? sr_byteplane_join_cuda(a, n, widths[i], b, err) :
				    sr_byteplane_split_cuda(a, n, widths[i], b, err)) == -1) {
					tap_diag("%s", err);
					return;
				}
				cudaEventRecord(t1, 0);
				cudaEventSynchronize(t1);
				cudaEventElapsedTime(&ms, t0, t1);
				if (ms < best)
					best = ms;
			}
			/* bytes read plus bytes written */
			tap_diag("bench: %s width %u, %zu MiB: %.3f ms, %.0f GB/s (read+write)",
			    join ? "join " : "split", widths[i], n >> 20, best,
			    2.0 * n / (best / 1e3) / 1e9);
		}
	}
	{
		float ms;
		cudaEventRecord(t0, 0);
		cudaMemcpy(b, a, n, cudaMemcpyDeviceToDevice);
		cudaEventRecord(t1, 0);
		cudaEventSynchronize(t1);
		cudaEventElapsedTime(&ms, t0, t1);
		tap_diag("bench: cudaMemcpy D2D for comparison: %.3f ms, %.0f GB/s (read+write)",
		    ms, 2.0 * n / (ms / 1e3) / 1e9);
	}
	cudaEventDestroy(t0);
	cudaEventDestroy(t1);
}

int
main(void)
{
	static const size_t sizes[] = { 0, 1, 3, 7, 16, 1000, 4097, 65536, 65537,
		(1 << 20) + 3, (1 << 20) + 6, 4 << 20, (8 << 20) + 14 };
	static const size_t offs[][2] = { { 0, 0 }, { 1, 0 }, { 0, 3 }, { 8, 4 }, { 5, 7 } };
	size_t cap = (8 << 20) + 64, i, o;
	uint8_t *a, *b, *c;
	uint64_t seed = 0xc0ffee;
	char err[SR_ERRMAX];
	unsigned w;
	int count = 0, bad;

	if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)
		tap_skip_all("no CUDA device");
	if (check(cudaMalloc((void **)&a, cap), "cudaMalloc") == -1 ||
	    check(cudaMalloc((void **)&b, cap), "cudaMalloc") == -1 ||
	    check(cudaMalloc((void **)&c, cap), "cudaMalloc") == -1)
		return 1;
	for (w = 1; w <= 16; w++) {
		bad = 0;
		for (i = 0; i < SR_ARRAY_LEN(sizes) && !bad; i++)
			for (o = 0; o < SR_ARRAY_LEN(offs) && !bad; o++)
				if (compare(sizes[i], w, offs[o][0], offs[o][1], &seed, a, b, c) == -1)
					bad = 1;
		ok(!bad, "width %u: device split and join equal the CPU's, 0 bytes to 8 MiB, "
		    "aligned and misaligned", w);
	}
	ok(sr_byteplane_split_cuda(a, 16, 17, b, err) == -1 &&
	    strcmp(err, "byteplane split: width 17 out of range 1..16") == 0,
	    "width 17 refused: %s", err);
	ok(sr_byteplane_split_cuda_async(a, 1 << 20, 4, b, NULL, err) == 0 &&
	    cudaDeviceSynchronize() == cudaSuccess, "the async form runs on the default stream");
	cudaFree(a);
	cudaFree(b);
	cudaFree(c);

	if (getenv("SPOTRUN_GPU_BENCH") != NULL) {
		size_t n = (size_t)1 << 30;

		if (cudaMalloc((void **)&a, n) == cudaSuccess &&
		    cudaMalloc((void **)&b, n) == cudaSuccess) {
			bench(a, b, n);
			cudaFree(a);
			cudaFree(b);
		}
	}
	return tap_done();
}
