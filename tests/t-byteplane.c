/*
 * t-byteplane.c: the CPU byte-plane split/join (kernels/byteplane.c): the
 * exact layout on hand-checked examples, split against a naive reference and
 * join as its inverse for widths 1..16 and sizes 0..1000 plus large ones
 * (which run the SIMD loops and their scalar remainders), on each
 * instruction set (portable, SSE2, AVX2 where the CPU has it). Then the
 * CUDA kernels' bodies (kernels/bp-tile.h) run on the host as the GPU
 * would run them, block by block and thread by thread with the barriers
 * between the steps, against the CPU twin: their index arithmetic and byte
 * permutations are checked here, on every machine.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bp-tile.h"
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

/* The definition in byteplane.h, written out the slow way. */
static void
ref_split(const uint8_t *src, size_t n, unsigned w, uint8_t *dst)
{
	size_t m = n / w, i;
	unsigned k;

	for (k = 0; k < w; k++)
		for (i = 0; i < m; i++)
			dst[k * m + i] = src[i * w + k];
	for (i = m * w; i < n; i++)
		dst[i] = src[i];
}

/*
 * The tiled kernels of byteplane.cu on the host: `grid` blocks of
 * BP_THREADS threads; each block walks its tiles (every thread's first step,
 * the barrier, every thread's second step, the barrier), then the last block
 * does the rest. Shared memory is poisoned before each tile, so a read of a
 * word no thread wrote shows.
 */
static void
emulate(const uint8_t *src, size_t n, unsigned w, uint8_t *dst, int join, unsigned grid)
{
	static uint32_t sm[BP_SMEM_WORDS];
	size_t m = n / w, tiles = bp_tiles(m, w), tile;
	unsigned b, t;

	for (b = 0; b < grid; b++) {
		for (tile = b; tile < tiles; tile += grid) {
			memset(sm, 0xcc, sizeof sm);
			for (t = 0; t < BP_THREADS; t++) {
				if (join)
					bp_join_in(src, tile, m, w, t, sm);
				else
					bp_split_in(src, tile, w, t, sm);
			}
			for (t = 0; t < BP_THREADS; t++) {
				if (join)
					bp_join_out(sm, tile, w, t, dst);
				else
					bp_split_out(sm, tile, m, w, t, dst);
			}
		}
		if (b == grid - 1)
			for (t = 0; t < BP_THREADS; t++)
				bp_rest(src, n, w, tiles * (BP_TILE / w), t, BP_THREADS, dst, join);
	}
}

/* What is tested: the twin on one instruction set, or the GPU's kernels
 * emulated with a grid of `grid` blocks (grid > 0). */
struct impl {
	enum sr_bp_isa isa;
	unsigned grid;
};

static void
run_impl(const struct impl *im, const uint8_t *src, size_t n, unsigned w, uint8_t *dst,
    int join)
{
	if (im->grid > 0)
		emulate(src, n, w, dst, join, im->grid);
	else if (join)
		sr_byteplane_join_isa(src, n, w, dst, im->isa);
	else
		sr_byteplane_split_isa(src, n, w, dst, im->isa);
}

/* Split and join n random bytes at width w with im; 0 if split matches the
 * reference and join inverts it, writing nothing past n. */
static int
roundtrip(size_t n, unsigned w, const struct impl *im, uint64_t *seed, uint8_t *a, uint8_t *b,
    uint8_t *c, uint8_t *d)
{
	size_t i;

	for (i = 0; i < n; i++)
		a[i] = (uint8_t)rnd(seed);
	ref_split(a, n, w, b);
	/* a canary past the end catches writes beyond n */
	memset(c, 0xa5, n + 64);
	run_impl(im, a, n, w, c, 0);
	if (memcmp(b, c, n) != 0)
		return 1;
	for (i = n; i < n + 64; i++)
		if (c[i] != 0xa5)
			return 2;
	memset(d, 0x5a, n + 64);
	run_impl(im, c, n, w, d, 1);
	if (memcmp(a, d, n) != 0)
		return 3;
	for (i = n; i < n + 64; i++)
		if (d[i] != 0x5a)
			return 4;
	return 0;
}

