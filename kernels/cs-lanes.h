/*
 * cs-lanes.h: XXH3-128 (seed 0, the default secret) of inputs longer than
 * 240 bytes, cut into the four pieces a group of four GPU threads computes
 * side by side: thread q of the group keeps accumulator lanes 2q and 2q+1
 * and reads bytes [16q, 16q + 16) of every 64-byte stripe, so the group
 * reads each stripe in one coalesced access and never exchanges data until
 * the end, when the four partial sums of the merge are added
 * (cs_lanes, cs_terms, cs_final). The CUDA chunk-sum kernels (chunksum.cu)
 * run these functions on the device; tests/t-chunksum.c runs them on the
 * host against libxxhash's XXH3_128bits, the reference implementation, and
 * the chunk sum's CPU twin (chunksum.c) is libxxhash itself.
 *
 * The algorithm's constants (the 192-byte secret, the primes, the stripe,
 * block and merge layout) are those of the XXH3 specification; only the
 * long-input path is here, since the chunk sum never hashes fewer than
 * CS_MIN bytes (chunksum.h).
 */
#ifndef SR_CS_LANES_H
#define SR_CS_LANES_H

#include <stddef.h>
#include <stdint.h>
#ifndef __CUDACC__
#include <string.h>
#endif

#include "chunksum.h"

#ifdef __CUDACC__
#define CS_FN static __host__ __device__ __forceinline__
#else
#define CS_FN static inline
#endif

#define CS_P32_1 0x9E3779B1u
#define CS_P32_2 0x85EBCA77u
#define CS_P32_3 0xC2B2AE3Du
#define CS_P64_1 0x9E3779B185EBCA87ull
#define CS_P64_2 0xC2B2AE3D27D4EB4Full
#define CS_P64_3 0x165667B19E3779F9ull
#define CS_P64_4 0x85EBCA77C2B2AE63ull
#define CS_P64_5 0x27D4EB2F165667C5ull

/* The secret as the words the lanes use: w[j] = bytes [8j, 8j + 8) (stripe
 * s, lane i takes w[s + i]; the scramble w[16 + i]); last[i] at 121 + 8i
 * (the last stripe); mlo[j] at 11 + 8j and mhi[j] at 117 + 8j (the merge).
 * cs_keys_init fills it from the secret's bytes. */
struct cs_keys {
	uint64_t w[24], last[8], mlo[8], mhi[8];
};

CS_FN uint64_t
cs_le64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* The XXH3 default secret (192 bytes, from the specification). */
#define CS_SECRET_BYTES { \
	0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c, \
	0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f, \
	0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21, \
	0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c, \
	0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3, \
	0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8, \
	0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d, \
	0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64, \
	0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb, \
	0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e, \
	0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce, \
	0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e }

/* Word j (0..47) of struct cs_keys, from the secret's bytes. */
CS_FN uint64_t
cs_key_word(const uint8_t *secret, unsigned j)
{
	if (j < 24)
		return cs_le64(secret + 8 * j);
	if (j < 32)
		return cs_le64(secret + 121 + 8 * (j - 24));
	if (j < 40)
		return cs_le64(secret + 11 + 8 * (j - 32));
	return cs_le64(secret + 117 + 8 * (j - 40));
}

/* 16 bytes at p + off as two little-endian words; bytes at or past `valid`
 * read as zero (the chunk sum's padding of short leaves). */
CS_FN void
cs_ld16(const uint8_t *p, size_t off, size_t valid, uint64_t *a, uint64_t *b)
{
	if (off + 16 <= valid) {
#ifdef __CUDA_ARCH__
		if (((uintptr_t)(p + off) & 15) == 0) {
			ulonglong2 v = *(const ulonglong2 *)(p + off);

			*a = v.x, *b = v.y;
			return;
		}
		if (((uintptr_t)(p + off) & 7) == 0) {
			*a = ((const uint64_t *)(p + off))[0];
			*b = ((const uint64_t *)(p + off))[1];
			return;
		}
#else
		memcpy(a, p + off, 8);
		memcpy(b, p + off + 8, 8);
		return;
#endif
	}
	{
		uint8_t t[16];
		int i;

		for (i = 0; i < 16; i++)
			t[i] = off + i < valid ? p[off + i] : 0;
		*a = cs_le64(t);
		*b = cs_le64(t + 8);
	}
}

