/*
 * byteplane.c: the CPU byte-plane transposition (see byteplane.h). It is both
 * the reference the CUDA kernels are tested against and the hot loop of the
 * chunk codec, so widths 2 and 4 (bf16/fp16 and fp32) get SIMD versions:
 * SSE2 (always present on x86-64) and AVX2 (chosen at run time). Every other
 * width, and other machines, take the portable loop.
 */
#include "config.h"

#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define SR_BP_X86 1
#endif

#include "byteplane.h"
#include "util.h"

/* Elements per block of the generic loop: keeps the source block in L1
 * while every plane takes its bytes from it. */
#define GENERIC_BLOCK 1024

static void
split_generic(const uint8_t *src, size_t m, unsigned w, uint8_t *dst)
{
	size_t b, i, end;
	unsigned k;

	for (b = 0; b < m; b += GENERIC_BLOCK) {
		end = b + GENERIC_BLOCK < m ? b + GENERIC_BLOCK : m;
		for (k = 0; k < w; k++) {
			uint8_t *p = dst + (size_t)k * m;
			for (i = b; i < end; i++)
				p[i] = src[i * w + k];
		}
	}
}

static void
join_generic(const uint8_t *src, size_t m, unsigned w, uint8_t *dst)
{
	size_t b, i, end;
	unsigned k;

	for (b = 0; b < m; b += GENERIC_BLOCK) {
		end = b + GENERIC_BLOCK < m ? b + GENERIC_BLOCK : m;
		for (k = 0; k < w; k++) {
			const uint8_t *p = src + (size_t)k * m;
			for (i = b; i < end; i++)
				dst[i * w + k] = p[i];
		}
	}
}

/* Scalar loops for the elements the vector loops leave over (from i on). */
static void
split2_scalar(const uint8_t *src, size_t i, size_t m, uint8_t *p0, uint8_t *p1)
{
	for (; i < m; i++) {
		p0[i] = src[2 * i];
		p1[i] = src[2 * i + 1];
	}
}

static void
join2_scalar(const uint8_t *p0, const uint8_t *p1, size_t i, size_t m, uint8_t *dst)
{
	for (; i < m; i++) {
		dst[2 * i] = p0[i];
		dst[2 * i + 1] = p1[i];
	}
}

static void
split4_scalar(const uint8_t *src, size_t i, size_t m, uint8_t *const p[4])
{
	for (; i < m; i++) {
		p[0][i] = src[4 * i];
		p[1][i] = src[4 * i + 1];
		p[2][i] = src[4 * i + 2];
		p[3][i] = src[4 * i + 3];
	}
}

static void
join4_scalar(const uint8_t *const p[4], size_t i, size_t m, uint8_t *dst)
{
	for (; i < m; i++) {
		dst[4 * i] = p[0][i];
		dst[4 * i + 1] = p[1][i];
		dst[4 * i + 2] = p[2][i];
		dst[4 * i + 3] = p[3][i];
	}
}

#ifdef SR_BP_X86
/*
 * SSE2, 16 elements a step. Width 2: masking and shifting each 16-bit element
 * then packing with unsigned saturation gathers the low bytes and the high
 * bytes. Width 4 is the width-2 split done twice: the first pass separates
 * bytes {0,2} from {1,3}, the second separates those pairs.
 */
static size_t
split2_sse2(const uint8_t *src, size_t m, uint8_t *p0, uint8_t *p1)
{
	const __m128i mask = _mm_set1_epi16(0x00ff);
	size_t i;

	for (i = 0; i + 16 <= m; i += 16) {
		__m128i a = _mm_loadu_si128((const __m128i *)(src + 2 * i));
		__m128i b = _mm_loadu_si128((const __m128i *)(src + 2 * i + 16));
		__m128i lo = _mm_packus_epi16(_mm_and_si128(a, mask), _mm_and_si128(b, mask));
		__m128i hi = _mm_packus_epi16(_mm_srli_epi16(a, 8), _mm_srli_epi16(b, 8));
		_mm_storeu_si128((__m128i *)(p0 + i), lo);
		_mm_storeu_si128((__m128i *)(p1 + i), hi);
	}
	return i;
}

static size_t
join2_sse2(const uint8_t *p0, const uint8_t *p1, size_t m, uint8_t *dst)
{
	size_t i;

	for (i = 0; i + 16 <= m; i += 16) {
		__m128i lo = _mm_loadu_si128((const __m128i *)(p0 + i));
		__m128i hi = _mm_loadu_si128((const __m128i *)(p1 + i));
		_mm_storeu_si128((__m128i *)(dst + 2 * i), _mm_unpacklo_epi8(lo, hi));
		_mm_storeu_si128((__m128i *)(dst + 2 * i + 16), _mm_unpackhi_epi8(lo, hi));
	}
	return i;
}

