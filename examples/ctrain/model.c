/*
 * model.c: ctrain's character-level MLP (model.h): its layout in the flat
 * parameter vector, its initialisation, and the forward and backward pass
 * of a micro-batch. Plain loops in a fixed order and no fast-math, so the
 * gradient of the same examples at the same parameters is the same bytes
 * on every rank and in every run (and the device path's, kern.h: e^x, log
 * and tanh are ctmath.h's, not the C library's): what makes ctrain's resumed and
 * resharded runs bit-identical to an uninterrupted one.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctmath.h"
#include "model.h"

struct ct_work {
	float *x;		/* the embedded context, context * embed */
	float *h;		/* the hidden layer after tanh */
	float *p;		/* the softmax, then d loss / d logits */
	float *dh;		/* d loss / d hidden (before tanh) */
	float *dx;		/* d loss / d x */
};

uint64_t
ct_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

void
ct_model_layout(const struct ct_dims *d, struct ct_tensor *t)
{
	const uint64_t in = (uint64_t)d->context * (uint64_t)d->embed;
	size_t off = 0;
	int i;

	t[CT_EMB] = (struct ct_tensor){ "emb", 2, { (uint64_t)d->vocab, (uint64_t)d->embed }, 0 };
	t[CT_W1] = (struct ct_tensor){ "w1", 2, { in, (uint64_t)d->hidden }, 0 };
	t[CT_B1] = (struct ct_tensor){ "b1", 1, { (uint64_t)d->hidden, 0 }, 0 };
	t[CT_W2] = (struct ct_tensor){ "w2", 2, { (uint64_t)d->hidden, (uint64_t)d->vocab }, 0 };
	t[CT_B2] = (struct ct_tensor){ "b2", 1, { (uint64_t)d->vocab, 0 }, 0 };
	for (i = 0; i < CT_NTENSORS; i++) {
		t[i].offset = off;
		off += (size_t)t[i].shape[0] * (t[i].ndim == 2 ? (size_t)t[i].shape[1] : 1);
	}
}

size_t
ct_model_size(const struct ct_dims *d)
{
	struct ct_tensor t[CT_NTENSORS];

	ct_model_layout(d, t);
	return t[CT_B2].offset + (size_t)d->vocab;
}

/* Uniform in [-a, a): 24 random bits, exact in a float. */
static float
uniform(uint64_t seed, uint64_t i, float a)
{
	float u = (float)(ct_mix(seed ^ ct_mix(i)) >> 40) * (1.0f / 16777216.0f);

	return (2.0f * u - 1.0f) * a;
}

void
ct_model_init(const struct ct_dims *d, uint64_t seed, float *theta)
{
	struct ct_tensor t[CT_NTENSORS];
	/* the scales keep tanh out of saturation and start the softmax
	 * near uniform (a loss near log(vocab)) */
	const float a1 = 1.0f / sqrtf((float)(d->context * d->embed));
	const float a2 = 0.5f / sqrtf((float)d->hidden);
	size_t i, n = ct_model_size(d);

	ct_model_layout(d, t);
	for (i = 0; i < n; i++) {
		float a = 0.0f;		/* the biases start at 0 */
		if (i < t[CT_W1].offset)
			a = 1.0f;
		else if (i < t[CT_B1].offset)
			a = a1;
		else if (i >= t[CT_W2].offset && i < t[CT_B2].offset)
			a = a2;
		theta[i] = a != 0.0f ? uniform(seed, i, a) : 0.0f;
	}
}

struct ct_work *
ct_work_new(const struct ct_dims *d)
{
	struct ct_work *w = calloc(1, sizeof *w);
	size_t in = (size_t)d->context * (size_t)d->embed;

	if (w == NULL)
		return NULL;
	w->x = calloc(in, sizeof *w->x);
	w->h = calloc((size_t)d->hidden, sizeof *w->h);
	w->p = calloc((size_t)d->vocab, sizeof *w->p);
	w->dh = calloc((size_t)d->hidden, sizeof *w->dh);
	w->dx = calloc(in, sizeof *w->dx);
	if (w->x == NULL || w->h == NULL || w->p == NULL || w->dh == NULL || w->dx == NULL) {
		ct_work_free(w);
		return NULL;
	}
	return w;
}

void
ct_work_free(struct ct_work *w)
{
	if (w == NULL)
		return;
	free(w->x);
	free(w->h);
	free(w->p);
	free(w->dh);
	free(w->dx);
	free(w);
}