/* One stripe's step for lanes 2q, 2q+1: data words d0, d1, keys k0, k1. */
CS_FN void
cs_round(uint64_t acc[2], uint64_t d0, uint64_t d1, uint64_t k0, uint64_t k1)
{
	uint64_t x0 = d0 ^ k0, x1 = d1 ^ k1;

	acc[0] += d1 + (uint64_t)(uint32_t)x0 * (uint32_t)(x0 >> 32);
	acc[1] += d0 + (uint64_t)(uint32_t)x1 * (uint32_t)(x1 >> 32);
}

CS_FN uint64_t
cs_scramble(uint64_t a, uint64_t k)
{
	a ^= a >> 47;
	a ^= k;
	return a * CS_P32_1;
}

/* Lane i's starting value. */
CS_FN uint64_t
cs_init(unsigned i)
{
	switch (i) {
	case 0: return CS_P32_3;
	case 1: return CS_P64_1;
	case 2: return CS_P64_2;
	case 3: return CS_P64_3;
	case 4: return CS_P64_4;
	case 5: return CS_P32_2;
	case 6: return CS_P64_5;
	}
	return CS_P32_1;
}

/*
 * Thread q's part of XXH3-128 of p[0, len), len > 240, reading zeros at
 * and past `valid`: fills acc with lanes 2q and 2q+1. A block's 16 loads
 * are issued before its arithmetic, so 256 bytes per thread are in flight;
 * the keys are read where they are used (shared memory on the device, one
 * broadcast load each), which keeps the registers for the loads: holding
 * the 18 key words in registers too took 159 registers a thread, one block
 * of 256 threads per multiprocessor.
 */
CS_FN void
cs_lanes(const uint8_t *p, size_t len, size_t valid, unsigned q, const struct cs_keys *K,
    uint64_t acc[2])
{
	size_t nb = (len - 1) / 1024, b, base;
	const uint64_t *kq = K->w + 2 * q;
	uint64_t d0, d1;
	unsigned s, ns;

	acc[0] = cs_init(2 * q);
	acc[1] = cs_init(2 * q + 1);
	for (b = 0; b < nb; b++) {
		uint64_t d[16][2];

		base = b * 1024 + 16 * q;
#ifdef __CUDACC__
#pragma unroll
#endif
		for (s = 0; s < 16; s++)	/* the block's loads first, then the arithmetic */
			cs_ld16(p, base + 64 * s, valid, &d[s][0], &d[s][1]);
#ifdef __CUDACC__
#pragma unroll
#endif
		for (s = 0; s < 16; s++)
			cs_round(acc, d[s][0], d[s][1], kq[s], kq[s + 1]);
		acc[0] = cs_scramble(acc[0], kq[16]);
		acc[1] = cs_scramble(acc[1], kq[17]);
	}
	ns = (unsigned)(((len - 1) - 1024 * nb) / 64);
	base = nb * 1024 + 16 * q;
#ifdef __CUDACC__
#pragma unroll
#endif
	for (s = 0; s < 16; s++)
		if (s < ns) {
			cs_ld16(p, base + 64 * s, valid, &d0, &d1);
			cs_round(acc, d0, d1, kq[s], kq[s + 1]);
		}
	cs_ld16(p, len - 64 + 16 * q, valid, &d0, &d1);
	cs_round(acc, d0, d1, K->last[2 * q], K->last[2 * q + 1]);
}

/* The 64x64 -> 128-bit product, its halves xored. */
CS_FN uint64_t
cs_fold(uint64_t a, uint64_t b)
{
#ifdef __CUDA_ARCH__
	return (a * b) ^ __umul64hi(a, b);
#else
	unsigned __int128 r = (unsigned __int128)a * b;

	return (uint64_t)r ^ (uint64_t)(r >> 64);
#endif
}

