/*
 * kern.h: the device path's kernels (kern.cu) as the work of one thread,
 * for nvcc and for the host: one thread computes one output, with the
 * loops of model.c's CPU reference in the same order, from the same
 * starting value, so that each output is the same chain of float
 * operations as there and the device path's gradients, sums and Adam
 * steps are the CPU path's bits. No atomics, no tree reductions: a sum
 * over examples or micro-batches is one thread's loop, in order.
 *
 * The kernels of a step, in order (M micro-batches of B examples on this
 * rank; q = an example, part = a micro-batch):
 *   embed    x[q] = the context's embeddings          M*B*in threads
 *   hidden   h[q][j] = tanh(b1 + x[q] . w1[:, j])      M*B*H
 *   logits   p[q][k] = b2 + h[q] . w2[:, k]            M*B*V
 *   softmax  p[q] = softmax - onehot, lk[q] = loss     M*B
 *   gb2, gw2, dh, gb1, gw1, dx, gemb, loss: each micro-batch's gradient,
 *            into its part of `all` (parts[part], n + 1 floats: the
 *            gradient, then the summed loss)
 *   sum      sum[i] = (((0 + all[0][i]) + all[1][i]) + ...)   n + 1
 *   adam     this rank's slice [lo, hi) of theta, m, v     hi - lo
 * Every kernel takes the one struct ct_kargs (launched as a buffer:
 * cuLaunchKernel's `extra`), the device addresses in it.
 */
#ifndef CT_KERN_H
#define CT_KERN_H

#include <stdint.h>

#include "ctmath.h"

struct ct_kargs {
	int M, B, C, E, H, V;		/* micro-batches here, examples each, model.h's dims */
	int P;				/* micro-batches of a step, on all ranks */
	long long n;			/* parameters; a part is n + 1 floats */
	long long lo, hi;		/* this rank's slice of theta, m and v */
	long long oemb, ow1, ob1, ow2, ob2;	/* the tensors' offsets in theta */
	float scale, c1, c2, lr, wd;	/* Adam: 1 / examples, bias corrections */
	const uint8_t *ctx, *tgt;	/* M*B*C, M*B */
	float *theta;			/* n */
	float *x, *h, *p, *dh, *dx, *lk;	/* M*B*in, *H, *V, *H, *in, M*B */
	float *all;			/* P parts; this rank's are all + first * (n + 1) */
	long long first;		/* this rank's first micro-batch */
	float *sum;			/* n + 1 */
	float *m, *v;			/* hi - lo */
};

/* The kernels: X(name, threads). */
#define CT_KERNELS(X) \
	X(embed, (long long)a->M * a->B * a->C * a->E) \
	X(hidden, (long long)a->M * a->B * a->H) \
	X(logits, (long long)a->M * a->B * a->V) \
	X(softmax, (long long)a->M * a->B) \
	X(gb2, (long long)a->M * a->V) \
	X(gw2, (long long)a->M * a->H * a->V) \
	X(dh, (long long)a->M * a->B * a->H) \
	X(gb1, (long long)a->M * a->H) \
	X(gw1, (long long)a->M * a->C * a->E * a->H) \
	X(dx, (long long)a->M * a->B * a->C * a->E) \
	X(gemb, (long long)a->M * a->V * a->E) \
	X(loss, (long long)a->M) \
	X(sum, a->n + 1) \
	X(adam, a->hi - a->lo)

#define CT_KERNEL_ID(name, threads) CT_K_##name,
enum ct_kernel { CT_KERNELS(CT_KERNEL_ID) CT_K_COUNT };
#undef CT_KERNEL_ID

/* Micro-batch part's gradient, n + 1 floats. */
static inline CT_HD float *
ct_part(const struct ct_kargs *a, long long part)
{
	return a->all + (a->first + part) * (a->n + 1);
}

static inline CT_HD void
ct_k_embed_body(const struct ct_kargs *a, long long t)
{
	const long long in = (long long)a->C * a->E, q = t / in, i = t % in;
	const long long c = i / a->E, e = i % a->E;

	a->x[t] = a->theta[a->oemb + (long long)a->ctx[q * a->C + c] * a->E + e];
}

static inline CT_HD void
ct_k_hidden_body(const struct ct_kargs *a, long long t)
{
	const long long in = (long long)a->C * a->E, q = t / a->H, j = t % a->H;
	float s = a->theta[a->ob1 + j];
	long long i;

	for (i = 0; i < in; i++)
		s += a->x[q * in + i] * a->theta[a->ow1 + i * a->H + j];
	a->h[t] = ct_tanhf(s);
}

static inline CT_HD void
ct_k_logits_body(const struct ct_kargs *a, long long t)
{
	const long long q = t / a->V, k = t % a->V;
	float s = a->theta[a->ob2 + k];
	long long j;

	for (j = 0; j < a->H; j++)
		s += a->h[q * a->H + j] * a->theta[a->ow2 + j * a->V + k];
	a->p[t] = s;
}

