/*
 * pool-scale.h: the rule that sizes a pool to its queue (doc/fleet.md,
 * "Pool scaling"), with no controller to keep alive: whoever holds the
 * pool's lease, Q/_leases/pool.NAME in the queue's own store (lease.h: the
 * same claims, renewals and epochs as a job's), sets the engine's target
 * from the queue's demand within the pool's max_vms and cost cap, and
 * writes the pool's record (queue.h's struct sr_queue_pool) with the
 * target, why, who, and the lease's epoch as its fence. The agents do it
 * (fleet/agent-scale.c), one at a time; `spotrun submit` does it for a
 * pool at target 0, through the same step.
 */
#ifndef SR_POOL_SCALE_H
#define SR_POOL_SCALE_H

#include <stddef.h>

#include "lease.h"
#include "pool-engine.h"
#include "prices.h"
#include "queue.h"

/* The why of a step on a pool that waits for capacity with no group to
 * size (its record's group ""): the target is left as it is. */
#define SR_POOL_SCALE_NO_GROUP \
	"waiting for capacity: no group to size; the next `spotrun up` tries again"
/* The why of a step on a pool `spotrun down --drain` drains (its
 * record's draining set): the target is 0. */
#define SR_POOL_SCALE_DRAINING "draining for spotrun down"
#define SR_POOL_SCALE_INTERVAL 30.0	/* seconds between steps (SPOTRUN_SCALE_INTERVAL) */

/* What a step ends with. */
enum sr_pool_scale_rc {
	SR_POOL_SCALE_OK = 0,
	SR_POOL_SCALE_ERROR = -1,	/* the queue or the cloud failed: err; nothing written */
	SR_POOL_SCALE_STALE = -2,	/* fenced: the lease lost, the record's fence above
					   ours, or the record written meanwhile; nothing
					   written (err says which) */
	SR_POOL_SCALE_GONE = -3		/* the pool has no record (taken down) */
};

/* One pool's scaler: in, kept between steps, and out. */
struct sr_pool_scale {
	struct sr_queue *q;
	const char *pool;		/* its name */
	struct sr_lease *lease;		/* the pool's lease, held (sr_pool_lease_claim) */
	const char *by;			/* who writes: an agent's id, "spotrun submit" */
	const struct sr_prices *prices;	/* what the VMs cost (NULL: not counted) */
	/* Seconds the queue stays drained before the pool goes to 0 (below
	 * 0: the record's idle_timeout; 0 there: never); with drained_now,
	 * at once. */
	double scale_idle;
	int drained_now;
	double drained_since;		/* kept: monotonic, 0 while there is demand */
	/* kept: the cloud's client (its engine's open) and that engine,
	 * opened by the first step that calls the cloud and kept for the
	 * next, so that a step does not fetch a token and a project or
	 * subscription again; closed after a step that failed (the next
	 * opens it anew) and by sr_pool_scale_end. */
	const struct sr_pool_engine *e;
	void *client;
	/* out */
	unsigned before, target, demand;
	size_t vms;			/* the VMs listed (0 when the engine cannot) */
	/* VMs the cloud dropped from its group's target (Azure's evicted
	 * ones) that this step asked for again (ask_again), 0: none */
	unsigned asked_again;
	double spent;			/* dollars, the record's after this step */
	double in_jobs, idle;		/* spent's two parts, the record's */
	char why[160];
};

/* What VM v costs an hour: the price its cloud gave at launch (v->price),
 * else the table's for its type (spot or on-demand as v is; prices may be
 * NULL), else 0 (unknown). */
double sr_pool_vm_price(const struct sr_pool_vm *v, const struct sr_prices *prices);

/* What the n listed VMs v cost from rec->spent_at (a VM launched later:
 * from its launch) to now, each billed one at sr_pool_vm_price an hour,
 * added to rec->spent and to rec->in_jobs where busy[i] (a job ran on VM
 * i at the step; busy may be NULL: none), else to rec->idle; rec->spent_at
 * set to now. A record with no spent_at yet (0) gets only spent_at. */
void sr_pool_cost_add(struct sr_queue_pool *rec, const struct sr_pool_vm *v, size_t n,
    const int *busy, const struct sr_prices *prices, double now);

/* The lease key's job name of pool (lease.h's rule): "pool.NAME". */
void sr_pool_lease_name(const char *pool, char *buf, size_t len);

/* Claim pool's lease in q's store for owner (c as sr_lease_claim's,
 * owner and the out fields set here): lease.h's codes. */
int sr_pool_lease_claim(struct sr_queue *q, const char *pool, struct sr_lease_claim *c,
    struct sr_lease **out, char *err);

/* One step, under s->lease: read the record (its etag), refuse when its
 * fence is above the lease's epoch; read the demand and the running jobs
 * (sr_pool_demand_running, uncapped); list the VMs (engine's list) and add
 * what the billed ones cost since the record's spent_at
 * (sr_pool_cost_add), a VM busy when a live agent's record (agents/, read
 * only while a job runs) names it as its instance and a job runs on that
 * agent's host; the target is 0 while the pool drains (its record's
 * draining: SR_POOL_SCALE_DRAINING), 0 when spent reached the cost
 * cap ("cost cap $X reached ($Y spent)"), 0 when the queue has been
 * drained for scale_idle ("queue drained"; until then the target stays),
 * else the demand within max_vms ("demand N VMs, max M", "demand N VMs");
 * then, at the fault point "pool-scale-write", the lease must still be
 * fresh (sr_lease_fresh), the engine's target is set when it moves (when
 * it stays, with demand, and fewer billed VMs listed than it: the group's
 * own target is read and set again where the cloud lowered it, why
 * ending "; asked again for N VMs the cloud dropped"), and
 * the record is written by CAS over what was read with the fence the
 * lease's epoch. s's out fields are set whatever the result. */
int sr_pool_scale_step(struct sr_pool_scale *s, char *err);

/* The cloud's client that s's steps kept, closed (s->client NULL again);
 * for an s that never stepped, nothing. */
void sr_pool_scale_end(struct sr_pool_scale *s);

/* For `spotrun submit`: each pool of q at target 0 gets a step, its
 * lease claimed for me (watching a lease held elsewhere up to its TTL,
 * lease.h) and released after; a pool above 0 gets one only when its
 * lease was released (its agents all ended; one never claimed is left to
 * the agents up starts), not watched.
 * note(arg, line) gets a line for each pool at 0 stepped or left ("pool
 * NAME: target N (WHY)", "pool NAME: scaled by AGENT"), and for a pool
 * above 0 whose step moved its target or asked again for dropped VMs. 0, or -1 with err (the pools' records unreadable); a pool that
 * fails is said through note and the rest are tried. */
int sr_pool_raise(struct sr_queue *q, const struct sr_lease_owner *me,
    const struct sr_prices *prices, void (*note)(void *arg, const char *line), void *arg,
    char *err);

#endif
