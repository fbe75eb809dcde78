/*
 * queue.h: the fleet's job queue (doc/fleet.md, "The queue"), kept in an
 * object store and nothing else. Under the queue's URL Q:
 *
 *   jobs/ID/spec.ini      the job file as submitted (create-only: the id's claim)
 *   jobs/ID/meta.json     what was submitted with it (create-only: the last write
 *                         of a submission, which is complete once it exists)
 *   jobs/ID/cancel        present: cancel requested
 *   pending/KEY           a runnable job's marker, its sort and filter fields in KEY
 *   index/ID~FIELDS       status markers: the fields `status` shows, in the key
 *   logs/ID/RUN-ATTEMPT-N the job's output, in segments
 *   stores/HASH           each checkpoint store a job uses (its URL)
 *   pools/NAME            a pool `spotrun up` made for the queue (JSON, qpool.c)
 *   placement/CLOUD       where pools of CLOUD found no capacity or were preempted (JSON, qplace.c)
 *   malformed/KEY         a marker KEY a claim found no job's, quarantined (body: why)
 *   ckpt/                 the default checkpoint store of the queue's jobs
 *
 * The truth about a job is its lease (lease.h) in its checkpoint store;
 * pending and index markers are hints, and a reader that finds one stale
 * repairs or skips it. The key syntax is in doc/fleet.md.
 *
 * Requests are counted per queue handle as the S3 API needs them (a
 * listing: one per 1000 keys read; a batch delete: one per 1000 keys, one
 * per key on gs://), file:// included, so that a benchmark can report
 * requests per claim on any store.
 */
#ifndef SR_QUEUE_H
#define SR_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "lease.h"
#include "store.h"

/* Return codes (0 is success). */
enum sr_queue_rc {
	SR_QUEUE_OK = 0,
	SR_QUEUE_ERROR = -1,	/* store I/O or bad input: see err */
	SR_QUEUE_EXISTS = -2,	/* add: the id is already in the queue */
	SR_QUEUE_EMPTY = -3,	/* claim: nothing this agent can run now */
	SR_QUEUE_NOTFOUND = -4,	/* no such job (or no marker, no log) */
	SR_QUEUE_BUSY = -5,	/* claim of one job, requeue: held, ended or malformed (err says) */
	SR_QUEUE_LOST = -6	/* job end: the lease was lost (lease.h's SR_LEASE_LOST) */
};

#define SR_QUEUE_ID_MAX SR_LEASE_JOB_MAX	/* ids are job names (lease.h's rule) */
#define SR_QUEUE_PRIORITY_MIN (-9999)
#define SR_QUEUE_PRIORITY_MAX 9999
#define SR_QUEUE_GPUS_MAX 4096
#define SR_QUEUE_NODES_MAX 64		/* machines of a gang */
#define SR_QUEUE_GPU_TYPE_MAX 63
#define SR_QUEUE_HOST_MAX 64		/* a host name in a status marker, cut there */
#define SR_QUEUE_POOL_NAME_MAX 40	/* a pool's name (spotrun-pool(5)) */
#define SR_QUEUE_KEY_MAX 1024
#define SR_QUEUE_PICK_DEFAULT 8		/* candidates a claim picks from at random */
#define SR_QUEUE_SPEC_MAX (1024 * 1024)

struct sr_queue;

/* ---- opening ---- */

/* The default queue, file://$XDG_DATA_HOME/spotrun/queue ($HOME/.local/share
 * when XDG_DATA_HOME is unset, empty or relative), into buf: 0, or -1 with
 * err when neither gives an absolute path. */
int sr_queue_default_url(char *buf, size_t len, char *err);
/* Open the queue at a store URL (file://, s3://, gs://): 0 with *out, or
 * -1 with err. Makes no request. */
int sr_queue_open(const char *url, struct sr_queue **out, char *err);
/* The same, its store and the checkpoint stores it opens opened with so
 * (NULL: as sr_store_open). */
int sr_queue_open_with(const char *url, const struct sr_store_opts *so, struct sr_queue **out,
    char *err);
