/*
 * ranks.h: how an attempt's processes lie on the machine: how many spotrun
 * starts, the GPUs each one sees (its CUDA_VISIBLE_DEVICES) and the port
 * rank 0 offers the others (MASTER_PORT). The policy, in doc/spotrun.1
 * (RANKS):
 *
 *  - launch = ranks with GPUs: one process per GPU, as many GPUs as there
 *    are up to gpus' maximum (fewer than its minimum is an error); rank R
 *    sees the R-th GPU alone, by the id the source gives it (gpus.h): a
 *    UUID where known, else its index, with CUDA_DEVICE_ORDER=PCI_BUS_ID
 *    so that CUDA counts as the driver does;
 *  - launch = ranks without GPUs: procs processes; a range takes as many
 *    as spotrun has CPUs, within it; none set: 1;
 *  - launch = once: one process that sees all the job's GPUs, and no rank
 *    variable of spotrun's (world 0).
 *
 * A value replaces an inherited CUDA_VISIBLE_DEVICES, never adds to it: the
 * inherited entries are the GPUs spotrun hands out (gpus.h).
 */
#ifndef SR_RANKS_H
#define SR_RANKS_H

#include "gpus.h"
#include "jobspec.h"

struct sr_ranks {
	int n;			/* processes to start, >= 1 */
	int world;		/* WORLD_SIZE: n with launch = ranks, 0 with once */
	int gpus;		/* GPUs given to the job */
	char **visible;		/* n entries: the process's CUDA_VISIBLE_DEVICES,
				 * NULL: left as inherited (no GPU given) */
	int pci_order;		/* the ids are driver indices: CUDA_DEVICE_ORDER
				 * must be PCI_BUS_ID */
};

/* The layout for js on a machine with the GPUs g and ncpus CPUs. 0, or -1
 * with err ("job J needs at least 4 GPUs; this machine has 2"). */
int sr_ranks_plan(const struct sr_jobspec *js, const struct sr_gpus *g, int ncpus,
    struct sr_ranks *rk, char *err);
void sr_ranks_free(struct sr_ranks *rk);

/* The CPUs this process may run on (its affinity mask), at least 1. */
int sr_ranks_ncpus(void);
/* A TCP port of 127.0.0.1 free now, for MASTER_PORT: bound to port 0 and
 * released, as torchrun finds one; rank 0 binds it moments later. 0 or -1
 * with err. */
int sr_ranks_free_port(int *port, char *err);

#endif
