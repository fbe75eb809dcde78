/*
 * ctmath.h: e^x, log x and tanh x for ctrain, written with + - * /, rintf,
 * frexpf and ldexpf alone, for the host and (under nvcc) the GPU. The C
 * library's expf and the CUDA math library's are different functions whose
 * results differ in the last bit for some inputs; these are one function,
 * and IEEE arithmetic without contraction (-ffp-contract=off on the host,
 * --fmad=false for nvcc) rounds each step the same on both, so the CPU
 * path and the device path of ctrain compute the same bits.
 *
 * Accurate to a few units in the last place on the ranges ctrain feeds
 * them (the softmax's exponents are <= 0, its sums in [1, vocab], tanh of
 * any pre-activation): plenty for training and for the gradient check.
 */
#ifndef CT_MATH_H
#define CT_MATH_H

#include <math.h>

#ifdef __CUDACC__
#define CT_HD __host__ __device__
#else
#define CT_HD
#endif

/* e^x: x = k ln 2 + r with |r| <= ln 2 / 2 (ln 2 in two parts, the first
 * exact in k times it), e^r by its Taylor series to r^7, times 2^k. */
static inline CT_HD float
ct_expf(float x)
{
	float k, r, p;

	if (x < -87.0f)
		return 0.0f;
	if (x > 88.0f)
		return INFINITY;
	k = rintf(x * 1.44269504f);
	r = (x - k * 0.693359375f) + k * 2.12194440e-4f;
	p = 1.98412698e-4f;
	p = p * r + 1.38888889e-3f;
	p = p * r + 8.33333333e-3f;
	p = p * r + 4.16666667e-2f;
	p = p * r + 1.66666667e-1f;
	p = p * r + 0.5f;
	p = p * r + 1.0f;
	p = p * r + 1.0f;
	return ldexpf(p, (int)k);
}

/* log x for a positive normal x: x = m 2^e with m in [sqrt(1/2), sqrt(2)),
 * log m = 2 atanh s with s = (m - 1) / (m + 1), |s| < 0.172, by its series
 * to s^9. */
static inline CT_HD float
ct_logf(float x)
{
	float m, s, z, p;
	int e;

	m = frexpf(x, &e);
	if (m < 0.707106781f) {
		m = m * 2.0f;
		e = e - 1;
	}
	s = (m - 1.0f) / (m + 1.0f);
	z = s * s;
	p = 1.11111111e-1f;
	p = p * z + 1.42857143e-1f;
	p = p * z + 2.00000000e-1f;
	p = p * z + 3.33333333e-1f;
	p = p * z + 1.0f;
	return (float)e * 0.693147181f + 2.0f * s * p;
}

/* tanh x: its Taylor series to x^17 below 0.5 (no cancellation near 0),
 * 1 - 2 / (e^2|x| + 1) up to 9, and +-1 past (tanh 9 rounds to 1). */
static inline CT_HD float
ct_tanhf(float x)
{
	float a = x < 0.0f ? -x : x, z, p, t;

	if (a < 0.5f) {
		z = x * x;
		p = 5.90027441e-4f;
		p = p * z - 1.45583439e-3f;
		p = p * z + 3.59212804e-3f;
		p = p * z - 8.86323553e-3f;
		p = p * z + 2.18694885e-2f;
		p = p * z - 5.39682540e-2f;
		p = p * z + 1.33333333e-1f;
		p = p * z - 3.33333333e-1f;
		return x + x * z * p;
	}
	t = a < 9.0f ? 1.0f - 2.0f / (ct_expf(2.0f * a) + 1.0f) : 1.0f;
	return x < 0.0f ? -t : t;
}

#endif
