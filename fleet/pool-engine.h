/*
 * pool-engine.h: what `spotrun up` and `spotrun down` ask of a cloud's own
 * fleet engine (doc/design.md, "Provisioning"), one table line per cloud:
 * make the pool's group or find it by its tags, set its target, describe
 * it, and delete everything tagged with the pool. A cloud without a line
 * has no engine: sr_pool_engine() gives NULL and `up` says so.
 *
 * Every resource an engine makes is tagged with the pool's name and the
 * queue, so that `down` finds it without any local state. The functions
 * return 0, or -1 with err in `verb object: reason` form (the cloud's code
 * and message in the reason).
 */
#ifndef SR_POOL_ENGINE_H
#define SR_POOL_ENGINE_H

#include <stddef.h>

#include "pool.h"

struct sr_queue_place_event;

/* What `up` asks for: pool p's VMs, agents of queue, booting user_data. */
struct sr_pool_launch {
	const struct sr_pool *p;
	const char *queue;
	const char *const *types;	/* instance types in order (sr_pool_types) */
	size_t ntypes;
	const void *user_data;
	size_t user_data_len;
	unsigned target;		/* VMs to keep */
	/* The queue's placement history of the pool's cloud (queue.h,
	 * sr_queue_placement_read; NULL, 0: none), which the failover walk
	 * orders places by (pool-failover.h). */
	const struct sr_queue_place_event *history;
	size_t nhistory;
};

#define SR_POOL_REFUSED_MAX 32

/* Where an engine keeps a pool (the queue's record of it, Q/pools/NAME). */
struct sr_queue_pool_price;

struct sr_pool_where {
	char region[64];
	char group[128];		/* AWS: the EC2 Fleet's id; GCP: the group's name;
					 * Azure: the scale set's name */
	char template_id[128];		/* AWS: the launch template's id; GCP: its name;
					 * Azure: the set's resource group */
	char image[128];		/* the image its VMs boot (resolved) */
	unsigned target;
	int created;			/* 1: made now; 0: found by its tags */
	/* An engine that fails over (pool-failover.h): the places tried that had
	 * no capacity, "TYPE in REGION (CODE), ..." ("" when none), and
	 * whether the pool waits for capacity where it is now (every place
	 * refused it). */
	char tried[512];
	int waiting;
	/* The launch prices known already (the pool's record's, from the
	 * scaler's last list; NULL: none): list gives a VM found here its
	 * price without asking the cloud (sr_pool_known_price). */
	const struct sr_queue_pool_price *known;
	size_t nknown;
	/* Each place that refused during this ensure, for the queue's
	 * placement history (up writes them: sr_queue_placement_add). */
	struct sr_pool_refused {
		char region[64], zone[64], type[64], code[64];
	} refused[SR_POOL_REFUSED_MAX];
	size_t nrefused;
};

/* A pool's VMs by state. */
struct sr_pool_vms {
	unsigned pending, running, stopping, other;
};

/* One VM of a pool, as its cloud describes it (list). */
struct sr_pool_vm {
	/* what the agent's provider calls the machine (its facts'
	 * instance_id, so an attempt's record names it): AWS "i-0abc...",
	 * GCP the instance's numeric id, Azure the VM's vmId; "" while the
	 * cloud is still making it (GCP) */
	char id[64];
	char name[80];			/* the cloud's name: AWS the id, GCP and Azure
					 * the resource's name */
	char state[24];			/* the cloud's word: "running" (AWS), "RUNNING"
					 * (GCP), "Succeeded" (Azure)... */
	char zone[64];			/* "us-east-1a", "us-central1-a", "eastus-1"
					 * (Azure: REGION-ZONE, or REGION) */
	char type[64];			/* "g5.xlarge" */
	double launched;		/* epoch seconds (0: not said) */
	int spot;			/* 1: a spot VM */
	int billed;			/* 1: the cloud bills it now (made and not
					 * ending): what the scaler counts */
	double price;			/* $/h the cloud priced it at launch (AWS: the
					 * spot price history); 0: not said (the price
					 * table's then) */
};

