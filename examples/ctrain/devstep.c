/*
 * devstep.c: ctrain's step on the GPU (devstep.h): the device buffers,
 * the kernels in order, the NCCL exchange, and the communicator's
 * lifetime around checkpoints.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "devstep.h"

int
ct_devstep_open(struct ct_devstep *ds, const char *cuda_lib, const char *nccl_lib,
    int ordinal, const struct ct_dims *d, int M, int B, int P, size_t first, size_t n,
    size_t lo, size_t hi, const float *theta, char *err)
{
	struct ct_tensor t[CT_NTENSORS];
	struct ct_kargs *k = &ds->k;
	const size_t q = (size_t)M * (size_t)B, in = (size_t)d->context * (size_t)d->embed;
	const size_t f = sizeof(float);
	struct { void *p; size_t bytes; } bufs[] = {
		{ &k->ctx, q * (size_t)d->context }, { &k->tgt, q }, { &k->theta, n * f },
		{ &k->x, q * in * f }, { &k->h, q * (size_t)d->hidden * f },
		{ &k->p, q * (size_t)d->vocab * f }, { &k->dh, q * (size_t)d->hidden * f },
		{ &k->dx, q * in * f }, { &k->lk, q * f }, { &k->all, (size_t)P * (n + 1) * f },
		{ &k->sum, (n + 1) * f }, { &k->m, (hi - lo + 1) * f }, { &k->v, (hi - lo + 1) * f },
		{ &ds->vote, sizeof(int32_t) },
	};
	size_t i;

	memset(ds, 0, sizeof *ds);
	_Static_assert(sizeof bufs / sizeof bufs[0] <= sizeof ds->mem / sizeof ds->mem[0],
	    "room for the buffers");
	ct_model_layout(d, t);
	*k = (struct ct_kargs){ .M = M, .B = B, .C = d->context, .E = d->embed, .H = d->hidden,
	    .V = d->vocab, .P = P, .n = (long long)n, .lo = (long long)lo, .hi = (long long)hi,
	    .oemb = (long long)t[CT_EMB].offset, .ow1 = (long long)t[CT_W1].offset,
	    .ob1 = (long long)t[CT_B1].offset, .ow2 = (long long)t[CT_W2].offset,
	    .ob2 = (long long)t[CT_B2].offset, .first = (long long)first };
	if ((ds->gpu = ct_gpu_open(cuda_lib, ordinal, err)) == NULL)
		return -1;
	if ((ds->comm = ct_comm_open(nccl_lib, err)) == NULL)
		return -1;
	for (i = 0; i < sizeof bufs / sizeof bufs[0]; i++) {
		uint64_t dptr;
		if (ct_gpu_alloc(ds->gpu, bufs[i].bytes, &dptr, err) == -1)
			return -1;
		ds->mem[ds->nmem++] = dptr;
		/* a device address in a pointer field: never dereferenced here */
		if (bufs[i].p == (void *)&ds->vote)
			ds->vote = dptr;
		else
			*(void **)bufs[i].p = (void *)(uintptr_t)dptr;
	}
	return ct_gpu_put(ds->gpu, (uint64_t)(uintptr_t)k->theta, theta, n * f, err);
}

void
ct_devstep_close(struct ct_devstep *ds)
{
	int i;

	ct_comm_close(ds->comm);
	for (i = 0; i < ds->nmem; i++)
		ct_gpu_free(ds->gpu, ds->mem[i]);
	ct_gpu_close(ds->gpu);
	memset(ds, 0, sizeof *ds);
}

static uint64_t
addr(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

int
ct_devstep_run(struct ct_devstep *ds, struct ct_group *g, const uint8_t *ctx,
    const uint8_t *tgt, int vote, long long step, float lr, float wd, long long examples,
    float *loss, int *agreed, char *err)
{
	static const enum ct_kernel grads[] = { CT_K_embed, CT_K_hidden, CT_K_logits, CT_K_softmax,
	    CT_K_gb2, CT_K_gw2, CT_K_dh, CT_K_gb1, CT_K_gw1, CT_K_dx, CT_K_gemb, CT_K_loss };
	struct ct_kargs *k = &ds->k;
	const size_t q = (size_t)k->M * (size_t)k->B;
	int32_t v = vote;
	size_t i;

	if (!ct_comm_live(ds->comm) && ct_comm_init(ds->comm, g, err) == -1)
		return -1;
	k->scale = 1.0f / (float)examples;
	k->c1 = (float)(1.0 - pow(0.9, (double)(step + 1)));
	k->c2 = (float)(1.0 - pow(0.999, (double)(step + 1)));
	k->lr = lr;
	k->wd = wd;
	if (ct_gpu_put(ds->gpu, addr(k->ctx), ctx, q * (size_t)k->C, err) == -1 ||
	    ct_gpu_put(ds->gpu, addr(k->tgt), tgt, q, err) == -1 ||
	    ct_gpu_put(ds->gpu, ds->vote, &v, sizeof v, err) == -1)
		return -1;
	for (i = 0; i < sizeof grads / sizeof grads[0]; i++)
		if (ct_gpu_launch(ds->gpu, grads[i], k, err) == -1)
			return -1;
	if (ct_comm_allgatherv(ds->comm, addr(k->all), (size_t)k->P, (size_t)k->n + 1,
	    ct_gpu_stream(ds->gpu), "the micro-batches' gradients", err) == -1 ||
	    ct_comm_max(ds->comm, ds->vote, ct_gpu_stream(ds->gpu), "the checkpoint vote", err) == -1)
		return -1;
	if (ct_gpu_launch(ds->gpu, CT_K_sum, k, err) == -1 ||
	    ct_gpu_launch(ds->gpu, CT_K_adam, k, err) == -1)
		return -1;
	if (ct_comm_allgatherv(ds->comm, addr(k->theta), (size_t)k->n, 1, ct_gpu_stream(ds->gpu),
	    "the parameters", err) == -1)
		return -1;
	if (ct_gpu_get(ds->gpu, loss, addr(k->sum) + (uint64_t)k->n * sizeof(float), sizeof *loss,
	    err) == -1 || ct_gpu_get(ds->gpu, &v, ds->vote, sizeof v, err) == -1)
		return -1;
	*agreed = v;
	return 0;
}

int
ct_devstep_quiesce(struct ct_devstep *ds, char *err)
{
	return ct_gpu_sync(ds->gpu, err) == -1 ? -1 : ct_comm_abort(ds->comm, err);
}

int
ct_devstep_fetch(struct ct_devstep *ds, float *theta, float *m, float *v, char *err)
{
	const size_t f = sizeof(float), s = (size_t)(ds->k.hi - ds->k.lo);

	return ct_gpu_get(ds->gpu, theta, addr(ds->k.theta), (size_t)ds->k.n * f, err) == -1 ||
	    ct_gpu_get(ds->gpu, m, addr(ds->k.m), s * f, err) == -1 ||
	    ct_gpu_get(ds->gpu, v, addr(ds->k.v), s * f, err) == -1 ? -1 : 0;
}
