/*
 * comm.h: ctrain's ranks on GPUs, through NCCL loaded at run time
 * (ncclapi.h: libnccl.so.2, or a library named by the caller), on the
 * TCP group of group.h, which stays for what is not on the GPU (the
 * unique id, the final gather). A communicator lives from ct_comm_init to
 * ct_comm_abort: ctrain aborts it before each checkpoint (a peer that dies
 * during the save cannot hang it in a collective) and builds a new one,
 * with a fresh unique id from rank 0, when it goes on or restarts.
 *
 * The collectives are copies or exact operations, so the result does not
 * depend on how NCCL orders them: ct_comm_allgatherv is one broadcast per
 * rank of its slice (in place, in one group), and ct_comm_max an
 * all-reduce of an integer's maximum. The sums stay with kern.h's
 * kernels, in micro-batch order.
 */
#ifndef CT_COMM_H
#define CT_COMM_H

#include <stddef.h>
#include <stdint.h>

#include "group.h"

struct ct_comm;

/* Load NCCL (`lib`, NULL: "libnccl.so.2"): NULL with err saying why. */
struct ct_comm *ct_comm_open(const char *lib, char *err);
/* Destroy the communicator if there is one, unload NCCL. */
void ct_comm_close(struct ct_comm *c);

/* A new communicator of g's ranks: rank 0's ncclGetUniqueId, sent to the
 * others over g, then ncclCommInitRank on every rank. 0 or -1. */
int ct_comm_init(struct ct_comm *c, struct ct_group *g, char *err);
/* ncclCommAbort, when there is a communicator: 0 or -1. */
int ct_comm_abort(struct ct_comm *c, char *err);
/* There is a communicator. */
int ct_comm_live(const struct ct_comm *c);

/* buf (device f32) holds n units of `unit` floats; this rank's slice of
 * them (ct_group_slice) is up to date: every rank's, on every rank,
 * queued on stream. 0 or -1 naming the call and its error. */
int ct_comm_allgatherv(struct ct_comm *c, uint64_t buf, size_t n, size_t unit, void *stream,
    const char *what, char *err);
/* The largest of every rank's device int32 at dptr, there (in place). */
int ct_comm_max(struct ct_comm *c, uint64_t dptr, void *stream, const char *what, char *err);

#endif