/* One example: its loss, and its gradient added to grad. */
static float
example(const struct ct_dims *d, struct ct_work *w, const struct ct_tensor *t,
    const float *theta, const uint8_t *ctx, int target, float *grad)
{
	const int C = d->context, E = d->embed, H = d->hidden, V = d->vocab, in = C * E;
	const float *emb = theta + t[CT_EMB].offset, *w1 = theta + t[CT_W1].offset;
	const float *b1 = theta + t[CT_B1].offset, *w2 = theta + t[CT_W2].offset;
	const float *b2 = theta + t[CT_B2].offset;
	float *gemb = grad + t[CT_EMB].offset, *gw1 = grad + t[CT_W1].offset;
	float *gb1 = grad + t[CT_B1].offset, *gw2 = grad + t[CT_W2].offset;
	float *gb2 = grad + t[CT_B2].offset;
	float max, sum, zt, loss;
	int c, i, j, k;

	/* forward */
	for (c = 0; c < C; c++)
		memcpy(w->x + c * E, emb + (size_t)ctx[c] * (size_t)E, (size_t)E * sizeof *w->x);
	for (j = 0; j < H; j++)
		w->h[j] = b1[j];
	for (i = 0; i < in; i++) {
		const float xi = w->x[i], *row = w1 + (size_t)i * (size_t)H;
		for (j = 0; j < H; j++)
			w->h[j] += xi * row[j];
	}
	for (j = 0; j < H; j++)
		w->h[j] = ct_tanhf(w->h[j]);
	for (k = 0; k < V; k++)
		w->p[k] = b2[k];
	for (j = 0; j < H; j++) {
		const float hj = w->h[j], *row = w2 + (size_t)j * (size_t)V;
		for (k = 0; k < V; k++)
			w->p[k] += hj * row[k];
	}
	max = w->p[0];
	for (k = 1; k < V; k++)
		if (w->p[k] > max)
			max = w->p[k];
	zt = w->p[target] - max;
	sum = 0.0f;
	for (k = 0; k < V; k++) {
		w->p[k] = ct_expf(w->p[k] - max);
		sum += w->p[k];
	}
	/* -log softmax[target] as log-sum-exp: finite however small */
	loss = ct_logf(sum) - zt;

	/* backward: d loss / d logits = softmax - onehot(target) */
	for (k = 0; k < V; k++)
		w->p[k] /= sum;
	w->p[target] -= 1.0f;
	for (k = 0; k < V; k++)
		gb2[k] += w->p[k];
	for (j = 0; j < H; j++) {
		const float hj = w->h[j], *row = w2 + (size_t)j * (size_t)V;
		float *grow = gw2 + (size_t)j * (size_t)V, s = 0.0f;
		for (k = 0; k < V; k++) {
			grow[k] += hj * w->p[k];
			s += row[k] * w->p[k];
		}
		w->dh[j] = s * (1.0f - hj * hj);
	}
	for (j = 0; j < H; j++)
		gb1[j] += w->dh[j];
	for (i = 0; i < in; i++) {
		const float xi = w->x[i], *row = w1 + (size_t)i * (size_t)H;
		float *grow = gw1 + (size_t)i * (size_t)H, s = 0.0f;
		for (j = 0; j < H; j++) {
			grow[j] += xi * w->dh[j];
			s += row[j] * w->dh[j];
		}
		w->dx[i] = s;
	}
	for (c = 0; c < C; c++) {
		float *g = gemb + (size_t)ctx[c] * (size_t)E;
		for (i = 0; i < E; i++)
			g[i] += w->dx[c * E + i];
	}
	return loss;
}

float
ct_model_grad(const struct ct_dims *d, struct ct_work *w, const float *theta,
    const uint8_t *ctx, const uint8_t *targets, int n, float *grad)
{
	struct ct_tensor t[CT_NTENSORS];
	float loss = 0.0f;
	int k;

	ct_model_layout(d, t);
	memset(grad, 0, ct_model_size(d) * sizeof *grad);
	for (k = 0; k < n; k++)
		loss += example(d, w, t, theta, ctx + (size_t)k * (size_t)d->context, targets[k], grad);
	return loss;
}

double
ct_model_gradcheck(const struct ct_dims *d, struct ct_work *w, float *theta,
    const uint8_t *ctx, const uint8_t *targets, int n, uint64_t seed, int count)
{
	struct ct_tensor t[CT_NTENSORS];
	size_t size = ct_model_size(d);
	float *grad = malloc(size * sizeof *grad), *scratch = malloc(size * sizeof *scratch);
	const float h = 0.01f;
	double worst = 0.0;
	int k;

	if (grad == NULL || scratch == NULL) {
		free(grad);
		free(scratch);
		return INFINITY;
	}
	ct_model_layout(d, t);
	ct_model_grad(d, w, theta, ctx, targets, n, grad);
	for (k = 0; k < count; k++) {
		const struct ct_tensor *tk = &t[k % CT_NTENSORS];
		size_t elems = (size_t)tk->shape[0] * (tk->ndim == 2 ? (size_t)tk->shape[1] : 1);
		size_t j = tk->offset + (size_t)(ct_mix(seed ^ ct_mix((uint64_t)k)) % elems);
		float keep = theta[j], up, down;
		double num, err;

		theta[j] = keep + h;
		up = ct_model_grad(d, w, theta, ctx, targets, n, scratch);
		theta[j] = keep - h;
		down = ct_model_grad(d, w, theta, ctx, targets, n, scratch);
		theta[j] = keep;
		num = ((double)up - (double)down) / (2.0 * (double)h);
		err = fabs(num - (double)grad[j]) / fmax(fabs(num) + fabs((double)grad[j]), 0.01);
		if (err > worst)
			worst = err;
	}
	free(grad);
	free(scratch);
	return worst;
}