/* Close the queue and the checkpoint stores it opened. Safe on NULL. */
void sr_queue_close(struct sr_queue *q);
const char *sr_queue_url(const struct sr_queue *q);
/* The queue's own store (borrowed). */
struct sr_store *sr_queue_store(struct sr_queue *q);
/* Q/ckpt: the queue's URL with "/ckpt" added to its path (before any
 * ?options): where a job that names no store keeps its checkpoints. */
const char *sr_queue_ckpt_url(const struct sr_queue *q);
/* The checkpoint store at url, opened once per queue handle and kept
 * (borrowed): NULL with err when it cannot be opened. */
struct sr_store *sr_queue_ckpt_store(struct sr_queue *q, const char *url, char *err);

/* Requests made through q so far, by kind. */
struct sr_queue_counts {
	long requests;	/* all of them */
	long lists, gets, puts, deletes, heads;
};
void sr_queue_get_counts(const struct sr_queue *q, struct sr_queue_counts *out);

/* ---- submitting ---- */

struct sr_queue_param {
	const char *name, *value;
};

/* What a job is submitted with (meta.json). */
struct sr_queue_meta {
	const char *id;		/* the job's id: its name, a sweep trial NAME.NNN */
	const char *name;	/* the job's name in its file (NULL: the id) */
	const char *sweep;	/* the sweep it is a trial of (NULL or "": none) */
	const struct sr_queue_param *params;	/* the trial's parameters */
	size_t nparams;
	int gpus_min, gpus_max;	/* 0-0: no GPU needed */
	int nodes_min, nodes_max;	/* machines of a gang (gang.h); 0-0 or 1-1: one */
	const char *gpu_type;	/* GPU model wanted (NULL or "": any) */
	int priority;		/* higher runs first; 0 by default */
	const char *store;	/* checkpoint store URL (NULL or "": Q/ckpt) */
	double submitted;	/* epoch seconds (0: now) */
	const char *by;		/* who submitted (e.g. me@laptop) */
	const char *dir;	/* the job file's folder there, absolute (NULL or "": not
				 * known): an agent on that machine resolves the job's
				 * relative paths against it, as `spotrun run` would */
	const char *workdir;	/* the snapshot of its working directory in Q/ckpt, an
				 * id opaque here (NULL or "": none, not shipped) */
};

/* Add a job: its spec text and meta. Create-only, by id: a job with this id
 * in the queue already gives SR_QUEUE_EXISTS, "job ID is already in the
 * queue (submitted ... by ...)", saying whether its spec is the same. The
 * id is the dedupe: the same file submitted twice makes the same ids, so
 * it is refused, not run twice; to run it again, requeue it or submit it
 * under another name. A submission cut short (no meta.json yet) with the
 * same spec is completed; with another spec it is refused. */
int sr_queue_add(struct sr_queue *q, const char *spec, size_t spec_len,
    const struct sr_queue_meta *m, char *err);

/* A job's meta.json, as read (strings owned; sr_queue_job_meta_free). */
struct sr_queue_job_meta {
	char *id, *name, *sweep, *gpu_type, *store, *by, *dir;	/* dir: "" when not known */
	char *workdir;		/* "": none */
	char **param_names, **param_values;
	size_t nparams;
	int gpus_min, gpus_max, priority;
	int nodes_min, nodes_max;	/* 1-1 for one machine (and a meta.json without "nodes") */
	double submitted;
};
/* Read job id's meta: SR_QUEUE_OK, SR_QUEUE_NOTFOUND, or SR_QUEUE_ERROR
 * (also for a malformed meta.json, named with its key). */
int sr_queue_meta_read(struct sr_queue *q, const char *id, struct sr_queue_job_meta *out,
    char *err);
void sr_queue_job_meta_free(struct sr_queue_job_meta *m);
/* Read job id's spec into a malloc'd NUL-terminated buffer. */
int sr_queue_spec_read(struct sr_queue *q, const char *id, char **spec, size_t *len, char *err);

/* ---- pending markers ---- */

