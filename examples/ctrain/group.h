/*
 * group.h: ctrain's ranks as one group over TCP, as spotrun's
 * `launch = ranks` (or torchrun) starts them: RANK, WORLD_SIZE,
 * MASTER_ADDR, MASTER_PORT. A star: rank 0 listens on MASTER_PORT and
 * every other rank connects to it. Two collectives, both deterministic
 * whatever the number of ranks:
 *
 * - ct_group_reduce_scatter: the sum of every rank's parts taken in one
 *   fixed order, rank 0's parts first, then rank 1's, ... (the running sum
 *   travels from rank 0 to rank 1 and back, then to rank 2 and back, ...),
 *   so that a program whose parts are its micro-batches in order gets
 *   ((g0 + g1) + g2) + ... bit for bit however the micro-batches are
 *   spread over the ranks; each rank receives its slice of the sum.
 * - ct_group_allgather: every rank's slice, to every rank.
 * And ct_group_bcast, rank 0's bytes to every rank.
 *
 * The floats travel in the host's byte order: the ranks run on one
 * machine, or on machines of one architecture.
 */
#ifndef CT_GROUP_H
#define CT_GROUP_H

#include <stddef.h>
#include <stdint.h>

#define CT_ERRMAX 256

struct ct_group {
	int rank, world;
	int *fd;		/* rank 0: fd[r] for rank r >= 1; other ranks: fd[0], to rank 0 */
};

/* This rank's slice [*lo, *hi) of n elements split over world ranks in
 * contiguous pieces of n / world (the first n % world one more). */
void ct_group_slice(size_t n, int world, int rank, size_t *lo, size_t *hi);

/* Join the group (world 1: nothing to connect): rank 0 listens on
 * addr:port and waits up to timeout seconds for the others, which
 * connect to it. Every rank must bring the same `agree` (a hash of what
 * must be the same on all: ranks that disagree on the size of a message
 * would wait for bytes that never come); rank 0 refuses a rank whose
 * differs. 0, or -1 with err filled. */
int ct_group_open(struct ct_group *g, int rank, int world, const char *addr, const char *port,
    uint64_t agree, int timeout, char *err);
void ct_group_close(struct ct_group *g);

/* The sum over ranks in rank order, and over each rank's nparts parts
 * (n floats each, parts[i * n ...]) in their order, started from +0.
 * On return sum (n floats) holds the total in this rank's slice
 * (ct_group_slice of the first n - tail elements) and in the last tail
 * elements, which every rank gets; rank 0 holds the whole total, the
 * others' other elements are undefined. *vote_max is the largest vote of
 * any rank. 0, or -1 with err filled (a rank that went away). */
int ct_group_reduce_scatter(struct ct_group *g, const float *parts, int nparts, size_t n,
    size_t tail, int vote, float *sum, int *vote_max, char *err);

/* Rank 0's n bytes at buf, to every rank (the NCCL unique id). 0 or -1. */
int ct_group_bcast(struct ct_group *g, void *buf, size_t n, char *err);

/* buf holds n floats, this rank's slice of them (ct_group_slice) up to
 * date: on return every rank's slice is, on every rank. */
int ct_group_allgather(struct ct_group *g, float *buf, size_t n, char *err);

#endif