/* Thread q's terms of the two merges (low and high half). */
CS_FN void
cs_terms(const uint64_t acc[2], unsigned q, const struct cs_keys *K, uint64_t *lo,
    uint64_t *hi)
{
	*lo = cs_fold(acc[0] ^ K->mlo[2 * q], acc[1] ^ K->mlo[2 * q + 1]);
	*hi = cs_fold(acc[0] ^ K->mhi[2 * q], acc[1] ^ K->mhi[2 * q + 1]);
}

CS_FN uint64_t
cs_avalanche(uint64_t h)
{
	h ^= h >> 37;
	h *= 0x165667919E3779F9ull;
	return h ^ (h >> 32);
}

/* The hash from the sums of the four threads' terms, in XXH3's canonical
 * form (high half then low half, each big-endian: what xxhsum prints). */
CS_FN void
cs_final(uint64_t lo_sum, uint64_t hi_sum, size_t len, uint8_t out[16])
{
	uint64_t lo = cs_avalanche((uint64_t)len * CS_P64_1 + lo_sum);
	uint64_t hi = cs_avalanche(~((uint64_t)len * CS_P64_2) + hi_sum);
	int i;

	for (i = 0; i < 8; i++) {
		out[i] = (uint8_t)(hi >> (56 - 8 * i));
		out[8 + i] = (uint8_t)(lo >> (56 - 8 * i));
	}
}

/* The chunk sum's layout, shared by the twin and the kernels. */

/* Chunks of a buffer of n bytes, and leaf slots per chunk. */
CS_FN size_t
cs_chunks(size_t n, size_t chunk)
{
	return (n + chunk - 1) / chunk;
}

CS_FN size_t
cs_leaves_in(size_t chunk)
{
	return (chunk + SR_CS_LEAF - 1) / SR_CS_LEAF;
}

/* The string hashed last for a chunk of n bytes: its digests, then n and
 * SR_CS_LEAF as two little-endian words, zero-padded to SR_CS_MIN. */
CS_FN size_t
cs_rootlen(size_t n)
{
	size_t len = cs_leaves_in(n) * 16 + 16;

	return len < SR_CS_MIN ? SR_CS_MIN : len;
}

/* Write the root string's words and padding after a chunk's digests. */
CS_FN void
cs_trailer(uint8_t *root, size_t n)
{
	size_t at = cs_leaves_in(n) * 16, end = cs_rootlen(n), i;

	for (i = 0; i < 8; i++) {
		root[at + i] = (uint8_t)(n >> 8 * i);
		root[at + 8 + i] = (uint8_t)((uint64_t)SR_CS_LEAF >> 8 * i);
	}
	for (i = at + 16; i < end; i++)
		root[i] = 0;
}

/* Leaf g of a buffer cut into chunks, kc leaf slots per chunk. */
struct cs_leaf {
	size_t chunk, index;	/* its chunk, and its place in the chunk */
	size_t off, len;	/* its bytes in the buffer */
	size_t hashed;		/* len, or SR_CS_MIN for a shorter leaf */
	size_t chunk_len;
};

/* 0 when slot g holds no leaf (the last chunk's unused slots). */
CS_FN int
cs_leaf_at(size_t g, size_t n, size_t chunk, size_t kc, struct cs_leaf *L)
{
	size_t start;

	L->chunk = g / kc;
	L->index = g % kc;
	start = L->chunk * chunk;
	L->chunk_len = n - start < chunk ? n - start : chunk;
	if (L->index * SR_CS_LEAF >= L->chunk_len)
		return 0;
	L->off = start + L->index * SR_CS_LEAF;
	L->len = L->chunk_len - L->index * SR_CS_LEAF;
	if (L->len > SR_CS_LEAF)
		L->len = SR_CS_LEAF;
	L->hashed = L->len < SR_CS_MIN ? SR_CS_MIN : L->len;
	return 1;
}

#endif