static size_t
split4_sse2(const uint8_t *src, size_t m, uint8_t *const p[4])
{
	const __m128i mask = _mm_set1_epi16(0x00ff);
	size_t i;

	for (i = 0; i + 16 <= m; i += 16) {
		const __m128i *s = (const __m128i *)(src + 4 * i);
		__m128i v0 = _mm_loadu_si128(s), v1 = _mm_loadu_si128(s + 1);
		__m128i v2 = _mm_loadu_si128(s + 2), v3 = _mm_loadu_si128(s + 3);
		/* bytes 0,2 and bytes 1,3 of elements 0-7 and 8-15 */
		__m128i e0 = _mm_packus_epi16(_mm_and_si128(v0, mask), _mm_and_si128(v1, mask));
		__m128i e1 = _mm_packus_epi16(_mm_and_si128(v2, mask), _mm_and_si128(v3, mask));
		__m128i o0 = _mm_packus_epi16(_mm_srli_epi16(v0, 8), _mm_srli_epi16(v1, 8));
		__m128i o1 = _mm_packus_epi16(_mm_srli_epi16(v2, 8), _mm_srli_epi16(v3, 8));

		_mm_storeu_si128((__m128i *)(p[0] + i), _mm_packus_epi16(
		    _mm_and_si128(e0, mask), _mm_and_si128(e1, mask)));
		_mm_storeu_si128((__m128i *)(p[2] + i), _mm_packus_epi16(
		    _mm_srli_epi16(e0, 8), _mm_srli_epi16(e1, 8)));
		_mm_storeu_si128((__m128i *)(p[1] + i), _mm_packus_epi16(
		    _mm_and_si128(o0, mask), _mm_and_si128(o1, mask)));
		_mm_storeu_si128((__m128i *)(p[3] + i), _mm_packus_epi16(
		    _mm_srli_epi16(o0, 8), _mm_srli_epi16(o1, 8)));
	}
	return i;
}

static size_t
join4_sse2(const uint8_t *const p[4], size_t m, uint8_t *dst)
{
	size_t i;

	for (i = 0; i + 16 <= m; i += 16) {
		__m128i b0 = _mm_loadu_si128((const __m128i *)(p[0] + i));
		__m128i b1 = _mm_loadu_si128((const __m128i *)(p[1] + i));
		__m128i b2 = _mm_loadu_si128((const __m128i *)(p[2] + i));
		__m128i b3 = _mm_loadu_si128((const __m128i *)(p[3] + i));
		__m128i a = _mm_unpacklo_epi8(b0, b1), b = _mm_unpackhi_epi8(b0, b1);
		__m128i c = _mm_unpacklo_epi8(b2, b3), d = _mm_unpackhi_epi8(b2, b3);
		__m128i *o = (__m128i *)(dst + 4 * i);

		_mm_storeu_si128(o, _mm_unpacklo_epi16(a, c));
		_mm_storeu_si128(o + 1, _mm_unpackhi_epi16(a, c));
		_mm_storeu_si128(o + 2, _mm_unpacklo_epi16(b, d));
		_mm_storeu_si128(o + 3, _mm_unpackhi_epi16(b, d));
	}
	return i;
}

/*
 * AVX2, 32 elements a step. The 256-bit pack/unpack instructions work within
 * 128-bit lanes, so each loop ends with a cross-lane permute to put the
 * halves back in element order.
 */
__attribute__((target("avx2"))) static size_t
split2_avx2(const uint8_t *src, size_t m, uint8_t *p0, uint8_t *p1)
{
	const __m256i mask = _mm256_set1_epi16(0x00ff);
	size_t i;

	for (i = 0; i + 32 <= m; i += 32) {
		__m256i a = _mm256_loadu_si256((const __m256i *)(src + 2 * i));
		__m256i b = _mm256_loadu_si256((const __m256i *)(src + 2 * i + 32));
		__m256i lo = _mm256_packus_epi16(_mm256_and_si256(a, mask), _mm256_and_si256(b, mask));
		__m256i hi = _mm256_packus_epi16(_mm256_srli_epi16(a, 8), _mm256_srli_epi16(b, 8));
		_mm256_storeu_si256((__m256i *)(p0 + i), _mm256_permute4x64_epi64(lo, 0xd8));
		_mm256_storeu_si256((__m256i *)(p1 + i), _mm256_permute4x64_epi64(hi, 0xd8));
	}
	return i;
}

