/*
 * pool-failover.h: the one walk over a pool's places that every engine of
 * the table (pool-engine.h) fails over with (doc/design.md,
 * "Provisioning"): each place tried once an `up`, in the file's order but
 * with the places of recent failures (the queue's placement history,
 * sr_pool_place_rank) after those without, a growing pause between, the
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
 * region in w->region). The order: l's history (sr_pool_place_rank)
 * puts places of repeated preemptions after the others and places of
 * capacity failures last, each rank in the file's order, the place
 * holding the pool first. 0, or -1 with err. */
int sr_pool_failover(const struct sr_pool_launch *l, struct sr_pool_where *w,
    const struct sr_pool_place *places, size_t n, long at, const struct sr_failover_ops *ops,
    char *err);

/* How much history (n events) of cloud weighs against place pl now
 * (doc/design.md, "Provisioning"): each type of pl weighs 2 with a
 * capacity failure in pl's region since now - SR_POOL_RECENT_S, 1 with
 * SR_POOL_PREEMPT_N or more preemptions (why SR_POOL_PREEMPTED) there in
 * that time, else 0; the place's rank is its lightest type's (a type
 * with nothing against it keeps the place first). The walk tries rank 0,
 * then 1, then 2. sr_pool_type_rank: one type's weight alone, in zone
 * (its events and those that name no zone; NULL: every zone's). */
#define SR_POOL_RECENT_S 3600.0
#define SR_POOL_PREEMPT_N 2
#define SR_POOL_PREEMPTED "preempted"
struct sr_queue_place_event;
int sr_pool_place_rank(const struct sr_queue_place_event *history, size_t n,
    const char *cloud, const struct sr_pool_place *pl, double now);
int sr_pool_type_rank(const struct sr_queue_place_event *history, size_t n,
    const char *cloud, const char *region, const char *zone, const char *type, double now);

/* The region of zone as cloud names it into
 * region (len): "us-east-1a" -> "us-east-1", "us-central1-a" ->
 * "us-central1", Azure's "eastus-1" (location-zone, as the provider's
 * facts give it) or "eastus" -> "eastus". 0, or -1 for an empty or
 * "unknown" zone, or one not of that form. */
int sr_pool_zone_region(enum sr_pool_cloud cloud, const char *zone, char *region, size_t len);

/* The capacity code in err, "VERB OBJECT: CODE: message", as classify
 * (the cloud's: 1 for a capacity code) knows it; "capacity" when none. */
void sr_failover_code_in(const char *err, int (*is_capacity)(const char *code), char code[64]);

/* The places of l one type at a time (GCP, Azure: a group holds one
 * type): each type in order, each region in order within a type, into
 * places (l->ntypes x l->p->nregions of them). */
void sr_pool_places_by_type(const struct sr_pool_launch *l, struct sr_pool_place *places);
/* The index in places (n) of the one-type place of type in region, or -1
 * (the file changed since the pool was placed). */
long sr_pool_place_index(const struct sr_pool_place *places, size_t n, const char *type,
    const char *region);

#endif
