/*
 * pool-gcp-advice.h: GCP's advice.capacityHistory folded into a pool's
 * placement history (pool-gcp-advice.c), for the GCP engine's failover.
 */
#ifndef SR_POOL_GCP_ADVICE_H
#define SR_POOL_GCP_ADVICE_H

#include <stddef.h>

#include "pool-engine.h"
#include "pool-failover.h"

/* A place whose newest Spot preemption rate (its best zone's) is this or
 * more weighs as one preempted SR_POOL_PREEMPT_N times in the hour:
 * tried after the places without, before those that refused. */
#define SR_POOL_ADVICE_RATE 0.5

struct sr_gce;

struct sr_pool_advice {
	struct sr_queue_place_event *history;	/* l's, then the advice's (free) */
	size_t nhistory;
};

/* The history of launch l with the advice of c for its n places (GCP:
 * one type a place) into *a: l's events, then SR_POOL_PREEMPT_N events
 * "preempted" at now in the region and type of each place whose rate is
 * SR_POOL_ADVICE_RATE or more. A failed ask (an account without the
 * advice: 403) keeps l's history alone, said nowhere (no advice is what
 * most accounts have). Free a with sr_pool_advice_free. */
void sr_pool_gcp_advice(struct sr_gce *c, const struct sr_pool_launch *l,
    const struct sr_pool_place *places, size_t n, struct sr_pool_advice *a);
void sr_pool_advice_free(struct sr_pool_advice *a);

#endif
