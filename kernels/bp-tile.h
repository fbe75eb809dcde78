/*
 * bp-tile.h: the body of the CUDA byte-plane kernels (byteplane.cu) for
 * widths 2 and 4, written once for the device and the host. The kernels run
 * it on the GPU; tests/t-byteplane.c runs the very same functions on the CPU,
 * block by block and thread by thread, so the kernels' index arithmetic and
 * byte permutations are checked against the CPU twin (byteplane.c) on every
 * machine, not only where a GPU is lent.
 *
 * A tile is BP_TILE bytes of elements: BP_THREADS threads each move one
 * 16-byte vector of it, BP_UNROLL times. Split: each thread loads its 16
 * bytes (coalesced: a warp reads 512 contiguous bytes), permutes them into
 * one word per plane in registers and writes those words to shared memory,
 * plane by plane (bp_split_in); after a barrier each thread takes 16 bytes of
 * one plane from shared memory and stores them (bp_split_out), so the stores
 * are 16 bytes per thread and coalesced too. Join runs the same steps
 * backwards. Elements past the last whole tile and the n % width tail are
 * moved one byte at a time by the grid's last block (bp_rest).
 *
 * Loads and stores take the 16-byte vector path when the address allows it,
 * 4-byte words when that does, bytes otherwise: the element side's alignment
 * is the same for every thread and a plane's is the same for every thread
 * writing it (64 or 128 of them, whole warps), so a misaligned buffer or a
 * plane length that is not a multiple of 16 costs speed, never a branch
 * inside a warp.
 */
#ifndef SR_BP_TILE_H
#define SR_BP_TILE_H

#include <stddef.h>
#include <stdint.h>
#ifndef __CUDACC__
#include <string.h>
#endif

#ifdef __CUDACC__
#define BP_FN static __host__ __device__ __forceinline__
#else
#define BP_FN static inline
#endif

#define BP_THREADS 256u		/* threads per block */
#define BP_UNROLL 2u		/* 16-byte vectors per thread per tile */
#define BP_TILE (BP_THREADS * 16u * BP_UNROLL)	/* bytes of elements per tile */
#define BP_SMEM_WORDS (BP_TILE / 4u)	/* shared memory of a block, in words */

/* __byte_perm: byte i of the result is byte (s >> 4i) & 7 of y:x. */
BP_FN uint32_t
bp_perm(uint32_t x, uint32_t y, uint32_t s)
{
#ifdef __CUDA_ARCH__
	return __byte_perm(x, y, s);
#else
	uint64_t v = (uint64_t)y << 32 | x;
	uint32_t r = 0;
	unsigned i;

	for (i = 0; i < 4; i++)
		r |= (uint32_t)(v >> 8 * ((s >> 4 * i) & 7) & 0xff) << 8 * i;
	return r;
#endif
}

/* 16 bytes at p as four little-endian words, by the widest access p allows. */
BP_FN void
bp_ld16(const uint8_t *p, uint32_t w[4])
{
#ifdef __CUDA_ARCH__
	if (((uintptr_t)p & 15) == 0) {
		uint4 v = *(const uint4 *)p;

		w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
		return;
	}
	if (((uintptr_t)p & 3) == 0) {
		for (int i = 0; i < 4; i++)
			w[i] = ((const uint32_t *)p)[i];
		return;
	}
	for (int i = 0; i < 4; i++)
		w[i] = p[4 * i] | (uint32_t)p[4 * i + 1] << 8 | (uint32_t)p[4 * i + 2] << 16 |
		    (uint32_t)p[4 * i + 3] << 24;
#else
	memcpy(w, p, 16);	/* x86-64 and every host we build on are little-endian */
#endif
}

BP_FN void
bp_st16(uint8_t *p, const uint32_t w[4])
{
#ifdef __CUDA_ARCH__
	if (((uintptr_t)p & 15) == 0) {
		*(uint4 *)p = make_uint4(w[0], w[1], w[2], w[3]);
		return;
	}
	if (((uintptr_t)p & 3) == 0) {
		for (int i = 0; i < 4; i++)
			((uint32_t *)p)[i] = w[i];
		return;
	}
	for (int i = 0; i < 16; i++)
		p[i] = (uint8_t)(w[i / 4] >> 8 * (i % 4));
#else
	memcpy(p, w, 16);
#endif
}

/* 16 bytes of shared memory (16-byte aligned) as one access. */
BP_FN void
bp_sm_ld16(const uint32_t *s, uint32_t w[4])
{
#ifdef __CUDA_ARCH__
	uint4 v = *(const uint4 *)s;

	w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
#else
	w[0] = s[0], w[1] = s[1], w[2] = s[2], w[3] = s[3];
#endif
}

BP_FN void
bp_sm_st16(uint32_t *s, const uint32_t w[4])
{
#ifdef __CUDA_ARCH__
	*(uint4 *)s = make_uint4(w[0], w[1], w[2], w[3]);
#else
	s[0] = w[0], s[1] = w[1], s[2] = w[2], s[3] = w[3];
#endif
}

/* 4x4 byte transpose of four 4-byte elements: o[k] holds byte k of each.
 * It is its own inverse. */
BP_FN void
bp_transpose4(const uint32_t e[4], uint32_t o[4])
{
	uint32_t ab_lo = bp_perm(e[0], e[1], 0x5140), cd_lo = bp_perm(e[2], e[3], 0x5140);
	uint32_t ab_hi = bp_perm(e[0], e[1], 0x7362), cd_hi = bp_perm(e[2], e[3], 0x7362);

	o[0] = bp_perm(ab_lo, cd_lo, 0x5410);
	o[1] = bp_perm(ab_lo, cd_lo, 0x7632);
	o[2] = bp_perm(ab_hi, cd_hi, 0x5410);
	o[3] = bp_perm(ab_hi, cd_hi, 0x7632);
}

