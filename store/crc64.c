/*
 * crc64.c: CRC-64/NVME (crc64.h), by tables and by folding with carry-less
 * multiplication. Azure checks each block's CRC, so a save into az://
 * computes one over every byte it uploads: slicing by 8 runs at 1.9-2.2
 * GB/s a core, a fifth of the save's client CPU (doc/benchmarks.md);
 * folding runs at 12.8 GB/s.
 *
 * How the folding works (the method of Gopal et al., "Fast CRC computation
 * for generic polynomials using PCLMULQDQ", Intel 2009): a reflected CRC
 * reads the first bit of the message as its highest power, so 16 bytes
 * loaded little-endian are a polynomial L·x^64 + H of degree < 128 (L the
 * first 8 bytes, bit i of each word the power 63 - i). Moving such a block
 * D bits further into the message multiplies it by x^D, and modulo P that
 * is L·(x^(64+D) mod P) + H·(x^D mod P): two 64-by-64 carry-less products,
 * whose sum (degree < 128) is xored into the block found D bits on. Eight
 * blocks (128 bytes) are folded at once, D = 1024, then into one, then 16
 * bytes at a time; the last 128-bit value A stands for everything before
 * it, and the CRC register of A, A·x^64 mod P, is what the tables compute
 * for A's 16 bytes from a register of 0. The rest (< 16 bytes) goes through
 * the tables too. A product of two reflected words comes out one power
 * lower than its value in 128 reflected bits, so each constant is x^(n-1)
 * mod P. The constants are computed from P at first use, like the tables.
 */
#include "config.h"

#include <endian.h>
#include <pthread.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define SR_CRC64_X86 1
#endif

#include "crc64.h"

#define CRC64_POLY 0xAD93D23594C93659ULL	/* x^64 implied; bit i is x^i */
#define CRC64_POLY_REFL 0x9A6C9329AC4BC9B5ULL	/* the same, bit i is x^(63-i) */
#define FOLD_LANES 8

struct crc64_consts {
	uint64_t table[8][256];
	/* fold[j]: moving a 128-bit block 128·j bits on, j = 1..8: the
	 * reflected x^(128j+63) mod P for its first word, x^(128j-1) mod P
	 * for its second. */
	uint64_t fold[FOLD_LANES + 1][2];
	int clmul;
};

static struct crc64_consts crc_k;
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

/* x^n mod P, bit i the power i. */
static uint64_t
xpow_mod(unsigned n)
{
	uint64_t v = 1;

	while (n-- > 0)
		v = v >> 63 ? (v << 1) ^ CRC64_POLY : v << 1;
	return v;
}

static uint64_t
reflect64(uint64_t v)
{
	uint64_t r = 0;
	int i;

	for (i = 0; i < 64; i++, v >>= 1)
		r = (r << 1) | (v & 1);
	return r;
}

static void
crc_init(void)
{
	int i, j, k;

	for (i = 0; i < 256; i++) {
		uint64_t c = (uint64_t)i;

		for (k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ CRC64_POLY_REFL : c >> 1;
		crc_k.table[0][i] = c;
	}
	for (i = 0; i < 256; i++)
		for (j = 1; j < 8; j++)
			crc_k.table[j][i] = (crc_k.table[j - 1][i] >> 8) ^
			    crc_k.table[0][crc_k.table[j - 1][i] & 0xff];
	for (j = 1; j <= FOLD_LANES; j++) {
		crc_k.fold[j][0] = reflect64(xpow_mod(128 * (unsigned)j + 63));
		crc_k.fold[j][1] = reflect64(xpow_mod(128 * (unsigned)j - 1));
	}
#ifdef SR_CRC64_X86
	crc_k.clmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
#endif
}

/* The register (no initial or final inversion) carried over len bytes. */
static uint64_t
table_raw(uint64_t crc, const unsigned char *p, size_t len)
{
	while (len >= 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		v = le64toh(v) ^ crc;
		crc = crc_k.table[7][v & 0xff] ^ crc_k.table[6][(v >> 8) & 0xff] ^
		    crc_k.table[5][(v >> 16) & 0xff] ^ crc_k.table[4][(v >> 24) & 0xff] ^
		    crc_k.table[3][(v >> 32) & 0xff] ^ crc_k.table[2][(v >> 40) & 0xff] ^
		    crc_k.table[1][(v >> 48) & 0xff] ^ crc_k.table[0][v >> 56];
		p += 8;
		len -= 8;
	}
	while (len-- > 0)
		crc = crc_k.table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

uint64_t
sr_crc64_table(uint64_t crc, const void *buf, size_t len)
{
	pthread_once(&crc_once, crc_init);
	return ~table_raw(~crc, buf, len);
}

#ifdef SR_CRC64_X86
/* Block x moved 128·j bits on (modulo P, degree < 128). */
__attribute__((target("pclmul,sse4.1"))) static inline __m128i
fold_by(__m128i x, int j)
{
	__m128i k = _mm_set_epi64x((long long)crc_k.fold[j][1], (long long)crc_k.fold[j][0]);

	return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11));
}

/* The register over len >= 16 * FOLD_LANES bytes, from register crc. */
__attribute__((target("pclmul,sse4.1"))) static uint64_t
clmul_raw(uint64_t crc, const unsigned char *p, size_t len)
{
	__m128i lane[FOLD_LANES], acc;
	unsigned char last[16];
	int i;

	for (i = 0; i < FOLD_LANES; i++)
		lane[i] = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i));
	lane[0] = _mm_xor_si128(lane[0], _mm_cvtsi64_si128((long long)crc));
	p += 16 * FOLD_LANES;
	len -= 16 * FOLD_LANES;
	while (len >= 16 * FOLD_LANES) {
		for (i = 0; i < FOLD_LANES; i++)
			lane[i] = _mm_xor_si128(fold_by(lane[i], FOLD_LANES),
			    _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i)));
		p += 16 * FOLD_LANES;
		len -= 16 * FOLD_LANES;
	}
	acc = lane[FOLD_LANES - 1];
	for (i = 0; i < FOLD_LANES - 1; i++)
		acc = _mm_xor_si128(acc, fold_by(lane[i], FOLD_LANES - 1 - i));
	while (len >= 16) {
		acc = _mm_xor_si128(fold_by(acc, 1), _mm_loadu_si128((const __m128i *)(const void *)p));
		p += 16;
		len -= 16;
	}
	_mm_storeu_si128((__m128i *)(void *)last, acc);
	return table_raw(table_raw(0, last, sizeof last), p, len);
}
#endif

uint64_t
sr_crc64(uint64_t crc, const void *buf, size_t len)
{
	pthread_once(&crc_once, crc_init);
#ifdef SR_CRC64_X86
	if (crc_k.clmul && len >= 16 * FOLD_LANES)
		return ~clmul_raw(~crc, buf, len);
#endif
	return ~table_raw(~crc, buf, len);
}

int
sr_crc64_folds(void)
{
	pthread_once(&crc_once, crc_init);
	return crc_k.clmul;
}
