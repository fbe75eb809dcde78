/*
 * devstep.h: ctrain's training step on the GPU (--device=cuda): the
 * parameters, this rank's micro-batches' gradients, and its shard of
 * Adam's m and v in device memory (gpu.h), the step as kern.h's kernels,
 * the ranks' exchange through NCCL (comm.h). The same step as the CPU
 * path's (ctrain.c), the same bits: each rank computes its micro-batches'
 * gradients, every rank's are broadcast to all (an all-gather of the
 * parts: copies), each rank sums them in micro-batch order for its slice
 * (kern.h's sum kernel: the CPU path's additions), updates its slice with
 * Adam, and the slices are all-gathered.
 */
#ifndef CT_DEVSTEP_H
#define CT_DEVSTEP_H

#include <stddef.h>
#include <stdint.h>

#include "comm.h"
#include "gpu.h"
#include "group.h"
#include "kern.h"
#include "model.h"

struct ct_devstep {
	struct ct_gpu *gpu;
	struct ct_comm *comm;
	struct ct_kargs k;	/* the kernels' arguments: device addresses */
	uint64_t vote;		/* a device int32: the ranks' vote */
	uint64_t mem[16];	/* the device memory, to free */
	int nmem;
};

/* The GPU `ordinal` of driver cuda_lib and NCCL nccl_lib, the device
 * memory of a rank that computes micro-batches [first, first + M) of P,
 * B examples each, and owns [lo, hi) of the n parameters; theta (host, n
 * floats) copied there, m and v zero. 0 or -1. */
int ct_devstep_open(struct ct_devstep *ds, const char *cuda_lib, const char *nccl_lib,
    int ordinal, const struct ct_dims *d, int M, int B, int P, size_t first, size_t n,
    size_t lo, size_t hi, const float *theta, char *err);
void ct_devstep_close(struct ct_devstep *ds);

/* One step: the examples (host: M * B contexts, targets), this rank's
 * vote, Adam's settings; the step's summed loss and the largest vote
 * back. A new communicator first when there is none (the first step,
 * after a restore, after a checkpoint). 0 or -1 naming the call. */
int ct_devstep_run(struct ct_devstep *ds, struct ct_group *g, const uint8_t *ctx,
    const uint8_t *tgt, int vote, long long step, float lr, float wd, long long examples,
    float *loss, int *agreed, char *err);

/* Before a checkpoint: the GPU's work done, the communicator aborted. */
int ct_devstep_quiesce(struct ct_devstep *ds, char *err);

/* The parameters (n floats) and this rank's m and v (hi - lo), to the
 * host. 0 or -1. */
int ct_devstep_fetch(struct ct_devstep *ds, float *theta, float *m, float *v, char *err);

#endif
