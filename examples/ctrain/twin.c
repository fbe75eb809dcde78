/*
 * twin.c: the CPU twins of kern.cu's kernels, for a CUDA driver that runs
 * fat binaries on the host (tests/fake-cuda.c): kernel ct_k_NAME's twin is
 * ct_k_NAME_twin, which ctrain exports (it is linked with
 * -export-dynamic) for the driver to find by name. A twin runs the same
 * body (kern.h) for each thread of the launch, in thread order, on the
 * argument buffer the launch gave, its device addresses translated by the
 * driver's `dev` (NULL for a range that is not device memory: the twin
 * then returns -1, an illegal address, and computes nothing).
 */
#include <stddef.h>
#include <string.h>

#include "kern.h"

typedef void *(*ct_dev_fn)(unsigned long long addr, size_t bytes);

/* Each device range of a, as host memory: 0, or -1. */
static int
translate(struct ct_kargs *a, ct_dev_fn dev)
{
	const size_t q = (size_t)a->M * (size_t)a->B, in = (size_t)a->C * (size_t)a->E;
	const size_t f = sizeof(float), n = (size_t)a->n;
	struct { void **p; size_t bytes; } r[] = {
		{ (void **)&a->ctx, q * (size_t)a->C }, { (void **)&a->tgt, q },
		{ (void **)&a->theta, n * f }, { (void **)&a->x, q * in * f },
		{ (void **)&a->h, q * (size_t)a->H * f }, { (void **)&a->p, q * (size_t)a->V * f },
		{ (void **)&a->dh, q * (size_t)a->H * f }, { (void **)&a->dx, q * in * f },
		{ (void **)&a->lk, q * f }, { (void **)&a->all, (size_t)a->P * (n + 1) * f },
		{ (void **)&a->sum, (n + 1) * f }, { (void **)&a->m, (size_t)(a->hi - a->lo) * f },
		{ (void **)&a->v, (size_t)(a->hi - a->lo) * f },
	};
	size_t i;

	for (i = 0; i < sizeof r / sizeof r[0]; i++)
		if (r[i].bytes > 0 &&
		    (*r[i].p = dev((unsigned long long)(uintptr_t)*r[i].p, r[i].bytes)) == NULL)
			return -1;
	return 0;
}

#define CT_TWIN(name, threads) \
	int ct_k_##name##_twin(const void *args, size_t size, unsigned long long launched, \
	    ct_dev_fn dev); \
	int ct_k_##name##_twin(const void *args, size_t size, unsigned long long launched, \
	    ct_dev_fn dev) \
	{ \
		struct ct_kargs copy, *a = &copy; \
		long long t, count; \
		if (size != sizeof copy) \
			return -1; \
		memcpy(&copy, args, sizeof copy); \
		if (translate(a, dev) == -1) \
			return -1; \
		count = (threads); \
		for (t = 0; t < count && (unsigned long long)t < launched; t++) \
			ct_k_##name##_body(a, t); \
		return 0; \
	}
CT_KERNELS(CT_TWIN)