/* A pending marker, parsed from its key. */
struct sr_queue_pending {
	char id[SR_QUEUE_ID_MAX + 1];
	int priority;
	double submitted;		/* to the millisecond */
	int gpus_min, gpus_max;
	int nodes_min, nodes_max;	/* a gang's machines (gang.h); 1-1: one */
	char gpu_type[SR_QUEUE_GPU_TYPE_MAX + 1];	/* "": any */
	char store[20];			/* "q" (Q/ckpt) or the hash of a stores/ entry */
	int64_t epoch;			/* the lease's epoch when written (0: no lease yet) */
	char etag[SR_ETAG_MAX];		/* and its etag ("" with epoch 0) */
	char key[SR_QUEUE_KEY_MAX];	/* the marker's key */
};
/* Whether an agent with gpus GPUs of model gpu_type can run p: gpus_min
 * <= gpus, and p's gpu_type empty or equal (ignoring case) to gpu_type. */
int sr_queue_pending_fits(const struct sr_queue_pending *p, int gpus, const char *gpu_type);
/* Call fn for each pending marker in claim order (priority, then submit
 * time); markers whose key does not parse are skipped and counted in
 * *bad (may be NULL). fn's non-zero return stops the listing and is
 * returned. */
int sr_queue_pending_list(struct sr_queue *q,
    int (*fn)(const struct sr_queue_pending *p, void *arg), void *arg, int *bad, char *err);

/* ---- claiming ---- */

/* The agent that claims. */
struct sr_queue_agent {
	const struct sr_lease_owner *owner;
	int gpus;			/* GPUs of this machine */
	const char *gpu_type;		/* their model (NULL or "": none known) */
	double ttl;			/* lease TTL (0: SR_LEASE_TTL_DEFAULT) */
	/* The claimer's record of the leases it saw (sr_lease_claim's seen):
	 * the agent's own, shared with sr_queue_find_expired; NULL: none. */
	struct sr_lease_seen *seen;
	int pick;			/* 0: SR_QUEUE_PICK_DEFAULT */
	/* For a gang (gang.h): the address other machines reach this one at,
	 * in its slot; a free port, written into slot 0 when it leads one;
	 * and its wake port (0: none). */
	const char *addr;
	int port;
	int wake;
	/* A job skipped because its lease is malformed (once per queue handle). */
	void (*warn)(void *arg, const char *msg);
	void *warn_arg;
	/* Each pending job a claim's listing meets that gpus and gpu_type do
	 * not fit (sr_queue_pending_fits), with warn_arg, at every claim
	 * that meets it: the caller says why it skips it (NULL: not told). */
	void (*unfit)(void *arg, const struct sr_queue_pending *p);
};

/* A claimed job. */
struct sr_gang;
struct sr_queue_job {
	struct sr_queue_pending marker;	/* what it was claimed by */
	/* A job of several machines (marker.nodes_max > 1): the slot held
	 * (gang.h). Node 0 holds the lease too; another node's lease is NULL:
	 * node 0's holder is the only writer of the job's lease and markers.
	 * The pending marker stays until the gang starts (the leader deletes
	 * it then: cleanup_requests), so that others can join. */
	struct sr_gang *gang;
	char *spec;			/* the job file (NUL-terminated) */
	size_t spec_len;
	char *store_url;		/* its checkpoint store */
	struct sr_store *store;		/* open (the queue's: valid until sr_queue_close) */
	struct sr_lease *lease;		/* held, running; renew it (sr_lease_keeper_start) */
	struct sr_lease_claim claim;	/* what the claim found (claim.took_over, claim.prev) */
	int requests;			/* requests to claim it: listing, lease, spec (3 uncontended) */
	int cleanup_requests;		/* then to delete its pending marker (1) */
};

/* Claim the next job agent a can run: list pending markers (one page
 * unless none fits on it), pick at random among the first a->pick that fit
 * and share the best priority, claim its lease, read its spec, delete its
 * marker. A gang's job (nodes > 1) is joined instead when its slot 0 is
 * live at an epoch above the marker's (sr_gang_join), else led (its lease
 * claimed and slot 0 written, sr_gang_lead); its marker stays. A lost race, or a marker found stale (its job held elsewhere or
 * ended: the marker is deleted), tries the next; a malformed lease is
 * skipped with a warning. Markers that are no job's (a key that does not
 * parse; one naming a job with no status marker, once one such was met)
 * are read past, and up to 64 a claim moved to malformed/ with a warning,
 * a malformed one's job put back from its meta.json (doc/fleet.md).
 * SR_QUEUE_OK with *out (sr_queue_job_free), SR_QUEUE_EMPTY, or
 * SR_QUEUE_ERROR. */
