/*
 * t-kernels-cuda.c: the CUDA kernels (kernels/byteplane.cu, chunksum.cu)
 * against their CPU twins, bit for bit, through the driver loaded at run
 * time (kernels/cudadrv.c). Built only with CUDA, and runs on every machine:
 * the loader's answers where there is no GPU are checked exactly (no
 * library, the toolkit's stub library); without a GPU the device checks are
 * skipped, saying why, and the CPU twins are what such a machine runs.
 * On a GPU (tests/gpu/run.sh): byte planes of widths 1-16 on random data of
 * odd and even sizes, aligned and misaligned; chunk sums of buffers of many
 * shapes and offsets; every output byte written, none past the end.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "byteplane.h"
#include "chunksum.h"
#include "cudadrv.h"
#include "tap.h"
#include "util.h"

#define CANARY 64

static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A device check that cannot run here: a skipped test, saying why. */
static void
skip(const char *what, const char *why)
{
	ok(1, "%s # SKIP no GPU: %s", what, why);
}

/* Device buffers of the checks, with room for offsets and a canary. */
struct bufs {
	CUdeviceptr a, b, c;
	size_t cap;
};

static int
dev(struct sr_cuda *cu, CUresult r, const char *what)
{
	char err[SR_ERRMAX];

	if (sr_cuda_check(cu, r, what, err) == 0)
		return 0;
	tap_diag("%s", err);
	return -1;
}

/* Split and join n random bytes at width w on the device at offsets so and
 * dofs; 0 if the device equals the CPU twin both ways, wrote every byte
 * and none past n. */
