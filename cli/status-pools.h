/*
 * status-pools.h: the pools `spotrun up` made for the queue, as `spotrun
 * status` shows them (doc/fleet.md, "Pools"): each pool's record
 * (Q/pools/NAME) and, unless --no-cloud, its VMs as its cloud's engine
 * lists them (fleet/pool-engine.h), each with what it costs an hour (the
 * cloud's price at its launch, else the price table's). Read once, then
 * printed as lines (here) or as the JSON's "pools" (status-json.c).
 */
#ifndef SR_STATUS_POOLS_H
#define SR_STATUS_POOLS_H

#include <stddef.h>

#include "fleet.h"
#include "pool-engine.h"
#include "queue.h"
#include "util.h"

/* Where a VM's price came from. */
enum sr_status_price_from {
	SR_STATUS_PRICE_NONE = 0,	/* neither: unknown */
	SR_STATUS_PRICE_LAUNCH,		/* the cloud's at launch (AWS's spot price history) */
	SR_STATUS_PRICE_TABLE		/* the price table's for its type */
};

struct sr_status_pool {
	struct sr_queue_pool rec;
	const struct sr_pool_engine *e;	/* NULL: no engine for its cloud in this build */
	int listed;			/* 1: vms is its cloud's list */
	char list_err[SR_ERRMAX];	/* why the list failed ("": it did not) */
	struct sr_pool_vm *vms;
	size_t nvms;
	double *price;			/* $/h of each VM (0: unknown) */
	enum sr_status_price_from *from;
};

struct sr_status_pools {
	struct sr_status_pool *v;	/* in name order */
	size_t n;
	int bad;			/* records that do not parse (skipped) */
	double now;			/* when read (epoch seconds): the VMs' ages */
};

/* Read q's pools' records (one listing of pools/, a GET per pool) and,
 * unless no_cloud, each one's VMs (its engine's list, when it has one;
 * a failure kept in list_err) priced with s's price table (a table that
 * cannot be read is said on stderr; the VMs then priced by their cloud
 * only). 0, or -1 with err (the records unreadable). */
int sr_status_pools_read(struct sr_queue *q, const struct sr_settings *s, int no_cloud,
    struct sr_status_pools *out, char *err);
void sr_status_pools_free(struct sr_status_pools *p);

/* The pools as lines on stdout, a blank line first when there is any:
 * "pool NAME on CLOUD in REGION: ENGINE GROUP, target N VMs (WHY, by
 * WHO)", then where `up` found no capacity ("; waiting for capacity: tried
 * TYPE in REGION (CODE), ..."), what it cost against its cap ("; $S of $C
 * spent"), its VMs by state ("; VMs: N STATE, ...", "; no VMs", "; VMs not
 * listed: WHY"), and a line per VM ("  NAME STATE ZONE TYPE $P/h AGE").
 * The cloud's words are escaped (termsafe.h). */
void sr_status_pools_print(const struct sr_status_pools *p);

#endif