int sr_queue_claim(struct sr_queue *q, const struct sr_queue_agent *a, struct sr_queue_job **out,
    char *err);
/* Claim job id itself (a lease found expired, `submit --run-local`):
 * SR_QUEUE_OK, SR_QUEUE_BUSY (held, ended or malformed: err says; a
 * gang's job, nodes > 1, is released at once with its pending marker put
 * back, for a gang to form from the queue), SR_QUEUE_NOTFOUND,
 * SR_QUEUE_ERROR. */
int sr_queue_claim_id(struct sr_queue *q, const struct sr_queue_agent *a, const char *id,
    struct sr_queue_job **out, char *err);
/* Check claimed job *jp against its meta.json, the truth about which
 * checkpoint store its lease and checkpoints are in (cancel and requeue
 * go by it; the marker it was claimed by is a hint): one GET. They agree,
 * or meta.json is not there to say (a submission still being written):
 * SR_QUEUE_OK. The marker named another store: the lease taken there is
 * deleted, a->warn says so naming both, and the job is claimed in its own
 * store (sr_queue_claim_id): SR_QUEUE_OK with *jp replaced, or *jp freed
 * and NULL with its rc (SR_QUEUE_BUSY: held or ended there). A gang's
 * job (led or joined) is not checked. */
int sr_queue_job_verify(struct sr_queue *q, const struct sr_queue_agent *a,
    struct sr_queue_job **jp, char *err);
/* End a claimed job's lease in state (sr_lease_set_state); released or
 * queued puts its pending marker back, with the lease's new epoch and etag,
 * so that the next claim takes it in one CAS. SR_QUEUE_LOST when the
 * lease was lost; else SR_QUEUE_OK or SR_QUEUE_ERROR. */
int sr_queue_job_end(struct sr_queue *q, struct sr_queue_job *j, enum sr_lease_state state,
    char *err);
/* Free a claimed job and its lease handle (writes nothing). Safe on NULL. */
void sr_queue_job_free(struct sr_queue_job *j);

/* ---- leases lost with their machines ---- */

/* A job whose lease can be taken over. */
struct sr_queue_expired {
	char id[SR_QUEUE_ID_MAX + 1];
	struct sr_lease_info lease;
	double wait;			/* seconds until it can be claimed (0: now) */
};
/* Find the queue's jobs whose VM died without a word: list the index (the
 * jobs not ended), the pending markers, the stores (stores/ and Q/ckpt) and
 * their leases (S/_leases/); read only the leases of jobs not ended and not
 * pending that seen, the caller's record kept from scan to scan
 * (sr_lease_seen_new; NULL: none, every lease new), has seen unchanged
 * for min_age seconds (0: every one: a holder that died a moment after
 * its renewal too); report those running and expired or expiring within
 * horizon (<= 0: the default TTL), by seen: expired once seen unchanged
 * for longer than its TTL (wait: until then, if it stays unchanged; 0 for
 * an owner on this machine whose pid is gone, given me),
 * and those released or queued with no pending marker. seen forgets the
 * leases this scan did not note. A lease found
 * ended whose job's status marker says otherwise (its holder died between
 * the two writes) gets its marker rewritten with the lease's state. *out
 * is malloc'd (n entries). */
int sr_queue_find_expired(struct sr_queue *q, const struct sr_lease_owner *me,
    struct sr_lease_seen *seen, double min_age, double horizon, struct sr_queue_expired **out,
    size_t *n, char *err);

/* Call fn with each lease object of the queue's checkpoint stores
 * (stores/ and Q/ckpt): its job's id and when the store last wrote it (a
 * holder renews it every TTL / 3, so a running job's lease older than its
 * TTL has a silent holder). One listing of stores/ and one of each
 * store's _leases/. fn's non-zero return stops it and is returned; -1
 * with err when a listing fails. */
