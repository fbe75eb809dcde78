/*
 * kern.cu: ctrain's device kernels (kern.h has their bodies, shared with
 * the CPU twins of twin.c): one thread per output, a 1-D grid. Built by
 * nvcc into a fat binary with --fmad=false (a fused multiply-add rounds
 * once where the CPU path rounds twice) and linked into ctrain as data.
 */
#include "kern.h"

#define CT_GLOBAL(name, threads) \
	extern "C" __global__ void ct_k_##name(struct ct_kargs args) \
	{ \
		const struct ct_kargs *a = &args; \
		long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; \
		if (t < (threads)) \
			ct_k_##name##_body(a, t); \
	}
CT_KERNELS(CT_GLOBAL)