int
main(void)
{
	static const uint8_t src2[] = { 0x10, 0x11, 0x20, 0x21, 0x30, 0x31, 0x40 };
	static const uint8_t want2[] = { 0x10, 0x20, 0x30, 0x11, 0x21, 0x31, 0x40 };
	static const uint8_t src4[] = { 'a', 'b', 'c', 'd', 'A', 'B', 'C', 'D', 'x', 'y' };
	static const uint8_t want4[] = { 'a', 'A', 'b', 'B', 'c', 'C', 'd', 'D', 'x', 'y' };
	static const uint8_t src3[] = { 1, 2, 3, 4, 5, 6 };
	static const uint8_t want3[] = { 1, 4, 2, 5, 3, 6 };
	static const size_t large[] = { 1 << 20, (1 << 20) + 13, (3 << 20) + 4095 };
	static const struct { struct impl im; const char *name; } isas[] = {
		{ { SR_BP_ISA_SCALAR, 0 }, "portable" }, { { SR_BP_ISA_SSE2, 0 }, "SSE2" },
		{ { SR_BP_ISA_AVX2, 0 }, "AVX2" },
	};
	static const struct impl best = { SR_BP_ISA_BEST, 0 };
	static const size_t emu_sizes[] = { 0, 1, 3, 15, 64, BP_TILE - 1, BP_TILE, BP_TILE + 2,
		2 * BP_TILE + 30, 5 * BP_TILE + 4, 7 * BP_TILE + 4099, (1 << 20) + 5 };
	static const unsigned grids[] = { 1, 3, 7 };
	uint8_t out[16], back[16];
	uint8_t *a, *b, *c, *d;
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	size_t n, i, k;
	unsigned w;
	int bad, rc;

	/* hand-checked layouts: planes, then the n % width tail */
	sr_byteplane_split(src2, sizeof src2, 2, out);
	ok(memcmp(out, want2, sizeof want2) == 0, "width 2: planes 10 20 30 | 11 21 31 | tail 40");
	sr_byteplane_join(out, sizeof src2, 2, back);
	ok(memcmp(back, src2, sizeof src2) == 0, "width 2: join restores the input");
	sr_byteplane_split(src4, sizeof src4, 4, out);
	ok(memcmp(out, want4, sizeof want4) == 0, "width 4: planes aA bB cC dD, tail xy");
	sr_byteplane_join(out, sizeof src4, 4, back);
	ok(memcmp(back, src4, sizeof src4) == 0, "width 4: join restores the input");
	sr_byteplane_split(src3, sizeof src3, 3, out);
	ok(memcmp(out, want3, sizeof want3) == 0, "width 3: planes 1 4 | 2 5 | 3 6");
	sr_byteplane_split(src2, 3, 4, out);
	ok(memcmp(out, src2, 3) == 0, "fewer bytes than one element: all tail, copied");
	sr_byteplane_split(NULL, 0, 2, NULL);
	sr_byteplane_join(NULL, 0, 16, NULL);
	ok(1, "zero bytes touch nothing");

	a = sr_malloc((3 << 20) + 8192);
	b = sr_malloc((3 << 20) + 8192);
	c = sr_malloc((3 << 20) + 8192);
	d = sr_malloc((3 << 20) + 8192);
	for (w = 1; w <= 16; w++) {
		bad = 0;
		for (n = 0; n <= 1000 && !bad; n++)
			if ((rc = roundtrip(n, w, &best, &seed, a, b, c, d)) != 0) {
				tap_diag("width %u, %zu bytes: failure %d", w, n, rc);
				bad = 1;
			}
		for (i = 0; i < SR_ARRAY_LEN(large) && !bad; i++)
			if ((rc = roundtrip(large[i], w, &best, &seed, a, b, c, d)) != 0) {
				tap_diag("width %u, %zu bytes: failure %d", w, large[i], rc);
				bad = 1;
			}
		ok(!bad, "width %u: split matches the reference, join inverts it, "
		    "0..1000 bytes and 1-3 MiB", w);
	}
	for (k = 0; k < SR_ARRAY_LEN(isas); k++)
		for (w = 2; w <= 4; w += 2) {
			bad = 0;
			for (n = 0; n <= 300 && !bad; n++)
				if ((rc = roundtrip(n, w, &isas[k].im, &seed, a, b, c, d)) != 0) {
					tap_diag("%s, width %u, %zu bytes: failure %d", isas[k].name, w,
					    n, rc);
					bad = 1;
				}
			for (i = 0; i < SR_ARRAY_LEN(large) && !bad; i++)
				if ((rc = roundtrip(large[i], w, &isas[k].im, &seed, a, b, c, d)) != 0) {
					tap_diag("%s, width %u, %zu bytes: failure %d", isas[k].name, w,
					    large[i], rc);
					bad = 1;
				}
			ok(!bad, "%s loops, width %u: split matches the reference, join inverts "
			    "it, 0..300 bytes and 1-3 MiB", isas[k].name, w);
		}
	if (!__builtin_cpu_supports("avx2"))
		tap_diag("this CPU has no AVX2: the AVX2 cases ran the SSE2 loops");
	/* The GPU's tiled kernels, emulated: sizes around the tile's, a plane
	 * length that is no multiple of 16 (misaligned planes), grids of one
	 * block (every tile and the rest in one) and of several (grid-stride). */
	for (w = 2; w <= 4; w += 2) {
		bad = 0;
		for (i = 0; i < SR_ARRAY_LEN(emu_sizes) && !bad; i++)
			for (k = 0; k < SR_ARRAY_LEN(grids) && !bad; k++)
				if ((rc = roundtrip(emu_sizes[i], w, &(struct impl){ SR_BP_ISA_BEST,
				    grids[k] }, &seed, a, b, c, d)) != 0) {
					tap_diag("width %u, %zu bytes, grid %u: failure %d", w,
					    emu_sizes[i], grids[k], rc);
					bad = 1;
				}
		ok(!bad, "width %u: the CUDA kernels' tiles, run on the host, split and join "
		    "as the CPU twin, %zu sizes from 0 to 1 MiB + 5, grids of 1, 3 and 7 "
		    "blocks", w, SR_ARRAY_LEN(emu_sizes));
	}
	free(a);
	free(b);
	free(c);
	free(d);
	return tap_done();
}