static inline CT_HD void
ct_k_softmax_body(const struct ct_kargs *a, long long q)
{
	float *p = a->p + q * a->V, max = p[0], sum = 0.0f, zt;
	const int target = a->tgt[q];
	int k;

	for (k = 1; k < a->V; k++)
		if (p[k] > max)
			max = p[k];
	zt = p[target] - max;
	for (k = 0; k < a->V; k++) {
		p[k] = ct_expf(p[k] - max);
		sum += p[k];
	}
	a->lk[q] = ct_logf(sum) - zt;
	for (k = 0; k < a->V; k++)
		p[k] /= sum;
	p[target] -= 1.0f;
}

/* The sum over a micro-batch's examples of src[q][j] (rows of `width`),
 * for thread t = part * width + j: a bias's gradient. */
static inline CT_HD float
ct_sum_examples(const struct ct_kargs *a, const float *src, long long width, long long t)
{
	const long long part = t / width, j = t % width;
	float g = 0.0f;
	long long b;

	for (b = 0; b < a->B; b++)
		g += src[(part * a->B + b) * width + j];
	return g;
}

static inline CT_HD void
ct_k_gb2_body(const struct ct_kargs *a, long long t)
{
	ct_part(a, t / a->V)[a->ob2 + t % a->V] = ct_sum_examples(a, a->p, a->V, t);
}

static inline CT_HD void
ct_k_gw2_body(const struct ct_kargs *a, long long t)
{
	const long long hv = (long long)a->H * a->V, part = t / hv, j = t % hv / a->V;
	const long long k = t % a->V;
	float g = 0.0f;
	long long b, q;

	for (b = 0; b < a->B; b++) {
		q = part * a->B + b;
		g += a->h[q * a->H + j] * a->p[q * a->V + k];
	}
	ct_part(a, part)[a->ow2 + j * a->V + k] = g;
}

static inline CT_HD void
ct_k_dh_body(const struct ct_kargs *a, long long t)
{
	const long long q = t / a->H, j = t % a->H;
	const float hj = a->h[t];
	float s = 0.0f;
	long long k;

	for (k = 0; k < a->V; k++)
		s += a->theta[a->ow2 + j * a->V + k] * a->p[q * a->V + k];
	a->dh[t] = s * (1.0f - hj * hj);
}

static inline CT_HD void
ct_k_gb1_body(const struct ct_kargs *a, long long t)
{
	ct_part(a, t / a->H)[a->ob1 + t % a->H] = ct_sum_examples(a, a->dh, a->H, t);
}

static inline CT_HD void
ct_k_gw1_body(const struct ct_kargs *a, long long t)
{
	const long long in = (long long)a->C * a->E, ih = in * a->H, part = t / ih;
	const long long i = t % ih / a->H, j = t % a->H;
	float g = 0.0f;
	long long b, q;

	for (b = 0; b < a->B; b++) {
		q = part * a->B + b;
		g += a->x[q * in + i] * a->dh[q * a->H + j];
	}
	ct_part(a, part)[a->ow1 + i * a->H + j] = g;
}

static inline CT_HD void
ct_k_dx_body(const struct ct_kargs *a, long long t)
{
	const long long in = (long long)a->C * a->E, q = t / in, i = t % in;
	float s = 0.0f;
	long long j;

	for (j = 0; j < a->H; j++)
		s += a->theta[a->ow1 + i * a->H + j] * a->dh[q * a->H + j];
	a->dx[t] = s;
}

static inline CT_HD void
ct_k_gemb_body(const struct ct_kargs *a, long long t)
{
	const long long in = (long long)a->C * a->E, ve = (long long)a->V * a->E;
	const long long part = t / ve, v = t % ve / a->E, e = t % a->E;
	float g = 0.0f;
	long long b, c, q;

	for (b = 0; b < a->B; b++) {
		q = part * a->B + b;
		for (c = 0; c < a->C; c++)
			if (a->ctx[q * a->C + c] == v)
				g += a->dx[q * in + c * a->E + e];
	}
	ct_part(a, part)[a->oemb + v * a->E + e] = g;
}

static inline CT_HD void
ct_k_loss_body(const struct ct_kargs *a, long long part)
{
	float l = 0.0f;
	long long b;

	for (b = 0; b < a->B; b++)
		l += a->lk[part * a->B + b];
	ct_part(a, part)[a->n] = l;
}

static inline CT_HD void
ct_k_sum_body(const struct ct_kargs *a, long long i)
{
	float s = 0.0f;
	long long part;

	for (part = 0; part < a->P; part++)
		s += a->all[part * (a->n + 1) + i];
	a->sum[i] = s;
}

/* ctrain.c's adam(), one element of the slice. */
static inline CT_HD void
ct_k_adam_body(const struct ct_kargs *a, long long t)
{
	const float b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
	const long long i = a->lo + t;
	float gi = a->sum[i] * a->scale, *m = &a->m[t], *v = &a->v[t];

	*m = b1 * *m + (1.0f - b1) * gi;
	*v = b2 * *v + (1.0f - b2) * gi * gi;
	a->theta[i] -= a->lr * ((*m / a->c1) / (sqrtf(*v / a->c2) + eps) + a->wd * a->theta[i]);
}

#endif