int sr_queue_lease_times(struct sr_queue *q, int (*fn)(void *arg, const char *id, double mtime),
    void *arg, char *err);

/* ---- status markers ---- */

struct sr_queue_status {
	char id[SR_QUEUE_ID_MAX + 1];
	int64_t epoch;			/* of the writer's lease (0: before any claim) */
	double time;			/* when written (0: now), to the millisecond */
	enum sr_lease_state state;
	int attempts, preemptions;
	int64_t gpu_seconds, lost_gpu_seconds;	/* used, and lost (done again) */
	double cost;			/* dollars, to 1/10000 */
	double on_demand_cost;		/* what the same machine time would have cost
					 * on demand (the saving is the difference) */
	int64_t step;			/* last checkpoint's step (-1: none) */
	char host[SR_QUEUE_HOST_MAX + 1];
	char key[SR_QUEUE_KEY_MAX];	/* the marker's key (out) */
};
/* Write s's marker, then delete the job's older ones: old_key, or when
 * old_key is NULL those a listing of index/ID~ finds ("": there are none).
 * s->key gets the new key, for the next call's old_key. */
int sr_queue_status_set(struct sr_queue *q, struct sr_queue_status *s, const char *old_key,
    char *err);
/* The newest marker of job id: SR_QUEUE_OK, SR_QUEUE_NOTFOUND, SR_QUEUE_ERROR. */
int sr_queue_status_get(struct sr_queue *q, const char *id, struct sr_queue_status *out,
    char *err);
/* Call fn once per job, in id order, with its newest marker: one listing
 * of index/ (N jobs: N / 1000 requests). Older markers left behind and
 * keys that do not parse are skipped (counted in *stale and *bad; may be
 * NULL). fn's non-zero return stops and is returned. */
int sr_queue_status_list(struct sr_queue *q,
    int (*fn)(const struct sr_queue_status *s, void *arg), void *arg, int *stale, int *bad,
    char *err);
/* sr_queue_status_list, with bad_fn (may be NULL) called with the key of
 * each marker that does not parse, so that a job whose only marker is
 * broken can still be named (cancel, requeue). */
int sr_queue_status_walk(struct sr_queue *q,
    int (*fn)(const struct sr_queue_status *s, void *arg),
    void (*bad_fn)(const char *key, void *arg), void *arg, int *stale, int *bad, char *err);

/* Markers a claim quarantined (malformed/KEY, KEY the marker's old key;
 * each object's body says why): how many into *n, the first key into
 * first (SR_QUEUE_KEY_MAX bytes; "" when none). One listing of
 * malformed/ (N / 1000 requests). 0, or -1 with err. */
int sr_queue_malformed_count(struct sr_queue *q, long *n, char *first, char *err);

/* ---- what agents say of their machines ---- */

/* An agent's record of its machine (doc/fleet.md "The agent"):
 * Q/agents/AGENT, JSON, written at its start, again every
 * SR_QUEUE_MACHINE_RENEW seconds (idle or running a job) and deleted at its
 * end, for `spotrun status` to show: what it offers (gpus, gpu_type), for
 * why a job waits, and what the machine cannot do that it seems to: device
 * nodes of GPUs with no working driver. An agent killed without a word
 * leaves its record behind: one not written for SR_QUEUE_MACHINE_STALE is
 * taken for such (sr_queue_machine_stale), counted by status as no agent,
 * and removed by gc. */