/* Whole tiles in m elements of width w (2 or 4). */
BP_FN size_t
bp_tiles(size_t m, unsigned w)
{
	return m / (BP_TILE / w);
}

/*
 * Shared memory holds a tile as planes: plane k is words
 * [k * BP_SMEM_WORDS / w, (k + 1) * BP_SMEM_WORDS / w), in element order.
 * In the element-side step thread t handles the vectors t + u * BP_THREADS
 * of the tile (u < BP_UNROLL); in the plane-side step vector v of the tile's
 * planes, v = t + u * BP_THREADS, is vector v % (per plane) of plane
 * v / (per plane), where per plane = BP_TILE / 16 / w.
 */

/* Split, element side: load, permute, write the planes' words. */
BP_FN void
bp_split_in(const uint8_t *src, size_t tile, unsigned w, unsigned t, uint32_t *sm)
{
	const uint8_t *s = src + tile * BP_TILE;
	uint32_t e[BP_UNROLL][4], o[4];
	unsigned u, pw = BP_SMEM_WORDS / w;

	for (u = 0; u < BP_UNROLL; u++)	/* all loads first: more bytes in flight */
		bp_ld16(s + 16 * (t + u * BP_THREADS), e[u]);
	for (u = 0; u < BP_UNROLL; u++) {
		unsigned v = t + u * BP_THREADS;

		if (w == 4) {
			bp_transpose4(e[u], o);
			sm[v] = o[0];
			sm[pw + v] = o[1];
			sm[2 * pw + v] = o[2];
			sm[3 * pw + v] = o[3];
		} else {
			sm[2 * v] = bp_perm(e[u][0], e[u][1], 0x6420);
			sm[2 * v + 1] = bp_perm(e[u][2], e[u][3], 0x6420);
			sm[pw + 2 * v] = bp_perm(e[u][0], e[u][1], 0x7531);
			sm[pw + 2 * v + 1] = bp_perm(e[u][2], e[u][3], 0x7531);
		}
	}
}

/* Split, plane side: 16 bytes of one plane from shared memory to dst. */
BP_FN void
bp_split_out(const uint32_t *sm, size_t tile, size_t m, unsigned w, unsigned t, uint8_t *dst)
{
	unsigned per = BP_TILE / 16 / w, u;
	uint32_t v4[4];

	for (u = 0; u < BP_UNROLL; u++) {
		unsigned v = t + u * BP_THREADS, k = v / per, j = v % per;

		bp_sm_ld16(sm + k * (BP_SMEM_WORDS / w) + 4 * j, v4);
		bp_st16(dst + k * m + tile * (BP_TILE / w) + 16 * j, v4);
	}
}

/* Join, plane side: 16 bytes of one plane from src to shared memory. */
BP_FN void
bp_join_in(const uint8_t *src, size_t tile, size_t m, unsigned w, unsigned t, uint32_t *sm)
{
	unsigned per = BP_TILE / 16 / w, u;
	uint32_t v4[BP_UNROLL][4];

	for (u = 0; u < BP_UNROLL; u++) {
		unsigned v = t + u * BP_THREADS, k = v / per, j = v % per;

		bp_ld16(src + k * m + tile * (BP_TILE / w) + 16 * j, v4[u]);
	}
	for (u = 0; u < BP_UNROLL; u++) {
		unsigned v = t + u * BP_THREADS, k = v / per, j = v % per;

		bp_sm_st16(sm + k * (BP_SMEM_WORDS / w) + 4 * j, v4[u]);
	}
}

/* Join, element side: the planes' words from shared memory, permuted back
 * into elements, 16 bytes to dst. */
BP_FN void
bp_join_out(const uint32_t *sm, size_t tile, unsigned w, unsigned t, uint8_t *dst)
{
	uint8_t *d = dst + tile * BP_TILE;
	unsigned u, pw = BP_SMEM_WORDS / w;
	uint32_t e[4], o[4];

	for (u = 0; u < BP_UNROLL; u++) {
		unsigned v = t + u * BP_THREADS;

		if (w == 4) {
			o[0] = sm[v], o[1] = sm[pw + v], o[2] = sm[2 * pw + v], o[3] = sm[3 * pw + v];
			bp_transpose4(o, e);
		} else {
			uint32_t lo0 = sm[2 * v], lo1 = sm[2 * v + 1];
			uint32_t hi0 = sm[pw + 2 * v], hi1 = sm[pw + 2 * v + 1];

			e[0] = bp_perm(lo0, hi0, 0x5140);
			e[1] = bp_perm(lo0, hi0, 0x7362);
			e[2] = bp_perm(lo1, hi1, 0x5140);
			e[3] = bp_perm(lo1, hi1, 0x7362);
		}
		bp_st16(d + 16 * (t + u * BP_THREADS), e);
	}
}

/* Any width 1..16: elements [from, m) and then the n % w tail bytes, one
 * byte at a time, thread t of nt; join != 0 runs the inverse. Run by one
 * block after the tiles (or by the whole grid for the generic widths). */
BP_FN void
bp_rest(const uint8_t *src, size_t n, unsigned w, size_t from, size_t t, size_t nt,
    uint8_t *dst, int join)
{
	size_t m = n / w, i;
	unsigned k;

	for (i = from + t; i < m; i += nt)
		for (k = 0; k < w; k++) {
			if (join)
				dst[i * w + k] = src[k * m + i];
			else
				dst[k * m + i] = src[i * w + k];
		}
	for (i = m * w + t; i < n; i += nt)
		dst[i] = src[i];
}

#endif