__attribute__((target("avx2"))) static size_t
join2_avx2(const uint8_t *p0, const uint8_t *p1, size_t m, uint8_t *dst)
{
	size_t i;

	for (i = 0; i + 32 <= m; i += 32) {
		__m256i lo = _mm256_loadu_si256((const __m256i *)(p0 + i));
		__m256i hi = _mm256_loadu_si256((const __m256i *)(p1 + i));
		__m256i a = _mm256_unpacklo_epi8(lo, hi);	/* elements 0-7, 16-23 */
		__m256i b = _mm256_unpackhi_epi8(lo, hi);	/* elements 8-15, 24-31 */
		_mm256_storeu_si256((__m256i *)(dst + 2 * i), _mm256_permute2x128_si256(a, b, 0x20));
		_mm256_storeu_si256((__m256i *)(dst + 2 * i + 32), _mm256_permute2x128_si256(a, b, 0x31));
	}
	return i;
}

__attribute__((target("avx2"))) static size_t
split4_avx2(const uint8_t *src, size_t m, uint8_t *const p[4])
{
	/* Within each lane, gather byte k of the lane's 4 elements into dword k. */
	const __m256i gather = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14,
	    3, 7, 11, 15, 0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
	/* Then put dword k of both lanes side by side: qword k = byte k of 8 elements. */
	const __m256i pair = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
	size_t i;

	for (i = 0; i + 32 <= m; i += 32) {
		const __m256i *s = (const __m256i *)(src + 4 * i);
		__m256i v0 = _mm256_loadu_si256(s), v1 = _mm256_loadu_si256(s + 1);
		__m256i v2 = _mm256_loadu_si256(s + 2), v3 = _mm256_loadu_si256(s + 3);
		__m256i t0, t1, t2, t3;

		v0 = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(v0, gather), pair);
		v1 = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(v1, gather), pair);
		v2 = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(v2, gather), pair);
		v3 = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(v3, gather), pair);
		/* 4x4 transpose of qwords */
		t0 = _mm256_unpacklo_epi64(v0, v1);	/* q0 q0 | q2 q2 */
		t1 = _mm256_unpackhi_epi64(v0, v1);	/* q1 q1 | q3 q3 */
		t2 = _mm256_unpacklo_epi64(v2, v3);
		t3 = _mm256_unpackhi_epi64(v2, v3);
		_mm256_storeu_si256((__m256i *)(p[0] + i), _mm256_permute2x128_si256(t0, t2, 0x20));
		_mm256_storeu_si256((__m256i *)(p[1] + i), _mm256_permute2x128_si256(t1, t3, 0x20));
		_mm256_storeu_si256((__m256i *)(p[2] + i), _mm256_permute2x128_si256(t0, t2, 0x31));
		_mm256_storeu_si256((__m256i *)(p[3] + i), _mm256_permute2x128_si256(t1, t3, 0x31));
	}
	return i;
}

__attribute__((target("avx2"))) static size_t
join4_avx2(const uint8_t *const p[4], size_t m, uint8_t *dst)
{
	size_t i;

	for (i = 0; i + 32 <= m; i += 32) {
		__m256i b0 = _mm256_loadu_si256((const __m256i *)(p[0] + i));
		__m256i b1 = _mm256_loadu_si256((const __m256i *)(p[1] + i));
		__m256i b2 = _mm256_loadu_si256((const __m256i *)(p[2] + i));
		__m256i b3 = _mm256_loadu_si256((const __m256i *)(p[3] + i));
		__m256i a = _mm256_unpacklo_epi8(b0, b1), b = _mm256_unpackhi_epi8(b0, b1);
		__m256i c = _mm256_unpacklo_epi8(b2, b3), d = _mm256_unpackhi_epi8(b2, b3);
		/* lane 0 holds elements 0-15, lane 1 elements 16-31 */
		__m256i o0 = _mm256_unpacklo_epi16(a, c);	/* 0-3 | 16-19 */
		__m256i o1 = _mm256_unpackhi_epi16(a, c);	/* 4-7 | 20-23 */
		__m256i o2 = _mm256_unpacklo_epi16(b, d);	/* 8-11 | 24-27 */
		__m256i o3 = _mm256_unpackhi_epi16(b, d);	/* 12-15 | 28-31 */
		__m256i *o = (__m256i *)(dst + 4 * i);

		_mm256_storeu_si256(o, _mm256_permute2x128_si256(o0, o1, 0x20));
		_mm256_storeu_si256(o + 1, _mm256_permute2x128_si256(o2, o3, 0x20));
		_mm256_storeu_si256(o + 2, _mm256_permute2x128_si256(o0, o1, 0x31));
		_mm256_storeu_si256(o + 3, _mm256_permute2x128_si256(o2, o3, 0x31));
	}
	return i;
}

#endif /* SR_BP_X86 */

/* The instruction set to run: the one asked for if the CPU has it, else
 * the best it has. */