struct sr_pool_engine {
	const char *what;		/* "EC2 Fleet" */
	const char *template_what;	/* "instance template"; NULL: "launch template" */
	/* The client the calls below share, into *c (the engine's own type),
	 * kept as long as its caller likes (a scaler: from step to step, a
	 * drain: from look to look): its credentials and what they lead to
	 * (a token; the project or subscription the metadata server names)
	 * are fetched at its first need and kept, the token asked again as
	 * it nears its expiry. 0, or -1 with err. close(NULL) does nothing. */
	int (*open)(void **c, char *err);
	void (*close)(void *c);
	/* Find pool l->p by its tags in its first region and set its target,
	 * or make it there (image, template, group) with l->target. An
	 * engine fails over (pool-failover.h): it may place it elsewhere,
	 * in the order of the pool's regions (and types), filling
	 * w->tried, w->waiting and w->refused. */
	int (*ensure)(void *c, const struct sr_pool_launch *l, struct sr_pool_where *w,
	    char *err);
	/* The group's target becomes target. */
	int (*set_target)(void *c, const struct sr_pool_where *w, unsigned target, char *err);
	/* The group's target and VMs. */
	int (*describe)(void *c, const struct sr_pool_where *w, unsigned *target,
	    struct sr_pool_vms *vms, char *err);
	/* Delete every resource tagged with pool in each of regions (VMs
	 * terminated); *gone gets how many were deleted (0: nothing left). */
	int (*destroy)(void *c, const char *pool, const char *const *regions, size_t nregions,
	    size_t *gone, char *err);
	/* Optional (NULL: the engine cannot list): the VMs tagged with pool
	 * in w's region that have not ended, into *v (malloc'd, free()) and
	 * *n, in the cloud's order. */
	int (*list)(void *c, const struct sr_pool_where *w, const char *pool,
	    struct sr_pool_vm **v, size_t *n, char *err);
};

/* A cloud's time ("2025-01-02T03:04:05Z", with fractional seconds and
 * a "+HH:MM" or "-HH:MM" offset as RFC 3339 allows) as epoch seconds, or
 * 0 when s is not one. */
double sr_pool_time(const char *s);

/* Cloud c's engine, or NULL when this build has none for it. */
const struct sr_pool_engine *sr_pool_engine(enum sr_pool_cloud c);
/* The engine of the cloud named so ("aws", as a pool's record says), or
 * NULL: an unknown name, or no engine in this build. */
const struct sr_pool_engine *sr_pool_engine_named(const char *cloud);

/* Where pool record rec's engine keeps it, into w (zeroed first): its
 * region, group, template, target and the launch prices it keeps (w
 * points into rec: rec outlives w). */
struct sr_queue_pool;
void sr_pool_where_of(const struct sr_queue_pool *rec, struct sr_pool_where *w);

/* VM id's launch price among w's known ones, or 0 (not known). */
double sr_pool_known_price(const struct sr_pool_where *w, const char *id);

/* How many VMs the queue's demand asks for, within max_vms (a negative
 * max_vms: no limit): one per
 * pending job (a pending gang: its nodes_min machines) and one per running
 * job (sr_queue_pending_list, sr_queue_status_list: two listings); a
 * pending marker older than its job's end (a queued job cancelled: the
 * status marker's epoch above the pending one's) asks for none; a job
 * whose status says queued or released with no pending marker (a claim
 * deleted it, its agent has not yet written "running") asks for one. */
struct sr_queue;
int sr_pool_demand(struct sr_queue *q, int max_vms, unsigned *vms, char *err);
/* sr_pool_demand, and the running jobs (their newest markers' host and
 * id, in id order) into *run (free it) and *nrun, from the same two
 * listings. */
struct sr_pool_running {
	char host[65];			/* SR_QUEUE_HOST_MAX + 1: cut as markers cut it */
	char id[129];			/* the job's id (SR_QUEUE_ID_MAX + 1) */
};
int sr_pool_demand_running(struct sr_queue *q, int max_vms, unsigned *vms,
    struct sr_pool_running **run, size_t *nrun, char *err);

/* The AWS entry (pool-aws.c), the GCP entry (pool-gcp.c), the Azure
 * entry (pool-azure.c). */
extern const struct sr_pool_engine sr_pool_engine_aws;
extern const struct sr_pool_engine sr_pool_engine_gcp;
extern const struct sr_pool_engine sr_pool_engine_azure;

#endif
