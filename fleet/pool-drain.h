/*
 * pool-drain.h: `spotrun down --drain` (doc/fleet.md, "Draining a pool"):
 * before a pool's resources are deleted, its jobs checkpoint and go back
 * to the queue. The pool's record is marked draining (its scalers hold
 * the target at 0 and `submit` raises it no more), the engine's target is
 * set to 0, and the cloud ends the VMs as it ends any it scales in: the
 * machine shuts down, systemd stops the agent with SIGTERM, and the agent
 * checkpoints its job and releases it, as on a preemption. The drain
 * waits, up to a timeout, until no job runs on a host of the pool's
 * agents (the agents' records name their pool: the label `pool` of the
 * user-data `spotrun up` writes) and the engine lists no billed VM. Each
 * look sets the group's target to 0 again if it is not: a scaler may have
 * written it between reading the record and seeing it marked.
 */
#ifndef SR_POOL_DRAIN_H
#define SR_POOL_DRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "queue.h"

/* A job that ran on the pool's VMs during the drain, as it ended it. */
struct sr_pool_drained {
	char id[SR_QUEUE_ID_MAX + 1];
	char host[SR_QUEUE_HOST_MAX + 1];	/* the pool's host it ran on last */
	int back;			/* 1: no longer running on the pool's VMs */
	enum sr_lease_state state;	/* its status marker's once back */
	int64_t step;			/* its last checkpoint's step (-1: none) */
};

struct sr_pool_drain {
	struct sr_queue *q;
	const char *pool;		/* its name */
	const char *by;			/* who drains: "spotrun down" */
	double timeout;			/* seconds to wait at most */
	double poll;			/* seconds between looks (0: 1) */
	/* called once the pool is marked and its target 0, with the jobs
	 * running on it then (may be NULL) */
	void (*started)(void *arg, const struct sr_pool_drain *d);
	void *arg;
	/* out */
	struct sr_pool_drained *jobs;	/* every job seen on the pool (free: sr_pool_drain_free) */
	size_t njobs;
	size_t vms;			/* billed VMs listed at the last look */
	size_t reset;			/* looks that found the target above 0 and set it
					 * to 0 again (a scaler's write that crossed
					 * the marking) */
	int timed_out;			/* 1: jobs or VMs were left at the timeout */
	double took;			/* seconds the drain waited */
};

/* Drain d->pool as the head comment says. 0 (d->timed_out says whether it
 * ended in time), 1 when the queue has no record of the pool (nothing to
 * drain; d untouched), or -1 with err (the queue or the cloud failed). */
int sr_pool_drain(struct sr_pool_drain *d, char *err);
void sr_pool_drain_free(struct sr_pool_drain *d);

#endif
