/*
 * gang.h: the slots of a job of several machines (nodes > 1), a gang of
 * agents (doc/fleet.md, "Gangs"). One JSON object per node rank R,
 * Q/jobs/ID/slots/R, written whole with the store's conditional puts. Node
 * 0's holder (the leader) also holds the job's lease, whose epoch is the
 * gang's: it writes slot 0 at that epoch; every other agent joins by
 * claiming the first free slot 1, 2, ... at slot 0's epoch (create-only
 * when absent, else a compare-and-swap over a slot of an older epoch, a
 * released one or one expired), so of any number of claimers of a slot
 * exactly one gets it. The leader starts the gang when it holds a full
 * one (its maximum, or at least its minimum once it waited long enough):
 * slot 0 then says running, with the node count, node 0's address and
 * port. A slot is renewed every TTL / 3 like a lease; a notice on a node
 * is written into its slot (state notice and the deadline), the leader
 * passes it on in slot 0, and every node reads slot 0 to learn it.
 * Slots of a gang that never filled are released after the gang timeout.
 *
 * A gang handle is used from one thread at a time.
 */
#ifndef SR_GANG_H
#define SR_GANG_H

#include <stdint.h>

#include "lease.h"
#include "queue.h"

/* Return codes besides 0 (SR_QUEUE_OK) and SR_QUEUE_ERROR. */
#define SR_GANG_FULL	(-20)	/* join: every slot is held by a live member */
#define SR_GANG_STALE	(-21)	/* the slot is of a newer epoch: the job moved on */
#define SR_GANG_LOST	(-22)	/* renew/set: the slot was taken over or is gone */

#define SR_GANG_TIMEOUT_DEFAULT 300.0	/* seconds a slot waits for a full gang */
#define SR_GANG_ADDR_MAX 63

enum sr_gang_state {
	SR_GANG_WAITING = 0,	/* held, the gang not started yet */
	SR_GANG_RUNNING,	/* the gang runs (slot 0: with its size) */
	SR_GANG_NOTICE,		/* its node got a notice (deadline) */
	SR_GANG_RELEASED,	/* let go: claimable */
	SR_GANG_DONE		/* slot 0: the job ended on node 0 (succeeded or
				 * failed): let go, and the members' jobs end on
				 * their own (not a node gone); a member's: its
				 * job succeeded there, let go, and node 0's
				 * may still run (not a node gone either) */
};

/* A slot as read. */
struct sr_gang_slot {
	char job[SR_QUEUE_ID_MAX + 1];
	int node;			/* its node rank */
	int64_t epoch;			/* the gang's: the job lease's epoch */
	enum sr_gang_state state;
	char host[256];			/* the owner: host, pid, agent */
	long pid;
	char agent[128];
	char addr[SR_GANG_ADDR_MAX + 1];	/* its agent's address; slot 0's is
					 * the gang's MASTER_ADDR */
	int port;			/* slot 0: MASTER_PORT (0: none yet) */
	int wake;			/* its agent's wake port (UDP at addr), 0: none:
					 * a datagram there makes it read the slots now */
	int nodes;			/* slot 0, running: the gang's size (0 before) */
	double since;			/* claimed (epoch seconds) */
	double renewed, expires, ttl;
	double deadline;		/* notice: the notice's deadline (0: none) */
	/* slot 0: node 0's checkpoint requests so far (every node asks its
	 * ranks when it grows), the last one's deadline */
	long request;
	double request_deadline;
	char etag[SR_ETAG_MAX];
};

struct sr_gang;

/* What a slot is claimed with. */
struct sr_gang_claim {
	const struct sr_lease_owner *owner;
	double ttl;			/* renewal TTL (0: SR_LEASE_TTL_DEFAULT) */
	int64_t epoch;			/* the gang's epoch */
	int nodes_max;			/* slots 1 .. nodes_max - 1 may be joined */
	const char *addr;		/* the agent's address (NULL: ""); slot 0's is
					 * MASTER_ADDR */
	int port;			/* slot 0: MASTER_PORT */
	int wake;			/* the agent's wake port (0: none) */
	int requests;			/* out: store requests made */
};

/* A node to wake (sr_gang_peers): its agent's address and wake port. */
struct sr_gang_peer {
	char addr[SR_GANG_ADDR_MAX + 1];
	int wake;
};

/* The nodes g's agent wakes when it writes what they must read (a notice,
 * node 0's request): node 0 for a member, the members for node 0, as its
 * last read of their slots found them (live, at its epoch, with a wake
 * port); at most max into out. How many. */
int sr_gang_peers(const struct sr_gang *g, struct sr_gang_peer *out, int max);

/* The key of job id's slot node into key: Q/jobs/ID/slots/NODE. */
int sr_gang_key(const char *id, int node, char *key, size_t len, char *err);

/* Read slot node of job id: SR_QUEUE_OK with *out, SR_QUEUE_NOTFOUND, or
 * SR_QUEUE_ERROR (also for an object that is not a slot, named). */
int sr_gang_read(struct sr_queue *q, const char *id, int node, struct sr_gang_slot *out,
    char *err);

/* Whether s is held at now: not released and not expired. */
int sr_gang_live(const struct sr_gang_slot *s, double now);

/* The leader: write slot 0 of job id at c->epoch (which its lease holds),
 * waiting, with c->addr and c->port: SR_QUEUE_OK with *out;
 * SR_GANG_STALE when slot 0 is of a newer epoch; SR_QUEUE_ERROR. */