#define SR_QUEUE_MACHINE_AGENT_MAX 128
#define SR_QUEUE_MACHINE_RENEW 300.0
#define SR_QUEUE_MACHINE_STALE (3 * SR_QUEUE_MACHINE_RENEW)
struct sr_queue_machine {
	char agent[SR_QUEUE_MACHINE_AGENT_MAX];	/* its id, "HOST-PID" */
	char host[SR_QUEUE_HOST_MAX + 1];
	double time;			/* written (epoch seconds) */
	int gpu_nodes;			/* the GPUs' device nodes it saw */
	int gpus;			/* the GPUs it offers */
	char gpu_type[SR_QUEUE_GPU_TYPE_MAX + 1];	/* their model ("": none known) */
	char no_driver[288];		/* why the driver does not work ("": it does) */
	char instance[128];		/* its cloud's id of the machine (the lease
					 * owner's instance: the provider's facts or the
					 * label instance; "": not said), by which the
					 * pool's scaler finds the jobs on a VM */
	/* the pool whose VM it runs on (its label pool, which `spotrun up`'s
	 * user-data gives: "" none), by which `down --drain` finds the
	 * pool's jobs */
	char pool[SR_QUEUE_POOL_NAME_MAX + 1];
};
/* Write m's record (m->time is set here): 0, or -1 with err. */
int sr_queue_machine_put(struct sr_queue *q, struct sr_queue_machine *m, char *err);
/* Delete agent's record (absent is fine): 0, or -1 with err. */
int sr_queue_machine_delete(struct sr_queue *q, const char *agent, char *err);
/* Whether m's record, read at epoch time now, is an agent's gone without a
 * word: not written for SR_QUEUE_MACHINE_STALE (three renewals missed). */
int sr_queue_machine_stale(const struct sr_queue_machine *m, double now);
/* Every record, in key order, into *v (free it) and *n: one listing of
 * agents/ and a GET per record. A record gone meanwhile is left out; one
 * that does not parse is counted in *bad (may be NULL). 0, or -1 with err. */
int sr_queue_machines_read(struct sr_queue *q, struct sr_queue_machine **v, size_t *n, int *bad,
    char *err);

/* ---- the pools `spotrun up` made ---- */

/* A pool's record, Q/pools/NAME (doc/fleet.md "Pools"): where its fleet
 * engine keeps it. A hint for status and the agents; the cloud's tags are
 * the truth, and `down` finds by them. */
#define SR_QUEUE_POOL_PRICES 64		/* launch prices kept, VMs */
/* A VM's price at launch, as its cloud said it (AWS: the spot price
 * history's): vm its id (struct sr_pool_vm's), price dollars an hour. */
struct sr_queue_pool_price {
	char vm[64];
	double price;
};
struct sr_queue_pool {
	char name[SR_QUEUE_POOL_NAME_MAX + 1];
	char cloud[16];			/* "aws" */
	char region[64];
	char group[128];		/* the engine's group: "fleet-..." */
	char template_id[128];		/* what its VMs are made from: "lt-..." */
	unsigned target;		/* VMs, as `up` last set it */
	double created, updated;	/* epoch seconds */
	/* An engine that fails over (GCP): where `up` found no capacity,
	 * "TYPE in REGION (CODE), ..." ("": nowhere; absent from the JSON
	 * then), and whether the pool waits for it where it is. */
	char tried[512];
	int waiting;
	/* What the scaler (fleet/pool-scale.c) needs and writes: the pool
	 * file's limits as `up` copied them (max_vms; cost_cap in dollars, 0:
	 * none; idle_timeout in seconds, 0: never), what the VMs have cost
	 * so far (spent, dollars, added up to spent_at, epoch seconds), the
	 * epoch of the pool's lease its last writer held (fence: a scaler
	 * with a lower one writes nothing; 0: `up`'s), who set the target
	 * (by: an agent's id, "spotrun up", "spotrun submit") and why.
	 * spent is split in two (doc/design.md "What a pool costs"): in_jobs,
	 * the billed VMs' time while a job ran on them, and idle, the rest
	 * (a record older than the split: 0 and 0). */
	int max_vms;
	double cost_cap, idle_timeout;
	double spent, spent_at, in_jobs, idle;
	int64_t fence;
	char by[128];
	char why[160];
	/* The launch prices of the VMs the last step listed (at most
	 * SR_QUEUE_POOL_PRICES, in the list's order), so that a step or
	 * status asks the cloud a VM's price once ("prices": {"VM": price};
	 * absent: none). */
	struct sr_queue_pool_price prices[SR_QUEUE_POOL_PRICES];
	size_t nprices;
	/* When `spotrun down --drain` began (epoch seconds; 0: not draining,
	 * absent from the JSON): the scaler holds the target at 0. */
	double draining;
};
/* Write p's record (overwriting): 0, or -1 with err. */
int sr_queue_pool_put(struct sr_queue *q, const struct sr_queue_pool *p, char *err);
/* Write p's record only if its etag is still if_match (a compare-and-swap
 * over what sr_queue_pool_read gave): SR_QUEUE_OK with the new etag in
 * etag_out (may be NULL), SR_QUEUE_BUSY when another wrote it meanwhile
 * (err says so), or SR_QUEUE_ERROR with err. */