static enum sr_bp_isa
pick_isa(enum sr_bp_isa isa)
{
#ifdef SR_BP_X86
	int avx2 = __builtin_cpu_supports("avx2");

	if (isa == SR_BP_ISA_SCALAR || isa == SR_BP_ISA_SSE2)
		return isa;
	return avx2 ? SR_BP_ISA_AVX2 : SR_BP_ISA_SSE2;
#else
	(void)isa;
	return SR_BP_ISA_SCALAR;
#endif
}

static void
split2(const uint8_t *src, size_t m, uint8_t *dst, enum sr_bp_isa isa)
{
	uint8_t *p0 = dst, *p1 = dst + m;
	size_t i = 0;

#ifdef SR_BP_X86
	if (isa == SR_BP_ISA_AVX2)
		i = split2_avx2(src, m, p0, p1);
	else if (isa == SR_BP_ISA_SSE2)
		i = split2_sse2(src, m, p0, p1);
#endif
	split2_scalar(src, i, m, p0, p1);
}

static void
join2(const uint8_t *src, size_t m, uint8_t *dst, enum sr_bp_isa isa)
{
	const uint8_t *p0 = src, *p1 = src + m;
	size_t i = 0;

#ifdef SR_BP_X86
	if (isa == SR_BP_ISA_AVX2)
		i = join2_avx2(p0, p1, m, dst);
	else if (isa == SR_BP_ISA_SSE2)
		i = join2_sse2(p0, p1, m, dst);
#endif
	join2_scalar(p0, p1, i, m, dst);
}

static void
split4(const uint8_t *src, size_t m, uint8_t *dst, enum sr_bp_isa isa)
{
	uint8_t *const p[4] = { dst, dst + m, dst + 2 * m, dst + 3 * m };
	size_t i = 0;

#ifdef SR_BP_X86
	if (isa == SR_BP_ISA_AVX2)
		i = split4_avx2(src, m, p);
	else if (isa == SR_BP_ISA_SSE2)
		i = split4_sse2(src, m, p);
#endif
	split4_scalar(src, i, m, p);
}

static void
join4(const uint8_t *src, size_t m, uint8_t *dst, enum sr_bp_isa isa)
{
	const uint8_t *const p[4] = { src, src + m, src + 2 * m, src + 3 * m };
	size_t i = 0;

#ifdef SR_BP_X86
	if (isa == SR_BP_ISA_AVX2)
		i = join4_avx2(p, m, dst);
	else if (isa == SR_BP_ISA_SSE2)
		i = join4_sse2(p, m, dst);
#endif
	join4_scalar(p, i, m, dst);
}

/* Both directions share the shape: the kernels for widths 2 and 4 or the
 * generic one on the whole elements, then the n % width tail copied raw. */
static void
transpose(const uint8_t *src, size_t n, unsigned width, uint8_t *dst, int join,
    enum sr_bp_isa isa)
{
	size_t m, body;

	/* Widths come from the dtype table (1, 2, 4, 8). One outside 1..16
	 * would be a bug of the caller: it is copied raw (width 1), which the
	 * join of the same width undoes, rather than ending the process of the
	 * job that links the library. */
	if (width < 1 || width > 16)
		width = 1;
	m = n / width;
	body = m * width;
	/* no whole element (a NULL buffer of 0 bytes among them): nothing to
	 * transpose, and no arithmetic on the pointers, which for NULL is
	 * undefined (clang's UBSan says so) */
	switch (m == 0 ? 1 : width) {
	case 1:
		body = 0;
		break;
	case 2:
		(join ? join2 : split2)(src, m, dst, pick_isa(isa));
		break;
	case 4:
		(join ? join4 : split4)(src, m, dst, pick_isa(isa));
		break;
	default:
		(join ? join_generic : split_generic)(src, m, width, dst);
		break;
	}
	if (n > body)	/* the tail; all of it for width 1 */
		memcpy(dst + body, src + body, n - body);
}

void
sr_byteplane_split(const uint8_t *src, size_t n, unsigned width, uint8_t *dst)
{
	transpose(src, n, width, dst, 0, SR_BP_ISA_BEST);
}

void
sr_byteplane_join(const uint8_t *src, size_t n, unsigned width, uint8_t *dst)
{
	transpose(src, n, width, dst, 1, SR_BP_ISA_BEST);
}

void
sr_byteplane_split_isa(const uint8_t *src, size_t n, unsigned width, uint8_t *dst,
    enum sr_bp_isa isa)
{
	transpose(src, n, width, dst, 0, isa);
}

void
sr_byteplane_join_isa(const uint8_t *src, size_t n, unsigned width, uint8_t *dst,
    enum sr_bp_isa isa)
{
	transpose(src, n, width, dst, 1, isa);
}