static int
compare_planes(struct sr_cuda *cu, struct bufs *B, size_t n, unsigned w, size_t so,
    size_t dofs, uint64_t *seed)
{
	uint8_t *host = sr_malloc(n + CANARY), *want = sr_malloc(n + CANARY);
	uint8_t *got = sr_malloc(n + CANARY);
	char err[SR_ERRMAX];
	size_t i;
	int r = -1;

	for (i = 0; i < n; i++)
		host[i] = (uint8_t)rnd(seed);
	sr_byteplane_split(host, n, w, want);
	memset(want + n, 0xa5, CANARY);
	if (dev(cu, cu->api.cuMemcpyHtoD(B->a + so, host, n + (n == 0)), "copy in") == -1 ||
	    dev(cu, cu->api.cuMemsetD8(B->b, 0xa5, B->cap), "poison") == -1)
		goto out;
	if (sr_byteplane_split_cuda(cu, B->a + so, n, w, B->b + dofs, NULL, err) == -1) {
		tap_diag("%s", err);
		goto out;
	}
	if (dev(cu, cu->api.cuCtxSynchronize(), "split") == -1 ||
	    dev(cu, cu->api.cuMemcpyDtoH(got, B->b + dofs, n + CANARY), "copy out") == -1)
		goto out;
	if (memcmp(got, want, n + CANARY) != 0) {
		for (i = 0; got[i] == want[i]; i++)
			;
		tap_diag("split: %zu bytes, width %u, offsets %zu/%zu: first difference at byte "
		    "%zu%s", n, w, so, dofs, i, i >= n ? " (past the end)" : "");
		goto out;
	}
	if (dev(cu, cu->api.cuMemsetD8(B->c, 0x5a, B->cap), "poison") == -1)
		goto out;
	if (sr_byteplane_join_cuda(cu, B->b + dofs, n, w, B->c + so, NULL, err) == -1) {
		tap_diag("%s", err);
		goto out;
	}
	memset(host + n, 0x5a, CANARY);
	if (dev(cu, cu->api.cuCtxSynchronize(), "join") == -1 ||
	    dev(cu, cu->api.cuMemcpyDtoH(got, B->c + so, n + CANARY), "copy out") == -1)
		goto out;
	if (memcmp(got, host, n + CANARY) != 0) {
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

/* Chunk sums of n random bytes at offset off in chunks of `chunk`; 0 if
 * the device's equal the twin's. */
static int
compare_sums(struct sr_cuda *cu, struct bufs *B, size_t n, size_t chunk, size_t off,
    uint64_t *seed)
{
	size_t nc = (n + chunk - 1) / chunk, scratch = sr_chunksum_cuda_scratch(n, chunk), i;
	uint8_t *host = sr_malloc(n + 1), *want = sr_malloc(16 * nc + 1);
	uint8_t *got = sr_malloc(16 * nc + 1);
	CUdeviceptr ds = 0, dout = 0;
	char err[SR_ERRMAX];
	int r = -1;

	for (i = 0; i < n; i++)
		host[i] = (uint8_t)rnd(seed);
	sr_chunksum_chunks(host, n, chunk, want);
	if (dev(cu, cu->api.cuMemcpyHtoD(B->a + off, host, n + (n == 0)), "copy in") == -1 ||
	    dev(cu, cu->api.cuMemAlloc(&ds, scratch + 16), "scratch") == -1 ||
	    dev(cu, cu->api.cuMemAlloc(&dout, 16 * nc + 16), "sums") == -1 ||
	    dev(cu, cu->api.cuMemsetD8(dout, 0xee, 16 * nc + 16), "poison") == -1)
		goto out;
	if (sr_chunksum_cuda(cu, B->a + off, n, chunk, ds, dout, NULL, err) == -1) {
		tap_diag("%s", err);
		goto out;
	}
	if (dev(cu, cu->api.cuCtxSynchronize(), "chunk sum") == -1 ||
	    dev(cu, cu->api.cuMemcpyDtoH(got, dout, 16 * nc + (nc == 0)), "copy out") == -1)
		goto out;
	if (nc > 0 && memcmp(got, want, 16 * nc) != 0) {
		for (i = 0; memcmp(got + 16 * i, want + 16 * i, 16) == 0; i++)
			;
		tap_diag("chunk sum: %zu bytes at offset %zu in chunks of %zu: chunk %zu differs",
		    n, off, chunk, i);
		goto out;
	}
	r = 0;
out:
	if (ds != 0)
		cu->api.cuMemFree(ds);
	if (dout != 0)
		cu->api.cuMemFree(dout);
	free(host);
	free(want);
	free(got);
	return r;
}

/* What a machine without a GPU runs instead: the CPU twins on the same
 * shapes, split and joined back, and the chunk sums of a buffer chunk by
 * chunk as sr_chunksum_chunks gives them. */
static void
cpu_path(const size_t *sizes, size_t nsizes, uint64_t *seed)
{
	size_t cap = (8 << 20) + 16, i, c, n;
	uint8_t *a = sr_malloc(cap), *b = sr_malloc(cap), *d = sr_malloc(cap);
	uint8_t all[16 * 9], one[16];
	unsigned w;
	int bad = 0;

	for (i = 0; i < cap; i++)
		a[i] = (uint8_t)rnd(seed);
	for (w = 2; w <= 4; w += 2)
		for (i = 0; i < nsizes && !bad; i++) {
			sr_byteplane_split(a, sizes[i], w, b);
			sr_byteplane_join(b, sizes[i], w, d);
			bad = memcmp(a, d, sizes[i]) != 0;
		}
	ok(!bad, "CPU path (no GPU): byte planes of widths 2 and 4 split and join back, "
	    "%zu sizes to 8 MiB", nsizes);
	n = (8 << 20) + 5;
	sr_chunksum_chunks(a, n, 1 << 20, all);
	for (c = 0; c < 9 && !bad; c++) {
		sr_chunksum(a + (c << 20), c < 8 ? 1 << 20 : 5, one);
		bad = memcmp(one, all + 16 * c, 16) != 0;
	}
	ok(!bad, "CPU path (no GPU): chunk sums of 8 MiB + 5 bytes in 1 MiB chunks, chunk "
	    "by chunk");
	free(a);
	free(b);
	free(d);
}

int
main(void)
{
	static const size_t sizes[] = { 0, 1, 3, 7, 16, 1000, 4097, 16384, 65536, 65537,
		(1 << 20) + 3, (1 << 20) + 6, 4 << 20, (8 << 20) + 14 };
	static const size_t offs[][2] = { { 0, 0 }, { 1, 0 }, { 0, 3 }, { 8, 4 }, { 5, 7 } };
	static const struct { size_t n, chunk, off; } shapes[] = {
		{ 0, 16384, 0 }, { 1, 16384, 0 }, { 255, 1 << 20, 0 }, { 16384, 16384, 0 },
		{ 16385, 16384, 3 }, { 40000, 1000, 0 }, { (1 << 20) + 7, 65539, 8 },
		{ 3 << 20, 1 << 20, 0 }, { (5 << 20) + 123, 1 << 20, 1 }, { 1 << 20, 300, 0 },
		{ (64 << 20) + 5, 16 << 20, 0 }, { 96 << 20, 64 << 20, 16 },
	};
	const char *stub = SR_CUDA_STUB;
	struct bufs B = { 0, 0, 0, (96 << 20) + 4096 };
	uint64_t seed = 0xc0ffee;
	char err[SR_ERRMAX], why[SR_ERRMAX];
	struct sr_cuda *cu;
	size_t i, o;
	unsigned w;
	int bad;

	cu = sr_cuda_open("/nonexistent/libcuda.so.1", 0, err);
	ok(cu == NULL && strncmp(err, "no CUDA driver (/nonexistent/libcuda.so.1: cannot open "
	    "shared object file", 70) == 0, "no driver library: %s", err);
	if (access(stub, R_OK) == 0) {
		char want[SR_ERRMAX];

		cu = sr_cuda_open(stub, 0, err);
		snprintf(want, sizeof want, "no CUDA driver: %s is the toolkit's stub library", stub);
		ok(cu == NULL && strcmp(err, want) == 0, "the toolkit's stub library: %s", err);
	} else {
		ok(1, "the toolkit's stub library # SKIP %s is not there", stub);
	}

	cu = sr_cuda_open(NULL, 0, why);
	if (cu == NULL) {
		tap_diag("no GPU here (%s): this machine takes the CPU twins' path, the device "
		    "checks are skipped", why);
		cpu_path(sizes, SR_ARRAY_LEN(sizes), &seed);
		for (w = 1; w <= 16; w++) {
			char what[96];

			snprintf(what, sizeof what, "width %u: device byte planes equal the CPU's", w);
			skip(what, why);
		}
		skip("device chunk sums equal the CPU's", why);
		skip("bad width and chunk refused on the device", why);
		return tap_done();
	}
	tap_diag("device: %s, compute capability %d.%d, %d multiprocessors, driver %d",
	    cu->name, cu->cc_major, cu->cc_minor, cu->sms, cu->driver);
	if (sr_cuda_bind(cu, err) == -1) {
		tap_diag("%s", err);
		return 1;
	}
	if (dev(cu, cu->api.cuMemAlloc(&B.a, B.cap), "cuMemAlloc") == -1 ||
	    dev(cu, cu->api.cuMemAlloc(&B.b, B.cap), "cuMemAlloc") == -1 ||
	    dev(cu, cu->api.cuMemAlloc(&B.c, B.cap), "cuMemAlloc") == -1)
		return 1;
	for (w = 1; w <= 16; w++) {
		bad = 0;
		for (i = 0; i < SR_ARRAY_LEN(sizes) && !bad; i++)
			for (o = 0; o < SR_ARRAY_LEN(offs) && !bad; o++)
				if (compare_planes(cu, &B, sizes[i], w, offs[o][0], offs[o][1],
				    &seed) == -1)
					bad = 1;
		ok(!bad, "width %u: device byte planes equal the CPU's, split and join, 0 bytes "
		    "to 8 MiB, aligned and misaligned, every byte written, none past the end", w);
	}
	bad = 0;
	for (i = 0; i < SR_ARRAY_LEN(shapes) && !bad; i++)
		if (compare_sums(cu, &B, shapes[i].n, shapes[i].chunk, shapes[i].off, &seed) == -1)
			bad = 1;
	ok(!bad, "device chunk sums equal the CPU's for %zu buffer shapes (0 bytes to 96 MiB, "
	    "chunks of 300 bytes to 64 MiB, misaligned)", SR_ARRAY_LEN(shapes));
	{
		char e1[SR_ERRMAX], e2[SR_ERRMAX];

		ok(sr_byteplane_split_cuda(cu, B.a, 16, 17, B.b, NULL, e1) == -1 &&
		    strcmp(e1, "byteplane split: width 17 out of range 1..16") == 0 &&
		    sr_chunksum_cuda(cu, B.a, 16, 0, B.b, B.c, NULL, e2) == -1 &&
		    strcmp(e2, "chunk sum: chunks of 0 bytes") == 0,
		    "bad width and chunk refused on the device: %s; %s", e1, e2);
	}
	cu->api.cuMemFree(B.a);
	cu->api.cuMemFree(B.b);
	cu->api.cuMemFree(B.c);
	sr_cuda_close(cu);
	return tap_done();
}