int sr_queue_pool_put_if(struct sr_queue *q, const struct sr_queue_pool *p, const char *if_match,
    char *etag_out, char *err);
/* sr_queue_pool_get with the record's etag (SR_ETAG_MAX bytes). */
int sr_queue_pool_read(struct sr_queue *q, const char *name, struct sr_queue_pool *p, char *etag,
    char *err);
/* Read pool name's record: SR_QUEUE_OK, SR_QUEUE_NOTFOUND, or
 * SR_QUEUE_ERROR with err (also for a record that does not parse). */
int sr_queue_pool_get(struct sr_queue *q, const char *name, struct sr_queue_pool *p, char *err);
/* Delete pool name's record (absent is fine: S3 does not say whether it
 * was there). 0, or -1 with err. */
int sr_queue_pool_delete(struct sr_queue *q, const char *name, char *err);
/* Every record in name order into *v (free it) and *n: one listing of
 * pools/ and a GET per pool; one that does not parse is counted in *bad
 * (may be NULL). 0, or -1 with err. */
int sr_queue_pools_read(struct sr_queue *q, struct sr_queue_pool **v, size_t *n, int *bad,
    char *err);

/* ---- the placement history: where pools found no capacity or were preempted ---- */

/* One event of Q/placement/CLOUD (doc/fleet.md, "Provisioning"): a place
 * that refused a pool (why: the cloud's capacity code) or where a pool's
 * VM was preempted (why: "preempted"), at epoch seconds. */
#define SR_QUEUE_PLACE_MAX 256		/* events kept, the newest */
#define SR_QUEUE_PLACE_AGE (7 * 86400.0)	/* events older are dropped */
struct sr_queue_place_event {
	char cloud[16];			/* "aws" */
	char region[64];
	char zone[64];			/* "" when not known */
	char type[64];			/* "g5.xlarge" */
	char why[64];			/* "InsufficientInstanceCapacity", "preempted" */
	double at;
};
/* Cloud's history, oldest first, into *v (malloc'd, free()) and *n (an
 * absent object: none). 0, or -1 with err (a record that does not parse
 * says so: the fix is to delete it). */
int sr_queue_placement_read(struct sr_queue *q, const char *cloud,
    struct sr_queue_place_event **v, size_t *n, char *err);
/* Add n events to cloud's history: read, merged (those older than
 * SR_QUEUE_PLACE_AGE and beyond the newest SR_QUEUE_PLACE_MAX dropped),
 * written by CAS over the etag read (create-only when absent), again
 * when another wrote it meanwhile, so that no writer's events are lost.
 * 0, or -1 with err. */
int sr_queue_placement_add(struct sr_queue *q, const char *cloud,
    const struct sr_queue_place_event *v, size_t n, char *err);

/* Call fn with each stale status marker of job id (NULL: of every job):
 * one that is not its job's newest, left by a writer that died between
 * putting the new marker and deleting the old (sr_queue_status_set), and
 * last written at or before the epoch time older_than (younger ones may
 * be a writer's that is between the two). One listing; fn's non-zero
 * return stops it and is returned; -1 with err when the listing fails. */
int sr_queue_status_stale(struct sr_queue *q, const char *id, double older_than,
    int (*fn)(const struct sr_object_info *info, const char *id, void *arg), void *arg,
    char *err);
/* Delete the status marker at key (index/...): 0, or -1 with err. */
int sr_queue_status_delete(struct sr_queue *q, const char *key, char *err);
/* Whether the caller (by: who, for the object) sweeps the queue's debris
 * now: Q/gc holds when the last sweep began and by whom; one that began
 * within interval seconds means another sweeps (0), else the caller takes
 * the turn by a create-only or a CAS write (1: its turn; a lost race is 0).
 * *last gets when the previous sweep began (0: none, or unreadable). -1
 * with err when the store fails. So the agents of a queue sweep it once
 * an interval between them all, not each. */