int sr_gang_lead(struct sr_queue *q, const char *id, struct sr_gang_claim *c,
    struct sr_gang **out, char *err);

/* A member: claim the first slot from 1 to c->nodes_max - 1 that is
 * absent, of an older epoch than c->epoch, released, or expired, at
 * c->epoch: SR_QUEUE_OK with *out; SR_GANG_FULL when every one is held
 * at this epoch; SR_GANG_STALE when one is of a newer epoch; SR_QUEUE_ERROR. */
int sr_gang_join(struct sr_queue *q, const char *id, struct sr_gang_claim *c,
    struct sr_gang **out, char *err);

/* The held slot's node rank, epoch, and its content as last written. */
int sr_gang_node(const struct sr_gang *g);
int64_t sr_gang_epoch(const struct sr_gang *g);
void sr_gang_info(const struct sr_gang *g, struct sr_gang_slot *out);

/* Rewrite the held slot by CAS: renewed now, in state (RUNNING with
 * nodes: the gang's size, slot 0's to say; NOTICE with deadline, kept
 * when the slot says notice by an earlier one already; RELEASED
 * or DONE: let go, no longer held). SR_QUEUE_OK; SR_GANG_LOST when the slot moved
 * on (stop: the gang is not this one's any more); SR_QUEUE_ERROR (network:
 * try again while it has not expired). */
int sr_gang_set(struct sr_gang *g, enum sr_gang_state state, int nodes, double deadline,
    char *err);
/* sr_gang_set in the state it has: a renewal. */
int sr_gang_renew(struct sr_gang *g, char *err);

/* The leader's view of the members: read slots 1 .. max - 1 and count
 * how many from slot 1 on are live at the gang's epoch, without a gap
 * (*held, node 0 included); *notice gets the earliest deadline of a
 * member in notice (0: none). SR_QUEUE_OK or SR_QUEUE_ERROR. */
int sr_gang_members(struct sr_gang *g, int max, int *held, double *notice, char *err);

/* How a gang forms (sr_gang_step). */
struct sr_gang_form {
	int nodes_min, nodes_max;
	double fill;			/* the leader starts with fewer than nodes_max
					 * (at least nodes_min) once it waited this long */
	double timeout;			/* a slot waiting longer is released */
	const char *marker;		/* the leader: the pending marker's key, deleted
					 * when the gang starts (NULL: none) */
};

/* What sr_gang_step and sr_gang_watch found. */
enum sr_gang_news {
	SR_GANG_FORMING = 1,	/* step: not full yet; call again */
	SR_GANG_STARTED,	/* step: the gang runs with *nodes nodes, slot 0's
				 * address and port in *leader */
	SR_GANG_TIMEDOUT,	/* step: no full gang within the timeout: the slot
				 * is released */
	SR_GANG_OUT,		/* step: not in this gang (it started without this
				 * node, or its leader is gone): released */
	SR_GANG_QUIET,		/* watch: nothing new */
	SR_GANG_NOTICED,	/* watch: a node got a notice (*deadline) */
	SR_GANG_REQUESTED,	/* watch, a member: node 0 asked for a checkpoint
				 * (*deadline), since the last watch */
	SR_GANG_BROKEN		/* watch: a node of the gang is gone (its slot
				 * released or expired): the gang cannot go on */
};

/* One step of forming: renew the slot when a third of its TTL has passed;
 * the leader reads the members and starts the gang (slot 0 running with
 * the count, the marker deleted) when it is full, or releases its slot
 * after the timeout; a member reads slot 0 and follows it. news, or
 * SR_QUEUE_ERROR / SR_GANG_LOST with err. *nodes and *leader (may be NULL)
 * are set on STARTED; *nodes also on the leader's FORMING (the live
 * slots so far, its own included). */
int sr_gang_step(struct sr_gang *g, const struct sr_gang_form *f, int *nodes,
    struct sr_gang_slot *leader, char *err);

/* Give up a gang that has not started: the leader deletes the pending
 * marker (f->marker: its lease's release puts a new one), every node
 * releases its slot. SR_QUEUE_OK, or an error only said (the slot
 * expires). */
int sr_gang_abandon(struct sr_gang *g, const struct sr_gang_form *f, char *err);

/* While the gang runs (nodes nodes): renew the slot when due, and read
 * the others' (the leader: every member's, passing a member's notice on in
 * slot 0; a member: slot 0's). news (QUIET, NOTICED with *deadline,
 * BROKEN with err saying which node: the leader then writes a notice into
 * slot 0, 30 s ahead, for the members), or SR_QUEUE_ERROR / SR_GANG_LOST. */
int sr_gang_watch(struct sr_gang *g, int nodes, double *deadline, char *err);

/* Node 0: a checkpoint was asked of its ranks, by deadline; slot 0 says
 * so (request + 1), for the members. SR_QUEUE_OK, SR_GANG_LOST or
 * SR_QUEUE_ERROR (as sr_gang_set). */
int sr_gang_request(struct sr_gang *g, double deadline, char *err);

/* "waiting", "running", "notice", "released", "done". */
const char *sr_gang_state_name(enum sr_gang_state s);

/* Free the handle; writes nothing (a held slot expires after its TTL).
 * Safe on NULL. */
void sr_gang_free(struct sr_gang *g);

#endif
