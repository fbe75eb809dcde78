/*
 * pool-failover.h: the one walk over a pool's places that every engine of
 * the table (pool-engine.h) fails over with (doc/design.md,
 * "Provisioning"): each place tried once an `up`, in the file's order but
 * with the places of a recent failure (the queue's placement history,
 * sr_pool_place_recent) after those without, a growing pause between, the
 * refusals noted in the pool's where (tried, waiting) and, for the
 * history, in its events. An engine says what a place is and how to try
 * and drop one; the walk decides where to go next.
 */
#ifndef SR_POOL_FAILOVER_H
#define SR_POOL_FAILOVER_H

#include <stddef.h>

#include "pool-engine.h"

/* One place of a pool: a region and the instance types tried there at
 * once (GCP, Azure: one; AWS: every type of the pool, its fleet spreads
 * over them). */
struct sr_pool_place {
	const char *region;
	const char *const *types;
	size_t ntypes;
};

/* What trying a place gives. */
enum sr_failover_rc {
	SR_FAILOVER_OK = 0,		/* the pool holds there (or the cloud is still at work) */
	SR_FAILOVER_ERROR = -1,		/* another error: err; the walk stops */
	SR_FAILOVER_CAPACITY = -2	/* no capacity: the refusal filled */
};

/* Why a place refused: the code (the cloud's: "InsufficientInstanceCapacity"),
 * and the type and zone it names ("" when the cloud does not say). */
struct sr_failover_refusal {
	char code[64];
	char type[64];
	char zone[64];
};

struct sr_failover_ops {
	void *arg;
	/* Make the pool at pl with the launch's target (have 0), or set the
	 * target of the one there (have 1: the pool was found at pl), and
	 * watch it as the cloud needs. Fills w (region, group...) with what
	 * it made, even when refused, so that drop finds it. */
	enum sr_failover_rc (*attempt)(void *arg, const struct sr_pool_place *pl, int have,
	    struct sr_failover_refusal *r, char *err);
	/* Delete what attempt made or found at pl (w->group "": nothing). */
	int (*drop)(void *arg, const struct sr_pool_place *pl, char *err);
};

/* Walk the n places of pool l (places[at] holds the pool now; at -1:
 * nowhere) through ops until one holds it: w->tried ("TYPE in REGION
 * (CODE), ...") and w->events get each refusal; when every place
 * refused, the pool waits on the last (w->waiting, w->created 0, its
 * region in w->region). The order: l's history (sr_pool_place_recent)
 * puts places with a recent failure after the others, each group in the
 * file's order, the place holding the pool first. 0, or -1 with err. */
int sr_pool_failover(const struct sr_pool_launch *l, struct sr_pool_where *w,
    const struct sr_pool_place *places, size_t n, long at, const struct sr_failover_ops *ops,
    char *err);

/* 1 when history (n events) has, for every type of pl, a capacity failure
 * or a preemption of cloud in pl's region since now - SR_POOL_RECENT_S. */
#define SR_POOL_RECENT_S 3600.0
struct sr_queue_place_event;
int sr_pool_place_recent(const struct sr_queue_place_event *history, size_t n,
    const char *cloud, const struct sr_pool_place *pl, double now);

/* The capacity code in err, "VERB OBJECT: CODE: message", as classify
 * (the cloud's: 1 for a capacity code) knows it; "capacity" when none. */
void sr_failover_code_in(const char *err, int (*is_capacity)(const char *code), char code[64]);

#endif