int sr_queue_sweep_turn(struct sr_queue *q, double interval, const char *by, double *last,
    char *err);

/* ---- cancel and requeue ---- */

enum sr_queue_cancel {
	SR_QUEUE_CANCEL_DONE = 0,	/* it was not running: now cancelled */
	SR_QUEUE_CANCEL_ASKED,		/* running: its holder stops it within a heartbeat */
	SR_QUEUE_CANCEL_ENDED		/* it had ended already: nothing done */
};
/* Cancel job id: write jobs/ID/cancel ({"checkpoint": true|false}); then,
 * when no one runs it, claim its lease for `by` and set it cancelled (a
 * claim racing with it loses), and write its status marker. *how says
 * which happened. */
int sr_queue_cancel(struct sr_queue *q, const char *id, int checkpoint,
    const struct sr_lease_owner *by, enum sr_queue_cancel *how, char *err);
/* Whether job id's cancel was requested: 1 (*checkpoint: a final
 * checkpoint first; a cancel object that does not parse counts as a
 * request with a checkpoint), 0, or -1 with err. One GET. */
int sr_queue_cancel_requested(struct sr_queue *q, const char *id, int *checkpoint, char *err);
/* Requeue job id: its lease in one of states (lease.h's sr_lease_requeue,
 * min_epoch the same) back to queued, its cancel request removed, its
 * pending marker put back and its status marker set queued (counts kept).
 * `spotrun retry`: the failed and cancelled; `spotrun requeue`: any ended. */
int sr_queue_requeue(struct sr_queue *q, const char *id, unsigned states, int64_t min_epoch,
    const struct sr_lease_owner *by, char *err);

/* ---- logs ---- */

struct sr_queue_log;
/* A writer of job id's output for run (the lease epoch) and attempt: lines
 * are buffered and shipped from a thread of its own as segments
 * logs/ID/RRRRRRRRRRRR-AAAA-NNNNNN, every interval seconds (0: 5) or
 * max_bytes (0: 64 KiB), cut after a line's end where there is one.
 * NULL with err. */
struct sr_queue_log *sr_queue_log_open(struct sr_queue *q, const char *id, int64_t run,
    int attempt, double interval, size_t max_bytes, char *err);
/* Add output; never waits on the store. Beyond 8 MiB unshipped, output is
 * dropped and the next segment says how much. */
void sr_queue_log_write(struct sr_queue_log *lw, const void *buf, size_t len);
/* Ship what is left, stop the thread, free lw: 0, or -1 with err (the
 * last failure to ship). Safe on NULL. */
int sr_queue_log_close(struct sr_queue_log *lw, char *err);
/* Segments shipped so far, and the last shipping error ("" if none). */
int sr_queue_log_segments(struct sr_queue_log *lw, char *last_err);

/* Call fn with each segment of job id's log after the key *after (""
 * from the start), in order, updating after (SR_QUEUE_KEY_MAX bytes).
 * fn's non-zero return stops and is returned. */
int sr_queue_log_read(struct sr_queue *q, const char *id, char *after,
    int (*fn)(void *arg, const char *key, const char *data, size_t len), void *arg, char *err);
/* The end of job id's log, for what its last attempt said last (`status
 * SWEEP`'s reason of a failed trial): the last segment, and the one before
 * it when both are of the same run and attempt, in order, into *buf
 * (malloc'd, NUL-terminated; *len bytes, 0 with *buf NULL when the job
 * has no log). One listing and at most two GETs. 0, or -1 with err. */
int sr_queue_log_tail(struct sr_queue *q, const char *id, char **buf, size_t *len, char *err);
/* sr_queue_log_read, again every interval seconds, until *stop is set or
 * fn returns non-zero (returned). */
int sr_queue_log_follow(struct sr_queue *q, const char *id, double interval,
    const volatile int *stop, int (*fn)(void *arg, const char *key, const char *data, size_t len),
    void *arg, char *err);

/* Name of a return code, e.g. "SR_QUEUE_EXISTS". */
const char *sr_queue_rc_name(int rc);

#endif
